/* gpu_none.c -- the GPU entry points of a build without CUDA: no devices,
 * no GPU format slots.  Replaced by src/cuda when nvcc is available. */
#include "internal.h"

adia_status adia_gpu_device_count(int *count)
{
    if (!count) return adia_error(ADIA_ERR_INVALID_ARG, "adia_gpu_device_count: count is NULL");
    *count = 0;
    return ADIA_OK;
}

const adia_gpu_ops *adia_gpu_ops_find(const char *name)
{
    (void)name;
    return NULL;
}
