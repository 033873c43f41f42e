/* none.c -- the identity: z = r.  The solvers see `identity` and take
 * their unpreconditioned path; apply is for everyone else. */
#include "precond.h"

static adia_status none_setup(adia_precond *M, const adia_precond_options *opt)
{
    (void)M;
    (void)opt;
    return ADIA_OK;
}

static adia_status none_apply(const adia_precond *M, double alpha, const void *r, void *z,
                              void *stream)
{
    return adia__precond_scale(M->device, M->vtype, M->n, alpha, NULL, r, z, stream);
}

const adia_precond_ops adia__precond_none = {
    .name = "none",
    .setup = none_setup,
    .apply = none_apply,
    .identity = 1,
    .graph = 2,
    .varies = 0,
};
