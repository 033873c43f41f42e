/* dist_kernels.cu -- max |v| of a device block filled on the device
 * (dist_fill.c: the operator's scale) and a hash of a local x (the peer
 * halo's trial), exact and order-free.  The stamp of the device trace, the
 * ends' sums added, the owned rows the ends read copied, and the peer
 * halo's kernels (flags in device memory mapped by CUDA IPC, each wait
 * bounded by a timeout instead of a hang). */
#include "dist_kernels.h"

#include <string.h>

#define KR_BLOCK 256
#define KR_MAX_BLOCKS 1024

static int blocks_for(int64_t n)
{
    int64_t b = (n + KR_BLOCK - 1) / KR_BLOCK;
    return b < 1 ? 1 : b > KR_MAX_BLOCKS ? KR_MAX_BLOCKS : (int)b;
}

#define FOR_ROWS(i, n)                                                                   \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);           \
         i += (int64_t)gridDim.x * blockDim.x)

/* Two folds of a device vector into one 64-bit word, each exact and
 * order-free.  max |v|: non-negative doubles order as their bit patterns
 * (NaN above Inf), so an integer atomicMax of the patterns is the maximum.
 * hash: a wrapping sum over i of a mix of (i, the bits of v[i]), the same
 * whatever the order of the additions -- two vectors that differ anywhere
 * differ in it but by a 2^-64 chance. */
enum { FOLD_MAX_ABS, FOLD_HASH };

static __device__ unsigned long long mix(unsigned long long z)   /* splitmix64's finaliser */
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static __global__ void fold_kernel(int64_t n, const double *v, int op, unsigned long long *out)
{
    unsigned long long m = 0;
    FOR_ROWS(i, n) {
        if (op == FOLD_HASH) {
            m += mix((unsigned long long)__double_as_longlong(v[i]) ^ mix((unsigned long long)i));
        } else {
            const unsigned long long b = (unsigned long long)__double_as_longlong(fabs(v[i]));
            m = b > m ? b : m;
        }
    }
    for (int d = 16; d; d >>= 1) {
        const unsigned long long o = __shfl_down_sync(0xffffffffu, m, d);
        m = op == FOLD_HASH ? m + o : o > m ? o : m;
    }
    if ((threadIdx.x & 31) != 0) return;
    if (op == FOLD_HASH)
        atomicAdd(out, m);
    else
        atomicMax(out, m);
}

