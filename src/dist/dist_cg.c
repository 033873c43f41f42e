/* dist_cg.c -- CG on a device matrix with every vector on the device
 * (adia_dist_solve, method CG).  Chronopoulos-Gear CG: with u = M^-1 r and
 * w = A u, the three scalars u'w, r'u and r'r of an iteration are summed
 * over the processes in ONE reduction -- ncclAllReduce on the device when
 * the halo moves by NCCL, else one MPI_Allreduce of 3 doubles on the host
 * (a device pointer never reaches MPI, which need not be CUDA-aware) --
 * then
 *   beta = gamma / gamma_prev, alpha = gamma / (delta - beta gamma / alpha_prev)
 *   p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = M^-1 r
 * (first iteration: beta = 0, alpha = gamma / delta; delta - beta gamma /
 * alpha_prev is p'Ap).  One product and one reduction an iteration against
 * the CPU CG's one product and two reductions, the same iterates in exact
 * arithmetic.
 *
 * Everything else is what adia_solve_operator does for the CPU methods
 * (src/solve/solve.c; libadia keeps it private, so it is restated here):
 * the system scaled by powers of two (A / 2^ea, b / 2^eb) so that dot
 * products neither overflow nor underflow; the stop test on the recurrence
 * ||r|| <= rtol ||b||; "converged" only from the true residual b - A x,
 * recomputed by one more distributed product, with at most CG_RESTARTS
 * restarts from it when the recurrence drifted; a non-finite residual or
 * solution is a stop reason, never success.  Every decision is taken on
 * reduced values, so all processes iterate in step.  A CUDA failure on one
 * process makes its partial sums NaN, so every process stops at the next
 * reduction, and the error is agreed after the solve. */
#include "dist_cg.h"
#include "dist_device.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#define CG_RESTARTS 3   /* libadia's SOLVE_RESTARTS */

typedef struct dcg {
    adia_dist_matrix *D;
    cudaStream_t st;
    int64_t n;                   /* rows held here */
    double *mem;                 /* device: one allocation for all below */
    double *b, *x, *r, *w, *p, *s, *u, *inv_diag, *partial, *sums;
    double *h_sums;              /* pinned: the 3 sums */
    double *h;                   /* host scratch, n values */
    cudaEvent_t ev[4];           /* a product's start, end; NCCL sum's start, end */
    int timing;                  /* a product's events await reading */
    double a_inv;                /* 2^-ea: the products compute (A / 2^ea) x */
    double bnorm, tol;           /* ||b / 2^eb|| and rtol times it */
    int max_iter;
    adia_status failed;          /* this process's first failure */
    char why[512];
    double spmv_ms;
    int spmvs;
    adia_solve_info *info;
} dcg;

/* ------------------------------------------------ failures and timing */

/* A local failure is remembered, not returned: the peers are in the same
 * collective step and must be met there (its sums become NaN instead). */
static void note(dcg *c, adia_status s)
{
    if (s == ADIA_OK || c->failed != ADIA_OK) return;
    c->failed = s;
    snprintf(c->why, sizeof c->why, "%s", adia_last_error());
}

static void cuda_note(dcg *c, cudaError_t e, const char *call)
{
    note(c, adia__dist_cuda(e, call));
}

/* Milliseconds between two recorded events (0 if they cannot tell). */
static double elapsed_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    if (cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return ms;
}

/* The previous product's time into spmv_ms (its end has long passed: a
 * reduction synchronised the stream since). */
static void spmv_time(dcg *c)
{
    if (c->timing) c->spmv_ms += elapsed_ms(c->ev[0], c->ev[1]);
    c->timing = 0;
}

static void allreduce(dcg *c, double *v, int count, MPI_Op op)
{
    double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, op, c->D->comm);
    c->D->reduce_ms += (MPI_Wtime() - t0) * 1e3;
}

/* ------------------------------------------------------ host helpers */

/* ||a|| over every process, scale-safe as libadia's nrm2: a power of two
 * near the global max |a_i| scales the sum of squares (NaN gives NaN). */
static double global_nrm2(dcg *c, const double *a, int64_t n)
{
    double big = 0, sum = 0;
    for (int64_t i = 0; i < n; i++) big = fabs(a[i]) > big ? fabs(a[i]) : big;
    allreduce(c, &big, 1, MPI_MAX);
    if (isinf(big)) return big;
    int e = 0;
    if (big > 0) frexp(big, &e);
    const double down = ldexp(1.0, -e);
    for (int64_t i = 0; i < n; i++) sum += (a[i] * down) * (a[i] * down);
    allreduce(c, &sum, 1, MPI_SUM);
    return ldexp(sqrt(sum), e);
}

