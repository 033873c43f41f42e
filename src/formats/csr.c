/* csr.c -- the "csr" format: CSR arrays in double or float.  The simplest
 * module, and the model for the others' operations tables. */
#include "row_common.h"

#define VALUE double
#define FN(name) name##_d
#include "csr_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "csr_kernel.inc"

static adia_status csr_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    (void)p;
    adia_csr *c = adia__alloc(1, sizeof *c, "csr format");
    if (!c) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__csr_copy(A, vt, c);
    if (s != ADIA_OK) {
        free(c);
        return s;
    }
    *impl = c;
    return ADIA_OK;
}

static adia_status csr_to_csr(const void *impl, adia_csr *out)
{
    return adia__csr_copy(impl, ADIA_DOUBLE, out);
}

static adia_status csr_check(const void *impl) { return adia__csr_check(impl); }

static void csr_destroy(void *impl)
{
    adia__csr_free(impl);
    free(impl);
}

static int64_t csr_padded_zeros(const void *impl)
{
    (void)impl;
    return 0;
}

static int64_t csr_storage_bytes(const void *impl)
{
    const adia_csr *A = impl;
    return ((int64_t)A->rows + 1) * 8 +
           A->nnz * (4 + (int64_t)adia_value_size(A->vtype));
}

static adia_status csr_spmv(const void *impl, double alpha, const void *x,
                            double beta, void *y)
{
    const adia_csr *A = impl;
    if (A->vtype == ADIA_DOUBLE)
        csr_spmv_d(A, alpha, x, beta, y);
    else
        csr_spmv_f(A, alpha, x, beta, y);
    return ADIA_OK;
}

/* A(i,i): a binary search of each row's sorted columns, rows on threads. */
static adia_status csr_diagonal(const adia_format *F, double *d)
{
    const adia_csr *A = F->impl;
#pragma omp parallel for schedule(static) if (A->rows > ROW_DIAGONAL_PAR_MIN) num_threads(adia__threads())
    for (int32_t i = 0; i < A->rows; i++) {
        int64_t lo = A->rowptr[i], hi = A->rowptr[i + 1];
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (A->colind[mid] < i) lo = mid + 1; else hi = mid;
        }
        d[i] = lo < A->rowptr[i + 1] && A->colind[lo] == i ? adia_csr_value(A, lo) : 0.0;
    }
    return ADIA_OK;
}

/* New values: the same order, converted to the storage's type. */
static adia_status csr_refill(void *impl, const adia_csr *A)
{
    adia_csr *C = impl;
    if (C->nnz != A->nnz || C->rows != A->rows)
        return adia__error(ADIA_ERR_INTERNAL, "csr refill: another pattern");
    const double *v = A->values;
    double *cd = C->values;
    float *cf = C->values;
    int dbl = C->vtype == ADIA_DOUBLE;
#pragma omp parallel for schedule(static) if (A->nnz > ROW_DIAGONAL_PAR_MIN) num_threads(adia__threads())
    for (int64_t j = 0; j < A->nnz; j++)
        if (dbl) cd[j] = v[j]; else cf[j] = (float)v[j];
    return ADIA_OK;
}

/* The planner's cost model (constants: plan_model.c). */
static int64_t csr_predict(const adia_model_input *in, int *exact)
{
    *exact = 1;
    return ((int64_t)in->A->rows + 1) * 8 + in->A->nnz * (4 + (int64_t)adia_value_size(in->vtype));
}

const adia_format_ops adia__format_csr = {
    .name = "csr",
    .description = "compressed sparse rows (64-bit row pointers)",
    .build = csr_build,
    .refill = csr_refill,
    .to_csr = csr_to_csr,
    .check = csr_check,
    .destroy = csr_destroy,
    .padded_zeros = csr_padded_zeros,
    .storage_bytes = csr_storage_bytes,
    .spmv = csr_spmv,
    .diagonal = csr_diagonal,
    .model = {csr_predict, 0.70, 0.60, 1, 1, 1.74, 0.015, ADIA_STEPS_ROW_MAX}, /* irregular x gathers */
};
