/* csc.c -- the "csc" format (compressed sparse columns, survey 003
 * section 2.1.5: CSR of the transpose): int64 column pointers, int32 row
 * indices sorted inside each column, values.  Storage (eq. 2.15 with the
 * roles of m and n swapped): (cols + 1)*8 + nnz*(4 + value).
 * CPU SpMV: columns are split into 16 fixed chunks, each scattered into
 * its own double copy of y by whichever thread takes it; the copies are
 * then summed row by row in chunk order (row_kernels.inc).  Race-free and
 * the same bits whatever the thread count, at the price of 16*rows doubles
 * of workspace per call; chosen over a transpose (which would just be CSR)
 * so the kernel really reads by column. */
#include "row_common.h"

#include <inttypes.h>

static void csc_free(adia_csc *S)
{
    free(S->colptr);
    free(S->rowind);
    free(S->values);
    free(S);
}

static adia_status csc_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    (void)p;
    adia_csc *S = adia__calloc(1, sizeof *S, "csc format");
    if (!S) return ADIA_ERR_NO_MEMORY;
    *S = (adia_csc){.rows = A->rows, .cols = A->cols, .nnz = A->nnz, .vtype = vt};
    S->colptr = adia__calloc((size_t)A->cols + 1, sizeof *S->colptr, "csc column pointers");
    S->rowind = adia__alloc((size_t)A->nnz, sizeof *S->rowind, "csc row indices");
    S->values = adia__row_values_alloc(A->nnz, vt, "csc values");
    int64_t *next = adia__alloc((size_t)A->cols + 1, sizeof *next, "csc fill cursors");
    if (!S->colptr || !S->rowind || !S->values || !next) {
        free(next);
        csc_free(S);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int64_t k = 0; k < A->nnz; k++) S->colptr[A->colind[k] + 1]++;
    for (int32_t j = 0; j < A->cols; j++) S->colptr[j + 1] += S->colptr[j];
    memcpy(next, S->colptr, ((size_t)A->cols + 1) * sizeof *next);
    for (int32_t i = 0; i < A->rows; i++)           /* rows ascending: sorted columns */
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int64_t q = next[A->colind[k]]++;
            S->rowind[q] = i;
            row_value_set(S->values, vt, q, adia_csr_value(A, k));
        }
    free(next);
    *impl = S;
    return ADIA_OK;
}

/* Transpose back: count per row, then walk columns in order. */
static adia_status csc_to_csr(const void *impl, adia_csr *out)
{
    const adia_csc *S = impl;
    ADIA_TRY(adia__csr_alloc(out, S->rows, S->cols, S->nnz, ADIA_DOUBLE));
    int64_t *next = adia__alloc((size_t)S->rows + 1, sizeof *next, "csc fill cursors");
    if (!next) {
        adia__csr_free(out);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int64_t k = 0; k < S->nnz; k++) out->rowptr[S->rowind[k] + 1]++;
    for (int32_t i = 0; i < S->rows; i++) out->rowptr[i + 1] += out->rowptr[i];
    memcpy(next, out->rowptr, ((size_t)S->rows + 1) * sizeof *next);
    for (int32_t j = 0; j < S->cols; j++)
        for (int64_t k = S->colptr[j]; k < S->colptr[j + 1]; k++) {
            int64_t q = next[S->rowind[k]]++;
            out->colind[q] = j;
            ((double *)out->values)[q] = row_value_get(S->values, S->vtype, k);
        }
    free(next);
    return ADIA_OK;
}

static adia_status csc_check(const void *impl)
{
    const adia_csc *S = impl;
    if (S->colptr[0] != 0 || S->colptr[S->cols] != S->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "csc: column pointers run from %" PRId64
                          " to %" PRId64 ", expected 0 to %" PRId64, S->colptr[0],
                          S->colptr[S->cols], S->nnz);
    ADIA_TRY(adia__row_check_index("csc", "rowind", S->rowind, S->nnz, S->rows, false));
    for (int32_t j = 0; j < S->cols; j++) {
        if (S->colptr[j + 1] < S->colptr[j])
            return adia__error(ADIA_ERR_INVALID_MATRIX, "csc: column pointer %d decreases",
                              (int)j + 1);
        for (int64_t k = S->colptr[j] + 1; k < S->colptr[j + 1]; k++)
            if (S->rowind[k] <= S->rowind[k - 1])
                return adia__error(ADIA_ERR_INVALID_MATRIX, "csc: column %d: row %d at %" PRId64
                                  " not after row %d", (int)j, (int)S->rowind[k], k,
                                  (int)S->rowind[k - 1]);
    }
    return ADIA_OK;
}

static void csc_destroy(void *impl) { csc_free(impl); }

static int64_t csc_padded_zeros(const void *impl)
{
    (void)impl;
    return 0;
}

static int64_t csc_storage_bytes(const void *impl)
{
    const adia_csc *S = impl;
    return ((int64_t)S->cols + 1) * 8 + S->nnz * 4 + row_value_bytes(S->nnz, S->vtype);
}

static adia_status csc_spmv(const void *impl, double alpha, const void *x,
                            double beta, void *y)
{
    return adia__csc_spmv(impl, alpha, x, beta, y);
}

const adia_format_ops adia__format_csc = {
    .name = "csc",
    .description = "compressed sparse columns (64-bit column pointers)",
    .build = csc_build,
    .to_csr = csc_to_csr,
    .check = csc_check,
    .destroy = csc_destroy,
    .padded_zeros = csc_padded_zeros,
    .storage_bytes = csc_storage_bytes,
    .spmv = csc_spmv,
};
