/* test_solve.c -- CG and BiCGSTAB on top of the planner: convergence on
 * SPD and nonsymmetric matrices with known solutions (true residual and
 * error checked, with and without Jacobi, with a given plan and with the
 * solver's own), the iteration limit, breakdown on a non-SPD matrix, b = 0,
 * systems scaled by 1e200 and 1e-170, b of 16 x 1e308, 16 x 1e-320 or one
 * 1e-310 (its norm overflows or is subnormal), a NaN in A, an inconsistent singular
 * system and stagnation below machine precision (never "converged"), the
 * set-up reported apart from the iterations by every entry point, and
 * every bad argument with its message. */
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <string.h>


/* Solve A x = A * xstar from x0 = 0; returns the relative error of x. */
static double solve_known(const adia_matrix *A, adia_plan *P, const adia_solve_options *o,
                          adia_solve_info *info, adia_status *status)
{
    return test_solve_known(A, P, NULL, o, 11, info, status);
}

static void test_converges(void)
{
    static const struct { const char *spec; adia_solver m; int jacobi; } cases[] = {
        {"lap2d5:60", ADIA_SOLVE_CG, 0},         {"lap2d5:60", ADIA_SOLVE_CG, 1},
        {"lap3d7:14", ADIA_SOLVE_CG, 1},         {"lap2d5:60", ADIA_SOLVE_BICGSTAB, 0},
        {"band:3000,4", ADIA_SOLVE_BICGSTAB, 0}, {"band:3000,4", ADIA_SOLVE_BICGSTAB, 1},
        {"type3:20000,9,0.4", ADIA_SOLVE_BICGSTAB, 1},
        {"lap2d5:60", ADIA_SOLVE_GMRES, 0},      {"band:3000,4", ADIA_SOLVE_GMRES, 1},
        {"type3:20000,9,0.4", ADIA_SOLVE_GMRES, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        adia_matrix *A = test_generate(cases[c].spec);
        if (!A) continue;
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = cases[c].m;
        o.jacobi = cases[c].jacobi;
        o.rtol = 1e-10;
        adia_solve_info in;
        adia_status s;
        double err = solve_known(A, NULL, &o, &in, &s);
        const char *name = adia_solver_name(o.method);
        CHECK(s == ADIA_OK && in.converged, "%s %s%s: status %d, %s", cases[c].spec, name,
              o.jacobi ? "+jacobi" : "", (int)s, in.stop);
        CHECK(in.residual <= 1e-10, "%s %s: true residual %.3g", cases[c].spec, name, in.residual);
        CHECK(err < 1e-6, "%s %s: error %.3g against the known solution", cases[c].spec, name, err);
        CHECK(in.iterations > 0 && in.spmvs > in.iterations / 2 && in.spmv_ms <= in.time_ms,
              "%s %s: %d iterations, %d SpMVs, %.3f of %.3f ms", cases[c].spec, name,
              in.iterations, in.spmvs, in.spmv_ms, in.time_ms);
        CHECK(strlen(in.format) > 0, "%s: format reported", cases[c].spec);
        adia_matrix_destroy(A);
    }
}

/* Jacobi pays on a badly scaled SPD matrix: rows scaled by 1..1000. */
static void test_jacobi_helps(void)
{
    adia_matrix *L = test_generate("lap2d5:40");
    if (!L) return;
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(L, &v));
    int32_t n = v.rows;
    double *d = malloc((size_t)n * sizeof *d);
    for (int32_t i = 0; i < n; i++) d[i] = 1 + 999.0 * (i % 7) / 6;
    /* D^1/2 L D^1/2 stays SPD with a spread diagonal */
    adia_matrix *A = NULL;
    double *val = malloc((size_t)v.nnz * sizeof *val);
    for (int32_t i = 0; i < n; i++)
        for (int64_t k = v.rowptr[i]; k < v.rowptr[i + 1]; k++)
            val[k] = v.values[k] * sqrt(d[i] * d[v.colind[k]]);
    CHECK_OK(adia_matrix_create_csr(n, n, v.nnz, v.rowptr, v.colind, val, ADIA_DOUBLE, &A));
    int iters[2] = {0, 0};
    for (int j = 0; A && j < 2; j++) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.jacobi = j;
        adia_solve_info in;
        adia_status s;
        solve_known(A, NULL, &o, &in, &s);
        CHECK(s == ADIA_OK && in.converged, "scaled Laplacian, jacobi %d: %s", j, in.stop);
        iters[j] = in.iterations;
    }
    CHECK(iters[1] < iters[0] / 2, "Jacobi: %d iterations, none: %d", iters[1], iters[0]);
    adia_matrix_destroy(A);
    adia_matrix_destroy(L);
    free(d);
    free(val);
}

