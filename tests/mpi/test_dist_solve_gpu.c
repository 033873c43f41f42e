/* test_dist_solve_gpu.c -- adia_dist_solve on device matrices (libadia's
 * GPU methods over the distributed operator: every vector on the device,
 * split reductions across processes) under mpirun -np 1, 2, 3 against
 * single-process adia_solve on the same matrices: both converged, the
 * device's true residual within rtol, iterations within 3, solutions
 * within 1e-8 (relative), the same iteration count on every process; with
 * and without Jacobi, GMRES with restarts, on stencils, type II, type III,
 * bands (nonsymmetric ones for BiCGSTAB and GMRES) and real matrices, for
 * the staged transport and, where it can run, nccl (one process: its
 * reductions still go through ncclAllReduce, captured in chunks of
 * iterations as with many).  Then: limits of 5 and 15 iterations report
 * not converged with adia_solve's residual; b = 0 gives x = 0; NaN in b, a
 * zero diagonal with Jacobi and a GMRES restart out of range are errors on
 * every process; the staged transport's communication counters move; the
 * device trace (ADIA_DIST_TRACE) is written, its phases in order.
 * Without a CUDA device: exit code 77 (skipped). */
#define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv */
#include "adia_mpi.h"
#include "disttest.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>   /* rmdir */

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static int rank, size, devices;

#ifdef ADIA_HAVE_CUDA
/* src whole on every process (the single-process reference) and as a
 * device matrix; b = A * ones. */
typedef struct problem {
    adia_matrix *A;
    adia_dist_matrix *D;
    adia_dist_info in;
    double *b, *xs;   /* whole: n values */
    double *x;        /* this process's rows */
} problem;

static int problem_open(problem *p, const char *src)
{
    memset(p, 0, sizeof *p);
    const int file = strstr(src, ".mtx") != NULL;
    adia_plan_hints h = {.device = 1};
    CHECK_OK(file ? adia_matrix_read_mtx(src, &p->A) : adia_matrix_generate(src, &p->A));
    CHECK_OK(file ? adia_dist_read_mtx(MPI_COMM_WORLD, src, &h, &p->D)
                  : adia_dist_generate(MPI_COMM_WORLD, src, &h, &p->D));
    if (!p->A || !p->D || adia_dist_get_info(p->D, &p->in) != ADIA_OK) return 0;
    size_t n = (size_t)p->in.n;
    double *one = malloc(n * sizeof *one);
    p->b = malloc(n * sizeof *p->b);
    p->xs = calloc(n, sizeof *p->xs);
    p->x = calloc((size_t)p->in.rows, sizeof *p->x);
    for (size_t i = 0; i < n; i++) one[i] = 1;
    CHECK_OK(adia_matrix_spmv(p->A, 1.0, one, 0.0, p->b));
    free(one);
    return 1;
}

static void problem_close(problem *p)
{
    adia_dist_destroy(p->D);
    adia_matrix_destroy(p->A);
    free(p->b);
    free(p->xs);
    free(p->x);
}

/* The same count on every process. */
static int agreed(int v)
{
    int m[2] = {v, -v};
    MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return m[0] == -m[1];
}

static adia_solve_options options(adia_solver method, int jacobi, int restart, int max_iter)
{
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.method = method;
    o.jacobi = jacobi;
    o.restart = restart;
    o.max_iter = max_iter;
    o.rtol = 1e-11;   /* solutions within 1e-8 of each other: cond(A) x rtol below it */
    return o;
}

/* Products at least: BiCGSTAB two an iteration, the others one; the first
 * residual and the true residual. */
static int least_products(adia_solver method, int iterations)
{
    return (method == ADIA_SOLVE_BICGSTAB ? 2 : 1) * iterations + 2;
}

/* The device solve against adia_solve; max_diff: the iterations they may
 * differ by, -1: the solution only (BiCGSTAB on orsreg_1, whose count
 * moves by a hundred with the order of the partial sums alone: test_dist.c);
 * the counters of the device matrix move. */
