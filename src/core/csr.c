/* csr.c -- typed CSR arrays: allocation, copy, invariant check. */
#include "internal.h"

#include <inttypes.h>

adia_status adia__csr_alloc(adia_csr *A, int32_t rows, int32_t cols,
                           int64_t nnz, adia_value_type vt)
{
    memset(A, 0, sizeof *A);
    if (rows < 0 || cols < 0 || nnz < 0)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "csr: negative size (rows %" PRId32 ", cols %" PRId32
                          ", nnz %" PRId64 ")", rows, cols, nnz);
    A->rows = rows;
    A->cols = cols;
    A->nnz = nnz;
    A->vtype = vt;
    A->rowptr = adia__calloc((size_t)rows + 1, sizeof *A->rowptr, "csr row pointers");
    A->colind = adia__alloc((size_t)nnz, sizeof *A->colind, "csr column indices");
    A->values = adia__alloc((size_t)nnz, adia_value_size(vt), "csr values");
    if (!A->rowptr || !A->colind || !A->values) {
        adia__csr_free(A);
        return ADIA_ERR_NO_MEMORY;  /* adia__alloc recorded which array */
    }
    return ADIA_OK;
}

void adia__csr_free(adia_csr *A)
{
    if (!A) return;
    free(A->rowptr);
    free(A->colind);
    free(A->values);
    A->rowptr = NULL;
    A->colind = NULL;
    A->values = NULL;
}

void adia__csr_offset_range(const adia_csr *A, int64_t *omin, int64_t *omax)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) schedule(static) \
    num_threads(adia__threads()) if (A->rows > 65536)
    for (int32_t i = 0; i < A->rows; i++) {
        const int64_t b = A->rowptr[i], e = A->rowptr[i + 1];
        if (b == e) continue;
        const int64_t first = (int64_t)A->colind[b] - i, last = (int64_t)A->colind[e - 1] - i;
        if (first < lo) lo = first;
        if (last > hi) hi = last;
    }
    *omin = lo <= hi ? lo : 0;
    *omax = lo <= hi ? hi : 0;
}

bool adia__csr_same_offsets(const adia_csr *A, int32_t r, int32_t i)
{
    const int64_t pr = A->rowptr[r], pi = A->rowptr[i], n = A->rowptr[r + 1] - pr;
    if (A->rowptr[i + 1] - pi != n) return false;
    const int32_t *cr = A->colind + pr, *ci = A->colind + pi;
    const int32_t shift = i - r;   /* c_i - i == c_r - r */
    for (int64_t k = 0; k < n; k++)
        if (ci[k] - cr[k] != shift) return false;
    return true;
}

/* Entries per slice of the threaded copy. */
#define COPY_SLICE ((int64_t)1 << 20)

adia_status adia__csr_copy(const adia_csr *A, adia_value_type vt, adia_csr *out)
{
    ADIA_TRY(adia__csr_alloc(out, A->rows, A->cols, A->nnz, vt));
    memcpy(out->rowptr, A->rowptr, ((size_t)A->rows + 1) * sizeof *A->rowptr);
    /* in slices on the threads: one thread copies at a fraction of the
     * memory's bandwidth (340 MB for a 4 M-row 7-point matrix) */
    const int64_t n = A->nnz, slices = (n + COPY_SLICE - 1) / COPY_SLICE;   /* 0: no entries,
                                                                           nothing to read */
    const size_t vs = adia_value_size(vt);
#pragma omp parallel for schedule(static) if (slices > 1) num_threads(adia__threads())
    for (int64_t q = 0; q < slices; q++) {
        const int64_t lo = q * COPY_SLICE, hi = lo + COPY_SLICE < n ? lo + COPY_SLICE : n;
        memcpy(out->colind + lo, A->colind + lo, (size_t)(hi - lo) * sizeof *A->colind);
        if (vt == A->vtype) {
            memcpy((char *)out->values + lo * vs, (const char *)A->values + lo * vs,
                   (size_t)(hi - lo) * vs);
        } else if (vt == ADIA_FLOAT) {
            const double *s = A->values;
            float *d = out->values;
            for (int64_t i = lo; i < hi; i++) d[i] = (float)s[i];
        } else {
            const float *s = A->values;
            double *d = out->values;
            for (int64_t i = lo; i < hi; i++) d[i] = s[i];
        }
    }
    return ADIA_OK;
}

