/* dist_cg.h -- the vector kernels of the device-resident distributed CG
 * (dist_cg.c), in dist_cg_kernels.cu: plain C interface, no MPI, so nvcc
 * never sees mpi.h.  Each launches on stream (a cudaStream_t) and returns
 * the launch's cudaError_t.  n: this process's rows. */
#ifndef ADIA_DIST_CG_H
#define ADIA_DIST_CG_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Doubles of the partial sums adia__dist_cg_dots needs for n rows. */
int64_t adia__dist_cg_partials(int64_t n);

/* r = b - r (r holds A x on entry); u = inv_diag .* r (Jacobi; NULL: u is r). */
cudaError_t adia__dist_cg_residual(int64_t n, const double *b, double *r, const double *inv_diag,
                                   double *u, cudaStream_t stream);

/* One Chronopoulos-Gear update: p = u + beta p, s = w + beta s,
 * x += alpha p, r -= alpha s, u = inv_diag .* r (NULL: u is r). */
cudaError_t adia__dist_cg_update(int64_t n, double alpha, double beta, const double *inv_diag,
                                 const double *w, double *p, double *s, double *x, double *r,
                                 double *u, cudaStream_t stream);

/* out[0..3) = u'w, r'u, r'r of the rows here, summed in a fixed order (the
 * same numbers on every run); partial: adia__dist_cg_partials(n) doubles. */
cudaError_t adia__dist_cg_dots(int64_t n, const double *u, const double *w, const double *r,
                               double *partial, double *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
