/* cheb_gpu.cu -- adia__precond_spd_bounds_gpu: cheb's interval of a GPU
 * plan found on the device (issue 30), where the host's twin (cheb.c,
 * adia__precond_spd_bounds) first downloaded the whole plan as CSR: 1.06 s
 * / 4.10 s of set-up at lap3d7:160 / 256 on an H200, 25-65 ms even at 500
 * rows.  The diagonal storage is read in place (mg_dview); the power steps
 * are the plan's own products, each step's sums per block in a fixed
 * order, added on the host in block order: the same numbers every run.
 * Only the block sums and two words cross to the host. */
#include "mg.h"
#include "../cuda/gpu_common.h"
#include "../formats/diag_core.h"

#include <math.h>
#include <string.h>

namespace {

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 1024;

unsigned blocks_for(int64_t n)
{
    const int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

/* d[r] = A(r,r) (as a double); w[0]: the first row whose A(r,r) is not > 0
 * and finite or whose sum_j |a_rj| is not finite (atomicMin), w[1]: the
 * bits of max_r sum_j |a_rj| / a_rr (atomicMax: positive doubles order as
 * their bits).  Row r's sum in ascending column order, as the host's. */
template <typename T>
__global__ void gershgorin_kernel(adia_diag_args a, double *d, unsigned long long *w)
{
    unsigned long long bad = ~0ull;
    double g = 0;
    const T *data = (const T *)a.data;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < a.rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        const adia_diag_loc l = adia_diag_locate(a, (int)r);
        const int k0 = a.group_start[l.group], k1 = a.group_start[l.group + 1];
        double dr = 0, sum = 0;
        for (int k = k0; k < k1; k++) {
            const int64_t c = r + a.offsets[k];
            if (c < 0 || c >= a.cols) continue;   /* DIA's slots outside: stored 0 */
            const double x = (double)data[l.base + (int64_t)(k - k0) * l.len];
            if (c == r) dr = x;
            sum += fabs(x);
        }
        d[r] = dr;
        if (!(dr > 0) || !isfinite(dr) || !isfinite(sum)) bad = bad < (unsigned long long)r ? bad : r;
        else g = fmax(g, sum / dr);
    }
    for (int o = 16; o; o >>= 1) {
        const unsigned long long b = __shfl_xor_sync(0xffffffffu, bad, o);
        bad = b < bad ? b : bad;
        g = fmax(g, __shfl_xor_sync(0xffffffffu, g, o));
    }
    if (threadIdx.x % 32 == 0) {
        if (bad != ~0ull) atomicMin(&w[0], bad);
        atomicMax(&w[1], (unsigned long long)__double_as_longlong(g));
    }
}

/* v = the host's start (mg_start_value), s = 1 / d in T. */
template <typename T>
__global__ void start_kernel(int64_t n, const double *d, T *v, T *s)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        v[i] = (T)mg_start_value(i);
        s[i] = (T)(1 / d[i]);
    }
}

/* One step's sums v'w, v'Dv and w'w after w /= d (the host's order within
 * a row), one triple per block into part (a fixed tree: deterministic). */
template <typename T>
__global__ void sums_kernel(int64_t n, const T *v, T *w, const double *d, double *part)
{
    __shared__ double sh[3][THREADS];
    double s0 = 0, s1 = 0, s2 = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double vi = (double)v[i], wi = (double)w[i];
        s0 += vi * wi;
        s1 += vi * d[i] * vi;
        const T q = (T)(wi / d[i]);
        w[i] = q;
        s2 += (double)q * (double)q;
    }
    sh[0][threadIdx.x] = s0, sh[1][threadIdx.x] = s1, sh[2][threadIdx.x] = s2;
    __syncthreads();
    for (int h = THREADS / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            for (int j = 0; j < 3; j++) sh[j][threadIdx.x] += sh[j][threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x < 3) part[3 * blockIdx.x + threadIdx.x] = sh[threadIdx.x][0];
}

template <typename T>
__global__ void rescale_kernel(int64_t n, const T *w, double scale, T *v)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        v[i] = (T)((double)w[i] * scale);
}

adia_status launched(const char *what) { return adia_cuda_check(cudaGetLastError(), what); }

/* The first bad row's message, as the host's (cheb.c). */
adia_status bad_row(const char *kind, const double *d, unsigned long long r)
{
    double dr = 0;
    ADIA_CUDA_TRY(cudaMemcpy(&dr, d + r, sizeof dr, cudaMemcpyDeviceToHost));
    if (!(dr > 0) || !isfinite(dr))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s preconditioner: needs A(%llu,%llu) > 0 "
                          "and finite (A symmetric positive definite), it is %g", kind, r, r, dr);
    return adia__error(ADIA_ERR_INVALID_ARG, "%s preconditioner: row %llu of A has a non-finite "
                      "entry", kind, r);
}

