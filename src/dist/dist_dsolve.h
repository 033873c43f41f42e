/* dist_dsolve.h -- adia_dist_solve on a device matrix, every vector on the
 * device: one core (dist_dsolve.c: set-up, scaling, products, reductions,
 * failures, timing, the true residual, restarts, info) and one iteration
 * function per method (dist_dsolve_cg.c, dist_dsolve_bicgstab.c,
 * dist_dsolve_gmres.c) built on the core's steps below.  CUDA builds only. */
#ifndef ADIA_DIST_DSOLVE_H
#define ADIA_DIST_DSOLVE_H

#include "dist_device.h"
#include "dist_krylov.h"

typedef struct dsolve dsolve;

/* What a method needs beside the core's b, x, Jacobi diagonal and r. */
typedef struct dsolve_need {
    int vectors;   /* device vectors of n rows, right after r */
    int sums;      /* values of its largest reduction or upload */
    size_t host;   /* host doubles (GMRES: Hessenberg matrix, rotations) */
} dsolve_need;

/* A method: its needs (restart: GMRES's m), and its iteration from the
 * current x.  The iteration sets info->stop when it ends early
 * (converged, breakdown, non-finite), else the core's "iteration limit
 * reached" stays; it takes every decision on reduced values, so all
 * processes iterate in step. */
typedef struct dsolve_method {
    dsolve_need (*need)(int jacobi, int restart);
    void (*iterate)(dsolve *c);
} dsolve_method;

extern const dsolve_method adia__dsolve_cg, adia__dsolve_bicgstab, adia__dsolve_gmres;

struct dsolve {
    /* for the methods */
    int64_t n;                   /* rows held here */
    int max_iter, restart;
    double tol;                  /* stop at ||r|| <= tol (scaled system) */
    double *b, *x;               /* device: b / 2^eb, x 2^(ea-eb) */
    double *inv_diag;            /* device: 1 / (A(i,i) / 2^ea); NULL: no Jacobi */
    double *r;                   /* device: the residual; w follows it */
    double *w;                   /* device: need.vectors vectors of n rows */
    double *hw;                  /* host: need.host doubles */
    adia_solve_info *info;
    /* the core's */
    adia_dist_matrix *D;
    const dsolve_method *method;
    cudaStream_t st;
    double *mem;                 /* device: one allocation for all vectors and sums */
    double *partial, *sums;      /* device: a reduction's partial and local sums */
    double *coef;                /* device: need.sums uploaded values */
    double *h_sums, *h_coef;     /* pinned: need.sums each */
    double *h;                   /* host scratch, n values */
    cudaEvent_t ev[4];           /* a product's start, end; NCCL sum's start, end */
    int timing;                  /* a product's events await reading */
    double a_inv;                /* 2^-ea: the products compute (A / 2^ea) x */
    double bnorm;                /* ||b / 2^eb|| */
    adia_status failed;          /* this process's first failure */
    char why[512];
    double spmv_ms;
    int spmvs;
};

/* A local failure is remembered, not returned: the peers are in the same
 * collective step and must be met there (its sums become NaN instead). */
void adia__dsolve_note(dsolve *c, adia_status s);
void adia__dsolve_cuda(dsolve *c, cudaError_t e, const char *call);

/* y = (A / 2^ea) x, halo included, on the solve's stream; timed. */
void adia__dsolve_product(dsolve *c, const double *x, double *y);

/* r = b - A x of the current x; u = M^-1 r (Jacobi; NULL, or r without
 * Jacobi: none). */
void adia__dsolve_residual(dsolve *c, double *u);

/* ONE reduction: v[k] = a[k]'b[k] summed over the processes, k < count
 * <= ADIA_DIST_DOTS_MAX (pairs of device vectors).  NaN everywhere when
 * any process failed. */
void adia__dsolve_dots(dsolve *c, int count, const double *const *a, const double *const *b,
                       double *v);
/* ONE reduction: v[l] = V_l'w (V_l = V + l n) for l < k, then v[k] = w'w
 * if self; k + self <= need.sums. */
void adia__dsolve_basis_dots(dsolve *c, int k, const double *V, const double *w, int self,
                             double *v);

/* v[0..count) (host, count <= need.sums) to c->coef for the next kernel
 * on the stream. */
void adia__dsolve_upload(dsolve *c, const double *v, int count);

/* info->stop = the formatted reason. */
void adia__dsolve_stop(dsolve *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* ||r|| <= tol: 1 converged, -1 non-finite (stop recorded), 0 go on. */
int adia__dsolve_check_residual(dsolve *c, double rnorm);

#endif