/* e with 2^(e-1) <= v < 2^e; 0 for 0, Inf or NaN (no scaling). */
static int pow2_exponent(double v)
{
    int e = 0;
    if (v > 0 && isfinite(v)) frexp(v, &e);
    return e;
}

/* b and x finite in the rows held here (adia_solve's check and message). */
static adia_status check_finite(const adia_dist_matrix *D, const double *b, const double *x)
{
    for (int64_t i = 0; i < D->rows; i++)
        if (!isfinite(b[i]) || !isfinite(x[i]))
            return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_solve: %s[%lld] = %g",
                                  isfinite(b[i]) ? "x (initial guess)" : "b",
                                  (long long)(D->first + i), isfinite(b[i]) ? x[i] : b[i]);
    return ADIA_OK;
}

/* 1 / (A(i,i) / 2^ea) into c->h (adia_solve's Jacobi check and message). */
static adia_status jacobi_inverse(dcg *c, int ea)
{
    const adia_dist_matrix *D = c->D;
    for (int64_t i = 0; i < c->n; i++) {
        double a = D->diag[i];
        if (a == 0 || !isfinite(a))
            return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_solve: Jacobi needs A(%lld,%lld) "
                                  "nonzero and finite, it is %g", (long long)(D->first + i),
                                  (long long)(D->first + i), a);
        c->h[i] = 1.0 / ldexp(a, -ea);
    }
    return ADIA_OK;
}

static void stop(dcg *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->info->stop, sizeof c->info->stop, fmt, ap);
    va_end(ap);
}

/* ||r|| <= tol: 1 converged, -1 non-finite (stop recorded), 0 go on. */
static int check_residual(dcg *c, double rnorm)
{
    if (!isfinite(rnorm)) {
        stop(c, "non-finite residual at iteration %d", c->info->iterations);
        return -1;
    }
    if (rnorm > c->tol) return 0;
    stop(c, "converged");
    return 1;
}

/* ------------------------------------------------------- device steps */

/* y = (A / 2^ea) x, halo included, on the solve's stream. */
static void product(dcg *c, const double *x, double *y)
{
    spmv_time(c);
    /* the staged transport waits for the stream before sending; waiting
     * here keeps the update kernel's time out of halo_ms */
    if (!adia__dist_nccl_active(c->D))
        cuda_note(c, cudaStreamSynchronize(c->st), "cudaStreamSynchronize");
    cuda_note(c, cudaEventRecord(c->ev[0], c->st), "cudaEventRecord");
    note(c, adia__dist_device_spmv(c->D, c->a_inv, x, 0.0, y, c->st));
    cuda_note(c, cudaEventRecord(c->ev[1], c->st), "cudaEventRecord");
    c->timing = 1;
    c->spmvs++;
}

/* v = (u'w, r'u, r'r) summed over the processes: the iteration's one
 * reduction.  A process that failed contributes NaN, so all stop. */
static void reduce(dcg *c, double v[3])
{
    const int nccl = adia__dist_nccl_active(c->D);
    cuda_note(c, adia__dist_cg_dots(c->n, c->u, c->w, c->r, c->partial, c->sums, c->st),
              "the dot products' kernels");
    if (nccl) {
        if (c->failed != ADIA_OK)   /* all bits set: a NaN */
            cuda_note(c, cudaMemsetAsync(c->sums, 0xff, 3 * sizeof *c->sums, c->st),
                      "cudaMemsetAsync");
        cuda_note(c, cudaEventRecord(c->ev[2], c->st), "cudaEventRecord");
        note(c, adia__dist_nccl_sum(c->D, c->sums, 3, c->st));
        cuda_note(c, cudaEventRecord(c->ev[3], c->st), "cudaEventRecord");
    }
    cuda_note(c, cudaMemcpyAsync(c->h_sums, c->sums, 3 * sizeof *c->sums, cudaMemcpyDeviceToHost,
                                 c->st), "cudaMemcpyAsync (sums)");
    cuda_note(c, cudaStreamSynchronize(c->st), "cudaStreamSynchronize");
    for (int k = 0; k < 3; k++) v[k] = c->failed != ADIA_OK ? NAN : c->h_sums[k];
    if (nccl) c->D->reduce_ms += elapsed_ms(c->ev[2], c->ev[3]);
    else allreduce(c, v, 3, MPI_SUM);
}