static void test_solve(const char *src, adia_solver method, int jacobi, int restart, int max_diff,
                       const char *transport)
{
    problem p;
    if (!problem_open(&p, src)) goto out;
    CHECK(!strcmp(p.in.transport, transport), "%s: transport %s, expected %s", src,
          p.in.transport, transport);
    const char *asked = getenv("ADIA_DIST_REDUCE");
    const char *reduce = !strcmp(transport, "staged") ? "mpi"
                       : !strcmp(transport, "nccl") || (asked && !strcmp(asked, "nccl")) ? "nccl"
                                                                                         : "peer";
    CHECK(!strcmp(p.in.reduce, reduce), "%s: reductions by %s, expected %s", src, p.in.reduce,
          reduce);
    adia_solve_options o = options(method, jacobi, restart, 3000);
    adia_solve_info is, ig;
    CHECK_OK(adia_solve(p.A, NULL, p.b, p.xs, &o, &is));
    CHECK_OK(adia_dist_solve(p.D, p.b + p.in.first, p.x, &o, &ig));
    adia_dist_info after;
    CHECK_OK(adia_dist_get_info(p.D, &after));
    double e = dist_err(p.x, p.xs + p.in.first, p.in.rows, p.xs, p.in.n);
    int same = agreed(ig.iterations);
    int its_ok = max_diff < 0 || abs(ig.iterations - is.iterations) <= max_diff;
    CHECK(is.converged && ig.converged && its_ok && same && e <= 1e-8 && ig.residual <= o.rtol &&
          !strcmp(ig.stop, "converged"),
          "%s %s%s(%d) (%s): CPU %d its (%s, %g), device %d its (%s, %g), rel diff %g", src,
          adia_solver_name(method), jacobi ? "+jacobi" : "", restart, transport, is.iterations,
          is.stop, is.residual, ig.iterations, ig.stop, ig.residual, e);
    /* spmv_ms: NaN, as adia_solve's GPU methods (the products are fused
     * into the iteration) */
    CHECK(ig.spmvs >= least_products(method, ig.iterations) && ig.time_ms > 0 &&
          isnan(ig.spmv_ms) && !strcmp(ig.format, p.in.format),
          "%s %s: info: %d products for %d its, %g ms (%g ms in products), format %s", src,
          adia_solver_name(method), ig.spmvs, ig.iterations, ig.time_ms, ig.spmv_ms, ig.format);
    /* the host times the staged exchange and reductions; a graph's (one
     * process, nccl) run on the device, untimed */
    if (size > 1 && !strcmp(transport, "staged"))
        CHECK(after.halo_ms > p.in.halo_ms && after.reduce_ms > p.in.reduce_ms,
              "%s: halo_ms %g -> %g, reduce_ms %g -> %g", src, p.in.halo_ms, after.halo_ms,
              p.in.reduce_ms, after.reduce_ms);
out:
    problem_close(&p);
}

/* max_iter iterations, not enough: not converged, adia_solve's residual. */
static void test_limit(problem *p, adia_solver method, int jacobi, int max_iter)
{
    adia_solve_options o = options(method, jacobi, 10, max_iter);
    adia_solve_info is, ig;
    memset(p->xs, 0, (size_t)p->in.n * sizeof *p->xs);
    memset(p->x, 0, (size_t)p->in.rows * sizeof *p->x);
    CHECK_OK(adia_solve(p->A, NULL, p->b, p->xs, &o, &is));
    CHECK_OK(adia_dist_solve(p->D, p->b + p->in.first, p->x, &o, &ig));
    CHECK(!is.converged && !ig.converged && ig.iterations == max_iter &&
          !strcmp(ig.stop, "iteration limit reached") &&
          fabs(ig.residual - is.residual) <= 1e-8 * is.residual,
          "%s%s, %d iterations: CPU %d its, residual %.17g (%s); device %d its, residual %.17g "
          "(%s)", adia_solver_name(method), jacobi ? "+jacobi" : "", max_iter, is.iterations,
          is.residual, is.stop, ig.iterations, ig.residual, ig.stop);
}

/* Not converging, b = 0, and the errors. */
static void test_outcomes(void)
{
    problem p;
    if (!problem_open(&p, "lap2d5:31")) goto out;
    const adia_solver methods[] = {ADIA_SOLVE_CG, ADIA_SOLVE_BICGSTAB, ADIA_SOLVE_GMRES};
    for (int k = 0; k < 3; k++) test_limit(&p, methods[k], k == 2, 5);
    test_limit(&p, ADIA_SOLVE_GMRES, 0, 15);   /* the limit in the second cycle */
    int64_t m = p.in.rows;
    double *zero = calloc((size_t)m, sizeof *zero), *b = p.b + p.in.first;
    adia_solve_info ig;
    memcpy(p.x, b, (size_t)m * sizeof *p.x);
    CHECK_OK(adia_dist_solve(p.D, zero, p.x, NULL, &ig));
    CHECK(ig.converged && ig.iterations == 0 && !strcmp(ig.stop, "b = 0: x = 0") &&
          dist_err(p.x, zero, m, zero, m) == 0, "b = 0: %s", ig.stop);
    adia_solve_options o = options(ADIA_SOLVE_GMRES, 0, 1001, 10);
    CHECK_ERR(adia_dist_solve(p.D, b, p.x, &o, &ig), ADIA_ERR_INVALID_ARG,
              "GMRES restart 1001 outside 1..1000");
    if (rank == size - 1) b[m - 1] = NAN;
    char who[64] = "adia_solve: b[";
    if (size > 1) snprintf(who, sizeof who, "rank %d: adia_solve: b[", size - 1);
    CHECK_ERR(adia_dist_solve(p.D, b, p.x, NULL, &ig), ADIA_ERR_INVALID_ARG, who);
    free(zero);
out:
    problem_close(&p);
}

/* b and x on the device (adia_dist_solve_device, on a stream of the
 * caller's): the same iterations as with host vectors (their scaling by
 * powers of two is exact), the same x; NaN in b is an error everywhere. */
