/* test_solve_precond.c -- the preconditioner stage of the CPU solvers
 * (adia_solve_options.precond on CPU plans), with test-only kinds
 * registered from here (precond_kinds.h):
 * - "scaled2" (z = 2 r, no diagonal: the stage) gives every method the
 *   iteration count of no preconditioner, exactly (a power of two);
 * - the jacobi kind and the jacobi flag take the same fused path: the same
 *   iterations and the same x, bit for bit; "none" is no preconditioner;
 * - "neumann2" (not a diagonal, SPD) needs fewer CG iterations than
 *   Jacobi; BiCGSTAB and GMRES converge with it;
 * - "alternate" (varies) converges under GMRES (flexible), is refused by
 *   CG;
 * - one row, odd sizes, A and b scaled by 2^+-900 (the stage's alpha);
 * - errors: a preconditioner of another plan, jacobi + precond, no plan,
 *   operator solves.
 * Every converged solve is checked by the test's own residual b - A x. */
#include "testutil.h"
#include "precond_kinds.h"

#include <math.h>
#include <string.h>

static adia_plan *cpu_plan(const adia_matrix *A)
{
    adia_plan *P = NULL;
    adia_plan_hints h = {.device = 0, .expected_calls = 100};
    CHECK_OK(adia_plan_create(A, &h, &P));
    return P;
}

static const struct { const char *spec; adia_solver m; } cases[] = {
    {"lap2d5:31", ADIA_SOLVE_CG},      {"lap2d5:31", ADIA_SOLVE_BICGSTAB},
    {"lap2d5:31", ADIA_SOLVE_GMRES},   {"band:301,4", ADIA_SOLVE_BICGSTAB},
    {"band:301,4", ADIA_SOLVE_GMRES},  {"lap3d7:9", ADIA_SOLVE_CG},
};
#define NCASES (sizeof cases / sizeof *cases)

/* "none" and "scaled2" (the stage) against no preconditioner: the same
 * iteration count; the jacobi kind against the flag: the same x. */
