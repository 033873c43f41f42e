/* matrix.c -- the master matrix handle: creation from CSR/COO (sorting and
 * summing duplicates), transpose, export, reference SpMV. */
#include "internal.h"

#include <inttypes.h>

adia_status adia__matrix_check_handle(const adia_matrix *A, const char *func)
{
    if (!A) return adia__error(ADIA_ERR_INVALID_HANDLE, "%s: matrix is NULL", func);
    if (A->magic != ADIA_MAGIC_MATRIX)
        return adia__error(ADIA_ERR_INVALID_HANDLE,
                          "%s: not a live matrix handle (freed or uninitialised)",
                          func);
    return ADIA_OK;
}

adia_status adia__matrix_wrap(adia_csr *csr, adia_matrix **out)
{
    adia_matrix *A = adia__calloc(1, sizeof *A, "matrix handle");
    if (!A) {
        adia__csr_free(csr);
        return ADIA_ERR_NO_MEMORY;
    }
    A->magic = ADIA_MAGIC_MATRIX;
    A->csr = *csr;
    memset(csr, 0, sizeof *csr);
    *out = A;
    return ADIA_OK;
}

void adia_matrix_destroy(adia_matrix *A)
{
    if (!A || A->magic != ADIA_MAGIC_MATRIX) return;
    adia__csr_free(&A->csr);
    free(A->comments);
    A->magic = ADIA_MAGIC_DEAD;
    free(A);
}

/* Counting sort of triplets by key (row or column), stable: writes the
 * permuted (other, value) pairs and the key's pointer array. */
static adia_status bucket_sort(int64_t nnz, int32_t nkeys, const int32_t *key,
                               const int32_t *other, const double *val,
                               int64_t *ptr, int32_t *other_out, double *val_out)
{
    int64_t *next = adia__alloc((size_t)nkeys + 1, sizeof *next, "sort buckets");
    if (!next) return ADIA_ERR_NO_MEMORY;
    memset(ptr, 0, ((size_t)nkeys + 1) * sizeof *ptr);
    for (int64_t k = 0; k < nnz; k++) ptr[key[k] + 1]++;
    for (int32_t i = 0; i < nkeys; i++) ptr[i + 1] += ptr[i];
    memcpy(next, ptr, ((size_t)nkeys + 1) * sizeof *next);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t d = next[key[k]]++;
        other_out[d] = other[k];
        val_out[d] = val ? val[k] : 1.0;
    }
    free(next);
    return ADIA_OK;
}

static adia_status check_shape(int32_t rows, int32_t cols, int64_t nnz,
                               const char *func)
{
    if (rows < 0 || cols < 0 || nnz < 0)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "%s: negative size (rows %" PRId32 ", cols %" PRId32
                          ", nnz %" PRId64 ")", func, rows, cols, nnz);
    return ADIA_OK;
}

/* The value type is an enum passed as an int: 7 or -1 read the values as
 * doubles. */
static adia_status check_value_type(adia_value_type vt, const char *func)
{
    if (vt == ADIA_DOUBLE || vt == ADIA_FLOAT) return ADIA_OK;
    return adia__error(ADIA_ERR_INVALID_ARG, "%s: value type %d is neither ADIA_DOUBLE (0) nor "
                      "ADIA_FLOAT (1)", func, (int)vt);
}

/* Peak host bytes of adia_matrix_create_coo: the column pointers, the
 * column-sorted copy (row, value, column), the CSR result and, for float
 * values, their double copy -- all alive at once. */
static int64_t coo_peak_bytes(int32_t rows, int32_t cols, int64_t nnz, adia_value_type vt)
{
    int64_t per_entry = 16 + 12 + (vt == ADIA_FLOAT ? 8 : 0);
    int64_t b = adia_sat_mul(nnz, per_entry);
    b = adia_sat_add(b, adia_sat_mul((int64_t)cols + 1, 8));
    return adia_sat_add(b, adia_sat_mul((int64_t)rows + 1, 8));
}

