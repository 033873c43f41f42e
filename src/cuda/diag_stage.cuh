/* diag_stage.cuh -- the staged diagonal kernel: a block's values come into
 * shared memory through Hopper's bulk copy engine (cp.async.bulk, sm_90)
 * instead of each thread's loads.
 *
 * Why (issue 32): the warp kernels (diag_kernel.cuh) keep four loads of
 * 256 bytes in flight a warp; on a wide band with holes ncu showed 81% of
 * their cycles waiting on them, DRAM at 53-70%.  A bulk copy moves a
 * tile's diagonal (1 KB in double) with one instruction and no registers;
 * where a piece is one tile (hdi's hacks of 128 rows) a stage of S
 * diagonals is consecutive and one copy.
 *
 * Mapping: a block has ADIA_STAGE_TILE consumer threads (a row each) and
 * one producer warp.  It walks the tiles blockIdx.x, + gridDim.x, ... of
 * as many consecutive rows, each inside one piece (the host uses this
 * kernel only where every piece starts at a multiple of the tile), on a
 * grid of the blocks the SMs hold at once, so that the copies flow from
 * one tile into the next.  The producer copies stage after stage of S
 * diagonals into DEPTH buffers; buffer b has two mbarriers: full[b]
 * completes when its copies land (the consumers wait on it), empty[b]
 * when the 4 consumer warps have read it (the producer waits on it before
 * refilling).  No block-wide barrier in the loop: a warp waits only for
 * its data.  A tile that is not whole (the last rows) or whose segments
 * are not 16-byte aligned takes the loads of the generic kernel, as does
 * code built for an older GPU.  Same arithmetic in the same order as the
 * warp kernels at one row a thread (a zero slot adds nothing even where x
 * is NaN or Inf).
 *
 * Measured (one H200, 2026-11-28, adia bench, generic kernels, time per
 * product): S = 8, DEPTH = 2 (16 KB a block) and the walking grid beat
 * the warp kernels on every matrix tried -- bands with holes of 61
 * diagonals 0.0486 -> 0.0396 ms (fill 0.5), 9 diagonals 0.0136 -> 0.0094,
 * lap3d27:128 0.131 -> 0.117, lap3d7:256 0.329 -> 0.302, lap2d5:2048
 * 0.0691 -> 0.0629 -- where a tile a block (the grid of all tiles) lost
 * up to 1.4x on stencils (a block's fill latency is not hidden) and so
 * did the block barrier of a first version (S, DEPTH = 4-16, 2-4: 8, 2
 * best; bench/results/2026-11-28g-h200).  Issuing a stage's x loads before
 * waiting on its copy changed the chosen kernels by -1..+1% and the
 * generic ones by -6..+2% (bench/results/2026-11-28h-h200): not kept.
 *
 * compute-sanitizer's racecheck reports hazards between the bulk copy's
 * writes and the consumers' reads: it does not take an mbarrier's
 * complete_tx as ordering for a raw cp.async.bulk (flash-attention
 * documents the same for its producer warps); gpu-run.sh leaves this
 * kernel out of racecheck, and test_gpu_spmv checks its results bit for
 * bit against the warp kernels on every case. */
#ifndef ADIA_DIAG_STAGE_CUH
#define ADIA_DIAG_STAGE_CUH

#include "diag_kernel.cuh"

#include <stdint.h>

#define ADIA_STAGE_TILE 128
#define ADIA_STAGE_S 8       /* diagonals a stage */
#define ADIA_STAGE_DEPTH 2   /* stages in flight a block */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ADIA_STAGE_BULK 1
#else
#define ADIA_STAGE_BULK 0
#endif

#if ADIA_STAGE_BULK
__device__ __forceinline__ unsigned adia_smem(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* The tile's values are read once: evict them first from L2, keep x. */
__device__ __forceinline__ uint64_t adia_evict_first_policy()
{
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}

/* bytes from global src to shared dst, counted on mbarrier bar. */
__device__ __forceinline__ void adia_bulk_copy(void *dst, const void *src, unsigned bytes,
                                               unsigned long long *bar, uint64_t pol)
{
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1], %2, [%3], %4;" ::"r"(adia_smem(dst)),
        "l"(src), "r"(bytes), "r"(adia_smem(bar)), "l"(pol)
        : "memory");
}

__device__ __forceinline__ void adia_mbar_wait(unsigned long long *bar, unsigned parity)
{
    asm volatile(
        "{\n .reg .pred p;\n"
        "WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        " @!p bra WAIT;\n}" ::"r"(adia_smem(bar)),
        "r"(parity)
        : "memory");
}

/* The producer warp: n diagonals (n <= S <= 32) into buf, from src (the
 * tile's first row on diagonal s*S; len: the piece's rows, the stride
 * between its diagonals). */
template <typename T>
__device__ __forceinline__ void adia_stage_issue(T *buf, const T *src, long long len, int n,
                                                 unsigned long long *bar, uint64_t pol)
{
    const unsigned lane = threadIdx.x & 31, bytes = ADIA_STAGE_TILE * sizeof(T);
    if (lane == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(adia_smem(bar)),
                     "r"(bytes * n)
                     : "memory");
    __syncwarp();
    if (len == ADIA_STAGE_TILE) {   /* the piece is the tile: the stage is consecutive */
        if (lane == 0) adia_bulk_copy(buf, src, bytes * n, bar, pol);
    } else if ((int)lane < n) {
        adia_bulk_copy(buf + lane * ADIA_STAGE_TILE, src + lane * len, bytes, bar, pol);
    }
}
#endif

/* Dynamic shared memory of a launch: DEPTH buffers of S diagonals. */
template <typename T, int S, int DEPTH>
constexpr unsigned adia_stage_bytes()
{
    return (unsigned)(DEPTH * S * ADIA_STAGE_TILE * sizeof(T));
}

