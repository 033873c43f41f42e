/* cmrs.c -- the "cmrs" format, compressed multi-row storage (Koza et al.;
 * survey 003 eqs. 2.30-2.35): values and columns exactly as CSR, rows cut
 * into strips of h rows (param strip, default 4); per strip a pointer to
 * its first entry, per entry its row inside the strip.  A GPU warp takes a
 * strip and splits it between the strip's rows without padding.  Storage:
 *   (Ns + 1)*8 + nnz*(4 + 4 + value),
 * eq. 2.35's 3*NZV + Ns + 1 with Ns = ceil(rows/h) (the text's rows/h
 * rounds up). */
#include "row_common.h"
#include "row_extra.h"

#include <inttypes.h>

#define VALUE double
#define FN(name) name##_d
#include "cmrs_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "cmrs_kernel.inc"

static void cmrs_free(adia_cmrs *M)
{
    free(M->strip_ptr);
    free(M->row_in_strip);
    free(M->colind);
    free(M->values);
    free(M);
}

static adia_status cmrs_build(const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    adia_cmrs *M = adia__calloc(1, sizeof *M, "cmrs format");
    if (!M) return ADIA_ERR_NO_MEMORY;
    int32_t h = adia_param(p->strip, 4);
    *M = (adia_cmrs){.rows = A->rows, .cols = A->cols, .h = h, .nnz = A->nnz, .vtype = vt,
                     .nstrips = (int32_t)(((int64_t)A->rows + h - 1) / h)};
    M->strip_ptr = adia__alloc((size_t)M->nstrips + 1, sizeof *M->strip_ptr, "cmrs strip pointers");
    M->row_in_strip = adia__alloc((size_t)A->nnz, sizeof *M->row_in_strip, "cmrs rows in strip");
    M->colind = adia__alloc((size_t)A->nnz, sizeof *M->colind, "cmrs column indices");
    M->values = adia__row_values_alloc(A->nnz, vt, "cmrs values");
    if (!M->strip_ptr || !M->row_in_strip || !M->colind || !M->values) {
        cmrs_free(M);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int32_t s = 0; s <= M->nstrips; s++)
        M->strip_ptr[s] = A->rowptr[(int64_t)s * h < A->rows ? (int64_t)s * h : A->rows];
    for (int32_t i = 0; i < A->rows; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            M->row_in_strip[k] = i % h;
            M->colind[k] = A->colind[k];
            row_value_set(M->values, vt, k, adia_csr_value(A, k));
        }
    *impl = M;
    return ADIA_OK;
}

static adia_status cmrs_to_csr(const void *impl, adia_csr *out)
{
    const adia_cmrs *M = impl;
    row_csr_builder b;
    ADIA_TRY(adia__row_csr_begin(&b, out, M->rows, M->cols, M->nnz));
    for (int32_t s = 0; s < M->nstrips; s++)
        for (int64_t k = M->strip_ptr[s]; k < M->strip_ptr[s + 1]; k++)
            row_csr_push(&b, s * M->h + M->row_in_strip[k], M->colind[k],
                         row_value_get(M->values, M->vtype, k));
    return adia__row_csr_finish(&b, "cmrs");
}

static adia_status cmrs_check(const void *impl)
{
    const adia_cmrs *M = impl;
    if (M->strip_ptr[0] != 0 || M->strip_ptr[M->nstrips] != M->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "cmrs: strip pointers run from %" PRId64
                          " to %" PRId64 ", expected 0 to %" PRId64, M->strip_ptr[0],
                          M->strip_ptr[M->nstrips], M->nnz);
    ADIA_TRY(adia__row_check_index("cmrs", "colind", M->colind, M->nnz, M->cols, false));
    for (int32_t s = 0; s < M->nstrips; s++) {
        int64_t rows = M->rows - (int64_t)s * M->h < M->h ? M->rows - (int64_t)s * M->h : M->h;
        for (int64_t k = M->strip_ptr[s]; k < M->strip_ptr[s + 1]; k++) {
            bool after = k == M->strip_ptr[s] || M->row_in_strip[k] > M->row_in_strip[k - 1] ||
                         (M->row_in_strip[k] == M->row_in_strip[k - 1] &&
                          M->colind[k] > M->colind[k - 1]);
            if (M->row_in_strip[k] < 0 || M->row_in_strip[k] >= rows || !after)
                return adia__error(ADIA_ERR_INVALID_MATRIX, "cmrs: strip %d entry %" PRId64
                                  ": row %d in strip out of range or out of order", (int)s, k,
                                  (int)M->row_in_strip[k]);
        }
    }
    return ADIA_OK;
}

static void cmrs_destroy(void *impl) { cmrs_free(impl); }

static int64_t cmrs_padded_zeros(const void *impl)
{
    (void)impl;
    return 0;
}

static int64_t cmrs_storage_bytes(const void *impl)
{
    const adia_cmrs *M = impl;
    return ((int64_t)M->nstrips + 1) * 8 + M->nnz * 8 + row_value_bytes(M->nnz, M->vtype);
}

static ADIA_SPMV_SLOT(cmrs_spmv, cmrs_spmv, adia_cmrs, A, A->vtype)

const adia_format_ops adia__format_cmrs = {
    .name = "cmrs",
    .description = "compressed multi-row storage: CSR in strips of h rows (param strip)",
    .build = cmrs_build,
    .to_csr = cmrs_to_csr,
    .check = cmrs_check,
    .destroy = cmrs_destroy,
    .padded_zeros = cmrs_padded_zeros,
    .storage_bytes = cmrs_storage_bytes,
    .spmv = cmrs_spmv,
};
