/* dist_dsolve.c -- the core of adia_dist_solve on a device matrix
 * (dist_dsolve.h): b and x go to the device once, every vector stays
 * there, and a method (CG, BiCGSTAB, GMRES(m): dist_dsolve_*.c) iterates
 * with the steps below.  A reduction sums the local dot products of one
 * step over the processes -- ncclAllReduce on the device when the halo
 * moves by NCCL, else one MPI_Allreduce on the host (a device pointer
 * never reaches MPI, which need not be CUDA-aware) -- and the host reads
 * the sums and takes the decisions.
 *
 * Everything else is what adia_solve_operator does for the CPU methods
 * (src/solve/solve.c; libadia keeps it private, so it is restated here):
 * the system scaled by powers of two (A / 2^ea, b / 2^eb) so that dot
 * products neither overflow nor underflow; the method's stop test on
 * rtol ||b||; "converged" only from the true residual b - A x, recomputed
 * by one more distributed product, with at most SOLVE_RESTARTS restarts
 * from it when the method's recurrence drifted; a non-finite residual or
 * solution is a stop reason, never success.  Every decision is taken on
 * reduced values, so all processes iterate in step.  A CUDA failure on
 * one process makes its sums NaN, so every process stops at the next
 * reduction, and the error is agreed after the solve. */
#include "dist_dsolve.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#define SOLVE_RESTARTS 3   /* libadia's */

/* ------------------------------------------------ failures and timing */

void adia__dsolve_note(dsolve *c, adia_status s)
{
    if (s == ADIA_OK || c->failed != ADIA_OK) return;
    c->failed = s;
    snprintf(c->why, sizeof c->why, "%s", adia_last_error());
}

void adia__dsolve_cuda(dsolve *c, cudaError_t e, const char *call)
{
    adia__dsolve_note(c, adia__dist_cuda(e, call));
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
static void spmv_time(dsolve *c)
{
    if (c->timing) c->spmv_ms += elapsed_ms(c->ev[0], c->ev[1]);
    c->timing = 0;
}

static void allreduce(dsolve *c, double *v, int count, MPI_Op op)
{
    double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, op, c->D->comm);
    c->D->reduce_ms += (MPI_Wtime() - t0) * 1e3;
}

/* ------------------------------------------------------ host helpers */

/* ||a|| over every process, scale-safe as libadia's nrm2: a power of two
 * near the global max |a_i| scales the sum of squares (NaN gives NaN). */
static double global_nrm2(dsolve *c, const double *a, int64_t n)
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
static adia_status jacobi_inverse(dsolve *c, int ea)
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

void adia__dsolve_stop(dsolve *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->info->stop, sizeof c->info->stop, fmt, ap);
    va_end(ap);
}

int adia__dsolve_check_residual(dsolve *c, double rnorm)
{
    if (!isfinite(rnorm)) {
        adia__dsolve_stop(c, "non-finite residual at iteration %d", c->info->iterations);
        return -1;
    }
    if (rnorm > c->tol) return 0;
    adia__dsolve_stop(c, "converged");
    return 1;
}

/* ------------------------------------------------------- device steps */

void adia__dsolve_product(dsolve *c, const double *x, double *y)
{
    spmv_time(c);
    /* the staged transport waits for the stream before sending; waiting
     * here keeps the update kernel's time out of halo_ms (nothing to send,
     * as in one process: no wait at all) */
    if (!adia__dist_nccl_active(c->D) && c->D->halo.nsend)
        adia__dsolve_cuda(c, cudaStreamSynchronize(c->st), "cudaStreamSynchronize");
    adia__dsolve_cuda(c, cudaEventRecord(c->ev[0], c->st), "cudaEventRecord");
    adia__dsolve_note(c, adia__dist_device_spmv(c->D, c->a_inv, x, 0.0, y, c->st));
    adia__dsolve_cuda(c, cudaEventRecord(c->ev[1], c->st), "cudaEventRecord");
    c->timing = 1;
    c->spmvs++;
}

void adia__dsolve_residual(dsolve *c, double *u)
{
    adia__dsolve_product(c, c->x, c->r);
    adia__dsolve_cuda(c, adia__dist_residual(c->n, c->b, c->r, u ? c->inv_diag : NULL, u, c->st),
                      "the residual kernel");
}

