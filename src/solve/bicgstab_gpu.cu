/* bicgstab_gpu.cu -- BiCGSTAB on the device: its kernels and the host
 * functions that queue them (solve_gpu.cuh).
 *
 * Right-preconditioned (D = Jacobi or I):
 *   p = r + beta (p - omega v); ph = D p; v = A ph; alpha = rho / r0'v;
 *   s = r - alpha v; sh = D s; t = A sh; omega = t's / t't;
 *   x += alpha ph + omega sh; r = s - omega t; rho' = r0'r; beta = ...
 * r0'v comes out of the product v = A ph (companion r0), t's, t't and
 * s's (the early finish's test) out of t = A sh (companion s):
 * adia_dot_work.  Three reductions over the processes an iteration: the
 * two products' and the update's.  A preconditioner without a diagonal is
 * a stage: ph = M p after bicg_direction, sh = M s after bicg_half (those
 * kernels take d NULL then). */
#include "solve_gpu.cuh"

namespace adia__gpu_solve {
namespace {

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
 * r); sh = D s.  No reduction of its own: ||s||^2 comes out of the next
 * product's sums (its companion is s), which bicg_update reads -- one
 * reduction over the processes fewer per iteration.  The last block keeps
 * alpha, or the breakdown. */
__device__ inline bool bicg_alpha(const state *st, const double *dots, double *alpha)
{
    const double r0v = dots[ADIA_DOT_ZY];
    *alpha = st->rho / r0v;
    return r0v != 0 && isfinite(r0v) && isfinite(*alpha);
}

template <typename T>
__global__ void bicg_half(T *r, T *sh, const T *v, const T *d, int64_t n, double *dots,
                          state *st)
{
    if (st->status != RUNNING) return;
    double alpha;
    const bool ok = bicg_alpha(st, dots, &alpha);
    if (ok) GRID_LOOP(i, n) {
        T si = (T)(r[i] - alpha * (double)v[i]);
        r[i] = si;
        if (d) sh[i] = (T)((double)d[i] * (double)si);
    }
    if (!adia__reduce::grid_last(&st->count)) return;
    st->alpha = alpha;
    if (!ok) {
        const double r0v = dots[ADIA_DOT_ZY];
        st->status = isfinite(r0v) && isfinite(alpha) ? BREAKDOWN : NONFINITE;
        st->why = r0v;
        st->broke = BROKE_R0V;
    }
    zero_sums(dots);
}

/* omega = t's / t't (0 when s is already small enough: ||s||^2 = s's, the
 * product's companion sum; all from the product t = A sh's sums);
 * x += alpha ph + omega sh; r = s - omega t; rho' = r0'r, rr = r'r; the
 * iteration's last kernel */
__device__ inline bool bicg_omega(const state *st, const double *dots, double *omega)
{
    const double ts = dots[ADIA_DOT_ZY], tt = dots[ADIA_DOT_YY];
    const bool done = dots[ADIA_DOT_ZZ] <= st->tol2;
    *omega = done ? 0 : tt > 0 ? ts / tt : 0;
    return done || (*omega != 0 && isfinite(*omega));
}

struct bicg_update_finish {
    double *dots;
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
                check_stop(st, omega == 0 ? dots[ADIA_DOT_ZZ] : v[1]);
                if (st->status == RUNNING && (v[0] == 0 || !isfinite(v[0]))) {
                    st->status = isfinite(v[0]) ? BREAKDOWN : NONFINITE;
                    st->why = v[0];
                    st->broke = BROKE_RHO;
                }
            }
            zero_sums(dots);
        }
        loop_again(use_cond, h, st);
    }
};

template <typename T>
__global__ void bicg_update(T *x, T *r, const T *ph, const T *sh, const T *t, const T *r0,
                           int64_t n, double *dots, double *partial, state *st,
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

} // namespace

/* After r = b - A x: r0 = r, p = v = 0, the state's reset, the first test. */
template <typename T>
adia_status bicg_begin(solve_run<T> &R)
{
    bicg_start<T><<<R.grid, NT, 0, R.w.stream>>>(R.r, R.r0, R.p, R.q, R.n, R.w.partial, R.w.st);
    ADIA_TRY(finish(R, 1, bicg_start_finish()));
    return ADIA_OK;
}

/* The direction, two products with their sums, the half step and the
 * update (with the stages ph = M p and sh = M s). */
template <typename T>
adia_status bicg_iteration(solve_run<T> &R)
{
    cudaStream_t s = R.w.stream;
    double *pa = R.w.partial;
    state *st = R.w.st;
    double *dots = R.w.dots.out;
    bicg_direction<T><<<R.grid, NT, 0, s>>>(R.p, R.d ? R.ph : R.p, R.r, R.q, R.d, R.n, st);
    if (R.M) ADIA_TRY(precond(R, R.p, R.ph));         /* ph = M p */
    ADIA_TRY(spmv_dot(R, R.ph, R.q, R.r0));          /* v = A ph, r0'v */
    bicg_half<T><<<R.grid, NT, 0, s>>>(R.r, R.d ? R.sh : R.r, R.q, R.d, R.n, dots, st);
    if (R.M) ADIA_TRY(precond(R, R.r, R.sh));         /* sh = M s (s is in r) */
    ADIA_TRY(spmv_dot(R, R.sh, R.t, R.r));           /* t = A sh, s't, t't, s's */
    bicg_update<T><<<R.grid, NT, 0, s>>>(R.x, R.r, R.ph, R.sh, R.t, R.r0, R.n, dots, pa, st,
                                         R.w.use_cond, R.w.cond);
    ADIA_TRY(finish(R, 2, bicg_update_finish{dots, R.w.use_cond, R.w.cond}));
    return ADIA_OK;
}

template <typename T>
kernel_list bicg_kernels()
{
    return {{(const void *)bicg_update<T>, (const void *)bicg_half<T>,
             (const void *)bicg_direction<T>, (const void *)bicg_start<T>}, 4};
}

template adia_status bicg_begin<double>(solve_run<double> &);
template adia_status bicg_begin<float>(solve_run<float> &);
template adia_status bicg_iteration<double>(solve_run<double> &);
template adia_status bicg_iteration<float>(solve_run<float> &);
template kernel_list bicg_kernels<double>();
template kernel_list bicg_kernels<float>();

} // namespace adia__gpu_solve