static void test_device_vectors(const char *src, adia_solver method, int jacobi, int restart)
{
    problem p;
    if (!problem_open(&p, src)) goto out;
    const int64_t m = p.in.rows;
    const size_t bytes = (size_t)m * sizeof(double) + 8;
    adia_solve_options o = options(method, jacobi, restart, 3000);
    adia_solve_info ih, id;
    double *b = p.b + p.in.first, *d_b = NULL, *d_x = NULL, *x = calloc((size_t)m + 1, 8);
    cudaStream_t st = NULL;
    CHECK(cudaStreamCreate(&st) == cudaSuccess && cudaMalloc((void **)&d_b, bytes) == cudaSuccess &&
              cudaMalloc((void **)&d_x, bytes) == cudaSuccess, "device vectors");
    CHECK_OK(adia_dist_solve(p.D, b, p.x, &o, &ih));
    cudaMemcpyAsync(d_b, b, (size_t)m * 8, cudaMemcpyHostToDevice, st);   /* queued on st */
    cudaMemsetAsync(d_x, 0, (size_t)m * 8, st);
    CHECK_OK(adia_dist_solve_device(p.D, d_b, d_x, &o, &id, st));
    cudaMemcpy(x, d_x, (size_t)m * 8, cudaMemcpyDeviceToHost);
    double e = dist_err(x, p.x, m, p.x, m);
    CHECK(ih.converged && id.converged && abs(id.iterations - ih.iterations) <= 1 && e <= 1e-10 &&
              agreed(id.iterations) && !strcmp(id.format, ih.format),
          "%s %s%s device vectors: host %d its (%s), device %d its (%s, %g), x differs by %g",
          src, adia_solver_name(method), jacobi ? "+jacobi" : "", ih.iterations, ih.stop,
          id.iterations, id.stop, id.residual, e);
    if (rank == size - 1) {
        double nan = NAN;
        cudaMemcpy(d_b + m - 1, &nan, 8, cudaMemcpyHostToDevice);
    }
    CHECK_ERR(adia_dist_solve_device(p.D, d_b, d_x, &o, &id, st), ADIA_ERR_INVALID_ARG,
              "non-finite");
    cudaFree(d_b);
    cudaFree(d_x);
    cudaStreamDestroy(st);
    free(x);
out:
    problem_close(&p);
}

/* x = 0, then the distributed solve with M alone (no opt->jacobi). */
static void solve_from_zero(problem *p, adia_solve_options *o, adia_precond *M, double *x,
                            adia_solve_info *info)
{
    o->jacobi = 0;
    o->precond = M;
    memset(x, 0, (size_t)p->in.rows * sizeof *x);
    CHECK_OK(adia_dist_solve(p->D, p->b + p->in.first, x, o, info));
}

/* Block Jacobi on device matrices (adia_dist_precond_create): mg on each
 * GPU's block (made on the device from the parts' diagonals) converges
 * with CG in under half of Jacobi's iterations, host and device vectors
 * alike, to the serial solution, as the block read back and planned anew
 * (ADIA_DIST_BLOCK=host) does: the same iterations, the same x; block
 * jacobi takes opt->jacobi's count. */
static void test_block_precond(const char *src)
{
    problem p;
    if (!problem_open(&p, src)) goto out;
    const int64_t m = p.in.rows, f = p.in.first, n = p.in.n;
    adia_precond *G = NULL, *J = NULL;
    adia_precond_options pg = {.kind = "mg"}, pj = {.kind = "jacobi"};
    setenv("ADIA_DIST_MG", "block", 1);   /* mg's default: across the GPUs (test_slab_mg) */
    CHECK_OK(adia_dist_precond_create(p.D, &pg, &G));
    CHECK_OK(adia_dist_precond_create(p.D, &pj, &J));
    adia_solve_options o = options(ADIA_SOLVE_CG, 1, 30, 3000);
    adia_solve_info ij, ib, im, idv;
    CHECK_OK(adia_dist_solve(p.D, p.b + f, p.x, &o, &ij));
    solve_from_zero(&p, &o, J, p.x, &ib);
    solve_from_zero(&p, &o, G, p.x, &im);
    adia_solve_options os = options(ADIA_SOLVE_CG, 0, 30, 3000);
    adia_solve_info is;
    CHECK_OK(adia_solve(p.A, NULL, p.b, p.xs, &os, &is));
    double e = dist_err(p.x, p.xs + f, m, p.xs, n);
    CHECK(ij.converged && ib.converged && ib.iterations == ij.iterations && im.converged &&
              2 * im.iterations < ij.iterations && agreed(im.iterations) && e <= 1e-6,
          "%s on %d GPUs: CG + Jacobi %d its, + block jacobi %d, + block mg %d (%s), rel diff %g",
          src, size, ij.iterations, ib.iterations, im.iterations, im.stop, e);
    double *d_b = NULL, *d_x = NULL, *x = calloc((size_t)m + 1, 8);
    if (cudaMalloc((void **)&d_b, (size_t)m * 8 + 8) == cudaSuccess &&
        cudaMalloc((void **)&d_x, (size_t)m * 8 + 8) == cudaSuccess) {
        cudaMemcpy(d_b, p.b + f, (size_t)m * 8, cudaMemcpyHostToDevice);
        cudaMemset(d_x, 0, (size_t)m * 8);
        CHECK_OK(adia_dist_solve_device(p.D, d_b, d_x, &o, &idv, NULL));
        cudaMemcpy(x, d_x, (size_t)m * 8, cudaMemcpyDeviceToHost);
        double d = dist_err(x, p.x, m, p.x, m);
        CHECK(idv.converged && abs(idv.iterations - im.iterations) <= 1 && d <= 1e-8,
              "%s block mg, device vectors: %d its (%s), host vectors %d, x differs by %g", src,
              idv.iterations, idv.stop, im.iterations, d);
    }
    setenv("ADIA_DIST_BLOCK", "host", 1);
    adia_precond *H = NULL;
    adia_solve_info ih;
    CHECK_OK(adia_dist_precond_create(p.D, &pg, &H));
    unsetenv("ADIA_DIST_BLOCK");
    unsetenv("ADIA_DIST_MG");
    solve_from_zero(&p, &o, H, x, &ih);
    double dh = dist_err(x, p.x, m, p.x, m);
    CHECK(ih.converged && abs(ih.iterations - im.iterations) <= 1 && dh <= 1e-10,
          "%s block mg by the host route: %d its (%s), the device's %d, x differs by %g", src,
          ih.iterations, ih.stop, im.iterations, dh);
    cudaFree(d_b);
    cudaFree(d_x);
    free(x);
    adia_dist_precond_destroy(p.D, J);   /* G, H: freed with the matrix */
out:
    problem_close(&p);
}

