/* jacobi.c -- z = D^-1 r, D the diagonal of A, read once from the plan's
 * format (adia__format_diagonal: where the format lives, at bandwidth).  A zero or non-finite diagonal entry is an error naming its row.
 * The solvers fuse it (the diagonal slot); apply is for everyone else. */
#include "precond.h"

#include <math.h>

typedef struct jacobi_state {
    double *inv;              /* n host doubles: 1 / A(i,i) */
    void *d_inv;              /* GPU plans: the same in the plan's value type */
} jacobi_state;

/* 1 / A(i,i) into inv: the format's diagonal slot (a GPU plan's read on
 * the device and n values downloaded, never the format: issue 28). */
static adia_status inverse_diagonal(adia_precond *M, double *inv)
{
    ADIA_TRY(adia__format_diagonal(adia_plan_format(M->plan), inv));
    const int64_t n = M->n;
    int64_t bad = INT64_MAX;   /* the first bad row, whatever the threads */
#pragma omp parallel for reduction(min : bad) schedule(static) if (n > 65536) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++)
        if ((inv[i] == 0 || !isfinite(inv[i])) && i < bad) bad = i;
    if (bad != INT64_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG, "jacobi preconditioner: needs A(%lld,%lld) "
                          "nonzero and finite, it is %g", (long long)bad, (long long)bad, inv[bad]);
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) inv[i] = 1.0 / inv[i];
    return ADIA_OK;
}

static adia_status jacobi_setup(adia_precond *M, const adia_precond_options *opt)
{
    (void)opt;
    jacobi_state *s = adia__calloc(1, sizeof *s, "Jacobi preconditioner");
    if (!s) return ADIA_ERR_NO_MEMORY;
    M->impl = s;
    s->inv = adia__alloc((size_t)M->n + 1, sizeof *s->inv, "Jacobi diagonal");
    if (!s->inv) return ADIA_ERR_NO_MEMORY;
    ADIA_TRY(inverse_diagonal(M, s->inv));
    if (M->device) ADIA_TRY(adia__precond_upload(M->vtype, M->n, s->inv, &s->d_inv));
    return ADIA_OK;
}

static adia_status jacobi_apply(const adia_precond *M, double alpha, const void *r, void *z,
                                void *stream)
{
    const jacobi_state *s = M->impl;
    return adia__precond_scale(M->device, M->vtype, M->n, alpha, M->device ? s->d_inv : s->inv,
                               r, z, stream);
}

static const double *jacobi_diagonal(const adia_precond *M)
{
    return ((const jacobi_state *)M->impl)->inv;
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
