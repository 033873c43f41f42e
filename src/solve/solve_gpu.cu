/* solve_gpu.cu -- CG, BiCGSTAB and GMRES resident on the device.
 *
 * Every vector stays on the GPU; the operator is the plan's SpMV or an
 * adia_operator's device callbacks; the scalars (alpha, beta, ...) live in
 * device memory and are computed by the last block of each reduction, so
 * no iteration waits for the host.  The iteration loop is one CUDA graph
 * with a device-side WHILE node (see capture()); the host waits once per
 * solve.  An operator held by several processes (sum_device set) splits
 * each reduction: the last block stores this process's totals, the
 * operator sums them over the processes on the stream, and a one-thread
 * kernel finishes what the last block would have (reduce_finish).
 * Reductions are deterministic: fixed grid, block partials summed in block
 * order by the last block (no floating-point atomics).  Sums are in double
 * for both value types.  Success is judged on the true residual b - A x,
 * recomputed at the end with a scaled (overflow-free) norm. */
#include "solve_internal.h"
#include "../cuda/gpu_common.h"
#include "../precond/precond.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

#include <vector>

namespace {

constexpr int NT = 256;          /* threads per block of every kernel here */

enum status { RUNNING = 0, CONVERGED, LIMIT, BREAKDOWN, NONFINITE };
enum broke_what { BROKE_R0V = 1, BROKE_OMEGA, BROKE_RHO };   /* BiCGSTAB's breakdowns */

/* The solver's scalars, in device memory. */
struct state {
    double tol2;                 /* (rtol ||b||)^2                          */
    double rr;                   /* ||r||^2 of the recurrence               */
    double rz, alpha, beta;      /* CG                                      */
    double rho, omega, r0v;      /* BiCGSTAB                                */
    double why;                  /* the value that stopped it               */
    int broke;                   /* BiCGSTAB: which scalar (broke_what)      */
    double tt;                   /* BiCGSTAB: t't when omega broke            */
    int iter, max_iter, status;
    unsigned count;              /* blocks done in the current reduction    */
    double norm_max, norm;       /* scaled norm: max |v|, then the norm     */
    int j, m, reorth;            /* GMRES: Arnoldi step, restart, 2nd pass  */
    int reorths;                 /* GMRES: second passes run (bytes moved)  */
    double hnext, wbefore2, wnorm2;   /* GMRES: h(j+1,j), ||w||^2 before/after */
    int split;                   /* reductions finish after the processes' sum */
    double sums[2];              /* split: this process's totals, then all's */
};

__device__ inline double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* NaN-propagating max (fmax would drop a NaN, and a NaN must be seen). */
__device__ inline double nan_max(double a, double b) { return (a != a || b != b) ? NAN : fmax(a, b); }

__device__ inline double warp_max(double v)
{
    for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

/* Sum over one block; the total is valid in thread 0. */
__device__ double block_sum(double v)
{
    __shared__ double sh[NT / 32];
    v = warp_sum(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x != 0) return 0;
    double s = sh[0];
    for (int w = 1; w < NT / 32; w++) s += sh[w];
    return s;
}

/* Sums (or maxima) of NV per-thread values over the whole grid.  Returns
 * true in one thread only -- thread 0 of the block that finished last --
 * with v holding the grid totals; partial holds gridDim.x * NV doubles. */
template <int NV, bool MAX = false>
__device__ bool grid_reduce(double (&v)[NV], double *partial, unsigned *count)
{
    __shared__ double sh[NT / 32][NV];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int j = 0; j < NV; j++) v[j] = MAX ? warp_max(v[j]) : warp_sum(v[j]);
    if (lane == 0)
        for (int j = 0; j < NV; j++) sh[warp][j] = v[j];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 0; j < NV; j++) {
            double s = sh[0][j];
            for (int w = 1; w < NT / 32; w++) s = MAX ? nan_max(s, sh[w][j]) : s + sh[w][j];
            partial[blockIdx.x * NV + j] = s;
        }
    if (!adia_dot_last(count, gridDim.x)) return false;
    double t[NV];
    for (int j = 0; j < NV; j++) t[j] = 0;   /* maxima are of |v| >= 0 */
    for (unsigned b = threadIdx.x; b < gridDim.x; b += NT)
        for (int j = 0; j < NV; j++) {
            double p = __ldcg(&partial[b * NV + j]);
            t[j] = MAX ? nan_max(t[j], p) : t[j] + p;
        }
    for (int j = 0; j < NV; j++) t[j] = MAX ? warp_max(t[j]) : warp_sum(t[j]);
    __syncthreads();
    if (lane == 0)
        for (int j = 0; j < NV; j++) sh[warp][j] = t[j];
    __syncthreads();
    if (threadIdx.x != 0) return false;
    for (int j = 0; j < NV; j++) {
        double s = sh[0][j];
        for (int w = 1; w < NT / 32; w++) s = MAX ? nan_max(s, sh[w][j]) : s + sh[w][j];
        v[j] = s;
    }
    return true;
}

/* A reduction's end: f(st, totals) in the last block -- or, split, the
 * totals into st->sums for the processes' sum, after which finish_kernel
 * runs f (host side: finish()).  f first checks what the kernel checked
 * before reducing (a split finish runs whether or not the kernel did). */
template <int NV, class F>
__device__ void reduce_finish(double (&v)[NV], double *partial, state *st, const F &f)
{
    if (!grid_reduce<NV>(v, partial, &st->count)) return;
    if (!st->split) {
        f(st, v);
        return;
    }
    for (int j = 0; j < NV; j++) st->sums[j] = v[j];
}

template <class F>
__global__ void finish_kernel(state *st, F f)
{
    f(st, st->sums);
}

#define GRID_LOOP(i, n) \
    for (int64_t i = blockIdx.x * (int64_t)NT + threadIdx.x; i < (n); i += (int64_t)gridDim.x * NT)

/* Stop test after the recurrence's ||r||^2 is known (one thread). */
__device__ void check_stop(state *st, double rr)
{
    st->rr = rr;
    if (!isfinite(rr)) {
        st->status = NONFINITE;
        st->why = rr;
    } else if (rr <= st->tol2) {
        st->status = CONVERGED;
    } else if (st->iter >= st->max_iter) {
        st->status = LIMIT;
    }
}

/* The graph's WHILE loop runs another iteration while this says 1; called
 * once per iteration, by one thread, after the status is final. */
__device__ inline void loop_again(bool use_cond, cudaGraphConditionalHandle h, const state *st)
{
    if (use_cond) cudaGraphSetConditional(h, st->status == RUNNING);
}

/* ------------------------------------------------------- scaled norm */

/* max |v_i| into st->norm_max (NaN if any v_i is NaN) */
template <typename T>
__global__ void norm_max_kernel(const T *v, int64_t n, double *partial, state *st)
{
    double m[1] = {0};
    GRID_LOOP(i, n) m[0] = nan_max(m[0], fabs((double)v[i]));
    if (grid_reduce<1, true>(m, partial, &st->count)) st->norm_max = m[0];
}

/* e with max = f 2^e, f in [0.5, 1): the norm's scale is 2^-e. */
__device__ inline int norm_exponent(double max)
{
    int e;
    frexp(max, &e);
    return e;
}

/* ||v|| = 2^e sqrt(sum (v_i 2^-e)^2) (the CPU's nrm2, solve.c): no
 * overflow or underflow on the way, and a power of two scales exactly.
 * 2^-e is applied as two normal factors: for a subnormal max (below
 * 2^-1022) 1 / max and 2^-e are Inf, and made the norm of 16 x 1e-320 --
 * or of a b with one 1e-310 entry and zeros -- Inf or NaN.  The result
 * itself is Inf where ||v|| exceeds the range of double. */
struct norm_finish {
    __device__ void operator()(state *st, const double *v) const
    {
        const double m = st->norm_max;
        st->norm = !(m > 0) || !isfinite(m) ? m   /* 0, Inf or NaN as is */
                   : ldexp(sqrt(v[0]), norm_exponent(m));
    }
};

template <typename T>
__global__ void norm_sum_kernel(const T *v, int64_t n, double *partial, state *st)
{
    const double m = st->norm_max;
    if (!(m > 0) || !isfinite(m)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) norm_finish()(st, nullptr);
        return;
    }
    const int e = norm_exponent(m), half = -e / 2;
    const double d1 = ldexp(1.0, half), d2 = ldexp(1.0, -e - half);
    double s[1] = {0};
    GRID_LOOP(i, n) {
        double t = ((double)v[i] * d1) * d2;
        s[0] += t * t;
    }
    reduce_finish<1>(s, partial, st, norm_finish());
}

