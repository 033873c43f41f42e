/* gpu_common.h -- what the GPU format modules (src/cuda, .cu files) share:
 * device copies and launch checking. */
#ifndef ADIA_GPU_COMMON_H
#define ADIA_GPU_COMMON_H

#include "cuda_util.h"
#include "gpu_head.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy n elements of size sz from host to a new device array (*d); n == 0
 * leaves *d NULL.  Overflow-checked. */
adia_status adia_gpu_copy_in(void **d, const void *h, int64_t n, size_t sz,
                             const char *what);
/* cudaGetLastError after a launch, as an adia_status naming the kernel. */
adia_status adia_gpu_launch_check(const char *kernel);
/* Blocks of `block` threads covering n items (n > 0). */
static inline unsigned adia_gpu_blocks(int64_t n, int block)
{
    return (unsigned)((n + block - 1) / block);
}

#ifdef __cplusplus
}
#endif

#define ADIA_GPU_LAUNCH_TRY(name) ADIA_TRY(adia_gpu_launch_check(name))

#endif
