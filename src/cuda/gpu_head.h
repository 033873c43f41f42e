/* gpu_head.h -- the header every device-side struct of a GPU upload starts
 * with, so that the public adia_format_set_kernel / set_threads reach the
 * variant choice without a slot in adia_gpu_ops.  Plain C. */
#ifndef ADIA_GPU_HEAD_H
#define ADIA_GPU_HEAD_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adia_gpu_head {
    adia_gpu_kernel kernel;       /* variant in use (never AUTO after upload)  */
    adia_gpu_kernel auto_kernel;  /* what AUTO means for this upload           */
    unsigned allowed;             /* bit (1u << k) set for each allowed kernel */
    int block;                    /* threads per block of the row kernels      */
    /* Switch to kernel k (already checked against allowed); may compile. */
    adia_status (*select)(void *dev, adia_gpu_kernel k);
} adia_gpu_head;


#ifdef __cplusplus
}
#endif
#endif