/* r = b - r (r holds A x on entry) */
template <typename T>
__global__ void residual_kernel(const T *b, T *r, int64_t n)
{
    GRID_LOOP(i, n) r[i] = b[i] - r[i];
}

/* True in thread 0 of the block that finished last (every thread calls
 * it): that thread may write the state every block has read. */
__device__ bool grid_last(unsigned *count)
{
    __syncthreads();   /* every thread's writes before thread 0 counts */
    return adia_dot_last(count, gridDim.x) && threadIdx.x == 0;
}

/* ---------------------------------------------------------------- CG */
/* Chronopoulos-Gear CG: one product and one vector pass an iteration.  The
 * product w = A u (u = D r, or r itself) carries the iteration's three dot
 * products in its epilogue (adia_dot_work: delta = u'w, gamma = r'u,
 * rho = r'r), so the vector pass reads no reduction of its own:
 *   beta = gamma / gamma_prev, alpha = gamma / (delta - beta gamma / alpha_prev)
 *   p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = D r.
 * In exact arithmetic it is CG (s = A p, delta - beta gamma / alpha_prev =
 * p'Ap), with the same iterates; the stop test reads rho of the current r
 * before the update, so `iterations` counts updates as the CPU's CG.
 * A preconditioner without a diagonal (STAGE) is a stage of its own: the
 * step reads u = M r instead of forming D r and leaves u alone, and
 * u = M r follows it (and cg_start). */

/* After r = b - A x: u = D r (Jacobi), a fresh state. */
template <typename T>
__global__ void cg_start(const T *r, T *u, const T *d, int64_t n, state *st)
{
    if (d) GRID_LOOP(i, n) u[i] = (T)((double)d[i] * (double)r[i]);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        st->iter = 0;
        st->status = RUNNING;
    }
}

/* The stop test and the step's scalars from the product's sums; the same
 * in every block (the state is read before any block writes it). */
__device__ int cg_scalars(const double *dots, const state *st, double *alpha, double *beta,
                          double *why)
{
    const double delta = dots[ADIA_DOT_XY], gamma = dots[ADIA_DOT_ZX], rho = dots[ADIA_DOT_ZZ];
    const bool first = st->iter == 0;
    *beta = first ? 0 : gamma / st->rz;
    const double pap = first ? delta : delta - *beta * gamma / st->alpha;
    *alpha = gamma / pap;
    *why = rho;
    if (!isfinite(rho)) return NONFINITE;
    if (rho <= st->tol2) return CONVERGED;
    if (st->iter >= st->max_iter) return LIMIT;
    *why = pap;
    if (!isfinite(pap) || !isfinite(*alpha) || !isfinite(*beta)) return NONFINITE;
    return pap > 0 ? RUNNING : BREAKDOWN;   /* p'Ap <= 0: A is not SPD */
}

/* The iteration's vector pass (after the product); u == r without Jacobi
 * or a stage. */
template <typename T, bool STAGE = false>
__global__ void cg_step(T *x, T *r, T *u, T *p, T *s, const T *w, const T *d, int64_t n,
                        const double *dots, state *st, bool use_cond,
                        cudaGraphConditionalHandle h)
{
    if (st->status != RUNNING) {   /* chunked replay after the stop */
        if (blockIdx.x == 0 && threadIdx.x == 0) loop_again(use_cond, h, st);
        return;
    }
    double alpha, beta, why;
    const int status = cg_scalars(dots, st, &alpha, &beta, &why);
    const bool first = st->iter == 0;
    if (status == RUNNING) GRID_LOOP(i, n) {
        double ri = r[i], ui = STAGE ? (double)u[i] : d ? (double)d[i] * ri : ri;
        double pi = first ? ui : ui + beta * (double)p[i];
        double si = first ? (double)w[i] : (double)w[i] + beta * (double)s[i];
        p[i] = (T)pi;
        s[i] = (T)si;
        x[i] = (T)(x[i] + alpha * pi);
        T rn = (T)(ri - alpha * si);
        r[i] = rn;
        if (d) u[i] = (T)((double)d[i] * (double)rn);
    }
    if (grid_last(&st->count)) {
        st->rr = dots[ADIA_DOT_ZZ];
        st->status = status;
        st->why = why;
        if (status == RUNNING) {
            st->iter++;
            st->rz = dots[ADIA_DOT_ZX];
            st->alpha = alpha;
        }
        loop_again(use_cond, h, st);
    }
}

/* ---------------------------------------------------------- BiCGSTAB */
/* Right-preconditioned (D = Jacobi or I):
 *   p = r + beta (p - omega v); ph = D p; v = A ph; alpha = rho / r0'v;
 *   s = r - alpha v; sh = D s; t = A sh; omega = t's / t't;
 *   x += alpha ph + omega sh; r = s - omega t; rho' = r0'r; beta = ...
 * r0'v comes out of the product v = A ph (companion r0), t's and t't out
 * of t = A sh (companion s): adia_dot_work. */

/* After r = b - A x: r0 = r, p = v = 0, rho = alpha = omega = 1. */
struct bicg_start_finish {
    __device__ void operator()(state *st, const double *v) const
    {
        st->rho = v[0];       /* r0'r with r0 = r */
        st->alpha = st->omega = 1;
        st->beta = 0;         /* first direction: p = r */
        st->iter = 0;
        st->status = RUNNING;
        check_stop(st, v[0]);
    }
};

template <typename T>
__global__ void bicg_start(const T *r, T *r0, T *p, T *v, int64_t n, double *partial, state *st)
{
    double s[1] = {0};
    GRID_LOOP(i, n) {
        r0[i] = r[i];
        p[i] = 0;
        v[i] = 0;
        s[0] += (double)r[i] * (double)r[i];
    }
    reduce_finish<1>(s, partial, st, bicg_start_finish());
}

/* p = r + beta (p - omega v); ph = D p */
template <typename T>
__global__ void bicg_direction(T *p, T *ph, const T *r, const T *v, const T *d, int64_t n,
                               const state *st)
{
    if (st->status != RUNNING) return;
    const double beta = st->beta, omega = st->omega;
    GRID_LOOP(i, n) {
        T pi = (T)(r[i] + beta * ((double)p[i] - omega * (double)v[i]));
        p[i] = pi;
        if (d) ph[i] = (T)((double)d[i] * (double)pi);
    }
}

/* alpha = rho / r0'v (r0'v from the product's sums); s = r - alpha v (into
 * r); sh = D s; ||s||^2: small enough means x += alpha ph finishes, which
 * bicg_update arranges with omega = 0. */
__device__ inline bool bicg_alpha(const state *st, const double *dots, double *alpha)
{
    const double r0v = dots[ADIA_DOT_ZY];
    *alpha = st->rho / r0v;
    return r0v != 0 && isfinite(r0v) && isfinite(*alpha);
}

struct bicg_half_finish {
    const double *dots;
    __device__ void operator()(state *st, const double *v) const
    {
        if (st->status != RUNNING) return;
        double alpha;
        const bool ok = bicg_alpha(st, dots, &alpha);
        st->r0v = v[0];   /* ||s||^2, for bicg_update */
        st->alpha = alpha;
        if (!ok) {
            const double r0v = dots[ADIA_DOT_ZY];
            st->status = isfinite(r0v) && isfinite(alpha) ? BREAKDOWN : NONFINITE;
            st->why = r0v;
            st->broke = BROKE_R0V;
        }
    }
};

template <typename T>
__global__ void bicg_half(T *r, T *sh, const T *v, const T *d, int64_t n, const double *dots,
                          double *partial, state *st)
{
    if (st->status != RUNNING) return;
    double alpha;
    const bool ok = bicg_alpha(st, dots, &alpha);
    double s[1] = {0};
    if (ok) GRID_LOOP(i, n) {
        T si = (T)(r[i] - alpha * (double)v[i]);
        r[i] = si;
        if (d) sh[i] = (T)((double)d[i] * (double)si);
        s[0] += (double)si * (double)si;
    }
    reduce_finish<1>(s, partial, st, bicg_half_finish{dots});
}

/* omega = t's / t't (0 when s is already small enough; from the product's
 * sums); x += alpha ph + omega sh; r = s - omega t; rho' = r0'r, rr = r'r;
 * the iteration's last kernel */
