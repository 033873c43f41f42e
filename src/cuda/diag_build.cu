/* diag_build.cu -- the diagonal formats of equal pieces (dia: one piece,
 * hdi: hacks with their own offsets, brcsd2: B-row pieces) built on the GPU
 * from a CSR matrix in device memory (diag_build.h).
 *
 *   analyze (GPU)  1. flag each diagonal o = col - row holding an entry (the
 *                     columns are checked on the way), exclusive scan: a
 *                     dense id per diagonal, ascending with o
 *                  2. one key per nonzero, piece * n_diag + id, radix sort
 *                     over the bits in use, unique: every piece's ascending
 *                     list of diagonals
 *   host           lists down; adia__diag_structure (the host build's own
 *                  grouping and layout, so both agree array for array);
 *                  piece groups, group offsets and piece_data up
 *   build (GPU)    data zeroed; one pass over the nonzeros writes each value
 *                  to its slot (offset binary-searched in its piece's
 *                  group); explicit zeros (0 in vt) counted and, only if
 *                  there are any, gathered and sorted by (row, col).
 *
 * Why dense ids rather than raw offsets in the key: for the structured
 * matrices this library is for n_diag is small, so piece*n_diag+id fits 32
 * bits and uses ~20 of them: the sort moves half the bytes in fewer passes
 * than a (piece, col-row+rows-1) key of ~37 bits would.  One stream (the
 * default); CUB's temporary storage is one buffer grown as needed. */
#include "diag_build.h"
#include "gpu_common.h"

#include <cooperative_groups.h>
#include <cub/cub.cuh>
#include <inttypes.h>

namespace cg = cooperative_groups;

/* Rows per block (and threads per block) of the per-nonzero kernels. */
enum { TILE = 256, THREADS = 256 };

/* ------------------------------------------------------------- kernels */

/* op(r, j, first nonzero of r) for every nonzero j of the matrix, a block
 * per TILE rows: the block reads its nonzeros in order (coalesced whatever
 * the row lengths) and each thread finds its row by binary search in the
 * tile's row pointers (shared).  rowptr must be monotone (checked first). */
template <class Op>
__global__ void __launch_bounds__(TILE) each_nnz(const int64_t *rowptr, int32_t rows, Op op)
{
    __shared__ int64_t rp[TILE + 1];
    int64_t r0 = (int64_t)blockIdx.x * TILE;
    int nr = (int)min((int64_t)TILE, rows - r0);
    for (int i = threadIdx.x; i <= nr; i += blockDim.x) rp[i] = rowptr[r0 + i];
    __syncthreads();
    for (int64_t j = rp[0] + threadIdx.x; j < rp[nr]; j += blockDim.x) {
        int lo = 0, hi = nr - 1; /* last row of the tile starting at or before j */
        while (lo < hi) {
            int mid = (lo + hi + 1) >> 1;
            if (rp[mid] <= j) lo = mid; else hi = mid - 1;
        }
        op((int32_t)(r0 + lo), j, rp[lo]);
    }
}

static __global__ void check_rowptr(const int64_t *rowptr, int32_t rows, int32_t *bad)
{
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && rowptr[r + 1] < rowptr[r]) atomicMin(bad, (int32_t)r);
}

/* Flags the diagonal of each entry; a column outside the matrix or not
 * above its left neighbour reports its row (atomicMin: the first). */
struct MarkOp {
    const int32_t *col;
    int32_t rows, cols;
    uint32_t *flag;
    int32_t *bad;
    __device__ void operator()(int32_t r, int64_t j, int64_t j0) const
    {
        int32_t c = col[j];
        if (c < 0 || c >= cols || (j > j0 && col[j - 1] >= c)) {
            atomicMin(bad, r);
            return;
        }
        flag[(int64_t)c - r + rows - 1] = 1;
    }
};

/* The offset of each diagonal id. */
static __global__ void diag_offsets(const uint32_t *flag, const uint32_t *ids, int64_t span,
                             int32_t rows, int32_t *off)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < span && flag[i]) off[ids[i]] = (int32_t)(i - (rows - 1));
}

template <class K>
struct KeyOp {
    const int32_t *col;
    const uint32_t *ids;
    int32_t rows, B;
    uint32_t n_diag;
    K *key;
    __device__ void operator()(int32_t r, int64_t j, int64_t) const
    {
        key[j] = (K)(r / B) * n_diag + ids[(int64_t)col[j] - r + rows - 1];
    }
};

/* data[piece_data[p] + k*len + (r - r0)] = value, k = the entry's offset's
 * place in its piece's group (a miss reports the row: a bug). */