/* mg across the GPUs (slabs, kind mg's default where the halo moves by
 * NCCL), set up on the devices: z = M r on device vectors equals one
 * process's mg on the CPU
 * (the same hierarchy; sums in another order), and CG + M takes its
 * iterations (within 1) to its solution, host and device vectors alike.
 * gather: ADIA_MG_GATHER_ROWS (small: several levels in slabs). */
static void test_slab_mg(const char *src, const char *gather)
{
    setenv("ADIA_MG_GATHER_ROWS", gather, 1);
    problem p;
    adia_plan *P = NULL;
    adia_precond *Ms = NULL, *Md = NULL;
    if (!problem_open(&p, src)) goto out;
    const int64_t m = p.in.rows, f = p.in.first, n = p.in.n;
    adia_precond_options po = {.kind = "mg"};
    CHECK_OK(adia_plan_create(p.A, NULL, &P));
    CHECK_OK(adia_precond_create(P, &po, &Ms));
    CHECK_OK(adia_dist_precond_create(p.D, &po, &Md));
    if (!Ms || !Md) goto out;
    char text[4096] = "";
    adia_precond_explain(Md, text, sizeof text);
    CHECK(!strcmp(adia_dist_precond_scope(p.D, Md), "slabs") &&
              test_contains(text, "on the device"),
          "%s: mg's scope %s, set up: %s", src, adia_dist_precond_scope(p.D, Md), text);
    double *zs = malloc((size_t)n * sizeof *zs), *z = calloc((size_t)m + 1, sizeof *z);
    double *d_r = NULL, *d_z = NULL;
    CHECK_OK(adia_precond_apply(Ms, p.b, zs, NULL));
    if (cudaMalloc((void **)&d_r, (size_t)m * 8 + 8) == cudaSuccess &&
        cudaMalloc((void **)&d_z, (size_t)m * 8 + 8) == cudaSuccess) {
        cudaMemcpy(d_r, p.b + f, (size_t)m * 8, cudaMemcpyHostToDevice);
        CHECK_OK(adia_precond_apply(Md, d_r, d_z, NULL));
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "M r on the device");
        cudaMemcpy(z, d_z, (size_t)m * 8, cudaMemcpyDeviceToHost);
    }
    const double e = dist_err(z, zs + f, m, zs, n);
    CHECK(e <= 1e-10, "%s (gather at %s rows) on %d GPUs: M r differs by %g from one CPU "
          "process's", src, gather, size, e);
    adia_solve_options o = options(ADIA_SOLVE_CG, 0, 30, 3000);
    o.precond = Ms;
    adia_solve_info is, ih, idv;
    CHECK_OK(adia_solve(p.A, P, p.b, p.xs, &o, &is));
    solve_from_zero(&p, &o, Md, p.x, &ih);
    const double eh = dist_err(p.x, p.xs + f, m, p.xs, n);
    cudaMemset(d_z, 0, (size_t)m * 8);
    CHECK_OK(adia_dist_solve_device(p.D, d_r, d_z, &o, &idv, NULL));
    cudaMemcpy(z, d_z, (size_t)m * 8, cudaMemcpyDeviceToHost);
    const double ed = dist_err(z, p.xs + f, m, p.xs, n);
    CHECK(is.converged && ih.converged && idv.converged &&
              abs(ih.iterations - is.iterations) <= 1 && abs(idv.iterations - is.iterations) <= 1 &&
              agreed(ih.iterations) && eh <= 1e-8 && ed <= 1e-8,
          "%s: CG + mg %d its (%s), across %d GPUs %d (%s), device vectors %d (%s), x differs by "
          "%g, %g", src, is.iterations, is.stop, size, ih.iterations, ih.stop, idv.iterations,
          idv.stop, eh, ed);
    cudaFree(d_r);
    cudaFree(d_z);
    free(zs);
    free(z);
