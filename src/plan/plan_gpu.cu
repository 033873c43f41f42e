/* plan_gpu.cu -- the planner's device measurements: streaming-read
 * bandwidth (kept once measured, for the cost model) and the time of an
 * uploaded format's SpMV (for the MEASURE chooser). */
#include "plan_internal.h"
#include "../cuda/cuda_util.h"

#include <mutex>

/* The first successful probe is kept for the process; a failed one (the
 * device short of memory for its 256 MiB buffer at that moment) is not, so
 * a transient shortage does not poison every later plan. */
extern "C" adia_status adia__plan_gpu_bandwidth(double *gbs)
{
    static std::mutex lock;
    static double cached = 0;
    std::lock_guard<std::mutex> hold(lock);
    if (cached <= 0) {
        /* the GPU module's streaming-read probe, 256 MiB (well past L2), 5 runs */
        adia_status s = adia_gpu_read_bandwidth((size_t)256 << 20, 5, &cached);
        if (s != ADIA_OK) {
            cached = 0;
            return adia__error(s, "GPU bandwidth probe: %s", adia_last_error());
        }
    }
    *gbs = cached;
    return ADIA_OK;
}

/* Median per-call time (the GPU module's batched timing) with the
 * caller's x: real values, not zeros, which can run faster than real data. */
extern "C" adia_status adia__plan_gpu_time(adia_format *F, int runs, const void *x, double *ms)
{
    adia_gpu_timing t;
    ADIA_TRY(adia_gpu_time_spmv_x(F, runs, x, NULL, &t));
    *ms = t.median_ms;
    return ADIA_OK;
}

namespace {

template <typename T>
__global__ void fill_x(T *x, int32_t n)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n;
         j += (int64_t)gridDim.x * blockDim.x)
        x[j] = (T)(1.0 / (1 + j % 7));   /* real values: zeros can run faster */
}

struct spmv_ctx {
    adia_format *F;
    const void *x;
    void *y;
};

adia_status spmv_call(void *ctx, int i, void *stream)
{
    (void)i;
    const spmv_ctx *c = (const spmv_ctx *)ctx;
    return adia_format_spmv_gpu(c->F, 1.0, c->x, 0.0, c->y, stream);
}

} // namespace

/* x made on the device (no host vector, no upload: a kernel's choice costs
 * the products it times, not a copy of x per kernel). */
extern "C" adia_status adia__plan_gpu_time_kernels(adia_format *F, const adia_gpu_kernel *k, int n,
                                                   int runs, double *ms)
{
    ADIA_TRY(adia_format_upload(F));
    const int32_t rows = adia_format_rows(F), cols = adia_format_cols(F);
    const adia_value_type vt = adia_format_value_type(F);
    const size_t vs = adia_value_size(vt);
    void *x = nullptr, *y = nullptr;
    adia_status s = adia_cuda_check(cudaMalloc(&x, ((size_t)cols + 1) * vs), "kernel timing: x");
    if (s == ADIA_OK) s = adia_cuda_check(cudaMalloc(&y, ((size_t)rows + 1) * vs), "kernel timing: y");
    if (s == ADIA_OK && cols > 0) {
        const unsigned blocks = (unsigned)((cols + 255) / 256 < 4096 ? (cols + 255) / 256 : 4096);
        if (vt == ADIA_DOUBLE) fill_x<double><<<blocks, 256>>>((double *)x, cols);
        else fill_x<float><<<blocks, 256>>>((float *)x, cols);
        s = adia_cuda_check(cudaGetLastError(), "kernel timing: x");
    }
    spmv_ctx c = {F, x, y};
    for (int i = 0; i < n && s == ADIA_OK; i++) {
        adia_gpu_timing t;
        s = adia_format_set_kernel(F, k[i]);
        if (s == ADIA_OK) s = adia_gpu_time_call(spmv_call, &c, runs, &t);
        if (s == ADIA_OK) ms[i] = t.median_ms;
    }
    cudaFree(x);
    cudaFree(y);
    return s;
}