/* c->sums[0..count) (the local dot products just launched) summed over
 * the processes into v.  A process that failed contributes NaN, so all
 * stop. */
static void reduce(dsolve *c, int count, double *v)
{
    const int nccl = adia__dist_nccl_active(c->D);
    if (nccl) {
        if (c->failed != ADIA_OK)   /* all bits set: a NaN */
            adia__dsolve_cuda(c, cudaMemsetAsync(c->sums, 0xff, (size_t)count * sizeof *c->sums,
                                                 c->st), "cudaMemsetAsync");
        adia__dsolve_cuda(c, cudaEventRecord(c->ev[2], c->st), "cudaEventRecord");
        adia__dsolve_note(c, adia__dist_nccl_sum(c->D, c->sums, count, c->st));
        adia__dsolve_cuda(c, cudaEventRecord(c->ev[3], c->st), "cudaEventRecord");
    }
    adia__dsolve_cuda(c, cudaMemcpyAsync(c->h_sums, c->sums, (size_t)count * sizeof *c->sums,
                                         cudaMemcpyDeviceToHost, c->st), "cudaMemcpyAsync (sums)");
    adia__dsolve_cuda(c, cudaStreamSynchronize(c->st), "cudaStreamSynchronize");
    for (int k = 0; k < count; k++) v[k] = c->failed != ADIA_OK ? NAN : c->h_sums[k];
    if (nccl) c->D->reduce_ms += elapsed_ms(c->ev[2], c->ev[3]);
    else allreduce(c, v, count, MPI_SUM);
}

void adia__dsolve_dots(dsolve *c, int count, const double *const *a, const double *const *b,
                       double *v)
{
    adia__dsolve_cuda(c, adia__dist_dots(c->n, count, a, b, c->partial, c->sums, c->st),
                      "the dot products' kernels");
    reduce(c, count, v);
}

void adia__dsolve_basis_dots(dsolve *c, int k, const double *V, const double *w, int self,
                             double *v)
{
    adia__dsolve_cuda(c, adia__dist_basis_dots(c->n, k, V, w, self, c->partial, c->sums, c->st),
                      "the basis dot products' kernels");
    reduce(c, k + !!self, v);
}

/* Through pinned memory: the copy is asynchronous.  The previous upload
 * has long been read: a reduction synchronised the stream since. */
void adia__dsolve_upload(dsolve *c, const double *v, int count)
{
    memcpy(c->h_coef, v, (size_t)count * sizeof *v);
    adia__dsolve_cuda(c, cudaMemcpyAsync(c->coef, c->h_coef, (size_t)count * sizeof *v,
                                         cudaMemcpyHostToDevice, c->st),
                      "cudaMemcpyAsync (coefficients)");
}

/* ||v|| over every process, scale-safe as global_nrm2, on the device:
 * max |v_i|, then the squares scaled by a power of two near it. */
static double device_nrm2(dsolve *c, const double *v)
{
    double big = 0, sum = 0;
    adia__dsolve_cuda(c, adia__dist_max_abs(c->n, v, &big, c->st), "the max |v| kernel");
    if (c->failed != ADIA_OK) big = NAN;
    allreduce(c, &big, 1, MPI_MAX);
    if (!isfinite(big)) return big;
    int e = 0;
    if (big > 0) frexp(big, &e);
    adia__dsolve_cuda(c, adia__dist_sumsq(c->n, v, ldexp(1.0, -e), c->partial, c->sums, c->st),
                      "the sum of squares' kernels");
    reduce(c, 1, &sum);
    return ldexp(sqrt(sum), e);
}

/* ||b - A x|| of the current x (scaled system). */
static double true_residual(dsolve *c)
{
    adia__dsolve_residual(c, NULL);
    return device_nrm2(c, c->r);
}

/* ------------------------------------------------------------- the run */

/* The method, then the true residual; restarts from it when the method
 * said converged and the true residual does not (libadia's run_cpu). */
