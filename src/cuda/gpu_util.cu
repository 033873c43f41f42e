/* gpu_util.cu -- device copies and launch checks shared by the GPU format
 * modules. */
#include "coo_rows.cuh"

#include <string.h>

extern "C" adia_status adia__gpu_copy_in(void **d, const void *h, int64_t n, size_t sz,
                                        const char *what)
{
    *d = NULL;
    if (n <= 0) return ADIA_OK;
    size_t bytes;
    if (!adia_mul_size((size_t)n, sz, &bytes))
        return adia__error(ADIA_ERR_OVERFLOW, "device copy of %s: %lld elements overflow",
                          what, (long long)n);
    cudaError_t e = cudaMalloc(d, bytes);
    if (e != cudaSuccess) {
        *d = NULL;
        return adia_cuda_check(e, what);
    }
    e = cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(*d);
        *d = NULL;
        return adia_cuda_check(e, what);
    }
    return ADIA_OK;
}

extern "C" adia_status adia__gpu_fence(const char *what)
{
    return adia_cuda_check(cudaStreamSynchronize(cudaStreamLegacy), what);
}

extern "C" adia_status adia__gpu_check_free(int64_t bytes, const char *what)
{
    size_t free_b = 0, total_b = 0;
    ADIA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    return adia__device_memory_check(bytes, free_b > (size_t)INT64_MAX ? INT64_MAX : (int64_t)free_b,
                                     what);
}

extern "C" adia_status adia__gpu_launch_check(const char *kernel)
{
    return adia_cuda_check(cudaGetLastError(), kernel);
}

/* Row list and ranges of row-sorted entries: every row, or those with entries. */
static adia_status coo_ranges(int32_t rows, int64_t nnz, const int32_t *rowind, int every_row,
                              int **row, long long **ptr, int *n)
{
    int64_t listed = every_row ? rows : 0;
    for (int64_t k = 0; k < nnz; k++) {
        if (rowind[k] < 0 || rowind[k] >= rows || (k > 0 && rowind[k] < rowind[k - 1]))
            return adia__error(ADIA_ERR_INTERNAL, "coo upload: entry %lld (row %d) out of row order",
                              (long long)k, (int)rowind[k]);
        if (!every_row && (k == 0 || rowind[k] != rowind[k - 1])) listed++;
    }
    *n = (int)listed;
    *row = every_row ? NULL : (int *)adia__alloc((size_t)listed, sizeof **row, "coo rows");
    *ptr = (long long *)adia__calloc((size_t)listed + 1, sizeof **ptr, "coo row ranges");
    if ((!every_row && !*row) || !*ptr) return ADIA_ERR_NO_MEMORY;
    if (every_row) {        /* counts, then prefix sums */
        for (int64_t k = 0; k < nnz; k++) (*ptr)[rowind[k] + 1]++;
        for (int32_t r = 0; r < rows; r++) (*ptr)[r + 1] += (*ptr)[r];
        return ADIA_OK;
    }
    int64_t i = 0;
    for (int64_t k = 0; k < nnz; k++)
        if (k == 0 || rowind[k] != rowind[k - 1]) {
            (*row)[i] = rowind[k];
            (*ptr)[i++] = k;
        }
    (*ptr)[listed] = nnz;
    return ADIA_OK;
}

adia_status adia__coo_rows_upload(int32_t rows, int64_t nnz, const int32_t *rowind,
                                 const int32_t *colind, const void *val, size_t vs,
                                 int every_row, adia_coo_rows *d)
{
    memset(d, 0, sizeof *d);
    int *row = NULL;
    long long *ptr = NULL;
    adia_status s = coo_ranges(rows, nnz, rowind, every_row, &row, &ptr, &d->n);
    if (s == ADIA_OK && row) s = adia__gpu_copy_in((void **)&d->row, row, d->n, sizeof *row, "coo rows");
    if (s == ADIA_OK && d->n > 0)
        s = adia__gpu_copy_in((void **)&d->ptr, ptr, (int64_t)d->n + 1, sizeof *ptr, "coo row ranges");
    if (s == ADIA_OK) s = adia__gpu_copy_in((void **)&d->col, colind, nnz, 4, "coo columns");
    if (s == ADIA_OK) s = adia__gpu_copy_in(&d->val, val, nnz, vs, "coo values");
    free(row);
    free(ptr);
    if (s != ADIA_OK) adia__coo_rows_free(d);
    return s;
}

void adia__coo_rows_free(adia_coo_rows *d)
{
    cudaFree(d->row);
    cudaFree(d->ptr);
    cudaFree(d->col);
    cudaFree(d->val);
    memset(d, 0, sizeof *d);
}