static void test_same_as_before(void)
{
    for (size_t c = 0; c < NCASES; c++) {
        adia_matrix *A = test_generate(cases[c].spec);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        if (!P) continue;
        const char *tag = adia_solver_name(cases[c].m);
        const int n = adia_matrix_rows(A), restart = 10;
        adia_precond *none = test_precond(P, "none"), *s2 = test_precond(P, "scaled2"),
                     *jac = test_precond(P, "jacobi");
        outcome plain = solve_on(A, P, cases[c].m, NULL, 0, restart, 1e-10),
                kn = solve_on(A, P, cases[c].m, none, 0, restart, 1e-10),
                ks = solve_on(A, P, cases[c].m, s2, 0, restart, 1e-10),
                flag = solve_on(A, P, cases[c].m, NULL, 1, restart, 1e-10),
                kj = solve_on(A, P, cases[c].m, jac, 0, restart, 1e-10);
        CHECK(solved(&plain, 1e-10) && solved(&kn, 1e-10) && solved(&ks, 1e-10) &&
              solved(&flag, 1e-10) && solved(&kj, 1e-10),
              "%s %s: %s / %s / %s / %s / %s", cases[c].spec, tag, plain.info.stop, kn.info.stop,
              ks.info.stop, flag.info.stop, kj.info.stop);
        CHECK(kn.info.iterations == plain.info.iterations &&
              ks.info.iterations == plain.info.iterations,
              "%s %s: iterations none %d, kind none %d, scaled2 %d", cases[c].spec, tag,
              plain.info.iterations, kn.info.iterations, ks.info.iterations);
        CHECK(test_rel_err(ks.x, plain.x, n) < 1e-12, "%s %s: scaled2's x differs by %.3g",
              cases[c].spec, tag, test_rel_err(ks.x, plain.x, n));
        CHECK(kj.info.iterations == flag.info.iterations &&
              memcmp(kj.x, flag.x, (size_t)n * sizeof *kj.x) == 0,
              "%s %s: jacobi kind %d iterations, flag %d, x differs by %.3g", cases[c].spec, tag,
              kj.info.iterations, flag.info.iterations, test_rel_err(kj.x, flag.x, n));
        outcome *all[] = {&plain, &kn, &ks, &flag, &kj};
        for (int k = 0; k < 5; k++) free(all[k]->x);
        adia_precond_destroy(none);
        adia_precond_destroy(s2);
        adia_precond_destroy(jac);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

/* A preconditioner that is not a diagonal: neumann2 halves Jacobi's CG
 * iterations on a 2D Laplacian; BiCGSTAB and GMRES converge with it. */
static void test_neumann(void)
{
    adia_matrix *A = test_generate("lap2d5:63");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    if (!P) return;
    adia_precond *M = test_precond(P, "neumann2");
    outcome jac = solve_on(A, P, ADIA_SOLVE_CG, NULL, 1, 30, 1e-10);
    outcome neu = solve_on(A, P, ADIA_SOLVE_CG, M, 0, 30, 1e-10);
    CHECK(solved(&jac, 1e-10) && solved(&neu, 1e-10), "lap2d5:63 CG: jacobi %s, neumann2 %s "
          "(residual %.3g)", jac.info.stop, neu.info.stop, neu.res);
    CHECK(neu.info.iterations < 0.75 * jac.info.iterations, "neumann2 %d CG iterations, "
          "jacobi %d", neu.info.iterations, jac.info.iterations);
    free(jac.x);
    free(neu.x);
    for (int m = 1; m < 3; m++) {
        outcome o = solve_on(A, P, (adia_solver)m, M, 0, 20, 1e-10);
        CHECK(solved(&o, 1e-10), "lap2d5:63 %s + neumann2: %s, residual %.3g, error %.3g",
              adia_solver_name((adia_solver)m), o.info.stop, o.res, o.err);
        free(o.x);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* A kind that varies: GMRES runs flexible and converges (a plain GMRES
 * would add M_last V y, which is not the iterate its recurrence measured);
 * CG refuses it. */
static void test_flexible(void)
{
    adia_matrix *A = test_generate("band:301,4");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    if (!P) return;
    adia_precond *M = test_precond(P, "alternate");
    for (int restart = 5; restart <= 40; restart *= 8) {
        outcome o = solve_on(A, P, ADIA_SOLVE_GMRES, M, 0, restart, 1e-10);
        CHECK(solved(&o, 1e-10), "band FGMRES(%d) + alternate: %s, residual %.3g", restart,
              o.info.stop, o.res);
        free(o.x);
    }
    outcome c = solve_on(A, P, ADIA_SOLVE_CG, M, 0, 30, 1e-10);
    CHECK(c.status == ADIA_ERR_UNSUPPORTED && test_contains(adia_last_error(), "alternate"),
          "CG with a varying kind: %s", adia_last_error());
    free(c.x);
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* One row and odd small sizes, every method, through the stage. */
static void test_small(void)
{
    static const double one[] = {3};
    static const double three[] = {4, -1, 0, -1, 4, -1, 0, -1, 4};
    adia_matrix *As[] = {test_dense_matrix(1, 1, one), test_dense_matrix(3, 3, three)};
    static const char *kinds[] = {"scaled2", "neumann2", "alternate"};
    for (int a = 0; a < 2; a++) {
        adia_plan *P = As[a] ? cpu_plan(As[a]) : NULL;
        for (int k = 0; P && k < 3; k++) {
            adia_precond *M = test_precond(P, kinds[k]);
            for (int m = 0; M && m < 3; m++) {
                if (k == 2 && m != ADIA_SOLVE_GMRES) continue;   /* varies: GMRES only */
                outcome o = solve_on(As[a], P, (adia_solver)m, M, 0, 30, 1e-10);
                CHECK(solved(&o, 1e-10), "%d rows, %s + %s: %s", adia_matrix_rows(As[a]),
                      adia_solver_name((adia_solver)m), kinds[k], o.info.stop);
                free(o.x);
            }
            adia_precond_destroy(M);
        }
        adia_plan_destroy(P);
        adia_matrix_destroy(As[a]);
    }
}

/* A times 2^e: adia_solve runs on A / 2^e, so the stage applies M 2^e;
 * without it z would be 2^-900 r and p'Ap underflow (or overflow). */
static void test_scaled(void)
{
    adia_matrix *L = test_generate("lap2d5:21");
    if (!L) return;
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(L, &v));
    double *val = malloc((size_t)v.nnz * sizeof *val);
    for (int e = -900; e <= 900; e += 1800) {
        for (int64_t k = 0; k < v.nnz; k++) val[k] = ldexp(v.values[k], e);
        adia_matrix *A = NULL;
        CHECK_OK(adia_matrix_create_csr(v.rows, v.cols, v.nnz, v.rowptr, v.colind, val,
                                        ADIA_DOUBLE, &A));
        adia_plan *P = A ? cpu_plan(A) : NULL;
        adia_precond *M = P ? test_precond(P, "neumann2") : NULL;
        for (int m = 0; M && m < 3; m++) {
            outcome o = solve_on(A, P, (adia_solver)m, M, 0, 30, 1e-10);
            CHECK(solved(&o, 1e-10), "A x 2^%d, %s + neumann2: %s", e,
                  adia_solver_name((adia_solver)m), o.info.stop);
            free(o.x);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
    free(val);
    adia_matrix_destroy(L);
}

static adia_status op_apply(void *ctx, double alpha, const double *x, double *y)
{
    return adia_matrix_spmv(ctx, alpha, x, 0.0, y);
}

static adia_status op_apply_device(void *ctx, double alpha, const double *x, double *y, void *s)
{
    (void)ctx, (void)alpha, (void)x, (void)y, (void)s;
    return ADIA_ERR_UNSUPPORTED;   /* never reached: refused before */
}

/* An operator solve takes opt->precond made on a CPU plan of its rows: the
 * same iterations and solution as the plan solve with that M (the
 * operator's power-of-two scaling is exact, M applied with its inverse),
 * for a stage of its own (scaled2, mg) and a diagonal (jacobi); mg on the
 * operator needs a few iterations where none needs many. */
static void test_operator(void)
{
    static const struct { const char *spec, *kind; adia_solver m; } cases[] = {
        {"lap2d5:40", "scaled2", ADIA_SOLVE_CG},   {"lap2d5:40", "jacobi", ADIA_SOLVE_CG},
        {"lap2d5:64", "mg", ADIA_SOLVE_CG},        {"lap3d7:17", "mg", ADIA_SOLVE_BICGSTAB},
        {"lap2d5:33", "mg", ADIA_SOLVE_GMRES},
    };
    size_t ran = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        adia_matrix *A = test_generate(cases[c].spec);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        adia_precond *M = P ? test_precond(P, cases[c].kind) : NULL;
        ran += M != NULL;
        if (!M) {
            adia_plan_destroy(P);
            adia_matrix_destroy(A);
            continue;
        }
        const int32_t n = adia_matrix_rows(A);
        double *b = malloc((size_t)n * sizeof *b), *xp = calloc((size_t)n, sizeof *xp),
               *xo = calloc((size_t)n, sizeof *xo);
        for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.25;
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = cases[c].m;
        o.precond = M;
        adia_solve_info ip, io, i0;
        CHECK_OK(adia_solve(A, P, b, xp, &o, &ip));
        adia_operator op = {.n = n, .apply = op_apply, .ctx = A, .max_abs = 6};
        CHECK_OK(adia_solve_operator(&op, b, xo, &o, &io));
        double d = 0, m = 0;
        for (int32_t i = 0; i < n; i++) {
            d = fmax(d, fabs(xo[i] - xp[i]));
            m = fmax(m, fabs(xp[i]));
        }
        CHECK(ip.converged && io.converged && io.iterations == ip.iterations && d <= 1e-10 * m,
              "%s %s: plan solve %d its (%s), operator solve %d its (%s), max diff %g of %g",
              cases[c].spec, cases[c].kind, ip.iterations, ip.stop, io.iterations, io.stop, d,
              m);
        if (!strcmp(cases[c].kind, "mg")) {   /* against no preconditioner */
            o.precond = NULL;
            memset(xo, 0, (size_t)n * sizeof *xo);
            CHECK_OK(adia_solve_operator(&op, b, xo, &o, &i0));
            CHECK(io.iterations <= 15 && i0.iterations >= 3 * io.iterations,
                  "%s: mg on the operator %d iterations, none %d", cases[c].spec,
                  io.iterations, i0.iterations);
        }
        free(b);
        free(xp);
        free(xo);
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
    CHECK(ran == sizeof cases / sizeof *cases, "%zu of %zu operator cases ran", ran,
          sizeof cases / sizeof *cases);
}

static void test_errors(void)
{
    adia_matrix *A = test_generate("lap2d5:9");
    adia_plan *P = A ? cpu_plan(A) : NULL, *Q = A ? cpu_plan(A) : NULL;
    if (!P || !Q) return;
    const int32_t n = adia_matrix_rows(A);
    double *b = calloc((size_t)n, sizeof *b), *x = calloc((size_t)n, sizeof *x);
    b[0] = 1;
    adia_precond *M = test_precond(P, "scaled2");
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.precond = M;
    adia_solve_info in;
    CHECK_ERR(adia_solve(A, Q, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "another plan");
    CHECK_ERR(adia_solve(A, NULL, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "plan NULL");
    CHECK_ERR(adia_plan_solve(Q, b, x, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "another plan");
    o.jacobi = 1;
    CHECK_ERR(adia_solve(A, P, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "jacobi");
    o.jacobi = 0;
    adia_operator op = {.n = n, .apply = op_apply, .apply_device = op_apply_device, .ctx = A,
                        .max_abs = 4};
    /* an operator solve: M of its rows, on its device */
    CHECK_ERR(adia_solve_operator_device(&op, b, x, &o, &in, NULL), ADIA_ERR_INVALID_ARG,
              "solve runs on the GPU");
    op.n = n - 1;
    CHECK_ERR(adia_solve_operator(&op, b, x, &o, &in), ADIA_ERR_DIMENSION, "rows here");
    op.n = n;
    o.jacobi = 1;
    CHECK_ERR(adia_solve_operator(&op, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "jacobi");
    o.jacobi = 0;
    /* the plan solve of a CPU plan takes it (host vectors, adia_solve) */
    CHECK_OK(adia_plan_solve(P, b, x, &o, &in, NULL));
    CHECK(in.converged, "adia_plan_solve with scaled2: %s", in.stop);
    adia_precond_destroy(M);
    free(b);
    free(x);
    adia_plan_destroy(P);
    adia_plan_destroy(Q);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_register_kinds();
    test_same_as_before();
    test_neumann();
    test_flexible();
    test_small();
    test_scaled();
    test_errors();
    test_operator();
    return TEST_END();
}
