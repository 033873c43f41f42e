/* solve_internal.h -- what the CPU solvers (solve.c) hand to the GPU ones
 * (solve_gpu.cu and the files beside it, docs/solvers.md; solve_gpu_none.c
 * in a build without CUDA). */
#ifndef ADIA_SOLVE_INTERNAL_H
#define ADIA_SOLVE_INTERNAL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The solvers' A (docs/solver-architecture.md): the product alone, on the
 * rows held here.  A plan is one implementation (adia__solve_op_plan:
 * adia_spmv / adia_spmv_async / adia_spmv_sums_async, nothing of its
 * format), an adia_operator's callbacks another (adia__solve_op_user);
 * the methods see nothing else of either.  Square: n rows and columns. */
typedef struct adia__solve_op {
    int64_t n;                  /* rows of the vectors held here               */
    int64_t first;              /* global index of the first (messages)        */
    adia_value_type vt;         /* of the device vectors (host ones: double)   */
    void *ctx;                  /* handed to the products                      */
    /* y = alpha A x on host doubles (the CPU methods; a GPU solve's one
     * host check of a rounded x), NULL: none */
    adia_status (*apply)(void *ctx, double alpha, const double *x, double *y);
    /* y = alpha A x on device vectors of vt, queued on stream; NULL: none */
    adia_status (*apply_device)(void *ctx, double alpha, const void *x, void *y, void *stream);
    /* The same with the ADIA_SPMV_SUMS sums of adia_spmv_sums_async
     * (companion z) ADDED to out; work: sums_work_bytes of device memory,
     * zeroed once, for this operator alone.  NULL: the solver sums in a
     * pass of its own. */
    adia_status (*apply_sums_device)(void *ctx, double alpha, const void *x, void *y,
                                     const void *z, double *out, void *work, void *stream);
    size_t sums_work_bytes;
    int sums_fused;             /* the sums ride in the product's epilogue     */
    int device_graph;           /* adia_operator.device_graph's levels (0..2)  */
    double apply_bytes;         /* bytes one product moves (0: unknown)        */
    double storage_bytes;       /* of which the matrix's (0: unknown)          */
    const double *diag;         /* host A(i,i) of the rows held here, or NULL  */
    double max_abs;             /* max |A(i,j)| held here (the scaling)        */
} adia__solve_op;

/* The reductions over the processes that hold the operator's rows, apart
 * from the product; every member NULL: one process. */
typedef struct adia__solve_comm {
    void *ctx;
    void (*sum)(void *ctx, double *v, int count);          /* host, in place */
    void (*max)(void *ctx, double *v, int count);
    adia_status (*agree)(void *ctx, adia_status s);         /* an error of any, on all */
    void (*sum_device)(void *ctx, double *v, int count, void *stream);   /* device, queued */
    void (*max_device)(void *ctx, double *v, int count, void *stream);
} adia__solve_comm;

/* A plan as the operator (operator.c): GPU plan: its products on the
 * device and, A given, the host product on A itself (CSR: the one check
 * of a rounded x; A NULL: the plan's format made a matrix on that first
 * use, freed by adia__solve_op_plan_free); CPU plan: adia_spmv on host
 * doubles.  diag and max_abs are the caller's (NULL, 0 if unknown).  ctx:
 * storage for the operator's context, alive as long as the operator. */
typedef struct adia__plan_op_ctx {
    adia_plan *plan;
    const adia_matrix *A;
    adia_matrix *own;           /* A NULL: the format's matrix, once needed */
} adia__plan_op_ctx;
void adia__solve_op_plan_free(adia__plan_op_ctx *ctx);
void adia__solve_op_plan(adia_plan *plan, const adia_matrix *A, adia__plan_op_ctx *ctx,
                         adia__solve_op *op);
/* An adia_operator as the operator and its reductions (operator.c). */
void adia__solve_op_user(const adia_operator *user, adia__solve_op *op, adia__solve_comm *comm);

/* A diagonal preconditioner as the solvers take it: host doubles 2^ea d_i
 * (owned: free(host)), or a GPU plan's d_i on the device in dev_vt (M's,
 * unscaled: the GPU solver scales its copy by 2^ea); both NULL: none. */
typedef struct adia__solve_diag {
    double *host;
    const void *dev;
    adia_value_type dev_vt;
} adia__solve_diag;

