/* row_gpu.cu -- GPU kernels of the basic row formats (row_formats.h, copied
 * from the rowfmt branch): coo, ell, sell, hyb, bcsr.  One kernel each, one
 * thread per row (per block row element row for bcsr); padding slots
 * (column ADIA_ROW_PAD) are skipped, so NaN in x reaches exactly the rows
 * that hold that column.
 *
 *  coo   coo_rows.cuh: row ranges of the row-sorted triplets, a thread per
 *        row (race-free and deterministic: no atomics).
 *  ell   slot k of row i at k*rows + i: a warp's loads are coalesced.
 *  sell  slot k of local row r of slice s at slice_ptr[s] + k*C + r; y is
 *        written through perm.
 *  hyb   the ell kernel, then the coo part's rows add with beta = 1.
 *  bcsr  thread (block row, local row i); blocks' values row-major.
 * Each also reads its diagonal (A(i,i), Jacobi's) on the device: a thread
 * per row searching that row's slots. */
#include "diagonal.cuh"
#include "row_build.h"
#include "formats/row_common.h"

#include <inttypes.h>

namespace {

struct ell_dev { int rows, width; int *col; void *val; };
struct sell_dev { int rows, C, nslices; long long *slice_ptr; int *width, *perm, *col; void *val; };
struct bcsr_dev { int rows, cols, r, c, brows; long long *browptr; int *bcol; void *val; };

struct row_dev {
    adia_gpu_head head;
    adia_value_type vt;
    int kind;                 /* 0 coo, 1 ell, 2 sell, 3 hyb, 4 bcsr */
    adia_coo_rows coo;
    ell_dev ell;
    sell_dev sell;
    bcsr_dev bcsr;
};

template <typename T>
__device__ __forceinline__ void row_store(T *y, int r, T alpha, T beta, T sum)
{
    if (beta == T(0)) y[r] = alpha * sum;
    else y[r] = alpha * sum + beta * y[r];
}

__device__ __forceinline__ long long thread_index()
{
    return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

template <typename T>
__global__ void ell_kernel(ell_dev a, T alpha, T beta, const T *__restrict__ x, T *__restrict__ y)
{
    long long r = thread_index();
    if (r >= a.rows) return;
    const T *v = (const T *)a.val;
    T sum = T(0);
    for (int k = 0; k < a.width; k++) {
        long long s = (long long)k * a.rows + r;
        int c = a.col[s];
        if (c != ADIA_ROW_PAD) sum += v[s] * __ldg(x + c);
    }
    row_store(y, (int)r, alpha, beta, sum);
}

template <typename T>
__global__ void sell_kernel(sell_dev a, T alpha, T beta, const T *__restrict__ x, T *__restrict__ y)
{
    long long t = thread_index();
    if (t >= (long long)a.nslices * a.C) return;
    int s = (int)(t / a.C), lr = (int)(t % a.C);
    if (t >= a.rows) return;  /* padded rows of the last slice */
    const T *v = (const T *)a.val;
    T sum = T(0);
    for (int k = 0; k < a.width[s]; k++) {
        long long p = a.slice_ptr[s] + (long long)k * a.C + lr;
        int c = a.col[p];
        if (c != ADIA_ROW_PAD) sum += v[p] * __ldg(x + c);
    }
    row_store(y, a.perm[t], alpha, beta, sum);
}

template <typename T>
__global__ void bcsr_kernel(bcsr_dev a, T alpha, T beta, const T *__restrict__ x, T *__restrict__ y)
{
    long long t = thread_index();
    if (t >= (long long)a.brows * a.r) return;
    int br = (int)(t / a.r), i = (int)(t % a.r);
    long long row = (long long)br * a.r + i;
    if (row >= a.rows) return;
    const T *v = (const T *)a.val;
    T sum = T(0);
    for (long long b = a.browptr[br]; b < a.browptr[br + 1]; b++) {
        long long c0 = (long long)a.bcol[b] * a.c;
        const T *blk = v + b * a.r * a.c + (long long)i * a.c;
        for (int j = 0; j < a.c; j++)
            if (c0 + j < a.cols && blk[j] != T(0)) sum += blk[j] * __ldg(x + c0 + j);
    }
    row_store(y, (int)row, alpha, beta, sum);
}

/* ------------------------------------------------------------- uploads */

#define COPY(dst, src, n, sz, what) ADIA_TRY(adia__gpu_copy_in((void **)&(dst), (src), (n), (sz), (what)))

/* every_row: the COO format (y scaled on every row); else HYB's part. */
adia_status coo_copy(adia_coo_rows *d, const adia_coo *A, int every_row)
{
    return adia__coo_rows_upload(A->rows, A->nnz, A->rowind, A->colind, A->values,
                                adia_value_size(A->vtype), every_row, d);
}

adia_status ell_copy(ell_dev *d, const adia_ell *A)
{
    d->rows = A->rows;
    d->width = A->width;
    int64_t n = (int64_t)A->width * A->rows;
    COPY(d->col, A->colind, n, 4, "ell columns");
    COPY(d->val, A->values, n, adia_value_size(A->vtype), "ell values");
    return ADIA_OK;
}

adia_status sell_copy(sell_dev *d, const adia_sell *A)
{
    d->rows = A->rows;
    d->C = A->C;
    d->nslices = A->nslices;
    int64_t n = A->slice_ptr[A->nslices];
    COPY(d->slice_ptr, A->slice_ptr, (int64_t)A->nslices + 1, 8, "sell slice starts");
    COPY(d->width, A->slice_width, A->nslices, 4, "sell slice widths");
    COPY(d->perm, A->perm, A->rows, 4, "sell permutation");
    COPY(d->col, A->colind, n, 4, "sell columns");
    COPY(d->val, A->values, n, adia_value_size(A->vtype), "sell values");
    return ADIA_OK;
}

adia_status bcsr_copy(bcsr_dev *d, const adia_bcsr *A)
{
    d->rows = A->rows;
    d->cols = A->cols;
    d->r = A->r;
    d->c = A->c;
    d->brows = A->brows;
    int64_t nv;
    if (!adia_mul_i64(A->nblocks, (int64_t)A->r * A->c, &nv))
        return adia__error(ADIA_ERR_OVERFLOW, "bcsr upload: %lld blocks overflow", (long long)A->nblocks);
    COPY(d->browptr, A->browptr, (int64_t)A->brows + 1, 8, "bcsr block row pointers");
    COPY(d->bcol, A->bcolind, A->nblocks, 4, "bcsr block columns");
    COPY(d->val, A->values, nv, adia_value_size(A->vtype), "bcsr values");
    return ADIA_OK;
}

void row_free(void *p)
{
    row_dev *d = (row_dev *)p;
    if (!d) return;
    adia__coo_rows_free(&d->coo);
    void *a[] = {d->ell.col, d->ell.val,
                 d->sell.slice_ptr, d->sell.width, d->sell.perm, d->sell.col, d->sell.val,
                 d->bcsr.browptr, d->bcsr.bcol, d->bcsr.val};
    for (void *x : a) cudaFree(x);
    free(d);
}

adia_status row_select(void *p, adia_gpu_kernel k)
{
    ((row_dev *)p)->head.kernel = k;
    return ADIA_OK;
}

adia_status row_copy(row_dev *d, const void *impl)
{
    switch (d->kind) {
    case 0: return coo_copy(&d->coo, (const adia_coo *)impl, 1);
    case 1: return ell_copy(&d->ell, (const adia_ell *)impl);
    case 2: return sell_copy(&d->sell, (const adia_sell *)impl);
    case 3:
        ADIA_TRY(ell_copy(&d->ell, &((const adia_hyb *)impl)->ell));
        return coo_copy(&d->coo, &((const adia_hyb *)impl)->coo, 0);
    default: return bcsr_copy(&d->bcsr, (const adia_bcsr *)impl);
    }
}

/* A device struct of kind `kind`, its arrays still NULL. */
row_dev *row_dev_new(int kind, adia_value_type vt)
{
    row_dev *d = (row_dev *)adia__calloc(1, sizeof *d, "row format device struct");
    if (!d) return nullptr;
    d->vt = vt;
    d->kind = kind;
    d->head.allowed = 1u << ADIA_KERNEL_GENERIC;
    d->head.auto_kernel = d->head.kernel = ADIA_KERNEL_GENERIC;
    d->head.block = 256;
    d->head.select = row_select;
    return d;
}

template <int KIND>
adia_status row_upload(const void *impl, adia_value_type vt, const adia_format_params *p, void **out)
{
    (void)p;
    row_dev *d = row_dev_new(KIND, vt);
    if (!d) return ADIA_ERR_NO_MEMORY;
    adia_status s = row_copy(d, impl);
    if (s != ADIA_OK) {
        row_free(d);
        return s;
    }
    *out = d;
    return ADIA_OK;
}

template <typename T>
adia_status row_run(const row_dev *d, T alpha, T beta, const T *x, T *y, cudaStream_t st)
{
    int B = d->head.block;
    switch (d->kind) {
    case 0: return adia_coo_rows_run<T>(d->coo, alpha, beta, x, y, B, st);
    case 1: case 3:
        if (d->ell.rows) ell_kernel<T><<<adia_gpu_blocks(d->ell.rows, B), B, 0, st>>>(d->ell, alpha, beta, x, y);
        ADIA_GPU_LAUNCH_TRY("ell kernel");
        if (d->kind == 3) return adia_coo_rows_run<T>(d->coo, alpha, T(1), x, y, B, st);
        break;
    case 2:
        if (d->sell.rows)
            sell_kernel<T><<<adia_gpu_blocks((int64_t)d->sell.nslices * d->sell.C, B), B, 0, st>>>(d->sell, alpha, beta, x, y);
        break;
    default:
        if (d->bcsr.rows)
            bcsr_kernel<T><<<adia_gpu_blocks((int64_t)d->bcsr.brows * d->bcsr.r, B), B, 0, st>>>(d->bcsr, alpha, beta, x, y);
    }
    return adia__gpu_launch_check("row format kernel");
}

adia_status row_spmv(const void *p, double alpha, const void *x, double beta, void *y, void *stream)
{
    const row_dev *d = (const row_dev *)p;
    cudaStream_t st = (cudaStream_t)stream;
    if (d->vt == ADIA_DOUBLE) return row_run<double>(d, alpha, beta, (const double *)x, (double *)y, st);
    return row_run<float>(d, (float)alpha, (float)beta, (const float *)x, (float *)y, st);
}

/* ------------------------------------------------------------ diagonal */

/* The slot k < n of a row (columns at col[k * stride] ascending, padding
 * after them) holding column c, or -1: unsigned, the padding's -1 sorts
 * after every column (row_find_col of row_common.h). */
__device__ __forceinline__ long long row_slot(const int *col, int n, long long stride, int c)
{
    for (int k = 0; k < n; k++) {
        unsigned j = (unsigned)col[k * stride];
        if (j >= (unsigned)c) return j == (unsigned)c ? k : -1;
    }
    return -1;
}

template <typename T, typename O>
__global__ void ell_diagonal(ell_dev a, O *__restrict__ d)
{
    long long r = thread_index();
    if (r >= a.rows) return;
    long long k = row_slot(a.col + r, a.width, a.rows, (int)r);
    d[r] = k < 0 ? O(0) : (O)((const T *)a.val)[k * a.rows + r];
}

template <typename T, typename O>
__global__ void sell_diagonal(sell_dev a, O *__restrict__ d)
{
    long long t = thread_index();
    if (t >= a.rows) return;
    int s = (int)(t / a.C), i = a.perm[t];
    long long first = a.slice_ptr[s] + t % a.C;
    long long k = row_slot(a.col + first, a.width[s], a.C, i);
    d[i] = k < 0 ? O(0) : (O)((const T *)a.val)[first + k * a.C];
}

/* Row i's diagonal lies in block column i / c of its block row, at (i mod
 * r, i mod c) of that block; the block columns of a block row ascend. */
template <typename T, typename O>
__global__ void bcsr_diagonal(bcsr_dev a, O *__restrict__ d)
{
    long long row = thread_index();
    if (row >= a.rows) return;
    T v = T(0);
    if (row < a.cols) {
        int br = (int)(row / a.r), bc = (int)(row / a.c);
        for (long long b = a.browptr[br]; b < a.browptr[br + 1] && a.bcol[b] <= bc; b++)
            if (a.bcol[b] == bc)
                v = ((const T *)a.val)[b * a.r * a.c + (row % a.r) * a.c + row % a.c];
    }
    d[row] = (O)v;
}

template <typename T, typename O>
adia_status row_diagonal_run(const row_dev *d, O *out, cudaStream_t st)
{
    const int B = 256;
    switch (d->kind) {
    case 0:   /* the COO format lists every row */
        if (d->coo.n == 0) return ADIA_OK;
        ADIA_CUDA_TRY(cudaMemsetAsync(out, 0, (size_t)d->coo.n * sizeof(O), st));
        return adia_coo_rows_diagonal_run<T, O>(d->coo, out, st);
    case 1: case 3:
        if (d->ell.rows) ell_diagonal<T, O><<<adia_gpu_blocks(d->ell.rows, B), B, 0, st>>>(d->ell, out);
        ADIA_GPU_LAUNCH_TRY("ell diagonal");
        return d->kind == 3 ? adia_coo_rows_diagonal_run<T, O>(d->coo, out, st) : ADIA_OK;
    case 2:
        if (d->sell.rows) sell_diagonal<T, O><<<adia_gpu_blocks(d->sell.rows, B), B, 0, st>>>(d->sell, out);
        break;
    default:
        if (d->bcsr.rows) bcsr_diagonal<T, O><<<adia_gpu_blocks(d->bcsr.rows, B), B, 0, st>>>(d->bcsr, out);
    }
    return adia__gpu_launch_check("row format diagonal");
}

adia_status row_diagonal(const void *p, void *out, adia_value_type vt, void *stream)
{
    const row_dev *d = (const row_dev *)p;
    return adia_diagonal_types(d->vt, vt, [&](auto t, auto o) {
        return row_diagonal_run<decltype(t), decltype(o)>(d, (decltype(o) *)out,
                                                          (cudaStream_t)stream);
    });
}

/* ---------------------------------- new values of the same pattern */

/* ELL: entry k of row r at slot k*rows + r (row_formats.h), a thread per
 * row: computed from the structure, no map. */
template <typename T, typename R, typename V>
__global__ void ell_refill_kernel(int rows, const R *__restrict__ rowptr, const V *__restrict__ src,
                                  T *__restrict__ dst, const unsigned long long *gate)
{
    int r = (int)((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows || !*gate) return;
    long long j0 = rowptr[r], n = (long long)rowptr[r + 1] - j0;
    for (long long k = 0; k < n; k++) dst[k * rows + r] = (T)src[j0 + k];
}

/* SELL: sorted position q is local row q % C of slice q / C and row
 * perm[q]; its entry k at slice_ptr[s] + k*C + q % C, a thread per q. */
template <typename T, typename R, typename V>
__global__ void sell_refill_kernel(int rows, int C, const int *__restrict__ perm,
                                   const long long *__restrict__ slice_ptr,
                                   const R *__restrict__ rowptr, const V *__restrict__ src,
                                   T *__restrict__ dst, const unsigned long long *gate)
{
    int q = (int)((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (q >= rows || !*gate) return;
    int r = perm[q];
    long long j0 = rowptr[r], n = (long long)rowptr[r + 1] - j0;
    T *base = dst + slice_ptr[q / C] + q % C;
    for (long long k = 0; k < n; k++) base[k * C] = (T)src[j0 + k];
}

/* f(T(), R(), V()): the upload's value type, A's row pointer and value types. */
template <typename F>
adia_status refill_types(adia_value_type vt, const adia_device_csr *A, F &&f)
{
    auto with_v = [&](auto t, auto r) {
        return A->values_type == ADIA_FLOAT ? f(t, r, float()) : f(t, r, double());
    };
    auto with_r = [&](auto t) { return A->rowptr_bits == 32 ? with_v(t, int()) : with_v(t, 0ll); };
    return vt == ADIA_DOUBLE ? with_r(double()) : with_r(float());
}

/* A's values (the upload's pattern; adia_gpu_ops.refill) into the ELL or
 * SELL slots; both store zeros as entries: nothing counted. */
adia_status row_refill(void *p, const adia_device_csr *A, const unsigned long long *gate,
                       unsigned long long *count)
{
    const row_dev *d = (const row_dev *)p;
    (void)count;
    if (d->kind != 1 && d->kind != 2)
        return adia__error(ADIA_ERR_INTERNAL, "row format refill: ell and sell only");
    int rows = d->kind == 1 ? d->ell.rows : d->sell.rows;
    if (A->rows != rows) return adia__error(ADIA_ERR_INTERNAL, "row format refill: another shape");
    if (rows == 0) return ADIA_OK;
    return refill_types(d->vt, A, [&](auto t, auto r, auto v) {
        using T = decltype(t);
        using R = decltype(r);
        using V = decltype(v);
        unsigned blocks = adia_gpu_blocks(rows, 256);
        if (d->kind == 1)
            ell_refill_kernel<T, R, V><<<blocks, 256>>>(rows, (const R *)A->rowptr,
                                                       (const V *)A->values, (T *)d->ell.val, gate);
        else
            sell_refill_kernel<T, R, V><<<blocks, 256>>>(rows, d->sell.C, d->sell.perm,
                                                        d->sell.slice_ptr, (const R *)A->rowptr,
                                                        (const V *)A->values, (T *)d->sell.val, gate);
        return adia__gpu_launch_check("row format refill");
    });
}

adia_status download(void *dst, const void *src, int64_t n, size_t sz, const char *what)
{
    if (n <= 0) return ADIA_OK;
    return adia_cuda_check(cudaMemcpy(dst, src, (size_t)n * sz, cudaMemcpyDeviceToHost), what);
}

/* The structure of a format built on the device (its host struct has its
 * sizes alone: arrays NULL) into host arrays, set in impl only once all
 * came down, so that a failed download leaves impl as it was (the next
 * host use tries again). */
adia_status host_structure(const row_dev *d, void *impl)
{
    const bool ell = d->kind == 1;
    adia_ell *E = ell ? (adia_ell *)impl : nullptr;
    adia_sell *S = ell ? nullptr : (adia_sell *)impl;
    const int64_t n = ell ? (int64_t)E->width * E->rows : S->slice_ptr[S->nslices];
    const adia_value_type vt = ell ? E->vtype : S->vtype;
    int32_t *col = (int32_t *)adia__alloc((size_t)n + 1, sizeof *col, "row format columns");
    void *val = adia__row_values_alloc(n + 1, vt, "row format values");
    int32_t *perm = ell ? nullptr
                        : (int32_t *)adia__alloc((size_t)S->rows + 1, sizeof *perm,
                                                 "sell permutation");
    adia_status s = col && val && (ell || perm) ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK)
        s = download(col, ell ? (const void *)d->ell.col : (const void *)d->sell.col, n, 4,
                     "row format columns to the host");
    if (s == ADIA_OK && !ell)
        s = download(perm, d->sell.perm, S->rows, 4, "sell permutation to the host");
    if (s != ADIA_OK) {
        free(col);
        free(val);
        free(perm);
        return s;
    }
    if (ell) {
        E->colind = col;
        E->values = val;
    } else {
        S->colind = col;
        S->values = val;
        S->perm = perm;
    }
    return ADIA_OK;
}

/* The device's data into the host storage (the same layout): the values,
 * and the structure too where the format was built on the device. */
adia_status row_download(const void *p, void *impl)
{
    const row_dev *d = (const row_dev *)p;
    const size_t vs = adia_value_size(d->vt);
    if (d->kind == 1) {
        adia_ell *E = (adia_ell *)impl;
        if (!E->colind) ADIA_TRY(host_structure(d, impl));
        return download(E->values, d->ell.val, (int64_t)E->width * E->rows, vs,
                        "ell values to the host");
    }
    if (d->kind == 2) {
        adia_sell *S = (adia_sell *)impl;
        if (!S->perm) ADIA_TRY(host_structure(d, impl));
        return download(S->values, d->sell.val, S->slice_ptr[S->nslices], vs,
                        "sell values to the host");
    }
    return adia__error(ADIA_ERR_INTERNAL, "row format download: ell and sell only");
}

/* ------------------------------------------------ built on the device */

/* F of format self around the device struct d and the host struct impl
 * (its sizes; its arrays come at the first host use: row_download).  Owns
 * both from the call on. */
adia_status adopt_built(const adia_format_ops *self, const adia_gpu_csr &A,
                        const adia_format_params *p, adia_value_type vt, row_dev *d, void *impl,
                        adia_format **out)
{
    adia_format *F = nullptr;
    adia_status s = adia__format_new(self->name, p, vt, A.rows, A.cols, A.nnz, &F);
    if (s != ADIA_OK) {
        row_free(d);
        self->destroy(impl);
        return s;
    }
    F->impl = impl;
    F->dev = d;
    F->host_stale = 1;
    *out = F;
    return ADIA_OK;
}

/* ELL of the parameter's width (else the longest row's), as ell.c. */
adia_status ell_build_device(const adia_format_ops *self, int32_t rows, int32_t cols, int64_t nnz,
                             const int64_t *rowptr, const int32_t *colind, const double *values,
                             const adia_format_params *p, adia_value_type vt, adia_format **out)
{
    *out = nullptr;
    const adia_gpu_csr A = {rows, cols, nnz, rowptr, colind, values};
    ADIA_TRY(adia__gpu_csr_check(&A, "ell built on the GPU"));
    adia_gpu_row_stats st;
    ADIA_TRY(adia__gpu_row_stats(&A, nullptr, &st));
    const int64_t width = p && p->ell_width > 0 ? p->ell_width : st.row_max;
    if (st.row_max > width)
        return adia__error(ADIA_ERR_INVALID_ARG, "ell: a row has %" PRId64 " entries, more than "
                           "width=%" PRId64 " (use width>=%" PRId64 ", no width, or format hyb)",
                           st.row_max, width, st.row_max);
    int64_t slots;
    ADIA_TRY(adia__row_mul(rows, width, "ell slots", &slots));
    adia_ell *E = (adia_ell *)adia__calloc(1, sizeof *E, "ell format");
    row_dev *d = row_dev_new(1, vt);
    if (!E || !d) {
        free(E);
        free(d);
        return ADIA_ERR_NO_MEMORY;
    }
    *E = adia_ell{rows, cols, (int32_t)width, nnz, nullptr, nullptr, vt};
    d->ell.rows = rows;
    d->ell.width = (int)width;
    adia_status s = adia__gpu_ell_fill(&A, (int32_t)width, vt, &d->ell.col, &d->ell.val);
    if (s != ADIA_OK) {
        row_free(d);
        self->destroy(E);
        return s;
    }
    return adopt_built(self, A, p, vt, d, E, out);
}

/* SELL-C-sigma of the parameters, as sell.c. */
adia_status sell_build_device(const adia_format_ops *self, int32_t rows, int32_t cols, int64_t nnz,
                              const int64_t *rowptr, const int32_t *colind, const double *values,
                              const adia_format_params *p, adia_value_type vt, adia_format **out)
{
    *out = nullptr;
    const adia_gpu_csr A = {rows, cols, nnz, rowptr, colind, values};
    int32_t C, sigma;
    const adia_format_params none = {};
    ADIA_TRY(adia__row_sell_params(p ? p : &none, &C, &sigma));
    ADIA_TRY(adia__gpu_csr_check(&A, "sell built on the GPU"));
    adia_gpu_sell G;
    ADIA_TRY(adia__gpu_sell_fill(&A, C, sigma, vt, &G));
    adia_sell *S = (adia_sell *)adia__calloc(1, sizeof *S, "sell format");
    row_dev *d = row_dev_new(2, vt);
    if (!S || !d) {
        free(S);
        free(d);
        adia__gpu_sell_free(&G);
        return ADIA_ERR_NO_MEMORY;
    }
    *S = adia_sell{rows, cols, C, sigma, G.nslices, nnz, G.host_slice_ptr, G.host_width,
                   nullptr, nullptr, nullptr, vt};
    d->sell = sell_dev{rows, C, G.nslices, (long long *)G.slice_ptr, G.width, G.perm, G.col, G.val};
    return adopt_built(self, A, p, vt, d, S, out);
}

} // namespace

extern "C" const adia_gpu_ops adia__gpu_coo = {
    .upload = row_upload<0>, .spmv = row_spmv, .destroy = row_free, .diagonal = row_diagonal};
extern "C" const adia_gpu_ops adia__gpu_ell = {
    .upload = row_upload<1>, .spmv = row_spmv, .destroy = row_free,
    .build_device = ell_build_device, .download = row_download, .diagonal = row_diagonal,
    .refill = row_refill};
extern "C" const adia_gpu_ops adia__gpu_sell = {
    .upload = row_upload<2>, .spmv = row_spmv, .destroy = row_free,
    .build_device = sell_build_device, .download = row_download, .diagonal = row_diagonal,
    .refill = row_refill};
extern "C" const adia_gpu_ops adia__gpu_hyb = {
    .upload = row_upload<3>, .spmv = row_spmv, .destroy = row_free, .diagonal = row_diagonal};
extern "C" const adia_gpu_ops adia__gpu_bcsr = {
    .upload = row_upload<4>, .spmv = row_spmv, .destroy = row_free, .diagonal = row_diagonal};
