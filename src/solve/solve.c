/* solve.c -- CG and BiCGSTAB on top of a plan (adia.h, "iterative
 * solvers").  Every product with A is adia_spmv on the plan's format and
 * is timed apart from the vector work; vectors are doubles, updated by
 * OpenMP loops.  Convergence is judged on the true residual b - A x of the
 * returned x, recomputed at the end, not only on the recurrence (which can
 * drift from it in finite precision). */
#include "solve_internal.h"

#include <math.h>
#include <stdio.h>

typedef struct solver {
    adia_plan *plan;
    int64_t n;
    double *inv_diag;         /* Jacobi: 1 / A(i,i); NULL: no preconditioner */
    double tol;               /* absolute: rtol * ||b|| */
    int max_iter;
    double spmv_ms;
    int spmvs;
    adia_solve_info *info;
} solver;

/* ------------------------------------------------------ vector kernels */

static double dot(int64_t n, const double *a, const double *b)
{
    double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static double norm2(int64_t n, const double *a) { return sqrt(dot(n, a, a)); }

/* y += alpha x */
static void axpy(int64_t n, double alpha, const double *x, double *y)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

/* y = x + beta y */
static void xpby(int64_t n, const double *x, double beta, double *y)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) y[i] = x[i] + beta * y[i];
}

/* z = M^-1 r (Jacobi) or r */
static void precondition(const solver *S, const double *r, double *z)
{
#pragma omp parallel for schedule(static) if (S->n > 65536)
    for (int64_t i = 0; i < S->n; i++) z[i] = S->inv_diag ? S->inv_diag[i] * r[i] : r[i];
}

/* y = A x through the plan, timed */
static adia_status apply(solver *S, const double *x, double *y)
{
    double t0 = adia_now_ms();
    adia_status s = adia_spmv(S->plan, 1.0, x, 0.0, y);
    S->spmv_ms += adia_now_ms() - t0;
    S->spmvs++;
    return s;
}

/* r = b - A x */
static adia_status residual(solver *S, const double *b, const double *x, double *r)
{
    ADIA_TRY(apply(S, x, r));
#pragma omp parallel for schedule(static) if (S->n > 65536)
    for (int64_t i = 0; i < S->n; i++) r[i] = b[i] - r[i];
    return ADIA_OK;
}

/* Record why the method ended early (fmt may use v once). */
static adia_status stop(solver *S, const char *fmt, double v)
{
    snprintf(S->info->stop, sizeof S->info->stop, fmt, v);
    return ADIA_OK;
}

/* ------------------------------------------------------------- methods */

/* Preconditioned CG; w: 4 n doubles.  Sets info->stop when it ends early
 * (converged or breakdown); else the caller's "max iterations" stays. */
static adia_status cg(solver *S, const double *b, double *x, double *w)
{
    const int64_t n = S->n;
    double *r = w, *z = w + n, *p = w + 2 * n, *q = w + 3 * n;
    ADIA_TRY(residual(S, b, x, r));
    precondition(S, r, z);
    memcpy(p, z, (size_t)n * sizeof *p);
    double rz = dot(n, r, z);
    while (S->info->iterations < S->max_iter) {
        if (norm2(n, r) <= S->tol) return stop(S, "converged", 0);
        ADIA_TRY(apply(S, p, q));
        double pq = dot(n, p, q);
        if (!(pq > 0))
            return stop(S, "breakdown: p'Ap = %g (A is not symmetric positive definite?)", pq);
        double alpha = rz / pq;
        axpy(n, alpha, p, x);
        axpy(n, -alpha, q, r);
        S->info->iterations++;
        precondition(S, r, z);
        double rz_next = dot(n, r, z);
        xpby(n, z, rz_next / rz, p);
        rz = rz_next;
    }
    if (norm2(n, r) <= S->tol) stop(S, "converged", 0);
    return ADIA_OK;
}

