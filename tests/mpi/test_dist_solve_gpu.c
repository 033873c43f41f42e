/* test_dist_solve_gpu.c -- adia_dist_solve's CG on device matrices (every
 * vector on the device, one reduction an iteration) under mpirun -np 1, 2,
 * 3 against the CPU distributed CG on the same matrices: both converged,
 * iterations within 3, solutions within 1e-8 (relative), the same
 * iteration count on every process; with and without Jacobi, for the
 * staged transport and, where it can run, nccl.  Then: a limit of 5
 * iterations reports not converged with the CPU's residual; b = 0 gives
 * x = 0; NaN in b and a zero diagonal with Jacobi are errors on every
 * process; the communication counters move.  Without a CUDA device: exit
 * code 77 (skipped). */
#define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv */
#include "adia_mpi.h"
#include "disttest.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static int rank, size, devices;

#ifdef ADIA_HAVE_CUDA
static adia_dist_matrix *open_matrix(const char *src, int device)
{
    adia_plan_hints h = {.device = device};
    adia_dist_matrix *D = NULL;
    CHECK_OK(strstr(src, ".mtx") ? adia_dist_read_mtx(MPI_COMM_WORLD, src, &h, &D)
                                 : adia_dist_generate(MPI_COMM_WORLD, src, &h, &D));
    return D;
}

/* The CPU and the device matrix of src, b = A * ones (this process's rows). */
typedef struct pair {
    adia_dist_matrix *cpu, *gpu;
    adia_dist_info in;
    double *b, *xc, *xg;
} pair;

static int pair_open(pair *p, const char *src)
{
    memset(p, 0, sizeof *p);
    p->cpu = open_matrix(src, 0);
    p->gpu = open_matrix(src, 1);
    if (!p->cpu || !p->gpu || adia_dist_get_info(p->gpu, &p->in) != ADIA_OK) return 0;
    size_t m = (size_t)p->in.rows;
    double *one = malloc(m * sizeof *one);
    p->b = malloc(m * sizeof *p->b);
    p->xc = calloc(m, sizeof *p->xc);
    p->xg = calloc(m, sizeof *p->xg);
    for (size_t i = 0; i < m; i++) one[i] = 1;
    CHECK_OK(adia_dist_spmv(p->cpu, 1.0, one, 0.0, p->b));
    free(one);
    return 1;
}

static void pair_close(pair *p)
{
    adia_dist_destroy(p->cpu);
    adia_dist_destroy(p->gpu);
    free(p->b);
    free(p->xc);
    free(p->xg);
}

/* The same count on every process. */
static int agreed(int v)
{
    int m[2] = {v, -v};
    MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return m[0] == -m[1];
}

/* Device CG against CPU CG; the counters of the device matrix move. */
static void test_cg(const char *src, int jacobi, const char *transport)
{
    pair p;
    if (!pair_open(&p, src)) goto out;
    CHECK(!strcmp(p.in.transport, transport), "%s: transport %s, expected %s", src,
          p.in.transport, transport);
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.jacobi = jacobi;
    o.max_iter = 3000;
    o.rtol = 1e-11;
    adia_solve_info ic, ig;
    CHECK_OK(adia_dist_solve(p.cpu, p.b, p.xc, &o, &ic));
    CHECK_OK(adia_dist_solve(p.gpu, p.b, p.xg, &o, &ig));
    adia_dist_info after;
    CHECK_OK(adia_dist_get_info(p.gpu, &after));
    double e = dist_err(p.xg, p.xc, p.in.rows, p.xc, p.in.rows);
    CHECK(ic.converged && ig.converged && abs(ig.iterations - ic.iterations) <= 3 && e <= 1e-8 &&
          agreed(ig.iterations) && ig.residual <= o.rtol && !strcmp(ig.stop, "converged"),
          "%s CG%s (%s): CPU %d its (%s, %g), device %d its (%s, %g), rel diff %g", src,
          jacobi ? "+jacobi" : "", transport, ic.iterations, ic.stop, ic.residual,
          ig.iterations, ig.stop, ig.residual, e);
    /* one product an iteration, the first residual and w = A u, the true residual */
    CHECK(ig.spmvs >= ig.iterations + 3 && ig.time_ms > 0 && ig.spmv_ms > 0 &&
          ig.spmv_ms <= ig.time_ms * 1.01 && !strcmp(ig.format, p.in.format),
          "%s: info: %d products for %d its, %g ms (%g ms in products), format %s", src,
          ig.spmvs, ig.iterations, ig.time_ms, ig.spmv_ms, ig.format);
    CHECK(after.halo_ms > p.in.halo_ms && after.reduce_ms > p.in.reduce_ms,
          "%s: halo_ms %g -> %g, reduce_ms %g -> %g", src, p.in.halo_ms, after.halo_ms,
          p.in.reduce_ms, after.reduce_ms);
out:
    pair_close(&p);
}

