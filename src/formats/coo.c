/* coo.c -- the "coo" format (survey 003, eqs. 2.6-2.10): row-sorted
 * triplets (row, column, value).  Storage = nnz * (2 indices + 1 value),
 * eq. 2.10's "3 x NZV" counted in array elements.  CPU SpMV splits the
 * entries evenly between threads at row boundaries (row_kernels.inc). */
#include "row_common.h"
#include "row_formats.h"

#include <inttypes.h>

void adia__row_coo_free(adia_coo *C)
{
    free(C->rowind);
    free(C->colind);
    free(C->values);
    memset(C, 0, sizeof *C);
}

adia_status adia__row_coo_alloc(adia_coo *C, int32_t rows, int32_t cols, int64_t nnz,
                          adia_value_type vt)
{
    *C = (adia_coo){.rows = rows, .cols = cols, .nnz = nnz, .vtype = vt};
    C->rowind = adia__alloc((size_t)nnz, sizeof *C->rowind, "coo row indices");
    C->colind = adia__alloc((size_t)nnz, sizeof *C->colind, "coo column indices");
    C->values = adia__row_values_alloc(nnz, vt, "coo values");
    if (C->rowind && C->colind && C->values) return ADIA_OK;
    adia__row_coo_free(C);
    return ADIA_ERR_NO_MEMORY;
}

static adia_status coo_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    (void)p;
    adia_coo *C = adia__calloc(1, sizeof *C, "coo format");
    if (!C) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__row_coo_alloc(C, A->rows, A->cols, A->nnz, vt);
    if (s != ADIA_OK) {
        free(C);
        return s;
    }
    for (int32_t i = 0; i < A->rows; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            C->rowind[k] = i;
            C->colind[k] = A->colind[k];
            row_value_set(C->values, vt, k, adia_csr_value(A, k));
        }
    *impl = C;
    return ADIA_OK;
}

static adia_status coo_to_csr(const void *impl, adia_csr *out)
{
    const adia_coo *C = impl;
    row_csr_builder b;
    ADIA_TRY(adia__row_csr_begin(&b, out, C->rows, C->cols, C->nnz));
    for (int64_t k = 0; k < C->nnz; k++)
        row_csr_push(&b, C->rowind[k], C->colind[k], row_value_get(C->values, C->vtype, k));
    return adia__row_csr_finish(&b, "coo");
}

adia_status adia__row_coo_check(const adia_coo *C)
{
    ADIA_TRY(adia__row_check_index("coo", "rowind", C->rowind, C->nnz, C->rows, false));
    ADIA_TRY(adia__row_check_index("coo", "colind", C->colind, C->nnz, C->cols, false));
    for (int64_t k = 1; k < C->nnz; k++)
        if (C->rowind[k] < C->rowind[k - 1] ||
            (C->rowind[k] == C->rowind[k - 1] && C->colind[k] <= C->colind[k - 1]))
            return adia__error(ADIA_ERR_INVALID_MATRIX,
                              "coo: entry %" PRId64 " (%d, %d) not after entry %" PRId64
                              " (%d, %d) in row-major order", k, (int)C->rowind[k],
                              (int)C->colind[k], k - 1, (int)C->rowind[k - 1],
                              (int)C->colind[k - 1]);
    return ADIA_OK;
}

static adia_status coo_check(const void *impl) { return adia__row_coo_check(impl); }

static void coo_destroy(void *impl)
{
    adia__row_coo_free(impl);
    free(impl);
}

static int64_t coo_padded_zeros(const void *impl)
{
    (void)impl;
    return 0;
}

static int64_t coo_storage_bytes(const void *impl)
{
    const adia_coo *C = impl;
    return C->nnz * 8 + row_value_bytes(C->nnz, C->vtype);
}

/* The planner's cost model (constants: plan_model.c). */
static int64_t coo_predict(const adia_model_input *in, int *exact)
{
    *exact = 1;
    return in->A->nnz * (8 + (int64_t)adia_value_size(in->vtype));
}

/* An entry per position: no two threads write one row's diagonal. */
void adia__row_coo_diagonal(const adia_coo *C, double *d)
{
#pragma omp parallel for schedule(static) if (C->nnz > ROW_DIAGONAL_PAR_MIN) num_threads(adia__threads())
    for (int64_t k = 0; k < C->nnz; k++)
        if (C->rowind[k] == C->colind[k]) d[C->rowind[k]] = row_value_get(C->values, C->vtype, k);
}

static adia_status coo_diagonal(const adia_format *F, double *d)
{
    const adia_coo *C = F->impl;
    memset(d, 0, (size_t)C->rows * sizeof *d);
    adia__row_coo_diagonal(C, d);
    return ADIA_OK;
}

const adia_format_ops adia__format_coo = {
    .name = "coo",
    .description = "coordinate triplets sorted by row",
    .build = coo_build,
    .to_csr = coo_to_csr,
    .check = coo_check,
    .destroy = coo_destroy,
    .padded_zeros = coo_padded_zeros,
    .storage_bytes = coo_storage_bytes,
    .spmv = adia__coo_spmv,
    .diagonal = coo_diagonal,
    .model = {coo_predict, 0.40, 0.35, 1, 1, 1.50, 0.118, ADIA_STEPS_ROW_MAX}, /* segmented reduction */
};
