/* rgcsr.c -- the "rgcsr" format, row-grouped CSR (Heller & Oberhuber;
 * survey 003 eqs. 2.20-2.26): groups of G consecutive rows (param group,
 * default 8); a group stores the first entry of each of its rows, then the
 * second, ... up to its longest row (zero-padded, ADIA_ROW_PAD columns), so
 * the threads of a group read consecutive addresses.  Arrays: values and
 * columns (X slots), row lengths (m), group pointers.  Storage:
 *   (Ng + 1)*8 + m*4 + X*(4 + value),  X = sum_g w_g * n_g,
 * eq. 2.25's 2X + m + Ng with the end pointer added; eq. 2.26 writes
 * X = sum_g w_g * G, which holds except for a short last group (n_g < G),
 * stored here without empty padding rows. */
#include "row_common.h"
#include "row_extra.h"

#include <inttypes.h>

#define VALUE double
#define FN(name) name##_d
#include "rgcsr_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "rgcsr_kernel.inc"

static void rgcsr_free(adia_rgcsr *R)
{
    free(R->group_ptr);
    free(R->rowlen);
    free(R->colind);
    free(R->values);
    free(R);
}

/* Rows of group g. */
static int32_t group_rows(const adia_rgcsr *R, int32_t g)
{
    int64_t first = (int64_t)g * R->G;
    return (int32_t)(R->rows - first < R->G ? R->rows - first : R->G);
}

static adia_status layout(const adia_csr *A, adia_rgcsr *R)
{
    for (int32_t g = 0; g < R->ngroups; g++) {
        int64_t w = 0, size;
        for (int32_t r = 0; r < group_rows(R, g); r++) {
            int32_t i = g * R->G + r;
            if (row_len(A, i) > INT32_MAX)
                return adia__error(ADIA_ERR_OVERFLOW, "rgcsr: row %d too long", (int)i);
            R->rowlen[i] = (int32_t)row_len(A, i);
            if (R->rowlen[i] > w) w = R->rowlen[i];
        }
        ADIA_TRY(adia__row_mul(w, group_rows(R, g), "rgcsr group", &size));
        R->group_ptr[g + 1] = R->group_ptr[g] + size;   /* <= rows * longest row */
    }
    return ADIA_OK;
}

static adia_status rgcsr_build(const adia_csr *A, const adia_format_params *p,
                               adia_value_type vt, void **impl)
{
    adia_rgcsr *R = adia__calloc(1, sizeof *R, "rgcsr format");
    if (!R) return ADIA_ERR_NO_MEMORY;
    int32_t G = adia_param(p->row_group, 8);
    *R = (adia_rgcsr){.rows = A->rows, .cols = A->cols, .G = G, .nnz = A->nnz, .vtype = vt,
                      .ngroups = (int32_t)(((int64_t)A->rows + G - 1) / G)};
    R->group_ptr = adia__calloc((size_t)R->ngroups + 1, sizeof *R->group_ptr, "rgcsr group pointers");
    R->rowlen = adia__alloc((size_t)A->rows, sizeof *R->rowlen, "rgcsr row lengths");
    adia_status s = R->group_ptr && R->rowlen ? layout(A, R) : ADIA_ERR_NO_MEMORY;
    int64_t slots = s == ADIA_OK ? R->group_ptr[R->ngroups] : 0;
    if (s == ADIA_OK) {
        R->colind = adia__alloc((size_t)slots, sizeof *R->colind, "rgcsr column indices");
        R->values = adia__row_values_alloc(slots, vt, "rgcsr values");
        if (!R->colind || !R->values) s = ADIA_ERR_NO_MEMORY;
    }
    if (s != ADIA_OK) {
        rgcsr_free(R);
        return s;
    }
    for (int64_t q = 0; q < slots; q++) R->colind[q] = ADIA_ROW_PAD;
    for (int32_t g = 0; g < R->ngroups; g++)
        for (int32_t r = 0, n = group_rows(R, g); r < n; r++)
            for (int64_t k = 0, i = (int64_t)g * G + r; k < R->rowlen[i]; k++) {
                int64_t q = R->group_ptr[g] + k * n + r;
                R->colind[q] = A->colind[A->rowptr[i] + k];
                row_value_set(R->values, vt, q, adia_csr_value(A, A->rowptr[i] + k));
            }
    *impl = R;
    return ADIA_OK;
}

static adia_status rgcsr_to_csr(const void *impl, adia_csr *out)
{
    const adia_rgcsr *R = impl;
    row_csr_builder b;
    ADIA_TRY(adia__row_csr_begin(&b, out, R->rows, R->cols, R->nnz));
    for (int32_t g = 0; g < R->ngroups; g++)
        for (int32_t r = 0, n = group_rows(R, g); r < n; r++)
            for (int64_t k = 0, i = (int64_t)g * R->G + r; k < R->rowlen[i]; k++) {
                int64_t q = R->group_ptr[g] + k * n + r;
                row_csr_push(&b, (int32_t)i, R->colind[q], row_value_get(R->values, R->vtype, q));
            }
    return adia__row_csr_finish(&b, "rgcsr");
}

static adia_status rgcsr_check(const void *impl)
{
    const adia_rgcsr *R = impl;
    int64_t n = 0;
    for (int32_t g = 0; g < R->ngroups; g++) {
        int64_t w = 0;
        for (int32_t r = 0; r < group_rows(R, g); r++) {
            int32_t len = R->rowlen[(int64_t)g * R->G + r];
            if (len < 0)
                return adia__error(ADIA_ERR_INVALID_MATRIX, "rgcsr: row %" PRId64
                                  " has length %d", (int64_t)g * R->G + r, (int)len);
            n += len;
            if (len > w) w = len;
        }
        if (R->group_ptr[g + 1] - R->group_ptr[g] != w * group_rows(R, g))
            return adia__error(ADIA_ERR_INVALID_MATRIX, "rgcsr: group %d holds %" PRId64
                              " slots, its rows need %" PRId64, (int)g,
                              R->group_ptr[g + 1] - R->group_ptr[g], w * group_rows(R, g));
    }
    if (n != R->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "rgcsr: row lengths add to %" PRId64
                          ", header says %" PRId64, n, R->nnz);
    return adia__row_check_index("rgcsr", "colind", R->colind, R->group_ptr[R->ngroups], R->cols, true);
}

static void rgcsr_destroy(void *impl) { rgcsr_free(impl); }

static int64_t rgcsr_padded_zeros(const void *impl)
{
    const adia_rgcsr *R = impl;
    return R->group_ptr[R->ngroups] - R->nnz;
}

static int64_t rgcsr_storage_bytes(const void *impl)
{
    const adia_rgcsr *R = impl;
    int64_t X = R->group_ptr[R->ngroups];
    return ((int64_t)R->ngroups + 1) * 8 + (int64_t)R->rows * 4 + X * 4 +
           row_value_bytes(X, R->vtype);
}

static ADIA_SPMV_SLOT(rgcsr_spmv, rgcsr_spmv, adia_rgcsr, A, A->vtype)

const adia_format_ops adia__format_rgcsr = {
    .name = "rgcsr",
    .description = "row-grouped CSR: groups of G rows interleaved by entry (param group)",
    .build = rgcsr_build,
    .to_csr = rgcsr_to_csr,
    .check = rgcsr_check,
    .destroy = rgcsr_destroy,
    .padded_zeros = rgcsr_padded_zeros,
    .storage_bytes = rgcsr_storage_bytes,
    .spmv = rgcsr_spmv,
};
