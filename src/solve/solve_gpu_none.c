/* solve_gpu_none.c -- the GPU solver in a build without CUDA: no device. */
#include "solve_internal.h"

adia_status adia__solve_gpu(const adia_solve_gpu_args *a, adia_solve_info *info)
{
    (void)a;
    (void)info;
    return adia__error(ADIA_ERR_NO_DEVICE, "adia_solve: GPU plans need a CUDA build");
}

adia_status adia__solve_gpu_host(const adia_solve_gpu_args *a, const double *b, double *x,
                                adia_solve_info *info)
{
    (void)b;
    (void)x;
    return adia__solve_gpu(a, info);
}

adia_status adia__solve_plan_max_abs(const adia_plan *plan, double *big)
{
    (void)plan;
    (void)big;
    return ADIA_ERR_UNSUPPORTED;
}
