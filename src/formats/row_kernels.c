/* row_kernels.c -- the CPU SpMV kernels of coo, ell, sell, hyb (ell + coo),
 * bcsr and csc, instantiated for double and float from row_kernels.inc. */
#include "row_common.h"
#include "row_formats.h"

#include <omp.h>

/* CSC's column chunks, each with its copy of y (row_kernels.inc). */
#define ADIA_CSC_CHUNKS 16

/* First row of thread t's share of a COO matrix (see coo_spmv). */
static int32_t coo_row_bound(const adia_coo *A, int t, int T)
{
    if (t <= 0) return 0;
    if (t >= T) return A->rows;
    if (A->nnz == 0) return (int32_t)row_split(A->rows, t, T);
    return A->rowind[row_split(A->nnz, t, T)];
}

/* First entry of row r or later (binary search; rowind is sorted). */
static int64_t coo_first_entry(const adia_coo *A, int32_t r)
{
    int64_t lo = 0, hi = A->nnz;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->rowind[mid] < r) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

#define VALUE double
#define FN(name) name##_d
#include "row_kernels.inc"
#define VALUE float
#define FN(name) name##_f
#include "row_kernels.inc"

ADIA_SPMV_SLOT(adia__coo_spmv, coo_spmv, adia_coo, A, A->vtype)

ADIA_SPMV_SLOT(adia__ell_spmv, ell_spmv, adia_ell, A, A->vtype)

ADIA_SPMV_SLOT(adia__sell_spmv, sell_spmv, adia_sell, A, A->vtype)

ADIA_SPMV_SLOT(adia__bcsr_spmv, bcsr_spmv, adia_bcsr, A, A->vtype)

adia_status adia__csc_spmv(const adia_csc *A, double alpha, const void *x, double beta, void *y)
{
    int T = adia__threads();
    double *acc = adia__calloc((size_t)ADIA_CSC_CHUNKS, ((size_t)A->rows + 1) * sizeof(double),
                              "csc per-chunk y copies");
    if (!acc) return ADIA_ERR_NO_MEMORY;
    if (A->vtype == ADIA_DOUBLE) csc_spmv_d(A, alpha, x, beta, y, acc, T);
    else csc_spmv_f(A, alpha, x, beta, y, acc, T);
    free(acc);
    return ADIA_OK;
}