/* ||b - A x|| of the current x (scaled system), through the host. */
static double true_residual(dcg *c)
{
    product(c, c->x, c->r);
    cuda_note(c, adia__dist_cg_residual(c->n, c->b, c->r, NULL, c->r, c->st),
              "the residual kernel");
    cuda_note(c, cudaMemcpyAsync(c->h, c->r, (size_t)c->n * sizeof *c->h, cudaMemcpyDeviceToHost,
                                 c->st), "cudaMemcpyAsync (residual)");
    cuda_note(c, cudaStreamSynchronize(c->st), "cudaStreamSynchronize");
    if (c->failed != ADIA_OK)
        for (int64_t i = 0; i < c->n; i++) c->h[i] = NAN;
    return global_nrm2(c, c->h, c->n);
}

/* ----------------------------------------------------------- the method */

/* Chronopoulos-Gear CG from the current x; sets info->stop when it ends
 * early (converged, breakdown, non-finite), else the caller's "iteration
 * limit reached" stays. */
static void cg_method(dcg *c)
{
    const int64_t n = c->n;
    adia_solve_info *info = c->info;
    product(c, c->x, c->r);
    cuda_note(c, adia__dist_cg_residual(n, c->b, c->r, c->inv_diag, c->u, c->st),
              "the residual kernel");
    /* beta = 0 at first: p and s must not hold NaN (0 NaN is NaN) */
    cuda_note(c, cudaMemsetAsync(c->p, 0, 2 * (size_t)n * sizeof *c->p, c->st), "cudaMemsetAsync");
    product(c, c->u, c->w);
    double v[3], alpha = 0, gamma_prev = 0;
    reduce(c, v);
    for (int k = 0;; k++) {
        double delta = v[0], gamma = v[1];
        if (check_residual(c, sqrt(v[2])) || info->iterations >= c->max_iter) return;
        if (!isfinite(gamma)) {
            stop(c, "breakdown: (r, z) = %g (overflow)", gamma);
            return;
        }
        double beta = k ? gamma / gamma_prev : 0;
        double pap = k ? delta - beta * gamma / alpha : delta;
        if (!(pap > 0) || isinf(pap)) {
            stop(c, "breakdown: p'Ap = %g (A is not symmetric positive definite?)", pap);
            return;
        }
        alpha = gamma / pap;
        gamma_prev = gamma;
        cuda_note(c, adia__dist_cg_update(n, alpha, beta, c->inv_diag, c->w, c->p, c->s, c->x, c->r,
                                          c->u, c->st), "the CG update kernel");
        info->iterations++;
        product(c, c->u, c->w);
        reduce(c, v);
    }
}

/* The method, then the true residual; restarts from it when the recurrence
 * said converged and the true residual does not (libadia's run_cpu). */
static void run(dcg *c)
{
    adia_solve_info *info = c->info;
    int said = 0;
    for (int restart = 0;; restart++) {
        stop(c, "iteration limit reached");
        cg_method(c);
        double rnorm = true_residual(c);
        info->residual = rnorm / c->bnorm;
        info->converged = rnorm <= c->tol;   /* false for NaN */
        said = !strcmp(info->stop, "converged");
        if (info->converged || !said || restart == CG_RESTARTS || info->iterations >= c->max_iter)
            break;
    }
    if (said && !info->converged)
        stop(c, isfinite(info->residual)
                    ? "the recurrence converged, the true residual did not (%.3g): lost accuracy"
                    : "non-finite true residual (%g)", info->residual);
}

/* ------------------------------------------------------ set-up, end */

/* The device vectors (u is r without Jacobi), pinned sums, events. */
static adia_status setup(dcg *c, int jacobi)
{
    const size_t n = (size_t)c->n, vectors = jacobi ? 8 : 6;
    const size_t count = vectors * n + (size_t)adia__dist_cg_partials(c->n) + 3;
    c->st = c->D->dev->stream;
    c->h = adia__dist_alloc(n + 1, sizeof *c->h, "the solver's host vector");
    if (!c->h) return ADIA_ERR_NO_MEMORY;
    DIST_TRY(adia__dist_cuda(cudaMalloc((void **)&c->mem, count * sizeof *c->mem),
                             "cudaMalloc (solver vectors)"));
    double *at = c->mem;
    double **vec[] = {&c->b, &c->x, &c->r, &c->w, &c->p, &c->s, &c->u, &c->inv_diag};
    for (size_t k = 0; k < vectors; k++, at += n) *vec[k] = at;   /* p, s adjacent: one memset */
    if (!jacobi) c->u = c->r;
    c->partial = at;
    c->sums = at + adia__dist_cg_partials(c->n);
    DIST_TRY(adia__dist_cuda(cudaMallocHost((void **)&c->h_sums, 3 * sizeof *c->h_sums),
                             "cudaMallocHost (sums)"));
    for (int k = 0; k < 4; k++)
        DIST_TRY(adia__dist_cuda(cudaEventCreate(&c->ev[k]), "cudaEventCreate"));
    return ADIA_OK;
}

