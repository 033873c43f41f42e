/* cg_gpu.cu -- CG's kernels on the device: its start and its vector pass
 * (method.h has the algorithm and its scalars, cg.c the stages of an
 * iteration; this is the GPU's half of solve_kernels' cg_start, cg_step).
 *
 * The vector pass reads the product's sums (delta, gamma, rho) in every
 * block -- each computes the same scalars -- and its last block keeps the
 * state.  With a stage (STAGE) it also sums the updated r'r, a grid
 * reduction of its own, for the stop right after the update. */
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

/* The iteration's vector pass (after the product); u == r without Jacobi
 * or a stage. */
template <typename T, bool STAGE = false>
__global__ void cg_step(T *x, T *r, T *u, T *p, T *s, const T *w, const T *d, int64_t n,
                        double *dots, state *st, bool use_cond,
                        cudaGraphConditionalHandle h, double *partial)
{
    if (st->status != RUNNING) {   /* chunked replay after the stop */
        if (blockIdx.x == 0 && threadIdx.x == 0) loop_again(use_cond, h, st);
        return;
    }
    const solve_cg_scalars c = solve_cg_step_scalars(dots, st);
    const double alpha = c.alpha, beta = c.beta;
    const bool first = st->iter == 0;
    double rr[1] = {0};   /* STAGE: the updated r'r */
    if (c.status == RUNNING) GRID_LOOP(i, n) {
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
        solve_cg_finish(st, dots, &c, STAGE, rr[0]);
        loop_again(use_cond, h, st);
    }
}

} // namespace

template <typename T>
adia_status cg_start_kernels(solve_run<T> &R)
{
    cg_start<T><<<R.grid, NT, 0, R.w.stream>>>(R.r, R.u, R.d, R.n, R.w.st);
    return ADIA_OK;
}

template <typename T>
adia_status cg_step_kernels(solve_run<T> &R)
{
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

template adia_status cg_start_kernels<double>(solve_run<double> &);
template adia_status cg_start_kernels<float>(solve_run<float> &);
template adia_status cg_step_kernels<double>(solve_run<double> &);
template adia_status cg_step_kernels<float>(solve_run<float> &);
template kernel_list cg_kernels<double>();
template kernel_list cg_kernels<float>();

} // namespace adia__gpu_solve
