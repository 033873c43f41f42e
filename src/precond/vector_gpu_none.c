/* vector_gpu_none.c -- the preconditioners' device helpers in a build
 * without CUDA: no device. */
#include "precond.h"

adia_status adia__precond_scale_gpu(adia_value_type vt, int64_t n, double alpha, const void *d,
                                    const void *r, void *z, void *stream)
{
    (void)vt, (void)n, (void)alpha, (void)d, (void)r, (void)z, (void)stream;
    return adia__error(ADIA_ERR_NO_DEVICE, "preconditioner: GPU plans need a CUDA build");
}

adia_status adia__precond_convert_gpu(adia_value_type from, adia_value_type to, int64_t n,
                                      double alpha, const void *r, void *z, void *stream)
{
    (void)from, (void)to, (void)n, (void)alpha, (void)r, (void)z, (void)stream;
    return adia__error(ADIA_ERR_NO_DEVICE, "preconditioner: GPU plans need a CUDA build");
}

adia_status adia__precond_upload(adia_value_type vt, int64_t n, const double *h, void **out)
{
    (void)vt, (void)n, (void)h;
    *out = NULL;
    return adia__error(ADIA_ERR_NO_DEVICE, "preconditioner: GPU plans need a CUDA build");
}

adia_status adia__precond_inverse_diagonal_gpu(const adia_plan *plan, const char *who, void **out,
                                               int *ones)
{
    (void)plan, (void)who, (void)ones;
    *out = NULL;
    return adia__error(ADIA_ERR_NO_DEVICE, "preconditioner: GPU plans need a CUDA build");
}

void adia__precond_free_gpu(void *d) { (void)d; }