template <class T>
struct FillOp {
    const int32_t *col;
    const double *val;
    int32_t rows, B;
    const int32_t *pgroup, *gstart, *offs;
    const int64_t *pdata;
    T *data;
    int32_t *bad;
    __device__ void operator()(int32_t r, int64_t j, int64_t) const
    {
        int32_t p = r / B, r0 = p * B, len = min(B, rows - r0), g = pgroup[p];
        int32_t k0 = gstart[g], k1 = gstart[g + 1], lo = k0, hi = k1, o = col[j] - r;
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (offs[mid] < o) lo = mid + 1; else hi = mid;
        }
        if (lo == k1 || offs[lo] != o) {
            atomicMin(bad, r);
            return;
        }
        data[pdata[p] + (int64_t)(lo - k0) * len + (r - r0)] = (T)val[j];
    }
};

/* Entries whose value is zero in T: counted (one atomic per group of
 * coalesced threads) and, with key set, written as row << 32 | col in
 * arbitrary order. */
template <class T>
struct ZeroOp {
    const int32_t *col;
    const double *val;
    unsigned long long *count;
    uint64_t *key;
    __device__ void operator()(int32_t r, int64_t j, int64_t) const
    {
        if ((T)val[j] != (T)0) return;
        cg::coalesced_group g = cg::coalesced_threads();
        unsigned long long base = 0;
        if (g.thread_rank() == 0) base = atomicAdd(count, (unsigned long long)g.size());
        base = g.shfl(base, 0);
        if (key) key[base + g.thread_rank()] = (uint64_t)(uint32_t)r << 32 | (uint32_t)col[j];
    }
};

/* ------------------------------------------------------------ context */

typedef struct build_ctx {
    const adia_gpu_csr *A;
    int32_t B;
    int64_t n_pieces, span;        /* span: rows + cols - 1 possible diagonals */
    uint32_t n_diag;
    int32_t *bad;                  /* first bad row, INT32_MAX: none */
    uint32_t *flag, *ids;
    int32_t *diag_off;
    void *keys[2];                 /* sort double buffer */
    int64_t *n_out;
    unsigned long long *count;
    int32_t *pgroup, *gstart, *offs;
    int64_t *pdata;
    void *data;
    uint64_t *zkeys[2];
    void *temp;
    size_t temp_bytes;
    cudaEvent_t ev[4];
    int n_ev;
    int64_t max_slots;             /* refuse a format storing more (0: no bound) */
} build_ctx;

static void ctx_free(build_ctx *c)
{
    void *p[] = {c->bad, c->flag, c->ids, c->diag_off, c->keys[0], c->keys[1], c->n_out,
                 c->count, c->pgroup, c->gstart, c->offs, c->pdata, c->data,
                 c->zkeys[0], c->zkeys[1], c->temp};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) cudaFree(p[i]);
    for (int i = 0; i < c->n_ev; i++) cudaEventDestroy(c->ev[i]);
}

/* cudaMalloc of n elements of sz bytes, size checked; n == 0 gives NULL. */
static adia_status dev_alloc(void **d, int64_t n, size_t sz, const char *what)
{
    *d = NULL;
    size_t bytes;
    if (n < 0 || !adia_mul_size((size_t)n, sz, &bytes))
        return adia__error(ADIA_ERR_OVERFLOW, "GPU BRCSD-II build: %s of %" PRId64 " elements overflows", what, n);
    if (n == 0) return ADIA_OK;
    cudaError_t e = cudaMalloc(d, bytes);
    if (e != cudaSuccess) *d = NULL;
    return adia_cuda_check(e, what);
}
#define DEV_ALLOC(p, n, what) ADIA_TRY(dev_alloc((void **)&(p), (n), sizeof *(p), (what)))

static adia_status copy_out(void *h, const void *d, int64_t n, size_t sz, const char *what)
{
    if (n <= 0) return ADIA_OK;
    return adia_cuda_check(cudaMemcpy(h, d, (size_t)n * sz, cudaMemcpyDeviceToHost), what);
}

/* A CUB call f(temp, bytes): asked for its temporary size, the shared
 * buffer grown if needed, then run. */
template <class F>
static adia_status cub_run(build_ctx *c, const char *what, F f)
{
    size_t bytes = 0;
    ADIA_TRY(adia_cuda_check(f(nullptr, bytes), what));
    if (bytes > c->temp_bytes) {
        cudaFree(c->temp);
        c->temp = NULL;
        c->temp_bytes = 0;
        ADIA_TRY(dev_alloc(&c->temp, (int64_t)bytes, 1, what));
        c->temp_bytes = bytes;
    }
    return adia_cuda_check(f(c->temp, bytes), what);
}

