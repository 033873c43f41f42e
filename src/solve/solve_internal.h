/* solve_internal.h -- what the CPU solvers (solve.c) hand to the GPU ones
 * (solve_gpu.cu; solve_gpu_none.c in a build without CUDA). */
#ifndef ADIA_SOLVE_INTERNAL_H
#define ADIA_SOLVE_INTERNAL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One solve on the device: every vector stays there, the plan's SpMV (or
 * an adia_operator's device callbacks) is the operator, the stopping test
 * runs on the device and the host looks once per solve (a CUDA graph with
 * a WHILE node), per chunk of iterations (a plain graph) or per iteration
 * (an operator that waits on the host). */
typedef struct adia_solve_gpu_args {
    adia_plan *plan;            /* a GPU plan, n x n, or NULL:                */
    const adia_operator *op;    /* its device callbacks are A (vt double)     */
    adia_solver method;         /* CG, BiCGSTAB or GMRES                       */
    int restart;                /* GMRES: basis vectors per cycle (m)          */
    int64_t n;
    adia_value_type vt;         /* the plan's value type: of d_b and d_x       */
    const void *d_b;            /* device, n values                            */
    void *d_x;                  /* device, n values: initial guess, solution   */
    const double *inv_diag;     /* host, n values of 1 / (a_scale A(i,i)), or NULL */
    double a_scale;             /* the operator is a_scale * A (a power of two) */
    double rtol;
    int max_iter;
    void *stream;               /* cudaStream_t the caller's work is on        */
} adia_solve_gpu_args;

/* Fills info (iterations, converged, residual, stop, time_ms: from the
 * method's first kernel to its last true-residual check, the workspace,
 * the norm of b and the graph capture before it left to setup_ms, which
 * the public entry points fill from their own clock); converged is
 * set only from the true residual b - A x recomputed at the end, finite and
 * <= rtol ||b||. */
adia_status adia__solve_gpu(const adia_solve_gpu_args *a, adia_solve_info *info);

/* Host vectors through a GPU plan: b and x (doubles) are moved to the
 * device once, solved there, and x comes back. */
adia_status adia__solve_gpu_host(const adia_solve_gpu_args *a, const double *b, double *x,
                                adia_solve_info *info);

#ifdef __cplusplus
}
#endif
#endif
