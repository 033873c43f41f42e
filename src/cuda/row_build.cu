/* row_build.cu -- the row formats' arrays built on the GPU from a CSR in
 * device memory (row_build.h), equal array for array to the host builds
 * (ell.c, sell.c), so that a matrix which is not a diagonal one is planned
 * on the device too: no host analysis, no host build, no upload of a
 * format (issue 28).
 *
 *   check   a thread per row: row pointers 0 .. nnz and monotone, columns
 *           in the matrix and ascending (the host builds' invariants).
 *   stats   a thread per row, block sums: the longest row and the sum of
 *           squared lengths (integers: the same on every run and equal to
 *           the host's, so CSR's kernel choice is the same from both).
 *   ell     a thread per row writes its width slots at k*rows + r.
 *   sell    rows sorted by decreasing length inside windows of sigma rows:
 *           one stable radix sort of (window, ~length) keys (stable: equal
 *           lengths keep the original order, as the host's qsort with the
 *           row as tie-break); slice widths (a thread per slice), a scan
 *           for the slice pointers, a thread per sorted row for the slots.
 * One stream (the default), as the diagonal build. */
#include "row_build.h"
#include "gpu_common.h"
#include "formats/row_formats.h"

#include <cub/cub.cuh>
#include <cuda/functional>
#include <inttypes.h>
#include <stdlib.h>

namespace {

constexpr int THREADS = 256;

__device__ __forceinline__ int64_t thread_row() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }

/* The first row breaking an invariant (atomicMin), INT32_MAX if none. */
__global__ void check_kernel(const int64_t *__restrict__ rp, const int32_t *__restrict__ col,
                             int32_t rows, int32_t cols, int64_t nnz, int32_t *bad)
{
    const int64_t r = thread_row();
    if (r >= rows) return;
    const int64_t b = rp[r], e = rp[r + 1];
    bool ok = b <= e && (r > 0 || b == 0) && (r < rows - 1 || e == nnz) && b >= 0 && e <= nnz;
    for (int64_t k = b; ok && k < e; k++) {
        const int32_t c = col[k];
        ok = c >= 0 && c < cols && (k == b || col[k - 1] < c);
    }
    if (!ok) atomicMin(bad, (int32_t)r);
}

__global__ void stats_kernel(const int64_t *__restrict__ rp, int32_t rows,
                             unsigned long long *max_len, unsigned long long *len_sq)
{
    using reduce = cub::BlockReduce<unsigned long long, THREADS>;
    __shared__ typename reduce::TempStorage tmp;
    const int64_t r = thread_row();
    const unsigned long long l = r < rows ? (unsigned long long)(rp[r + 1] - rp[r]) : 0;
    const unsigned long long m = reduce(tmp).Reduce(l, cuda::maximum<unsigned long long>{});
    __syncthreads();
    const unsigned long long s = reduce(tmp).Sum(l * l);
    if (threadIdx.x == 0) {
        atomicMax(max_len, m);
        atomicAdd(len_sq, s);
    }
}

__global__ void continuity_kernel(const int64_t *__restrict__ rp, const int32_t *__restrict__ col,
                                  int32_t rows, unsigned long long *out)
{
    using reduce = cub::BlockReduce<unsigned long long, THREADS>;
    __shared__ typename reduce::TempStorage tmp;
    const int64_t r = thread_row();
    unsigned long long n = 0;
    if (r >= 1 && r < rows) {
        const int64_t a = rp[r - 1], b = rp[r], m = min(b - a, rp[r + 1] - b);
        for (int64_t k = 0; k < m; k++) n += col[b + k] == col[a + k] + 1;
    }
    n = reduce(tmp).Sum(n);
    if (threadIdx.x == 0 && n) atomicAdd(out, n);
}

