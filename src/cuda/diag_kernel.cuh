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

/* Dot products fused into a product's epilogue (the GPU solvers: CG's
 * u'Au, r'u and r'r, BiCGSTAB's r0'v, t's and t't come out of the product
 * that makes Au, v or t, so no pass re-reads those vectors).  With xd the
 * x entry of each row's own unknown (NULL: the product's x, a square
 * matrix; a block of rows of a larger matrix: the caller's rows) and z the
 * companion vector (NULL: z = xd), the sums of xd'y, z'xd, z'z, y'y and
 * z'y of the product's final y, in double for both value types, stored in
 * out (add: added to it, so the row blocks of one product sum in one
 * place).  Blocks write partials; the last block of each group of
 * ADIA_DOT_GROUP sums its group, the last group-finisher sums the groups
 * into out: no atomics on values, so the sums are deterministic. */
#define ADIA_NDOT 5
#define ADIA_DOT_GROUP 64
enum { ADIA_DOT_XY = 0, ADIA_DOT_ZX, ADIA_DOT_ZZ, ADIA_DOT_YY, ADIA_DOT_ZY };

typedef struct adia_dot_work {
    const void *z;                 /* companion vector, or NULL for xd      */
    const void *xd;                /* each row's own x entry, or NULL: x    */
    double *partial;               /* ADIA_NDOT x (max_blocks + groups)     */
    unsigned *count;               /* 1 + groups, zero before a launch and
                                      left zero after it                    */
    double *out;                   /* ADIA_NDOT sums                        */
    unsigned max_blocks;           /* a launch of more blocks is refused    */
    int add;                       /* 1: out += the sums; 0: out = them     */
} adia_dot_work;

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

/* y[r] = alpha*sum + beta*y[r]; y is not read when beta == 0.  Returns
 * the value stored. */
template <typename T>
__device__ __forceinline__ T adia_diag_store(T *__restrict__ y, int r, T alpha,
                                             T beta, T sum)
{
    T v = beta == T(0) ? alpha * sum : alpha * sum + beta * y[r];
    __stcs(y + r, v);
    return v;
}

/* ------------------------------------------------- fused dot products */

/* Row r's terms of the sums (adia_dot_work w; x: the product's); yv: the
 * y[r] just stored. */
template <typename T>
__device__ __forceinline__ void adia_dot_row(double (&s)[ADIA_NDOT], const adia_dot_work &w,
                                             const T *x, int r, T yv)
{
    const T *xd = w.xd ? (const T *)w.xd : x, *z = (const T *)w.z;
    double xv = __ldg(xd + r), zv = z ? (double)__ldg(z + r) : xv, y = yv;
    s[ADIA_DOT_XY] += xv * y;
    s[ADIA_DOT_ZX] += zv * xv;
    s[ADIA_DOT_ZZ] += zv * zv;
    s[ADIA_DOT_YY] += y * y;
    s[ADIA_DOT_ZY] += zv * y;
}

/* Sums of v over the block (every thread calls it); the totals are valid
 * in thread 0.  A fixed order: warp shuffles, then the warps in turn. */
__device__ __forceinline__ void adia_block_sums(double (&v)[ADIA_NDOT])
{
    __shared__ double sh[32][ADIA_NDOT];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = (blockDim.x + 31) >> 5;
    for (int j = 0; j < ADIA_NDOT; j++)
        for (int o = 16; o > 0; o >>= 1) v[j] += __shfl_down_sync(0xffffffffu, v[j], o);
    __syncthreads();   /* sh may still be read by an earlier call */
    if (lane == 0)
        for (int j = 0; j < ADIA_NDOT; j++) sh[warp][j] = v[j];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 0; j < ADIA_NDOT; j++) {
            double t = sh[0][j];
            for (int w = 1; w < warps; w++) t += sh[w][j];
            v[j] = t;
        }
}

/* Adds the n partial sums at p (ADIA_NDOT each, in order) over the block;
 * totals in thread 0. */
__device__ __forceinline__ void adia_block_sum_partials(const double *p, unsigned n,
                                                        double (&v)[ADIA_NDOT])
{
    for (int j = 0; j < ADIA_NDOT; j++) v[j] = 0;
    for (unsigned b = threadIdx.x; b < n; b += blockDim.x)
        for (int j = 0; j < ADIA_NDOT; j++) v[j] += __ldcg(p + (size_t)b * ADIA_NDOT + j);
    adia_block_sums(v);
}

/* True in the block that must go on: the last of its group (level 1) or of
 * all groups (level 2); count: that level's counter. */
__device__ __forceinline__ bool adia_dot_last(unsigned *count, unsigned expected)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(count, 1u) == expected - 1;
        if (last) *count = 0;   /* every other block has counted: reset */
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

/* The block's share of the sums, then (last blocks) the group's and the
 * grid's: out holds the totals when the kernel ends.  Every thread of
 * every block calls it. */
