/* precond_kinds.h -- test-only preconditioner kinds for the solver tests
 * (test_solve_precond.c, test_gpu_solve_precond.c), registered with
 * adia__precond_register: each kind is one ops table over the helpers
 * every kind may use (src/precond/precond.h), on CPU plans (host doubles)
 * and GPU plans (device values of the plan's type), which is what "a new
 * kind is one file plus one registry line" asks of a real one.
 *
 *   "scaled2"   z = 2 r with no diagonal slot: the solvers' stage, not the
 *               fused path.  A power of two is exact, so every method's
 *               iterates are those without a preconditioner, scaled: the
 *               iteration counts must match the "none" kind's exactly.
 *   "neumann2"  z = D^-1 r + D^-1 (D - A) D^-1 r = D^-1 (2 r - A D^-1 r),
 *               two terms of the Neumann series of (D^-1 A)^-1, made of
 *               the jacobi kind and the plan's product: not a diagonal,
 *               symmetric, positive definite where 2 D - A is (a 2D
 *               Laplacian), and about half Jacobi's CG iterations there.
 *   "alternate" z = D^-1 r and z = r on alternate applications: varies
 *               (1), so GMRES must run flexible; the diagonals rotate by
 *               copies (no host state), so a graph replay varies too.
 *
 * And the solve the tests check them with (solve_on, solved). */
#ifndef ADIA_TEST_PRECOND_KINDS_H
#define ADIA_TEST_PRECOND_KINDS_H

#include "testutil.h"
#include "precond/precond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct test_kind {
    adia_precond *jacobi;      /* D^-1: the registered kind, composed */
    void *t, *y;               /* neumann2: work vectors */
    void *d[3];                /* alternate: the diagonal now, next, spare */
} test_kind;

/* z = alpha d .* r (d NULL: alpha r) where M lives. */
static adia_status tk_scale(const adia_precond *M, double alpha, const void *d, const void *r,
                            void *z, void *stream)
{
    if (M->device) return adia__precond_scale_gpu(M->vtype, M->n, alpha, d, r, z, stream);
    const double *dd = d, *rr = r;
    double *zz = z;
    for (int64_t i = 0; i < M->n; i++) zz[i] = alpha * (dd ? dd[i] : 1.0) * rr[i];
    return ADIA_OK;
}

/* A vector of n values where M lives, a copy of h (NULL: zeros). */
static adia_status tk_vector(const adia_precond *M, const double *h, void **out)
{
    double *c = calloc((size_t)M->n + 1, sizeof *c);
    if (!c) return ADIA_ERR_NO_MEMORY;
    for (int64_t i = 0; h && i < M->n; i++) c[i] = h[i];
    if (!M->device) {
        *out = c;
        return ADIA_OK;
    }
    adia_status s = adia__precond_upload(M->vtype, M->n, c, out);
    free(c);
    return s;
}

static void tk_free_vector(const adia_precond *M, void *v)
{
    if (M->device) adia__precond_free_gpu(v);
    else free(v);
}

static adia_status tk_setup(adia_precond *M, const adia_precond_options *opt)
{
    (void)opt;
    test_kind *k = calloc(1, sizeof *k);
    if (!k) return ADIA_ERR_NO_MEMORY;
    M->impl = k;
    adia_precond_options jo;
    adia_precond_options_default(&jo);
    jo.kind = "jacobi";
    ADIA_TRY(adia_precond_create(M->plan, &jo, &k->jacobi));
    if (!strcmp(M->ops->name, "neumann2")) {
        ADIA_TRY(tk_vector(M, NULL, &k->t));
        ADIA_TRY(tk_vector(M, NULL, &k->y));
    } else if (!strcmp(M->ops->name, "alternate")) {
        double *ones = malloc(((size_t)M->n + 1) * sizeof *ones);
        if (!ones) return ADIA_ERR_NO_MEMORY;
        for (int64_t i = 0; i < M->n; i++) ones[i] = 1;
        /* d[0]: Jacobi's diagonal, copied where it lives */
        int all_ones = 0;
        const void *dj = k->jacobi->ops->diagonal(k->jacobi, &all_ones);
        adia_status s = tk_vector(M, M->device ? NULL : dj, &k->d[0]);
        if (s == ADIA_OK && M->device)
            s = adia__precond_convert_gpu(M->vtype, M->vtype, M->n, 1.0, dj, k->d[0], NULL);
        if (s == ADIA_OK) s = tk_vector(M, ones, &k->d[1]);
        if (s == ADIA_OK) s = tk_vector(M, NULL, &k->d[2]);
        free(ones);
        return s;
    }
    return ADIA_OK;
}

static void tk_destroy(adia_precond *M)
{
    test_kind *k = M->impl;
    if (!k) return;
    adia_precond_destroy(k->jacobi);
    tk_free_vector(M, k->t);
    tk_free_vector(M, k->y);
    for (int i = 0; i < 3; i++) tk_free_vector(M, k->d[i]);
    free(k);
    M->impl = NULL;
}

static adia_status scaled2_apply(const adia_precond *M, double alpha, const void *r, void *z,
                                 void *stream)
{
    return tk_scale(M, 2 * alpha, NULL, r, z, stream);
}

