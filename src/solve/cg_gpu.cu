/* cg_gpu.cu -- CG on the device: its kernels and the host functions that
 * queue them (solve_gpu.cuh).
 *
 * Chronopoulos-Gear CG: one product and one vector pass an iteration.  The
 * product w = A u (u = D r, or r itself) carries the iteration's three dot
 * products in its epilogue (adia_dot_work: delta = u'w, gamma = r'u,
 * rho = r'r), so the vector pass reads no reduction of its own:
 *   beta = gamma / gamma_prev, alpha = gamma / (delta - beta gamma / alpha_prev)
 *   p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = D r.
 * In exact arithmetic it is CG (s = A p, delta - beta gamma / alpha_prev =
 * p'Ap), with the same iterates; the stop test reads rho of the current r
 * before the update, so `iterations` counts updates as the CPU's CG.
 * A preconditioner without a diagonal (STAGE) is a stage of its own, the
 * iteration's first: u = M r, the product, then the step, which reads u
 * instead of forming D r and also sums the updated r'r and stops there
 * when it meets the tolerance.  So the loop ends right after the update
 * that converged: testing rho at the next product ran one more M r and
 * one more product for nothing, about 7.9 of mg-PCG's 35.7 ms on
 * lap3d7:256 (H200, 2026-11-27).  Split over processes (a sum across
 * them is not at hand in the kernel) the stop stays at the next product. */
#include "solve_gpu.cuh"

namespace adia__gpu_solve {
namespace {

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
 * or a stage; a stage's also sums the updated r'r (partial: a block's). */
template <typename T, bool STAGE = false>
__global__ void cg_step(T *x, T *r, T *u, T *p, T *s, const T *w, const T *d, int64_t n,
                        double *dots, state *st, bool use_cond,
                        cudaGraphConditionalHandle h, double *partial)
{
    if (st->status != RUNNING) {   /* chunked replay after the stop */
        if (blockIdx.x == 0 && threadIdx.x == 0) loop_again(use_cond, h, st);
        return;
    }
    double alpha, beta, why;
    const int status = cg_scalars(dots, st, &alpha, &beta, &why);
    const bool first = st->iter == 0;
    double rr[1] = {0};   /* STAGE: the updated r'r */
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
        if (STAGE) rr[0] += (double)rn * (double)rn;
    }
    const bool last = STAGE && !st->split ? adia__reduce::grid_reduce<1>(rr, partial, &st->count)
                                          : adia__reduce::grid_last(&st->count);
    if (last) {
        st->rr = dots[ADIA_DOT_ZZ];
        st->status = status;
        st->why = why;
        const double rz = dots[ADIA_DOT_ZX];
        zero_sums(dots);
        if (status == RUNNING) {
            st->iter++;
            st->rz = rz;
            st->alpha = alpha;
            if (STAGE && !st->split) {   /* the next step's tests of rho, now */
                st->rr = rr[0];
                if (!isfinite(rr[0])) st->status = NONFINITE;
                else if (rr[0] <= st->tol2) st->status = CONVERGED;
                else if (st->iter >= st->max_iter) st->status = LIMIT;
                if (st->status != RUNNING) st->why = rr[0];
            }
        }
        loop_again(use_cond, h, st);
    }
}

} // namespace

/* After r = b - A x: u = D r and the state's reset. */
template <typename T>
adia_status cg_begin(solve_run<T> &R)
{
    cg_start<T><<<R.grid, NT, 0, R.w.stream>>>(R.r, R.u, R.d, R.n, R.w.st);
    return ADIA_OK;
}

/* (u = M r,) w = A u with u'w, r'u, r'r; then the vector pass. */
template <typename T>
adia_status cg_iteration(solve_run<T> &R)
{
    if (R.M) ADIA_TRY(precond(R, R.r, R.u));
    ADIA_TRY(spmv_dot(R, R.u, R.q, R.d || R.M ? R.r : nullptr));
    auto step = R.M ? cg_step<T, true> : cg_step<T, false>;
    step<<<R.grid, NT, 0, R.w.stream>>>(R.x, R.r, R.u, R.p, R.s, R.q, R.d, R.n, R.w.dots.out,
                                        R.w.st, R.w.use_cond, R.w.cond, R.w.partial);
    return ADIA_OK;
}

template <typename T>
kernel_list cg_kernels()
{
    return {{(const void *)cg_step<T>, (const void *)cg_start<T>}, 2};
}

template adia_status cg_begin<double>(solve_run<double> &);
template adia_status cg_begin<float>(solve_run<float> &);
template adia_status cg_iteration<double>(solve_run<double> &);
template adia_status cg_iteration<float>(solve_run<float> &);
template kernel_list cg_kernels<double>();
template kernel_list cg_kernels<float>();

} // namespace adia__gpu_solve