__device__ inline bool bicg_omega(const state *st, const double *dots, double *omega)
{
    const double ts = dots[ADIA_DOT_ZY], tt = dots[ADIA_DOT_YY];
    const bool done = st->r0v <= st->tol2;
    *omega = done ? 0 : tt > 0 ? ts / tt : 0;
    return done || (*omega != 0 && isfinite(*omega));
}

struct bicg_update_finish {
    const double *dots;
    bool use_cond;
    cudaGraphConditionalHandle h;
    __device__ void operator()(state *st, const double *v) const
    {
        if (st->status == RUNNING) {
            double omega;
            const bool ok = bicg_omega(st, dots, &omega);
            const double alpha = st->alpha;
            st->omega = omega;
            if (!ok) {
                st->status = isfinite(omega) ? BREAKDOWN : NONFINITE;
                st->why = omega;
                st->broke = BROKE_OMEGA;
                st->tt = dots[ADIA_DOT_YY];
            } else {
                st->iter++;
                st->beta = (v[0] / st->rho) * (alpha / omega);
                st->rho = v[0];
                check_stop(st, omega == 0 ? st->r0v : v[1]);
                if (st->status == RUNNING && (v[0] == 0 || !isfinite(v[0]))) {
                    st->status = isfinite(v[0]) ? BREAKDOWN : NONFINITE;
                    st->why = v[0];
                    st->broke = BROKE_RHO;
                }
            }
        }
        loop_again(use_cond, h, st);
    }
};

template <typename T>
__global__ void bicg_update(T *x, T *r, const T *ph, const T *sh, const T *t, const T *r0,
                           int64_t n, const double *dots, double *partial, state *st,
                           bool use_cond, cudaGraphConditionalHandle h)
{
    if (st->status != RUNNING) {   /* split: the finish kernel says stop */
        if (!st->split && blockIdx.x == 0 && threadIdx.x == 0) loop_again(use_cond, h, st);
        return;
    }
    double omega;
    const bool ok = bicg_omega(st, dots, &omega);
    const double alpha = st->alpha;
    double v[2] = {0, 0};
    if (ok) GRID_LOOP(i, n) {
        x[i] = (T)(x[i] + alpha * (double)ph[i] + omega * (double)sh[i]);
        T ri = (T)(r[i] - omega * (double)t[i]);
        r[i] = ri;
        v[0] += (double)r0[i] * (double)ri;
        v[1] += (double)ri * (double)ri;
    }
    reduce_finish<2>(v, partial, st, bicg_update_finish{dots, use_cond, h});
}

/* ------------------------------------------------------------- GMRES */
/* Restarted GMRES(m), right-preconditioned (A D u = b, x = x0 + D V y),
 * Arnoldi by classical Gram-Schmidt with a second pass only when the first
 * lost more than half of w's length (||w|| < 0.7 ||w_before||: Daniel,
 * Gragg, Kaufman, Stewart), Givens rotations applied on the device by one
 * thread, |g(j+1)| the residual norm of the current iterate.  The basis V
 * holds m + 1 vectors; the SpMV's fixed input is z = D V_j and its output w.
 * H is column-major, (m + 1) rows; small holds H, hcol, cs, sn, g, y (m + 1
 * each) and c (m + 2: V_k'w, then w'w). */
struct gm_small {
    double *H, *c, *hcol, *cs, *sn, *g, *y;
};

/* An Arnoldi step runs while the solve runs and the cycle has room; the
 * second Gram-Schmidt pass only when the first asked for it. */
__device__ inline bool gm_active(const state *st, int pass)
{
    return st->status == RUNNING && st->j < st->m && (pass == 0 || st->reorth);
}

/* r = b - A x is in w: beta = ||r||, g = beta e_1, j = 0 */
struct gm_cycle_finish {
    gm_small sm;
    __device__ void operator()(state *st, const double *v) const
    {
        double beta = sqrt(v[0]);
        sm.g[0] = beta;
        st->j = 0;
        st->hnext = beta;
        st->status = RUNNING;
        check_stop(st, v[0]);
    }
};

template <typename T>
__global__ void gm_cycle_start(const T *w, int64_t n, double *partial, state *st, gm_small sm)
{
    double v[1] = {0};
    GRID_LOOP(i, n) v[0] += (double)w[i] * (double)w[i];
    reduce_finish<1>(v, partial, st, gm_cycle_finish{sm});
}

/* V_j = w / h(j,j-1) (or r / beta), z = D V_j: the next product's input */
template <typename T>
__global__ void gm_next_basis(const T *w, T *V, T *z, const T *d, int64_t n, const state *st)
{
    if (st->status != RUNNING || st->j >= st->m) return;
    const double inv = 1.0 / st->hnext;
    T *vj = V + (int64_t)st->j * n;
    GRID_LOOP(i, n) {
        T v = (T)((double)w[i] * inv);
        vj[i] = v;
        z[i] = d ? (T)((double)d[i] * (double)v) : v;
    }
}

/* Block partials of V_k'w for k <= j (blockIdx.y = k) and of w'w
 * (blockIdx.y = m + 1). */
template <typename T>
__global__ void gm_dots(const T *V, const T *w, int64_t n, double *partial, const state *st,
                        int pass)
{
    if (!gm_active(st, pass)) return;
    const int k = blockIdx.y, m = st->m;
    if (k <= m && k > st->j) return;
    const T *v = k <= m ? V + (int64_t)k * n : w;
    double s = 0;
    GRID_LOOP(i, n) s += (double)v[i] * (double)w[i];
    s = block_sum(s);
    if (threadIdx.x == 0) partial[(int64_t)k * gridDim.x + blockIdx.x] = s;
}

/* c_k (= V_k'w, k <= j; c_{m+1} = w'w) taken: hcol_k += c_k, and w'w
 * before the first pass */
__device__ inline void gm_take_dot(state *st, const gm_small &sm, int k, int pass)
{
    if (k == st->m + 1) {
        if (pass == 0) st->wbefore2 = sm.c[k];
    } else {
        sm.hcol[k] = (pass == 0 ? 0 : sm.hcol[k]) + sm.c[k];
    }
}

/* One block per k sums gm_dots' partials in block order into c_k, and
 * takes it (split: gm_dots_finish does, after the processes' sum) */
__global__ void gm_dots_sum(const double *partial, int nb, state *st, gm_small sm, int pass)
{
    if (!gm_active(st, pass)) return;
    const int k = blockIdx.x, m = st->m;
    if (k <= m && k > st->j) return;
    double s = 0;
    for (int b = threadIdx.x; b < nb; b += NT) s += partial[(int64_t)k * nb + b];
    s = block_sum(s);
    if (threadIdx.x != 0) return;
    sm.c[k] = s;
    if (!st->split) gm_take_dot(st, sm, k, pass);
}

struct gm_dots_finish {
    gm_small sm;
    int pass;
    __device__ void operator()(state *st, const double *) const
    {
        if (!gm_active(st, pass)) return;
        for (int k = 0; k <= st->j; k++) gm_take_dot(st, sm, k, pass);
        gm_take_dot(st, sm, st->m + 1, pass);
    }
};

/* w -= sum_k c_k V_k, ||w||^2; after the first pass, decide the second */
struct gm_orth_finish {
    int pass;
    __device__ void operator()(state *st, const double *v) const
    {
        if (!gm_active(st, pass)) return;
        st->wnorm2 = v[0];
        st->reorth = pass == 0 && v[0] < 0.49 * st->wbefore2;
        st->reorths += st->reorth;
    }
};

template <typename T>
__global__ void gm_orth(const T *V, T *w, int64_t n, double *partial, state *st, gm_small sm,
                        int pass)
{
    extern __shared__ double coef[];
    if (!gm_active(st, pass)) return;
    const int j = st->j;
    for (int k = threadIdx.x; k <= j; k += NT) coef[k] = sm.c[k];
    __syncthreads();
    double v[1] = {0};
    GRID_LOOP(i, n) {
        double a = w[i];
        for (int k = 0; k <= j; k++) a -= coef[k] * (double)V[(int64_t)k * n + i];
        T t = (T)a;
        w[i] = t;
        v[0] += (double)t * (double)t;
    }
    reduce_finish<1>(v, partial, st, gm_orth_finish{pass});
}

