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

int main(void)
{
    TEST_BEGIN();
    test_apply_cpu();
    test_jacobi_zero();
    return TEST_END();
}
