/* solve.c -- the solvers' entry points: CG, BiCGSTAB and GMRES on top of a
 * plan (adia.h, "iterative solvers") or of an operator
 * (adia_solve_operator), with host or device vectors; the checks, the
 * scaling and Jacobi's set-up here, the methods on the CPU (solve_cpu.c)
 * or the GPU (solve_gpu.cu: a GPU plan or an operator's device callbacks).  Every solve sees one
 * operator (solve_internal.h; a plan and an adia_operator are its two
 * implementations, operator.c) and its reductions over the processes,
 * apart: every product with A is the operator's (on the CPU its apply,
 * timed apart from the vector work), and every dot product and norm
 * combines its local partial result through the reductions' sum / max (a
 * distributed solve: MPI_Allreduce; one process: nothing), so each
 * process takes every decision on the same numbers and the processes stay
 * in step.  Vectors are doubles, updated by OpenMP
 * loops.  Convergence is judged on the true residual b - A x of the
 * returned x, recomputed at the end, not only on the recurrence (which can
 * drift from it in finite precision); a non-finite residual is a stop
 * reason, never success.
 *
 * Range: the methods run on the scaled system (A / sa) y = b / sb with sa,
 * sb powers of two near max |A(i,j)| and ||b||, and x = y sb / sa, so
 * systems with entries of 1e200 or 1e-170 neither overflow nor underflow in
 * the dot products (scaling by a power of two is exact); norms are scaled
 * as well (nrm2), and ||b|| is taken as m 2^e (nrm2_split), so a b whose
 * norm exceeds the range of double (16 x 1e308) or whose entries are
 * subnormal (16 x 1e-320) is scaled as any other.  The tolerance
 * rtol ||b|| / sb is finite and above 0, or the solve is refused.  x is
 * checked after the scaling back: an entry out of the range of double
 * takes converged back (not_finite), one that fell below its normal
 * range and lost bits has the true residual of the rounded x decide
 * (check_rounded). */
#include "solve_cpu.h"

#include <stdio.h>
#include <string.h>


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

/* A(i,i) of every row (0 where it is not stored). */
static adia_status diagonal(const adia_csr *A, double **out)
{
    double *d = adia__calloc((size_t)A->rows + 1, sizeof *d, "matrix diagonal");
    if (!d) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel for schedule(static) if (A->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int32_t i = 0; i < A->rows; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (A->colind[k] == i) d[i] = ((const double *)A->values)[k];
    *out = d;
    return ADIA_OK;
}

/* 1 / (diag[i] / 2^ea) for the n rows held here (the first is row first);
 * a zero or non-finite diagonal entry is an error naming its row. */
static adia_status jacobi_inverse(const double *diag, int64_t n, int64_t first, int ea,
                                  double **out)
{
    if (!diag) return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: Jacobi needs the diagonal "
                                 "of A (adia_operator.diag is NULL)");
    double *d = adia__alloc((size_t)n + 1, sizeof *d, "Jacobi diagonal");
    if (!d) return ADIA_ERR_NO_MEMORY;
    int64_t bad = INT64_MAX;   /* the first bad row, whatever the threads */
#pragma omp parallel for reduction(min : bad) schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        const double a = diag[i];
        if ((a == 0 || !isfinite(a)) && i < bad) bad = i;
        d[i] = 1.0 / ldexp(a, -ea);
    }
    if (bad != INT64_MAX) {
        free(d);
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: Jacobi needs A(%lld,%lld) "
                          "nonzero and finite, it is %g", (long long)(first + bad),
                          (long long)(first + bad), diag[bad]);
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
            return adia__error(ADIA_ERR_DIMENSION, "adia_solve: the plan is %d x %d, A is %d x %d",
                              adia_plan_rows(plan), adia_plan_cols(plan), n, n);
        if (adia_plan_device(plan) == 0 && adia_plan_value_type(plan) != ADIA_DOUBLE)
            return adia__error(ADIA_ERR_UNSUPPORTED, "adia_solve: a CPU plan must be in double "
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

static adia_status check_options(const adia_solve_options *o, const char *func)
{
    if (o->method != ADIA_SOLVE_CG && o->method != ADIA_SOLVE_BICGSTAB &&
        o->method != ADIA_SOLVE_GMRES)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: unknown method %d", func, (int)o->method);
    if (o->method == ADIA_SOLVE_GMRES && (o->restart < 1 || o->restart > 1000))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: GMRES restart %d outside 1..1000", func,
                          o->restart);
    if (!(o->rtol < 1)) return adia__error(ADIA_ERR_INVALID_ARG, "%s: rtol %g", func, o->rtol);
    return ADIA_OK;
}

