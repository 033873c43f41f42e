/* pcsr.c -- the "pcsr" format, padded CSR (IBM patent, seed 001): each row
 * padded with zeros to a multiple of pad entries (param pad, default 16 =
 * a half-warp), so every row starts at a multiple of pad and a half-warp
 * reads it in aligned, coalesced segments.  A padding entry repeats the
 * last column of its row with value 0: a valid x address (like the
 * patent) that never multiplies x -- an Inf/NaN at that x entry reaches
 * only the rows of its nonzeros, as in CSR.
 * Storage: (rows + 1)*8 + padded*(4 + value).  CPU SpMV is the csr
 * module's kernel run over the padded arrays (CSR_PADDED: a row whose sum
 * is not finite is summed again without its padding). */
#include "row_common.h"
#include "row_extra.h"

#include <inttypes.h>

#define CSR_PADDED
#define VALUE double
#define FN(name) pcsr_##name##_d
#include "csr_kernel.inc"
#define CSR_PADDED
#define VALUE float
#define FN(name) pcsr_##name##_f
#include "csr_kernel.inc"

/* Real entries of row i: the strictly increasing prefix. */
static int64_t real_len(const adia_csr *P, int32_t i)
{
    return row_real_prefix(P->colind + P->rowptr[i], P->rowptr[i + 1] - P->rowptr[i]);
}

static adia_status pcsr_build(const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    int32_t pad = adia_param(p->pad, 16);
    int64_t total = 0;
    for (int32_t i = 0; i < A->rows; i++) {
        int64_t padded = (row_len(A, i) + pad - 1) / pad * pad;
        if (!adia_add_i64(total, padded, &total))
            return adia__error(ADIA_ERR_OVERFLOW, "pcsr: padded entries overflow");
    }
    adia_pcsr *P = adia__calloc(1, sizeof *P, "pcsr format");
    if (!P) return ADIA_ERR_NO_MEMORY;
    P->pad = pad;
    P->nnz = A->nnz;
    adia_status s = adia__csr_alloc(&P->csr, A->rows, A->cols, total, vt);
    if (s != ADIA_OK) {
        free(P);
        return s;
    }
    int64_t q = 0;
    for (int32_t i = 0; i < A->rows; i++) {
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++, q++) {
            P->csr.colind[q] = A->colind[k];
            row_value_set(P->csr.values, vt, q, adia_csr_value(A, k));
        }
        for (; q % pad; q++) {   /* adia__csr_alloc leaves values uninitialised */
            P->csr.colind[q] = P->csr.colind[q - 1];
            row_value_set(P->csr.values, vt, q, 0.0);
        }
        P->csr.rowptr[i + 1] = q;
    }
    *impl = P;
    return ADIA_OK;
}

static adia_status pcsr_to_csr(const void *impl, adia_csr *out)
{
    const adia_pcsr *P = impl;
    row_csr_builder b;
    ADIA_TRY(adia__row_csr_begin(&b, out, P->csr.rows, P->csr.cols, P->nnz));
    for (int32_t i = 0; i < P->csr.rows; i++)
        for (int64_t k = P->csr.rowptr[i]; k < P->csr.rowptr[i] + real_len(&P->csr, i); k++)
            row_csr_push(&b, i, P->csr.colind[k], row_value_get(P->csr.values, P->csr.vtype, k));
    return adia__row_csr_finish(&b, "pcsr");
}

static adia_status pcsr_check(const void *impl)
{
    const adia_pcsr *P = impl;
    const adia_csr *C = &P->csr;
    ADIA_TRY(adia__row_check_index("pcsr", "colind", C->colind, C->nnz, C->cols, false));
    int64_t n = 0;
    for (int32_t i = 0; i < C->rows; i++) {
        if (C->rowptr[i] % P->pad || C->rowptr[i + 1] < C->rowptr[i])
            return adia__error(ADIA_ERR_INVALID_MATRIX, "pcsr: row %d starts at %" PRId64
                              ", not a multiple of pad=%d after the previous row", (int)i,
                              C->rowptr[i], (int)P->pad);
        int64_t len = real_len(C, i);
        n += len;
        for (int64_t k = C->rowptr[i] + len; k < C->rowptr[i + 1]; k++)
            if (row_value_get(C->values, C->vtype, k) != 0.0)
                return adia__error(ADIA_ERR_INVALID_MATRIX, "pcsr: padding entry %" PRId64
                                  " of row %d holds a nonzero", k, (int)i);
    }
    if (C->rowptr[C->rows] != C->nnz || C->nnz % P->pad || n != P->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "pcsr: %" PRId64 " slots with %" PRId64
                          " real entries, header says %" PRId64 " and %" PRId64,
                          C->rowptr[C->rows], n, C->nnz, P->nnz);
    return ADIA_OK;
}

static void pcsr_destroy(void *impl)
{
    adia__csr_free(&((adia_pcsr *)impl)->csr);
    free(impl);
}

static int64_t pcsr_padded_zeros(const void *impl)
{
    const adia_pcsr *P = impl;
    return P->csr.nnz - P->nnz;
}

static int64_t pcsr_storage_bytes(const void *impl)
{
    return adia__format_csr.storage_bytes(&((const adia_pcsr *)impl)->csr);
}

static adia_status pcsr_spmv(const void *impl, double alpha, const void *x,
                             double beta, void *y)
{
    const adia_csr *A = &((const adia_pcsr *)impl)->csr;
    if (A->vtype == ADIA_DOUBLE)
        pcsr_csr_spmv_d(A, alpha, x, beta, y);
    else
        pcsr_csr_spmv_f(A, alpha, x, beta, y);
    return ADIA_OK;
}

const adia_format_ops adia__format_pcsr = {
    .name = "pcsr",
    .description = "padded CSR: rows padded to a multiple of pad (default 16), aligned starts",
    .build = pcsr_build,
    .to_csr = pcsr_to_csr,
    .check = pcsr_check,
    .destroy = pcsr_destroy,
    .padded_zeros = pcsr_padded_zeros,
    .storage_bytes = pcsr_storage_bytes,
    .spmv = pcsr_spmv,
};
