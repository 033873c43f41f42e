/* registry.cu -- the GPU operations tables of the formats that have a GPU
 * side, and device discovery.  Adding a GPU kernel family: one .cu file
 * exporting adia_gpu_<name> plus one line here. */
#include "cuda_util.h"

#define GPU_FORMATS(X) X(csr) X(dia) X(hdi) X(brcsd1) X(brcsd2) X(crsd) X(coo) X(ell) X(sell) X(hyb) X(bcsr)

#define DECLARE(name) extern "C" const adia_gpu_ops adia_gpu_##name;
GPU_FORMATS(DECLARE)
#define ENTRY(name) &adia_gpu_##name,
static const adia_gpu_ops *const gpu_registry[] = {GPU_FORMATS(ENTRY) NULL};

extern "C" const adia_gpu_ops *adia_gpu_ops_find(const char *name)
{
    for (int i = 0; name && gpu_registry[i]; i++)
        if (!strcmp(gpu_registry[i]->name, name)) return gpu_registry[i];
    return NULL;
}

extern "C" adia_status adia_gpu_device_count(int *count)
{
    if (!count) return adia_error(ADIA_ERR_INVALID_ARG, "adia_gpu_device_count: count is NULL");
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