template <typename T>
__global__ void ell_kernel(const int64_t *__restrict__ rp, const int32_t *__restrict__ ci,
                           const double *__restrict__ v, int32_t rows, int32_t width,
                           int32_t *__restrict__ col, T *__restrict__ val)
{
    const int64_t r = thread_row();
    if (r >= rows) return;
    const int64_t j0 = rp[r], n = rp[r + 1] - j0;
    for (int64_t k = 0; k < width; k++) {
        const int64_t p = k * rows + r;
        col[p] = k < n ? ci[j0 + k] : ADIA_ROW_PAD;
        val[p] = k < n ? (T)v[j0 + k] : T(0);
    }
}

/* Sort key of row r: its window in the high half, the length descending
 * (INT32_MAX - length) in the low half. */
__global__ void sell_keys(const int64_t *__restrict__ rp, int32_t rows, int32_t sigma,
                          uint64_t *key, int32_t *row)
{
    const int64_t r = thread_row();
    if (r >= rows) return;
    const uint64_t len = (uint64_t)(rp[r + 1] - rp[r]);
    key[r] = ((uint64_t)(r / sigma) << 32) | (uint64_t)(INT32_MAX - len);
    row[r] = (int32_t)r;
}

__global__ void identity(int32_t rows, int32_t *perm)
{
    const int64_t r = thread_row();
    if (r < rows) perm[r] = (int32_t)r;
}

/* Slice s's width (its longest sorted row) and its slots, width * C; the
 * entry past the last slice 0 (the scan's total). */
__global__ void sell_widths(const int64_t *__restrict__ rp, const int32_t *__restrict__ perm,
                            int32_t rows, int32_t C, int32_t nslices, int32_t *width,
                            int64_t *size)
{
    const int64_t s = thread_row();
    if (s > nslices) return;
    if (s == nslices) {
        size[s] = 0;
        return;
    }
    int64_t w = 0;
    for (int64_t q = s * C; q < rows && q < (s + 1) * C; q++) {
        const int32_t i = perm[q];
        w = max(w, rp[i + 1] - rp[i]);
    }
    width[s] = (int32_t)w;
    size[s] = w * C;
}

template <typename T>
__global__ void sell_kernel(const int64_t *__restrict__ rp, const int32_t *__restrict__ ci,
                            const double *__restrict__ v, const int32_t *__restrict__ perm,
                            const int64_t *__restrict__ slice_ptr, const int32_t *__restrict__ width,
                            int32_t rows, int32_t C, int32_t *__restrict__ col, T *__restrict__ val)
{
    const int64_t q = thread_row();
    if (q >= (rows + (int64_t)C - 1) / C * C) return;
    const int32_t i = q < rows ? perm[q] : 0;   /* past the last row: padding alone */
    const int64_t s = q / C, j0 = q < rows ? rp[i] : 0, n = q < rows ? rp[i + 1] - j0 : 0;
    const int64_t first = slice_ptr[s] + q % C;
    for (int64_t k = 0; k < width[s]; k++) {
        const int64_t p = first + k * C;
        col[p] = k < n ? ci[j0 + k] : ADIA_ROW_PAD;
        val[p] = k < n ? (T)v[j0 + k] : T(0);
    }
}

/* Device memory freed at scope exit unless released. */
struct dev_buf {
    void *p = nullptr;
    ~dev_buf() { cudaFree(p); }
    void *release()
    {
        void *q = p;
        p = nullptr;
        return q;
    }
};

adia_status alloc(dev_buf &b, int64_t n, size_t sz, const char *what)
{
    size_t bytes;
    if (n < 0 || !adia_mul_size((size_t)n, sz, &bytes))
        return adia__error(ADIA_ERR_OVERFLOW, "GPU row build: %s of %" PRId64 " elements "
                           "overflows", what, n);
    return adia_cuda_check(cudaMalloc(&b.p, bytes > 0 ? bytes : 1), what);
}

adia_status copy_out(void *h, const void *d, size_t bytes, const char *what)
{
    return bytes ? adia_cuda_check(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), what)
                 : ADIA_OK;
}