template <class Op>
static adia_status for_each_nnz(const adia_gpu_csr *A, Op op, const char *name)
{
    if (A->rows == 0 || A->nnz == 0) return ADIA_OK;
    each_nnz<<<adia_gpu_blocks(A->rows, TILE), TILE>>>(A->rowptr, A->rows, op);
    return adia__gpu_launch_check(name);
}

/* ADIA_OK if no kernel reported a row since the last reset, else the error. */
static adia_status check_bad(build_ctx *c, adia_status code, const char *what)
{
    int32_t row = INT32_MAX;
    ADIA_TRY(copy_out(&row, c->bad, 1, sizeof row, "GPU BRCSD-II build: error flag"));
    if (row == INT32_MAX) return ADIA_OK;
    return adia__error(code, "GPU BRCSD-II build: row %" PRId32 ": %s", row, what);
}

static adia_status reset_bad(build_ctx *c)
{
    static const int32_t none = INT32_MAX;
    ADIA_CUDA_TRY(cudaMemcpy(c->bad, &none, sizeof none, cudaMemcpyHostToDevice));
    return ADIA_OK;
}

/* ------------------------------------------------------------ analyze */

/* rowptr[0] = 0, rowptr[rows] = nnz, monotone (the kernels rely on it). */
static adia_status check_rowptr_ends(build_ctx *c)
{
    const adia_gpu_csr *A = c->A;
    int64_t first = -1, last = -1;
    ADIA_TRY(copy_out(&first, A->rowptr, 1, sizeof first, "GPU BRCSD-II build: rowptr[0]"));
    ADIA_TRY(copy_out(&last, A->rowptr + A->rows, 1, sizeof last, "GPU BRCSD-II build: rowptr[rows]"));
    if (first != 0 || last != A->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX,
                          "GPU BRCSD-II build: rowptr[0] = %" PRId64 ", rowptr[%" PRId32 "] = %" PRId64
                          ", expected 0 and nnz = %" PRId64, first, A->rows, last, A->nnz);
    if (A->rows == 0) return ADIA_OK;
    check_rowptr<<<adia_gpu_blocks(A->rows, THREADS), THREADS>>>(A->rowptr, A->rows, c->bad);
    ADIA_GPU_LAUNCH_TRY("check_rowptr");
    return check_bad(c, ADIA_ERR_INVALID_MATRIX, "rowptr decreases");
}

/* Dense ids of the diagonals present (c->ids), their offsets, n_diag. */
static adia_status find_diagonals(build_ctx *c)
{
    const adia_gpu_csr *A = c->A;
    DEV_ALLOC(c->flag, c->span + 1, "GPU BRCSD-II build: diagonal flags");
    DEV_ALLOC(c->ids, c->span + 1, "GPU BRCSD-II build: diagonal ids");
    ADIA_CUDA_TRY(cudaMemset(c->flag, 0, (size_t)(c->span + 1) * sizeof *c->flag));
    ADIA_TRY(for_each_nnz(A, MarkOp{A->colind, A->rows, A->cols, c->flag, c->bad}, "mark diagonals"));
    ADIA_TRY(check_bad(c, ADIA_ERR_INVALID_MATRIX, "column index outside the matrix or not ascending"));
    uint32_t *flag = c->flag, *ids = c->ids;
    int64_t n = c->span + 1;
    ADIA_TRY(cub_run(c, "GPU BRCSD-II build: cub::DeviceScan::ExclusiveSum", [&](void *t, size_t &b) {
        return cub::DeviceScan::ExclusiveSum(t, b, flag, ids, n);
    }));
    ADIA_TRY(copy_out(&c->n_diag, c->ids + c->span, 1, sizeof c->n_diag, "GPU BRCSD-II build: diagonal count"));
    DEV_ALLOC(c->diag_off, c->n_diag, "GPU BRCSD-II build: diagonal offsets");
    if (c->span > 0) {
        diag_offsets<<<adia_gpu_blocks(c->span, THREADS), THREADS>>>(c->flag, c->ids, c->span,
                                                                     A->rows, c->diag_off);
        ADIA_GPU_LAUNCH_TRY("diag_offsets");
    }
    return ADIA_OK;
}

/* Keys piece*n_diag + id of every nonzero, sorted and made unique on the
 * device: *n_unique keys at *out. */