static void run(dsolve *c)
{
    adia_solve_info *info = c->info;
    int said = 0;
    for (int restart = 0;; restart++) {
        adia__dsolve_stop(c, "iteration limit reached");
        c->method->iterate(c);
        double rnorm = true_residual(c);
        info->residual = rnorm / c->bnorm;
        info->converged = rnorm <= c->tol;   /* false for NaN */
        said = !strcmp(info->stop, "converged");
        if (info->converged || !said || restart == SOLVE_RESTARTS ||
            info->iterations >= c->max_iter)
            break;
    }
    if (said && !info->converged)
        adia__dsolve_stop(c, isfinite(info->residual)
                                 ? "the recurrence converged, the true residual did not (%.3g): "
                                   "lost accuracy"
                                 : "non-finite true residual (%g)", info->residual);
}

/* ------------------------------------------------------ set-up, end */

/* Device memory for count doubles, checked first: a clear message rather
 * than cudaMalloc's. */
static adia_status device_alloc(dsolve *c, size_t count, const char *method)
{
    size_t free_b = 0, total_b = 0, bytes = count * sizeof *c->mem;
    DIST_TRY(adia__dist_cuda(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"));
    if (bytes > free_b)
        return adia_set_error(ADIA_ERR_NO_MEMORY, "adia_dist_solve: %s needs %zu bytes (%.1f MB) "
                              "of device memory for %lld rows, %zu (%.1f MB) are free", method,
                              bytes, bytes / 1e6, (long long)c->n, free_b, free_b / 1e6);
    return adia__dist_cuda(cudaMalloc((void **)&c->mem, bytes), "cudaMalloc (solver vectors)");
}

/* count doubles from *at on */
static double *take(double **at, size_t count)
{
    double *p = *at;
    *at += count;
    return p;
}

/* b, x, the Jacobi diagonal, r and the method's vectors (adjacent, in
 * that order), partial sums, sums, coefficients; pinned sums and
 * coefficients; the host's scratch and workspace; events. */
static adia_status setup(dsolve *c, const adia_solve_options *o)
{
    const dsolve_need need = c->method->need(o->jacobi, o->restart);
    const size_t n = (size_t)c->n, vectors = 3 + !!o->jacobi + (size_t)need.vectors;
    const size_t partials = (size_t)adia__dist_dots_partials(c->n, need.sums);
    c->st = c->D->dev->stream;
    c->h = adia__dist_alloc(n + 1, sizeof *c->h, "the solver's host vector");
    c->hw = adia__dist_alloc(need.host + 1, sizeof *c->hw, "the solver's host workspace");
    if (!c->h || !c->hw) return ADIA_ERR_NO_MEMORY;
    DIST_TRY(device_alloc(c, vectors * n + partials + 2 * (size_t)need.sums,
                          adia_solver_name(o->method)));
    double *at = c->mem;
    c->b = take(&at, n);
    c->x = take(&at, n);
    c->inv_diag = o->jacobi ? take(&at, n) : NULL;
    c->r = take(&at, n);
    c->w = take(&at, (size_t)need.vectors * n);
    c->partial = take(&at, partials);
    c->sums = take(&at, (size_t)need.sums);
    c->coef = take(&at, (size_t)need.sums);
    DIST_TRY(adia__dist_cuda(cudaMallocHost((void **)&c->h_sums, 2 * (size_t)need.sums *
                                            sizeof *c->h_sums), "cudaMallocHost (sums)"));
    c->h_coef = c->h_sums + need.sums;
    for (int k = 0; k < 4; k++)
        DIST_TRY(adia__dist_cuda(cudaEventCreate(&c->ev[k]), "cudaEventCreate"));
    return ADIA_OK;
}

static void teardown(dsolve *c)
{
    for (int k = 0; k < 4; k++)
        if (c->ev[k]) cudaEventDestroy(c->ev[k]);
    cudaFreeHost(c->h_sums);
    cudaFree(c->mem);
    free(c->hw);
    free(c->h);
}

/* v 2^e into the device vector d, through the host scratch. */
static void upload_scaled(dsolve *c, const double *v, int e, double *d)
{
    for (int64_t i = 0; i < c->n; i++) c->h[i] = ldexp(v[i], e);
    adia__dsolve_cuda(c, cudaMemcpy(d, c->h, (size_t)c->n * sizeof *d, cudaMemcpyHostToDevice),
                      "cudaMemcpy (to the device)");
}

/* x finite on every process, else converged is taken back (x 2^(eb-ea)
 * can overflow). */
static void check_solution(dsolve *c, const double *x)
{
    int64_t bad = -1;
    for (int64_t i = 0; i < c->n && bad < 0; i++)
        if (!isfinite(x[i])) bad = i;
    double any = bad >= 0;
    allreduce(c, &any, 1, MPI_MAX);
    if (!any) return;
    c->info->converged = 0;
    if (bad >= 0)
        adia__dsolve_stop(c, "non-finite solution: x[%lld] = %g is out of the range of double",
                          (long long)(c->D->first + bad), x[bad]);
    else
        adia__dsolve_stop(c, "non-finite solution on another process: out of the range of "
                          "double");
}

/* The scaled system on the device, solved; x back and unscaled. */
static void solve_scaled(dsolve *c, const double *b, double *x, int ea, int eb)
{
    if (c->inv_diag)
        adia__dsolve_cuda(c, cudaMemcpy(c->inv_diag, c->h, (size_t)c->n * sizeof *c->h,
                                        cudaMemcpyHostToDevice), "cudaMemcpy (Jacobi diagonal)");
    upload_scaled(c, b, -eb, c->b);
    upload_scaled(c, x, ea - eb, c->x);
    double t0 = MPI_Wtime();
    run(c);
    c->info->time_ms = (MPI_Wtime() - t0) * 1e3;
    spmv_time(c);
    adia__dsolve_cuda(c, cudaMemcpy(c->h, c->x, (size_t)c->n * sizeof *c->h,
                                    cudaMemcpyDeviceToHost), "cudaMemcpy (x back)");
    if (c->failed == ADIA_OK)
        for (int64_t i = 0; i < c->n; i++) x[i] = ldexp(c->h[i], eb - ea);
    if (c->info->converged) check_solution(c, x);
}

/* adia_solve's defaults and checks (opt is the same everywhere: so is
 * the outcome). */
static adia_status resolved(const adia_solve_options *opt, adia_solve_options *o)
{
    adia_solve_options_default(o);
    if (opt) *o = *opt;
    if (o->max_iter <= 0) o->max_iter = 1000;
    if (o->rtol <= 0) o->rtol = 1e-8;
    if (o->restart <= 0) o->restart = 30;
    if (o->method != ADIA_SOLVE_CG && o->method != ADIA_SOLVE_BICGSTAB &&
        o->method != ADIA_SOLVE_GMRES)
        return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_solve: unknown method %d",
                              (int)o->method);
    if (o->method == ADIA_SOLVE_GMRES && o->restart > 1000)
        return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_solve: GMRES restart %d outside "
                              "1..1000", o->restart);
    if (!(o->rtol < 1))
        return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_solve: rtol %g", o->rtol);
    return ADIA_OK;
}

