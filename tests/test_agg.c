/* test_agg.c -- multigrid by smoothed aggregation of consecutive rows
 * (kind "agg") on CPU plans:
 * - symmetric (x'My = y'Mx) and positive on biharm1d, a banded SPD matrix,
 *   a 2D Laplacian and a 1D clamped beam of two unknowns a node (built
 *   here), with the default degree and degree 4;
 * - CG through adia_solve on biharm1d:2000 converges (checked by the
 *   test's own residual) in under a tenth of CG + Jacobi's iterations,
 *   and the count grows slowly with n (biharm1d:8000 at most 3x: a
 *   fourth-order operator keeps smoothed aggregation n-dependent);
 * - a matrix of 128 rows or fewer is one level, M = A^-1 (CG: 1 iteration);
 *   max_levels stops early, and is refused where that leaves a coarsest
 *   level past the dense solve's 4096 rows;
 * - auto: agg on what mg sees as a strip 2 points wide (biharm1d, a 2 x N
 *   Laplacian), mg on other grids, jacobi on a small one;
 * - errors: mg's options, a 3D grid's band (its products past the set-up's
 *   budget of multiplications, refused before they run), a zero diagonal
 *   entry (named), an indefinite A (GPU plans: test_gpu_agg.c);
 * - a coarsest level not SPD in double only: set up with a shift, M SPD;
 *   one indefinite by far: refused. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static adia_plan *cpu_plan(const adia_matrix *A)
{
    adia_plan *P = NULL;
    adia_plan_hints h = {.device = 0, .expected_calls = 100};
    CHECK_OK(adia_plan_create(A, &h, &P));
    return P;
}

static adia_precond *make_agg(adia_plan *P, int degree, int max_levels)
{
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "agg";
    o.degree = degree;
    o.max_levels = max_levels;
    adia_precond *M = NULL;
    CHECK_OK(adia_precond_create(P, &o, &M));
    return M;
}

/* A clamped Euler-Bernoulli beam of `nodes` interior nodes, cubic Hermite
 * elements (deflection and slope a node, interleaved): SPD, offsets -3..3. */
static adia_matrix *beam(int nodes)
{
    const int n = 2 * nodes;
    const double h = 1.0 / (nodes + 1);
    const double k[4][4] = {{12, 6 * h, -12, 6 * h},
                            {6 * h, 4 * h * h, -6 * h, 2 * h * h},
                            {-12, -6 * h, 12, -6 * h},
                            {6 * h, 2 * h * h, -6 * h, 4 * h * h}};
    double *a = calloc((size_t)n * n, sizeof *a);
    for (int e = 0; a && e <= nodes; e++)   /* element e joins nodes e - 1 and e */
        for (int p = 0; p < 4; p++)
            for (int q = 0; q < 4; q++) {
                const int i = 2 * (e - 1) + p, j = 2 * (e - 1) + q;
                if (i >= 0 && i < n && j >= 0 && j < n) a[i * n + j] += k[p][q] / (h * h * h);
            }
    adia_matrix *A = a ? test_dense_matrix(n, n, a) : NULL;
    free(a);
    return A;
}

/* CG + M to 1e-8 on b = A ones: the iterations (-1: not converged), the
 * answer checked by this test's own residual. */
static int cg_iterations(adia_matrix *A, adia_plan *P, adia_precond *M, int jacobi)
{
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.max_iter = 200000;
    o.precond = M;
    o.jacobi = jacobi;
    return test_cg_ones(A, P, o, 1.01e-8, NULL);
}