static void teardown(dcg *c)
{
    for (int k = 0; k < 4; k++)
        if (c->ev[k]) cudaEventDestroy(c->ev[k]);
    cudaFreeHost(c->h_sums);
    cudaFree(c->mem);
    free(c->h);
}

/* v 2^e into the device vector d, through the host scratch. */
static void upload_scaled(dcg *c, const double *v, int e, double *d)
{
    for (int64_t i = 0; i < c->n; i++) c->h[i] = ldexp(v[i], e);
    cuda_note(c, cudaMemcpy(d, c->h, (size_t)c->n * sizeof *d, cudaMemcpyHostToDevice),
              "cudaMemcpy (to the device)");
}

/* x finite on every process, else converged is taken back (x 2^(eb-ea)
 * can overflow). */
static void check_solution(dcg *c, const double *x)
{
    int64_t bad = -1;
    for (int64_t i = 0; i < c->n && bad < 0; i++)
        if (!isfinite(x[i])) bad = i;
    double any = bad >= 0;
    allreduce(c, &any, 1, MPI_MAX);
    if (!any) return;
    c->info->converged = 0;
    if (bad >= 0)
        stop(c, "non-finite solution: x[%lld] = %g is out of the range of double",
             (long long)(c->D->first + bad), x[bad]);
    else
        stop(c, "non-finite solution on another process: out of the range of double");
}

/* The scaled system on the device, solved; x back and unscaled. */
static void solve_scaled(dcg *c, const double *b, double *x, int ea, int eb)
{
    if (c->inv_diag)
        cuda_note(c, cudaMemcpy(c->inv_diag, c->h, (size_t)c->n * sizeof *c->h,
                                cudaMemcpyHostToDevice), "cudaMemcpy (Jacobi diagonal)");
    upload_scaled(c, b, -eb, c->b);
    upload_scaled(c, x, ea - eb, c->x);
    double t0 = MPI_Wtime();
    run(c);
    c->info->time_ms = (MPI_Wtime() - t0) * 1e3;
    spmv_time(c);
    cuda_note(c, cudaMemcpy(c->h, c->x, (size_t)c->n * sizeof *c->h, cudaMemcpyDeviceToHost),
              "cudaMemcpy (x back)");
    if (c->failed == ADIA_OK)
        for (int64_t i = 0; i < c->n; i++) x[i] = ldexp(c->h[i], eb - ea);
    if (c->info->converged) check_solution(c, x);
}

static adia_solve_options resolved(const adia_solve_options *opt)
{
    adia_solve_options o;
    adia_solve_options_default(&o);
    if (opt) o = *opt;
    if (o.max_iter <= 0) o.max_iter = 1000;
    if (o.rtol <= 0) o.rtol = 1e-8;
    return o;
}

adia_status adia__dist_cg_device(adia_dist_matrix *D, const double *b, double *x,
                                 const adia_solve_options *opt, adia_solve_info *info)
{
    adia_solve_options o = resolved(opt);
    memset(info, 0, sizeof *info);
    snprintf(info->stop, sizeof info->stop, "iteration limit reached");
    if (!(o.rtol < 1))   /* opt is the same everywhere: so is this */
        return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_solve: rtol %g", o.rtol);
    DIST_TRY(adia__dist_agree(D->comm, check_finite(D, b, x)));
    dcg c = {.D = D, .n = D->rows, .max_iter = o.max_iter, .info = info};
    double bnorm = global_nrm2(&c, b, c.n), big = D->max_abs;
    if (bnorm == 0) {   /* the solution is 0 */
        memset(x, 0, (size_t)c.n * sizeof *x);
        info->converged = 1;
        stop(&c, "b = 0: x = 0");
        return ADIA_OK;
    }
    allreduce(&c, &big, 1, MPI_MAX);
    const int ea = pow2_exponent(big), eb = pow2_exponent(bnorm);
    c.a_inv = ldexp(1.0, -ea);
    c.bnorm = ldexp(bnorm, -eb);
    c.tol = o.rtol * c.bnorm;
    adia_status s = setup(&c, o.jacobi);
    if (s == ADIA_OK && o.jacobi) s = jacobi_inverse(&c, ea);
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK) {
        solve_scaled(&c, b, x, ea, eb);
        info->spmv_ms = c.spmv_ms;
        info->spmvs = c.spmvs;
        s = c.failed == ADIA_OK ? ADIA_OK : adia_set_error(c.failed, "%s", c.why);
        s = adia__dist_agree(D->comm, s);
    }
    teardown(&c);
    return s;
}