/* Right-preconditioned BiCGSTAB; w: 8 n doubles. */
static adia_status bicgstab(solver *S, const double *b, double *x, double *w)
{
    const int64_t n = S->n;
    double *r = w, *r0 = w + n, *p = w + 2 * n, *v = w + 3 * n, *ph = w + 4 * n,
           *s = w + 5 * n, *sh = w + 6 * n, *t = w + 7 * n;
    ADIA_TRY(residual(S, b, x, r));
    memcpy(r0, r, (size_t)n * sizeof *r0);
    memset(p, 0, (size_t)n * sizeof *p);
    memset(v, 0, (size_t)n * sizeof *v);
    double rho = 1, alpha = 1, omega = 1;
    while (S->info->iterations < S->max_iter) {
        if (norm2(n, r) <= S->tol) return stop(S, "converged", 0);
        double rho_next = dot(n, r0, r);
        if (rho_next == 0 || !isfinite(rho_next))
            return stop(S, "breakdown: (r0, r) = %g", rho_next);
        double beta = (rho_next / rho) * (alpha / omega);
        rho = rho_next;
        axpy(n, -omega, v, p);          /* p = r + beta (p - omega v) */
        xpby(n, r, beta, p);
        precondition(S, p, ph);
        ADIA_TRY(apply(S, ph, v));
        double r0v = dot(n, r0, v);
        if (r0v == 0 || !isfinite(r0v)) return stop(S, "breakdown: (r0, A p) = %g", r0v);
        alpha = rho / r0v;
        memcpy(s, r, (size_t)n * sizeof *s);
        axpy(n, -alpha, v, s);
        S->info->iterations++;
        if (norm2(n, s) <= S->tol) {
            axpy(n, alpha, ph, x);
            return stop(S, "converged", 0);
        }
        precondition(S, s, sh);
        ADIA_TRY(apply(S, sh, t));
        double tt = dot(n, t, t);
        omega = tt > 0 ? dot(n, t, s) / tt : 0;
        axpy(n, alpha, ph, x);
        axpy(n, omega, sh, x);
        memcpy(r, s, (size_t)n * sizeof *r);
        axpy(n, -omega, t, r);
        if (omega == 0 || !isfinite(omega)) return stop(S, "breakdown: omega = %g", omega);
    }
    if (norm2(n, r) <= S->tol) stop(S, "converged", 0);
    return ADIA_OK;
}

/* ---------------------------------------------------------------- setup */

const char *adia_solver_name(adia_solver m)
{
    return m == ADIA_SOLVE_CG ? "cg" : m == ADIA_SOLVE_BICGSTAB ? "bicgstab"
           : m == ADIA_SOLVE_GMRES ? "gmres" : "unknown";
}

void adia_solve_options_default(adia_solve_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->method = ADIA_SOLVE_CG;
    opt->max_iter = 1000;
    opt->rtol = 1e-8;
    opt->restart = 30;
}

/* 1 / A(i,i) for every row; a missing or zero diagonal entry is an error. */
static adia_status jacobi_inverse(const adia_csr *A, double **out)
{
    double *d = adia_alloc((size_t)A->rows, sizeof *d, "Jacobi diagonal");
    if (!d) return ADIA_ERR_NO_MEMORY;
    const double *v = A->values;
    for (int32_t i = 0; i < A->rows; i++) {
        double a = 0;
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (A->colind[k] == i) a = v[k];
        if (a == 0 || !isfinite(a)) {
            free(d);
            return adia_error(ADIA_ERR_INVALID_ARG, "adia_solve: Jacobi needs A(%d,%d) nonzero and "
                              "finite, it is %g", i, i, a);
        }
        d[i] = 1.0 / a;
    }
    *out = d;
    return ADIA_OK;
}

/* The caller's plan checked, or a new CPU double plan (*own set). */
static adia_status solver_plan(const adia_matrix *A, adia_plan *plan, const adia_solve_options *o,
                               adia_plan **use, adia_plan **own)
{
    *own = NULL;
    *use = plan;
    int32_t n = A->csr.rows;
    if (plan) {
        if (adia_plan_rows(plan) != n || adia_plan_cols(plan) != n)
            return adia_error(ADIA_ERR_DIMENSION, "adia_solve: the plan is %d x %d, A is %d x %d",
                              adia_plan_rows(plan), adia_plan_cols(plan), n, n);
        if (adia_plan_device(plan) == 0 && adia_plan_value_type(plan) != ADIA_DOUBLE)
            return adia_error(ADIA_ERR_UNSUPPORTED, "adia_solve: a CPU plan must be in double "
                              "(this one: float)");
        return ADIA_OK;
    }
    int64_t calls = (int64_t)o->max_iter * (o->method == ADIA_SOLVE_BICGSTAB ? 2 : 1) + 2;
    adia_plan_hints h = {.expected_calls = calls, .vtype = ADIA_DOUBLE, .device = o->device,
                         .chooser = calls >= ADIA_PLAN_MEASURE_CALLS ? ADIA_CHOOSE_MEASURE
                                                                     : ADIA_CHOOSE_MODEL};
    ADIA_TRY(adia_plan_create(A, &h, own));
    *use = *own;
    return ADIA_OK;
}