static void test_symmetric(void)
{
    const char *specs[] = {"biharm1d:1500", "band:3000,4,sym", "lap2d5:60x41", NULL};
    for (int k = 0; k < 4; k++) {
        adia_matrix *A = specs[k] ? test_generate(specs[k]) : beam(700);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        for (int degree = 0; P && degree <= 4; degree += 4) {
            adia_precond *M = make_agg(P, degree, 0);
            char label[64];
            snprintf(label, sizeof label, "agg %s degree %d", specs[k] ? specs[k] : "beam 700",
                     degree ? degree : 2);
            if (M) test_precond_spd(M, adia_matrix_rows(A), 0, 7 + k, label);
            adia_precond_destroy(M);
        }
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

static void test_convergence(void)
{
    int agg[2] = {-1, -1};
    const char *specs[2] = {"biharm1d:2000", "biharm1d:8000"};
    for (int k = 0; k < 2; k++) {
        adia_matrix *A = test_generate(specs[k]);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        adia_precond *M = P ? make_agg(P, 0, 0) : NULL;
        if (M) {
            char buf[2048];
            CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
            CHECK(test_contains(buf, "smoothed aggregation") && test_contains(buf, "level 3:") &&
                      test_contains(buf, "dense inverse"),
                  "%s: explain: %s", specs[k], buf);
            agg[k] = cg_iterations(A, P, M, 0);
        }
        if (k == 0 && M) {
            const int jac = cg_iterations(A, P, NULL, 1);
            printf("%s: CG + agg %d iterations, CG + Jacobi %d\n", specs[k], agg[k], jac);
            CHECK(agg[k] > 0 && jac > 10 * agg[k], "%s: agg %d, Jacobi %d iterations", specs[k],
                  agg[k], jac);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
    printf("biharm1d:8000: CG + agg %d iterations\n", agg[1]);
    CHECK(agg[1] > 0 && agg[1] <= 3 * agg[0], "CG + agg: %d iterations at 2000 rows, %d at 8000",
          agg[0], agg[1]);
}

static void test_levels(void)
{
    adia_matrix *A = test_generate("biharm1d:100");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond *M = P ? make_agg(P, 0, 0) : NULL;
    if (M) {
        char buf[1024];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, "agg: 1 levels"), "100 rows: one level: %s", buf);
        CHECK(cg_iterations(A, P, M, 0) <= 1, "M = A^-1: one CG iteration");
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    A = test_generate("biharm1d:3000");
    P = A ? cpu_plan(A) : NULL;
    M = P ? make_agg(P, 0, 4) : NULL;   /* 3000, 1500, 750, 375: dense 375 rows */
    if (M) {
        char buf[1024];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, "agg: 4 levels") && test_contains(buf, "level 3: 375 rows"),
              "max_levels 4: %s", buf);
        CHECK(cg_iterations(A, P, M, 0) > 0, "max_levels 4: CG converges");
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    A = test_generate("biharm1d:5000");   /* one level of 5000 rows: past the dense solve */
    P = A ? cpu_plan(A) : NULL;
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "agg";
    o.max_levels = 1;
    M = NULL;
    if (P) CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "dense direct solve");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* CG's default, auto: agg on what mg sees as a strip 2 points wide
 * (biharm1d, a 2 x N Laplacian), mg on other grids, jacobi elsewhere. */
static void test_auto(void)
{
    static const struct { const char *spec, *kind; int most; } cases[] = {
        {"biharm1d:3000", "agg", 700}, {"lap2d5:2x3000", "agg", 8},
        {"lap2d5:200x150", "mg", 10},  {"lap3d7:40", "jacobi", 200},
    };
    for (int k = 0; k < 4; k++) {
        adia_matrix *A = test_generate(cases[k].spec);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        adia_precond_options o;
        adia_precond_options_default(&o);
        o.kind = "auto";
        adia_precond *M = NULL;
        if (P) CHECK_OK(adia_precond_create(P, &o, &M));
        if (M) {
            char buf[2048];
            CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
            const int its = cg_iterations(A, P, M, 0);
            CHECK(!strcmp(adia_precond_kind(M), cases[k].kind) && its > 0 &&
                      its <= cases[k].most,
                  "%s: auto made %s (want %s), CG %d iterations (at most %d): %s", cases[k].spec,
                  adia_precond_kind(M), cases[k].kind, its, cases[k].most, buf);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

static void test_errors(void)
{
    adia_matrix *A = test_generate("biharm1d:500");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "agg";
    adia_precond *M = NULL;
    o.cycle = 'w';
    if (P) CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "mg's options");
    o.cycle = 'v';
    o.smoother = "jacobi";
    if (P) CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "mg's options");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    /* a 3D grid's band: its products are refused before they run, past
     * the set-up's budget of multiplications (took 6 s before it) */
    A = test_generate("lap3d7:24");
    P = A ? cpu_plan(A) : NULL;
    o.smoother = NULL;
    const double t0 = test_seconds();
    if (P) CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_UNSUPPORTED, "not banded enough");
    printf("lap3d7:24: agg refused in %.2f s\n", test_seconds() - t0);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    /* a zero diagonal entry (row 300 of 400), an indefinite A */
    double *a = calloc(400 * 400, sizeof *a);
    for (int i = 0; a && i < 400; i++) {
        a[i * 400 + i] = i == 300 ? 0 : 4;
        if (i > 0) a[i * 400 + i - 1] = a[(i - 1) * 400 + i] = -1;
    }
    A = a ? test_dense_matrix(400, 400, a) : NULL;
    P = A ? cpu_plan(A) : NULL;
    o.smoother = NULL;
    if (P) CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "A(300,300) > 0");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    for (int i = 0; a && i < 400; i++) a[i * 400 + i] = i < 200 ? 4 : -4;   /* indefinite */
    A = a ? test_dense_matrix(400, 400, a) : NULL;
    P = A ? cpu_plan(A) : NULL;
    if (P) CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "> 0");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    free(a);
}