static void test_stops(void)
{
    adia_matrix *A = test_generate("lap2d5:60");
    if (!A) return;
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.max_iter = 5;
    adia_solve_info in;
    adia_status s;
    solve_known(A, NULL, &o, &in, &s);
    CHECK(s == ADIA_OK && !in.converged && in.iterations == 5, "limit: status %d, %d iterations",
          (int)s, in.iterations);
    CHECK(test_contains(in.stop, "iteration limit"), "limit: stop '%s'", in.stop);
    /* CG on -A (negative definite): breakdown at the first step */
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    double *neg = malloc((size_t)v.nnz * sizeof *neg);
    for (int64_t k = 0; k < v.nnz; k++) neg[k] = -v.values[k];
    adia_matrix *N = NULL;
    CHECK_OK(adia_matrix_create_csr(v.rows, v.cols, v.nnz, v.rowptr, v.colind, neg, ADIA_DOUBLE,
                                    &N));
    o.max_iter = 100;
    solve_known(N, NULL, &o, &in, &s);
    CHECK(s == ADIA_OK && !in.converged &&
              test_contains(in.stop, "not symmetric positive definite"),
          "breakdown: status %d, stop '%s'", (int)s, in.stop);
    /* BiCGSTAB solves the same negative definite system */
    o.method = ADIA_SOLVE_BICGSTAB;
    o.max_iter = 1000;
    double err = solve_known(N, NULL, &o, &in, &s);
    CHECK(s == ADIA_OK && in.converged && err < 1e-5, "bicgstab on -A: %s, error %.3g", in.stop,
          err);
    /* b = 0: x = 0 at once */
    int32_t n = v.rows;
    double *b = calloc((size_t)n, sizeof *b), *x = malloc((size_t)n * sizeof *x);
    for (int32_t i = 0; i < n; i++) x[i] = 5;
    CHECK_OK(adia_solve(A, NULL, b, x, NULL, &in));
    CHECK(in.converged && in.iterations == 0 && x[0] == 0 && x[n - 1] == 0, "b = 0: %s", in.stop);
    free(b);
    free(x);
    free(neg);
    adia_matrix_destroy(N);
    adia_matrix_destroy(A);
}

/* nos7 (cond ~1e9): CG's recurrence reaches rtol before the true residual
 * does; the solver restarts from the true residual until it does. */
static void test_restart(void)
{
    const char *path = test_shared_path("nos7.mtx");
    adia_matrix *A = NULL;
    if (!path || adia_matrix_load(path, &A) != ADIA_OK) return;   /* no shared matrices */
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.jacobi = 1;
    o.max_iter = 5000;
    int32_t n = adia_matrix_rows(A);
    double *one = malloc((size_t)n * sizeof *one), *b = malloc((size_t)n * sizeof *b),
           *x = calloc((size_t)n, sizeof *x);
    for (int32_t i = 0; i < n; i++) one[i] = 1;
    adia_solve_info in;
    /* a fixed format: the rounding, hence the restart, must not depend on
     * what the planner measures */
    adia_plan_hints h = {.vtype = ADIA_DOUBLE, .chooser = ADIA_CHOOSE_FIXED, .format = "csr"};
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create(A, &h, &P));
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));   /* b = A * ones (as adia solve) */
    CHECK_OK(adia_solve(A, P, b, x, &o, &in));
    adia_plan_destroy(P);
    CHECK(in.converged && in.residual <= 1e-8, "nos7: %s, residual %.3g", in.stop, in.residual);
    CHECK(in.spmvs > in.iterations + 2, "nos7: a restart happened (%d SpMVs, %d iterations)",
          in.spmvs, in.iterations);
    free(one);
    free(b);
    free(x);
    adia_matrix_destroy(A);
}

