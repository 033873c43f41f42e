/* dist_fill.cu -- max |a| of a block filled on the device (dist_fill.c):
 * the scale of the solvers' power-of-two scaling, read in one pass. */
#include "dist_fill.h"

#include <string.h>

namespace {

/* Non-negative doubles order as their bit patterns (NaN above Inf), so an
 * integer atomicMax of the patterns is the maximum. */
__global__ void max_abs(const double *v, int64_t n, unsigned long long *out)
{
    unsigned long long m = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long b = (unsigned long long)__double_as_longlong(fabs(v[i]));
        m = b > m ? b : m;
    }
    for (int d = 16; d; d >>= 1) {
        const unsigned long long o = __shfl_down_sync(0xffffffffu, m, d);
        m = o > m ? o : m;
    }
    if ((threadIdx.x & 31) == 0) atomicMax(out, m);
}

} // namespace

extern "C" cudaError_t adia__dist_max_abs(const double *v, int64_t n, double *out,
                                          cudaStream_t stream)
{
    unsigned long long *d = nullptr, bits = 0;
    cudaError_t e = cudaMalloc(&d, sizeof *d);
    if (e == cudaSuccess) e = cudaMemsetAsync(d, 0, sizeof *d, stream);
    if (e == cudaSuccess && n > 0) {
        const int64_t blocks = (n + 255) / 256;
        max_abs<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(v, n, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(&bits, d, sizeof bits, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    cudaFree(d);
    memcpy(out, &bits, sizeof *out);
    return e;
}