static adia_status check_args(const adia_matrix *A, const double *b, double *x,
                              const adia_solve_options *o)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_solve"));
    if (!b || !x) return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: b or x is NULL");
    if (A->csr.rows != A->csr.cols)
        return adia__error(ADIA_ERR_DIMENSION, "adia_solve: A is %d x %d, not square",
                          A->csr.rows, A->csr.cols);
    return check_options(o, "adia_solve");
}

/* One pass over the rows held here (the first is row first): b and x
 * finite, *bmax = max |b_i| and *xmax = max |x_i| (the norm's scale and
 * x0's, in the pass that reads them anyway). */
static adia_status scan_start(int64_t n, int64_t first, const double *b, const double *x,
                              double *bmax, double *xmax)
{
    int64_t bad = INT64_MAX;   /* the first bad row, whatever the threads */
    double bm = 0, xm = 0;
#pragma omp parallel for reduction(min : bad) reduction(max : bm, xm) schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        if ((!isfinite(b[i]) || !isfinite(x[i])) && i < bad) bad = i;
        bm = fabs(b[i]) > bm ? fabs(b[i]) : bm;
        xm = fabs(x[i]) > xm ? fabs(x[i]) : xm;
    }
    *bmax = bm;
    *xmax = xm;
    if (bad == INT64_MAX) return ADIA_OK;
    const int64_t i = bad;
    return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: %s[%lld] = %g", isfinite(b[i]) ?
                      "x (initial guess)" : "b", (long long)(first + i),
                      isfinite(b[i]) ? x[i] : b[i]);
}


/* Largest |A(i,j)|, NaN ignored (it shows up in the residual instead). */
static double max_abs(const adia_csr *A)
{
    double big = 0;
#pragma omp parallel for reduction(max : big) schedule(static) if (A->nnz > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t k = 0; k < A->nnz; k++) {
        const double v = fabs(adia_csr_value(A, k));   /* a float plan's matrix too */
        big = v > big ? v : big;
    }
    return big;
}

/* The GPU methods on the same scaled system: bs and y0 go to the device,
 * the products there are (A / sa) x as well (solve_gpu.cu). */
/* b_exp: bs is b itself, to be scaled by 2^b_exp on the device (double
 * plans), else 0 (bs scaled already). */
static adia_status run_gpu(solver *S, adia_solver method, const double *bs, int b_exp, double *x)
{
    adia_solve_gpu_args g = {.op = S->op, .comm = S->comm, .method = method,
                             .restart = S->restart, .inv_diag = S->diag.host,
                             .d_inv_diag = S->diag.dev, .d_inv_vt = S->diag.dev_vt, .M = S->M,
                             .a_scale = S->a_inv,
                             .b_exp = b_exp, .x_zero = S->x_zero,
                             .rtol = S->tol / S->bnorm, .max_iter = S->max_iter,
                             .park = S->park};
    return adia__solve_gpu_host(&g, bs, x, S->info);
}

/* x is not finite on some process (y 2^(eb-ea) can overflow): converged
 * taken back.  bad: the first such row held here, or -1. */
static void not_finite(solver *S, const double *x, int64_t bad)
{
    S->info->converged = 0;
    if (bad >= 0)
        snprintf(S->info->stop, sizeof S->info->stop, "non-finite solution: x[%lld] = %g "
                 "is out of the range of double", (long long)(S->op->first + bad), x[bad]);
    else
        snprintf(S->info->stop, sizeof S->info->stop, "non-finite solution on another process: "
                 "out of the range of double");
}

/* x = y 2^k in place (y: the scaled system's solution), in one pass
 * with its checks: *lost = the first row held here whose value lost bits
 * on the way -- it fell below the normal range of double, to a subnormal
 * or 0 -- and *bad the first not finite (k > 0 can overflow), each -1 if
 * none. */
static void scale_back(int64_t n, double *x, int k, int64_t *lost, int64_t *bad)
{
    int64_t first = INT64_MAX, inf = INT64_MAX;
    const double f = pow2_factor(k), g = pow2_factor(-k);
#pragma omp parallel for reduction(min : first, inf) schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        const double v = times_pow2(x[i], k, f);
        if (k < 0 && times_pow2(v, -k, g) != x[i] && i < first) first = i;
        if (!isfinite(v) && i < inf) inf = i;
        x[i] = v;
    }
    *lost = first == INT64_MAX ? -1 : first;
    *bad = inf == INT64_MAX ? -1 : inf;
}