out:
    adia_precond_destroy(Ms);
    adia_plan_destroy(P);
    problem_close(&p);   /* Md: freed with the matrix */
    unsetenv("ADIA_MG_GATHER_ROWS");
}

/* A wide band (201 diagonals a part, more than 256 before the parts'
 * duplicates go): block Chebyshev made on the device equals the host
 * route's (the same iterations, the same x), block jacobi takes
 * opt->jacobi's count. */
static void test_block_wide(const char *src)
{
    problem p;
    if (!problem_open(&p, src)) goto out;
    const int64_t m = p.in.rows, f = p.in.first;
    adia_precond *J = NULL, *C = NULL, *H = NULL;
    adia_precond_options pj = {.kind = "jacobi"}, pc = {.kind = "cheb"};
    CHECK_OK(adia_dist_precond_create(p.D, &pj, &J));
    CHECK_OK(adia_dist_precond_create(p.D, &pc, &C));
    setenv("ADIA_DIST_BLOCK", "host", 1);
    CHECK_OK(adia_dist_precond_create(p.D, &pc, &H));
    unsetenv("ADIA_DIST_BLOCK");
    adia_solve_options o = options(ADIA_SOLVE_CG, 1, 30, 3000);
    adia_solve_info ij, ib, ic, ih;
    double *xh = calloc((size_t)m + 1, sizeof *xh);
    CHECK_OK(adia_dist_solve(p.D, p.b + f, p.x, &o, &ij));
    solve_from_zero(&p, &o, J, p.x, &ib);
    solve_from_zero(&p, &o, C, p.x, &ic);
    solve_from_zero(&p, &o, H, xh, &ih);
    const double d = dist_err(xh, p.x, m, p.x, m);
    CHECK(ij.converged && ib.converged && ib.iterations == ij.iterations && ic.converged &&
              ih.converged && abs(ih.iterations - ic.iterations) <= 1 && d <= 1e-10,
          "%s on %d GPUs: CG + Jacobi %d its, + block jacobi %d, + block cheb %d (host route %d), "
          "x differs by %g", src, size, ij.iterations, ib.iterations, ic.iterations,
          ih.iterations, d);
    free(xh);
out:
    problem_close(&p);   /* J, C, H: freed with the matrix */
}

/* Jacobi with A(k,k) = 0, k the last row: the CPU's error, on every
 * process, whatever the method. */
static void test_zero_diagonal(void)
{
    const char *spec = "lap2d5:12";
    int64_t n = 144, f = n * rank / size, m = n * (rank + 1) / size - f, k = n - 1;
    adia_matrix *L = NULL, *B = NULL;
    adia_csr_view v;
    CHECK_OK(adia_matrix_generate_rows(spec, f, m, NULL, NULL, &L));
    if (!L || adia_matrix_csr(L, &v) != ADIA_OK) goto out;
    double *val = malloc((v.nnz + 1) * sizeof *val), *b = malloc(m * sizeof *b),
           *x = calloc(m, sizeof *x);
    memcpy(val, v.values, v.nnz * sizeof *val);
    for (int32_t i = 0; i < v.rows; i++)
        for (int64_t q = v.rowptr[i]; q < v.rowptr[i + 1]; q++)
            if (f + i == k && v.colind[q] == k) val[q] = 0;
    CHECK_OK(adia_matrix_create_csr(v.rows, (int32_t)n, v.nnz, v.rowptr, v.colind, val,
                                    ADIA_DOUBLE, &B));
    adia_plan_hints h = {.device = 1};
    adia_dist_matrix *D = NULL;
    CHECK_OK(adia_dist_create(MPI_COMM_WORLD, n, f, B, &h, &D));
    for (int64_t i = 0; i < m; i++) b[i] = 1;
    char jac[96];
    snprintf(jac, sizeof jac, "Jacobi needs A(%lld,%lld)", (long long)k, (long long)k);
    const adia_solver methods[] = {ADIA_SOLVE_CG, ADIA_SOLVE_BICGSTAB, ADIA_SOLVE_GMRES};
    for (int q = 0; q < 3; q++) {
        adia_solve_options o = options(methods[q], 1, 10, 100);
        CHECK_ERR(adia_dist_solve(D, b, x, &o, NULL), ADIA_ERR_INVALID_ARG, jac);
    }
    adia_dist_destroy(D);
    free(val);
    free(b);
    free(x);
out:
    adia_matrix_destroy(B);
    adia_matrix_destroy(L);
}

/* diag(d(first .. first + count)) as a block of n columns; d takes six
 * values. */
