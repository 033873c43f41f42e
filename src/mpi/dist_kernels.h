/* dist_kernels.h -- adia_mpi's own device kernel (dist_kernels.cu): plain
 * C interface, no MPI, so nvcc never sees mpi.h. */
#ifndef ADIA_DIST_KERNELS_H
#define ADIA_DIST_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *out (host) = max |v_i| of v[0..n) (device; NaN if one is NaN), on
 * stream (a cudaStream_t); synchronises it. */
cudaError_t adia__dist_max_abs(int64_t n, const double *v, double *out, cudaStream_t stream);

/* One stamp of the device trace (dist_trace.c): tag and the GPU's global
 * timer (ns) into the next free pair of slots[0..2 cap), counted in
 * *count, by a one-thread kernel on stream (so a graph captures it). */
cudaError_t adia__dist_stamp(unsigned long long *slots, unsigned *count, unsigned cap,
                             unsigned tag, cudaStream_t stream);

/* out[k] += add[k], then add[k] = 0, k < n (device, n small), by a
 * one-warp kernel on stream. */
cudaError_t adia__dist_add_sums(double *out, double *add, int n, cudaStream_t stream);

/* The owned rows the ends read, into the local x: dst[at[k] + i] =
 * src[at[k] + i] for i < len[k], k < count (at most DIST_SEGMENTS), in
 * one launch on stream (two copy nodes cost 2-4 us more on 4 H200). */
#define DIST_SEGMENTS 4
typedef struct dist_segments {
    int32_t at[DIST_SEGMENTS], len[DIST_SEGMENTS];
    int count;
} dist_segments;
cudaError_t adia__dist_copy_segments(double *dst, const double *src, dist_segments segs,
                                     cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
