/* plan_gpu.cu -- the planner's device measurements: streaming-read
 * bandwidth (once per process, for the cost model) and the time of an
 * uploaded format's SpMV (CUDA events, for the MEASURE chooser). */
#include "plan_internal.h"
#include "../cuda/cuda_util.h"

#include <stdio.h>

struct probe_result {
    adia_status status;
    double gbs;
    char message[256];
};

static probe_result run_probe()
{
    probe_result r = {ADIA_OK, 0, ""};
    /* the GPU module's streaming-read probe, 256 MiB (well past L2), 5 runs */
    r.status = adia_gpu_read_bandwidth((size_t)256 << 20, 5, &r.gbs);
    if (r.status != ADIA_OK) snprintf(r.message, sizeof r.message, "%s", adia_last_error());
    return r;
}

extern "C" adia_status adia_plan_gpu_bandwidth(double *gbs)
{
    static const probe_result once = run_probe();   /* C++11: initialised once, thread-safe */
    *gbs = once.gbs;
    if (once.status == ADIA_OK) return ADIA_OK;
    return adia_error(once.status, "GPU bandwidth probe: %s", once.message);
}

/* Median of `runs` timed SpMVs (one warm-up) with x copied from the host:
 * real values, not zeros, which can run faster than real data. */
extern "C" adia_status adia_plan_gpu_time(adia_format *F, int runs, const void *x, double *ms)
{
    size_t vs = adia_value_size(adia_format_value_type(F));
    void *dx = NULL, *dy = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float t[16];
    if (runs > 16) runs = 16;
    adia_status s = adia_cuda_check(cudaMalloc(&dx, ((size_t)adia_format_cols(F) + 1) * vs), "plan timing x");
    if (s == ADIA_OK) s = adia_cuda_check(cudaMalloc(&dy, ((size_t)adia_format_rows(F) + 1) * vs), "plan timing y");
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(dx, x, (size_t)adia_format_cols(F) * vs, cudaMemcpyHostToDevice),
                            "plan timing x");
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventCreate(&e0), "cudaEventCreate");
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventCreate(&e1), "cudaEventCreate");
    if (s == ADIA_OK) s = adia_format_spmv_gpu(F, 1.0, dx, 0.0, dy, NULL);
    for (int k = 0; s == ADIA_OK && k < runs; k++) {
        cudaEventRecord(e0, 0);
        s = adia_format_spmv_gpu(F, 1.0, dx, 0.0, dy, NULL);
        cudaEventRecord(e1, 0);
        if (s == ADIA_OK) s = adia_cuda_check(cudaEventSynchronize(e1), "plan timing SpMV");
        if (s == ADIA_OK) s = adia_cuda_check(cudaEventElapsedTime(&t[k], e0, e1), "cudaEventElapsedTime");
    }
    if (s == ADIA_OK) {   /* insertion sort: runs <= 16 */
        for (int i = 1; i < runs; i++)
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
                float u = t[j]; t[j] = t[j - 1]; t[j - 1] = u;
            }
        *ms = t[runs / 2];
    }
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(dx);
    cudaFree(dy);
    return s;
}