static adia_status check_args(const adia_matrix *A, const double *b, double *x,
                              const adia_solve_options *o)
{
    ADIA_TRY(adia_matrix_check_handle(A, "adia_solve"));
    if (!b || !x) return adia_error(ADIA_ERR_INVALID_ARG, "adia_solve: b or x is NULL");
    if (A->csr.rows != A->csr.cols)
        return adia_error(ADIA_ERR_DIMENSION, "adia_solve: A is %d x %d, not square",
                          A->csr.rows, A->csr.cols);
    if (o->method != ADIA_SOLVE_CG && o->method != ADIA_SOLVE_BICGSTAB &&
        o->method != ADIA_SOLVE_GMRES)
        return adia_error(ADIA_ERR_INVALID_ARG, "adia_solve: unknown method %d", (int)o->method);
    if (o->method == ADIA_SOLVE_GMRES && (o->restart < 1 || o->restart > 1000))
        return adia_error(ADIA_ERR_INVALID_ARG, "adia_solve: GMRES restart %d outside 1..1000",
                          o->restart);
    if (!(o->rtol < 1)) return adia_error(ADIA_ERR_INVALID_ARG, "adia_solve: rtol %g", o->rtol);
    for (int32_t i = 0; i < A->csr.rows; i++)
        if (!isfinite(b[i]) || !isfinite(x[i]))
            return adia_error(ADIA_ERR_INVALID_ARG, "adia_solve: %s[%d] = %g", isfinite(b[i]) ?
                              "x (initial guess)" : "b", i, isfinite(b[i]) ? x[i] : b[i]);
    return ADIA_OK;
}

/* The method, then the true residual of x: when the recurrence says
 * converged but b - A x does not (rounding on ill-conditioned matrices),
 * the method restarts from the true residual -- at most SOLVE_RESTARTS
 * times, within max_iter in all. */
#define SOLVE_RESTARTS 3

static adia_status run(solver *S, adia_solver method, const double *b, double *x, double bnorm)
{
    double *w = adia_alloc((size_t)S->n * 8 + 1, sizeof *w, "solver vectors");
    if (!w) return ADIA_ERR_NO_MEMORY;
    adia_solve_info *info = S->info;
    double t0 = adia_now_ms();
    adia_status s = ADIA_OK;
    int said = 0;
    for (int restart = 0; s == ADIA_OK; restart++) {
        snprintf(info->stop, sizeof info->stop, "iteration limit reached");
        s = method == ADIA_SOLVE_CG ? cg(S, b, x, w) : bicgstab(S, b, x, w);
        if (s == ADIA_OK) s = residual(S, b, x, w);
        if (s != ADIA_OK) break;
        const double rnorm = norm2(S->n, w);
        info->residual = rnorm / bnorm;
        info->converged = rnorm <= S->tol;
        said = !strcmp(info->stop, "converged");
        if (info->converged || !said || restart == SOLVE_RESTARTS ||
            info->iterations >= S->max_iter)
            break;
    }
    info->time_ms = adia_now_ms() - t0;
    if (s == ADIA_OK && said && !info->converged)
        snprintf(info->stop, sizeof info->stop, "the recurrence converged, the true residual "
                 "did not (%.3g): lost accuracy", info->residual);
    free(w);
    return s;
}

adia_status adia_solve(const adia_matrix *A, adia_plan *plan, const double *b, double *x,
                       const adia_solve_options *opt, adia_solve_info *info)
{
    adia_solve_options o;
    adia_solve_options_default(&o);
    if (opt) o = *opt;
    if (o.max_iter <= 0) o.max_iter = 1000;
    if (o.rtol <= 0) o.rtol = 1e-8;
    if (o.restart <= 0) o.restart = 30;
    adia_solve_info scratch;
    if (!info) info = &scratch;
    memset(info, 0, sizeof *info);
    snprintf(info->stop, sizeof info->stop, "iteration limit reached");
    ADIA_TRY(check_args(A, b, x, &o));
    solver S = {.n = A->csr.rows, .max_iter = o.max_iter, .info = info};
    double bnorm = norm2(S.n, b);
    if (bnorm == 0) {   /* the solution is 0 */
        memset(x, 0, (size_t)S.n * sizeof *x);
        info->converged = 1;
        snprintf(info->stop, sizeof info->stop, "b = 0: x = 0");
        return ADIA_OK;
    }
    S.tol = o.rtol * bnorm;
    adia_plan *own = NULL;
    adia_status s = o.jacobi ? jacobi_inverse(&A->csr, &S.inv_diag) : ADIA_OK;
    if (s == ADIA_OK) s = solver_plan(A, plan, &o, &S.plan, &own);
    if (s == ADIA_OK) {
        snprintf(info->format, sizeof info->format, "%s", adia_plan_format_name(S.plan));
        if (adia_plan_device(S.plan) == 1) {
            adia_solve_gpu_args g = {.plan = S.plan, .method = o.method, .n = (int32_t)S.n,
                                     .vt = adia_plan_value_type(S.plan),
                                     .inv_diag = S.inv_diag, .rtol = o.rtol,
                                     .max_iter = o.max_iter, .restart = o.restart};
            s = adia_solve_gpu_host(&g, b, x, info);
        } else {
            s = run(&S, o.method, b, x, bnorm);
        }
    }
    info->spmv_ms = S.spmv_ms;
    info->spmvs = S.spmvs;
    adia_plan_destroy(own);
    free(S.inv_diag);
    return s;
}
