/* gpu_common.h -- what the GPU format modules (src/cuda, .cu files) share:
 * device copies and launch checking. */
#ifndef ADIA_GPU_COMMON_H
#define ADIA_GPU_COMMON_H

#include "cuda_util.h"
#include "diag_kernel.cuh"
#include "gpu_head.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy n elements of size sz from host to a new device array (*d); n == 0
 * leaves *d NULL.  Overflow-checked. */
adia_status adia__gpu_copy_in(void **d, const void *h, int64_t n, size_t sz,
                             const char *what);
/* cudaGetLastError after a launch, as an adia_status naming the kernel. */
adia_status adia__gpu_launch_check(const char *kernel);
/* The sums of adia_dot_work over y (already computed) and x, a pass of
 * their own (rows <= 0: out set to zeros). */
adia_status adia__gpu_dots(adia_value_type vt, const void *x, const void *y, int32_t rows,
                          const adia_dot_work *dw, void *stream);
/* y = alpha A x + beta y on F's device storage with the sums of dw: fused
 * into the product's epilogue where F's format has it (gpu->spmv_dot),
 * else a pass of their own.  F square; x, y, dw->z device vectors. */
adia_status adia__format_spmv_dot_gpu(adia_format *F, double alpha, const void *x, double beta,
                                     void *y, const adia_dot_work *dw, void *stream);
/* Device work for the sums of products of up to `rows` rows, out
 * included, zeroed on stream: *mem owns it (cudaFree); dw->z and dw->xd
 * are left NULL.  *mem not NULL on entry: an earlier call's work for the
 * same rows, laid out and zeroed again. */
adia_status adia__gpu_dot_work_alloc(int64_t rows, adia_dot_work *dw, void **mem, void *stream);
/* Blocks of `block` threads covering n items (n > 0). */
static inline unsigned adia_gpu_blocks(int64_t n, int block)
{
    return (unsigned)((n + block - 1) / block);
}

#ifdef __cplusplus
}
#endif

#define ADIA_GPU_LAUNCH_TRY(name) ADIA_TRY(adia__gpu_launch_check(name))

#endif