/* *out (host) = the fold of v[0..n) on stream, which it synchronises */
static cudaError_t fold(int64_t n, const double *v, int op, unsigned long long *out,
                        cudaStream_t stream)
{
    unsigned long long *d = nullptr;
    *out = 0;
    cudaError_t e = cudaMalloc(&d, sizeof *d);
    if (e == cudaSuccess) e = cudaMemsetAsync(d, 0, sizeof *d, stream);
    if (e == cudaSuccess && n > 0) {
        fold_kernel<<<blocks_for(n), KR_BLOCK, 0, stream>>>(n, v, op, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(out, d, sizeof *out, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    cudaFree(d);
    return e;
}

extern "C" cudaError_t adia__dist_max_abs(int64_t n, const double *v, double *out,
                                          cudaStream_t stream)
{
    unsigned long long bits = 0;
    const cudaError_t e = fold(n, v, FOLD_MAX_ABS, &bits, stream);
    memcpy(out, &bits, sizeof *out);
    return e;
}

extern "C" cudaError_t adia__dist_hash(int64_t n, const double *v, unsigned long long *out,
                                       cudaStream_t stream)
{
    return fold(n, v, FOLD_HASH, out, stream);
}

static __global__ void stamp_kernel(unsigned long long *slots, unsigned *count, unsigned cap,
                                    unsigned tag)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    const unsigned i = atomicAdd(count, 1u);
    if (i < cap) {
        slots[2 * (size_t)i] = tag;
        slots[2 * (size_t)i + 1] = t;
    }
}

extern "C" cudaError_t adia__dist_stamp(unsigned long long *slots, unsigned *count, unsigned cap,
                                        unsigned tag, cudaStream_t stream)
{
    stamp_kernel<<<1, 1, 0, stream>>>(slots, count, cap, tag);
    return cudaGetLastError();
}

static __global__ void add_sums_kernel(double *out, double *add, int n)
{
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        out[k] += add[k];
        add[k] = 0;
    }
}

extern "C" cudaError_t adia__dist_add_sums(double *out, double *add, int n, cudaStream_t stream)
{
    add_sums_kernel<<<1, 32, 0, stream>>>(out, add, n);
    return cudaGetLastError();
}

/* blockIdx.y: the segment; the x blocks stride over its rows */
static __global__ void copy_segments_kernel(double *dst, const double *src, dist_segments segs)
{
    const int k = blockIdx.y;
    const int64_t at = segs.at[k];
    FOR_ROWS(i, (int64_t)segs.len[k]) dst[at + i] = src[at + i];
}

extern "C" cudaError_t adia__dist_copy_segments(double *dst, const double *src,
                                                dist_segments segs, cudaStream_t stream)
{
    int32_t most = 0;
    for (int k = 0; k < segs.count; k++) most = segs.len[k] > most ? segs.len[k] : most;
    if (most == 0) return cudaSuccess;
    copy_segments_kernel<<<dim3(blocks_for(most), segs.count), KR_BLOCK, 0, stream>>>(dst, src,
                                                                                      segs);
    return cudaGetLastError();
}

/* ------------------------------------------------------ the peer halo */

static __device__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Wait until *flag >= e; false after the timeout (the failure flag set),
 * and at once once it is set: a failed exchange costs one timeout, not
 * one per product until the solver stops. */
static __device__ bool wait_for(const unsigned long long *flag, unsigned long long e,
                                const dist_peer_args &a)
{
    const unsigned long long t0 = global_ns();
    const volatile unsigned long long *failed = a.box + PEER_FAILED;
    while (*(volatile const unsigned long long *)flag < e)
        if (*failed || global_ns() - t0 > a.timeout_ns) {
            atomicExch(a.box + PEER_FAILED, 1ull);
            return false;
        }
    return true;
}

/* blockIdx.y: the segment */
static __global__ void peer_push_kernel(dist_peer_args a, const double *x_owned)
{
    __shared__ unsigned long long e;
    if (threadIdx.x == 0) {
        e = *(volatile unsigned long long *)(a.box + PEER_EPOCH) + 1;
        /* every receiver is done with the halo this overwrites */
        for (int k = 0; k < a.nto; k++) wait_for(a.box + PEER_CONSUMED + a.to_rank[k], e - 1, a);
    }
    __syncthreads();
    const int s = blockIdx.y;
    const double *src = x_owned + a.src_at[s];
    double *dst = a.dst[s];
    FOR_ROWS(i, (int64_t)a.len[s]) dst[i] = src[i];
    __threadfence_system();   /* this block's values before the flags */
    __syncthreads();
    if (threadIdx.x != 0) return;
    const unsigned long long blocks = (unsigned long long)gridDim.x * gridDim.y;
    if (atomicAdd(a.box + PEER_COUNT, 1ull) != blocks - 1) return;
    a.box[PEER_COUNT] = 0;   /* every other block has counted */
    __threadfence_system();
    if (a.mute) return;
    for (int k = 0; k < a.nto; k++)
        *(volatile unsigned long long *)(a.to_box[k] + PEER_ARRIVED + a.rank) = e;
}

static __global__ void peer_wait_kernel(dist_peer_args a)
{
    if (threadIdx.x != 0) return;
    const unsigned long long e = *(volatile unsigned long long *)(a.box + PEER_EPOCH) + 1;
    bool all = true;
    for (int k = 0; k < a.nfrom; k++) all &= wait_for(a.box + PEER_ARRIVED + a.from_rank[k], e, a);
    __threadfence();   /* the flags seen before the halo is read */
    if (!all)   /* NaN through the products: the solver stops at its next reduction */
        for (int k = 0; k < a.nrecv; k++) *a.recv_first[k] = __longlong_as_double(-1ll);
    a.box[PEER_EPOCH] = e;
}

static __global__ void peer_consumed_kernel(dist_peer_args a)
{
    if (threadIdx.x != 0) return;
    const unsigned long long e = *(volatile unsigned long long *)(a.box + PEER_EPOCH);
    __threadfence_system();
    for (int k = 0; k < a.nfrom; k++)
        *(volatile unsigned long long *)(a.from_box[k] + PEER_CONSUMED + a.rank) = e;
}

extern "C" cudaError_t adia__dist_peer_push(const dist_peer_args *a, const double *x_owned,
                                            cudaStream_t stream)
{
    int32_t most = 1;
    for (int k = 0; k < a->nseg; k++) most = a->len[k] > most ? a->len[k] : most;
    const unsigned segs = a->nseg > 0 ? (unsigned)a->nseg : 1;
    dist_peer_args b = *a;
    if (a->nseg == 0) {   /* nothing to send: still the handshake */
        b.nseg = 1;
        b.len[0] = 0;
        b.src_at[0] = 0;
        b.dst[0] = nullptr;
    }
    peer_push_kernel<<<dim3(blocks_for(most), segs), KR_BLOCK, 0, stream>>>(b, x_owned);
    return cudaGetLastError();
}

extern "C" cudaError_t adia__dist_peer_wait(const dist_peer_args *a, cudaStream_t stream)
{
    peer_wait_kernel<<<1, 32, 0, stream>>>(*a);
    return cudaGetLastError();
}

extern "C" cudaError_t adia__dist_peer_consumed(const dist_peer_args *a, cudaStream_t stream)
{
    peer_consumed_kernel<<<1, 32, 0, stream>>>(*a);
    return cudaGetLastError();
}

/* ------------------------------------------------- the peer reduction */

static __device__ unsigned long long *sum_slot(unsigned long long *box, unsigned long long e,
                                               int rank)
{
    return box + PEER_SUM_SLOTS + ((e & 1) * DIST_PEER_RANKS + rank) * PEER_SUM_SLOT_WORDS;
}

/* One block of at least DIST_PEER_RANKS threads.  A failure -- a slot's
 * epoch not come within the timeout, or past this reduction's (a process
 * that failed runs on without waiting) -- is told to every process (their
 * failure flags), so that each makes this reduction's or its next one's
 * result NaN, and all stop together. */
static __global__ void peer_reduce_kernel(dist_peer_args a, double *v, int count, int max)
{
    __shared__ unsigned long long e;
    __shared__ int failed;
    const int t = threadIdx.x;
    if (t == 0) {
        e = *(volatile unsigned long long *)(a.box + PEER_SUM_EPOCH) + 1;
        failed = a.mute;   /* a process never heard from: it fails with the others */
    }
    __syncthreads();
    for (int i = t; i < a.size * count; i += blockDim.x) {   /* (rank, value) pairs */
        volatile unsigned long long *slot = sum_slot(a.all_box[i / count], e, a.rank);
        slot[1 + i % count] = (unsigned long long)__double_as_longlong(v[i % count]);
    }
    __threadfence_system();   /* the values before the epochs */
    __syncthreads();
    if (t < a.size && !a.mute)
        *(volatile unsigned long long *)sum_slot(a.all_box[t], e, a.rank) = e;
    if (t < a.size) {
        const unsigned long long *epoch = sum_slot(a.box, e, t);
        if (!wait_for(epoch, e, a) || *(volatile const unsigned long long *)epoch != e)
            failed = 1;
    }
    __syncthreads();
    if (failed && t < a.size) *(volatile unsigned long long *)(a.all_box[t] + PEER_FAILED) = 1;
    if (t == 0 && *(volatile unsigned long long *)(a.box + PEER_FAILED)) failed = 1;
    __threadfence();   /* the epochs seen before the values are read */
    __syncthreads();
    for (int k = t; k < count; k += blockDim.x) {
        double acc = 0;
        for (int q = 0; q < a.size; q++) {
            const double x = __longlong_as_double(
                (long long)((volatile unsigned long long *)sum_slot(a.box, e, q))[1 + k]);
            acc = q == 0 ? x : !max ? acc + x : isnan(x) || x > acc ? x : acc;
        }
        v[k] = failed ? __longlong_as_double(-1ll) : acc;
    }
    if (t == 0) a.box[PEER_SUM_EPOCH] = e;
}

extern "C" cudaError_t adia__dist_peer_reduce(const dist_peer_args *a, double *v, int count,
                                              int max, cudaStream_t stream)
{
    if (count < 1 || count > DIST_PEER_SUMS) return cudaErrorInvalidValue;
    peer_reduce_kernel<<<1, count > 32 ? 256 : 32, 0, stream>>>(*a, v, count, max);
    return cudaGetLastError();
}
