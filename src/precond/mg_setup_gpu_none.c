/* mg_setup_gpu_none.c -- the multigrid's device set-up in a build without
 * CUDA: no device (a GPU plan cannot exist there either). */
#include "mg.h"

#include <stdio.h>

static adia_status no_device(void)
{
    return adia__error(ADIA_ERR_NO_DEVICE, "mg preconditioner: the device set-up needs a CUDA "
                      "build");
}

adia_status adia__mg_gpu_view(adia_plan *plan, mg_dview *v, char *why, size_t len)
{
    (void)plan;
    memset(v, 0, sizeof *v);
    snprintf(why, len, "a build without CUDA");
    return ADIA_ERR_UNSUPPORTED;
}

void adia__mg_gpu_view_free(mg_dview *v)
{
    (void)v;
}

adia_status adia__mg_gpu_check(const mg_dview *v, const int32_t n[3], int64_t *bad,
                               unsigned *mask)
{
    (void)v, (void)n, (void)bad, (void)mask;
    return no_device();
}

adia_status adia__mg_gpu_bad_entry(const mg_dview *v, const int32_t n[3], int64_t i, int64_t *j,
                                   double *val)
{
    (void)v, (void)n, (void)i, (void)j, (void)val;
    return no_device();
}

adia_status adia__mg_gpu_stencil(const mg_dview *v, const int32_t n[3], unsigned mask,
                                 mg_stencil *S, int64_t *bad_diag, double *dval)
{
    (void)v, (void)n, (void)mask, (void)S, (void)bad_diag, (void)dval;
    return no_device();
}

adia_status adia__mg_gpu_coupling(const mg_stencil *S, uint64_t c[3])
{
    (void)S, (void)c;
    return no_device();
}

adia_status adia__mg_gpu_galerkin(const mg_stencil *A, const int32_t nc[3],
                                  const int coarsened[3], mg_stencil *C)
{
    (void)A, (void)nc, (void)coarsened, (void)C;
    return no_device();
}

adia_status adia__mg_gpu_to_dia(const mg_stencil *S, adia_value_type vt, int64_t *offsets,
                                int *ndiag, void **values)
{
    (void)S, (void)vt, (void)offsets, (void)ndiag;
    *values = NULL;
    return no_device();
}

adia_status adia__mg_gpu_estimate_slab(const mg_stencil *S, int64_t origin, int64_t r0, int64_t r1,
                                      const adia_slab_comm *c, int level, int fine,
                                      mg_estimate *e)
{
    (void)S, (void)origin, (void)r0, (void)r1, (void)c, (void)level, (void)fine, (void)e;
    return no_device();
}

adia_status adia__mg_gpu_coupling_rows(const mg_stencil *S, int64_t r0, int64_t r1, uint64_t c[3])
{
    (void)S, (void)r0, (void)r1, (void)c;
    return no_device();
}

adia_status adia__mg_gpu_stencil_zeros(mg_stencil *S, const int32_t n[3], unsigned mask)
{
    (void)S, (void)n, (void)mask;
    return no_device();
}

adia_status adia__mg_gpu_estimate(const mg_stencil *S, int n, int fine, mg_estimate *est)
{
    (void)S, (void)n, (void)fine, (void)est;
    return no_device();
}

adia_status adia__mg_gpu_scaling(const mg_stencil *S, mg_smoother kind, double omega,
                                 adia_value_type vt, void **s)
{
    (void)S, (void)kind, (void)omega, (void)vt;
    *s = NULL;
    return no_device();
}

adia_status adia__mg_gpu_download(const mg_stencil *D, mg_stencil *H)
{
    (void)D, (void)H;
    return no_device();
}

void adia__mg_gpu_stencil_free(mg_stencil *S)
{
    (void)S;
}
