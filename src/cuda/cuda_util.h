/* cuda_util.h -- mapping CUDA runtime errors to adia_status with the
 * vendor's text kept in the message. */
#ifndef ADIA_CUDA_UTIL_H
#define ADIA_CUDA_UTIL_H

#include "internal.h"

#include <cuda_runtime.h>

static inline adia_status adia_cuda_check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return ADIA_OK;
    /* The runtime also keeps e as the thread's "last error": a later launch
     * check (cudaGetLastError) would report this failure again, long after
     * it was handled (a plan made after a failed cudaMalloc).  Clear it;
     * sticky errors (a corrupted context) stay and are reported anyway. */
    cudaGetLastError();
    if (e == cudaErrorMemoryAllocation)
        return adia__error(ADIA_ERR_NO_MEMORY, "%s: device out of memory (%s)", what,
                          cudaGetErrorString(e));
    return adia__error(ADIA_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e),
                      cudaGetErrorName(e));
}
#define ADIA_CUDA_TRY(call) ADIA_TRY(adia_cuda_check((call), #call))

#endif