/* A CUB call f(temp, bytes): its temporary storage asked for, then run. */
template <class F>
adia_status cub_call(const char *what, F f)
{
    size_t bytes = 0;
    ADIA_TRY(adia_cuda_check(f(nullptr, bytes), what));
    dev_buf tmp;
    ADIA_TRY(alloc(tmp, (int64_t)bytes, 1, what));
    return adia_cuda_check(f(tmp.p, bytes), what);
}

/* perm (device, rows) for SELL: rows sorted by decreasing length inside
 * windows of sigma (sigma 1: the identity). */
adia_status sell_perm(const adia_gpu_csr *A, int32_t sigma, int32_t *perm)
{
    const int32_t rows = A->rows;
    const unsigned blocks = adia_gpu_blocks(rows, THREADS);
    if (sigma <= 1) {
        identity<<<blocks, THREADS>>>(rows, perm);
        return adia__gpu_launch_check("sell permutation");
    }
    dev_buf key[2], row;
    ADIA_TRY(alloc(key[0], rows, 8, "GPU sell build: sort keys"));
    ADIA_TRY(alloc(key[1], rows, 8, "GPU sell build: sorted keys"));
    ADIA_TRY(alloc(row, rows, 4, "GPU sell build: rows"));
    sell_keys<<<blocks, THREADS>>>(A->rowptr, rows, sigma, (uint64_t *)key[0].p, (int32_t *)row.p);
    ADIA_GPU_LAUNCH_TRY("sell sort keys");
    const uint64_t windows = ((uint64_t)rows + sigma - 1) / sigma;
    const int end_bit = 32 + (windows > 1 ? 64 - __builtin_clzll(windows - 1) : 0);
    return cub_call("GPU sell build: cub::DeviceRadixSort::SortPairs", [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortPairs(t, b, (const uint64_t *)key[0].p, (uint64_t *)key[1].p,
                                               (const int32_t *)row.p, perm, rows, 0, end_bit);
    });
}

/* SELL's layout: perm, widths and slice pointers on the device, the slot
 * count on the host. */
adia_status sell_layout(const adia_gpu_csr *A, int32_t C, int32_t sigma, adia_gpu_sell *S,
                        dev_buf &perm, dev_buf &width, dev_buf &slice_ptr)
{
    S->C = C;
    S->sigma = sigma;
    S->nslices = (int32_t)(((int64_t)A->rows + C - 1) / C);
    const int32_t ns = S->nslices;
    ADIA_TRY(alloc(perm, A->rows, 4, "GPU sell build: permutation"));
    ADIA_TRY(alloc(width, ns, 4, "GPU sell build: slice widths"));
    ADIA_TRY(alloc(slice_ptr, (int64_t)ns + 1, 8, "GPU sell build: slice pointers"));
    if (A->rows > 0) ADIA_TRY(sell_perm(A, sigma, (int32_t *)perm.p));
    dev_buf size;
    ADIA_TRY(alloc(size, (int64_t)ns + 1, 8, "GPU sell build: slice sizes"));
    sell_widths<<<adia_gpu_blocks((int64_t)ns + 1, THREADS), THREADS>>>(
        A->rowptr, (const int32_t *)perm.p, A->rows, C, ns, (int32_t *)width.p, (int64_t *)size.p);
    ADIA_GPU_LAUNCH_TRY("sell slice widths");
    ADIA_TRY(cub_call("GPU sell build: cub::DeviceScan::ExclusiveSum", [&](void *t, size_t &b) {
        return cub::DeviceScan::ExclusiveSum(t, b, (const int64_t *)size.p, (int64_t *)slice_ptr.p,
                                             ns + 1);
    }));
    return copy_out(&S->slots, (const int64_t *)slice_ptr.p + ns, 8, "GPU sell build: slots");
}

} // namespace

