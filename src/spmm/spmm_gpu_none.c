/* spmm_gpu_none.c -- the GPU numeric phase of a build without CUDA (never
 * reached: adia_spgemm reports ADIA_ERR_NO_DEVICE first). */
#include "spmm_internal.h"

#ifndef ADIA_HAVE_CUDA
adia_status adia__spmm_gpu_hm(spmm_plan *p, spmm_gpu_run *run)
{
    (void)p;
    (void)run;
    return adia__error(ADIA_ERR_NO_DEVICE, "spmm: adia was built without CUDA");
}
#endif
