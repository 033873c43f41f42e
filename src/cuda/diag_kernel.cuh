/*
 * diag_kernel.cuh -- the device side of the diagonal core (diag_core.h):
 * helpers, the generic kernel (offsets read from memory; the paper's "NLP"
 * variant) and the kernel-argument struct.
 *
 * This file is compiled offline into the library (diag_gpu.cu) AND embedded
 * as text (CMake -> diag_kernel_src.h) in front of every generated kernel
 * (codegen.c), so a typo fails the build, not a user's run.  It must
 * therefore stay free of #include and of host-only code, and the struct
 * below must stay plain C (codegen.c fills it from C).
 *
 * Mapping: one thread per row.  The piece of row r is found through
 * chunk_piece[r / 32] (the piece holding the first row of r's warp-sized
 * chunk) and a binary search up to chunk_piece[r / 32 + 1]; when pieces
 * are aligned to 32 rows (DIA, BRCSD) the search does no step.  Values of
 * one diagonal are consecutive in a piece, so the loads of a warp are
 * coalesced; x goes through the read-only path (__ldg).  A column c = r + o
 * outside [0, cols) is stored as zero and never read as x[c]: the test is
 * done in unsigned 32-bit arithmetic, where r + o < 0 wraps above cols.
 * The matrix values are read once and y is written once: both go through
 * the streaming (evict-first) cache path, __ldcs/__stcs, so that x -- read
 * once per diagonal, far apart in time for far diagonals -- stays in L2.
 */
#ifndef ADIA_DIAG_KERNEL_CUH
#define ADIA_DIAG_KERNEL_CUH

#define ADIA_DIAG_CHUNK 32

