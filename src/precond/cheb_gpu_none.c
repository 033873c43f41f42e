/* cheb_gpu_none.c -- cheb's device bounds in a build without CUDA: no GPU
 * plan exists, so nothing is done on the device (the host's path). */
#include "precond.h"

adia_status adia__precond_spd_bounds_gpu(const char *kind, adia_plan *plan, int steps,
                                         double *est, double *gershgorin, void **inv_diag,
                                         int *done)
{
    (void)kind, (void)plan, (void)steps, (void)est, (void)gershgorin;
    *inv_diag = NULL;
    *done = 0;
    return ADIA_OK;
}