static double six(int64_t i) { return 1 + (double)(i % 3) + 0.5 * (double)(i % 2); }

static adia_matrix *diagonal_rows(int64_t first, int64_t count, int64_t n)
{
    int64_t *rowptr = malloc((count + 1) * sizeof *rowptr);
    int32_t *col = malloc((count + 1) * sizeof *col);
    double *val = malloc((count + 1) * sizeof *val);
    for (int64_t i = 0; i <= count; i++) rowptr[i] = i;
    for (int64_t i = 0; i < count; i++) {
        col[i] = (int32_t)(first + i);
        val[i] = six(first + i);
    }
    adia_matrix *B = NULL;
    CHECK_OK(adia_matrix_create_csr((int32_t)count, (int32_t)n, count, rowptr, col, val,
                                    ADIA_DOUBLE, &B));
    free(rowptr);
    free(col);
    free(val);
    return B;
}

/* Six distinct eigenvalues: GMRES's Krylov space is complete after six
 * steps, where the new vector is rounding alone and the second pass's
 * norm comes from the vector itself (a lucky breakdown). */
static void test_lucky_breakdown(void)
{
    const int64_t n = 300, f = n * rank / size, m = n * (rank + 1) / size - f;
    adia_matrix *A = diagonal_rows(0, n, n), *B = diagonal_rows(f, m, n);
    adia_plan_hints h = {.device = 1};
    adia_dist_matrix *D = NULL;
    CHECK_OK(adia_dist_create(MPI_COMM_WORLD, n, f, B, &h, &D));
    double *b = malloc(n * sizeof *b), *xs = calloc(n, sizeof *xs), *x = calloc(m, sizeof *x);
    for (int64_t i = 0; i < n; i++) b[i] = six(i) * xval(i);
    adia_solve_options o = options(ADIA_SOLVE_GMRES, 0, 30, 100);
    adia_solve_info is, ig;
    CHECK_OK(adia_solve(A, NULL, b, xs, &o, &is));
    if (D) CHECK_OK(adia_dist_solve(D, b + f, x, &o, &ig));
    double e = dist_err(x, xs + f, m, xs, n);
    CHECK(D && is.converged && ig.converged && is.iterations <= 6 && ig.iterations <= 6 &&
          e <= 1e-8, "GMRES on six eigenvalues: CPU %d its (%s), device %d its (%s), rel diff "
          "%g", is.iterations, is.stop, ig.iterations, ig.stop, e);
    adia_dist_destroy(D);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    free(b);
    free(xs);
    free(x);
}

/* Every matrix and method, with the transport env asks for; shared: the
 * shared lap2D_5pt_n100 ("" when absent). */
static void test_transport(const char *env, const char *expect, const char *shared)
{
    const adia_solver cg = ADIA_SOLVE_CG, bicgstab = ADIA_SOLVE_BICGSTAB, gmres = ADIA_SOLVE_GMRES;
    setenv("ADIA_DIST_TRANSPORT", env, 1);
    test_solve("lap2d5:30", cg, 0, 30, 3, expect);
    test_solve("lap3d7:10", cg, 1, 30, 3, expect);
    test_solve("lap3d27:7x6x5", cg, 0, 30, 3, expect);   /* filled on the device */
    test_solve("type2:2000", cg, 0, 30, 3, expect);
    test_solve("type3:9000,7,0.4,sym", cg, 1, 30, 3, expect);
    test_solve("band:500,4,sym", cg, 0, 30, 3, expect);
    for (int jacobi = 0; jacobi < 2; jacobi++) {
        test_solve("lap2d5:31", bicgstab, jacobi, 30, 3, expect);
        test_solve("band:500,4", bicgstab, jacobi, 30, 3, expect);
        test_solve("lap2d5:31", gmres, jacobi, 10, 3, expect);   /* 45 restarts */
        test_solve("band:500,4", gmres, jacobi, 10, 3, expect);
    }
    test_solve("type3:9000,7,0.4", bicgstab, 1, 30, 3, expect);
    test_solve("type3:9000,7,0.4", gmres, 0, 10, 3, expect);
    test_solve("data/orsreg_1.mtx", bicgstab, 1, 30, -1, expect);
    test_solve("data/orsreg_1.mtx", gmres, 1, 30, 3, expect);
    if (shared[0]) {
        test_solve(shared, cg, 0, 30, 3, expect);
        /* its count moves by 3 with the order of the partial sums alone
         * (163 on one process, 160-163 on the CPU over 2 and 3) */
        test_solve(shared, bicgstab, 0, 30, 5, expect);
    }
    unsetenv("ADIA_DIST_TRANSPORT");
}

/* ADIA_DIST_TRACE: after a device solve every process has written its
 * stamps, each product's phases in order and, with reductions, theirs;
 * a nccl matrix has made its connections at creation (connect_ms). */