template <class K>
static adia_status sort_unique(build_ctx *c, K **out, int64_t *n_unique)
{
    const adia_gpu_csr *A = c->A;
    int64_t nnz = A->nnz;
    DEV_ALLOC(c->n_out, 1, "GPU BRCSD-II build: unique count");
    ADIA_TRY(dev_alloc(&c->keys[0], nnz, sizeof(K), "GPU BRCSD-II build: keys"));
    ADIA_TRY(dev_alloc(&c->keys[1], nnz, sizeof(K), "GPU BRCSD-II build: sorted keys"));
    KeyOp<K> op{A->colind, c->ids, A->rows, c->B, c->n_diag, (K *)c->keys[0]};
    ADIA_TRY(for_each_nnz(A, op, "piece keys"));
    uint64_t maxkey = (uint64_t)c->n_pieces * c->n_diag - 1;
    int end_bit = maxkey ? 64 - __builtin_clzll(maxkey) : 1;
    cub::DoubleBuffer<K> buf((K *)c->keys[0], (K *)c->keys[1]);
    ADIA_TRY(cub_run(c, "GPU BRCSD-II build: cub::DeviceRadixSort::SortKeys", [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortKeys(t, b, buf, nnz, 0, end_bit);
    }));
    K *in = buf.Current(), *uniq = buf.Alternate();
    int64_t *n_out = c->n_out;
    ADIA_TRY(cub_run(c, "GPU BRCSD-II build: cub::DeviceSelect::Unique", [&](void *t, size_t &b) {
        return cub::DeviceSelect::Unique(t, b, in, uniq, n_out, nnz);
    }));
    *out = uniq;
    return copy_out(n_unique, c->n_out, 1, sizeof *n_unique, "GPU BRCSD-II build: unique count");
}

/* The partition's lists from the sorted unique keys (host). */
template <class K>
static adia_status download_lists(build_ctx *c, const K *d_keys, int64_t n, adia_diag_partition *part)
{
    K *key = (K *)adia__alloc((size_t)n, sizeof *key, "GPU BRCSD-II build: host keys");
    int32_t *off = (int32_t *)adia__alloc(c->n_diag, sizeof *off, "GPU BRCSD-II build: host offsets");
    adia_status s = key && off ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) s = copy_out(key, d_keys, n, sizeof *key, "GPU BRCSD-II build: piece lists");
    if (s == ADIA_OK) s = copy_out(off, c->diag_off, c->n_diag, sizeof *off, "GPU BRCSD-II build: offsets");
    if (s == ADIA_OK) {
        part->list = (int32_t *)adia__alloc((size_t)n, sizeof *part->list, "diagonal format offset lists");
        if (!part->list) s = ADIA_ERR_NO_MEMORY;
    }
    if (s == ADIA_OK) {
        for (int64_t i = 0; i < n; i++) {
            part->list_start[key[i] / c->n_diag + 1]++;
            part->list[i] = off[key[i] % c->n_diag];
        }
        for (int32_t p = 0; p < part->n_pieces; p++) part->list_start[p + 1] += part->list_start[p];
    }
    free(key);
    free(off);
    return s;
}

/* Sum over the unique (piece, diagonal) keys of the piece's rows: the
 * slots the format would store. */
template <class K>
static __global__ void slots_kernel(const K *keys, int64_t n, int64_t n_diag, int32_t B,
                                    int32_t rows, unsigned long long *out)
{
    using reduce = cub::BlockReduce<unsigned long long, THREADS>;
    __shared__ typename reduce::TempStorage tmp;
    unsigned long long sum = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        sum += (unsigned long long)min((int64_t)B, rows - (int64_t)(keys[i] / n_diag) * B);
    sum = reduce(tmp).Sum(sum);
    if (threadIdx.x == 0) atomicAdd(out, sum);
}

/* The slots the lists make, over c->max_slots: refused on the device,
 * before the lists come down and the host lays out the structure (a matrix
 * that is not a diagonal one would store a slot per piece row per entry,
 * and its lists alone are as long as its nonzeros). */