struct work {
    double *d = nullptr, *part = nullptr;
    void *v = nullptr, *w = nullptr;
    ~work() { cudaFree(d); }   /* one block: d, part, v, w */
};

template <typename T>
adia_status bounds(const char *kind, adia_plan *plan, const mg_dview &view, int steps, double *est,
                   double *gershgorin, void *s)
{
    const int64_t n = view.rows;
    const unsigned blocks = blocks_for(n);
    const size_t vb = ((size_t)n * sizeof(T) + 15) / 16 * 16;
    work k;
    ADIA_CUDA_TRY(cudaMalloc((void **)&k.d, 8 * ((size_t)n + 3 * MAX_BLOCKS) + 2 * vb));
    k.part = k.d + n;
    k.v = (char *)(k.part + 3 * MAX_BLOCKS);
    k.w = (char *)k.v + vb;
    unsigned long long *w = view.words, h[2] = {0, 0};
    ADIA_CUDA_TRY(cudaMemset(w, 0xff, sizeof *w));
    ADIA_CUDA_TRY(cudaMemset(w + 1, 0, sizeof *w));
    gershgorin_kernel<T><<<blocks, THREADS>>>(*(const adia_diag_args *)view.dev, k.d, w);
    ADIA_TRY(launched("cheb bounds: Gershgorin"));
    ADIA_CUDA_TRY(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost));
    if (h[0] != ~0ull) return bad_row(kind, k.d, h[0]);
    double g;
    memcpy(&g, &h[1], sizeof g);
    *gershgorin = g;
    start_kernel<T><<<blocks, THREADS>>>(n, k.d, (T *)k.v, (T *)s);
    ADIA_TRY(launched("cheb bounds: start"));
    double q = NAN, part[3 * MAX_BLOCKS];
    for (int step = 0; step < steps; step++) {
        ADIA_TRY(adia_spmv_async(plan, 1.0, k.v, 0.0, k.w, NULL));
        sums_kernel<T><<<blocks, THREADS>>>(n, (const T *)k.v, (T *)k.w, k.d, k.part);
        ADIA_TRY(launched("cheb bounds: sums"));
        ADIA_CUDA_TRY(cudaMemcpy(part, k.part, 3 * blocks * sizeof *part, cudaMemcpyDeviceToHost));
        double sum[3] = {0, 0, 0};
        for (unsigned b = 0; b < blocks; b++)
            for (int j = 0; j < 3; j++) sum[j] += part[3 * b + j];
        q = sum[0] / sum[1];
        if (!(sum[2] > 0) || !isfinite(sum[2])) break;
        if (step + 1 < steps) {
            rescale_kernel<T><<<blocks, THREADS>>>(n, (const T *)k.w, 1 / sqrt(sum[2]), (T *)k.v);
            ADIA_TRY(launched("cheb bounds: rescale"));
        }
    }
    *est = q;
    return ADIA_OK;
}

}  // namespace

extern "C" adia_status adia__precond_spd_bounds_gpu(const char *kind, adia_plan *plan, int steps,
                                                    double *est, double *gershgorin,
                                                    void **inv_diag, int *done)
{
    *inv_diag = NULL;
    *done = 0;
    mg_dview view;
    char why[160];
    adia_status s = adia__mg_gpu_view(plan, &view, why, sizeof why);
    if (s == ADIA_ERR_UNSUPPORTED) return ADIA_OK;   /* the host's path */
    if (s == ADIA_OK && view.rows != view.cols) s = ADIA_ERR_UNSUPPORTED;
    const size_t vs = adia_value_size(view.vt);
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMalloc(inv_diag, (size_t)(view.rows > 0 ? view.rows : 1) * vs),
                            "cheb bounds: 1 / A(i,i)");
    if (s == ADIA_OK)
        s = view.vt == ADIA_FLOAT
                ? bounds<float>(kind, plan, view, steps, est, gershgorin, *inv_diag)
                : bounds<double>(kind, plan, view, steps, est, gershgorin, *inv_diag);
    adia__mg_gpu_view_free(&view);
    if (s == ADIA_ERR_UNSUPPORTED) s = ADIA_OK;   /* rectangular: the host's path (refused there) */
    else if (s == ADIA_OK) *done = 1;
    if (!*done) {
        cudaFree(*inv_diag);
        *inv_diag = NULL;
    }
    return s;
}