extern "C" adia_status adia__gpu_csr_check(const adia_gpu_csr *A, const char *who)
{
    if (A->rows == 0) return ADIA_OK;
    dev_buf bad;
    ADIA_TRY(alloc(bad, 1, 4, "GPU row build: error flag"));
    static const int32_t none = INT32_MAX;
    ADIA_CUDA_TRY(cudaMemcpy(bad.p, &none, 4, cudaMemcpyHostToDevice));
    check_kernel<<<adia_gpu_blocks(A->rows, THREADS), THREADS>>>(A->rowptr, A->colind, A->rows,
                                                                 A->cols, A->nnz, (int32_t *)bad.p);
    ADIA_GPU_LAUNCH_TRY("CSR check");
    int32_t row = INT32_MAX;
    ADIA_TRY(copy_out(&row, bad.p, 4, "GPU row build: error flag"));
    if (row == INT32_MAX) return ADIA_OK;
    int64_t rp[2] = {0, 0};
    ADIA_TRY(copy_out(rp, A->rowptr + row, sizeof rp, "GPU row build: the bad row's pointers"));
    return adia__error(ADIA_ERR_INVALID_MATRIX, "%s: row %" PRId32 " (rowptr %" PRId64 " .. %"
                       PRId64 ", %" PRId64 " nonzeros, %" PRId32 " columns): row pointers out of "
                       "order, or a column outside the matrix or not above its left neighbour",
                       who, row, rp[0], rp[1], A->nnz, A->cols);
}

extern "C" adia_status adia__gpu_row_stats(const adia_gpu_csr *A, const adia_format_params *p,
                                           adia_gpu_row_stats *st)
{
    *st = adia_gpu_row_stats{0, 0, -1, -1};
    if (A->rows > 0) {
        dev_buf sums;
        ADIA_TRY(alloc(sums, 2, 8, "GPU row statistics"));
        ADIA_CUDA_TRY(cudaMemset(sums.p, 0, 16));
        unsigned long long *s = (unsigned long long *)sums.p, h[2];
        stats_kernel<<<adia_gpu_blocks(A->rows, THREADS), THREADS>>>(A->rowptr, A->rows, s, s + 1);
        ADIA_GPU_LAUNCH_TRY("row statistics");
        ADIA_TRY(copy_out(h, s, sizeof h, "GPU row statistics"));
        st->row_max = (int64_t)h[0];
        st->len_sq = h[1];
    }
    if (!p) return ADIA_OK;
    int32_t C, sigma;
    if (adia__row_sell_params(p, &C, &sigma) != ADIA_OK) {   /* sell refuses p: not a candidate */
        adia_clear_error();
        return ADIA_OK;
    }
    adia_gpu_sell S = {};
    dev_buf perm, width, slice_ptr;
    ADIA_TRY(sell_layout(A, C, sigma, &S, perm, width, slice_ptr));
    st->sell_slots = S.slots;
    st->sell_slices = S.nslices;
    return ADIA_OK;
}

extern "C" adia_status adia__gpu_row_continuity(const adia_gpu_csr *A, uint64_t *n)
{
    *n = 0;
    if (A->rows < 2) return ADIA_OK;
    dev_buf sum;
    ADIA_TRY(alloc(sum, 1, 8, "GPU row continuity"));
    ADIA_CUDA_TRY(cudaMemset(sum.p, 0, 8));
    continuity_kernel<<<adia_gpu_blocks(A->rows, THREADS), THREADS>>>(
        A->rowptr, A->colind, A->rows, (unsigned long long *)sum.p);
    ADIA_GPU_LAUNCH_TRY("row continuity");
    return copy_out(n, sum.p, 8, "GPU row continuity");
}