template <class K>
static adia_status check_slots(build_ctx *c, const K *d_keys, int64_t n)
{
    DEV_ALLOC(c->count, 1, "GPU diagonal build: slot count");
    ADIA_CUDA_TRY(cudaMemset(c->count, 0, sizeof *c->count));
    const int64_t blocks = (n + THREADS - 1) / THREADS;
    slots_kernel<K><<<(unsigned)(blocks < 4096 ? blocks : 4096), THREADS>>>(
        d_keys, n, c->n_diag, c->B, c->A->rows, c->count);
    ADIA_GPU_LAUNCH_TRY("slot count");
    unsigned long long slots = 0;
    ADIA_TRY(copy_out(&slots, c->count, 1, sizeof slots, "GPU diagonal build: slot count"));
    cudaFree(c->count);
    c->count = NULL;
    if ((int64_t)slots <= c->max_slots) return ADIA_OK;
    return adia__error(ADIA_ERR_UNSUPPORTED, "GPU diagonal build: %llu slots for %" PRId64
                       " nonzeros, over the bound of %" PRId64, slots, c->A->nnz, c->max_slots);
}

/* Every piece's offset list into part (piece_start already set); the GPU
 * part ends at event 1, *host_t0 is the wall clock after it. */
template <class K>
static adia_status piece_lists(build_ctx *c, adia_diag_partition *part, double *host_t0)
{
    K *d_keys = NULL;
    int64_t n = 0;
    if (c->A->nnz > 0) ADIA_TRY(sort_unique<K>(c, &d_keys, &n));
    if (c->max_slots > 0 && n > 0) ADIA_TRY(check_slots<K>(c, d_keys, n));
    ADIA_CUDA_TRY(cudaEventRecord(c->ev[1]));
    ADIA_CUDA_TRY(cudaEventSynchronize(c->ev[1]));
    *host_t0 = adia__now_ms();
    part->list_start = (int64_t *)adia__calloc((size_t)part->n_pieces + 1, sizeof *part->list_start,
                                              "diagonal format list starts");
    if (!part->list_start) return ADIA_ERR_NO_MEMORY;
    return download_lists(c, d_keys, n, part);
}

/* -------------------------------------------------------------- build */

static adia_status upload_structure(build_ctx *c, const adia_diag *D)
{
    ADIA_TRY(adia__gpu_copy_in((void **)&c->pgroup, D->piece_group, D->n_pieces, sizeof *c->pgroup,
                              "GPU BRCSD-II build: piece groups"));
    ADIA_TRY(adia__gpu_copy_in((void **)&c->gstart, D->group_start, (int64_t)D->n_groups + 1,
                              sizeof *c->gstart, "GPU BRCSD-II build: group starts"));
    ADIA_TRY(adia__gpu_copy_in((void **)&c->offs, D->offsets, D->group_start[D->n_groups],
                              sizeof *c->offs, "GPU BRCSD-II build: offsets"));
    return adia__gpu_copy_in((void **)&c->pdata, D->piece_data, (int64_t)D->n_pieces + 1,
                            sizeof *c->pdata, "GPU BRCSD-II build: piece data starts");
}

/* D->zero_row/zero_col: the entries whose value is 0 in T, row-sorted. */
template <class T>
static adia_status zero_lists(build_ctx *c, adia_diag *D)
{
    const adia_gpu_csr *A = c->A;
    DEV_ALLOC(c->count, 1, "GPU BRCSD-II build: zero count");
    ADIA_CUDA_TRY(cudaMemset(c->count, 0, sizeof *c->count));
    ADIA_TRY(for_each_nnz(A, ZeroOp<T>{A->colind, A->values, c->count, NULL}, "count zeros"));
    unsigned long long nz = 0;
    ADIA_TRY(copy_out(&nz, c->count, 1, sizeof nz, "GPU BRCSD-II build: zero count"));
    D->zero_row = (int32_t *)adia__alloc(nz, sizeof *D->zero_row, "explicit zero rows");
    D->zero_col = (int32_t *)adia__alloc(nz, sizeof *D->zero_col, "explicit zero columns");
    if (!D->zero_row || !D->zero_col) return ADIA_ERR_NO_MEMORY;
    if (nz == 0) return ADIA_OK;          /* the usual case */
    int64_t n = (int64_t)nz;
    DEV_ALLOC(c->zkeys[0], n, "GPU BRCSD-II build: zero keys");
    DEV_ALLOC(c->zkeys[1], n, "GPU BRCSD-II build: sorted zero keys");
    ADIA_CUDA_TRY(cudaMemset(c->count, 0, sizeof *c->count));
    ADIA_TRY(for_each_nnz(A, ZeroOp<T>{A->colind, A->values, c->count, c->zkeys[0]}, "gather zeros"));
    cub::DoubleBuffer<uint64_t> buf(c->zkeys[0], c->zkeys[1]);
    ADIA_TRY(cub_run(c, "GPU BRCSD-II build: cub::DeviceRadixSort::SortKeys (zeros)", [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortKeys(t, b, buf, n, 0, 64);
    }));
    uint64_t *key = (uint64_t *)adia__alloc(nz, sizeof *key, "GPU BRCSD-II build: host zero keys");
    if (!key) return ADIA_ERR_NO_MEMORY;
    adia_status s = copy_out(key, buf.Current(), n, sizeof *key, "GPU BRCSD-II build: zero keys");
    for (int64_t i = 0; s == ADIA_OK && i < n; i++) {
        D->zero_row[i] = (int32_t)(key[i] >> 32);
        D->zero_col[i] = (int32_t)(uint32_t)key[i];
    }
    free(key);
    D->n_zero = s == ADIA_OK ? n : 0;
    return s;
}