/* A tile: its rows' values on the group's diagonals. */
template <typename T>
struct adia_stage_tile {
    const T *src;    /* the tile's first row on the group's first diagonal */
    long long len;   /* the piece's rows: the stride between its diagonals */
    unsigned r;      /* the tile's first row                               */
    int k0, K;       /* the group's offsets: offsets[k0 .. k0+K)           */
    int rows;        /* rows of the tile (ADIA_STAGE_TILE but the last)    */
    int stages;      /* bulk stages of S diagonals; 0: the loads instead   */
};

template <typename T, int S>
__device__ __forceinline__ adia_stage_tile<T> adia_stage_locate(const adia_diag_args &a,
                                                                long long tile)
{
    const long long first = tile * ADIA_STAGE_TILE;
    const adia_piece_info p = adia_piece_read(a, __ldg(a.chunk_piece + first / ADIA_DIAG_CHUNK));
    adia_stage_tile<T> t;
    t.len = p.len;
    t.src = (const T *)a.data + p.data + (first - p.start);
    t.r = (unsigned)first;
    t.k0 = p.k0;
    t.K = p.K;
    t.rows = (int)min((long long)ADIA_STAGE_TILE, p.start + t.len - first);
    const bool bulk = ADIA_STAGE_BULK && t.rows == ADIA_STAGE_TILE &&
                      (t.len * (long long)sizeof(T)) % 16 == 0 && (uintptr_t)t.src % 16 == 0;
    t.stages = bulk ? (t.K + S - 1) / S : 0;
    return t;
}

#if ADIA_STAGE_BULK
__device__ __forceinline__ void adia_mbar_arrive(unsigned long long *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(adia_smem(bar)) : "memory");
}
#endif

/* Threads of a block: ADIA_STAGE_TILE consumers (a row each) and one
 * producer warp that only issues the copies. */
#define ADIA_STAGE_THREADS (ADIA_STAGE_TILE + 32)

/* The staged product (DOT: with the fused sums of adia_dot_work). */
template <typename T, int S, int DEPTH, bool DOT>
__global__ void __launch_bounds__(ADIA_STAGE_THREADS, 8)   /* 48 registers: no spill with the sums */
adia_diag_stage(adia_diag_args a, T alpha, T beta, const T *__restrict__ x, T *__restrict__ y,
                adia_dot_work dw)
{
    extern __shared__ __align__(128) unsigned char adia_stage_smem[];
    double dots[ADIA_NDOT] = {0, 0, 0, 0, 0};
    const int i = threadIdx.x;
    const long long tiles = (a.rows + ADIA_STAGE_TILE - 1) / ADIA_STAGE_TILE;
#if ADIA_STAGE_BULK
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    T *stage = (T *)adia_stage_smem;
    if (i == 0) {
        for (int b = 0; b < DEPTH; b++) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(adia_smem(&full[b])) : "memory");
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(adia_smem(&empty[b])),
                         "r"(ADIA_STAGE_TILE / 32)
                         : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (i >= ADIA_STAGE_TILE) {   /* the producer warp */
        const uint64_t pol = adia_evict_first_policy();
        unsigned q = 0;
        for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            const adia_stage_tile<T> t = adia_stage_locate<T, S>(a, tile);
            for (int s = 0; s < t.stages; s++, q++) {
                const unsigned b = q % DEPTH;
                if (q >= DEPTH) adia_mbar_wait(&empty[b], (q / DEPTH - 1) & 1u);
                adia_stage_issue(stage + b * S * ADIA_STAGE_TILE, t.src + (long long)s * S * t.len,
                                 t.len, min(S, t.K - s * S), &full[b], pol);
            }
        }
    } else {
        unsigned q = 0;   /* stages consumed: buffer q % DEPTH, phase (q / DEPTH) & 1 */
#else
    if (i < ADIA_STAGE_TILE) {
#endif
        for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            const adia_stage_tile<T> t = adia_stage_locate<T, S>(a, tile);
            const unsigned r = t.r + (unsigned)i;
            T sum = T(0);
#if ADIA_STAGE_BULK
            for (int s = 0; s < t.stages; s++, q++) {
                const int b = (int)(q % DEPTH), kk = s * S, n = min(S, t.K - kk);
                const T *sv = stage + b * S * ADIA_STAGE_TILE + i;
                adia_mbar_wait(&full[b], (q / DEPTH) & 1u);
#pragma unroll 4
                for (int j = 0; j < n; j++) {
                    const unsigned c = r + (unsigned)__ldg(a.offsets + t.k0 + kk + j);
                    const bool in = c < (unsigned)a.cols;
                    const T v = sv[j * ADIA_STAGE_TILE];
                    const T xv = in ? __ldg(x + c) : T(0);
                    sum += in && v != T(0) ? v * xv : T(0);
                }
                __syncwarp();
                if ((i & 31) == 0) adia_mbar_arrive(&empty[b]);   /* this warp is done with b */
            }
#endif
            if (t.stages == 0 && i < t.rows) {
#pragma unroll 4
                for (int k = 0; k < t.K; k++) {
                    const unsigned c = r + (unsigned)__ldg(a.offsets + t.k0 + k);
                    sum += adia_diag_term(t.src + i, (long long)k * t.len, x, c, (unsigned)a.cols);
                }
            }
            if (i < t.rows) {
                const T yv = adia_diag_store(y, (int)r, alpha, beta, sum);
                if (DOT) adia_dot_row<T>(dots, dw, x, (int)r, yv);
            }
        }
    }
    if (DOT) adia_dot_finish(dots, dw);
}

#endif /* ADIA_DIAG_STAGE_CUH */