extern "C" adia_status adia__gpu_ell_fill(const adia_gpu_csr *A, int32_t width, adia_value_type vt,
                                          int32_t **col, void **val)
{
    *col = nullptr;
    *val = nullptr;
    const int64_t slots = (int64_t)width * A->rows;
    const size_t vs = adia_value_size(vt);
    ADIA_TRY(adia__gpu_check_free(slots * (int64_t)(4 + vs), "ell built on the GPU"));
    dev_buf c, v;
    ADIA_TRY(alloc(c, slots, 4, "GPU ell build: columns"));
    ADIA_TRY(alloc(v, slots, vs, "GPU ell build: values"));
    if (A->rows > 0) {
        const unsigned blocks = adia_gpu_blocks(A->rows, THREADS);
        if (vt == ADIA_DOUBLE)
            ell_kernel<double><<<blocks, THREADS>>>(A->rowptr, A->colind, A->values, A->rows, width,
                                                     (int32_t *)c.p, (double *)v.p);
        else
            ell_kernel<float><<<blocks, THREADS>>>(A->rowptr, A->colind, A->values, A->rows, width,
                                                    (int32_t *)c.p, (float *)v.p);
        ADIA_GPU_LAUNCH_TRY("ell fill");
    }
    *col = (int32_t *)c.release();
    *val = v.release();
    return ADIA_OK;
}

extern "C" adia_status adia__gpu_sell_fill(const adia_gpu_csr *A, int32_t C, int32_t sigma,
                                           adia_value_type vt, adia_gpu_sell *out)
{
    *out = adia_gpu_sell{};
    adia_gpu_sell S = {};
    dev_buf perm, width, slice_ptr, c, v;
    ADIA_TRY(sell_layout(A, C, sigma, &S, perm, width, slice_ptr));
    const size_t vs = adia_value_size(vt);
    ADIA_TRY(adia__gpu_check_free(S.slots * (int64_t)(4 + vs), "sell built on the GPU"));
    ADIA_TRY(alloc(c, S.slots, 4, "GPU sell build: columns"));
    ADIA_TRY(alloc(v, S.slots, vs, "GPU sell build: values"));
    if (A->rows > 0) {   /* a thread per local row of every slice */
        const unsigned blocks = adia_gpu_blocks((int64_t)S.nslices * C, THREADS);
        const int32_t *pm = (const int32_t *)perm.p, *w = (const int32_t *)width.p;
        const int64_t *sp = (const int64_t *)slice_ptr.p;
        if (vt == ADIA_DOUBLE)
            sell_kernel<double><<<blocks, THREADS>>>(A->rowptr, A->colind, A->values, pm, sp, w,
                                                      A->rows, C, (int32_t *)c.p, (double *)v.p);
        else
            sell_kernel<float><<<blocks, THREADS>>>(A->rowptr, A->colind, A->values, pm, sp, w,
                                                     A->rows, C, (int32_t *)c.p, (float *)v.p);
        ADIA_GPU_LAUNCH_TRY("sell fill");
    }
    S.host_slice_ptr = (int64_t *)adia__alloc((size_t)S.nslices + 1, 8, "sell slice pointers");
    S.host_width = (int32_t *)adia__alloc((size_t)S.nslices + 1, 4, "sell slice widths");
    adia_status s = S.host_slice_ptr && S.host_width ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK)
        s = copy_out(S.host_slice_ptr, slice_ptr.p, ((size_t)S.nslices + 1) * 8,
                     "GPU sell build: slice pointers to the host");
    if (s == ADIA_OK)
        s = copy_out(S.host_width, width.p, (size_t)S.nslices * 4,
                     "GPU sell build: slice widths to the host");
    if (s != ADIA_OK) {
        adia__gpu_sell_free(&S);
        return s;
    }
    S.slice_ptr = (int64_t *)slice_ptr.release();
    S.width = (int32_t *)width.release();
    S.perm = (int32_t *)perm.release();
    S.col = (int32_t *)c.release();
    S.val = v.release();
    *out = S;
    return ADIA_OK;
}

extern "C" void adia__gpu_sell_free(adia_gpu_sell *S)
{
    void *d[] = {S->slice_ptr, S->width, S->perm, S->col, S->val};
    for (void *p : d) cudaFree(p);
    free(S->host_slice_ptr);
    free(S->host_width);
    *S = adia_gpu_sell{};
}