/* The coarsest level not SPD in double: K = D2' D2 (D2 the second
 * difference, so K's null space holds the linear functions) + 1e-17 I is
 * SPD, but its coarsest Galerkin matrix's least eigenvalues lie under
 * double's rounding: set up with the shifted Cholesky (explain says so),
 * M symmetric positive definite.  An A indefinite by far (a tridiagonal
 * 2, -1.5: eigenvalues down to -1) is still refused (a coarse level's
 * diagonal turns negative). */
static void test_coarsest_shift(void)
{
    const int n = 1000;
    double *a = calloc((size_t)n * n, sizeof *a);
    static const double d2[3] = {1, -2, 1};
    for (int r = 0; a && r + 2 < n; r++)   /* K += row r of D2, outer product */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) a[(size_t)(r + i) * n + r + j] += d2[i] * d2[j];
    for (int i = 0; a && i < n; i++) a[(size_t)i * n + i] += 1e-17;
    adia_matrix *A = a ? test_dense_matrix(n, n, a) : NULL;
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond *M = P ? make_agg(P, 0, 0) : NULL;
    if (M) {
        char buf[4096];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        printf("K + 1e-17 I: %s", strstr(buf, "dense inverse") ? strstr(buf, "dense inverse") : buf);
        test_precond_spd(M, n, 0, 31, "agg on K + 1e-17 I");
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    for (int i = 0; a && i < n * n; i++) a[i] = 0;
    for (int i = 0; a && i < n; i++) {
        a[(size_t)i * n + i] = 2;
        if (i > 0) a[(size_t)i * n + i - 1] = a[(size_t)(i - 1) * n + i] = -1.5;
    }
    A = a ? test_dense_matrix(n, n, a) : NULL;
    P = A ? cpu_plan(A) : NULL;
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "agg";
    M = NULL;
    if (P) CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG,
                     "positive definite");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    free(a);
}

int main(void)
{
    TEST_BEGIN();
    test_coarsest_shift();
    test_symmetric();
    test_convergence();
    test_levels();
    test_auto();
    test_errors();
    return TEST_END();
}
