/* coo_rows.cuh -- row-sorted COO entries on the device, summed a row at a
 * time by one thread (no atomics: deterministic).  One piece for the COO
 * format (every row: y = alpha*A*x + beta*y, empty rows scaled too) and for
 * the parts other formats keep as COO (HYB's overflow, CRSD's scatter
 * points: only the rows holding entries, y += alpha*part*x after the main
 * kernel, i.e. beta = 1).  Included by row_gpu.cu and diag_gpu.cu; the
 * upload is in gpu_util.cu. */
#ifndef ADIA_COO_ROWS_CUH
#define ADIA_COO_ROWS_CUH

#include "gpu_common.h"

typedef struct adia_coo_rows {
    int n;                   /* rows listed                                 */
    int *row;                /* n row numbers; NULL: rows 0 .. n-1 (every row) */
    long long *ptr;          /* n + 1 ranges into col/val                   */
    int *col;
    void *val;
} adia_coo_rows;

/* Upload nnz entries sorted by row (rowind ascending; checked): every_row
 * lists all `rows` rows (the COO format), else only those with entries.
 * Values are vs bytes each. */
adia_status adia__coo_rows_upload(int32_t rows, int64_t nnz, const int32_t *rowind,
                                 const int32_t *colind, const void *val, size_t vs,
                                 int every_row, adia_coo_rows *d);
void adia__coo_rows_free(adia_coo_rows *d);

template <typename T>
__global__ void adia_coo_rows_kernel(adia_coo_rows a, T alpha, T beta,
                                     const T *__restrict__ x, T *__restrict__ y)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.n) return;
    const T *v = (const T *)a.val;
    T sum = T(0);
    for (long long k = a.ptr[i]; k < a.ptr[i + 1]; k++) sum += v[k] * __ldg(x + a.col[k]);
    int r = a.row ? a.row[i] : (int)i;
    y[r] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[r];   /* y not read if beta 0 */
}

template <typename T>
adia_status adia_coo_rows_run(const adia_coo_rows &a, T alpha, T beta, const T *x, T *y,
                              int block, cudaStream_t st)
{
    if (a.n == 0) return ADIA_OK;
    adia_coo_rows_kernel<T><<<adia_gpu_blocks(a.n, block), block, 0, st>>>(a, alpha, beta, x, y);
    return adia__gpu_launch_check("coo rows kernel");
}

#endif
