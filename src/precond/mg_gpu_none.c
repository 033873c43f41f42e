/* mg_gpu_none.c -- the multigrid's device kernels in a build without
 * CUDA: no device (a GPU plan cannot exist there either). */
#include "mg.h"

static adia_status no_device(void)
{
    return adia__error(ADIA_ERR_NO_DEVICE, "mg preconditioner: GPU plans need a CUDA build");
}

static adia_status none_smooth(const mg_state *S, const mg_level *L, mg_step st, double bs,
                               const void *b, void *x, void *stream)
{
    (void)S, (void)L, (void)st, (void)bs, (void)b, (void)x, (void)stream;
    return no_device();
}

static adia_status none_restrict(const mg_state *S, const mg_level *L, const mg_level *Lc,
                                 double bs, const void *b, void *stream)
{
    (void)S, (void)L, (void)Lc, (void)bs, (void)b, (void)stream;
    return no_device();
}

static adia_status none_prolong(const mg_state *S, const mg_level *L, const mg_level *Lc,
                                void *x, void *stream)
{
    (void)S, (void)L, (void)Lc, (void)x, (void)stream;
    return no_device();
}

static adia_status none_coarse(const mg_state *S, const mg_level *L, double bs, const void *b,
                               void *x, void *stream)
{
    (void)S, (void)L, (void)bs, (void)b, (void)x, (void)stream;
    return no_device();
}

const mg_kernels adia__mg_gpu_kernels = {
    .smooth = none_smooth,
    .restrict_residual = none_restrict,
    .prolong = none_prolong,
    .coarse = none_coarse,
};

adia_status adia__mg_gpu_zeros(adia_value_type vt, int64_t n, void **out)
{
    (void)vt, (void)n;
    *out = NULL;
    return no_device();
}
