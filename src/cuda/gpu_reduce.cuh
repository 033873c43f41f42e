/* gpu_reduce.cuh -- deterministic reductions over a grid of NT-thread
 * blocks (the GPU solvers' scalars, src/solve): a fixed grid, block
 * partials summed in block order by the block that finishes last, no
 * floating-point atomics, so a sum is the same on every run.  Sums and
 * maxima are in double for both value types.
 *
 * The last-block test is adia_dot_last, the one the fused SpMV sums use
 * (diag_kernel.cuh).  Their reduction itself stays there: that file is
 * also NVRTC text and may include nothing, its blocks are of any size and
 * its partials are summed in two levels (groups of ADIA_DOT_GROUP), so
 * this one in its place would change the order of its additions; even a
 * shared warp sum changes its PTX (each addition's operands swapped). */
#ifndef ADIA_GPU_REDUCE_CUH
#define ADIA_GPU_REDUCE_CUH

#include "diag_kernel.cuh"

namespace adia__reduce {

constexpr int NT = 256;   /* threads per block of every kernel using these */

static __device__ inline double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* NaN-propagating max (fmax would drop a NaN, and a NaN must be seen). */
static __device__ inline double nan_max(double a, double b)
{
    return (a != a || b != b) ? NAN : fmax(a, b);
}

static __device__ inline double warp_max(double v)
{
    for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

/* Sum over one block; the total is valid in thread 0. */
static __device__ double block_sum(double v)
{
    __shared__ double sh[NT / 32];
    v = warp_sum(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x != 0) return 0;
    double s = sh[0];
    for (int w = 1; w < NT / 32; w++) s += sh[w];
    return s;
}

/* Sums (or maxima) of NV per-thread values over the whole grid.  Returns
 * true in one thread only -- thread 0 of the block that finished last --
 * with v holding the grid totals; partial holds gridDim.x * NV doubles. */
template <int NV, bool MAX = false>
__device__ bool grid_reduce(double (&v)[NV], double *partial, unsigned *count)
{
    __shared__ double sh[NT / 32][NV];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int j = 0; j < NV; j++) v[j] = MAX ? warp_max(v[j]) : warp_sum(v[j]);
    if (lane == 0)
        for (int j = 0; j < NV; j++) sh[warp][j] = v[j];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 0; j < NV; j++) {
            double s = sh[0][j];
            for (int w = 1; w < NT / 32; w++) s = MAX ? nan_max(s, sh[w][j]) : s + sh[w][j];
            partial[blockIdx.x * NV + j] = s;
        }
    if (!adia_dot_last(count, gridDim.x)) return false;
    double t[NV];
    for (int j = 0; j < NV; j++) t[j] = 0;   /* maxima are of |v| >= 0 */
    for (unsigned b = threadIdx.x; b < gridDim.x; b += NT)
        for (int j = 0; j < NV; j++) {
            double p = __ldcg(&partial[b * NV + j]);
            t[j] = MAX ? nan_max(t[j], p) : t[j] + p;
        }
    for (int j = 0; j < NV; j++) t[j] = MAX ? warp_max(t[j]) : warp_sum(t[j]);
    __syncthreads();
    if (lane == 0)
        for (int j = 0; j < NV; j++) sh[warp][j] = t[j];
    __syncthreads();
    if (threadIdx.x != 0) return false;
    for (int j = 0; j < NV; j++) {
        double s = sh[0][j];
        for (int w = 1; w < NT / 32; w++) s = MAX ? nan_max(s, sh[w][j]) : s + sh[w][j];
        v[j] = s;
    }
    return true;
}

/* True in thread 0 of the block that finished last (every thread calls
 * it): that thread may write what every block has read. */
static __device__ bool grid_last(unsigned *count)
{
    __syncthreads();   /* every thread's writes before thread 0 counts */
    return adia_dot_last(count, gridDim.x) && threadIdx.x == 0;
}

} // namespace adia__reduce

#endif /* ADIA_GPU_REDUCE_CUH */