/* Not converging, b = 0, and the errors. */
static void test_outcomes(void)
{
    pair p;
    if (!pair_open(&p, "lap2d5:30")) goto out;
    int64_t m = p.in.rows;
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.max_iter = 5;
    adia_solve_info ic, ig;
    CHECK_OK(adia_dist_solve(p.cpu, p.b, p.xc, &o, &ic));
    CHECK_OK(adia_dist_solve(p.gpu, p.b, p.xg, &o, &ig));
    CHECK(!ic.converged && !ig.converged && ig.iterations == 5 &&
          !strcmp(ig.stop, "iteration limit reached") &&
          fabs(ig.residual - ic.residual) <= 1e-8 * ic.residual,
          "5 iterations: CPU %d its, residual %.17g (%s); device %d its, residual %.17g (%s)",
          ic.iterations, ic.residual, ic.stop, ig.iterations, ig.residual, ig.stop);
    double *zero = calloc((size_t)m, sizeof *zero);
    memcpy(p.xg, p.b, (size_t)m * sizeof *p.xg);
    CHECK_OK(adia_dist_solve(p.gpu, zero, p.xg, NULL, &ig));
    CHECK(ig.converged && ig.iterations == 0 && !strcmp(ig.stop, "b = 0: x = 0") &&
          dist_err(p.xg, zero, m, zero, m) == 0, "b = 0: %s", ig.stop);
    if (rank == size - 1) p.b[m - 1] = NAN;
    char who[64] = "adia_solve: b[";
    if (size > 1) snprintf(who, sizeof who, "rank %d: adia_solve: b[", size - 1);
    CHECK_ERR(adia_dist_solve(p.gpu, p.b, p.xg, NULL, &ig), ADIA_ERR_INVALID_ARG, who);
    free(zero);
out:
    pair_close(&p);
}

/* Jacobi with A(k,k) = 0, k the last row: the CPU's error, on every process. */
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
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.jacobi = 1;
    char jac[96];
    snprintf(jac, sizeof jac, "Jacobi needs A(%lld,%lld)", (long long)k, (long long)k);
    CHECK_ERR(adia_dist_solve(D, b, x, &o, NULL), ADIA_ERR_INVALID_ARG, jac);
    adia_dist_destroy(D);
    free(val);
    free(b);
    free(x);
out:
    adia_matrix_destroy(B);
    adia_matrix_destroy(L);
}

/* Every SPD matrix, with the transport env asks for. */
static void test_transport(const char *env, const char *expect, const char *spd)
{
    setenv("ADIA_DIST_TRANSPORT", env, 1);
    test_cg("lap2d5:30", 0, expect);
    test_cg("lap3d7:10", 1, expect);
    test_cg("type2:2000", 0, expect);
    test_cg("type3:9000,7,0.4,sym", 1, expect);
    test_cg("band:500,4,sym", 0, expect);
    if (spd[0]) test_cg(spd, 0, expect);
    unsetenv("ADIA_DIST_TRANSPORT");
}

static void test_device(void)
{
#ifdef ADIA_HAVE_NCCL
    const int nccl = devices >= size;   /* one node: rank r on device r % devices */
#else
    const int nccl = 0;
#endif
    const char *shared = test_shared_path("lap2D_5pt_n100.mtx");
    char spd[512] = "";
    if (shared) snprintf(spd, sizeof spd, "%s", shared);
    test_transport("staged", "staged", spd);
    if (nccl) test_transport("nccl", "nccl", spd);
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
