/* registry.cu -- device discovery.  The GPU operations tables
 * (adia__gpu_<name>, one per .cu file) are named by the format registry's
 * lines (src/formats/registry.c). */
#include "cuda_util.h"

extern "C" adia_status adia_gpu_init(void)
{
    int n = 0;
    ADIA_TRY(adia_gpu_device_count(&n));
    if (n == 0) return ADIA_OK;
    return adia_cuda_check(cudaFree(nullptr), "adia_gpu_init: the device's context");
}

extern "C" adia_status adia_gpu_device_count(int *count)
{
    if (!count) return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_device_count: count is NULL");
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        /* no driver / no device: not an error, the CPU path is used */
        cudaGetLastError();
        n = 0;
    }
    *count = n;
    return ADIA_OK;
}