/* A plan given by the caller is used (its format reported) and checked. */
static void test_given_plan(void)
{
    adia_matrix *A = test_generate("lap2d5:30"), *B = test_generate("lap2d5:31");
    adia_plan_hints h = {.vtype = ADIA_DOUBLE, .chooser = ADIA_CHOOSE_FIXED, .format = "ell"};
    adia_plan *P = NULL, *Q = NULL, *F = NULL;
    CHECK_OK(adia_plan_create(A, &h, &P));
    adia_solve_info in;
    adia_status s;
    double err = solve_known(A, P, NULL, &in, &s);
    CHECK(s == ADIA_OK && in.converged && err < 1e-6 && !strcmp(in.format, "ell"),
          "given plan: %s, format %s", in.stop, in.format);
    CHECK_OK(adia_plan_create(B, &h, &Q));
    int32_t n = adia_matrix_rows(A);
    double *b = calloc((size_t)n + 64, sizeof *b), *x = calloc((size_t)n + 64, sizeof *x);
    b[0] = 1;
    CHECK_ERR(adia_solve(A, Q, b, x, NULL, &in), ADIA_ERR_DIMENSION, "the plan is 961 x 961");
    h.vtype = ADIA_FLOAT;
    CHECK_OK(adia_plan_create(A, &h, &F));
    CHECK_ERR(adia_solve(A, F, b, x, NULL, &in), ADIA_ERR_UNSUPPORTED, "float");
    adia_plan_destroy(P);
    adia_plan_destroy(Q);
    adia_plan_destroy(F);
    free(b);
    free(x);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
}

static void test_bad_args(void)
{
    adia_matrix *A = test_generate("lap2d5:10"), *R = NULL;
    double b[100] = {1}, x[100] = {0};
    CHECK_ERR(adia_solve(NULL, NULL, b, x, NULL, NULL), ADIA_ERR_INVALID_HANDLE, "adia_solve");
    CHECK_ERR(adia_solve(A, NULL, NULL, x, NULL, NULL), ADIA_ERR_INVALID_ARG, "b or x is NULL");
    CHECK_ERR(adia_solve(A, NULL, b, NULL, NULL, NULL), ADIA_ERR_INVALID_ARG, "b or x is NULL");
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.method = (adia_solver)7;
    CHECK_ERR(adia_solve(A, NULL, b, x, &o, NULL), ADIA_ERR_INVALID_ARG, "unknown method 7");
    adia_solve_options_default(&o);
    o.method = ADIA_SOLVE_GMRES;
    o.restart = 1001;
    CHECK_ERR(adia_solve(A, NULL, b, x, &o, NULL), ADIA_ERR_INVALID_ARG,
              "GMRES restart 1001 outside 1..1000");
    adia_solve_options_default(&o);
    o.rtol = 2;
    CHECK_ERR(adia_solve(A, NULL, b, x, &o, NULL), ADIA_ERR_INVALID_ARG, "rtol 2");
    b[37] = NAN;
    CHECK_ERR(adia_solve(A, NULL, b, x, NULL, NULL), ADIA_ERR_INVALID_ARG, "b[37] = nan");
    b[37] = 0;
    x[3] = INFINITY;
    CHECK_ERR(adia_solve(A, NULL, b, x, NULL, NULL), ADIA_ERR_INVALID_ARG, "x (initial guess)[3]");
    x[3] = 0;
    int32_t rows[3] = {0, 1, 2}, cols[3] = {0, 1, 3};
    double vals[3] = {1, 1, 1};
    CHECK_OK(adia_matrix_create_coo(3, 4, 3, rows, cols, vals, ADIA_DOUBLE, &R));
    CHECK_ERR(adia_solve(R, NULL, b, x, NULL, NULL), ADIA_ERR_DIMENSION, "3 x 4, not square");
    adia_matrix_destroy(R);
    int32_t zr[2] = {0, 1}, zc[2] = {1, 0};   /* [[0 1] [1 0]]: zero diagonal */
    CHECK_OK(adia_matrix_create_coo(2, 2, 2, zr, zc, vals, ADIA_DOUBLE, &R));
    adia_solve_options_default(&o);
    o.jacobi = 1;
    CHECK_ERR(adia_solve(R, NULL, b, x, &o, NULL), ADIA_ERR_INVALID_ARG, "A(0,0) nonzero");
    adia_matrix_destroy(R);
    adia_matrix_destroy(A);
    CHECK(!strcmp(adia_solver_name(ADIA_SOLVE_CG), "cg") &&
          !strcmp(adia_solver_name(ADIA_SOLVE_BICGSTAB), "bicgstab"), "solver names");
}

