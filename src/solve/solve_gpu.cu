/* solve_gpu.cu -- CG and BiCGSTAB resident on the device.
 *
 * Every vector stays on the GPU; the operator is the plan's SpMV; the
 * scalars (alpha, beta, ...) live in device memory and are computed by the
 * last block of each reduction, so no iteration waits for the host.  The
 * iteration loop is one CUDA graph with a device-side WHILE node (see
 * capture()); the host waits once per solve.
 * Reductions are deterministic: fixed grid, block partials summed in block
 * order by the last block (no floating-point atomics).  Sums are in double
 * for both value types.  Success is judged on the true residual b - A x,
 * recomputed at the end with a scaled (overflow-free) norm. */
#include "solve_internal.h"
#include "../cuda/cuda_util.h"

#include <math.h>
#include <stdio.h>

#include <vector>

namespace {

constexpr int NT = 256;          /* threads per block of every kernel here */

enum status { RUNNING = 0, CONVERGED, LIMIT, BREAKDOWN, NONFINITE };

/* The solver's scalars, in device memory. */
struct state {
    double tol2;                 /* (rtol ||b||)^2                          */
    double rr;                   /* ||r||^2 of the recurrence               */
    double rz, alpha, beta;      /* CG                                      */
    double rho, omega, r0v;      /* BiCGSTAB                                */
    double why;                  /* the value that stopped it               */
    int iter, max_iter, status;
    unsigned count;              /* blocks done in the current reduction    */
    double norm_max, norm;       /* scaled norm: max |v|, then the norm     */
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

/* Sums (or maxima) of NV per-thread values over the whole grid.  Returns
 * true in one thread only -- thread 0 of the block that finished last --
 * with v holding the grid totals; partial holds gridDim.x * NV doubles. */
template <int NV, bool MAX = false>
__device__ bool grid_reduce(double (&v)[NV], double *partial, unsigned *count)
{
    __shared__ double sh[NT / 32][NV];
    __shared__ bool last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int j = 0; j < NV; j++) v[j] = MAX ? warp_max(v[j]) : warp_sum(v[j]);
    if (lane == 0)
        for (int j = 0; j < NV; j++) sh[warp][j] = v[j];
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int j = 0; j < NV; j++) {
            double s = sh[0][j];
            for (int w = 1; w < NT / 32; w++) s = MAX ? nan_max(s, sh[w][j]) : s + sh[w][j];
            partial[blockIdx.x * NV + j] = s;
        }
        __threadfence();
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
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
    *count = 0;
    return true;
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

/* ||v|| = max * sqrt(sum (v_i / max)^2): no overflow or underflow */
template <typename T>
__global__ void norm_sum_kernel(const T *v, int64_t n, double *partial, state *st)
{
    const double m = st->norm_max;
    if (!(m > 0) || !isfinite(m)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) st->norm = m;   /* 0, Inf or NaN */
        return;
    }
    const double inv = 1.0 / m;
    double s[1] = {0};
    GRID_LOOP(i, n) {
        double t = (double)v[i] * inv;
        s[0] += t * t;
    }
    if (grid_reduce<1>(s, partial, &st->count)) st->norm = m * sqrt(s[0]);
}

/* r = b - r (r holds A x on entry) */
template <typename T>
__global__ void residual_kernel(const T *b, T *r, int64_t n)
{
    GRID_LOOP(i, n) r[i] = b[i] - r[i];
}

/* ---------------------------------------------------------------- CG */

/* After r = b - A x: p = D r, rz = r'D r, rr = r'r. */
template <typename T>
__global__ void cg_start(const T *r, T *p, const T *d, int64_t n, double *partial, state *st)
{
    double v[2] = {0, 0};
    GRID_LOOP(i, n) {
        double ri = r[i], zi = d ? (double)d[i] * ri : ri;
        p[i] = (T)zi;
        v[0] += ri * zi;
        v[1] += ri * ri;
    }
    if (grid_reduce<2>(v, partial, &st->count)) {
        st->rz = v[0];
        st->iter = 0;
        st->status = RUNNING;
        check_stop(st, v[1]);
    }
}

