/* dist_kernels.cu -- max |v| of a device block filled on the device
 * (dist_fill.c: the operator's scale), an integer atomicMax of bit
 * patterns; exact and order-free.  And the stamp of the device trace. */
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

/* Non-negative doubles order as their bit patterns (NaN above Inf), so an
 * integer atomicMax of the patterns is the maximum. */
static __global__ void max_abs_kernel(int64_t n, const double *v, unsigned long long *out)
{
    unsigned long long m = 0;
    FOR_ROWS(i, n) {
        const unsigned long long b = (unsigned long long)__double_as_longlong(fabs(v[i]));
        m = b > m ? b : m;
    }
    for (int d = 16; d; d >>= 1) {
        const unsigned long long o = __shfl_down_sync(0xffffffffu, m, d);
        m = o > m ? o : m;
    }
    if ((threadIdx.x & 31) == 0) atomicMax(out, m);
}

extern "C" cudaError_t adia__dist_max_abs(int64_t n, const double *v, double *out,
                                          cudaStream_t stream)
{
    unsigned long long *d = nullptr, bits = 0;
    cudaError_t e = cudaMalloc(&d, sizeof *d);
    if (e == cudaSuccess) e = cudaMemsetAsync(d, 0, sizeof *d, stream);
    if (e == cudaSuccess && n > 0) {
        max_abs_kernel<<<blocks_for(n), KR_BLOCK, 0, stream>>>(n, v, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(&bits, d, sizeof bits, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    cudaFree(d);
    memcpy(out, &bits, sizeof *out);
    return e;
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

/* ------------------------------------------------ peer reductions */
/* A mailbox: flags[2][size] (the epoch each process last wrote), then
 * slots[2][size][DIST_PEER_VALUES].  Epoch e writes parity e & 1: a
 * process can be at most one reduction ahead of another (each waits for
 * all), so the parity it writes is never the one a slower process still
 * reads. */
static __device__ unsigned long long *peer_flag(void *box, int size, int par, int q)
{
    return (unsigned long long *)box + (size_t)par * size + q;
}

static __device__ double *peer_slot(void *box, int size, int par, int q)
{
    double *slots = (double *)((unsigned long long *)box + 2 * (size_t)size);
    return slots + ((size_t)par * size + q) * DIST_PEER_VALUES;
}

extern "C" size_t adia__dist_peer_box_bytes(int size)
{
    return 2 * (size_t)size * (sizeof(unsigned long long) + DIST_PEER_VALUES * sizeof(double));
}

static __device__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __device__ double peer_max(double a, double b)
{
    return (a != a || b != b) ? __longlong_as_double(-1ll) : fmax(a, b);   /* NaN wins */
}

static __global__ void peer_reduce_kernel(dist_peer_args a, double *v, int count, int max)
{
    __shared__ unsigned long long e;
    __shared__ int answered;
    const int t = threadIdx.x;
    if (t == 0) {
        e = *a.epoch + 1;
        *a.epoch = e;
        answered = 1;
    }
    __syncthreads();
    const int par = (int)(e & 1);
    for (int q = 0; q < a.size; q++) {
        volatile double *to = peer_slot(a.box[q], a.size, par, a.rank);
        for (int k = t; k < count; k += blockDim.x) to[k] = v[k];
    }
    __threadfence_system();   /* the values before the flags, on every GPU */
    __syncthreads();
    if (t < a.size) *(volatile unsigned long long *)peer_flag(a.box[t], a.size, par, a.rank) = e;
    if (t < a.size) {
        volatile unsigned long long *f = peer_flag(a.box[a.rank], a.size, par, t);
        const unsigned long long t0 = global_ns();
        while (*f < e)
            if (global_ns() - t0 > a.timeout_ns) {
                answered = 0;
                atomicExch(a.failed, 1);
                break;
            }
    }
    __threadfence_system();
    __syncthreads();
    for (int k = t; k < count; k += blockDim.x) {
        double acc = __longlong_as_double(-1ll);
        if (answered) {
            acc = ((volatile double *)peer_slot(a.box[a.rank], a.size, par, 0))[k];
            for (int q = 1; q < a.size; q++) {
                const double x = ((volatile double *)peer_slot(a.box[a.rank], a.size, par, q))[k];
                acc = max ? peer_max(acc, x) : acc + x;
            }
        }
        v[k] = acc;
    }
}

extern "C" cudaError_t adia__dist_peer_reduce(const dist_peer_args *a, double *v, int count,
                                              int max, cudaStream_t stream)
{
    peer_reduce_kernel<<<1, 64, 0, stream>>>(*a, v, count, max);
    return cudaGetLastError();
}
