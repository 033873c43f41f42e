/* test_precond.c -- the preconditioner object on CPU plans: the kinds'
 * apply against the definition, options and handle errors. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_apply_cpu(void)
{
    adia_matrix *A = test_generate("lap2d5:9");   /* diagonal 4 */
    if (!A) return;
    adia_plan *P = NULL;
    adia_plan_hints h = {.device = 0, .expected_calls = 10};
    CHECK_OK(adia_plan_create(A, &h, &P));
    const int32_t n = adia_plan_rows(P);
    double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z);
    for (int32_t i = 0; i < n; i++) r[i] = 1 + i % 5;
    static const char *kinds[] = {"none", "jacobi"};
    static const double scale[] = {1, 0.25};
    for (int k = 0; k < 2; k++) {
        adia_precond_options o;
        adia_precond_options_default(&o);
        o.kind = kinds[k];
        adia_precond *M = NULL;
        CHECK_OK(adia_precond_create(P, &o, &M));
        CHECK(strcmp(adia_precond_kind(M), kinds[k]) == 0, "kind %s", adia_precond_kind(M));
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        double err = 0;
        for (int32_t i = 0; i < n; i++) err = fmax(err, fabs(z[i] - scale[k] * r[i]));
        CHECK(err == 0, "%s: max error %g", kinds[k], err);
        char buf[256];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, kinds[k]), "explain: %s", buf);
        CHECK_ERR(adia_precond_apply(M, r, r, NULL), ADIA_ERR_INVALID_ARG, "overlap");
        adia_precond_destroy(M);
    }
    adia_precond_options o;
    adia_precond_options_default(&o);
    adia_precond *M = NULL;
    o.kind = "nosuch";
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "jacobi");
    CHECK(M == NULL, "no handle on error");
    o.kind = "jacobi";
    o.cycle = 'x';
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "cycle");
    o.cycle = 'v';
    o.float_levels = 4;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "float_levels 4");
    o.float_levels = -1;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "float_levels -1");
    o.kind = "mg";   /* ALL and COARSE: on a GPU plan only; cheb takes none of mg's options */
    o.float_levels = ADIA_FLOAT_LEVELS_COARSE;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_UNSUPPORTED, "on the CPU");
    o.float_levels = ADIA_FLOAT_LEVELS_ALL;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_UNSUPPORTED, "on the CPU");
    o.kind = "cheb";
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "float_levels");
    CHECK(M == NULL, "no handle on error");
    CHECK_ERR(adia_precond_apply(NULL, r, z, NULL), ADIA_ERR_INVALID_HANDLE, "preconditioner");
    CHECK(strcmp(adia_precond_kind(NULL), "") == 0, "kind of NULL");
    free(r);
    free(z);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* A zero on the diagonal: Jacobi refuses, naming the row. */
static void test_jacobi_zero(void)
{
    int64_t rowptr[] = {0, 1, 2, 3};
    int32_t col[] = {0, 2, 1};
    double val[] = {2, 1, 1};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_csr(3, 3, 3, rowptr, col, val, ADIA_DOUBLE, &A));
    if (!A) return;
    adia_plan *P = NULL;
    adia_plan_hints h = {.device = 0, .expected_calls = 1};
    CHECK_OK(adia_plan_create(A, &h, &P));
    adia_precond *M = NULL;
    CHECK_ERR(adia_precond_create(P, NULL, &M), ADIA_ERR_INVALID_ARG, "A(1,1)");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* "auto": mg on a grid matrix whose longest edge reaches MG_AUTO_MIN_EDGE
 * (128), jacobi where mg declines (no grid, or too small a grid to repay
 * it), none where jacobi declines too; the kind made is the kind reported,
 * explain says why the others were not, and a solve with it converges in
 * mg's few iterations. */