/* alpha = rz / p'q; p'q <= 0 is a breakdown (A not SPD) */
template <typename T>
__global__ void cg_alpha(const T *p, const T *q, int64_t n, double *partial, state *st)
{
    if (st->status != RUNNING) return;
    double v[1] = {0};
    GRID_LOOP(i, n) v[0] += (double)p[i] * (double)q[i];
    if (grid_reduce<1>(v, partial, &st->count)) {
        if (!(v[0] > 0) || !isfinite(v[0])) {
            st->status = isfinite(v[0]) ? BREAKDOWN : NONFINITE;
            st->why = v[0];
        } else {
            st->alpha = st->rz / v[0];
        }
    }
}

/* x += alpha p, r -= alpha q; rz' = r'D r, rr = r'r; beta = rz' / rz */
template <typename T>
__global__ void cg_update(T *x, T *r, const T *p, const T *q, const T *d, int64_t n,
                          double *partial, state *st)
{
    if (st->status != RUNNING) return;
    const double alpha = st->alpha;
    double v[2] = {0, 0};
    GRID_LOOP(i, n) {
        x[i] = (T)(x[i] + alpha * (double)p[i]);
        T rt = (T)(r[i] - alpha * (double)q[i]);
        r[i] = rt;
        double ri = rt, zi = d ? (double)d[i] * ri : ri;
        v[0] += ri * zi;
        v[1] += ri * ri;
    }
    if (grid_reduce<2>(v, partial, &st->count)) {
        st->iter++;
        st->beta = v[0] / st->rz;
        st->rz = v[0];
        check_stop(st, v[1]);
        if (st->status == RUNNING && !(v[0] != 0)) {
            st->status = BREAKDOWN;
            st->why = v[0];
        }
    }
}

/* p = D r + beta p; the iteration's last kernel */
template <typename T>
__global__ void cg_direction(T *p, const T *r, const T *d, int64_t n, const state *st,
                             bool use_cond, cudaGraphConditionalHandle h)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) loop_again(use_cond, h, st);
    if (st->status != RUNNING) return;
    const double beta = st->beta;
    GRID_LOOP(i, n) {
        double zi = d ? (double)d[i] * (double)r[i] : (double)r[i];
        p[i] = (T)(zi + beta * (double)p[i]);
    }
}

/* ---------------------------------------------------------- BiCGSTAB */
/* Right-preconditioned (D = Jacobi or I):
 *   p = r + beta (p - omega v); ph = D p; v = A ph; alpha = rho / r0'v;
 *   s = r - alpha v; sh = D s; t = A sh; omega = t's / t't;
 *   x += alpha ph + omega sh; r = s - omega t; rho' = r0'r; beta = ... */

/* After r = b - A x: r0 = r, p = v = 0, rho = alpha = omega = 1. */
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
    if (grid_reduce<1>(s, partial, &st->count)) {
        st->rho = s[0];       /* r0'r with r0 = r */
        st->alpha = st->omega = 1;
        st->beta = 0;         /* first direction: p = r */
        st->iter = 0;
        st->status = RUNNING;
        check_stop(st, s[0]);
    }
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

/* alpha = rho / r0'v */
template <typename T>
__global__ void bicg_alpha(const T *r0, const T *v, int64_t n, double *partial, state *st)
{
    if (st->status != RUNNING) return;
    double s[1] = {0};
    GRID_LOOP(i, n) s[0] += (double)r0[i] * (double)v[i];
    if (grid_reduce<1>(s, partial, &st->count)) {
        if (s[0] == 0 || !isfinite(s[0])) {
            st->status = isfinite(s[0]) ? BREAKDOWN : NONFINITE;
            st->why = s[0];
        } else {
            st->alpha = st->rho / s[0];
        }
    }
}