/* One thread: h(j+1,j) = ||w||, the earlier rotations on column j, a new
 * rotation zeroing h(j+1,j), g rotated; |g(j+1)| is the residual norm.
 * The WHILE loop goes on while running and j < m. */
__global__ void gm_givens(state *st, gm_small sm, bool use_cond, cudaGraphConditionalHandle h)
{
    if (gm_active(st, 0)) {
        const int j = st->j, m = st->m;
        double *hc = sm.hcol, h1 = sqrt(st->wnorm2);
        for (int k = 0; k < j; k++) {
            double a = hc[k], b = hc[k + 1];
            hc[k] = sm.cs[k] * a + sm.sn[k] * b;
            hc[k + 1] = -sm.sn[k] * a + sm.cs[k] * b;
        }
        double r = hypot(hc[j], h1);
        if (!(r > 0) || !isfinite(r)) {
            st->status = isfinite(r) ? BREAKDOWN : NONFINITE;   /* j steps stay usable */
            st->why = r;
        } else {
            sm.cs[j] = hc[j] / r;
            sm.sn[j] = h1 / r;
            hc[j] = r;
            for (int k = 0; k <= j; k++) sm.H[(int64_t)j * (m + 1) + k] = hc[k];
            sm.g[j + 1] = -sm.sn[j] * sm.g[j];
            sm.g[j] *= sm.cs[j];
            st->iter++;
            st->j = j + 1;
            st->hnext = h1;
            check_stop(st, sm.g[j + 1] * sm.g[j + 1]);
            /* h(j+1,j) = 0: the Krylov space is invariant, x is exact */
            if (st->status == RUNNING && h1 == 0) st->status = CONVERGED;
        }
        st->reorth = 0;
    }
    if (use_cond) cudaGraphSetConditional(h, st->status == RUNNING && st->j < st->m);
}

/* One thread: y = H(0:k,0:k) \ g(0:k), k = steps of this cycle */
__global__ void gm_solve_y(const state *st, gm_small sm)
{
    const int k = st->j, m1 = st->m + 1;
    for (int i = k - 1; i >= 0; i--) {
        double s = sm.g[i];
        for (int l = i + 1; l < k; l++) s -= sm.H[(int64_t)l * m1 + i] * sm.y[l];
        sm.y[i] = s / sm.H[(int64_t)i * m1 + i];
    }
}

/* A stage M (no diagonal), flexible: Z_j = z (= M V_j) kept for x += Z y. */
template <typename T>
__global__ void gm_keep_z(const T *z, T *Z, int64_t n, const state *st)
{
    if (st->status != RUNNING || st->j >= st->m) return;
    T *zj = Z + (int64_t)st->j * n;
    GRID_LOOP(i, n) zj[i] = z[i];
}

/* x += z (a cycle's end with a stage: z = M V y) */
template <typename T>
__global__ void add_kernel(T *x, const T *z, int64_t n)
{
    GRID_LOOP(i, n) x[i] = (T)((double)x[i] + (double)z[i]);
}

/* x += D (V y) */
template <typename T>
__global__ void gm_update_x(T *x, const T *V, const T *d, int64_t n, const state *st, gm_small sm)
{
    extern __shared__ double yk[];
    const int k = st->j;
    for (int l = threadIdx.x; l < k; l += NT) yk[l] = sm.y[l];
    __syncthreads();
    GRID_LOOP(i, n) {
        double a = 0;
        for (int l = 0; l < k; l++) a += yk[l] * (double)V[(int64_t)l * n + i];
        x[i] = (T)(x[i] + (d ? (double)d[i] * a : a));
    }
}

/* ------------------------------------------------------------ host side */

/* The status an operator's processes all go on with (one process: s): a
 * failure of one alone (device memory) must stop all, or the others
 * would wait for it in a reduction. */
static adia_status agreed(const adia_operator *op, adia_status s)
{
    return op && op->agree ? op->agree(op->ctx, s) : s;
}

/* Device memory of one solve, freed by the destructor. */
struct workspace {
    void *vec = nullptr;         /* k vectors of n values                    */
    double *partial = nullptr;   /* block sums: grid x 2 (GMRES: x (m + 2))  */
    double *small = nullptr;     /* GMRES: H and the short vectors            */
    void *dot_mem = nullptr;     /* CG, BiCGSTAB: the products' fused sums    */
    adia_dot_work dots = {};
    state *st = nullptr;
    state *host = nullptr;       /* pinned copy of st                        */
    cudaStream_t stream = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool use_cond = false;       /* exec is a device-side WHILE loop         */
    cudaGraphConditionalHandle cond = 0;
    ~workspace()
    {
        if (exec) cudaGraphExecDestroy(exec);
        if (stream) cudaStreamDestroy(stream);
        cudaFree(vec);
        cudaFree(small);
        cudaFree(dot_mem);
        cudaFree(partial);
        cudaFree(st);
        cudaFreeHost(host);
    }
};

/* One solve's constant description, with the workspace's vectors. */
template <typename T>
struct solve_run {
    const adia_solve_gpu_args *a;
    int64_t n;
    unsigned grid;
    workspace w;
    int spmvs;                   /* products launched, graph replays included */
    int graph_spmvs;             /* products in one replay of the graph       */
    int m;                       /* GMRES: restart length                     */
    unsigned dot_grid;           /* GMRES: blocks per basis vector in gm_dots */
    gm_small sm;
    T *x, *b, *r, *p, *q, *d, *r0, *ph, *sh, *t, *V;
    T *u, *s;                    /* CG: D r or M r (= r without either), A p */
    T *gz;                       /* GMRES: the product's input, D V_j or M V_j */
    T *Z;                        /* FGMRES: Z_j = M V_j, m vectors            */
    const adia_precond *M;       /* the stage z = m_alpha M r, or NULL        */
    double m_alpha;              /* 1 / a_scale: M approximates A^-1          */
    bool flex;                   /* M varies: flexible GMRES                  */
    bool fused;                  /* the format sums in the product's epilogue */
    const adia_operator *op;     /* the operator's callbacks, or NULL: plan   */
    bool split;                  /* op->sum_device: reductions over processes */
};

/* Vectors each method keeps beside x and b. */
static int64_t vectors_needed(adia_solver m, bool jacobi, bool stage, bool flex, int restart)
{
    /* CG: r p w(=q) s (+ d u, or u for a stage); BiCGSTAB: r r0 p v(=q) t
     * (+ d ph sh, or ph sh); GMRES: w(=r) z(=p) q (the stage's output) (+ d)
     * and the m + 1 basis vectors (flexible: + Z, m vectors) */
    if (m == ADIA_SOLVE_GMRES) return 3 + jacobi + (int64_t)restart + 1 + (flex ? restart : 0);
    return m == ADIA_SOLVE_CG ? 4 + 2 * jacobi + stage : 5 + 3 * jacobi + 2 * stage;
}

static adia_status check_device_memory(size_t bytes)
{
    size_t free_b = 0, total_b = 0;
    ADIA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (bytes <= free_b) return ADIA_OK;
    return adia__error(ADIA_ERR_NO_MEMORY, "GPU solver vectors need %.1f MB, the device has %.1f MB "
                      "free", bytes / 1e6, free_b / 1e6);
}

/* Blocks of NT threads that stay resident on one SM for every kernel of
 * the method: the grid is that many per SM, so each kernel runs in one
 * wave (a grid-stride loop with a second, partial wave of blocks takes
 * nearly twice as long as one). */
template <typename T>
int resident_blocks(adia_solver m)
{
    const void *kernels[] = {
        (const void *)cg_step<T>, (const void *)cg_start<T>, (const void *)bicg_update<T>,
        (const void *)bicg_half<T>, (const void *)bicg_direction<T>, (const void *)bicg_start<T>,
        (const void *)gm_orth<T>, (const void *)gm_next_basis<T>, (const void *)gm_cycle_start<T>,
        (const void *)gm_update_x<T>, (const void *)residual_kernel<T>,
        (const void *)norm_max_kernel<T>, (const void *)norm_sum_kernel<T>};
    (void)m;
    int fewest = 8;
    for (const void *k : kernels) {
        int nb = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, NT, 8 * 1024) == cudaSuccess &&
            nb > 0 && nb < fewest)
            fewest = nb;
    }
    cudaGetLastError();
    return fewest;
}

