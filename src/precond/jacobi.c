/* jacobi.c -- z = D^-1 r, D the diagonal of A, read once from the plan's
 * format where it lives (a GPU plan's inverted and checked there).  A
 * zero or non-finite diagonal entry is an error naming its row.
 * The solvers fuse it (the diagonal slot); apply is for everyone else. */
#include "precond.h"

#include <math.h>

typedef struct jacobi_state {
    double *inv;              /* CPU plans: n host doubles, 1 / A(i,i) */
    void *d_inv;              /* GPU plans: the same on the device, in the plan's
                                 value type (never on the host: issue 30) */
    int ones;                 /* every A(i,i) is 1 */
} jacobi_state;

/* 1 / A(i,i) into inv from the format's diagonal slot (a CPU plan). */
static adia_status inverse_diagonal(adia_precond *M, double *inv, int *ones)
{
    ADIA_TRY(adia__format_diagonal(adia_plan_format(M->plan), inv));
    const int64_t n = M->n;
    int64_t bad = INT64_MAX;   /* the first bad row, whatever the threads */
    int not_one = 0;
#pragma omp parallel for reduction(min : bad) reduction(| : not_one) schedule(static) if (n > 65536) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        if ((inv[i] == 0 || !isfinite(inv[i])) && i < bad) bad = i;
        not_one |= inv[i] != 1;
    }
    if (bad != INT64_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG, "jacobi preconditioner: needs A(%lld,%lld) "
                          "nonzero and finite, it is %g", (long long)bad, (long long)bad, inv[bad]);
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) inv[i] = 1.0 / inv[i];
    *ones = !not_one;
    return ADIA_OK;
}

static adia_status jacobi_setup(adia_precond *M, const adia_precond_options *opt)
{
    (void)opt;
    jacobi_state *s = adia__calloc(1, sizeof *s, "Jacobi preconditioner");
    if (!s) return ADIA_ERR_NO_MEMORY;
    M->impl = s;
    if (M->device)
        return adia__precond_inverse_diagonal_gpu(M->plan, "jacobi preconditioner: needs",
                                                  &s->d_inv, &s->ones);
    s->inv = adia__alloc((size_t)M->n + 1, sizeof *s->inv, "Jacobi diagonal");
    if (!s->inv) return ADIA_ERR_NO_MEMORY;
    return inverse_diagonal(M, s->inv, &s->ones);
}

static adia_status jacobi_apply(const adia_precond *M, double alpha, const void *r, void *z,
                                void *stream)
{
    const jacobi_state *s = M->impl;
    return adia__precond_scale(M->device, M->vtype, M->n, alpha, M->device ? s->d_inv : s->inv,
                               r, z, stream);
}

static const void *jacobi_diagonal(const adia_precond *M, int *ones)
{
    const jacobi_state *s = M->impl;
    *ones = s->ones;
    return M->device ? s->d_inv : (const void *)s->inv;
}

static void jacobi_destroy(adia_precond *M)
{
    jacobi_state *s = M->impl;
    if (s) {
        free(s->inv);
        adia__precond_free_gpu(s->d_inv);
    }
    free(s);
    M->impl = NULL;
}

const adia_precond_ops adia__precond_jacobi = {
    .name = "jacobi",
    .setup = jacobi_setup,
    .apply = jacobi_apply,
    .diagonal = jacobi_diagonal,
    .graph = 2,
    .varies = 0,
    .destroy = jacobi_destroy,
};
