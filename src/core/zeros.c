/* zeros.c -- explicit zeros kept apart, for formats whose to_csr keeps
 * only nonzero values (a stored zero looks like padding there): the handle
 * keeps the source's zero entries and adia_format_to_matrix merges them
 * back, so the round trip is exact for every format (format.c). */
#include "internal.h"

/* Zero in vt: an explicit zero, or a double that rounds to 0 in float. */
static int zero_in(double v, adia_value_type vt)
{
    return vt == ADIA_FLOAT ? (float)v == 0.0f : v == 0.0;
}

adia_status adia__zeros_collect(const adia_csr *A, adia_value_type vt, adia__zeros *z)
{
    memset(z, 0, sizeof *z);
    int64_t n = 0;
    for (int64_t j = 0; j < A->nnz; j++) n += zero_in(adia_csr_value(A, j), vt);
    if (n == 0) return ADIA_OK;
    z->row = adia__alloc((size_t)n, sizeof *z->row, "explicit zero rows");
    z->col = adia__alloc((size_t)n, sizeof *z->col, "explicit zero columns");
    z->val = adia__alloc((size_t)n, sizeof *z->val, "explicit zero values");
    if (!z->row || !z->col || !z->val) {
        adia__zeros_free(z);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int32_t r = 0; r < A->rows; r++)
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++) {
            double v = adia_csr_value(A, j);
            if (!zero_in(v, vt)) continue;
            z->row[z->n] = r;
            z->col[z->n] = A->colind[j];
            z->val[z->n++] = vt == ADIA_FLOAT ? (double)(float)v : v;   /* as stored */
        }
    return ADIA_OK;
}

adia_status adia__zeros_merge(const adia__zeros *z, adia_csr *out)
{
    if (!z->n) return ADIA_OK;
    int64_t nnz;
    if (!adia_add_i64(out->nnz, z->n, &nnz))
        return adia__error(ADIA_ERR_OVERFLOW, "explicit zeros: entry count overflows");
    adia_csr m;
    ADIA_TRY(adia__csr_alloc(&m, out->rows, out->cols, nnz, ADIA_DOUBLE));
    const double *v = out->values;
    double *mv = m.values;
    int64_t at = 0, k = 0;
    for (int32_t r = 0; r < out->rows; r++) {
        int64_t j = out->rowptr[r], end = out->rowptr[r + 1];
        while (j < end || (k < z->n && z->row[k] == r)) {
            int take_zero = k < z->n && z->row[k] == r && (j == end || z->col[k] < out->colind[j]);
            if (take_zero) {
                m.colind[at] = z->col[k];
                mv[at++] = z->val[k++];
            } else {
                m.colind[at] = out->colind[j];
                mv[at++] = v[j++];
            }
        }
        m.rowptr[r + 1] = at;
    }
    if (at != nnz || k != z->n) {
        adia__csr_free(&m);
        return adia__error(ADIA_ERR_INTERNAL, "explicit zeros: merged %lld of %lld entries",
                          (long long)at, (long long)nnz);
    }
    adia__csr_free(out);
    *out = m;
    return ADIA_OK;
}

void adia__zeros_free(adia__zeros *z)
{
    free(z->row);
    free(z->col);
    free(z->val);
    memset(z, 0, sizeof *z);
}