template <typename T>
adia_status setup(solve_run<T> &R)
{
    const adia_solve_gpu_args *a = R.a;
    const bool jac = a->inv_diag != nullptr, stage = R.M != nullptr;
    const bool gm = a->method == ADIA_SOLVE_GMRES;
    R.m = gm ? a->restart : 0;
    const int64_t k = vectors_needed(a->method, jac, stage, R.flex, R.m);
    size_t bytes = (size_t)k * (size_t)R.n * sizeof(T);
    int sms = 0, dev = 0;
    ADIA_CUDA_TRY(cudaGetDevice(&dev));
    ADIA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int64_t blocks = (R.n + NT - 1) / NT, wave = (int64_t)resident_blocks<T>(a->method) * sms;
    R.grid = (unsigned)(blocks < wave ? (blocks > 0 ? blocks : 1) : wave);
    /* gm_dots runs m + 2 of these side by side: fewer blocks each */
    R.dot_grid = R.grid < 2u * sms ? R.grid : 2u * sms;
    size_t partial = gm ? (size_t)(R.m + 2) * R.dot_grid : 2;
    if (partial < 2 * (size_t)R.grid) partial = 2 * (size_t)R.grid;
    size_t small = gm ? ((size_t)R.m + 1) * (R.m + 6) + 1 : 0;
    ADIA_TRY(check_device_memory(bytes + (partial + small) * sizeof(double) + sizeof(state)));
    ADIA_CUDA_TRY(cudaMalloc(&R.w.vec, bytes ? bytes : 1));
    ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.partial, partial * sizeof(double)));
    if (gm) {
        ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.small, small * sizeof(double)));
        ADIA_CUDA_TRY(cudaMemset(R.w.small, 0, small * sizeof(double)));
        double *q = R.w.small;
        const size_t m1 = (size_t)R.m + 1;
        /* H, c (m + 2), hcol, cs, sn, g, y */
        R.sm = {q, q + m1 * (R.m + 5), q + m1 * R.m, q + m1 * (R.m + 1), q + m1 * (R.m + 2),
                q + m1 * (R.m + 3), q + m1 * (R.m + 4)};
    }
    ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.st, sizeof(state)));
    state zero = {};
    zero.split = R.split;   /* the norm of b is taken before start() */
    ADIA_CUDA_TRY(cudaMemcpy(R.w.st, &zero, sizeof zero, cudaMemcpyHostToDevice));
    ADIA_CUDA_TRY(cudaMallocHost((void **)&R.w.host, sizeof(state)));
    ADIA_CUDA_TRY(cudaStreamCreateWithFlags(&R.w.stream, cudaStreamNonBlocking));
    T *v = (T *)R.w.vec;
    R.x = (T *)a->d_x;
    R.b = (T *)a->d_b;
    R.r = v;
    R.p = v + R.n;
    R.q = v + 2 * R.n;               /* BiCGSTAB: v */
    R.d = R.r0 = R.ph = R.sh = R.t = R.V = nullptr;
    R.u = R.r;
    R.s = nullptr;
    int64_t next = 3;
    if (a->method == ADIA_SOLVE_CG) R.s = v + next++ * R.n;
    if (a->method == ADIA_SOLVE_BICGSTAB) {
        R.r0 = v + next++ * R.n;
        R.t = v + next++ * R.n;
    }
    if (jac) {
        R.d = v + next++ * R.n;
        if (a->method == ADIA_SOLVE_CG) R.u = v + next++ * R.n;
        if (a->method == ADIA_SOLVE_BICGSTAB) {
            R.ph = v + next++ * R.n;
            R.sh = v + next++ * R.n;
        }
        std::vector<T> dh(R.n);
        for (int64_t i = 0; i < R.n; i++) dh[i] = (T)a->inv_diag[i];
        ADIA_CUDA_TRY(cudaMemcpy(R.d, dh.data(), R.n * sizeof(T), cudaMemcpyHostToDevice));
    } else if (stage && a->method == ADIA_SOLVE_CG) {
        R.u = v + next++ * R.n;      /* M r, apart from r */
    } else if (stage && a->method == ADIA_SOLVE_BICGSTAB) {
        R.ph = v + next++ * R.n;     /* M p and M s, apart from p and s */
        R.sh = v + next++ * R.n;
    } else if (a->method == ADIA_SOLVE_BICGSTAB) {
        R.ph = R.p;                  /* no preconditioner: ph = p, sh = s */
        R.sh = R.r;
    }
    R.gz = stage ? R.q : R.p;        /* GMRES: p holds V_j, q = M V_j */
    R.Z = nullptr;
    if (gm) R.V = v + next * R.n;
    if (gm && R.flex) R.Z = R.V + (int64_t)(R.m + 1) * R.n;
    if (R.op) {
        R.fused = R.op->apply_sums_device != nullptr;
    } else {
        const adia_gpu_ops *g = adia_plan_format(a->plan)->ops->gpu;
        R.fused = g && g->spmv_dot;
    }
    if (!gm) ADIA_TRY(adia__gpu_dot_work_alloc(R.n, &R.w.dots, &R.w.dot_mem));
    return ADIA_OK;
}

template <typename T>
adia_status spmv(solve_run<T> &R, const T *x, T *y)
{
    R.spmvs++;
    if (R.op)
        return R.op->apply_device(R.op->ctx, R.a->a_scale, (const double *)x, (double *)y,
                                  R.w.stream);
    return adia_spmv_async(R.a->plan, R.a->a_scale, x, 0.0, y, R.w.stream);
}

/* v[0..count) (device) summed over the processes, queued (one process:
 * nothing to do). */
template <typename T>
void combine(solve_run<T> &R, double *v, int count)
{
    if (R.split) R.op->sum_device(R.op->ctx, v, count, R.w.stream);
}

/* A split reduction's end: the processes' sum of st->sums, then f. */
template <typename T, class F>
adia_status finish(solve_run<T> &R, int count, const F &f)
{
    if (!R.split) return ADIA_OK;
    combine(R, R.w.st->sums, count);
    finish_kernel<F><<<1, 1, 0, R.w.stream>>>(R.w.st, f);
    return adia_cuda_check(cudaGetLastError(), "GPU solver reduction");
}

/* z = M r (alpha 1 / a_scale), queued: the preconditioner's stage. */
template <typename T>
adia_status precond(solve_run<T> &R, const T *r, T *z)
{
    return R.M->ops->apply(R.M, R.m_alpha, r, z, R.w.stream);
}

/* GMRES with a stage: the next product's input M V_j (V_j copied into p by
 * gm_next_basis: M's apply takes fixed pointers, V_j moves with j), kept
 * as Z_j when M varies. */
template <typename T>
adia_status gm_stage(solve_run<T> &R)
{
    if (!R.M) return ADIA_OK;
    ADIA_TRY(precond(R, R.p, R.q));
    if (R.flex) gm_keep_z<T><<<R.grid, NT, 0, R.w.stream>>>(R.q, R.Z, R.n, R.w.st);
    return adia_cuda_check(cudaGetLastError(), "GPU GMRES preconditioner");
}

/* y = A x with the sums of adia_dot_work (companion z) in R.w.dots.out,
 * summed over the processes. */
template <typename T>
adia_status spmv_dot(solve_run<T> &R, const T *x, T *y, const T *z)
{
    adia_dot_work dw = R.w.dots;
    dw.z = z;
    cudaStream_t s = R.w.stream;
    if (!R.op) {
        R.spmvs++;
        return adia__format_spmv_dot_gpu(adia_plan_format(R.a->plan), R.a->a_scale, x, 0.0, y,
                                        &dw, s);
    }
    if (R.fused) {   /* the operator adds its sums */
        R.spmvs++;
        ADIA_CUDA_TRY(cudaMemsetAsync(dw.out, 0, ADIA_NDOT * sizeof(double), s));
        ADIA_TRY(R.op->apply_sums_device(R.op->ctx, R.a->a_scale, (const double *)x, (double *)y,
                                         (const double *)z, dw.out, s));
    } else {
        ADIA_TRY(spmv(R, x, y));
        ADIA_TRY(adia__gpu_dots(ADIA_DOUBLE, x, y, (int32_t)R.n, &dw, s));
    }
    combine(R, dw.out, ADIA_NDOT);
    return ADIA_OK;
}

/* r = b - A x, queued. */
template <typename T>
adia_status residual(solve_run<T> &R)
{
    ADIA_TRY(spmv(R, R.x, R.r));
    residual_kernel<T><<<R.grid, NT, 0, R.w.stream>>>(R.b, R.r, R.n);
    return ADIA_OK;
}

