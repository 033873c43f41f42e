/* precond.h -- the preconditioner object and its table of operations.
 *
 * One kind = one module exporting one adia_precond_ops (designated
 * initialisers) plus one line in registry.c, as formats are.  The object
 * (struct adia_precond) carries what every kind needs; a kind keeps its
 * own state in M->impl.
 *
 * How the solvers use it (src/solve): z = alpha M r is a stage of its own
 * in every method (alpha undoes the solver's power-of-two scaling of A:
 * the solver runs on a_scale A, so it applies M / a_scale).  A kind whose
 * `diagonal` slot answers non-NULL is a diagonal: the GPU methods then
 * fuse z_i = alpha d_i r_i into their vector passes instead of calling
 * apply (CG stays one product + one update pass).  `graph` says what
 * apply queues, with adia_operator.device_graph's meaning (2: kernels,
 * memsets and copies only -- capturable in a WHILE graph; 1: capturable in
 * a plain graph; 0: waits on the host); the solver runs at the lesser of
 * the operator's and the preconditioner's.  `varies` 1: M may differ from
 * one application to the next (an inner iteration stopped by a
 * tolerance): GMRES then runs flexible (FGMRES) and CG is refused. */
#ifndef ADIA_PRECOND_H
#define ADIA_PRECOND_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADIA_MAGIC_PRECOND 0x50524543u /* "PREC" */

typedef struct adia_precond_ops {
    const char *name;
    /* Fill M->impl from M->plan (M->n, device, vtype already set) with opt
     * (resolved: never NULL).  On error, leave M->impl NULL or freeable by
     * destroy. */
    adia_status (*setup)(adia_precond *M, const adia_precond_options *opt);
    /* z = alpha M r: device arrays of M->vtype queued on stream (GPU), host
     * doubles (CPU). */
    adia_status (*apply)(const adia_precond *M, double alpha, const void *r, void *z,
                         void *stream);
    /* A diagonal kind's d_i (z_i = d_i r_i) where M lives -- n host
     * doubles, or device values of M->vtype -- and *ones 1 where every d_i
     * is 1; NULL: not a diagonal. */
    const void *(*diagonal)(const adia_precond *M, int *ones);
    int identity;             /* 1: M = I, the solvers run unpreconditioned */
    int graph;                /* 2, 1 or 0 as above                          */
    int varies;               /* 1: M may change between applications        */
    /* Kind-specific lines for adia_precond_explain (may be NULL). */
    void (*explain)(const adia_precond *M, char *buf, size_t len);
    void (*destroy)(adia_precond *M);   /* frees M->impl (M itself: the caller) */
} adia_precond_ops;

struct adia_precond {
    uint32_t magic;
    const adia_precond_ops *ops;
    adia_plan *plan;          /* not owned */
    int64_t n;                /* rows of r and z: the plan's (mg across
                                 processes: the own planes') */
    int device;               /* 0 CPU, 1 GPU: the plan's */
    adia_value_type vtype;    /* the plan's: of r and z on the GPU */
    double setup_ms;
    void *impl;               /* the kind's state */
    char why[640];            /* kind "auto": what it chose, why not the others */
    int automatic;            /* set up by "auto": a kind may decline where it
                                 would not repay its set-up (mg on small grids) */
    int galerkin;             /* the plan's matrix is a Galerkin level of
                                 another mg (a slab hierarchy's gathered level):
                                 mg estimates it as its coarse levels       */
    const char *asymmetric;   /* NULL, or why M is not symmetric (mg's F
                                 cycle): CG refuses it                      */
    int strip;                /* auto: mg found a strip 2 points wide
                                 (mg_strip) and declined it for agg         */
};

/* Registry (registry.c): the kind named `name`, NULL if none. */
const adia_precond_ops *adia__precond_find(const char *name);
/* The registry's names, ", "-separated (for messages). */
const char *adia__precond_list(void);
/* Add a kind at run time (tests register test-only kinds); a name already
 * taken is replaced.  Not thread-safe: call before creating any. */
adia_status adia__precond_register(const adia_precond_ops *ops);

/* Device helpers every kind may use (vector_gpu.cu; a build without CUDA:
 * ADIA_ERR_NO_DEVICE).  z = alpha d .* r (d NULL: z = alpha r), n values
 * of vt, queued on stream; d in vt too. */
adia_status adia__precond_scale_gpu(adia_value_type vt, int64_t n, double alpha, const void *d,
                                    const void *r, void *z, void *stream);
/* z = alpha r, n values: r of type from, z of type to, queued on stream. */
adia_status adia__precond_convert_gpu(adia_value_type from, adia_value_type to, int64_t n,
                                      double alpha, const void *r, void *z, void *stream);
/* n host doubles uploaded as vt: *out device memory, freed by
 * adia__precond_free_gpu (NULL is fine). */
adia_status adia__precond_upload(adia_value_type vt, int64_t n, const double *h, void **out);
void adia__precond_free_gpu(void *d);
/* 1 / A(i,i) of a GPU plan, read, inverted and checked on the device (n
 * values never cross to the host: at 16.8 M rows their round trip was
 * most of Jacobi's 254 ms set-up, H200): *out device memory of the plan's
 * value type (adia__precond_free_gpu), *ones 1 where every A(i,i) is 1.
 * A zero or non-finite A(i,i) is the error "<who> A(i,i) nonzero and
 * finite, it is <value>", i the first such row. */
adia_status adia__precond_inverse_diagonal_gpu(const adia_plan *plan, const char *who, void **out,
                                               int *ones);
/* z = alpha d .* r (d NULL: z = alpha r), n values where they live: on
 * the device (adia__precond_scale_gpu, vt) or host doubles (device 0). */
adia_status adia__precond_scale(int device, adia_value_type vt, int64_t n, double alpha,
                                const void *d, const void *r, void *z, void *stream);
/* n values where M lives: h's (host doubles) or zeros (h NULL) -- device
 * memory of M->vtype on a GPU plan, host doubles on a CPU one; freed by
 * adia__precond_array_free. */
adia_status adia__precond_array(const adia_precond *M, int64_t n, const double *h, void **out);
void adia__precond_array_free(const adia_precond *M, void *p);

/* cheb's bounds of a GPU plan found on the device (cheb_gpu.cu): the
 * Gershgorin bound G of D^-1 A and `steps` power steps' last Rayleigh
 * quotient v'Av / v'Dv (*est, unchecked), the host's start and order
 * (cheb.c); *inv_diag 1 / A(i,i) on the device in the plan's value type
 * (adia__precond_free_gpu).  An A(i,i) not > 0 and finite, or a row with
 * a non-finite entry, is the error naming the first such row.  *done 0,
 * no error: the plan's storage is not read there (not a diagonal format,
 * scatter points, not square): the host's path. */
adia_status adia__precond_spd_bounds_gpu(const char *kind, adia_plan *plan, int steps,
                                         double *est, double *gershgorin, void **inv_diag,
                                         int *done);

/* adia_precond_create with M->galerkin set (mg_slab.c's gathered level). */
adia_status adia__precond_create(adia_plan *plan, const adia_precond_options *opt, int galerkin,
                                 adia_precond **out);

/* ADIA_OK if M is a live handle, else ADIA_ERR_INVALID_HANDLE naming func. */
adia_status adia__precond_check(const adia_precond *M, const char *func);

#ifdef __cplusplus
}
#endif
#endif