/* One solve on the device: every vector stays there, op's device products
 * are A, the stopping test runs on the device and the host looks once per
 * solve (a CUDA graph with a WHILE node), per chunk of iterations (a plain
 * graph) or per iteration (an operator that waits on the host). */
typedef struct adia_solve_gpu_args {
    const adia__solve_op *op;   /* A (apply_device set), n x n               */
    const adia__solve_comm *comm; /* its reductions over processes            */
    adia_solver method;         /* CG, BiCGSTAB or GMRES                       */
    int restart;                /* GMRES: basis vectors per cycle (m)          */
    const void *d_b;            /* device, op->n values of op->vt              */
    void *d_x;                  /* device, the same: initial guess, solution   */
    const double *inv_diag;     /* host, n values of 1 / (a_scale A(i,i)), or NULL */
    const void *d_inv_diag;     /* or device, n values of 1 / A(i,i) in d_inv_vt */
    adia_value_type d_inv_vt;
    /* A preconditioner without a diagonal (src/precond), or NULL: z = M r
     * is then a stage of its own, M->ops->apply(M, 1 / a_scale, r, z) on
     * the solver's stream, captured in the graph with the rest (at the
     * lesser of the operator's graph level and M's).  Never with a diagonal. */
    const struct adia_precond *M;
    double a_scale;             /* the operator is a_scale * A (a power of two) */
    int b_exp;                  /* host entry (vt double): b comes unscaled and
                                   is scaled by 2^b_exp on the device         */
    int x_zero;                 /* host entry: x0 is all zeros (not uploaded) */
    /* device entry (vt double): b and x are the caller's, unscaled; the
     * solve scales them as solve.c does host vectors -- b by 2^-eb (eb from
     * ||b||, where b is read), x by 2^(ea-eb) in place and back at the end
     * -- on A / 2^ea (a_scale), so that no square or dot product leaves the
     * range of double.  0: they come scaled (host entry). */
    int scale;
    double rtol;
    int max_iter;
    void *stream;               /* cudaStream_t the caller's work is on        */
    adia__solve_parked **park;  /* a plan's slot: the workspace is taken from it
                                   and left there for the next solve; NULL:
                                   allocated and freed by this solve        */
} adia_solve_gpu_args;

/* Fills info (iterations, converged, residual, stop, time_ms: from the
 * method's first kernel to its last true-residual check, the workspace,
 * the norm of b and the graph capture before it left to setup_ms, which
 * the public entry points fill from their own clock); converged is
 * set only from the true residual b - A x recomputed at the end, finite and
 * <= rtol ||b||. */
adia_status adia__solve_gpu(const adia_solve_gpu_args *a, adia_solve_info *info);

/* Host vectors through a GPU plan: b and x (doubles) are moved to the
 * device once (x0 = 0: set there; b scaled there by 2^b_exp), solved
 * there, and x comes back. */
adia_status adia__solve_gpu_host(const adia_solve_gpu_args *a, const double *b, double *x,
                                adia_solve_info *info);

/* max |A(i,j)| of a GPU plan whose format keeps its values in one device
 * array (the diagonal formats without scatter points), NaN ignored, read
 * on the device; ADIA_ERR_UNSUPPORTED (no error set) otherwise: the
 * caller scans its host copy. */
adia_status adia__solve_plan_max_abs(const adia_plan *plan, double *big);

/* opt->precond for a solve on plan (NULL: the call has none) in func's
 * words: a live handle made on plan, not with opt->jacobi, not a kind
 * that varies under CG (ADIA_ERR_UNSUPPORTED); ADIA_OK when there is
 * none. */
adia_status adia__solve_precond_check(const adia_solve_options *o, const adia_plan *plan,
                                      const char *func);
/* The same for an operator solve of n rows here on the device (1) or the
 * CPU (0): M made on a square plan of n rows there (a distributed
 * operator: each process's M of its own block). */
adia_status adia__solve_precond_check_op(const adia_solve_options *o, int64_t n, int device,
                                         const char *func);
/* How the methods apply a checked M (NULL: nothing) on a system scaled to
 * A / 2^ea: a diagonal kind as *diag (nothing for a diagonal of ones: the
 * identity), any other as *stage (applied with alpha 2^ea). */
adia_status adia__solve_precond_stage(const struct adia_precond *M, int ea, adia__solve_diag *diag,
                                      const struct adia_precond **stage);

#ifdef __cplusplus
}
#endif
#endif