template <class T>
static adia_status fill(build_ctx *c, adia_diag *D)
{
    const adia_gpu_csr *A = c->A;
    int64_t stored = D->piece_data[D->n_pieces];
    ADIA_TRY(dev_alloc(&c->data, stored, sizeof(T), "GPU BRCSD-II build: data"));
    if (stored > 0) ADIA_CUDA_TRY(cudaMemset(c->data, 0, (size_t)stored * sizeof(T)));
    FillOp<T> op{A->colind, A->values, A->rows, c->B, c->pgroup, c->gstart, c->offs,
                 c->pdata, (T *)c->data, c->bad};
    ADIA_TRY(for_each_nnz(A, op, "fill diagonal data"));
    ADIA_TRY(check_bad(c, ADIA_ERR_INTERNAL, "a nonzero is on a diagonal its piece does not keep"));
    return zero_lists<T>(c, D);
}

/* ------------------------------------------------------- the function */

static adia_status new_diag(const adia_gpu_csr *A, int per_piece, adia_value_type vt,
                           adia_diag **out)
{
    adia_diag *D = (adia_diag *)adia__calloc(1, sizeof *D, "diagonal format");
    if (!D) return ADIA_ERR_NO_MEMORY;
    *out = D;
    D->offsets_per_piece = per_piece;
    D->rows = A->rows;
    D->cols = A->cols;
    D->vtype = vt;
    D->nnz = A->nnz;
    /* no scatter part; empty arrays as the host build has them */
    D->scatter_row = (int32_t *)adia__alloc(0, sizeof *D->scatter_row, "scatter rows");
    D->scatter_col = (int32_t *)adia__alloc(0, sizeof *D->scatter_col, "scatter columns");
    D->scatter_val = adia__alloc(0, adia_value_size(vt), "scatter values");
    return D->scatter_row && D->scatter_col && D->scatter_val ? ADIA_OK : ADIA_ERR_NO_MEMORY;
}

static float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    return cudaEventElapsedTime(&ms, a, b) == cudaSuccess ? ms : -1.0f;
}

static adia_status run_build(build_ctx *c, adia_value_type vt, adia_diag *D, adia_gpu_build_info *info)
{
    for (; c->n_ev < 4; c->n_ev++) ADIA_CUDA_TRY(cudaEventCreate(&c->ev[c->n_ev]));
    DEV_ALLOC(c->bad, 1, "GPU BRCSD-II build: error flag");
    ADIA_TRY(reset_bad(c));
    ADIA_CUDA_TRY(cudaEventRecord(c->ev[0]));
    ADIA_TRY(check_rowptr_ends(c));
    if (c->A->nnz > 0) ADIA_TRY(find_diagonals(c));
    adia_diag_partition part = {0};
    double t0 = 0;
    adia_status s = adia__diag_equal_pieces(c->A->rows, c->B, &part);
    if (s == ADIA_OK)
        s = (uint64_t)c->n_pieces * c->n_diag <= (uint64_t)UINT32_MAX + 1
                ? piece_lists<uint32_t>(c, &part, &t0)
                : piece_lists<uint64_t>(c, &part, &t0);
    if (s == ADIA_OK) s = adia__diag_structure(D, &part);
    adia__diag_partition_free(&part);
    ADIA_TRY(s);
    ADIA_TRY(upload_structure(c, D));
    info->host_ms = adia__now_ms() - t0;
    ADIA_CUDA_TRY(cudaEventRecord(c->ev[2]));
    ADIA_TRY(vt == ADIA_DOUBLE ? fill<double>(c, D) : fill<float>(c, D));
    ADIA_CUDA_TRY(cudaEventRecord(c->ev[3]));
    ADIA_CUDA_TRY(cudaEventSynchronize(c->ev[3]));
    info->analyze_ms = elapsed(c->ev[0], c->ev[1]);
    info->build_ms = elapsed(c->ev[2], c->ev[3]);
    info->n_diag = c->n_diag;
    info->stored = D->piece_data[D->n_pieces];
    return ADIA_OK;
}