/* GMRES cycle: w = b - A x, beta = ||w||, V_0 = w / beta, z = D V_0. */
template <typename T>
adia_status gm_begin_cycle(solve_run<T> &R)
{
    cudaStream_t s = R.w.stream;
    ADIA_TRY(residual(R));
    gm_cycle_start<T><<<R.grid, NT, 0, s>>>(R.r, R.n, R.w.partial, R.w.st, R.sm);
    ADIA_TRY(finish(R, 1, gm_cycle_finish{R.sm}));
    gm_next_basis<T><<<R.grid, NT, 0, s>>>(R.r, R.V, R.p, R.d, R.n, R.w.st);
    ADIA_TRY(adia_cuda_check(cudaGetLastError(), "GPU GMRES cycle"));
    return gm_stage(R);
}

/* GMRES cycle end: y from the j steps done, x += D V y; with a stage
 * x += M (V y) (V y formed in p, M of it in q), flexible x += Z y. */
template <typename T>
adia_status gm_end_cycle(solve_run<T> &R)
{
    cudaStream_t s = R.w.stream;
    const size_t yk = R.m * sizeof(double);
    gm_solve_y<<<1, 1, 0, s>>>(R.w.st, R.sm);
    if (!R.M || R.flex) {
        gm_update_x<T><<<R.grid, NT, yk, s>>>(R.x, R.flex ? R.Z : R.V, R.d, R.n, R.w.st, R.sm);
        return adia_cuda_check(cudaGetLastError(), "GPU GMRES update");
    }
    ADIA_CUDA_TRY(cudaMemsetAsync(R.p, 0, R.n * sizeof(T), s));
    gm_update_x<T><<<R.grid, NT, yk, s>>>(R.p, R.V, nullptr, R.n, R.w.st, R.sm);
    ADIA_TRY(adia_cuda_check(cudaGetLastError(), "GPU GMRES update"));
    ADIA_TRY(precond(R, R.p, R.q));
    add_kernel<T><<<R.grid, NT, 0, s>>>(R.x, R.q, R.n);
    return adia_cuda_check(cudaGetLastError(), "GPU GMRES update");
}

/* One Arnoldi step (w = A z; two-pass Gram-Schmidt; rotation; next basis). */
template <typename T>
adia_status gm_step(solve_run<T> &R)
{
    cudaStream_t s = R.w.stream;
    state *st = R.w.st;
    double *pa = R.w.partial;
    const unsigned m2 = (unsigned)R.m + 2;
    const size_t coef = ((size_t)R.m + 1) * sizeof(double);
    ADIA_TRY(spmv(R, R.gz, R.r));
    for (int pass = 0; pass < 2; pass++) {
        gm_dots<T><<<dim3(R.dot_grid, m2), NT, 0, s>>>(R.V, R.r, R.n, pa, st, pass);
        gm_dots_sum<<<m2, NT, 0, s>>>(pa, (int)R.dot_grid, st, R.sm, pass);
        if (R.split) {
            combine(R, R.sm.c, (int)m2);
            finish_kernel<gm_dots_finish><<<1, 1, 0, s>>>(st, gm_dots_finish{R.sm, pass});
        }
        gm_orth<T><<<R.grid, NT, coef, s>>>(R.V, R.r, R.n, pa, st, R.sm, pass);
        ADIA_TRY(finish(R, 1, gm_orth_finish{pass}));
    }
    gm_givens<<<1, 1, 0, s>>>(st, R.sm, R.w.use_cond, R.w.cond);
    gm_next_basis<T><<<R.grid, NT, 0, s>>>(R.r, R.V, R.p, R.d, R.n, st);
    return gm_stage(R);
}

/* r = b - A x, then the method's start kernel (state reset, first test). */
template <typename T>
adia_status start(solve_run<T> &R, double tol2, int max_iter)
{
    state init = {};
    init.tol2 = tol2;
    init.max_iter = max_iter;
    init.m = R.m;
    init.split = R.split;
    ADIA_CUDA_TRY(cudaMemcpyAsync(R.w.st, &init, sizeof init, cudaMemcpyHostToDevice, R.w.stream));
    if (R.a->method == ADIA_SOLVE_GMRES) return gm_begin_cycle(R);
    ADIA_TRY(residual(R));
    cudaStream_t s = R.w.stream;
    if (R.a->method == ADIA_SOLVE_CG) {
        cg_start<T><<<R.grid, NT, 0, s>>>(R.r, R.u, R.d, R.n, R.w.st);
        if (R.M) ADIA_TRY(precond(R, R.r, R.u));
    } else {
        bicg_start<T><<<R.grid, NT, 0, s>>>(R.r, R.r0, R.p, R.q, R.n, R.w.partial, R.w.st);
        ADIA_TRY(finish(R, 1, bicg_start_finish()));
    }
    return adia_cuda_check(cudaGetLastError(), "GPU solver start");
}

/* One iteration's kernels on the solver's stream (captured into the graph). */
template <typename T>
adia_status iteration(solve_run<T> &R)
{
    cudaStream_t s = R.w.stream;
    double *pa = R.w.partial;
    state *st = R.w.st;
    if (R.a->method == ADIA_SOLVE_GMRES) {
        ADIA_TRY(gm_step(R));
    } else if (R.a->method == ADIA_SOLVE_CG) {
        /* w = A u with u'w, r'u, r'r; then the vector pass (and u = M r) */
        ADIA_TRY(spmv_dot(R, R.u, R.q, R.d || R.M ? R.r : nullptr));
        auto step = R.M ? cg_step<T, true> : cg_step<T, false>;
        step<<<R.grid, NT, 0, s>>>(R.x, R.r, R.u, R.p, R.s, R.q, R.d, R.n, R.w.dots.out, st,
                                   R.w.use_cond, R.w.cond);
        if (R.M) ADIA_TRY(precond(R, R.r, R.u));
    } else {
        const double *dots = R.w.dots.out;
        bicg_direction<T><<<R.grid, NT, 0, s>>>(R.p, R.d ? R.ph : R.p, R.r, R.q, R.d, R.n, st);
        if (R.M) ADIA_TRY(precond(R, R.p, R.ph));         /* ph = M p */
        ADIA_TRY(spmv_dot(R, R.ph, R.q, R.r0));          /* v = A ph, r0'v */
        bicg_half<T><<<R.grid, NT, 0, s>>>(R.r, R.d ? R.sh : R.r, R.q, R.d, R.n, dots, pa, st);
        ADIA_TRY(finish(R, 1, bicg_half_finish{dots}));
        if (R.M) ADIA_TRY(precond(R, R.r, R.sh));         /* sh = M s (s is in r) */
        ADIA_TRY(spmv_dot(R, R.sh, R.t, R.r));           /* t = A sh, s't, t't */
        bicg_update<T><<<R.grid, NT, 0, s>>>(R.x, R.r, R.ph, R.sh, R.t, R.r0, R.n, dots, pa, st,
                                             R.w.use_cond, R.w.cond);
        ADIA_TRY(finish(R, 2, bicg_update_finish{dots, R.w.use_cond, R.w.cond}));
    }
    return adia_cuda_check(cudaGetLastError(), "GPU solver iteration");
}

/* The iteration loop as one graph: a WHILE node (CUDA 12.4+) whose body
 * is one iteration, repeated on the device until the last kernel of an
 * iteration says stop -- no host round trip and no work after the stop.
 * Where conditional nodes are not available (older driver), a chunk of
 * iterations is captured instead and replayed until the state says stop;
 * then the SpMVs of the chunk's remaining iterations still run. */
static int chunk_size(int64_t n) { return n < (1 << 20) ? 32 : 8; }

template <typename T>
adia_status capture_iterations(solve_run<T> &R, cudaGraph_t into, int count)
{
    cudaError_t e = into ? cudaStreamBeginCaptureToGraph(R.w.stream, into, nullptr, nullptr, 0,
                                                         cudaStreamCaptureModeThreadLocal)
                         : cudaStreamBeginCapture(R.w.stream, cudaStreamCaptureModeThreadLocal);
    ADIA_TRY(adia_cuda_check(e, "GPU solver graph capture"));
    adia_status s = ADIA_OK;
    int before = R.spmvs;
    for (int i = 0; i < count && s == ADIA_OK; i++) s = iteration(R);
    R.graph_spmvs = R.spmvs - before;
    R.spmvs = before;
    cudaGraph_t g = into;
    e = cudaStreamEndCapture(R.w.stream, &g);
    if (s == ADIA_OK) s = adia_cuda_check(e, "GPU solver graph capture");
    /* an operator's kernels keep their streams' priorities (a halo's
     * transfer scheduled ahead of the product's blocks) */
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaGraphInstantiate(&R.w.exec, g,
                                                 cudaGraphInstantiateFlagUseNodePriority),
                            "GPU solver graph");
    if (g && !into) cudaGraphDestroy(g);
    return s;
}