static void test_trace(const char *transport)
{
    char dir[64] = "/tmp/adia-trace-XXXXXX";
    if (rank == 0 && !mkdtemp(dir)) dir[0] = 0;
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(dir[0], "mkdtemp failed");
    if (!dir[0]) return;
    setenv("ADIA_DIST_TRACE", dir, 1);
    setenv("ADIA_DIST_TRANSPORT", transport, 1);
    problem p;
    if (problem_open(&p, "lap3d7:12")) {
        adia_solve_options o = options(ADIA_SOLVE_CG, 0, 30, 3000);
        adia_solve_info ig;
        CHECK_OK(adia_dist_solve(p.D, p.b + p.in.first, p.x, &o, &ig));
        const int nccl = strcmp(transport, "staged") != 0;   /* nccl, peer: NCCL's comm */
        CHECK(nccl ? p.in.connect_ms > 0 : p.in.connect_ms == 0, "%s: connect_ms %g", transport,
              p.in.connect_ms);
        char path[128], tag[32];
        snprintf(path, sizeof path, "%s/trace-0.%d.tsv", dir, rank);
        FILE *f = fopen(path, "r");
        int products = 0, joins = 0, reductions = 0, order = 1, last = -1;
        unsigned long long t, t0 = 0;
        while (f && fscanf(f, "%31s %llu", tag, &t) == 2) {
            const int k = !strcmp(tag, "product") ? 0 : !strcmp(tag, "bands") ? 1
                        : !strcmp(tag, "interior") ? 2 : !strcmp(tag, "join") ? 3
                        : !strcmp(tag, "ends") ? 4 : -1;
            products += k == 0;
            joins += k == 3;
            reductions += !strcmp(tag, "reduce_end");
            if (k >= 0) {   /* a product's own stream: its phases in order */
                order &= k == 0 ? (last == -1 || last == 4) : k == last + 1;
                order &= t >= t0;
                t0 = t;
                last = k;
            }
        }
        if (f) fclose(f);
        const int reduce = size > 1 || nccl;
        CHECK(f && products > ig.iterations && joins == products && order &&
              (reduce ? reductions >= ig.iterations : reductions == 0),
              "%s (%s): %d products, %d joins, %d reductions for %d iterations, order %d",
              path, transport, products, joins, reductions, ig.iterations, order);
        remove(path);
    }
    problem_close(&p);
    unsetenv("ADIA_DIST_TRACE");
    unsetenv("ADIA_DIST_TRANSPORT");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) rmdir(dir);
}

/* A neighbour that never raises its flags (ADIA_DIST_PEER_TEST_MUTE,
 * the last rank): the processes it sends to give up after the timeout,
 * the solve stops without converging and fails on every process, naming
 * the timeout; one timeout, not one per product. */
static void test_peer_timeout(void)
{
    setenv("ADIA_DIST_TRANSPORT", "peer", 1);
    setenv("ADIA_DIST_REDUCE", "nccl", 1);   /* the halo's wait times out, not a reduction's */
    setenv("ADIA_DIST_PEER_TEST_MUTE", "one", 1);   /* not a rank: refused everywhere */
    adia_dist_matrix *B = NULL;
    adia_plan_hints h = {.device = 1};
    CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap3d7:12", &h, &B), ADIA_ERR_INVALID_ARG,
              "ADIA_DIST_PEER_TEST_MUTE=one: a rank");
    CHECK(B == NULL, "no matrix on failure");
    setenv("ADIA_DIST_PEER_TIMEOUT_S", "0.5", 1);
    char mute[16];
    snprintf(mute, sizeof mute, "%d", size - 1);
    setenv("ADIA_DIST_PEER_TEST_MUTE", mute, 1);
    problem p;
    if (problem_open(&p, "lap3d7:12")) {
        adia_solve_options o = options(ADIA_SOLVE_CG, 0, 30, 3000);
        adia_solve_info ig;
        const double t0 = MPI_Wtime();
        CHECK_ERR(adia_dist_solve(p.D, p.b + p.in.first, p.x, &o, &ig), ADIA_ERR_INTERNAL,
                  "did not send its halo or sums within 0.5 s");
        const double s = MPI_Wtime() - t0;
        CHECK(!ig.converged && s < 20, "converged %d after %.1f s", ig.converged, s);
    }
    problem_close(&p);
    unsetenv("ADIA_DIST_PEER_TEST_MUTE");
    unsetenv("ADIA_DIST_PEER_TIMEOUT_S");
    unsetenv("ADIA_DIST_TRANSPORT");
    unsetenv("ADIA_DIST_REDUCE");
}

/* The same for the reductions alone: a diagonal matrix (no halo) whose
 * last rank never raises its sums' epochs. */
