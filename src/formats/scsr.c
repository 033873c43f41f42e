/* scsr.c -- the "scsr" format, streamed CSR (survey 003 eqs. 2.37-2.47,
 * for the prefetch streams of IBM POWER): row i goes to stream i mod S
 * (param streams, default 4); rows b*S .. b*S+S-1 form block row b, and
 * every stream gets, for block row b, as many slots as the block row's
 * longest row, from ptr[b] on, so all S streams have the same length
 * len = ptr[nbrows] and advance in step.  Padding repeats the row's last
 * column with value 0 (the survey's rule), or is ADIA_ROW_PAD in rows
 * without entries and rows past the end (the survey's "*").
 * This follows the survey's definition and worked example rather than
 * "S row chunks each its own CSR" (which the text does not describe).
 * Storage: (nbrows + 1)*8 + S*len*(4 + value) = eq. 2.47's
 * 2*(N_S * max NZS) + S_r + 1 in elements. */
#include "row_common.h"
#include "row_extra.h"

#include <inttypes.h>

#define VALUE double
#define FN(name) name##_d
#include "scsr_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "scsr_kernel.inc"

static void scsr_free(adia_scsr *T)
{
    free(T->ptr);
    free(T->colind);
    free(T->values);
    free(T);
}

/* First slot of row i. */
static inline int64_t row_slot(const adia_scsr *T, int32_t i)
{
    return (int64_t)(i % T->S) * T->ptr[T->nbrows] + T->ptr[i / T->S];
}

static adia_status layout(const adia_csr *A, adia_scsr *T, int64_t *slots)
{
    for (int32_t b = 0; b < T->nbrows; b++) {
        int64_t w = 0;
        for (int64_t i = (int64_t)b * T->S; i < A->rows && i < ((int64_t)b + 1) * T->S; i++)
            if (row_len(A, (int32_t)i) > w) w = row_len(A, (int32_t)i);
        T->ptr[b + 1] = T->ptr[b] + w;
    }
    return adia__row_mul(T->S, T->ptr[T->nbrows], "scsr streams", slots);
}

static void fill_rows(const adia_csr *A, adia_scsr *T)
{
    for (int32_t i = 0; i < A->rows; i++) {
        int64_t q = row_slot(T, i), end = q + T->ptr[i / T->S + 1] - T->ptr[i / T->S];
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++, q++) {
            T->colind[q] = A->colind[k];
            row_value_set(T->values, T->vtype, q, adia_csr_value(A, k));
        }
        for (; row_len(A, i) > 0 && q < end; q++) T->colind[q] = T->colind[q - 1];
    }
}

static adia_status scsr_build(const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    adia_scsr *T = adia__calloc(1, sizeof *T, "scsr format");
    if (!T) return ADIA_ERR_NO_MEMORY;
    int32_t S = adia_param(p->streams, 4);
    *T = (adia_scsr){.rows = A->rows, .cols = A->cols, .S = S, .nnz = A->nnz, .vtype = vt,
                     .nbrows = (int32_t)(((int64_t)A->rows + S - 1) / S)};
    int64_t slots = 0;
    T->ptr = adia__calloc((size_t)T->nbrows + 1, sizeof *T->ptr, "scsr block-row pointers");
    adia_status s = T->ptr ? layout(A, T, &slots) : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        T->colind = adia__alloc((size_t)slots, sizeof *T->colind, "scsr column indices");
        T->values = adia__row_values_alloc(slots, vt, "scsr values");
        if (!T->colind || !T->values) s = ADIA_ERR_NO_MEMORY;
    }
    if (s != ADIA_OK) {
        scsr_free(T);
        return s;
    }
    for (int64_t q = 0; q < slots; q++) T->colind[q] = ADIA_ROW_PAD;
    fill_rows(A, T);
    *impl = T;
    return ADIA_OK;
}

/* Slots of row i: its block row's width. */
static int64_t row_width(const adia_scsr *T, int32_t i)
{
    return T->ptr[i / T->S + 1] - T->ptr[i / T->S];
}

static adia_status scsr_to_csr(const void *impl, adia_csr *out)
{
    const adia_scsr *T = impl;
    row_csr_builder b;
    ADIA_TRY(adia__row_csr_begin(&b, out, T->rows, T->cols, T->nnz));
    for (int32_t i = 0; i < T->rows; i++) {
        int64_t q = row_slot(T, i), n = row_real_prefix(T->colind + q, row_width(T, i));
        for (int64_t k = q; k < q + n; k++)
            row_csr_push(&b, i, T->colind[k], row_value_get(T->values, T->vtype, k));
    }
    return adia__row_csr_finish(&b, "scsr");
}

static adia_status scsr_check(const void *impl)
{
    const adia_scsr *T = impl;
    int64_t slots = (int64_t)T->S * T->ptr[T->nbrows], n = 0;
    ADIA_TRY(adia__row_check_index("scsr", "colind", T->colind, slots, T->cols, true));
    for (int32_t b = 0; b < T->nbrows; b++)
        if (T->ptr[b + 1] < T->ptr[b])
            return adia__error(ADIA_ERR_INVALID_MATRIX, "scsr: ptr[%d] decreases", (int)b + 1);
    for (int32_t i = 0; i < T->rows; i++) {
        int64_t q = row_slot(T, i), len = row_real_prefix(T->colind + q, row_width(T, i));
        n += len;
        for (int64_t k = q + len; k < q + row_width(T, i); k++)
            if (row_value_get(T->values, T->vtype, k) != 0.0 ||
                (T->colind[k] != ADIA_ROW_PAD && (len == 0 || T->colind[k] != T->colind[q + len - 1])))
                return adia__error(ADIA_ERR_INVALID_MATRIX, "scsr: padding slot %" PRId64
                                  " of row %d is not (last column, 0)", k - q, (int)i);
    }
    if (n != T->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "scsr: %" PRId64 " entries stored, header says %"
                          PRId64, n, T->nnz);
    return ADIA_OK;
}

static void scsr_destroy(void *impl) { scsr_free(impl); }

static int64_t scsr_padded_zeros(const void *impl)
{
    const adia_scsr *T = impl;
    return (int64_t)T->S * T->ptr[T->nbrows] - T->nnz;
}

static int64_t scsr_storage_bytes(const void *impl)
{
    const adia_scsr *T = impl;
    int64_t slots = (int64_t)T->S * T->ptr[T->nbrows];
    return ((int64_t)T->nbrows + 1) * 8 + slots * 4 + row_value_bytes(slots, T->vtype);
}

static ADIA_SPMV_SLOT(scsr_spmv, scsr_spmv, adia_scsr, A, A->vtype)

const adia_format_ops adia__format_scsr = {
    .name = "scsr",
    .description = "streamed CSR: rows dealt to S equal-length streams (param streams)",
    .build = scsr_build,
    .to_csr = scsr_to_csr,
    .check = scsr_check,
    .destroy = scsr_destroy,
    .padded_zeros = scsr_padded_zeros,
    .storage_bytes = scsr_storage_bytes,
    .spmv = scsr_spmv,
};