/* Is row i broken: its pointers outside b <= e <= nnz, or a column out of
 * range or not above the one before?  b < 0 counts too: with rowptr[0] = 0
 * it implies a broken row before i, so the least broken row is still the
 * row a scan in row order stops at (and colind is never read out of range). */
static bool row_broken(const adia_csr *A, int32_t i)
{
    int64_t b = A->rowptr[i], e = A->rowptr[i + 1];
    if (b < 0 || e < b || e > A->nnz) return true;
    for (int64_t k = b; k < e; k++) {
        int32_t c = A->colind[k];
        if (c < 0 || c >= A->cols || (k > b && c <= A->colind[k - 1])) return true;
    }
    return false;
}

/* The message for row i, the least broken row: what is wrong with it. */
static adia_status report_row(const adia_csr *A, int32_t i)
{
    int64_t b = A->rowptr[i], e = A->rowptr[i + 1];
    if (e < b || e > A->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX,
                          "csr: row %" PRId32 " pointers %" PRId64 "..%" PRId64
                          " not monotone within 0..%" PRId64, i, b, e, A->nnz);
    for (int64_t k = b; k < e; k++) {
        int32_t c = A->colind[k];
        if (c < 0 || c >= A->cols)
            return adia__error(ADIA_ERR_INVALID_MATRIX,
                              "csr: row %" PRId32 " column %" PRId32
                              " out of range 0..%" PRId32, i, c, A->cols - 1);
        if (k > b && c <= A->colind[k - 1])
            return adia__error(ADIA_ERR_INVALID_MATRIX,
                              "csr: row %" PRId32 " columns not sorted/unique "
                              "(%" PRId32 " after %" PRId32 ")", i, c, A->colind[k - 1]);
    }
    return adia__error(ADIA_ERR_INTERNAL, "csr: row %" PRId32 " flagged but found sound", i);
}

/* Rows per block of the threaded scan: blocks are taken in turn
 * (dynamic), so a few long rows do not hold one thread back. */
#define CHECK_BLOCK_ROWS 16384

int32_t adia__csr_first_broken_row(const adia_csr *A)
{
    /* one pass over rowptr and colind on every thread; each block stops
     * at its first broken row and the least of those is kept, so the
     * answer is the first broken row whatever the thread count */
    const int32_t rows = A->rows, blocks = (int32_t)((rows + (int64_t)CHECK_BLOCK_ROWS - 1) /
                                                     CHECK_BLOCK_ROWS);
    int32_t first = rows;
#pragma omp parallel for schedule(dynamic, 1) reduction(min : first) \
    num_threads(adia__threads()) if (A->nnz > 200000)
    for (int32_t blk = 0; blk < blocks; blk++) {
        int32_t lo = blk * CHECK_BLOCK_ROWS, hi = rows - lo < CHECK_BLOCK_ROWS ? rows
                                                                              : lo + CHECK_BLOCK_ROWS;
        for (int32_t i = lo; i < hi; i++)
            if (row_broken(A, i)) {
                if (i < first) first = i;
                break;
            }
    }
    return first;
}

adia_status adia__csr_check(const adia_csr *A)
{
    if (A->rows < 0 || A->cols < 0 || A->nnz < 0)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "csr: negative size");
    if (A->rowptr[0] != 0)
        return adia__error(ADIA_ERR_INVALID_MATRIX,
                          "csr: rowptr[0] is %" PRId64 ", expected 0", A->rowptr[0]);
    const int32_t first = adia__csr_first_broken_row(A);
    if (first < A->rows) return report_row(A, first);
    if (A->rowptr[A->rows] != A->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX,
                          "csr: rowptr[rows] is %" PRId64 ", nnz is %" PRId64,
                          A->rowptr[A->rows], A->nnz);
    return ADIA_OK;
}
