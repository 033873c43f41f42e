/* gmres_gpu.cu -- GMRES(m)'s kernels on the device: the GPU's half of
 * solve_kernels' gm_* entries (method.h has the algorithm and its
 * scalars, gmres.c the stages of a cycle and a step).
 *
 * Arnoldi by classical Gram-Schmidt with a second pass only when the first
 * lost more than half of w's length (||w|| < 0.7 ||w_before||: Daniel,
 * Gragg, Kaufman, Stewart): a pass is one kernel for every V_k'w and w'w
 * (gm_dots) and one for w -= sum_k c_k V_k (gm_orth), where modified
 * Gram-Schmidt would launch j + 1 of each.  The rotations run on the
 * device on one thread.  The product's fixed input is z = D V_j (in p)
 * and its output w (in r). */
#include "solve_gpu.cuh"

namespace adia__gpu_solve {
namespace {

/* An Arnoldi step runs while the solve runs and the cycle has room; the
 * second Gram-Schmidt pass only when the first asked for it. */
__device__ inline bool gm_active(const state *st, int pass)
{
    return st->status == RUNNING && st->j < st->m && (pass == 0 || st->reorth);
}

/* r = b - A x is in w: beta = ||w||, g = beta e_1, j = 0 */
struct gm_cycle_finish {
    gm_small sm;
    __device__ void operator()(state *st, const double *v) const
    {
        solve_gm_cycle_finish(st, &sm, v[0]);
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
    s = adia__reduce::block_sum(s);
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
    s = adia__reduce::block_sum(s);
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

/* One thread: the rotation (solve_gm_givens).  The WHILE loop goes on
 * while running and j < m. */
__global__ void gm_givens(state *st, gm_small sm, bool use_cond, cudaGraphConditionalHandle h)
{
    solve_gm_givens(st, &sm);
    if (use_cond) cudaGraphSetConditional(h, st->status == RUNNING && st->j < st->m);
}

/* One thread: y = H(0:k,0:k) \ g(0:k), k = steps of this cycle */
__global__ void gm_solve_y(const state *st, gm_small sm)
{
    solve_gm_solve_y(st, &sm);
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

} // namespace

template <typename T>
adia_status gm_cycle_start_kernels(solve_run<T> &R)
{
    gm_cycle_start<T><<<R.grid, NT, 0, R.w.stream>>>(R.r, R.n, R.w.partial, R.w.st, R.sm);
    return finish(R, 1, gm_cycle_finish{R.sm});
}

template <typename T>
adia_status gm_next_basis_kernels(solve_run<T> &R)
{
    gm_next_basis<T><<<R.grid, NT, 0, R.w.stream>>>(R.r, R.V, R.p, R.d, R.n, R.w.st);
    return ADIA_OK;
}

/* w against V_0..V_j: two passes of classical Gram-Schmidt, the second
 * skipped on the device unless the first asked for it. */
template <typename T>
adia_status gm_orthogonalize_kernels(solve_run<T> &R)
{
    cudaStream_t s = R.w.stream;
    state *st = R.w.st;
    double *pa = R.w.partial;
    const unsigned m2 = (unsigned)R.m + 2;
    const size_t coef = ((size_t)R.m + 1) * sizeof(double);
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
    return ADIA_OK;
}

template <typename T>
adia_status gm_givens_kernels(solve_run<T> &R)
{
    gm_givens<<<1, 1, 0, R.w.stream>>>(R.w.st, R.sm, R.w.use_cond, R.w.cond);
    return ADIA_OK;
}

template <typename T>
adia_status gm_keep_z_kernels(solve_run<T> &R)
{
    gm_keep_z<T><<<R.grid, NT, 0, R.w.stream>>>(R.q, R.Z, R.n, R.w.st);
    return ADIA_OK;
}

/* y, then x += D V y (flexible: Z y) */
template <typename T>
adia_status gm_update_x_kernels(solve_run<T> &R)
{
    gm_solve_y<<<1, 1, 0, R.w.stream>>>(R.w.st, R.sm);
    gm_update_x<T><<<R.grid, NT, R.m * sizeof(double), R.w.stream>>>(
        R.x, R.flex ? R.Z : R.V, R.d, R.n, R.w.st, R.sm);
    return ADIA_OK;
}

/* y, then p = V y */
template <typename T>
adia_status gm_combine_kernels(solve_run<T> &R)
{
    gm_solve_y<<<1, 1, 0, R.w.stream>>>(R.w.st, R.sm);
    ADIA_CUDA_TRY(cudaMemsetAsync(R.p, 0, R.n * sizeof(T), R.w.stream));
    gm_update_x<T><<<R.grid, NT, R.m * sizeof(double), R.w.stream>>>(R.p, R.V, nullptr, R.n,
                                                                      R.w.st, R.sm);
    return ADIA_OK;
}

template <typename T>
adia_status add_q_kernels(solve_run<T> &R)
{
    add_kernel<T><<<R.grid, NT, 0, R.w.stream>>>(R.x, R.q, R.n);
    return ADIA_OK;
}

template <typename T>
kernel_list gm_kernels()
{
    return {{(const void *)gm_orth<T>, (const void *)gm_next_basis<T>,
             (const void *)gm_cycle_start<T>, (const void *)gm_update_x<T>}, 4};
}

#define INSTANTIATE(T)                                                 \
    template adia_status gm_cycle_start_kernels<T>(solve_run<T> &);   \
    template adia_status gm_next_basis_kernels<T>(solve_run<T> &);    \
    template adia_status gm_orthogonalize_kernels<T>(solve_run<T> &); \
    template adia_status gm_givens_kernels<T>(solve_run<T> &);        \
    template adia_status gm_keep_z_kernels<T>(solve_run<T> &);        \
    template adia_status gm_update_x_kernels<T>(solve_run<T> &);      \
    template adia_status gm_combine_kernels<T>(solve_run<T> &);       \
    template adia_status add_q_kernels<T>(solve_run<T> &);            \
    template kernel_list gm_kernels<T>();
INSTANTIATE(double)
INSTANTIATE(float)

} // namespace adia__gpu_solve
