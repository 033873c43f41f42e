/* test_plan_csr.c -- adia_plan_create_csr (a plan of the caller's host
 * CSR arrays) and adia_solve with A NULL (the plan as the matrix):
 * - canonical double arrays: the plan's products are adia_plan_create's
 *   bits for the same matrix, its explain names the matrix, and changing
 *   the arrays afterwards changes nothing (no reference kept);
 * - arrays with unsorted and repeated columns, or float values: copied and
 *   sorted as adia_matrix_create_csr does (the same products);
 * - errors: NULL out, rowptr not ending at nnz, a negative size, a column
 *   out of range;
 * - adia_solve(NULL, plan, ...) on a CPU plan: adia_solve(A, plan, ...)'s
 *   x and iterations, with Jacobi and with a preconditioner object; A and
 *   plan both NULL is an error.  (GPU plans: test_gpu_solve_precond.c.) */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* A's CSR arrays copied into rowptr / colind / values (caller frees). */
static void arrays_of(const adia_matrix *A, int64_t **rp, int32_t **ci, double **v)
{
    adia_csr_view c;
    CHECK_OK(adia_matrix_csr(A, &c));
    *rp = malloc(((size_t)c.rows + 1) * sizeof **rp);
    *ci = malloc(((size_t)c.nnz + 1) * sizeof **ci);
    *v = malloc(((size_t)c.nnz + 1) * sizeof **v);
    memcpy(*rp, c.rowptr, ((size_t)c.rows + 1) * sizeof **rp);
    memcpy(*ci, c.colind, (size_t)c.nnz * sizeof **ci);
    memcpy(*v, c.values, (size_t)c.nnz * sizeof **v);
}

/* y = P x for x = 1, 2, 3, ... (n rows). */
static double *product(adia_plan *P, int32_t n)
{
    double *x = malloc(((size_t)n + 1) * sizeof *x), *y = malloc(((size_t)n + 1) * sizeof *y);
    for (int32_t i = 0; i < n; i++) x[i] = 1 + i % 7;
    CHECK_OK(adia_spmv(P, 1.0, x, 0.0, y));
    free(x);
    return y;
}

static adia_plan *cpu_plan_of(const adia_matrix *A)
{
    adia_plan_hints h = {.expected_calls = 10, .vtype = ADIA_DOUBLE, .device = 0};
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create(A, &h, &P));
    return P;
}

static void test_canonical(void)
{
    adia_matrix *A = test_generate("lap2d5:37x29");
    if (!A) return;
    const int32_t n = adia_matrix_rows(A);
    int64_t *rp;
    int32_t *ci;
    double *v;
    arrays_of(A, &rp, &ci, &v);
    adia_plan_hints h = {.expected_calls = 10, .vtype = ADIA_DOUBLE, .device = 0};
    adia_plan *P = NULL, *Q = cpu_plan_of(A);
    CHECK_OK(adia_plan_create_csr(n, n, adia_matrix_nnz(A), rp, ci, v, ADIA_DOUBLE,
                                  "my_matrix", &h, &P));
    if (P && Q) {
        double *yp = product(P, n), *yq = product(Q, n);
        CHECK(!memcmp(yp, yq, (size_t)n * sizeof *yp), "canonical arrays: the products differ "
              "from adia_plan_create's");
        char buf[4096];
        CHECK_OK(adia_plan_explain(P, buf, sizeof buf));
        CHECK(strstr(buf, "my_matrix") != NULL, "explain names the matrix: %s", buf);
        for (int64_t k = 0; k < adia_matrix_nnz(A); k++) v[k] = 1e6;   /* no reference kept */
        double *y2 = product(P, n);
        CHECK(!memcmp(y2, yq, (size_t)n * sizeof *y2), "the arrays changed after: the plan too");
        free(yp), free(yq), free(y2);
    }
    adia_plan_destroy(P), adia_plan_destroy(Q);
    free(rp), free(ci), free(v);
    adia_matrix_destroy(A);
}

/* Row 1's columns reversed and an entry repeated, and float values: the
 * copy path (sorted, repeats summed), the same products as the matrix. */