__device__ __forceinline__ void adia_dot_finish(double (&s)[ADIA_NDOT], const adia_dot_work &w)
{
    const unsigned G = ADIA_DOT_GROUP, b = blockIdx.x, g = b / G;
    const unsigned groups = (gridDim.x + G - 1) / G;
    const unsigned in_group = min(G, gridDim.x - g * G);
    double *group_partial = w.partial + (size_t)w.max_blocks * ADIA_NDOT;
    adia_block_sums(s);
    if (threadIdx.x == 0)
        for (int j = 0; j < ADIA_NDOT; j++) w.partial[(size_t)b * ADIA_NDOT + j] = s[j];
    if (!adia_dot_last(w.count + 1 + g, in_group)) return;
    adia_block_sum_partials(w.partial + (size_t)g * G * ADIA_NDOT, in_group, s);
    if (threadIdx.x == 0)
        for (int j = 0; j < ADIA_NDOT; j++) group_partial[(size_t)g * ADIA_NDOT + j] = s[j];
    if (!adia_dot_last(w.count, groups)) return;
    adia_block_sum_partials(group_partial, groups, s);
    if (threadIdx.x == 0)
        for (int j = 0; j < ADIA_NDOT; j++) w.out[j] = (w.add ? w.out[j] : 0.0) + s[j];
}

/* The sums alone, for a product without an epilogue (row formats, CRSD's
 * scatter pass): y already computed. */
template <typename T>
__global__ void adia_dots_kernel(const T *__restrict__ x, const T *__restrict__ y, int rows,
                                 adia_dot_work w)
{
    double s[ADIA_NDOT] = {0, 0, 0, 0, 0};
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x)
        adia_dot_row<T>(s, w, x, r, y[r]);
    adia_dot_finish(s, w);
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

/* The generic kernel: offsets read from memory.  DOT: the fused sums of
 * adia_dot_work (square matrices). */
