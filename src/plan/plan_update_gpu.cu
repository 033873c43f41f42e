/* plan_update_gpu.cu -- adia_plan_update_values_device_csr: new values of
 * a GPU plan from a CSR in device memory (CuPy's, cuSPARSE's).  For now
 * the CSR comes to the host once (structure and values, in the master
 * CSR's layout) and adia_plan_update_values' path refills the plan, whose
 * diagonal formats then copy their data array up: correct for every
 * format and plan, bound by PCIe (issue 28, item 6; a refill on the device
 * is the next step). */
#include "plan_internal.h"
#include "../cuda/cuda_util.h"

#include <vector>

namespace {

/* A's arrays to the host as out (values double, rowptr 64 bits). */
adia_status download_csr(const adia_device_csr *A, adia_csr *out)
{
    ADIA_TRY(adia__csr_alloc(out, A->rows, A->cols, A->nnz, ADIA_DOUBLE));
    const size_t rows = (size_t)A->rows, nnz = (size_t)A->nnz;
    if (A->rowptr_bits == 32) {
        std::vector<int32_t> rp(rows + 1);
        ADIA_CUDA_TRY(cudaMemcpy(rp.data(), A->rowptr, rp.size() * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i <= rows; i++) out->rowptr[i] = rp[i];
    } else {
        ADIA_CUDA_TRY(cudaMemcpy(out->rowptr, A->rowptr, (rows + 1) * 8, cudaMemcpyDeviceToHost));
    }
    if (nnz == 0) return ADIA_OK;
    ADIA_CUDA_TRY(cudaMemcpy(out->colind, A->colind, nnz * 4, cudaMemcpyDeviceToHost));
    double *v = (double *)out->values;
    if (A->values_type == ADIA_FLOAT) {
        std::vector<float> f(nnz);
        ADIA_CUDA_TRY(cudaMemcpy(f.data(), A->values, nnz * 4, cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < nnz; k++) v[k] = f[k];
    } else {
        ADIA_CUDA_TRY(cudaMemcpy(v, A->values, nnz * 8, cudaMemcpyDeviceToHost));
    }
    return ADIA_OK;
}

#define BAD(...) return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_update_values_device_csr: " __VA_ARGS__)
adia_status check_args(const adia_plan *P, const adia_device_csr *A)
{
    if (!P) return adia__error(ADIA_ERR_INVALID_HANDLE, "adia_plan_update_values_device_csr: plan is NULL");
    if (P->magic != ADIA_MAGIC_PLAN)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "adia_plan_update_values_device_csr: not a live "
                           "plan handle (destroyed or uninitialised)");
    if (!A) BAD("the matrix is NULL");
    if (A->rows < 0 || A->cols < 0 || A->nnz < 0)
        BAD("negative size %d x %d, %lld nonzeros", (int)A->rows, (int)A->cols, (long long)A->nnz);
    if (A->rowptr_bits != 32 && A->rowptr_bits != 64)
        BAD("rowptr_bits = %d: row pointers are 32 or 64 bits", A->rowptr_bits);
    if (A->values_type != ADIA_DOUBLE && A->values_type != ADIA_FLOAT)
        BAD("values_type %d: double or float", (int)A->values_type);
    if (!A->rowptr || (A->nnz > 0 && (!A->colind || !A->values)))
        BAD("NULL device array (rowptr %p, colind %p, values %p)", A->rowptr,
            (const void *)A->colind, A->values);
    return ADIA_OK;
}
#undef BAD

} // namespace

extern "C" adia_status adia_plan_update_values_device_csr(adia_plan *plan, const adia_device_csr *A)
{
    ADIA_TRY(check_args(plan, A));
    if (A->rows != plan->rows || A->cols != plan->cols)
        return adia__error(ADIA_ERR_DIMENSION, "adia_plan_update_values_device_csr: the new matrix is "
                           "%d x %d, the plan's %d x %d", (int)A->rows, (int)A->cols,
                           (int)plan->rows, (int)plan->cols);
    adia_csr c;
    memset(&c, 0, sizeof c);
    adia_status s = download_csr(A, &c);
    if (s == ADIA_OK) s = adia__plan_update_csr(plan, &c, "adia_plan_update_values_device_csr");
    adia__csr_free(&c);
    return s;
}