/* x came back with entries rounded below the normal range of double (b
 * tiny against A: x = 16 x 1e-320 has about 11 bits), so the residual the
 * method met is not that of x itself: recomputed on the scaled system from
 * y = x 2^(ea-eb) (exact), it decides converged again.  first: the first
 * such row held here, or -1.  A GPU operator without a host apply cannot
 * check: converged is taken back, saying why. */
static adia_status check_rounded(solver *S, const double *bs, const double *x, int64_t first)
{
    adia_solve_info *info = S->info;
    const int64_t n = S->n;
    const int can = S->op->apply != NULL;   /* the same on every process */
    double *w = can ? adia__alloc(2 * (size_t)n + 1, sizeof *w, "solver vectors") : NULL;
    adia_status s = can ? agree(S, w ? ADIA_OK : ADIA_ERR_NO_MEMORY) : ADIA_OK;
    double rnorm = NAN;
    if (can && s == ADIA_OK) {
        double *y = w, *r = w + n;
        adia__solve_scale_pow2(n, x, S->ea - S->eb, y);
        s = adia__solve_residual(S, bs, y, r);
        if (s == ADIA_OK) rnorm = adia__solve_nrm2(S, r);
    }
    free(w);
    if (s != ADIA_OK) return s;
    if (can) info->residual = rnorm / S->bnorm;
    info->converged = rnorm <= S->tol;   /* false for NaN: can't check */
    if (info->converged) return ADIA_OK;
    char at[64] = "on another process";
    if (first >= 0)
        snprintf(at, sizeof at, "x[%lld] = %g", (long long)(S->op->first + first), x[first]);
    if (can)
        snprintf(info->stop, sizeof info->stop, "x underflows (%s): entries below the normal "
                 "range of double lost bits; true residual %.3g", at, info->residual);
    else
        snprintf(info->stop, sizeof info->stop, "x underflows (%s): entries below the normal "
                 "range of double lost bits; no host apply checks b - A x", at);
    return ADIA_OK;
}

/* The method on the scaled system from y0 = x0 2^(ea-eb), then x itself
 * checked: finite, and -- where entries fell below the normal range on the
 * way back -- meeting the tolerance itself. */
static adia_status run(solver *S, adia_solver method, const double *b, double *x)
{
    const int gpu = S->device;
    /* a double GPU solve scales b on the device: no host copy of it */
    const int b_on_device = gpu && S->op->vt == ADIA_DOUBLE;
    int64_t k = b_on_device ? 0 : 1 + (gpu ? 0 : adia__solve_cpu_vectors(S, method));
    double *w = k ? adia__alloc((size_t)S->n * (size_t)k + 1, sizeof *w, "solver vectors") : NULL;
    adia_status s = agree(S, w || !k ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    if (s != ADIA_OK) {
        free(w);
        return s;
    }
    double *bs = k ? w + (k - 1) * S->n : NULL;
    if (bs) adia__solve_scale_pow2(S->n, b, -S->eb, bs);
    /* x0 = 0 too: its pages are written here on every thread, not faulted
     * in by a GPU solve's download on one (x0 = 0 is not uploaded; a guess
     * at why lap3d7:256's set-up did not drop in the one A/B run that
     * skipped this pass, H200, 2026-11-27; not yet measured with it) */
    adia__solve_scale_pow2(S->n, x, S->ea - S->eb, x);
    adia__phase("solve: b, x0 scaled");
    double t0 = adia__now_ms();
    s = gpu ? run_gpu(S, method, bs ? bs : b, bs ? 0 : -S->eb, x)
            : adia__solve_cpu_run(S, method, bs, x, w);
    if (!gpu) S->info->time_ms = adia__now_ms() - t0;
    adia__phase("solve: the method");
    int64_t lost, bad;
    scale_back(S->n, x, S->eb - S->ea, &lost, &bad);
    double any[2] = {bad >= 0, lost >= 0};   /* not finite, lost bits: one reduction */
    if (s == ADIA_OK && S->info->converged) global_max(S, any, 2);
    if (s == ADIA_OK && S->info->converged && any[0]) not_finite(S, x, bad);
    adia__phase("solve: x scaled back, checked");
    if (s == ADIA_OK && S->info->converged && any[1] && !bs) {   /* rare: bs made for the check */
        w = adia__alloc((size_t)S->n + 1, sizeof *w, "solver vectors");
        s = agree(S, w ? ADIA_OK : ADIA_ERR_NO_MEMORY);
        if (s == ADIA_OK) adia__solve_scale_pow2(S->n, b, -S->eb, bs = w);
    }
    if (s == ADIA_OK && S->info->converged && any[1]) s = check_rounded(S, bs, x, lost);
    free(w);
    return s;
}

/* What the scaled system needs beyond a finite b and x0: a tolerance
 * rtol ||b|| / sb above 0 (a subnormal rtol rounds it to 0: no residual
 * but an exact 0 would count as converged), and an initial guess
 * x0 sa / sb that does not overflow (x0 far larger than the solution of a
 * tiny b: its residual would be Inf).  big: max |A|; xbig: max |x0| over
 * every process. */
static adia_status check_scale(const solver *S, double rtol, double big, double xbig)
{
    if (!(S->tol > 0) || !isfinite(S->tol))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: rtol %g is too small: rtol ||b|| "
                          "rounds to %g on the scaled system, no residual can meet it", rtol,
                          S->tol);
    if (xbig > 0 && pow2_exponent(xbig) + S->ea - S->eb > 1024)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: the initial guess is out of scale "
                          "with b and A (max |x0| = %g, ||b|| = %.3g x 2^%d, max |A| = %g): "
                          "x0 |A| / ||b|| overflows a double; start from x0 = 0", xbig, S->bnorm,
                          S->eb, big);
    return ADIA_OK;
}