/* Sum duplicate columns inside each (sorted) row, compacting in place. */
static void sum_duplicates(adia_csr *A)
{
    double *v = A->values;
    int64_t w = 0;
    for (int32_t i = 0; i < A->rows; i++) {
        int64_t b = A->rowptr[i], e = A->rowptr[i + 1];
        A->rowptr[i] = w;
        for (int64_t k = b; k < e; k++) {
            if (k > b && A->colind[k] == A->colind[w - 1]) {
                v[w - 1] += v[k];
            } else {
                A->colind[w] = A->colind[k];
                v[w] = v[k];
                w++;
            }
        }
    }
    A->rowptr[A->rows] = w;
    A->nnz = w;
}

adia_status adia_matrix_create_coo(int32_t rows, int32_t cols, int64_t nnz,
                                   const int32_t *row, const int32_t *col,
                                   const void *values, adia_value_type vt,
                                   adia_matrix **out)
{
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_create_coo: out is NULL");
    *out = NULL;
    ADIA_TRY(check_shape(rows, cols, nnz, "adia_matrix_create_coo"));
    ADIA_TRY(check_value_type(vt, "adia_matrix_create_coo"));
    ADIA_TRY(adia__budget_check(coo_peak_bytes(rows, cols, nnz, vt),
                               "adia_matrix_create_coo"));
    if (nnz > 0 && (!row || !col))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_create_coo: index array is NULL");
    for (int64_t k = 0; k < nnz; k++)
        if (row[k] < 0 || row[k] >= rows || col[k] < 0 || col[k] >= cols)
            return adia__error(ADIA_ERR_INVALID_MATRIX,
                              "adia_matrix_create_coo: entry %" PRId64 " (%" PRId32
                              ", %" PRId32 ") outside %" PRId32 " x %" PRId32,
                              k, row[k], col[k], rows, cols);
    double *val = NULL;
    if (values && vt == ADIA_FLOAT) {
        val = adia__alloc((size_t)nnz, sizeof *val, "coo values");
        if (!val) return ADIA_ERR_NO_MEMORY;
        for (int64_t k = 0; k < nnz; k++) val[k] = ((const float *)values)[k];
    }
    const double *v = values ? (val ? val : values) : NULL;

    /* Sort by column, then stably by row: columns end up sorted in rows. */
    adia_csr A;
    int64_t *colptr = adia__alloc((size_t)cols + 1, sizeof *colptr, "column pointers");
    int32_t *tmp_row = adia__alloc((size_t)nnz, sizeof *tmp_row, "coo rows");
    double *tmp_val = adia__alloc((size_t)nnz, sizeof *tmp_val, "coo values");
    int32_t *tmp_col = adia__alloc((size_t)nnz, sizeof *tmp_col, "coo columns");
    adia_status s = colptr && tmp_row && tmp_val && tmp_col ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) s = bucket_sort(nnz, cols, col, row, v, colptr, tmp_row, tmp_val);
    if (s == ADIA_OK) {
        for (int32_t c = 0; c < cols; c++)
            for (int64_t k = colptr[c]; k < colptr[c + 1]; k++) tmp_col[k] = c;
        s = adia__csr_alloc(&A, rows, cols, nnz, ADIA_DOUBLE);
    }
    if (s == ADIA_OK) {
        s = bucket_sort(nnz, rows, tmp_row, tmp_col, tmp_val, A.rowptr, A.colind, A.values);
        if (s != ADIA_OK) adia__csr_free(&A);
    }
    free(colptr);
    free(tmp_row);
    free(tmp_val);
    free(tmp_col);
    free(val);
    if (s != ADIA_OK) return s;
    sum_duplicates(&A);
    return adia__matrix_wrap(&A, out);
}

/* The arguments of a caller's CSR arrays, as func takes them. */
static adia_status check_csr_args(int32_t rows, int32_t cols, int64_t nnz, const int64_t *rowptr,
                                  const int32_t *colind, const void *values, adia_value_type vt,
                                  const char *func)
{
    ADIA_TRY(check_shape(rows, cols, nnz, func));
    ADIA_TRY(check_value_type(vt, func));
    if (!rowptr || (nnz > 0 && (!colind || !values)))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: array is NULL", func);
    if (rowptr[0] != 0 || rowptr[rows] != nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX,
                          "%s: rowptr[0] = %" PRId64 " and rowptr[rows] = %" PRId64
                          " must be 0 and nnz = %" PRId64, func, rowptr[0], rowptr[rows], nnz);
    return ADIA_OK;
}