template <typename T, bool DOT>
__global__ void adia_diag_generic(adia_diag_args a, T alpha, T beta,
                                  const T *__restrict__ x, T *__restrict__ y, adia_dot_work dw)
{
    double dots[ADIA_NDOT] = {0, 0, 0, 0, 0};
    int r = adia_diag_row(a);
    if (r >= 0) {
        adia_diag_loc l = adia_diag_locate(a, r);
        const T *d = (const T *)a.data + l.base;
        int k0 = __ldg(a.group_start + l.group), k1 = __ldg(a.group_start + l.group + 1);
        T sum = T(0);
#pragma unroll 4
        for (int k = k0; k < k1; k++) {
            unsigned c = (unsigned)r + (unsigned)__ldg(a.offsets + k);
            sum += adia_diag_term(d, (long long)(k - k0) * l.len, x, c, (unsigned)a.cols);
        }
        T yv = adia_diag_store(y, r, alpha, beta, sum);
        if (DOT) adia_dot_row<T>(dots, dw, x, r, yv);
    }
    if (DOT) adia_dot_finish(dots, dw);
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
struct adia_piece_info {
    long long data;   /* element index of the piece's first row, diagonal 0 */
    int start, len;   /* its first row and rows                             */
    int group, k0, K; /* its group's offsets: offsets[k0 .. k0+K)           */
};

__device__ __forceinline__ adia_piece_info adia_piece_read(const adia_diag_args &a, int p)
{
    const int4 *desc = (const int4 *)a.piece_desc + 2 * p;
    const int4 d0 = __ldg(desc), d1 = __ldg(desc + 1);
    adia_piece_info i;
    i.data = (long long)(((unsigned long long)(unsigned)d0.y << 32) | (unsigned)d0.x);
    i.start = d0.z;
    i.len = d0.w;
    i.group = d1.x;
    i.k0 = d1.y;
    i.K = d1.z;
    return i;
}

__device__ __forceinline__ bool adia_warp_locate(const adia_diag_args &a, int R,
                                                 adia_warp_piece &w)
{
    const int lane = threadIdx.x & 31;
    long long first = adia_diag_chunk(a) * 32 * R;
    if (first >= a.rows) return false;
    const adia_piece_info p = adia_piece_read(a, __ldg(a.chunk_piece + first / ADIA_DIAG_CHUNK));
    w.len = p.len;
    w.group = p.group;
    w.k0 = p.k0;
    w.K = p.K;
    w.data = p.data + (first - p.start) + lane;
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

/* The R rows' y; DOT: their terms of the fused sums. */
template <typename T, int R, bool DOT>
__device__ __forceinline__ void adia_warp_store(T *__restrict__ y, unsigned r, T alpha,
                                                T beta, const T (&sum)[R], int rows,
                                                const T *__restrict__ x,
                                                const adia_dot_work &dw,
                                                double (&dots)[ADIA_NDOT])
{
#pragma unroll
    for (int q = 0; q < R; q++)
        if (r + 32u * q < (unsigned)rows) {
            T yv = adia_diag_store(y, (int)(r + 32u * q), alpha, beta, sum[q]);
            if (DOT) adia_dot_row<T>(dots, dw, x, (int)(r + 32u * q), yv);
        }
}

/* The generic warp kernel: lane j loads offset j of the group and the warp
 * shares them through __shfl_sync -- no dependent offset load per term.
 * The diagonal loop stays a loop (unrolled by 4): fully unrolled blocks of
 * 8 diagonals kept 2*8*R loads live and took 126 registers (25% occupancy)
 * and ran 7-50% slower on the H200 (bench/GPU-NOTES.md, v4). */
template <typename T, int R, bool DOT>
__device__ __forceinline__ void adia_diag_warp_body(const adia_diag_args &a, T alpha, T beta,
                                                    const T *__restrict__ x, T *__restrict__ y,
                                                    const adia_dot_work &dw)
{
    double dots[ADIA_NDOT] = {0, 0, 0, 0, 0};
    adia_warp_piece w;
    if (adia_warp_locate(a, R, w)) {   /* whole warp: shuffles stay full */
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
        adia_warp_store<T, R, DOT>(y, w.r, alpha, beta, sum, a.rows, x, dw, dots);
    }
    if (DOT) adia_dot_finish(dots, dw);
}

template <typename T, int R, bool DOT>
__global__ void adia_diag_warp(adia_diag_args a, T alpha, T beta,
                               const T *__restrict__ x, T *__restrict__ y, adia_dot_work dw)
{
    adia_diag_warp_body<T, R, DOT>(a, alpha, beta, x, y, dw);
}

/* Few rows (ADIA_DIAG_LATENCY_ROWS: a multigrid's coarse levels, a few
 * blocks on the whole GPU) and wide groups: latency, not bandwidth, is the
 * time, and the loop above, four loads in flight, took 14-16 us for a
 * 27-diagonal product of 125 to 64,000 rows alike (ncu, H200 at base
 * clocks, 2026-11-28: every coarse level's four products a cycle).  Here
 * a lane loads L diagonals' values and x before it sums them -- predicated,
 * no exit between the loads -- in the loop's order, one row a lane (R = 1,
 * the rule for few rows), at most 128 registers.  A round's idle slots
 * still issue, so L follows the widest group (diag_gpu.cu, latency_loads).
 * Measured against the loop (H100, adia spmv, 60,000 rows, 2026-11-28):
 * bands of 11-15 diagonals 6-20% faster at L = 16, 27-41 17-26%, 21 10%
 * at L = 8 (16: equal), 17 equal at L = 8 (16: 12% slower), 9 3-6% slower
 * at either: hence more than 10 diagonals. */
#define ADIA_DIAG_LATENCY_ROWS 65536
#define ADIA_DIAG_LATENCY_DIAGONALS 10
template <typename T, int L>
__global__ void __launch_bounds__(256, 2)   /* blocks of at most 256 (diag_launch) */
adia_diag_warp_latency(adia_diag_args a, T alpha, T beta, const T *__restrict__ x,
                       T *__restrict__ y)
{
    adia_warp_piece w;
    if (!adia_warp_locate(a, 1, w)) return;   /* whole warp: shuffles stay full */
    const int lane = threadIdx.x & 31;
    const bool row = w.r < (unsigned)a.rows;
    const T *d = (const T *)a.data + w.data;
    T sum = T(0);
    for (int kb = 0; kb < w.K; kb += 32) {
        const int mine = kb + lane < w.K ? __ldg(a.offsets + w.k0 + kb + lane) : 0;
        const int n = min(32, w.K - kb);
        const T *dk = d + (long long)kb * w.len;
#pragma unroll
        for (int j0 = 0; j0 < 32; j0 += L) {
            if (j0 >= n) break;   /* the warp's: n is uniform */
            T v[L], xv[L];
#pragma unroll
            for (int j = 0; j < L; j++) {
                const unsigned c = w.r + (unsigned)__shfl_sync(0xffffffffu, mine, j0 + j);
                const bool in = j0 + j < n && row && c < (unsigned)a.cols;
                v[j] = in ? __ldcs(dk + (long long)(j0 + j) * w.len) : T(0);
                xv[j] = in ? __ldg(x + c) : T(0);
            }
#pragma unroll
            for (int j = 0; j < L; j++)
                if (j0 + j < n) sum += v[j] != T(0) ? v[j] * xv[j] : T(0);
        }
    }
    if (row) adia_diag_store(y, (int)w.r, alpha, beta, sum);
}

/* The fused-sums product at one row per thread (wide groups,
 * adia__codegen_rows_per_thread) held to 32 registers, every thread of an
 * SM resident: a CG iteration on lap3d27:128 0.2446 -> 0.2025 ms (H200).
 * The plain product keeps its 40: at 32 it ran 4-29% slower (bands with
 * holes, lap3d27, type III; bench/results/2026-11-27g-h200/r1-32reg-*.txt).
 * (1024, 2): any block size the planner or --threads-study uses. */
template <typename T>
__global__ void __launch_bounds__(1024, 2)
adia_diag_warp_dot_r1(adia_diag_args a, T alpha, T beta, const T *__restrict__ x,
                      T *__restrict__ y, adia_dot_work dw)
{
    adia_diag_warp_body<T, 1, true>(a, alpha, beta, x, y, dw);
}

#endif /* __CUDACC__ */
#endif /* ADIA_DIAG_KERNEL_CUH */