/* The caller's options (NULL: defaults) with "<= 0: the default" applied
 * (adia_solve_options_default holds the one set of defaults). */
static adia_solve_options resolved_options(const adia_solve_options *opt)
{
    adia_solve_options d, o;
    adia_solve_options_default(&d);
    o = opt ? *opt : d;
    if (o.max_iter <= 0) o.max_iter = d.max_iter;
    if (o.rtol <= 0) o.rtol = d.rtol;
    if (o.restart <= 0) o.restart = d.restart;
    return o;
}

/* info zeroed, with the stop reason a method that runs out of iterations keeps. */
static void info_reset(adia_solve_info *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->stop, sizeof info->stop, "iteration limit reached");
}

/* setup_ms: the call's wall clock since t_call less its iterations
 * (time_ms), so that the two add up to the call's total (adia.h). */
static void info_times(adia_solve_info *info, double t_call)
{
    if (!info) return;
    double total = adia__now_ms() - t_call;
    double it = info->time_ms > 0 && isfinite(info->time_ms) ? info->time_ms : 0;
    info->setup_ms = total > it ? total - it : 0;
}

/* The solve behind adia_solve and adia_solve_operator: op is A, b and x
 * its rows held here; device 1 runs the GPU methods on op's device
 * products. */
static adia_status solve(const adia__solve_op *op, const adia__solve_comm *comm, int device,
                         adia__solve_parked **park, const double *b, double *x,
                         const adia_solve_options *o, adia_solve_info *info)
{
    solver S = {.op = op, .comm = comm, .device = device, .n = op->n, .max_iter = o->max_iter,
                .restart = o->restart, .info = info, .park = park};
    adia__phase("solve: start");
    double top[3] = {0, op->max_abs, 0};   /* max |b|, max |A|, max |x0|: one reduction */
    ADIA_TRY(agree(&S, scan_start(S.n, op->first, b, x, &top[0], &top[2])));
    S.x_zero = top[2] == 0;   /* the rows held here */
    global_max(&S, top, 3);
    adia__phase("solve: b, x0 finite, their maxima");
    int be = 0;
    double bm = adia__solve_nrm2_from_max(&S, b, top[0], &be);   /* ||b|| = bm 2^be: finite, as b is */
    adia__phase("solve: ||b||");
    if (bm == 0) {   /* the solution is 0 */
        memset(x, 0, (size_t)S.n * sizeof *x);
        info->converged = 1;
        snprintf(info->stop, sizeof info->stop, "b = 0: x = 0");
        return ADIA_OK;
    }
    const double big = top[1];
    S.ea = pow2_exponent(big);
    S.eb = be + pow2_exponent(bm);   /* ||b|| itself may not fit a double */
    S.a_inv = ldexp(1.0, -S.ea);
    S.bnorm = ldexp(bm, be - S.eb);
    S.tol = o->rtol * S.bnorm;
    adia_status s = agree(&S, check_scale(&S, o->rtol, big, top[2]));
    adia__phase("solve: x0's scale");
    S.m_alpha = ldexp(1.0, S.ea);
    if (s == ADIA_OK && o->jacobi) s = jacobi_inverse(op->diag, S.n, op->first, S.ea, &S.diag.host);
    else if (s == ADIA_OK) s = adia__solve_precond_stage(o->precond, S.ea, &S.diag, &S.M);
    s = agree(&S, s);
    adia__phase("solve: Jacobi inverse / stage");
    if (s == ADIA_OK) s = run(&S, o->method, b, x);
    if (s == ADIA_OK && !device) {   /* the GPU counts its own */
        info->spmv_ms = S.spmv_ms;
        info->spmvs = S.spmvs;
    }
    free(S.diag.host);
    return s;
}