template <typename T>
adia_status capture_while(solve_run<T> &R)
{
    cudaGraph_t g = nullptr;
    if (cudaGraphCreate(&g, 0) != cudaSuccess) return ADIA_ERR_UNSUPPORTED;
    cudaGraphNodeParams np = {};
    np.type = cudaGraphNodeTypeConditional;
    np.conditional.type = cudaGraphCondTypeWhile;
    np.conditional.size = 1;
    cudaGraphNode_t node;
    adia_status s = ADIA_ERR_UNSUPPORTED;
    if (cudaGraphConditionalHandleCreate(&np.conditional.handle, g, 1,
                                         cudaGraphCondAssignDefault) == cudaSuccess &&
        cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &np) == cudaSuccess) {
        R.w.cond = np.conditional.handle;
        R.w.use_cond = true;
        s = capture_iterations(R, np.conditional.phGraph_out[0], 1);
        if (s != ADIA_OK) R.w.use_cond = false;
    }
    cudaGetLastError();   /* an unsupported conditional node is not an error here */
    cudaGraphDestroy(g);
    return s;
}

/* Whether an attempt worked on every process (an operator's processes
 * must all take the same way, or their collectives would not meet); a
 * failed capture leaves nothing behind. */
template <typename T>
bool everywhere(solve_run<T> &R, adia_status s)
{
    double failed = s != ADIA_OK;
    if (R.op && R.op->max) R.op->max(R.op->ctx, &failed, 1);
    if (failed == 0) return true;
    if (R.w.exec) cudaGraphExecDestroy(R.w.exec);
    R.w.exec = nullptr;
    R.w.use_cond = false;
    cudaGetLastError();
    return false;
}

/* The loop as one WHILE graph, else chunks of iterations as a plain
 * graph, else (an operator that waits on the host, or a capture that
 * failed) no graph: iterate() launches iteration by iteration. */
template <typename T>
void capture(solve_run<T> &R)
{
    int graph = R.op ? R.op->device_graph : 2;
    if (R.M && R.M->ops->graph < graph) graph = R.M->ops->graph;   /* what M's apply queues */
    if (graph >= 2 && everywhere(R, capture_while(R))) return;
    if (graph >= 1) everywhere(R, capture_iterations(R, nullptr, chunk_size(R.n)));
}

/* Run the graph until the device stops (GMRES: cycle by cycle, x updated
 * and the residual recomputed between cycles); *st is the final state. */
template <typename T>
adia_status iterate(solve_run<T> &R, state *st)
{
    for (;;) {
        ADIA_CUDA_TRY(cudaMemcpyAsync(R.w.host, R.w.st, sizeof(state), cudaMemcpyDeviceToHost,
                                      R.w.stream));
        ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
        *st = *R.w.host;
        if (R.a->method == ADIA_SOLVE_GMRES && (st->status != RUNNING || st->j >= st->m)) {
            ADIA_TRY(gm_end_cycle(R));
            if (st->status != RUNNING) return ADIA_OK;
            ADIA_TRY(gm_begin_cycle(R));   /* restart: the loop reads its state */
            continue;
        }
        if (st->status != RUNNING) return ADIA_OK;
        if (!R.w.exec) {   /* no graph: one iteration, its products counted as they go */
            ADIA_TRY(iteration(R));
            continue;
        }
        ADIA_CUDA_TRY(cudaGraphLaunch(R.w.exec, R.w.stream));
        if (!R.w.use_cond) R.spmvs += R.graph_spmvs;   /* WHILE: counted per iteration */
    }
}

/* ||v|| without overflow or underflow (NaN if v holds a NaN). */
template <typename T>
adia_status norm(solve_run<T> &R, const T *v, double *out)
{
    cudaStream_t s = R.w.stream;
    norm_max_kernel<T><<<R.grid, NT, 0, s>>>(v, R.n, R.w.partial, R.w.st);
    if (R.split) R.op->max_device(R.op->ctx, &R.w.st->norm_max, 1, s);
    norm_sum_kernel<T><<<R.grid, NT, 0, s>>>(v, R.n, R.w.partial, R.w.st);
    ADIA_TRY(finish(R, 1, norm_finish()));
    ADIA_CUDA_TRY(cudaGetLastError());
    ADIA_CUDA_TRY(cudaMemcpyAsync(R.w.host, R.w.st, sizeof(state), cudaMemcpyDeviceToHost, s));
    ADIA_CUDA_TRY(cudaStreamSynchronize(s));
    *out = R.w.host->norm;
    return ADIA_OK;
}

/* ||b - A x|| of the current x, in r. */
template <typename T>
adia_status true_residual(solve_run<T> &R, double *out)
{
    ADIA_TRY(residual(R));
    ADIA_CUDA_TRY(cudaGetLastError());
    return norm(R, R.r, out);
}

/* Bytes one iteration moves as these kernels run it, and the floor: the
 * matrix once per product plus the fewest vector passes with every dot
 * product fused into a neighbouring kernel (fmt: storage + the product's
 * x and y).  CG 11 passes: the product's u and w, then r p w s x read and
 * p s x r written; Jacobi adds d, u and the product's read of r.
 * BiCGSTAB 20: two products with r0 / s read by their sums, direction 4,
 * half 3, update 7.  A format without the fused sums (fused false) reads
 * x, y (and z) again after each product.  GMRES: the mean over a cycle's
 * steps of one Gram-Schmidt pass (dots j + 2, update j + 3) and the next
 * basis vector (3), floor the same less the separate dot pass of w (j + 1
 * passes saved per step when dots fuse with the update: not possible in
 * classical Gram-Schmidt, so the floor counts them).  second_passes: the
 * share of steps whose Gram-Schmidt ran twice (||w|| fell below 0.7 of
 * its length: on every step of a 3D Poisson matrix, ratio 0.40-0.48), each
 * a second pass over the basis the floor does not count. */
static void bytes_per_iteration(const adia_solve_gpu_args *a, bool fused, double vs,
                                double second_passes, adia_solve_info *info)
{
    const double n = (double)a->n, jac = a->inv_diag ? 1 : 0;
    if (a->M) return;   /* the stage's bytes are its own, not known here: 0 */
    double fmt, store;
    if (a->op) {   /* the operator's bytes: its matrix and one pass each of x and y */
        if (!(a->op->apply_bytes > 0)) return;   /* unknown: 0 */
        fmt = a->op->apply_bytes;
        store = fmax(0.0, fmt - 2 * vs * n);
    } else {
        adia_format *F = adia_plan_format(a->plan);
        fmt = (double)adia_format_bytes(F);
        store = (double)adia_format_storage_bytes(F);
    }
    if (a->method == ADIA_SOLVE_CG) {
        info->bytes_per_iter = fmt + (9 + 3 * jac + (fused ? 0 : 2 + jac)) * vs * n;
        info->floor_bytes_per_iter = store + 11 * vs * n;
    } else if (a->method == ADIA_SOLVE_BICGSTAB) {
        info->bytes_per_iter = 2 * fmt + (16 + 4 * jac + (fused ? 0 : 4)) * vs * n;
        info->floor_bytes_per_iter = 2 * store + 20 * vs * n;
    } else {
        double mean_j = (a->restart - 1) / 2.0, pass = 2 * mean_j + 5;
        info->bytes_per_iter = fmt + (pass * (1 + second_passes) + 3 + jac) * vs * n;
        info->floor_bytes_per_iter = store + (2 * mean_j + 7) * vs * n;
    }
}

