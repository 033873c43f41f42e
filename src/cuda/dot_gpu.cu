/* dot_gpu.cu -- products with fused dot products (the GPU solvers' hook):
 * the formats' spmv_dot slot, and the one fallback for formats without it
 * (the product, then a pass for the sums). */
#include "gpu_common.h"

/* Blocks of the sums' own pass: enough to fill the device, no more than
 * the work holds.  Products launch at most one block per 128 rows (256
 * threads of up to 4 rows, or the row kernels' 128 and more). */
static const int DOT_BLOCK = 256;
static const int MIN_ROWS_PER_BLOCK = 128;

extern "C" adia_status adia__gpu_dots(adia_value_type vt, const void *x, const void *y,
                                     int32_t rows, const adia_dot_work *dw, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    unsigned grid = rows > 0 ? adia_gpu_blocks(rows, DOT_BLOCK) : 1;
    if (grid > 1024) grid = 1024;   /* a grid-stride loop: a few waves are plenty */
    if (grid > dw->max_blocks) grid = dw->max_blocks;
    if (vt == ADIA_DOUBLE)
        adia_dots_kernel<double><<<grid, DOT_BLOCK, 0, st>>>((const double *)x, (const double *)y,
                                                              rows, *dw);
    else
        adia_dots_kernel<float><<<grid, DOT_BLOCK, 0, st>>>((const float *)x, (const float *)y,
                                                             rows, *dw);
    return adia__gpu_launch_check("fused dot products");
}

extern "C" adia_status adia__format_spmv_dot_gpu(adia_format *F, double alpha, const void *x,
                                                double beta, void *y, const adia_dot_work *dw,
                                                void *stream)
{
    if (F->rows != F->cols)
        return adia__error(ADIA_ERR_INVALID_ARG, "fused dot products need a square matrix "
                          "(%d x %d)", (int)F->rows, (int)F->cols);
    if ((int64_t)adia_gpu_blocks(F->rows > 0 ? F->rows : 1, MIN_ROWS_PER_BLOCK) > dw->max_blocks)
        return adia__error(ADIA_ERR_INTERNAL, "fused dot work of %u blocks is too small for %d "
                          "rows", dw->max_blocks, (int)F->rows);
    ADIA_TRY(adia_format_upload(F));
    const adia_gpu_ops *g = F->ops->gpu;
    if (g->spmv_dot) return g->spmv_dot(F->dev, alpha, x, beta, y, dw, stream);
    ADIA_TRY(g->spmv(F->dev, alpha, x, beta, y, stream));
    return adia__gpu_dots(F->vtype, x, y, F->rows, dw, stream);
}

extern "C" adia_status adia__gpu_dot_work_alloc(int64_t rows, adia_dot_work *dw, void **mem)
{
    *mem = NULL;
    memset(dw, 0, sizeof *dw);
    int64_t blocks = (rows > 0 ? rows : 1) / MIN_ROWS_PER_BLOCK + 1;
    int64_t groups = blocks / ADIA_DOT_GROUP + 1;
    size_t sums = (size_t)(blocks + groups + 1) * ADIA_NDOT * sizeof(double);
    size_t counters = (size_t)(groups + 1) * sizeof(unsigned);
    ADIA_CUDA_TRY(cudaMalloc(mem, sums + counters));
    ADIA_CUDA_TRY(cudaMemset(*mem, 0, sums + counters));
    double *p = (double *)*mem;
    dw->partial = p;
    dw->out = p + (blocks + groups) * ADIA_NDOT;
    dw->count = (unsigned *)((char *)*mem + sums);
    dw->max_blocks = (unsigned)blocks;
    return ADIA_OK;
}