/* s = r - alpha v (into r); sh = D s; ||s||^2: small enough means x +=
 * alpha ph finishes, which bicg_omega arranges with omega = 0. */
template <typename T>
__global__ void bicg_half(T *r, T *sh, const T *v, const T *d, int64_t n, double *partial,
                          state *st)
{
    if (st->status != RUNNING) return;
    const double alpha = st->alpha;
    double s[1] = {0};
    GRID_LOOP(i, n) {
        T si = (T)(r[i] - alpha * (double)v[i]);
        r[i] = si;
        if (d) sh[i] = (T)((double)d[i] * (double)si);
        s[0] += (double)si * (double)si;
    }
    if (grid_reduce<1>(s, partial, &st->count)) st->r0v = s[0];   /* ||s||^2, for bicg_omega */
}

/* omega = t's / t't (0 when s is already small enough) */
template <typename T>
__global__ void bicg_omega(const T *t, const T *s, int64_t n, double *partial, state *st)
{
    if (st->status != RUNNING) return;
    double v[2] = {0, 0};
    GRID_LOOP(i, n) {
        double ti = t[i];
        v[0] += ti * (double)s[i];
        v[1] += ti * ti;
    }
    if (grid_reduce<2>(v, partial, &st->count)) {
        bool done = st->r0v <= st->tol2;
        st->omega = done ? 0 : v[1] > 0 ? v[0] / v[1] : 0;
        if (!done && (st->omega == 0 || !isfinite(st->omega))) {
            st->status = isfinite(st->omega) ? BREAKDOWN : NONFINITE;
            st->why = st->omega;
        }
    }
}

/* x += alpha ph + omega sh; r = s - omega t; rho' = r0'r, rr = r'r; the
 * iteration's last kernel */
template <typename T>
__global__ void bicg_update(T *x, T *r, const T *ph, const T *sh, const T *t, const T *r0,
                           int64_t n, double *partial, state *st, bool use_cond,
                           cudaGraphConditionalHandle h)
{
    if (st->status != RUNNING) {
        if (blockIdx.x == 0 && threadIdx.x == 0) loop_again(use_cond, h, st);
        return;
    }
    const double alpha = st->alpha, omega = st->omega;
    double v[2] = {0, 0};
    GRID_LOOP(i, n) {
        x[i] = (T)(x[i] + alpha * (double)ph[i] + omega * (double)sh[i]);
        T ri = (T)(r[i] - omega * (double)t[i]);
        r[i] = ri;
        v[0] += (double)r0[i] * (double)ri;
        v[1] += (double)ri * (double)ri;
    }
    if (grid_reduce<2>(v, partial, &st->count)) {
        st->iter++;
        st->beta = (v[0] / st->rho) * (alpha / omega);
        st->rho = v[0];
        check_stop(st, omega == 0 ? st->r0v : v[1]);
        if (st->status == RUNNING && (v[0] == 0 || !isfinite(v[0]))) {
            st->status = isfinite(v[0]) ? BREAKDOWN : NONFINITE;
            st->why = v[0];
        }
        loop_again(use_cond, h, st);
    }
}

/* ------------------------------------------------------------ host side */

/* Device memory of one solve, freed by the destructor. */
struct workspace {
    void *vec = nullptr;         /* k vectors of n values                    */
    double *partial = nullptr;   /* grid x 2 block sums                      */
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
    T *x, *b, *r, *p, *q, *d, *r0, *ph, *sh, *t;
};

/* Vectors each method keeps beside x and b. */
static int vectors_needed(adia_solver m, bool jacobi)
{
    /* CG: r p q (+ d); BiCGSTAB: r r0 p v(=q) t (+ d ph sh) */
    return m == ADIA_SOLVE_CG ? 3 + jacobi : 5 + 3 * jacobi;
}

