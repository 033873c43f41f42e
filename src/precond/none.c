/* none.c -- the identity: z = r.  A diagonal of ones, so the solvers take
 * their unpreconditioned path. */
#include "precond.h"

#include <string.h>

typedef struct none_state {
    double *ones;             /* n host ones: the diagonal slot's answer */
} none_state;

static adia_status none_setup(adia_precond *M, const adia_precond_options *opt)
{
    (void)opt;
    none_state *s = adia__calloc(1, sizeof *s, "identity preconditioner");
    if (!s) return ADIA_ERR_NO_MEMORY;
    M->impl = s;
    s->ones = adia__alloc((size_t)M->n + 1, sizeof *s->ones, "identity preconditioner");
    if (!s->ones) return ADIA_ERR_NO_MEMORY;
    for (int64_t i = 0; i < M->n; i++) s->ones[i] = 1;
    return ADIA_OK;
}

static adia_status none_apply(const adia_precond *M, double alpha, const void *r, void *z,
                              void *stream)
{
    if (M->device) return adia__precond_scale_gpu(M->vtype, M->n, alpha, NULL, r, z, stream);
    const double *rr = r;
    double *zz = z;
    for (int64_t i = 0; i < M->n; i++) zz[i] = alpha * rr[i];
    return ADIA_OK;
}

static const double *none_diagonal(const adia_precond *M)
{
    return ((const none_state *)M->impl)->ones;
}

static void none_destroy(adia_precond *M)
{
    none_state *s = M->impl;
    if (s) free(s->ones);
    free(s);
    M->impl = NULL;
}

const adia_precond_ops adia__precond_none = {
    .name = "none",
    .setup = none_setup,
    .apply = none_apply,
    .diagonal = none_diagonal,
    .graph = 2,
    .varies = 0,
    .destroy = none_destroy,
};