static adia_status solve_matrix(const adia_matrix *A, adia_plan *plan, const double *b, double *x,
                                const adia_solve_options *opt, adia_solve_info *info);
static adia_status plan_max_abs(adia_plan *plan, double *big);

/* opt->jacobi on a GPU plan without a host matrix: a Jacobi preconditioner
 * on the plan for this call (its diagonal read, inverted and checked on
 * the device, handed to the methods there), in o in the flag's place;
 * *M: destroyed by the caller. */
static adia_status jacobi_on_plan(adia_plan *plan, adia_solve_options *o, adia_precond **M)
{
    *M = NULL;
    if (!o->jacobi) return ADIA_OK;
    adia_precond_options po;
    adia_precond_options_default(&po);
    po.kind = "jacobi";
    ADIA_TRY(adia_precond_create(plan, &po, M));
    o->jacobi = 0;
    o->precond = *M;
    return ADIA_OK;
}

/* adia_solve without A: the plan is the operator.  A CPU plan's matrix is
 * its format's (adia_plan_solve's way); a GPU plan needs none -- the scale
 * read on the device, Jacobi's diagonal (opt->jacobi) a Jacobi
 * preconditioner on the plan for this call, the rare host check of a
 * rounded x on the format made a matrix then (a caller who planned a host
 * matrix need not keep a copy of it for the solve: Python's GPU plans). */
static adia_status solve_plan_host(adia_plan *plan, const double *b, double *x,
                                   const adia_solve_options *opt, adia_solve_info *info)
{
    if (adia_plan_device(plan) < 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: A is NULL and plan is not a live "
                          "plan (one of them must give the matrix)");
    if (!b || !x) return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: b or x is NULL");
    const int32_t n = adia_plan_rows(plan);
    if (adia_plan_cols(plan) != n)
        return adia__error(ADIA_ERR_DIMENSION, "adia_solve: the plan is %d x %d, not square", n,
                          adia_plan_cols(plan));
    if (adia_plan_device(plan) == 0) {
        adia_matrix *A = NULL;
        ADIA_TRY(adia_format_to_matrix(adia_plan_format(plan), &A));
        adia_status s = solve_matrix(A, plan, b, x, opt, info);
        adia_matrix_destroy(A);
        return s;
    }
    adia_solve_options o = resolved_options(opt);
    ADIA_TRY(check_options(&o, "adia_solve"));
    ADIA_TRY(adia__solve_precond_check(&o, plan, "adia_solve"));
    adia_precond *jacobi = NULL;
    ADIA_TRY(jacobi_on_plan(plan, &o, &jacobi));
    double big = 0;
    adia_status s = plan_max_abs(plan, &big);
    adia__plan_op_ctx ctx;
    adia__solve_op op;
    adia__solve_op_plan(plan, NULL, &ctx, &op);
    op.max_abs = big;
    const adia__solve_comm one = {0};
    snprintf(info->format, sizeof info->format, "%s", adia_plan_format_name(plan));
    if (s == ADIA_OK) s = solve(&op, &one, 1, adia__plan_parked(plan), b, x, &o, info);
    adia__solve_op_plan_free(&ctx);
    adia_precond_destroy(jacobi);
    return s;
}

static adia_status solve_matrix(const adia_matrix *A, adia_plan *plan, const double *b, double *x,
                                const adia_solve_options *opt, adia_solve_info *info)
{
    adia_solve_info scratch;
    if (!info) info = &scratch;
    if (!A && plan) {
        info_reset(info);
        return solve_plan_host(plan, b, x, opt, info);
    }
    adia_solve_options o = resolved_options(opt);
    info_reset(info);
    ADIA_TRY(check_args(A, b, x, &o));
    ADIA_TRY(adia__solve_precond_check(&o, plan, "adia_solve"));
    adia_plan *use = NULL, *own = NULL;
    double *diag = NULL;
    adia_status s = solver_plan(A, plan, &o, &use, &own);
    if (s == ADIA_OK && o.jacobi) s = diagonal(&A->csr, &diag);
    if (s == ADIA_OK) {
        const int gpu = adia_plan_device(use) == 1;
        double big = 0;
        if (!gpu || adia__solve_plan_max_abs(use, &big) != ADIA_OK) big = max_abs(&A->csr);
        adia__plan_op_ctx ctx;
        adia__solve_op op;
        adia__solve_op_plan(use, A, &ctx, &op);   /* a GPU plan: A's CSR on the host */
        op.diag = diag;
        op.max_abs = big;
        const adia__solve_comm one = {0};
        snprintf(info->format, sizeof info->format, "%s", adia_plan_format_name(use));
        s = solve(&op, &one, gpu, plan == use ? adia__plan_parked(use) : NULL, b, x, &o, info);
        adia__solve_op_plan_free(&ctx);
    }
    adia_plan_destroy(own);
    free(diag);
    return s;
}