static adia_status check_device_memory(size_t bytes)
{
    size_t free_b = 0, total_b = 0;
    ADIA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (bytes <= free_b) return ADIA_OK;
    return adia_error(ADIA_ERR_NO_MEMORY, "GPU solver vectors need %.1f MB, the device has %.1f MB "
                      "free", bytes / 1e6, free_b / 1e6);
}

template <typename T>
adia_status setup(solve_run<T> &R)
{
    const adia_solve_gpu_args *a = R.a;
    const bool jac = a->inv_diag != nullptr;
    const int k = vectors_needed(a->method, jac);
    size_t bytes = (size_t)k * (size_t)R.n * sizeof(T);
    int sms = 0, dev = 0;
    ADIA_CUDA_TRY(cudaGetDevice(&dev));
    ADIA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int64_t blocks = (R.n + NT - 1) / NT;
    /* a full SM's worth of threads (8 x 256) everywhere: enough loads in
     * flight for the bandwidth of the vector passes */
    R.grid = (unsigned)(blocks < 8 * sms ? (blocks > 0 ? blocks : 1) : 8 * sms);
    ADIA_TRY(check_device_memory(bytes + R.grid * 2 * sizeof(double) + sizeof(state)));
    ADIA_CUDA_TRY(cudaMalloc(&R.w.vec, bytes ? bytes : 1));
    ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.partial, R.grid * 2 * sizeof(double)));
    ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.st, sizeof(state)));
    ADIA_CUDA_TRY(cudaMemset(R.w.st, 0, sizeof(state)));
    ADIA_CUDA_TRY(cudaMallocHost((void **)&R.w.host, sizeof(state)));
    ADIA_CUDA_TRY(cudaStreamCreateWithFlags(&R.w.stream, cudaStreamNonBlocking));
    T *v = (T *)R.w.vec;
    R.x = (T *)a->d_x;
    R.b = (T *)a->d_b;
    R.r = v;
    R.p = v + R.n;
    R.q = v + 2 * R.n;               /* BiCGSTAB: v */
    R.d = R.r0 = R.ph = R.sh = R.t = nullptr;
    int next = 3;
    if (a->method == ADIA_SOLVE_BICGSTAB) {
        R.r0 = v + next++ * R.n;
        R.t = v + next++ * R.n;
    }
    if (jac) {
        R.d = v + next++ * R.n;
        if (a->method == ADIA_SOLVE_BICGSTAB) {
            R.ph = v + next++ * R.n;
            R.sh = v + next++ * R.n;
        }
        std::vector<T> dh(R.n);
        for (int64_t i = 0; i < R.n; i++) dh[i] = (T)a->inv_diag[i];
        ADIA_CUDA_TRY(cudaMemcpy(R.d, dh.data(), R.n * sizeof(T), cudaMemcpyHostToDevice));
    } else if (a->method == ADIA_SOLVE_BICGSTAB) {
        R.ph = R.p;                  /* no preconditioner: ph = p, sh = s */
        R.sh = R.r;
    }
    return ADIA_OK;
}

template <typename T>
adia_status spmv(solve_run<T> &R, const T *x, T *y)
{
    R.spmvs++;
    return adia_spmv_async(R.a->plan, 1.0, x, 0.0, y, R.w.stream);
}

/* r = b - A x, then the method's start kernel (state reset, first test). */
template <typename T>
adia_status start(solve_run<T> &R, double tol2, int max_iter)
{
    state init = {};
    init.tol2 = tol2;
    init.max_iter = max_iter;
    ADIA_CUDA_TRY(cudaMemcpyAsync(R.w.st, &init, sizeof init, cudaMemcpyHostToDevice, R.w.stream));
    ADIA_TRY(spmv(R, R.x, R.r));
    cudaStream_t s = R.w.stream;
    residual_kernel<T><<<R.grid, NT, 0, s>>>(R.b, R.r, R.n);
    if (R.a->method == ADIA_SOLVE_CG)
        cg_start<T><<<R.grid, NT, 0, s>>>(R.r, R.p, R.d, R.n, R.w.partial, R.w.st);
    else
        bicg_start<T><<<R.grid, NT, 0, s>>>(R.r, R.r0, R.p, R.q, R.n, R.w.partial, R.w.st);
    return adia_cuda_check(cudaGetLastError(), "GPU solver start");
}