adia_status adia__matrix_view_csr(int32_t rows, int32_t cols, int64_t nnz, const int64_t *rowptr,
                                  const int32_t *colind, const void *values,
                                  adia_value_type vt, const char *func, adia_matrix *view,
                                  int *viewed)
{
    *viewed = 0;
    ADIA_TRY(check_csr_args(rows, cols, nnz, rowptr, colind, values, vt, func));
    const adia_csr in = {.rows = rows, .cols = cols, .nnz = nnz, .rowptr = (int64_t *)rowptr,
                         .colind = (int32_t *)colind, .values = (void *)values, .vtype = vt};
    if (vt != ADIA_DOUBLE || adia__csr_first_broken_row(&in) != rows) return ADIA_OK;
    memset(view, 0, sizeof *view);
    view->magic = ADIA_MAGIC_MATRIX;
    view->csr = in;
    *viewed = 1;
    return ADIA_OK;
}

adia_status adia_matrix_create_csr(int32_t rows, int32_t cols, int64_t nnz,
                                   const int64_t *rowptr, const int32_t *colind,
                                   const void *values, adia_value_type vt,
                                   adia_matrix **out)
{
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_create_csr: out is NULL");
    *out = NULL;
    ADIA_TRY(check_shape(rows, cols, nnz, "adia_matrix_create_csr"));
    ADIA_TRY(check_value_type(vt, "adia_matrix_create_csr"));
    ADIA_TRY(adia__budget_check(adia_sat_add(coo_peak_bytes(rows, cols, nnz, vt),
                                            adia_sat_mul(nnz, 4)),   /* row indices */
                               "adia_matrix_create_csr"));
    ADIA_TRY(check_csr_args(rows, cols, nnz, rowptr, colind, values, vt,
                            "adia_matrix_create_csr"));
    /* canonical already (columns ascending and unique in every row: what
     * SciPy and most writers give): copied as it is, on threads -- the COO
     * path's two bucket sorts took about 1 s of a 28.5 M-entry matrix */
    const adia_csr in = {.rows = rows, .cols = cols, .nnz = nnz, .rowptr = (int64_t *)rowptr,
                         .colind = (int32_t *)colind, .values = (void *)values, .vtype = vt};
    if (adia__csr_first_broken_row(&in) == rows) {
        adia_csr c;
        ADIA_TRY(adia__csr_copy(&in, ADIA_DOUBLE, &c));
        return adia__matrix_wrap(&c, out);
    }
    for (int32_t i = 0; i < rows; i++)
        if (rowptr[i + 1] < rowptr[i])
            return adia__error(ADIA_ERR_INVALID_MATRIX,
                              "adia_matrix_create_csr: rowptr decreases at row %" PRId32
                              " (%" PRId64 " after %" PRId64 ")", i, rowptr[i + 1], rowptr[i]);
    int32_t *row = adia__alloc((size_t)nnz, sizeof *row, "row indices");
    if (!row) return ADIA_ERR_NO_MEMORY;
    for (int32_t i = 0; i < rows; i++)
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) row[k] = i;
    adia_status s = adia_matrix_create_coo(rows, cols, nnz, row, colind, values, vt, out);
    free(row);
    return s;
}

adia_status adia_matrix_copy(const adia_matrix *A, adia_matrix **out)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_copy"));
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_copy: out is NULL");
    adia_csr c;
    ADIA_TRY(adia__csr_copy(&A->csr, ADIA_DOUBLE, &c));
    ADIA_TRY(adia__matrix_wrap(&c, out));
    memcpy((*out)->name, A->name, sizeof A->name);
    if (A->comments) {
        size_t n = strlen(A->comments) + 1;
        if (!((*out)->comments = adia__alloc(n, 1, "matrix comments"))) {
            adia_matrix_destroy(*out);
            *out = NULL;
            return ADIA_ERR_NO_MEMORY;
        }
        memcpy((*out)->comments, A->comments, n);
    }
    return ADIA_OK;
}

