/* update_cases.h -- what test_plan_update.c and test_gpu_plan_update.c
 * share: the awkward matrices, new values of the same pattern, and the
 * changed patterns an update must refuse (issue 28, item 6). */
#ifndef ADIA_UPDATE_CASES_H
#define ADIA_UPDATE_CASES_H

#include "internal.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct update_case {
    adia_matrix *A;
    const char *what;
} update_case;

/* Random entries of density d (every third row empty) and explicit 0.0,
 * -0.0 at a few places. */
static adia_matrix *update_random(uint64_t seed, int32_t rows, int32_t cols, double d)
{
    test_coo m = {.rows = rows, .cols = cols};
    uint64_t st = seed;
    for (int32_t i = 0; i < rows; i++)
        for (int32_t j = 0; j < cols && i % 3 != 1; j++)
            if (fabs(test_rand(&st)) < d) test_coo_add(&m, i, j, i % 4 == 2 && j % 3 == 0 ? (j % 2 ? -0.0 : 0.0)
                                                                          : test_rand(&st) + 2.0);
    return test_coo_matrix(&m);
}

/* Diagonals at offsets off[0..n), those leaving the matrix included, some
 * entries missing (gap), an explicit zero on one. */
static adia_matrix *update_diagonals(int32_t rows, int32_t cols, const int32_t *off, int n, int gap)
{
    test_coo m = {.rows = rows, .cols = cols};
    uint64_t st = 3;
    for (int k = 0; k < n; k++)
        for (int32_t i = 0; i < rows; i++) {
            int64_t j = (int64_t)i + off[k];
            if (j < 0 || j >= cols || (gap && off[k] == 0 && i % 4 != 0 && i >= rows / 2)) continue;
            test_coo_add(&m, i, j, i == 5 && k == 1 ? 0.0 : test_rand(&st) + 3.0);
        }
    return test_coo_matrix(&m);
}

static update_case *update_cases(int *n)
{
    static const int32_t leave[] = {-70, -9, -1, 0, 2, 31, 90};
    static const int32_t crsd[] = {-2, 0, 3};   /* lone diagonal entries: scatter points */
    update_case *c = calloc(10, sizeof *c);
    int k = 0;
    c[k++] = (update_case){update_random(1, 37, 29, 0.3), "random 37 x 29"};
    c[k++] = (update_case){update_random(2, 23, 41, 0.3), "random 23 x 41"};
    c[k++] = (update_case){update_random(3, 1, 17, 0.6), "one row"};
    c[k++] = (update_case){update_diagonals(100, 120, leave, 7, 0), "leaving 100 x 120"};
    c[k++] = (update_case){update_diagonals(120, 100, leave, 7, 0), "leaving 120 x 100"};
    c[k++] = (update_case){update_diagonals(300, 300, crsd, 3, 1), "gappy 300"};
    c[k++] = (update_case){test_generate("lap3d7:9"), "lap3d7:9"};
    test_coo e = {.rows = 6, .cols = 5};
    c[k++] = (update_case){test_coo_matrix(&e), "no entries"};
    *n = k;
    return c;
}

static void update_cases_free(update_case *c, int n)
{
    for (int k = 0; k < n; k++) adia_matrix_destroy(c[k].A);
    free(c);
}

/* A's pattern with new values: A's explicit zeros become nonzero, some
 * nonzeros become 0.0 or -0.0, the rest new random values. */
static adia_matrix *update_new_values(const adia_matrix *A, uint64_t seed)
{
    adia_matrix *B = NULL;
    CHECK_OK(adia_matrix_copy(A, &B));
    if (!B) return NULL;
    double *v = B->csr.values;
    uint64_t st = seed;
    for (int64_t k = 0; k < B->csr.nnz; k++) {
        double r = test_rand(&st) + 4.0;
        v[k] = v[k] == 0.0 ? r : k % 9 == 4 ? 0.0 : k % 13 == 6 ? -0.0 : r;
    }
    return B;
}

/* Is column c in row r of A? */
static int update_has(const adia_csr *A, int32_t r, int32_t c)
{
    for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++)
        if (A->colind[j] == c) return 1;
    return 0;
}

/* A free column of row r at or after `from` (cyclic), -1 when full. */
static int32_t update_free_col(const adia_csr *A, int32_t r, int32_t from)
{
    for (int32_t t = 0; t < A->cols; t++) {
        int32_t c = (from + t) % A->cols;
        if (!update_has(A, r, c)) return c;
    }
    return -1;
}

/* A's entries, with entry `drop` left out (-1: none) and (ar, ac) added
 * (ar -1: none). */
static adia_matrix *update_variant(const adia_csr *A, int64_t drop, int32_t ar, int32_t ac)
{
    test_coo m = {.rows = A->rows, .cols = A->cols};
    const double *v = A->values;
    for (int32_t r = 0; r < A->rows; r++)
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++)
            if (j != drop) test_coo_add(&m, r, A->colind[j], v[j]);
    if (ar >= 0) test_coo_add(&m, ar, ac, 1.5);
    return test_coo_matrix(&m);
}

/* One refused update: ADIA_ERR_INVALID_ARG naming row `row`. */
static void update_refused(adia_plan *P, adia_matrix *B, int32_t row, const char *fmt,
                           const char *what, const char *how)
{
    char needle[48];
    snprintf(needle, sizeof needle, "at row %d ", (int)row);
    adia_status s = adia_plan_update_values(P, B);
    CHECK(s == ADIA_ERR_INVALID_ARG && test_contains(adia_last_error(), needle),
          "%s on %s, %s: %s (%s), expected invalid argument naming \"%s\"", fmt, what, how,
          adia_status_string(s), adia_last_error(), needle);
    adia_matrix_destroy(B);
}

/* Changed patterns of A1 refused by plan P (made for A1's pattern). */
static void update_check_refusals(adia_plan *P, const adia_matrix *A1, const char *fmt,
                                  const char *what)
{
    const adia_csr *A = &A1->csr;
    int32_t r1 = -1, r2 = -1;   /* a row with an entry and a free column; another free row */
    for (int32_t r = 0; r < A->rows && r1 < 0; r++)
        if (A->rowptr[r + 1] > A->rowptr[r] && update_free_col(A, r, 0) >= 0) r1 = r;
    for (int32_t r = A->rows - 1; r >= 0 && r2 < 0; r--)
        if (r != r1 && update_free_col(A, r, 0) >= 0) r2 = r;
    if (r1 >= 0) {   /* one column moved in row r1 */
        int64_t j = A->rowptr[r1];
        update_refused(P, update_variant(A, j, r1, update_free_col(A, r1, A->colind[j] + 1)), r1,
                       fmt, what, "a column moved");
    }
    if (r1 >= 0 || r2 >= 0) {   /* one entry added */
        int32_t r = r2 >= 0 ? r2 : r1;
        update_refused(P, update_variant(A, -1, r, update_free_col(A, r, 0)), r, fmt, what,
                       "an entry added");
    }
    if (r1 >= 0 && r2 >= 0) {   /* the same nnz, rowptr different */
        update_refused(P, update_variant(A, A->rowptr[r1], r2, update_free_col(A, r2, 0)),
                       r1 < r2 ? r1 : r2, fmt, what, "an entry to another row");
    }
    test_coo m = {.rows = A->rows + 1, .cols = A->cols};
    adia_matrix *B = test_coo_matrix(&m);
    CHECK_ERR(adia_plan_update_values(P, B), ADIA_ERR_DIMENSION, "the plan's");
    adia_matrix_destroy(B);
}

#endif
