/* bicgstab_gpu.cu -- BiCGSTAB's kernels on the device: the GPU's half of
 * solve_kernels' bicg_start, bicg_direction, bicg_half and bicg_update
 * (method.h has the algorithm and its scalars, bicgstab.c the stages of
 * an iteration).  A preconditioner without a diagonal is a stage: the
 * direction and half kernels then take d NULL and leave ph, sh to it. */
#include "solve_gpu.cuh"

namespace adia__gpu_solve {
namespace {

/* After r = b - A x: r0 = r, p = v = 0, the state from r0'r. */
struct bicg_start_finish {
    __device__ void operator()(state *st, const double *v) const
    {
        solve_bicg_start_finish(st, v[0]);
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

/* s = r - alpha v (into r); sh = D s.  No reduction of its own: ||s||^2
 * comes out of the next product's sums (its companion is s), which
 * bicg_update reads. */
template <typename T>
__global__ void bicg_half(T *r, T *sh, const T *v, const T *d, int64_t n, double *dots,
                          state *st)
{
    if (st->status != RUNNING) return;
    double alpha;
    const bool ok = solve_bicg_alpha(st, dots, &alpha);
    if (ok) GRID_LOOP(i, n) {
        T si = (T)(r[i] - alpha * (double)v[i]);
        r[i] = si;
        if (d) sh[i] = (T)((double)d[i] * (double)si);
    }
    if (adia__reduce::grid_last(&st->count)) solve_bicg_half_finish(st, dots, alpha, ok);
}

struct bicg_update_finish {
    double *dots;
    bool use_cond;
    cudaGraphConditionalHandle h;
    __device__ void operator()(state *st, const double *v) const
    {
        solve_bicg_update_finish(st, dots, v);
        loop_again(use_cond, h, st);
    }
};

/* x += alpha ph + omega sh; r = s - omega t; r0'r, r'r: the iteration's
 * last kernel */
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
    const bool ok = solve_bicg_omega(st, dots, &omega);
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

template <typename T>
adia_status bicg_start_kernels(solve_run<T> &R)
{
    bicg_start<T><<<R.grid, NT, 0, R.w.stream>>>(R.r, R.r0, R.p, R.q, R.n, R.w.partial, R.w.st);
    return finish(R, 1, bicg_start_finish());
}

template <typename T>
adia_status bicg_direction_kernels(solve_run<T> &R)
{
    bicg_direction<T><<<R.grid, NT, 0, R.w.stream>>>(R.p, R.d ? R.ph : R.p, R.r, R.q, R.d, R.n,
                                                     R.w.st);
    return ADIA_OK;
}

template <typename T>
adia_status bicg_half_kernels(solve_run<T> &R)
{
    bicg_half<T><<<R.grid, NT, 0, R.w.stream>>>(R.r, R.d ? R.sh : R.r, R.q, R.d, R.n,
                                                R.w.dots.out, R.w.st);
    return ADIA_OK;
}

template <typename T>
adia_status bicg_update_kernels(solve_run<T> &R)
{
    bicg_update_finish f{R.w.dots.out, R.w.use_cond, R.w.cond};
    bicg_update<T><<<R.grid, NT, 0, R.w.stream>>>(R.x, R.r, R.ph, R.sh, R.t, R.r0, R.n,
                                                  R.w.dots.out, R.w.partial, R.w.st,
                                                  R.w.use_cond, R.w.cond);
    return finish(R, 2, f);
}

template <typename T>
kernel_list bicg_kernels()
{
    return {{(const void *)bicg_update<T>, (const void *)bicg_half<T>,
             (const void *)bicg_direction<T>, (const void *)bicg_start<T>}, 4};
}

#define INSTANTIATE(T)                                               \
    template adia_status bicg_start_kernels<T>(solve_run<T> &);     \
    template adia_status bicg_direction_kernels<T>(solve_run<T> &); \
    template adia_status bicg_half_kernels<T>(solve_run<T> &);      \
    template adia_status bicg_update_kernels<T>(solve_run<T> &);    \
    template kernel_list bicg_kernels<T>();
INSTANTIATE(double)
INSTANTIATE(float)

} // namespace adia__gpu_solve