adia_status adia_matrix_transpose(const adia_matrix *A, adia_matrix **out)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_transpose"));
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_transpose: out is NULL");
    const adia_csr *a = &A->csr;
    adia_csr t;
    ADIA_TRY(adia__csr_alloc(&t, a->cols, a->rows, a->nnz, ADIA_DOUBLE));
    int32_t *row = adia__alloc((size_t)a->nnz, sizeof *row, "row indices");
    if (!row) {
        adia__csr_free(&t);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) row[k] = i;
    /* Stable bucket sort by column keeps rows sorted inside each column. */
    adia_status s = bucket_sort(a->nnz, a->cols, a->colind, row, a->values,
                                t.rowptr, t.colind, t.values);
    free(row);
    if (s != ADIA_OK) {
        adia__csr_free(&t);
        return s;
    }
    ADIA_TRY(adia__matrix_wrap(&t, out));
    snprintf((*out)->name, sizeof (*out)->name, "%.120s^T", A->name);
    return ADIA_OK;
}

adia_status adia_matrix_to_coo(const adia_matrix *A, int32_t **row,
                               int32_t **col, double **values)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_to_coo"));
    if (!row || !col || !values)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_to_coo: output is NULL");
    const adia_csr *a = &A->csr;
    int32_t *r = adia__alloc((size_t)a->nnz, sizeof *r, "coo rows");
    int32_t *c = adia__alloc((size_t)a->nnz, sizeof *c, "coo columns");
    double *v = adia__alloc((size_t)a->nnz, sizeof *v, "coo values");
    if (!r || !c || !v) {
        free(r);
        free(c);
        free(v);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) r[k] = i;
    memcpy(c, a->colind, (size_t)a->nnz * sizeof *c);
    memcpy(v, a->values, (size_t)a->nnz * sizeof *v);
    *row = r;
    *col = c;
    *values = v;
    return ADIA_OK;
}

adia_status adia_matrix_csr(const adia_matrix *A, adia_csr_view *view)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_csr"));
    if (!view) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_csr: view is NULL");
    view->rows = A->csr.rows;
    view->cols = A->csr.cols;
    view->nnz = A->csr.nnz;
    view->rowptr = A->csr.rowptr;
    view->colind = A->csr.colind;
    view->values = A->csr.values;
    return ADIA_OK;
}

int32_t adia_matrix_rows(const adia_matrix *A) { return A ? A->csr.rows : 0; }
int32_t adia_matrix_cols(const adia_matrix *A) { return A ? A->csr.cols : 0; }
int64_t adia_matrix_nnz(const adia_matrix *A) { return A ? A->csr.nnz : 0; }
const char *adia_matrix_name(const adia_matrix *A) { return A ? A->name : ""; }

adia_status adia_matrix_set_name(adia_matrix *A, const char *name)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_set_name"));
    snprintf(A->name, sizeof A->name, "%s", name ? name : "");
    return ADIA_OK;
}

int adia_matrix_equal(const adia_matrix *A, const adia_matrix *B)
{
    if (!A || !B) return 0;
    const adia_csr *a = &A->csr, *b = &B->csr;
    return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
           !memcmp(a->rowptr, b->rowptr, ((size_t)a->rows + 1) * sizeof *a->rowptr) &&
           !memcmp(a->colind, b->colind, (size_t)a->nnz * sizeof *a->colind) &&
           !memcmp(a->values, b->values, (size_t)a->nnz * sizeof(double));
}

adia_status adia_matrix_spmv(const adia_matrix *A, double alpha,
                             const double *x, double beta, double *y)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_spmv"));
    if ((!x && A->csr.cols > 0) || (!y && A->csr.rows > 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_spmv: x or y is NULL");
    const adia_csr *a = &A->csr;
    const double *v = a->values;
#pragma omp parallel for schedule(static) num_threads(adia__threads())
    for (int32_t i = 0; i < a->rows; i++) {
        double sum = 0.0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            sum += v[k] * x[a->colind[k]];
        y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i];
    }
    return ADIA_OK;
}