static void stop_reason(const state &st, adia_solver m, adia_solve_info *info)
{
    char *w = info->stop;
    size_t len = sizeof info->stop;
    switch (st.status) {
    case CONVERGED: snprintf(w, len, "converged"); break;
    case LIMIT: snprintf(w, len, "iteration limit reached"); break;
    case NONFINITE: snprintf(w, len, "non-finite value (%g) at iteration %d", st.why, st.iter); break;
    default:
        if (m == ADIA_SOLVE_BICGSTAB && st.broke == BROKE_OMEGA)   /* the CPU's words */
            snprintf(w, len, "breakdown: omega = %g (t't = %g) at iteration %d", st.why, st.tt,
                     st.iter);
        else
            snprintf(w, len, m == ADIA_SOLVE_CG ? "breakdown: p'Ap = %g (A is not symmetric "
                     "positive definite?)" : m == ADIA_SOLVE_GMRES ? "breakdown: singular "
                     "Hessenberg matrix (%g) at iteration %d" : st.broke == BROKE_R0V ?
                     "breakdown: (r0, A p) = %g at iteration %d" : "breakdown: (r0, r) = %g at "
                     "iteration %d", st.why, st.iter);
    }
}

/* As the CPU solver: when the recurrence says converged but the true
 * residual does not, or BiCGSTAB's (r0, r) or (r0, A p) is 0, restart
 * from the true residual (at most 3 times). */
enum { SOLVE_RESTARTS = 3 };

template <typename T>
adia_status solve(const adia_solve_gpu_args *a, adia_solve_info *info)
{
    solve_run<T> R;
    R.a = a;
    R.n = a->n;
    R.op = a->op;
    R.split = a->op && a->op->sum_device;
    R.M = a->M;
    R.m_alpha = 1.0 / a->a_scale;   /* a power of two: exact */
    R.flex = R.M && R.M->ops->varies;
    R.spmvs = R.graph_spmvs = 0;
    adia_status s = R.op && R.n > INT32_MAX
                        ? adia__error(ADIA_ERR_DIMENSION, "adia_solve_operator: %lld rows on one "
                                      "process; the GPU methods take at most 2^31 - 1",
                                      (long long)R.n)
                        : setup(R);
    ADIA_TRY(agreed(a->op, s));
    cudaStream_t user = (cudaStream_t)a->stream;
    ADIA_CUDA_TRY(cudaStreamSynchronize(user));   /* b and x are ready */
    double bnorm = 0;
    ADIA_TRY(norm(R, R.b, &bnorm));
    const double bmax = R.w.host->norm_max;   /* norm() copied the state back */
    if (!isfinite(bmax) || isnan(bnorm))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: b holds a non-finite value");
    if (bnorm == 0) {   /* the solution is 0 */
        ADIA_CUDA_TRY(cudaMemsetAsync(R.x, 0, R.n * sizeof(T), R.w.stream));
        ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
        info->converged = 1;
        snprintf(info->stop, sizeof info->stop, "b = 0: x = 0");
        return ADIA_OK;
    }
    const double tol = a->rtol * bnorm;
    /* The iterations compare squared norms (r'r against (rtol ||b||)^2) on
     * the vectors as given: both squares must be normal doubles, or the
     * test is Inf <= Inf or never met.  Host vectors come scaled (||b|| in
     * [0.5, 1): solve.c), so only a tiny rtol meets this there; device
     * vectors (adia_plan_solve, adia_solve_operator_device) are not. */
    if (!(bnorm * bnorm <= DBL_MAX) || !(tol * tol >= DBL_MIN))
        return adia__error(ADIA_ERR_INVALID_ARG, "GPU solver: ||b|| = %g (max |b_i| = %g), rtol %g: "
                          "||b||^2 and (rtol ||b||)^2 must lie in the range of double (||b|| below "
                          "1.3e154, rtol ||b|| above 1.5e-154); scale b by a power of two, or solve "
                          "with host vectors (adia_solve scales the system)", bnorm, bmax, a->rtol);
    /* setup (the caller's setup_ms): the workspace above, the norm of b
     * and the capture, which instantiates the graph and runs the first
     * SpMV's host side (an NVRTC compile of a generated kernel); nothing is
     * queued (norm() synchronised), so the clock starts at the first
     * iteration's launch and stops after the last true residual */
    capture(R);
    const double t0 = adia__now_ms();
    state st = {};
    int done = 0, reorths = 0;
    double rnorm = NAN;
    for (int restart = 0; restart <= SOLVE_RESTARTS; restart++) {
        ADIA_TRY(start(R, tol * tol, a->max_iter - done));
        ADIA_TRY(iterate(R, &st));
        done += st.iter;
        reorths += st.reorths;
        if (R.w.use_cond) R.spmvs += st.iter * R.graph_spmvs;
        ADIA_TRY(true_residual(R, &rnorm));
        bool said = st.status == CONVERGED;
        /* BiCGSTAB's shadow residual became orthogonal: go on from the
         * true residual with a new one (the CPU's rule too) */
        bool shadow = a->method == ADIA_SOLVE_BICGSTAB && st.status == BREAKDOWN &&
                      st.broke != BROKE_OMEGA && isfinite(rnorm);
        info->converged = isfinite(rnorm) && rnorm <= tol;
        if (info->converged || !(said || shadow) || done >= a->max_iter) break;
    }
    info->time_ms = adia__now_ms() - t0;
    info->iterations = done;
    info->spmvs = R.spmvs;
    info->residual = rnorm / bnorm;
    bytes_per_iteration(a, R.fused, sizeof(T), done > 0 ? (double)reorths / done : 0, info);
    stop_reason(st, a->method, info);
    if (st.status == CONVERGED && !info->converged)
        snprintf(info->stop, sizeof info->stop, isfinite(rnorm) ? "the recurrence converged, the "
                 "true residual did not (%.3g): lost accuracy" : "the true residual is not "
                 "finite (%g)", info->residual);
    /* a finite residual can hide a non-finite x: an entry whose column of
     * A is empty never reaches b - A x */
    double xnorm = 0, xmax = 0;   /* max |x_i|: ||x|| itself may exceed the range */
    if (info->converged) ADIA_TRY(norm(R, R.x, &xnorm));
    if (info->converged) xmax = R.w.host->norm_max;
    if (!isfinite(xmax)) {
        info->converged = 0;
        snprintf(info->stop, sizeof info->stop, "non-finite solution (max |x_i| = %g)", xmax);
    }
    ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
    return ADIA_OK;
}

} // namespace

extern "C" adia_status adia__solve_gpu(const adia_solve_gpu_args *a, adia_solve_info *info)
{
    info->spmv_ms = NAN;   /* not separable from the fused iteration */
    return a->vt == ADIA_FLOAT ? solve<float>(a, info) : solve<double>(a, info);
}

/* Host doubles to the device in the plan's type: copied as they are for
 * a double plan, converted through a staging array for a float one. */
static adia_status upload(const double *h, int64_t n, adia_value_type vt, void *d)
{
    if (vt == ADIA_DOUBLE)
        return adia_cuda_check(cudaMemcpy(d, h, n * sizeof(double), cudaMemcpyHostToDevice),
                               "GPU solver upload");
    std::vector<float> f(h, h + n);
    return adia_cuda_check(cudaMemcpy(d, f.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                           "GPU solver upload");
}

static adia_status download(const void *d, int64_t n, adia_value_type vt, double *h)
{
    if (vt == ADIA_DOUBLE)
        return adia_cuda_check(cudaMemcpy(h, d, n * sizeof(double), cudaMemcpyDeviceToHost),
                               "GPU solver download");
    std::vector<float> f(n);
    ADIA_TRY(adia_cuda_check(cudaMemcpy(f.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost),
                             "GPU solver download"));
    for (int64_t i = 0; i < n; i++) h[i] = f[i];
    return ADIA_OK;
}

extern "C" adia_status adia__solve_gpu_host(const adia_solve_gpu_args *a, const double *b,
                                           double *x, adia_solve_info *info)
{
    size_t bytes = (size_t)a->n * adia_value_size(a->vt);
    void *d = nullptr;
    adia_status s = adia_cuda_check(cudaMalloc(&d, 2 * bytes + 1), "GPU solver b and x");
    adia_solve_gpu_args g = *a;
    g.d_b = d;
    g.d_x = (char *)d + bytes;
    g.stream = nullptr;
    if (s == ADIA_OK) s = upload(b, a->n, a->vt, d);
    if (s == ADIA_OK) s = upload(x, a->n, a->vt, g.d_x);
    s = agreed(a->op, s);
    if (s == ADIA_OK) s = adia__solve_gpu(&g, info);
    if (s == ADIA_OK) s = download(g.d_x, a->n, a->vt, x);
    cudaFree(d);
    return s;
}