static const dsolve_method *method_of(adia_solver m)
{
    return m == ADIA_SOLVE_CG ? &adia__dsolve_cg
           : m == ADIA_SOLVE_BICGSTAB ? &adia__dsolve_bicgstab : &adia__dsolve_gmres;
}

adia_status adia__dist_solve_device(adia_dist_matrix *D, const double *b, double *x,
                                    const adia_solve_options *opt, adia_solve_info *info)
{
    adia_solve_options o;
    memset(info, 0, sizeof *info);
    snprintf(info->stop, sizeof info->stop, "iteration limit reached");
    DIST_TRY(resolved(opt, &o));
    DIST_TRY(adia__dist_agree(D->comm, check_finite(D, b, x)));
    dsolve c = {.D = D, .method = method_of(o.method), .n = D->rows, .max_iter = o.max_iter,
                .restart = o.restart, .info = info};
    double bnorm = global_nrm2(&c, b, c.n), big = D->max_abs;
    if (bnorm == 0) {   /* the solution is 0 */
        memset(x, 0, (size_t)c.n * sizeof *x);
        info->converged = 1;
        adia__dsolve_stop(&c, "b = 0: x = 0");
        return ADIA_OK;
    }
    allreduce(&c, &big, 1, MPI_MAX);
    const int ea = pow2_exponent(big), eb = pow2_exponent(bnorm);
    c.a_inv = ldexp(1.0, -ea);
    c.bnorm = ldexp(bnorm, -eb);
    c.tol = o.rtol * c.bnorm;
    adia_status s = setup(&c, &o);
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