static void test_auto(void)
{
    static const struct { const char *spec; const char *kind, *why; } cases[] = {
        {"lap2d5:200x60", "mg", "auto: mg (A lies on a grid)"},
        {"lap3d7:17", "jacobi", "longest edge under 128"},
        {"random:3000,8", "jacobi", "not mg ("},
        {NULL, "none", "not jacobi ("},   /* the 3 x 3 matrix with a zero diagonal entry */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        adia_matrix *A = NULL;
        if (cases[c].spec) {
            A = test_generate(cases[c].spec);
        } else {
            int64_t rowptr[] = {0, 1, 2, 3};
            int32_t col[] = {1, 0, 2};
            double val[] = {1, 1, 1};
            CHECK_OK(adia_matrix_create_csr(3, 3, 3, rowptr, col, val, ADIA_DOUBLE, &A));
        }
        adia_plan *P = NULL;
        adia_plan_hints h = {.device = 0, .expected_calls = 10};
        if (A) CHECK_OK(adia_plan_create(A, &h, &P));
        adia_precond_options o;
        adia_precond_options_default(&o);
        o.kind = "auto";
        adia_precond *M = NULL;
        if (P) CHECK_OK(adia_precond_create(P, &o, &M));
        if (M) {
            CHECK(!strcmp(adia_precond_kind(M), cases[c].kind), "%s: auto made %s, not %s",
                  cases[c].spec ? cases[c].spec : "zero diagonal", adia_precond_kind(M),
                  cases[c].kind);
            /* the plan's guess before the preconditioner: mg's few calls where auto makes mg */
            int64_t likely = -1;
            CHECK_OK(adia_solve_expected_calls(A, ADIA_SOLVE_CG, 1000, "auto", &likely));
            CHECK(likely == (!strcmp(cases[c].kind, "mg") ? 25 * (1 + 5) + 2 : 1002),
                  "%s: auto made %s, %lld calls expected", cases[c].spec ? cases[c].spec : "",
                  adia_precond_kind(M), (long long)likely);
            char buf[4096];
            CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
            CHECK(test_contains(buf, cases[c].why), "explain:\n%s", buf);
        }
        if (M && !strcmp(cases[c].kind, "mg")) {   /* and it is the multigrid a solve wants */
            const int32_t n = adia_plan_rows(P);
            double *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x), *one = malloc(n * sizeof *one);
            for (int32_t i = 0; i < n; i++) one[i] = 1;
            CHECK_OK(adia_spmv(P, 1.0, one, 0.0, b));
            adia_solve_options so;
            adia_solve_options_default(&so);
            so.precond = M;
            adia_solve_info info;
            CHECK_OK(adia_solve(A, P, b, x, &so, &info));
            CHECK(info.converged && info.iterations <= 12, "%s + auto: %d iterations",
                  cases[c].spec, info.iterations);
            free(b), free(x), free(one);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

/* The default's fall-back in the library: where the mg "auto" made stops
 * short (band:300,1 is not symmetric, CG + mg breaks down), adia_solve
 * solves again from x0 with Jacobi -- info.fallback says why, x and the
 * iterations are a Jacobi solve's from that x0; kind "mg" asked for by
 * name does not fall back, nor does auto's mg where it converges. */
static void test_fallback(void)
{
    adia_matrix *A = test_generate("band:300,1");
    adia_plan *P = NULL;
    adia_plan_hints h = {.device = 0, .expected_calls = 10};
    if (A) CHECK_OK(adia_plan_create(A, &h, &P));
    if (!P) return;
    const int32_t n = adia_plan_rows(P);
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xj = malloc(n * sizeof *xj);
    for (int32_t i = 0; i < n; i++) xj[i] = 1;
    CHECK_OK(adia_spmv(P, 1.0, xj, 0.0, b));
    adia_precond_options po;
    adia_precond_options_default(&po);
    for (int k = 0; k < 2; k++) {
        po.kind = k ? "mg" : "auto";
        adia_precond *M = NULL;
        CHECK_OK(adia_precond_create(P, &po, &M));
        if (!M) continue;
        CHECK(!strcmp(adia_precond_kind(M), "mg"), "band:300,1: %s made %s", po.kind,
              adia_precond_kind(M));
        adia_solve_options so;
        adia_solve_options_default(&so);
        so.precond = M;
        adia_solve_info info, ij;
        for (int32_t i = 0; i < n; i++) x[i] = xj[i] = 0.5;   /* x0 */
        CHECK_OK(adia_solve(A, P, b, x, &so, &info));
        if (k == 0) {
            adia_solve_options sj;
            adia_solve_options_default(&sj);
            sj.jacobi = 1;
            CHECK_OK(adia_solve(A, P, b, xj, &sj, &ij));
            CHECK(test_contains(info.fallback, "mg, stopped short after") &&
                      info.iterations == ij.iterations && !memcmp(x, xj, n * sizeof *x),
                  "auto's mg stopped short: fallback \"%s\", %d iterations (Jacobi's %d)",
                  info.fallback, info.iterations, ij.iterations);
        } else {
            CHECK(!info.fallback[0] && !info.converged, "mg by name: fallback \"%s\", %s",
                  info.fallback, info.stop);
        }
        adia_precond_destroy(M);
    }
    free(b), free(x), free(xj);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* adia_solve_expected_calls: max_iter's products, or mg's few. */
static void test_expected_calls(void)
{
    adia_matrix *A = test_generate("random:3000,8");   /* no grid: "auto" is not mg */
    if (!A) return;
    static const struct { adia_solver m; int max_iter; const char *pc; int64_t want; } cases[] = {
        {ADIA_SOLVE_CG, 1000, NULL, 1002},           {ADIA_SOLVE_CG, 1000, "none", 1002},
        {ADIA_SOLVE_CG, 1000, "jacobi", 1002},       {ADIA_SOLVE_CG, 1000, "cheb", 1002},
        {ADIA_SOLVE_CG, 1000, "auto", 1002},         {ADIA_SOLVE_CG, 1000, "mg", 152},
        {ADIA_SOLVE_BICGSTAB, 1000, "mg", 177},      {ADIA_SOLVE_BICGSTAB, 1000, "jacobi", 2002},
        {ADIA_SOLVE_GMRES, 1000, "mg", 152},         {ADIA_SOLVE_CG, 10, "mg", 12},
        {ADIA_SOLVE_CG, 0, "mg", 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int64_t calls = -1;
        CHECK_OK(adia_solve_expected_calls(A, cases[c].m, cases[c].max_iter, cases[c].pc, &calls));
        CHECK(calls == cases[c].want, "method %d, max_iter %d, %s: %lld calls, want %lld",
              (int)cases[c].m, cases[c].max_iter, cases[c].pc ? cases[c].pc : "NULL",
              (long long)calls, (long long)cases[c].want);
    }
    int64_t calls;
    CHECK_ERR(adia_solve_expected_calls(NULL, ADIA_SOLVE_CG, 10, NULL, &calls),
              ADIA_ERR_INVALID_ARG, "the matrix is NULL");
    CHECK_ERR(adia_solve_expected_calls(A, ADIA_SOLVE_CG, 10, NULL, NULL), ADIA_ERR_INVALID_ARG,
              "calls is NULL");
    CHECK_ERR(adia_solve_expected_calls(A, (adia_solver)7, 10, NULL, &calls),
              ADIA_ERR_INVALID_ARG, "method 7");
    CHECK_ERR(adia_solve_expected_calls(A, ADIA_SOLVE_CG, -1, NULL, &calls), ADIA_ERR_INVALID_ARG,
              "max_iter -1");
    CHECK_ERR(adia_solve_expected_calls(A, ADIA_SOLVE_CG, 10, "ilu", &calls),
              ADIA_ERR_INVALID_ARG, "unknown preconditioner \"ilu\"");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_fallback();
    test_apply_cpu();
    test_jacobi_zero();
    test_auto();
    test_expected_calls();
    return TEST_END();
}