/* One iteration's kernels on the solver's stream (captured into the graph). */
template <typename T>
adia_status iteration(solve_run<T> &R)
{
    cudaStream_t s = R.w.stream;
    double *pa = R.w.partial;
    state *st = R.w.st;
    if (R.a->method == ADIA_SOLVE_CG) {
        ADIA_TRY(spmv(R, R.p, R.q));
        cg_alpha<T><<<R.grid, NT, 0, s>>>(R.p, R.q, R.n, pa, st);
        cg_update<T><<<R.grid, NT, 0, s>>>(R.x, R.r, R.p, R.q, R.d, R.n, pa, st);
        cg_direction<T><<<R.grid, NT, 0, s>>>(R.p, R.r, R.d, R.n, st, R.w.use_cond, R.w.cond);
    } else {
        bicg_direction<T><<<R.grid, NT, 0, s>>>(R.p, R.d ? R.ph : R.p, R.r, R.q, R.d, R.n, st);
        ADIA_TRY(spmv(R, R.ph, R.q));
        bicg_alpha<T><<<R.grid, NT, 0, s>>>(R.r0, R.q, R.n, pa, st);
        bicg_half<T><<<R.grid, NT, 0, s>>>(R.r, R.d ? R.sh : R.r, R.q, R.d, R.n, pa, st);
        ADIA_TRY(spmv(R, R.sh, R.t));
        bicg_omega<T><<<R.grid, NT, 0, s>>>(R.t, R.r, R.n, pa, st);
        bicg_update<T><<<R.grid, NT, 0, s>>>(R.x, R.r, R.ph, R.sh, R.t, R.r0, R.n, pa, st,
                                             R.w.use_cond, R.w.cond);
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
    if (s == ADIA_OK) s = adia_cuda_check(cudaGraphInstantiate(&R.w.exec, g, 0), "GPU solver graph");
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

template <typename T>
adia_status capture(solve_run<T> &R)
{
    if (capture_while(R) == ADIA_OK) return ADIA_OK;
    return capture_iterations(R, nullptr, chunk_size(R.n));
}

/* Run the graph until the device stops; *st is the final state. */
template <typename T>
adia_status iterate(solve_run<T> &R, state *st)
{
    for (;;) {
        ADIA_CUDA_TRY(cudaMemcpyAsync(R.w.host, R.w.st, sizeof(state), cudaMemcpyDeviceToHost,
                                      R.w.stream));
        ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
        *st = *R.w.host;
        if (st->status != RUNNING) return ADIA_OK;
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
    norm_sum_kernel<T><<<R.grid, NT, 0, s>>>(v, R.n, R.w.partial, R.w.st);
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
    ADIA_TRY(spmv(R, R.x, R.r));
    residual_kernel<T><<<R.grid, NT, 0, R.w.stream>>>(R.b, R.r, R.n);
    ADIA_CUDA_TRY(cudaGetLastError());
    return norm(R, R.r, out);
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
        snprintf(w, len, m == ADIA_SOLVE_CG ? "breakdown: p'Ap = %g (A is not symmetric positive "
                 "definite?)" : "breakdown: %g at iteration %d", st.why, st.iter);
    }
}

/* As the CPU solver: when the recurrence says converged but the true
 * residual does not, restart from the true residual (at most 3 times). */
enum { SOLVE_RESTARTS = 3 };

template <typename T>
adia_status solve(const adia_solve_gpu_args *a, adia_solve_info *info)
{
    solve_run<T> R;
    R.a = a;
    R.n = a->n;
    R.spmvs = R.graph_spmvs = 0;
    ADIA_TRY(setup(R));
    cudaStream_t user = (cudaStream_t)a->stream;
    ADIA_CUDA_TRY(cudaStreamSynchronize(user));   /* b and x are ready */
    double t0 = adia_now_ms(), bnorm = 0;
    ADIA_TRY(norm(R, R.b, &bnorm));
    if (!isfinite(bnorm))
        return adia_error(ADIA_ERR_INVALID_ARG, "adia_solve: b holds a non-finite value");
    if (bnorm == 0) {   /* the solution is 0 */
        ADIA_CUDA_TRY(cudaMemsetAsync(R.x, 0, R.n * sizeof(T), R.w.stream));
        ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
        info->converged = 1;
        snprintf(info->stop, sizeof info->stop, "b = 0: x = 0");
        return ADIA_OK;
    }
    const double tol = a->rtol * bnorm;
    ADIA_TRY(capture(R));
    state st = {};
    int done = 0;
    double rnorm = NAN;
    for (int restart = 0; restart <= SOLVE_RESTARTS; restart++) {
        ADIA_TRY(start(R, tol * tol, a->max_iter - done));
        ADIA_TRY(iterate(R, &st));
        done += st.iter;
        if (R.w.use_cond) R.spmvs += st.iter * R.graph_spmvs;
        ADIA_TRY(true_residual(R, &rnorm));
        bool said = st.status == CONVERGED;
        info->converged = isfinite(rnorm) && rnorm <= tol;
        if (info->converged || !said || done >= a->max_iter) break;
    }
    info->time_ms = adia_now_ms() - t0;
    info->iterations = done;
    info->spmvs = R.spmvs;
    info->residual = rnorm / bnorm;
    stop_reason(st, a->method, info);
    if (st.status == CONVERGED && !info->converged)
        snprintf(info->stop, sizeof info->stop, isfinite(rnorm) ? "the recurrence converged, the "
                 "true residual did not (%.3g): lost accuracy" : "the true residual is not "
                 "finite (%g)", info->residual);
    ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
    return ADIA_OK;
}

} // namespace

extern "C" adia_status adia_solve_gpu(const adia_solve_gpu_args *a, adia_solve_info *info)
{
    info->spmv_ms = NAN;   /* not separable from the fused iteration */
    return a->vt == ADIA_FLOAT ? solve<float>(a, info) : solve<double>(a, info);
}

extern "C" adia_status adia_solve_gpu_host(const adia_solve_gpu_args *a, const double *b,
                                           double *x, adia_solve_info *info)
{
    size_t vs = adia_value_size(a->vt), bytes = (size_t)a->n * vs;
    void *d = nullptr;
    ADIA_CUDA_TRY(cudaMalloc(&d, 2 * bytes + 1));
    std::vector<char> h(2 * bytes);
    for (int64_t i = 0; i < a->n; i++) {
        if (a->vt == ADIA_FLOAT) {
            ((float *)h.data())[i] = (float)b[i];
            ((float *)h.data())[a->n + i] = (float)x[i];
        } else {
            ((double *)h.data())[i] = b[i];
            ((double *)h.data())[a->n + i] = x[i];
        }
    }
    adia_solve_gpu_args g = *a;
    g.d_b = d;
    g.d_x = (char *)d + bytes;
    g.stream = nullptr;
    adia_status s = adia_cuda_check(cudaMemcpy(d, h.data(), 2 * bytes, cudaMemcpyHostToDevice),
                                    "GPU solver upload");
    if (s == ADIA_OK) s = adia_solve_gpu(&g, info);
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(h.data(), g.d_x, bytes, cudaMemcpyDeviceToHost),
                            "GPU solver download");
    if (s == ADIA_OK)
        for (int64_t i = 0; i < a->n; i++)
            x[i] = a->vt == ADIA_FLOAT ? ((float *)h.data())[i] : ((double *)h.data())[i];
    cudaFree(d);
    return s;
}
