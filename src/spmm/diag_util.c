/* diag_util.c -- diagonal arrays in general: which offsets a CSR matrix
 * uses, CSR -> diagonals (scatter) and diagonals -> CSR (emit).  Shared by
 * the HM and CDM formats and by the products. */
#include "hm.h"

#include <inttypes.h>

adia_status adia__csr_offsets(const adia_csr *A, int32_t **offsets, int32_t *n)
{
    /* offset o in (-rows, cols) marks byte o + rows */
    size_t span = (size_t)A->rows + (size_t)A->cols + 1;
    uint8_t *mark = adia__calloc(span, 1, "diagonal marks");
    if (!mark) return ADIA_ERR_NO_MEMORY;
    for (int32_t i = 0; i < A->rows; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            mark[(int64_t)A->colind[k] - i + A->rows] = 1;
    int64_t count = 0;
    for (size_t s = 0; s < span; s++) count += mark[s];
    if (count > INT32_MAX) {
        free(mark);
        return adia__error(ADIA_ERR_OVERFLOW, "%" PRId64 " diagonals exceed 32-bit counts", count);
    }
    int32_t *off = adia__alloc((size_t)count, sizeof *off, "diagonal offsets");
    if (!off) {
        free(mark);
        return ADIA_ERR_NO_MEMORY;
    }
    count = 0;
    for (size_t s = 0; s < span; s++)
        if (mark[s]) off[count++] = (int32_t)((int64_t)s - A->rows);
    free(mark);
    *offsets = off;
    *n = (int32_t)count;
    return ADIA_OK;
}

int32_t adia__offset_lower_bound(int32_t dg, const int32_t *off, int64_t v)
{
    int32_t lo = 0, hi = dg;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (off[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void adia__diag_row_range(int32_t dg, const int32_t *off, int32_t cols, int32_t i,
                         int32_t *lo, int32_t *hi)
{
    *lo = adia__offset_lower_bound(dg, off, -(int64_t)i);
    *hi = adia__offset_lower_bound(dg, off, (int64_t)cols - i);
}

adia_status adia__diag_scatter(const adia_csr *A, int32_t dg, const int32_t *off,
                              const int64_t *base, void *vals, adia_value_type vt)
{
    const double *v = A->values;
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) num_threads(adia__threads())
    for (int32_t i = 0; i < A->rows; i++) {
        int32_t d = adia__offset_lower_bound(dg, off, -(int64_t)i);
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int64_t o = (int64_t)A->colind[k] - i;
            while (d < dg && off[d] < o) d++;    /* columns ascend in a row */
            if (d == dg || off[d] != o) {
                bad = 1;
                break;
            }
            if (vt == ADIA_DOUBLE) ((double *)vals)[base[d] + i] = v[k];
            else ((float *)vals)[base[d] + i] = (float)v[k];
        }
    }
    if (bad)
        return adia__error(ADIA_ERR_INTERNAL, "diagonal scatter: an entry lies on no "
                          "stored diagonal");
    return ADIA_OK;
}

static double value_at(const void *vals, adia_value_type vt, int64_t at)
{
    return vt == ADIA_DOUBLE ? ((const double *)vals)[at] : (double)((const float *)vals)[at];
}

adia_status adia__diag_emit_csr(int32_t rows, int32_t cols, int32_t dg,
                               const int32_t *off, const int64_t *base,
                               const void *vals, adia_value_type vt,
                               bool keep_zeros, adia_csr *out)
{
    int64_t *count = adia__calloc((size_t)rows + 1, sizeof *count, "row counts");
    if (!count) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel for schedule(static) num_threads(adia__threads())
    for (int32_t i = 0; i < rows; i++) {
        int32_t lo, hi;
        adia__diag_row_range(dg, off, cols, i, &lo, &hi);
        int64_t c = 0;
        for (int32_t d = lo; d < hi; d++)
            c += keep_zeros || value_at(vals, vt, base[d] + i) != 0.0;
        count[i + 1] = c;
    }
    for (int32_t i = 0; i < rows; i++) count[i + 1] += count[i]; /* cannot overflow: <= rows*cols */
    adia_status s = adia__csr_alloc(out, rows, cols, count[rows], ADIA_DOUBLE);
    if (s != ADIA_OK) {
        free(count);
        return s;
    }
    memcpy(out->rowptr, count, ((size_t)rows + 1) * sizeof *count);
    free(count);
    double *ov = out->values;
#pragma omp parallel for schedule(static) num_threads(adia__threads())
    for (int32_t i = 0; i < rows; i++) {
        int32_t lo, hi;
        adia__diag_row_range(dg, off, cols, i, &lo, &hi);
        int64_t w = out->rowptr[i];
        for (int32_t d = lo; d < hi; d++) {
            double x = value_at(vals, vt, base[d] + i);
            if (!keep_zeros && x == 0.0) continue;
            out->colind[w] = (int32_t)(i + off[d]);
            ov[w++] = x;
        }
    }
    return ADIA_OK;
}
