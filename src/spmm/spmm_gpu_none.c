/* spmm_gpu_none.c -- the GPU numeric phase of a build without CUDA (never
 * reached: adia_spmm reports ADIA_ERR_NO_DEVICE first). */
#include "spmm_internal.h"

#ifndef ADIA_HAVE_CUDA
adia_status spmm_gpu_hm(spmm_plan *p, double *c_list, int accumulate, double *time_ms)
{
    (void)p;
    (void)c_list;
    (void)accumulate;
    (void)time_ms;
    return adia_error(ADIA_ERR_NO_DEVICE, "spmm: adia was built without CUDA");
}
#endif
