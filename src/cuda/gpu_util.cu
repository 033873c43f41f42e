/* gpu_util.cu -- device copies and launch checks shared by the GPU format
 * modules. */
#include "gpu_common.h"

extern "C" adia_status adia_gpu_copy_in(void **d, const void *h, int64_t n, size_t sz,
                                        const char *what)
{
    *d = NULL;
    if (n <= 0) return ADIA_OK;
    size_t bytes;
    if (!adia_mul_size((size_t)n, sz, &bytes))
        return adia_error(ADIA_ERR_OVERFLOW, "device copy of %s: %lld elements overflow",
                          what, (long long)n);
    cudaError_t e = cudaMalloc(d, bytes);
    if (e != cudaSuccess) {
        *d = NULL;
        return adia_cuda_check(e, what);
    }
    e = cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(*d);
        *d = NULL;
        return adia_cuda_check(e, what);
    }
    return ADIA_OK;
}

extern "C" adia_status adia_gpu_launch_check(const char *kernel)
{
    return adia_cuda_check(cudaGetLastError(), kernel);
}