/* The default's fall-back (adia_solve_info.fallback): opt->precond made by
 * kind "auto" as mg -- the one kind auto may pick that can stop short
 * where Jacobi converges (a matrix that is not SPD, a grid mg does not
 * suit) -- made on the solve's plan (its rows: x's; another M is the
 * solve's error, before x is read), and no fall-back yet in this call. */
static int may_fall_back(const adia_solve_options *opt, const adia_plan *plan,
                         const adia_solve_info *info)
{
    const adia_precond *M = opt ? opt->precond : NULL;
    return M && M->magic == ADIA_MAGIC_PRECOND && M->automatic && !strcmp(M->ops->name, "mg") &&
           plan && M->plan == plan && !info->fallback[0];
}

/* After a solve that stopped short with may_fall_back: the options of the
 * solve again (Jacobi instead of M), and why, into *why. */
static adia_solve_options fall_back(const adia_solve_options *opt, const adia_solve_info *info,
                                    char *why, size_t len)
{
    snprintf(why, len, "the default preconditioner, mg, stopped short after %d iterations "
             "(%.120s)", info->iterations, info->stop);
    adia_solve_options o = *opt;
    o.precond = NULL;
    o.jacobi = 1;
    return o;
}

adia_status adia_solve(const adia_matrix *A, adia_plan *plan, const double *b, double *x,
                       const adia_solve_options *opt, adia_solve_info *info)
{
    const double t = adia__now_ms();
    adia_solve_info scratch;
    if (!info) info = &scratch;
    info->fallback[0] = 0;
    const int fall = may_fall_back(opt, plan, info) && x &&
                     (!A || (A->magic == ADIA_MAGIC_MATRIX && A->csr.rows == opt->precond->n));
    const int64_t n = fall ? opt->precond->n : 0;   /* x's rows */
    double *x0 = fall ? adia__alloc((size_t)n + 1, sizeof *x0, "initial guess") : NULL;
    if (fall && !x0) return ADIA_ERR_NO_MEMORY;
    if (x0) memcpy(x0, x, (size_t)n * sizeof *x0);
    adia_status s = solve_matrix(A, plan, b, x, opt, info);
    if (s == ADIA_OK && fall && !info->converged) {
        char why[sizeof info->fallback];
        const adia_solve_options o = fall_back(opt, info, why, sizeof why);
        memcpy(x, x0, (size_t)n * sizeof *x0);
        s = solve_matrix(A, plan, b, x, &o, info);
        snprintf(info->fallback, sizeof info->fallback, "%s", why);
    }
    free(x0);
    info_times(info, t);
    return s;
}

/* Whether adia_solve_operator runs op on the GPU (opt->device 1, or -1
 * with apply_device set and a device usable). */
static adia_status operator_device(const adia_operator *op, int device, int *gpu)
{
    int count = 0;
    *gpu = 0;
    if (device == 0 || (device < 0 && !op->apply_device)) return ADIA_OK;
    if (device < 0) {
        *gpu = adia_gpu_device_count(&count) == ADIA_OK && count > 0;
        return ADIA_OK;
    }
    if (!op->apply_device)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve_operator: device 1 needs "
                          "op->apply_device");
    ADIA_TRY(adia_gpu_device_count(&count));
    if (count == 0)
        return adia__error(ADIA_ERR_NO_DEVICE, "adia_solve_operator: device 1: no usable CUDA "
                          "device");
    *gpu = 1;
    return ADIA_OK;
}

/* op and the vectors for the CPU methods (apply) or the GPU's
 * (apply_device; sum_device with max_device, or neither). */
static adia_status check_operator(const adia_operator *op, const void *b, const void *x, int gpu,
                                  const char *f)
{
    if (!op || op->n < 0 || (op->n > 0 && (!b || !x)))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: %s", f, !op ? "op is NULL"
                          : op->n < 0 ? "op->n is negative" : "b or x is NULL");
    if (gpu ? !op->apply_device : !op->apply)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: op->%s is NULL", f,
                          gpu ? "apply_device" : "apply");
    if (gpu && !op->sum_device != !op->max_device)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: op->sum_device and op->max_device are set "
                          "together (several processes) or not at all", f);
    return ADIA_OK;
}