static void test_peer_reduce_timeout(void)
{
    const int64_t n = 300, f = n * rank / size, m = n * (rank + 1) / size - f;
    adia_matrix *B = diagonal_rows(f, m, n);
    adia_plan_hints h = {.device = 1};
    adia_dist_matrix *D = NULL;
    char mute[16];
    snprintf(mute, sizeof mute, "%d", size - 1);
    setenv("ADIA_DIST_TRANSPORT", "peer", 1);
    setenv("ADIA_DIST_PEER_TIMEOUT_S", "0.5", 1);
    setenv("ADIA_DIST_PEER_TEST_MUTE", mute, 1);
    CHECK_OK(adia_dist_create(MPI_COMM_WORLD, n, f, B, &h, &D));
    adia_dist_info in = {0};
    if (D) CHECK_OK(adia_dist_get_info(D, &in));
    CHECK(D && in.neighbours == 0 && !strcmp(in.reduce, "peer"), "diagonal: %d neighbours, "
          "reductions by %s", in.neighbours, in.reduce);
    double *b = malloc(m * sizeof *b), *x = calloc(m, sizeof *x);
    for (int64_t i = 0; i < m; i++) b[i] = six(f + i);
    adia_solve_options o = options(ADIA_SOLVE_CG, 0, 30, 100);
    adia_solve_info ig = {0};
    const double t0 = MPI_Wtime();
    if (D)
        CHECK_ERR(adia_dist_solve(D, b, x, &o, &ig), ADIA_ERR_INTERNAL,
                  "did not send its halo or sums within 0.5 s");
    CHECK(!ig.converged && MPI_Wtime() - t0 < 20, "converged %d after %.1f s", ig.converged,
          MPI_Wtime() - t0);
    adia_dist_destroy(D);
    adia_matrix_destroy(B);
    free(b);
    free(x);
    unsetenv("ADIA_DIST_PEER_TEST_MUTE");
    unsetenv("ADIA_DIST_PEER_TIMEOUT_S");
    unsetenv("ADIA_DIST_TRANSPORT");
}

/* ADIA_DIST_REDUCE: nccl beside the peer halo solves alike (test_solve
 * checks the route); peer where the transport is not, or a value not
 * listed, is refused on every process. */
static void test_reduce_choice(void)
{
    adia_plan_hints h = {.device = 1};
    adia_dist_matrix *B = NULL;
    setenv("ADIA_DIST_TRANSPORT", "peer", 1);
    setenv("ADIA_DIST_REDUCE", "nccl", 1);
    test_solve("lap3d7:10", ADIA_SOLVE_CG, 1, 30, 3, "peer");
    test_solve("band:500,4", ADIA_SOLVE_BICGSTAB, 1, 30, 3, "peer");
    setenv("ADIA_DIST_REDUCE", "fast", 1);
    CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap3d7:12", &h, &B), ADIA_ERR_INVALID_ARG,
              "ADIA_DIST_REDUCE=fast: one of auto, nccl, peer");
    setenv("ADIA_DIST_REDUCE", "peer", 1);
    setenv("ADIA_DIST_TRANSPORT", "nccl", 1);
    CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap3d7:12", &h, &B), ADIA_ERR_UNSUPPORTED,
              "ADIA_DIST_REDUCE=peer: the transport is nccl");
    setenv("ADIA_DIST_TRANSPORT", "staged", 1);
    CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap3d7:12", &h, &B), ADIA_ERR_UNSUPPORTED,
              "ADIA_DIST_REDUCE=peer: the transport is staged");
    CHECK(B == NULL, "no matrix on failure");
    unsetenv("ADIA_DIST_REDUCE");
    unsetenv("ADIA_DIST_TRANSPORT");
}

static void test_device(void)
{
#ifdef ADIA_HAVE_NCCL
    const int nccl = devices >= size;   /* one node: rank r on device r % devices */
#else
    const int nccl = 0;
#endif
    const char *path = test_shared_path("lap2D_5pt_n100.mtx");
    char shared[512] = "";
    if (path) snprintf(shared, sizeof shared, "%s", path);
    test_transport("staged", "staged", shared);
    if (nccl) test_transport("nccl", "nccl", shared);
    if (nccl && size > 1) test_transport("peer", "peer", shared);
    test_trace("staged");
    if (nccl) test_trace("nccl");
    if (nccl && size > 1) test_trace("peer");
    if (nccl && size > 1) test_peer_timeout();
    if (nccl && size > 1) test_peer_reduce_timeout();
    if (nccl && size > 1) test_reduce_choice();
    test_lucky_breakdown();
    test_device_vectors("lap2d5:30", ADIA_SOLVE_CG, 0, 30);
    test_device_vectors("band:500,4", ADIA_SOLVE_BICGSTAB, 1, 30);
    test_device_vectors("lap2d5:31", ADIA_SOLVE_GMRES, 0, 10);
    test_block_precond("lap3d7:16x16x48");
    test_block_wide("band:3000,100,sym");
    if (nccl && size > 1) {
        test_slab_mg("lap3d7:20x18x29", "128");
        test_slab_mg("jump3d:40,8", "32768");
        test_slab_mg("lap2d5:300x257", "32768");
    }
    test_outcomes();
    test_zero_diagonal();
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_BEGIN();
    devices = dist_devices();
#ifdef ADIA_HAVE_CUDA
    if (devices) test_device();
#endif
    int rc = TEST_END();
    if (!devices && rank == 0) printf("SKIPPED: no CUDA device\n");
    MPI_Finalize();
    return rc ? rc : devices ? 0 : 77;
}