static adia_status check_args(const adia_gpu_csr *dA, int32_t block_rows, adia_value_type vt,
                              adia_diag **out)
{
#define BAD(...) return adia__error(ADIA_ERR_INVALID_ARG, "GPU diagonal build: " __VA_ARGS__)
    if (!dA || !out) BAD("NULL argument (%s)", !dA ? "dA" : "out");
    if (block_rows <= 0) BAD("block_rows = %" PRId32 " must be positive", block_rows);
    if (vt != ADIA_DOUBLE && vt != ADIA_FLOAT) BAD("bad value type %d", (int)vt);
    if (dA->rows < 0 || dA->cols < 0 || dA->nnz < 0)
        BAD("negative size %" PRId32 " x %" PRId32 ", %" PRId64 " nonzeros", dA->rows, dA->cols, dA->nnz);
    if (!dA->rowptr || (dA->nnz > 0 && (!dA->colind || !dA->values)))
        BAD("NULL device array (rowptr %p, colind %p, values %p)", (const void *)dA->rowptr,
            (const void *)dA->colind, (const void *)dA->values);
    return ADIA_OK;
#undef BAD
}

/* The context of a build of dA in pieces of piece_rows rows. */
static void ctx_init(build_ctx *c, const adia_gpu_csr *dA, int32_t piece_rows)
{
    memset(c, 0, sizeof *c);
    c->A = dA;
    c->B = piece_rows;
    c->n_pieces = ((int64_t)dA->rows + piece_rows - 1) / piece_rows;
    c->span = (int64_t)dA->rows + dA->cols - 1;
    if (c->span < 0) c->span = 0;
}

static adia_status need_device(const char *func)
{
    int ndev = 0;
    ADIA_TRY(adia_gpu_device_count(&ndev));
    return ndev > 0 ? ADIA_OK : adia__error(ADIA_ERR_NO_DEVICE, "%s: no CUDA device", func);
}

extern "C" adia_status adia__gpu_count_diagonals(const adia_gpu_csr *dA, int64_t *n_diag)
{
    adia_diag *unused = NULL;
    ADIA_TRY(check_args(dA, 1, ADIA_DOUBLE, &unused));
    ADIA_TRY(need_device("adia__gpu_count_diagonals"));
    build_ctx c;
    ctx_init(&c, dA, 1);
    *n_diag = 0;
    DEV_ALLOC(c.bad, 1, "GPU diagonal count: error flag");
    adia_status s = reset_bad(&c);
    if (s == ADIA_OK) s = check_rowptr_ends(&c);
    if (s == ADIA_OK && dA->nnz > 0) s = find_diagonals(&c);
    if (s == ADIA_OK) *n_diag = c.n_diag;
    ctx_free(&c);
    return s;
}

static adia_status diag_build(const adia_gpu_csr *dA, int32_t block_rows, int per_piece,
                              adia_value_type vt, int download, int64_t max_slots,
                              adia_diag **out, void **dev_data, adia_gpu_build_info *info)
{
    if (out) *out = NULL;
    if (dev_data) *dev_data = NULL;
    ADIA_TRY(check_args(dA, block_rows, vt, out));
    ADIA_TRY(need_device("adia__gpu_diag_build"));
    adia_gpu_build_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    build_ctx c;
    ctx_init(&c, dA, block_rows);
    c.max_slots = max_slots;
    adia_diag *D = NULL;
    adia_status s = new_diag(dA, per_piece, vt, &D);
    if (s == ADIA_OK) s = run_build(&c, vt, D, info);
    if (s == ADIA_OK && download) {
        double t = adia__now_ms();
        D->data = adia__alloc((size_t)info->stored, adia_value_size(vt), "diagonal data");
        s = D->data ? copy_out(D->data, c.data, info->stored, adia_value_size(vt), "GPU BRCSD-II build: data download")
                    : ADIA_ERR_NO_MEMORY;
        info->download_ms = adia__now_ms() - t;
    }
    if (s == ADIA_OK && dev_data) {
        *dev_data = c.data;
        c.data = NULL;
    }
    ctx_free(&c);
    if (s != ADIA_OK) {
        adia__diag_free(D);
        return s;
    }
    *out = D;
    return ADIA_OK;
}