/* t = D^-1 r; y = 2 r - A t; z = alpha D^-1 y */
static adia_status neumann2_apply(const adia_precond *M, double alpha, const void *r, void *z,
                                  void *stream)
{
    const test_kind *k = M->impl;
    const adia_precond *J = k->jacobi;
    ADIA_TRY(J->ops->apply(J, 1.0, r, k->t, stream));
    ADIA_TRY(tk_scale(M, 2.0, NULL, r, k->y, stream));
    ADIA_TRY(adia_spmv_async(M->plan, -1.0, k->t, 1.0, k->y, stream));
    return J->ops->apply(J, alpha, k->y, z, stream);
}

/* z = alpha d r, then the diagonals rotate: spare = now, now = next,
 * next = spare (copies: the same pointers on every call) */
static adia_status alternate_apply(const adia_precond *M, double alpha, const void *r, void *z,
                                   void *stream)
{
    void *const *d = ((const test_kind *)M->impl)->d;
    ADIA_TRY(tk_scale(M, alpha, d[0], r, z, stream));
    ADIA_TRY(tk_scale(M, 1.0, NULL, d[0], d[2], stream));
    ADIA_TRY(tk_scale(M, 1.0, NULL, d[1], d[0], stream));
    return tk_scale(M, 1.0, NULL, d[2], d[1], stream);
}

static const adia_precond_ops test_kind_scaled2 = {
    .name = "scaled2", .setup = tk_setup, .apply = scaled2_apply, .graph = 2,
    .destroy = tk_destroy,
};
static const adia_precond_ops test_kind_neumann2 = {
    .name = "neumann2", .setup = tk_setup, .apply = neumann2_apply, .graph = 2,
    .destroy = tk_destroy,
};
static const adia_precond_ops test_kind_alternate = {
    .name = "alternate", .setup = tk_setup, .apply = alternate_apply, .graph = 2, .varies = 1,
    .destroy = tk_destroy,
};

/* The three kinds registered (one assertion each). */
static void test_register_kinds(void)
{
    CHECK_OK(adia__precond_register(&test_kind_scaled2));
    CHECK_OK(adia__precond_register(&test_kind_neumann2));
    CHECK_OK(adia__precond_register(&test_kind_alternate));
}

/* A preconditioner of kind on plan P (NULL on failure, after a failed
 * assertion). */
static adia_precond *test_precond(adia_plan *P, const char *kind)
{
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = kind;
    adia_precond *M = NULL;
    CHECK_OK(adia_precond_create(P, &o, &M));
    return M;
}

/* ------------------------------------------- the solve that checks them */

typedef struct outcome {
    adia_status status;
    adia_solve_info info;
    double res;               /* the test's own ||b - A x|| / ||b||     */
    double err;               /* ||x - xstar||_inf / ||xstar||_inf       */
    double *x;                /* the solution (freed by the caller)      */
    int fl;                   /* the plan is in float                   */
} outcome;

/* ||b - A x|| / ||b||, both scaled by the power of two of max |b_i| first
 * (A times 2^+-900: the squares would leave the range of double). */
static double own_residual(const adia_matrix *A, const double *b, const double *x)
{
    const int32_t n = adia_matrix_rows(A);
    double *r = malloc((size_t)n * sizeof *r + 8), big = 0, num = 0, den = 0;
    adia_status s = adia_matrix_spmv(A, 1.0, x, 0.0, r);
    for (int32_t i = 0; i < n; i++) big = fmax(big, fabs(b[i]));
    int e = 0;
    frexp(big, &e);
    for (int32_t i = 0; i < n; i++) {
        double d = ldexp(b[i] - r[i], -e), bb = ldexp(b[i], -e);
        num += d * d;
        den += bb * bb;
    }
    free(r);
    return s == ADIA_OK ? sqrt(num / den) : INFINITY;
}

/* adia_solve of A x = A xstar from x0 = 0 (host vectors) on plan P, CPU or
 * GPU, with method m, preconditioner M (may be NULL), the jacobi flag,
 * GMRES restart and rtol. */
static outcome solve_on(const adia_matrix *A, adia_plan *P, adia_solver m, adia_precond *M,
                        int jacobi, int restart, double rtol)
{
    const int32_t n = adia_matrix_rows(A);
    outcome o = {.res = INFINITY, .err = INFINITY, .fl = adia_plan_value_type(P) == ADIA_FLOAT};
    double *xs = malloc((size_t)n * sizeof *xs), *b = malloc((size_t)n * sizeof *b);
    o.x = calloc((size_t)n, sizeof *o.x);
    uint64_t seed = 7;
    test_rand_vector(&seed, xs, n);
    CHECK_OK(adia_matrix_spmv(A, 1.0, xs, 0.0, b));
    adia_solve_options opt;
    adia_solve_options_default(&opt);
    opt.method = m;
    opt.rtol = rtol;
    opt.max_iter = 3000;
    opt.restart = restart;
    opt.jacobi = jacobi;
    opt.precond = M;
    o.status = adia_solve(A, P, b, o.x, &opt, &o.info);
    if (o.status == ADIA_OK) {
        o.res = own_residual(A, b, o.x);
        o.err = test_rel_err(o.x, xs, n);
    }
    free(xs);
    free(b);
    return o;
}

/* Converged by the solver's word and by the test's own residual (a float
 * plan: x itself is rounded to float, so the solver's residual and the
 * error against xstar decide). */
static int solved(const outcome *o, double rtol)
{
    if (o->status != ADIA_OK || !o->info.converged) return 0;
    if (o->fl) return o->info.residual <= rtol && o->err < 1e-2;
    /* x's error follows the residual (lap2d5:61: about 1e5 times): a
     * double reference solved to float's rtol is judged as such */
    return o->res <= 2 * rtol && o->err < fmin(1e-2, 1e5 * rtol);
}

#endif