/* A's values times f, same pattern. */
static adia_matrix *scaled_copy(const adia_matrix *A, double f)
{
    adia_csr_view v;
    adia_matrix *S = NULL;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return NULL;
    double *val = malloc((size_t)v.nnz * sizeof *val);
    for (int64_t k = 0; k < v.nnz; k++) val[k] = v.values[k] * f;
    CHECK_OK(adia_matrix_create_csr(v.rows, v.cols, v.nnz, v.rowptr, v.colind, val, ADIA_DOUBLE,
                                    &S));
    free(val);
    return S;
}

/* A and b times 1e200 or 1e-170: the same x.  Unscaled, ||b||^2 overflows
 * (1e400) or underflows to 0 (1e-340: "b = 0, x = 0" was reported). */
static void test_scaled_systems(void)
{
    adia_matrix *A = test_generate("lap2d5:30");
    if (!A) return;
    const double factors[] = {1e200, 1e-170, 1e300, 1e-300};
    for (size_t f = 0; f < sizeof factors / sizeof *factors; f++)
        for (int m = 0; m < 3; m++)
            for (int jacobi = 0; jacobi < 2; jacobi++) {
                adia_matrix *S = scaled_copy(A, factors[f]);
                adia_solve_options o;
                adia_solve_options_default(&o);
                o.method = (adia_solver)m;
                o.jacobi = jacobi;
                o.rtol = 1e-10;
                adia_solve_info in;
                adia_status s;
                double err = solve_known(S, NULL, &o, &in, &s);
                CHECK(s == ADIA_OK && in.converged && in.residual <= 1e-10 && err < 1e-6,
                      "A, b x %g, %s%s: status %d, %s, residual %.3g, error %.3g", factors[f],
                      adia_solver_name(o.method), jacobi ? "+jacobi" : "", (int)s, in.stop,
                      in.residual, err);
                adia_matrix_destroy(S);
            }
    adia_matrix_destroy(A);
}

/* Solve A x = b (b given) from x0 = 0 with method m; x returned in x. */
static void solve_b(const adia_matrix *A, const double *b, double *x, adia_solver m, int max_iter,
                    double rtol, adia_solve_info *in)
{
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.method = m;
    o.max_iter = max_iter;
    o.rtol = rtol;
    memset(x, 0, (size_t)adia_matrix_rows(A) * sizeof *x);
    CHECK_OK(adia_solve(A, NULL, b, x, &o, in));
}

/* b at the ends of the range of double (issue 27): ||b|| of 16 x 1e308
 * overflows and 16 x 1e-320 is subnormal.  They made the tolerance Inf
 * (or NaN) and "converged" with x = 0; one 1e-310 entry stopped on a
 * "non-finite residual".  Every method, with and without Jacobi: solved,
 * and converged only where the returned x meets rtol by the test's own
 * residual; x far below the normal range (its entries lose bits) is
 * refused with that reason, not reported converged. */
