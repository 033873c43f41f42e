/* solve_cpu.h -- the CPU side of the solvers (solve_cpu.c) as solve.c's
 * entry points, checks and scaling use it: one solve's record (solver),
 * the reductions over the processes, the power-of-two scaling helpers,
 * and the scale-safe norm, the residual and the CPU's method driver. */
#ifndef ADIA_SOLVE_CPU_H
#define ADIA_SOLVE_CPU_H

#include "method.h"
#include "../precond/precond.h"

#include <float.h>
#include <math.h>

typedef struct solver {
    const adia__solve_op *op; /* A                                          */
    const adia__solve_comm *comm; /* its sums and maxima over the processes */
    int device;               /* 1: the methods of solve_gpu.cu, on op's
                                 device products                            */
    int64_t n;                /* rows held here                             */
    adia__solve_diag diag;    /* Jacobi: 1 / (A(i,i) / sa) (host), or the GPU
                                 plan's 1 / A(i,i); none: both NULL       */
    const adia_precond *M;    /* or a preconditioner without a diagonal:
                                 z = m_alpha M r, a stage of its own        */
    double m_alpha;           /* sa: M ~ A^-1, so sa M ~ (A / sa)^-1        */
    int ea, eb;               /* sa = 2^ea, sb = 2^eb                        */
    double a_inv;             /* 1 / sa: apply() computes (A / sa) x       */
    double bnorm;             /* ||b / sb||, in [0.5, 1)                    */
    double tol;               /* absolute: rtol * bnorm                     */
    int max_iter;
    int restart;              /* GMRES: basis vectors per cycle              */
    int x_zero;               /* x0 held here is all zeros                  */
    double spmv_ms;
    int spmvs;
    adia_solve_info *info;
    adia__solve_parked **park; /* GPU: the plan's slot for the workspace, or NULL */
} solver;


/* Sums over the rows are taken in fixed chunks, each added in row order,
 * and the chunks added in order: the result does not depend on the number
 * of threads -- which follows the machine's load (docs/threads.md) -- so a
 * solve repeats bit for bit.  Up to PARALLEL_ROWS rows the loops run on
 * one thread and one chunk keeps the plain row order. */
#define SUM_CHUNKS 256
#define PARALLEL_ROWS 65536

/* v[0..count) summed / maximised over the processes (one process: as is). */
static inline void global_sum(const solver *S, double *v, int count)
{
    if (S->comm->sum) S->comm->sum(S->comm->ctx, v, count);
}

static inline void global_max(const solver *S, double *v, int count)
{
    if (S->comm->max) S->comm->max(S->comm->ctx, v, count);
}

/* The status every process goes on with (one process: s). */
static inline adia_status agree_comm(const adia__solve_comm *c, adia_status s)
{
    return c->agree ? c->agree(c->ctx, s) : s;
}

static inline adia_status agree(const solver *S, adia_status s) { return agree_comm(S->comm, s); }

/* e with 2^(e-1) <= v < 2^e; 0 for 0, Inf or NaN (no scaling). */
static inline int pow2_exponent(double v)
{
    int e = 0;
    if (v > 0 && isfinite(v)) frexp(v, &e);
    return e;
}

/* 2^e where it is a normal double, else 0.  x * 2^e then rounds once, to
 * the nearest, as ldexp(x, e) does: the same bits, subnormal and
 * overflowing results included, at a fifth of ldexp's time (a libm call:
 * 13.4 against 2.2 ms for 4.1 M values, 2 cores, 2026-11-27). */
static inline double pow2_factor(int e)
{
    return e >= DBL_MIN_EXP - 1 && e <= DBL_MAX_EXP - 1 ? ldexp(1.0, e) : 0;
}

/* x 2^e, exact; f = pow2_factor(e) */
static inline double times_pow2(double x, int e, double f)
{
    return f != 0 ? x * f : ldexp(x, e);
}

/* ||a||_2 = m 2^e as m with *e (solve_cpu.c: no overflow or underflow on
 * the way); the same from big = max |a_i| over every process; ||a|| as a
 * double (Inf where it exceeds the range). */
double adia__solve_nrm2_from_max(const solver *S, const double *a, double big, int *e);
double adia__solve_nrm2(const solver *S, const double *a);
/* y = x 2^e, exact (n values). */
void adia__solve_scale_pow2(int64_t n, const double *x, int e, double *y);
/* r = b - (A / sa) x through the operator, timed. */
adia_status adia__solve_residual(solver *S, const double *b, const double *x, double *r);
/* Doubles of workspace beside b / sb the CPU methods take, in n's. */
int64_t adia__solve_cpu_vectors(const solver *S, adia_solver method);
/* The CPU method on bs (= b / sb) from x, restarted from the true
 * residual as the GPU's (at most SOLVE_RESTARTS times); w: the workspace;
 * info's iterations, residual, converged and stop set. */
adia_status adia__solve_cpu_run(solver *S, adia_solver method, const double *bs, double *x,
                                double *w);

#endif
