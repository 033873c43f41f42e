/* dist_kernels.cu -- max |v| of a device block filled on the device
 * (dist_fill.c: the operator's scale), an integer atomicMax of bit
 * patterns; exact and order-free.  The stamp of the device trace, the
 * ends' sums added, the owned rows the ends read copied. */
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