static adia_status solve_op(const adia_operator *op, const double *b, double *x,
                            const adia_solve_options *opt, adia_solve_info *info)
{
    const char *f = "adia_solve_operator";
    adia_solve_options o = resolved_options(opt);
    adia_solve_info scratch;
    if (!info) info = &scratch;
    info_reset(info);
    if (!op) return adia__error(ADIA_ERR_INVALID_ARG, "%s: op is NULL", f);
    if (!(op->max_abs >= 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: op->max_abs = %g", f, op->max_abs);
    ADIA_TRY(check_options(&o, f));
    int gpu = 0;
    ADIA_TRY(operator_device(op, o.device, &gpu));
    ADIA_TRY(check_operator(op, b, x, gpu, f));
    adia__solve_op A;
    adia__solve_comm comm;
    adia__solve_op_user(op, &A, &comm);
    ADIA_TRY(agree_comm(&comm, adia__solve_precond_check_op(&o, op->n, gpu, f)));
    return solve(&A, &comm, gpu, NULL, b, x, &o, info);
}

adia_status adia_solve_operator(const adia_operator *op, const double *b, double *x,
                                const adia_solve_options *opt, adia_solve_info *info)
{
    const double t = adia__now_ms();
    adia_status s = solve_op(op, b, x, opt, info);
    info_times(info, t);
    return s;
}

static adia_status solve_op_device(const adia_operator *op, const double *d_b, double *d_x,
                                   const adia_solve_options *opt, adia_solve_info *info,
                                   void *stream)
{
    const char *f = "adia_solve_operator_device";
    adia_solve_options o = resolved_options(opt);
    adia_solve_info scratch;
    if (!info) info = &scratch;
    info_reset(info);
    ADIA_TRY(check_operator(op, d_b, d_x, 1, f));
    ADIA_TRY(check_options(&o, f));
    adia__solve_op A;
    adia__solve_comm comm;
    adia__solve_op_user(op, &A, &comm);
    ADIA_TRY(agree_comm(&comm, adia__solve_precond_check_op(&o, op->n, 1, f)));
    int count = 0;
    ADIA_TRY(adia_gpu_device_count(&count));
    if (count == 0) return adia__error(ADIA_ERR_NO_DEVICE, "%s: no usable CUDA device", f);
    if (!(op->max_abs >= 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: op->max_abs = %g", f, op->max_abs);
    double big = op->max_abs;   /* the scale: every process's largest */
    if (comm.max) comm.max(comm.ctx, &big, 1);
    const int ea = pow2_exponent(big);
    adia__solve_diag diag = {0};
    const adia_precond *stage = NULL;
    adia_status s = o.jacobi ? jacobi_inverse(op->diag, op->n, op->first, ea, &diag.host)
                             : adia__solve_precond_stage(o.precond, ea, &diag, &stage);
    s = agree_comm(&comm, s);
    if (s == ADIA_OK) {
        adia_solve_gpu_args g = {.op = &A, .comm = &comm, .method = o.method,
                                 .restart = o.restart, .d_b = d_b, .d_x = d_x,
                                 .inv_diag = diag.host, .d_inv_diag = diag.dev,
                                 .d_inv_vt = diag.dev_vt, .M = stage, .a_scale = ldexp(1.0, -ea),
                                 .scale = 1, .rtol = o.rtol, .max_iter = o.max_iter,
                                 .stream = stream};
        s = adia__solve_gpu(&g, info);
    }
    free(diag.host);
    return s;
}

adia_status adia_solve_operator_device(const adia_operator *op, const double *d_b, double *d_x,
                                       const adia_solve_options *opt, adia_solve_info *info,
                                       void *stream)
{
    const double t = adia__now_ms();
    adia_status s = solve_op_device(op, d_b, d_x, opt, info, stream);
    info_times(info, t);
    return s;
}

/* max |A(i,j)| of a GPU plan: read on the device where its format keeps
 * its values in one array (the diagonal formats), else from its matrix
 * (adia_format_to_matrix: a format built on the device comes down once). */
static adia_status plan_max_abs(adia_plan *plan, double *big)
{
    if (adia__solve_plan_max_abs(plan, big) == ADIA_OK) return ADIA_OK;
    adia_matrix *A = NULL;
    ADIA_TRY(adia_format_to_matrix(adia_plan_format(plan), &A));
    *big = max_abs(&A->csr);
    adia_matrix_destroy(A);
    return ADIA_OK;
}

static adia_status solve_plan(adia_plan *plan, const void *b, void *x,
                              const adia_solve_options *opt, adia_solve_info *info, void *stream)
{
    if (adia_plan_device(plan) < 0) return adia__error(ADIA_ERR_INVALID_HANDLE, "adia_plan_solve: "
                                                      "plan is not a live plan");
    if (!b || !x) return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_solve: b or x is NULL");
    int32_t n = adia_plan_rows(plan);
    if (adia_plan_cols(plan) != n)
        return adia__error(ADIA_ERR_DIMENSION, "adia_plan_solve: the plan is %d x %d, not square",
                          n, adia_plan_cols(plan));
    if (adia_plan_device(plan) == 0) {   /* host vectors: the full solver, on the plan's matrix */
        adia_matrix *A = NULL;
        ADIA_TRY(adia_format_to_matrix(adia_plan_format(plan), &A));
        adia_status s = adia_solve(A, plan, b, x, opt, info);
        adia_matrix_destroy(A);
        return s;
    }
    adia_solve_options o = resolved_options(opt);
    adia_solve_info scratch;
    if (!info) info = &scratch;
    memset(info, 0, sizeof *info);
    ADIA_TRY(check_options(&o, "adia_plan_solve"));
    ADIA_TRY(adia__solve_precond_check(&o, plan, "adia_plan_solve"));
    snprintf(info->format, sizeof info->format, "%s", adia_plan_format_name(plan));
    double big = 0;
    ADIA_TRY(plan_max_abs(plan, &big));
    const int ea = pow2_exponent(big);   /* the methods run on A / 2^ea, as adia_solve's */
    adia__solve_diag diag = {0};
    const adia_precond *stage = NULL;
    adia_precond *jacobi = NULL;
    ADIA_TRY(jacobi_on_plan(plan, &o, &jacobi));
    adia_status s = adia__solve_precond_stage(o.precond, ea, &diag, &stage);
    adia__plan_op_ctx ctx;
    adia__solve_op A;
    adia__solve_op_plan(plan, NULL, &ctx, &A);
    const adia__solve_comm one = {0};
    adia_solve_gpu_args g = {.op = &A, .comm = &one, .method = o.method, .restart = o.restart,
                             .d_b = b, .d_x = x, .inv_diag = diag.host,
                             .d_inv_diag = diag.dev, .d_inv_vt = diag.dev_vt, .M = stage,
                             .a_scale = ldexp(1.0, -ea), .scale = 1, .rtol = o.rtol,
                             .max_iter = o.max_iter, .stream = stream,
                             .park = adia__plan_parked(plan)};
    if (s == ADIA_OK) s = adia__solve_gpu(&g, info);
    adia__solve_op_plan_free(&ctx);
    free(diag.host);
    adia_precond_destroy(jacobi);
    return s;
}

adia_status adia_plan_solve(adia_plan *plan, const void *b, void *x,
                            const adia_solve_options *opt, adia_solve_info *info, void *stream)
{
    const double t = adia__now_ms();
    adia_solve_info scratch;
    if (!info) info = &scratch;
    info->fallback[0] = 0;
    /* a CPU plan's solve is adia_solve's, fall-back included */
    const int fall = may_fall_back(opt, plan, info) && x && adia_plan_device(plan) == 1;
    const adia_value_type vt = fall ? adia_plan_value_type(plan) : ADIA_DOUBLE;
    const int64_t n = fall ? opt->precond->n : 0;
    void *x0 = NULL;
    adia_status s = fall ? adia__precond_array(opt->precond, n, NULL, &x0) : ADIA_OK;   /* x0 kept */
    if (s == ADIA_OK && fall) s = adia__precond_convert_gpu(vt, vt, n, 1.0, x, x0, stream);
    if (s == ADIA_OK) s = solve_plan(plan, b, x, opt, info, stream);
    if (s == ADIA_OK && fall && !info->converged) {
        char why[sizeof info->fallback];
        const adia_solve_options o = fall_back(opt, info, why, sizeof why);
        s = adia__precond_convert_gpu(vt, vt, n, 1.0, x0, x, stream);
        if (s == ADIA_OK) s = solve_plan(plan, b, x, &o, info, stream);
        snprintf(info->fallback, sizeof info->fallback, "%s", why);
    }
    if (x0) adia__precond_array_free(opt->precond, x0);
    info_times(info, t);
    return s;
}