static void test_extreme_b(void)
{
    adia_matrix *A = test_generate("lap2d5:4");   /* 16 rows; A^-1 1 in [0.83, 1.67] */
    adia_matrix *As = A ? scaled_copy(A, 1e-20) : NULL;
    if (!A || !As) return;
    const int32_t n = 16;
    struct {
        const char *what;
        const adia_matrix *A;
        double value;   /* every b_i, or b_5 alone (one) */
        int one, e;     /* the test's scale 2^-e */
        int must;       /* 1: must converge; 0: converged only if x meets rtol */
    } cases[] = {
        {"b = 16 x 1e308", A, 1e308, 0, 1024, 1},
        {"b = 16 x 1e-320, A x 1e-20", As, 1e-320, 0, -1070, 1},
        {"b_5 = 1e-310 alone, A x 1e-20", As, 1e-310, 1, -1040, 1},
        {"b = 16 x 1e-320 (x subnormal)", A, 1e-320, 0, -1070, 0},
        {"b_5 = 1e-310 alone (x subnormal)", A, 1e-310, 1, -1040, 0},
    };
    double b[16], x[16];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int m = 0; m < 3; m++)
            for (int jacobi = 0; jacobi < 2; jacobi++) {
                for (int32_t i = 0; i < n; i++) {
                    b[i] = !cases[c].one || i == 5 ? cases[c].value : 0;
                    x[i] = 0;
                }
                adia_solve_options o;
                adia_solve_options_default(&o);
                o.method = (adia_solver)m;
                o.jacobi = jacobi;
                adia_solve_info in;
                adia_status s = adia_solve(cases[c].A, NULL, b, x, &o, &in);
                int finite = 1, nonzero = 0;
                for (int32_t i = 0; i < n; i++) {
                    finite &= isfinite(x[i]);
                    nonzero |= x[i] != 0;
                }
                double res = finite ? test_scaled_residual(cases[c].A, b, x, cases[c].e) : INFINITY;
                const char *name = adia_solver_name(o.method);
                CHECK(s == ADIA_OK, "%s, %s%s: %s", cases[c].what, name, jacobi ? "+jacobi" : "",
                      adia_last_error());
                CHECK(!in.converged || (finite && nonzero && res <= o.rtol && in.residual <= o.rtol),
                      "%s, %s%s: converged (%s) but x is %s, true residual %.3g (reported %.3g)",
                      cases[c].what, name, jacobi ? "+jacobi" : "", in.stop,
                      !finite ? "not finite" : nonzero ? "finite" : "0", res, in.residual);
                if (cases[c].must)
                    CHECK(in.converged && !test_contains(in.stop, "non-finite"),
                          "%s, %s%s: not converged: %s", cases[c].what, name,
                          jacobi ? "+jacobi" : "", in.stop);
                else if (!in.converged)
                    CHECK(test_contains(in.stop, "x underflows") && res > o.rtol,
                          "%s, %s%s: not converged, residual %.3g: %s", cases[c].what, name,
                          jacobi ? "+jacobi" : "", res, in.stop);
            }
    /* what the scaled system cannot take: a tolerance that rounds to 0,
     * an initial guess that overflows once scaled (both were a run to a
     * "non-finite residual" or the iteration limit) */
    for (int32_t i = 0; i < n; i++) {
        b[i] = i == 0;   /* ||b|| / sb = 0.5: rtol 5e-324 times it rounds to 0 */
        x[i] = 0;
    }
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.rtol = 5e-324;
    adia_solve_info in;
    CHECK_ERR(adia_solve(A, NULL, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "rtol 4.94066e-324 is too small");
    o.rtol = 1e-8;
    for (int32_t i = 0; i < n; i++) {
        b[i] = 1e-300;
        x[i] = 1e10;
    }
    CHECK_ERR(adia_solve(A, NULL, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "initial guess is out of scale");
    CHECK(x[0] == 1e10, "a refused solve leaves x0 as it was (%g)", x[0]);
    adia_matrix_destroy(As);
    adia_matrix_destroy(A);
}

/* A NaN in A: never "converged"; the stop names the non-finite residual. */
static void test_nan_matrix(void)
{
    adia_matrix *A = test_generate("lap2d5:10");
    if (!A) return;
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    double *val = malloc((size_t)v.nnz * sizeof *val), b[100], x[100];
    memcpy(val, v.values, (size_t)v.nnz * sizeof *val);
    val[v.nnz / 2] = NAN;
    adia_matrix *N = NULL;
    CHECK_OK(adia_matrix_create_csr(v.rows, v.cols, v.nnz, v.rowptr, v.colind, val, ADIA_DOUBLE,
                                    &N));
    for (int i = 0; i < 100; i++) b[i] = 1;
    for (int m = 0; m < 3; m++) {
        adia_solve_info in;
        solve_b(N, b, x, (adia_solver)m, 100, 1e-8, &in);
        CHECK(!in.converged && test_contains(in.stop, "non-finite residual at iteration 0"),
              "NaN in A, %s: converged %d, stop '%s'", adia_solver_name((adia_solver)m),
              in.converged, in.stop);
    }
    free(val);
    adia_matrix_destroy(N);
    adia_matrix_destroy(A);
}

/* The 1-D Neumann Laplacian is singular (A * ones = 0); b = e_0 is not in
 * its range: no x exists, so the solver must not say converged. */
static void test_inconsistent(void)
{
    enum { n = 50 };
    test_coo c = {.rows = n, .cols = n};
    for (int i = 0; i < n; i++) {
        test_coo_add(&c, i, i, i == 0 || i == n - 1 ? 1 : 2);
        if (i > 0) test_coo_add(&c, i, i - 1, -1);
        if (i < n - 1) test_coo_add(&c, i, i + 1, -1);
    }
    adia_matrix *A = test_coo_matrix(&c);
    double b[n] = {1}, x[n];
    for (int m = 0; m < 3; m++) {
        adia_solve_info in;
        solve_b(A, b, x, (adia_solver)m, 500, 1e-8, &in);
        CHECK(!in.converged && !(in.residual <= 1e-8), "inconsistent, %s: converged %d, "
              "residual %.3g, stop '%s'", adia_solver_name((adia_solver)m), in.converged, in.residual,
              in.stop);
    }
    adia_matrix_destroy(A);
}

/* rtol below machine precision: the residual stagnates near 1e-16; the
 * answer is "not converged" with a finite residual, never success. */
static void test_stagnation(void)
{
    adia_matrix *A = test_generate("lap2d5:30");
    if (!A) return;
    double b[900], x[900];
    for (int i = 0; i < 900; i++) b[i] = 1 + i % 7;
    for (int m = 0; m < 3; m++) {
        adia_solve_info in;
        solve_b(A, b, x, (adia_solver)m, 3000, 1e-30, &in);
        CHECK(!in.converged && isfinite(in.residual) && in.residual > 1e-30 && in.residual < 1e-10,
              "stagnation, %s: converged %d, residual %.3g, stop '%s'", adia_solver_name((adia_solver)m),
              in.converged, in.residual, in.stop);
    }
    adia_matrix_destroy(A);
}

/* A plan alone (no matrix handle): a CPU plan solves as adia_solve does,
 * Jacobi taken from the plan's format; bad plans are errors. */
static void test_plan_solve(void)
{
    adia_matrix *A = test_generate("band:2000,3");
    if (!A) return;
    adia_plan *P = NULL;
    adia_plan_hints h = {.expected_calls = 100};
    CHECK_OK(adia_plan_create(A, &h, &P));
    double *b = malloc(2000 * sizeof *b), *x = calloc(2000, sizeof *x), *one = malloc(2000 * 8);
    for (int i = 0; i < 2000; i++) one[i] = 1;
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
    adia_matrix_destroy(A);   /* the plan keeps what it needs */
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.method = ADIA_SOLVE_BICGSTAB;
    o.jacobi = 1;
    adia_solve_info in;
    CHECK_OK(adia_plan_solve(P, b, x, &o, &in, NULL));
    double err = 0;
    for (int i = 0; i < 2000; i++) err = fmax(err, fabs(x[i] - 1));
    CHECK(in.converged && err < 1e-6, "plan alone: %s, max error %.3g", in.stop, err);
    CHECK_ERR(adia_plan_solve(P, NULL, x, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "b or x is NULL");
    CHECK_ERR(adia_plan_solve(NULL, b, x, &o, &in, NULL), ADIA_ERR_INVALID_HANDLE, "live plan");
    o.method = (adia_solver)9;
    CHECK_ERR(adia_plan_solve(P, b, x, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "unknown method 9");
    adia_plan_destroy(P);
    free(b);
    free(x);
    free(one);
}

/* A matrix-free operator: the reference SpMV; its reductions count calls. */
typedef struct count_ctx {
    const adia_matrix *A;
    int sums, maxes, agrees;
} count_ctx;

static adia_status ref_apply(void *ctx, double alpha, const double *x, double *y)
{
    return adia_matrix_spmv(((count_ctx *)ctx)->A, alpha, x, 0.0, y);
}
static void count_sum(void *ctx, double *v, int n) { (void)v; (void)n; ((count_ctx *)ctx)->sums++; }
static void count_max(void *ctx, double *v, int n) { (void)v; (void)n; ((count_ctx *)ctx)->maxes++; }
static adia_status count_agree(void *ctx, adia_status s)
{
    ((count_ctx *)ctx)->agrees++;
    return s;
}

/* adia_solve_operator agrees with adia_solve (same methods over another
 * SpMV of the same matrix), reduces through the hooks, refuses bad input. */
static void test_operator(void)
{
    adia_matrix *A = test_generate("lap2d5:20");
    if (!A) return;
    int32_t n = adia_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x),
           *xr = calloc((size_t)n, sizeof *xr), *diag = malloc((size_t)n * sizeof *diag);
    for (int32_t i = 0; i < n; i++) {
        b[i] = 1.0 + i % 7;
        diag[i] = 4;
    }
    count_ctx c = {.A = A};
    adia_operator op = {.n = n, .apply = ref_apply, .sum = count_sum, .max = count_max,
                        .agree = count_agree, .diag = diag, .max_abs = 4, .ctx = &c};
    for (int m = 0; m < 3; m++) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = (adia_solver)m;
        o.jacobi = m == 1;
        adia_solve_info in, ir;
        memset(x, 0, (size_t)n * sizeof *x);
        memset(xr, 0, (size_t)n * sizeof *xr);
        CHECK_OK(adia_solve_operator(&op, b, x, &o, &in));
        CHECK_OK(adia_solve(A, NULL, b, xr, &o, &ir));
        CHECK(in.converged && ir.converged && abs(in.iterations - ir.iterations) <= 1 &&
              test_rel_err(x, xr, n) < 1e-9 && in.spmvs > in.iterations && !in.format[0],
              "%s: operator %d its (%s), adia_solve %d its, rel diff %g",
              adia_solver_name(o.method), in.iterations, in.stop, ir.iterations,
              test_rel_err(x, xr, n));
    }
    /* every solve reduces its maxima (the start's) and its sums through
     * the hooks; BiCGSTAB no longer takes norms by their maximum first */
    CHECK(c.sums > 100 && c.maxes >= 3 && c.agrees >= 3, "hooks called %d, %d, %d times",
          c.sums, c.maxes, c.agrees);
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.jacobi = 1;
    op.diag = NULL;
    CHECK_ERR(adia_solve_operator(&op, b, x, &o, NULL), ADIA_ERR_INVALID_ARG, "diagonal of A");
    op.diag = diag;
    diag[7] = 0;
    op.first = 100;
    CHECK_ERR(adia_solve_operator(&op, b, x, &o, NULL), ADIA_ERR_INVALID_ARG, "A(107,107)");
    b[3] = NAN;
    CHECK_ERR(adia_solve_operator(&op, b, x, NULL, NULL), ADIA_ERR_INVALID_ARG, "b[103]");
    op.apply = NULL;
    CHECK_ERR(adia_solve_operator(&op, b, x, NULL, NULL), ADIA_ERR_INVALID_ARG, "apply is NULL");
    free(b);
    free(x);
    free(xr);
    free(diag);
    adia_matrix_destroy(A);
}

/* The same solve at 1 and 3 threads (the count also follows the load:
 * docs/threads.md) gives the same x bit for bit and the same iterations:
 * the sums are taken in fixed chunks (above 65536 rows the loops run in
 * parallel). */
static void test_thread_count(void)
{
    adia_matrix *A = test_generate("lap3d7:50");
    if (!A) return;
    int32_t n = adia_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x[2];
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.25;
    static const adia_solver methods[] = {ADIA_SOLVE_CG, ADIA_SOLVE_BICGSTAB, ADIA_SOLVE_GMRES};
    int keep = omp_get_max_threads();
    for (int m = 0; m < 3; m++) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = methods[m];
        o.max_iter = 60;
        adia_solve_info in[2];
        int used = 1;
        for (int t = 0; t < 2; t++) {
            omp_set_num_threads(t == 0 ? 1 : 3);
            if (t == 1) used = adia_threads();
            x[t] = calloc((size_t)n, sizeof *x[t]);
            CHECK_OK(adia_solve(A, NULL, b, x[t], &o, &in[t]));
        }
        if (used < 2)   /* one core, or the others busy: nothing to compare */
            printf("test_thread_count: %s at 1 thread only (%d free)\n",
                   adia_solver_name(o.method), used);
        else CHECK(in[0].iterations == in[1].iterations && !memcmp(x[0], x[1], (size_t)n * sizeof *x[0]),
              "%s: 1 and 3 threads give %d / %d iterations and %s x", adia_solver_name(o.method),
              in[0].iterations, in[1].iterations,
              memcmp(x[0], x[1], (size_t)n * sizeof *x[0]) ? "different" : "the same");
        free(x[0]);
        free(x[1]);
    }
    omp_set_num_threads(keep);
    free(b);
    adia_matrix_destroy(A);
}