static void test_copied(void)
{
    const int64_t rp[4] = {0, 2, 6, 8};
    const int32_t ci[8] = {0, 1, 2, 1, 0, 1, 1, 2};
    const double v[8] = {4, -1, -1, 3, -1, 1, -1, 4};   /* row 1: 3 + 1 at column 1 */
    const float vf[8] = {4, -1, -1, 3, -1, 1, -1, 4};
    const double dense[9] = {4, -1, 0, -1, 4, -1, 0, -1, 4};
    adia_matrix *A = test_dense_matrix(3, 3, dense);
    adia_plan *Q = A ? cpu_plan_of(A) : NULL;
    adia_plan_hints h = {.expected_calls = 10, .vtype = ADIA_DOUBLE, .device = 0};
    for (int t = 0; t < 2 && Q; t++) {
        adia_plan *P = NULL;
        CHECK_OK(adia_plan_create_csr(3, 3, 8, rp, ci, t ? (const void *)vf : (const void *)v,
                                      t ? ADIA_FLOAT : ADIA_DOUBLE, NULL, &h, &P));
        if (P) {
            double *yp = product(P, 3), *yq = product(Q, 3);
            CHECK(!memcmp(yp, yq, 3 * sizeof *yp), "%s arrays with unsorted, repeated columns: "
                  "%g %g %g, want %g %g %g", t ? "float" : "double", yp[0], yp[1], yp[2], yq[0],
                  yq[1], yq[2]);
            free(yp), free(yq);
        }
        adia_plan_destroy(P);
    }
    adia_plan_destroy(Q);
    adia_matrix_destroy(A);
}

static void test_errors(void)
{
    const int64_t rp[3] = {0, 1, 2}, bad_end[3] = {0, 1, 3};
    const int32_t ci[2] = {0, 1}, out_of_range[2] = {0, 5};
    const double v[2] = {1, 2};
    adia_plan *P = NULL;
    CHECK_ERR(adia_plan_create_csr(2, 2, 2, rp, ci, v, ADIA_DOUBLE, NULL, NULL, NULL),
              ADIA_ERR_INVALID_ARG, "plan is NULL");
    CHECK_ERR(adia_plan_create_csr(2, 2, 2, bad_end, ci, v, ADIA_DOUBLE, NULL, NULL, &P),
              ADIA_ERR_INVALID_MATRIX, "must be 0 and nnz");
    CHECK(P == NULL, "no plan on error");
    CHECK_ERR(adia_plan_create_csr(-1, 2, 2, rp, ci, v, ADIA_DOUBLE, NULL, NULL, &P),
              ADIA_ERR_INVALID_ARG, "negative size");
    CHECK_ERR(adia_plan_create_csr(2, 2, 2, rp, NULL, v, ADIA_DOUBLE, NULL, NULL, &P),
              ADIA_ERR_INVALID_ARG, "array is NULL");
    CHECK(adia_plan_create_csr(2, 2, 2, rp, out_of_range, v, ADIA_DOUBLE, NULL, NULL, &P) !=
              ADIA_OK && P == NULL,
          "a column out of range is refused");
}

/* adia_solve(NULL, P) = adia_solve(A, P) on a CPU plan. */
static void test_solve_without_matrix(void)
{
    adia_matrix *A = test_generate("lap2d5:40");
    adia_plan *P = A ? cpu_plan_of(A) : NULL;
    if (!P) return;
    const int32_t n = adia_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x1 = calloc((size_t)n, sizeof *x1);
    double *x2 = calloc((size_t)n, sizeof *x2), *one = malloc((size_t)n * sizeof *one);
    for (int32_t i = 0; i < n; i++) one[i] = 1;
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
    adia_precond *M = NULL;
    adia_precond_options po;
    adia_precond_options_default(&po);
    po.kind = "cheb";
    CHECK_OK(adia_precond_create(P, &po, &M));
    for (int k = 0; k < 3; k++) {   /* none, the Jacobi flag, a preconditioner */
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.jacobi = k == 1;
        o.precond = k == 2 ? M : NULL;
        adia_solve_info i1, i2;
        memset(x1, 0, (size_t)n * sizeof *x1), memset(x2, 0, (size_t)n * sizeof *x2);
        CHECK_OK(adia_solve(A, P, b, x1, &o, &i1));
        CHECK_OK(adia_solve(NULL, P, b, x2, &o, &i2));
        CHECK(i1.converged && i2.converged && i1.iterations == i2.iterations &&
                  !memcmp(x1, x2, (size_t)n * sizeof *x1),
              "case %d: with A %s in %d, without %s in %d", k, i1.stop, i1.iterations, i2.stop,
              i2.iterations);
    }
    CHECK_ERR(adia_solve(NULL, NULL, b, x1, NULL, NULL), ADIA_ERR_INVALID_HANDLE, "");
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    free(b), free(x1), free(x2), free(one);
}

int main(void)
{
    TEST_BEGIN();
    test_canonical();
    test_copied();
    test_errors();
    test_solve_without_matrix();
    return TEST_END();
}