typedef struct adia_diag_args {
    const int *piece_start;        /* n_pieces + 1                          */
    const int *piece_group;        /* n_pieces                              */
    const long long *piece_data;   /* n_pieces + 1                          */
    const int *group_start;        /* n_groups + 1                          */
    const int *offsets;
    const int *chunk_piece;        /* ceil(rows / 32) + 1                   */
    const void *piece_desc;        /* int4 x 2 per piece (adia_warp_locate) */
    const int *chunk_order;        /* NULL, or the chunk of each warp (below) */
    const void *data;              /* double or float                       */
    int rows, cols;
    int n_pieces, n_chunks;        /* n_chunks: entries of chunk_order      */
} adia_diag_args;

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/* Piece holding row r. */
__device__ __forceinline__ int adia_diag_piece(const adia_diag_args &a, int r)
{
    int lo = __ldg(a.chunk_piece + r / ADIA_DIAG_CHUNK);
    int hi = __ldg(a.chunk_piece + r / ADIA_DIAG_CHUNK + 1);
    while (lo < hi) { /* largest p in [lo, hi] with piece_start[p] <= r */
        int mid = (lo + hi + 1) >> 1;
        if (__ldg(a.piece_start + mid) <= r) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* One diagonal's contribution: value at d[idx] times x[c] if c is a column.
 * A stored zero (padding) contributes nothing even when x[c] is NaN or Inf,
 * so NaN in x reaches exactly the rows with a nonzero in that column, as in
 * the CSR reference.  Both loads are issued before the test (no added
 * latency); the test costs a compare and a select. */
template <typename T>
__device__ __forceinline__ T adia_diag_term(const T *__restrict__ d, long long idx,
                                            const T *__restrict__ x, unsigned c,
                                            unsigned cols)
{
    bool in = c < cols;
    T v = in ? __ldcs(d + idx) : T(0);
    T xv = in ? __ldg(x + c) : T(0);
    return v != T(0) ? v * xv : T(0);
}

/* y[r] = alpha*sum + beta*y[r]; y is not read when beta == 0. */
template <typename T>
__device__ __forceinline__ void adia_diag_store(T *__restrict__ y, int r, T alpha,
                                                T beta, T sum)
{
    if (beta == T(0)) __stcs(y + r, alpha * sum);
    else __stcs(y + r, alpha * sum + beta * y[r]);
}

/* The chunk of `unit` rows this warp works on.  Warps run in about the
 * order of their index; chunk_order (diag_gpu.cu, interleave_order) lets
 * warps that read the same x run side by side when a matrix has diagonals
 * so far apart that x would leave L2 between its two reads (two coupled
 * fields, offsets +-n/2).  NULL: chunk = warp. */
__device__ __forceinline__ long long adia_diag_chunk(const adia_diag_args &a)
{
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    return a.chunk_order && w < a.n_chunks ? (long long)__ldg(a.chunk_order + w) : w;
}

/* Row of this thread, or -1 beyond the matrix (64-bit product: no overflow). */
__device__ __forceinline__ int adia_diag_row(const adia_diag_args &a)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long r = adia_diag_chunk(a) * 32 + (t & 31);
    return r < a.rows ? (int)r : -1;
}

/* Where row r's values start in its piece, its piece length and group. */
struct adia_diag_loc {
    long long base;   /* element index of row r on the piece's first diagonal */
    int len, group;
};

__device__ __forceinline__ adia_diag_loc adia_diag_locate(const adia_diag_args &a, int r)
{
    int p = adia_diag_piece(a, r);
    int r0 = __ldg(a.piece_start + p);
    adia_diag_loc l;
    l.len = __ldg(a.piece_start + p + 1) - r0;
    l.group = __ldg(a.piece_group + p);
    l.base = __ldg(a.piece_data + p) + (r - r0);
    return l;
}

/* The generic kernel: offsets read from memory. */
template <typename T>
__global__ void adia_diag_generic(adia_diag_args a, T alpha, T beta,
                                  const T *__restrict__ x, T *__restrict__ y)
{
    int r = adia_diag_row(a);
    if (r < 0) return;
    adia_diag_loc l = adia_diag_locate(a, r);
    const T *d = (const T *)a.data + l.base;
    int k0 = __ldg(a.group_start + l.group), k1 = __ldg(a.group_start + l.group + 1);
    T sum = T(0);
#pragma unroll 4
    for (int k = k0; k < k1; k++) {
        unsigned c = (unsigned)r + (unsigned)__ldg(a.offsets + k);
        sum += adia_diag_term(d, (long long)(k - k0) * l.len, x, c, (unsigned)a.cols);
    }
    adia_diag_store(y, r, alpha, beta, sum);
}


/* Warp kernels, for partitions whose piece starts are multiples of 32*R
 * rows (DIA, BRCSD, HDI): a warp covers 32*R consecutive rows of ONE piece,
 * so the piece and its group are found once per warp with uniform loads.
 * Each thread sums R rows (lane, lane+32, ...), keeping R independent loads
 * of each diagonal in flight.  Used by the warp kernel below and by the
 * generated kernels (codegen_host.c). */
struct adia_warp_piece {
    long long data;   /* element index of this lane's first row, diagonal 0 */
    int len;          /* rows of the piece (stride between diagonals)       */
    int k0, K;        /* the group's offsets: offsets[k0 .. k0+K)           */
    int group;
    unsigned r;       /* this lane's first row                              */
};

/* piece_desc[2p], [2p+1] = {data low, data high, start, len}, {group, k0,
 * K, 0}: all a warp needs about its piece in two independent 16-byte loads
 * right after chunk_piece, instead of a chain of four dependent loads
 * (piece -> group -> group_start -> offsets) before the first value. */
__device__ __forceinline__ bool adia_warp_locate(const adia_diag_args &a, int R,
                                                 adia_warp_piece &w)
{
    const int lane = threadIdx.x & 31;
    long long first = adia_diag_chunk(a) * 32 * R;
    if (first >= a.rows) return false;
    int p = __ldg(a.chunk_piece + first / ADIA_DIAG_CHUNK);
    const int4 *desc = (const int4 *)a.piece_desc + 2 * p;
    int4 d0 = __ldg(desc), d1 = __ldg(desc + 1);
    long long data = (long long)(((unsigned long long)(unsigned)d0.y << 32) | (unsigned)d0.x);
    w.len = d0.w;
    w.group = d1.x;
    w.k0 = d1.y;
    w.K = d1.z;
    w.data = data + (first - d0.z) + lane;
    w.r = (unsigned)first + lane;
    return true;
}

/* sum[q] += A(r_q, r_q + o) * x[r_q + o] for the R rows of this lane, dk
 * pointing at the lane's first row on the diagonal. */
template <typename T, int R>
__device__ __forceinline__ void adia_warp_acc(T (&sum)[R], const T *__restrict__ dk,
                                              const T *__restrict__ x, unsigned r, int o,
                                              const adia_diag_args &a)
{
#pragma unroll
    for (int q = 0; q < R; q++) {
        unsigned rq = r + 32u * q, c = rq + (unsigned)o;
        bool in = rq < (unsigned)a.rows && c < (unsigned)a.cols;
        T v = in ? __ldcs(dk + 32 * q) : T(0);
        T xv = in ? __ldg(x + c) : T(0);
        sum[q] += v != T(0) ? v * xv : T(0);
    }
}

template <typename T, int R>
__device__ __forceinline__ void adia_warp_store(T *__restrict__ y, unsigned r, T alpha,
                                                T beta, const T (&sum)[R], int rows)
{
#pragma unroll
    for (int q = 0; q < R; q++)
        if (r + 32u * q < (unsigned)rows) adia_diag_store(y, (int)(r + 32u * q), alpha, beta, sum[q]);
}

/* The generic warp kernel: lane j loads offset j of the group and the warp
 * shares them through __shfl_sync -- no dependent offset load per term.
 * The diagonal loop stays a loop (unrolled by 4): fully unrolled blocks of
 * 8 diagonals kept 2*8*R loads live and took 126 registers (25% occupancy)
 * and ran 7-50% slower on the H200 (bench/GPU-NOTES.md, v4). */
template <typename T, int R>
__global__ void adia_diag_warp(adia_diag_args a, T alpha, T beta,
                               const T *__restrict__ x, T *__restrict__ y)
{
    adia_warp_piece w;
    if (!adia_warp_locate(a, R, w)) return;   /* whole warp: shuffles stay full */
    const int lane = threadIdx.x & 31;
    const T *d = (const T *)a.data + w.data;
    T sum[R];
#pragma unroll
    for (int q = 0; q < R; q++) sum[q] = T(0);
    for (int kb = 0; kb < w.K; kb += 32) {
        int mine = kb + lane < w.K ? __ldg(a.offsets + w.k0 + kb + lane) : 0;
        int n = min(32, w.K - kb);
        const T *dk = d + (long long)kb * w.len;
#pragma unroll 4
        for (int j = 0; j < n; j++, dk += w.len)
            adia_warp_acc<T, R>(sum, dk, x, w.r, __shfl_sync(0xffffffffu, mine, j), a);
    }
    adia_warp_store<T, R>(y, w.r, alpha, beta, sum, a.rows);
}

#endif /* __CUDACC__ */
#endif /* ADIA_DIAG_KERNEL_CUH */
