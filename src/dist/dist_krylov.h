/* dist_krylov.h -- the vector kernels of the device-resident distributed
 * solvers (dist_dsolve*.c), in dist_krylov_kernels.cu: plain C interface,
 * no MPI, so nvcc never sees mpi.h.  Each launches on stream (a
 * cudaStream_t) and returns the launch's cudaError_t.  n: this process's
 * rows; inv_diag: the Jacobi diagonal, NULL without Jacobi. */
#ifndef ADIA_DIST_KRYLOV_H
#define ADIA_DIST_KRYLOV_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Pairs one adia__dist_dots call takes. */
#define ADIA_DIST_DOTS_MAX 8

/* Doubles of the partial sums of count dot products of n rows. */
int64_t adia__dist_dots_partials(int64_t n, int count);

/* out[k] = a[k]'b[k] of the rows here, k < count <= ADIA_DIST_DOTS_MAX,
 * in one pass, each summed in a fixed order (the same numbers on every
 * run); partial: adia__dist_dots_partials(n, count) doubles. */
cudaError_t adia__dist_dots(int64_t n, int count, const double *const *a, const double *const *b,
                            double *partial, double *out, cudaStream_t stream);

/* out[0] = sum_i (v_i scale)^2 of the rows here, fixed order as above;
 * partial: adia__dist_dots_partials(n, 1).  With scale a power of two
 * near max |v| (adia__dist_max_abs), no square overflows or underflows. */
cudaError_t adia__dist_sumsq(int64_t n, const double *v, double scale, double *partial,
                             double *out, cudaStream_t stream);

/* *out (host) = max |v_i| of the rows here (NaN if one is NaN); synchronises stream. */
cudaError_t adia__dist_max_abs(int64_t n, const double *v, double *out, cudaStream_t stream);

/* out[l] = V_l'w for l < k (V_l = V + l n), then out[k] = w'w if self;
 * fixed order as above; partial: adia__dist_dots_partials(n, k + self). */
cudaError_t adia__dist_basis_dots(int64_t n, int k, const double *V, const double *w, int self,
                                  double *partial, double *out, cudaStream_t stream);

/* y = (y + sign inv_diag .* sum_l c[l] V_l) / div, l < k (V_l = V + l n,
 * c on the device; k = 0: y = y / div). */
cudaError_t adia__dist_basis_combine(int64_t n, int k, const double *V, const double *c,
                                     double sign, const double *inv_diag, double div, double *y,
                                     cudaStream_t stream);

/* r = b - r (r holds A x on entry); u = inv_diag .* r (NULL: u is r). */
cudaError_t adia__dist_residual(int64_t n, const double *b, double *r, const double *inv_diag,
                                double *u, cudaStream_t stream);

/* y = inv_diag .* x */
cudaError_t adia__dist_diag_mul(int64_t n, const double *inv_diag, const double *x, double *y,
                                cudaStream_t stream);

/* y += alpha x */
cudaError_t adia__dist_axpy(int64_t n, double alpha, const double *x, double *y,
                            cudaStream_t stream);

/* One Chronopoulos-Gear update: p = u + beta p, s = w + beta s,
 * x += alpha p, r -= alpha s, u = inv_diag .* r (NULL: u is r). */
cudaError_t adia__dist_cg_update(int64_t n, double alpha, double beta, const double *inv_diag,
                                 const double *w, double *p, double *s, double *x, double *r,
                                 double *u, cudaStream_t stream);

/* BiCGSTAB's three updates (ph is p and sh is s without Jacobi):
 * p = r + beta (p - omega v), ph = inv_diag .* p;
 * s = r - alpha v written over r, sh = inv_diag .* s;
 * x += alpha ph, x += omega sh, r = s - omega t (s in r). */
cudaError_t adia__dist_bicgstab_p(int64_t n, double beta, double omega, const double *r,
                                  const double *v, double *p, const double *inv_diag, double *ph,
                                  cudaStream_t stream);
cudaError_t adia__dist_bicgstab_s(int64_t n, double alpha, const double *v, double *r,
                                  const double *inv_diag, double *sh, cudaStream_t stream);
cudaError_t adia__dist_bicgstab_x(int64_t n, double alpha, double omega, const double *ph,
                                  const double *sh, const double *t, double *x, double *r,
                                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