/* info's times (adia.h): setup_ms finite and >= 0, time_ms > 0 when it
 * iterated (0 when not), and the two within the call's wall clock as
 * measured here around it (they add up to the call's own). */
static void check_times(const char *what, const adia_solve_info *in, double wall_ms)
{
    CHECK(isfinite(in->setup_ms) && in->setup_ms >= 0, "%s: setup_ms %g", what, in->setup_ms);
    CHECK(in->iterations > 0 ? in->time_ms > 0 : in->time_ms == 0, "%s: %d iterations in %g ms",
          what, in->iterations, in->time_ms);
    CHECK(in->setup_ms + in->time_ms <= wall_ms * (1 + 1e-9),
          "%s: set-up %g + iterations %g ms exceed the call's wall clock %g ms", what,
          in->setup_ms, in->time_ms, wall_ms);
}

/* Setup is reported apart from the iterations (issue 28 item 5) by every
 * entry point: adia_solve with its own plan (setup_ms then holds the
 * planning: more than 0) and with a given one, adia_plan_solve on a CPU
 * plan, adia_solve_operator, and b = 0 (no iteration: time_ms 0). */
static void test_setup_apart(void)
{
    adia_matrix *A = test_generate("lap2d5:60");
    if (!A) return;
    int32_t n = adia_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x),
           *one = malloc((size_t)n * sizeof *one), *diag = malloc((size_t)n * sizeof *diag);
    for (int32_t i = 0; i < n; i++) {
        one[i] = 1;
        diag[i] = 4;
    }
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
    adia_solve_info in;
    double t = test_seconds();
    CHECK_OK(adia_solve(A, NULL, b, x, NULL, &in));
    check_times("adia_solve, own plan", &in, (test_seconds() - t) * 1e3);
    CHECK(in.converged && in.setup_ms > 0, "adia_solve, own plan: %s, set-up %g ms (the "
          "planning is in it)", in.stop, in.setup_ms);
    adia_plan *P = NULL;
    adia_plan_hints h = {.expected_calls = 100};
    CHECK_OK(adia_plan_create(A, &h, &P));
    memset(x, 0, (size_t)n * sizeof *x);
    t = test_seconds();
    CHECK_OK(adia_solve(A, P, b, x, NULL, &in));
    check_times("adia_solve, given plan", &in, (test_seconds() - t) * 1e3);
    CHECK(in.converged && in.iterations > 0, "adia_solve, given plan: %s", in.stop);
    memset(x, 0, (size_t)n * sizeof *x);
    t = test_seconds();
    CHECK_OK(adia_plan_solve(P, b, x, NULL, &in, NULL));
    check_times("adia_plan_solve (CPU plan)", &in, (test_seconds() - t) * 1e3);
    CHECK(in.converged && in.iterations > 0, "adia_plan_solve: %s", in.stop);
    count_ctx c = {.A = A};
    adia_operator op = {.n = n, .apply = ref_apply, .diag = diag, .max_abs = 4, .ctx = &c};
    memset(x, 0, (size_t)n * sizeof *x);
    t = test_seconds();
    CHECK_OK(adia_solve_operator(&op, b, x, NULL, &in));
    check_times("adia_solve_operator", &in, (test_seconds() - t) * 1e3);
    CHECK(in.converged && in.iterations > 0, "adia_solve_operator: %s", in.stop);
    memset(b, 0, (size_t)n * sizeof *b);
    t = test_seconds();
    CHECK_OK(adia_solve(A, P, b, x, NULL, &in));
    check_times("b = 0", &in, (test_seconds() - t) * 1e3);
    CHECK(in.iterations == 0 && in.time_ms == 0, "b = 0: %d iterations in %g ms", in.iterations,
          in.time_ms);
    adia_plan_destroy(P);
    free(b);
    free(x);
    free(one);
    free(diag);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_setup_apart();
    test_operator();
    test_plan_solve();
    test_scaled_systems();
    test_extreme_b();
    test_nan_matrix();
    test_inconsistent();
    test_stagnation();
    test_converges();
    test_jacobi_helps();
    test_stops();
    test_restart();
    test_given_plan();
    test_bad_args();
    test_thread_count();
    return TEST_END();
}
