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
    if (F->rows > F->cols || (F->rows != F->cols && !dw->xd))
        return adia__error(ADIA_ERR_INVALID_ARG, "fused dot products need a square matrix "
                          "(%d x %d) or each row's own x entry (xd)", (int)F->rows, (int)F->cols);
    if ((int64_t)adia_gpu_blocks(F->rows > 0 ? F->rows : 1, MIN_ROWS_PER_BLOCK) > dw->max_blocks)
        return adia__error(ADIA_ERR_INTERNAL, "fused dot work of %u blocks is too small for %d "
                          "rows", dw->max_blocks, (int)F->rows);
    ADIA_TRY(adia_format_upload(F));
    const adia_gpu_ops *g = F->ops->gpu;
    if (g->spmv_dot) return g->spmv_dot(F->dev, alpha, x, beta, y, dw, stream);
    ADIA_TRY(g->spmv(F->dev, alpha, x, beta, y, stream));
    return adia__gpu_dots(F->vtype, x, y, F->rows, dw, stream);
}

/* The work of the sums of products of up to `rows` rows: block partials,
 * group partials, then the counters (the sums themselves are not in it). */
static void work_layout(int64_t rows, unsigned *blocks, size_t *partial_bytes, size_t *bytes)
{
    int64_t b = (rows > 0 ? rows : 1) / MIN_ROWS_PER_BLOCK + 1;
    int64_t groups = b / ADIA_DOT_GROUP + 1;
    *blocks = (unsigned)b;
    *partial_bytes = (size_t)(b + groups) * ADIA_NDOT * sizeof(double);
    *bytes = *partial_bytes + (size_t)(groups + 1) * sizeof(unsigned);
}

static void work_at(int64_t rows, void *mem, adia_dot_work *dw)
{
    unsigned blocks;
    size_t partial, bytes;
    work_layout(rows, &blocks, &partial, &bytes);
    memset(dw, 0, sizeof *dw);
    dw->partial = (double *)mem;
    dw->count = (unsigned *)((char *)mem + partial);
    dw->max_blocks = blocks;
}

extern "C" adia_status adia__gpu_dot_work_alloc(int64_t rows, adia_dot_work *dw, void **mem,
                                               void *stream)
{
    unsigned blocks;
    size_t partial, bytes;
    work_layout(rows, &blocks, &partial, &bytes);
    const size_t out = ADIA_NDOT * sizeof(double);
    if (!*mem) ADIA_CUDA_TRY(cudaMalloc(mem, out + bytes));
    ADIA_CUDA_TRY(cudaMemsetAsync(*mem, 0, out + bytes, (cudaStream_t)stream));
    work_at(rows, (char *)*mem + out, dw);
    dw->out = (double *)*mem;
    return ADIA_OK;
}

extern "C" size_t adia__gpu_dot_work_bytes(int64_t rows)
{
    unsigned blocks;
    size_t partial, bytes;
    work_layout(rows, &blocks, &partial, &bytes);
    return bytes;
}

extern "C" adia_status adia__gpu_spmv_sums(adia_format *F, double alpha, const void *x, void *y,
                                          const void *xd, const void *z, double *out, void *work,
                                          void *stream)
{
    adia_dot_work dw;
    work_at(F->rows, work, &dw);
    dw.xd = xd;
    dw.z = z;
    dw.out = out;
    dw.add = 1;
    return adia__format_spmv_dot_gpu(F, alpha, x, 0.0, y, &dw, stream);
}
