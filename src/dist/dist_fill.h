/* dist_fill.h -- the kernel of dist_fill.c (dist_fill.cu): plain C, no
 * MPI, so nvcc never sees mpi.h. */
#ifndef ADIA_DIST_FILL_H
#define ADIA_DIST_FILL_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *out (host) = max |v[i]| over the n device values (NaN if one is NaN);
 * synchronises stream. */
cudaError_t adia__dist_max_abs(const double *v, int64_t n, double *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