extern "C" adia_status adia__gpu_diag_build(const adia_gpu_csr *dA, int32_t block_rows,
                                           int per_piece, adia_value_type vt, int download,
                                           adia_diag **out, void **dev_data,
                                           adia_gpu_build_info *info)
{
    return diag_build(dA, block_rows, per_piece, vt, download, 0, out, dev_data, info);
}

/* ------------------------------------------------------ public entry */

/* Rows per piece and offsets per piece of F: what its table says (the
 * formats of equal pieces keeping their present diagonals are built here). */
static adia_status piece_shape(const adia_format *F, int32_t *rows, int *per_piece)
{
    const adia_format_ops *o = F->ops;
    if (!o->diag.piece_rows) {
        char can[256] = "";   /* the registry's formats with a device build */
        for (int i = 0; i < adia_format_count(); i++) {
            const adia_format_ops *f = adia__format_ops_at(i);
            if (f->gpu && f->gpu->build_device && strlen(can) + strlen(f->name) + 3 < sizeof can)
                snprintf(can + strlen(can), sizeof can - strlen(can), "%s%s", can[0] ? ", " : "",
                         f->name);
        }
        return adia__error(ADIA_ERR_UNSUPPORTED, "format %s cannot be built on the GPU (%s; "
                          "these can: %s)", o->name, o->diag.policy ? "its row pieces are not "
                          "equal" : "not a diagonal format", can);
    }
    *per_piece = o->diag.per_piece;
    return o->diag.piece_rows(&F->params, F->rows, rows);
}

extern "C" adia_status adia__format_build_device(const char *name, const adia_gpu_csr *dA,
                                                 const adia_format_params *p, adia_value_type vt,
                                                 int64_t max_slots, adia_format **out,
                                                 adia_gpu_build_info *info)
{
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "GPU format build: out is NULL");
    *out = NULL;
    if (!dA) return adia__error(ADIA_ERR_INVALID_ARG, "GPU format build: the matrix is NULL");
    const adia_format_ops *o = adia__format_ops_find(name);
    if (o && !o->diag.policy && o->gpu && o->gpu->build_device) {   /* a row format's own */
        if (info) memset(info, 0, sizeof *info);
        ADIA_TRY(need_device("GPU format build"));
        adia_status s = o->gpu->build_device(o, dA->rows, dA->cols, dA->nnz, dA->rowptr,
                                             dA->colind, dA->values, p, vt, out);
        if (s == ADIA_OK) s = adia__gpu_fence("GPU format build");
        if (s != ADIA_OK && *out) {
            adia_format_destroy(*out);
            *out = NULL;
        }
        return s;
    }
    adia_format *F = NULL;
    ADIA_TRY(adia__format_new(name, p, vt, dA->rows, dA->cols, dA->nnz, &F));
    int32_t rows = 0;
    int per_piece = 0;
    adia_diag *D = NULL;
    void *dev_data = NULL;
    adia_status s = piece_shape(F, &rows, &per_piece);
    /* the data stays on the device until the host needs it (adia__format_host) */
    if (s == ADIA_OK) s = diag_build(dA, rows, per_piece, vt, 0, max_slots, &D, &dev_data, info);
    F->impl = D;                      /* owned by F from here: destroy frees it */
    F->host_stale = 1;
    if (s == ADIA_OK) s = adia__gpu_diag_adopt(D, vt, &F->params, dev_data, &F->dev);   /* takes dev_data */
    if (s == ADIA_OK) s = adia__gpu_fence("GPU format build");   /* its structure's uploads */
    if (s != ADIA_OK) {
        adia_format_destroy(F);
        return s;
    }
    *out = F;
    return ADIA_OK;
}

extern "C" adia_status adia__diag_build_device(const adia_format_ops *self, int32_t rows,
                                               int32_t cols, int64_t nnz,
                                               const int64_t *d_rowptr, const int32_t *d_colind,
                                               const double *d_values,
                                               const adia_format_params *p, adia_value_type vt,
                                               adia_format **out)
{
    const adia_gpu_csr A = {rows, cols, nnz, d_rowptr, d_colind, d_values};
    return adia__format_build_device(self->name, &A, p, vt, 0, out, NULL);
}

extern "C" adia_status adia_format_build_brcsd2_device(int32_t rows, int32_t cols, int64_t nnz,
                                                       const int64_t *d_rowptr,
                                                       const int32_t *d_colind,
                                                       const double *d_values,
                                                       const adia_format_params *p,
                                                       adia_value_type vt, adia_format **out)
{
    const adia_gpu_csr A = {rows, cols, nnz, d_rowptr, d_colind, d_values};
    return adia__format_build_device("brcsd2", &A, p, vt, 0, out, NULL);
}
