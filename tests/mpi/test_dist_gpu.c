/* test_dist_gpu.c -- the device path of adia_mpi under mpirun -np 1, 2, 3
 * (one node; several processes may share a GPU): adia_dist_spmv_device on
 * device matrices -- stencils, type II, type III, a band -- equals the
 * single-process product (rel err <= 1e-12), twice in a row on two
 * streams, for the staged transport and, when NCCL is built and every
 * process has a GPU of its own (or there is one process), for nccl (and
 * with several processes for peer, refused where it cannot run); host
 * vectors on a device matrix (adia_dist_spmv, adia_dist_check_spmv) too
 * (the solvers: test_dist_solve_gpu.c); Laplacians filled on the devices straight into
 * dia equal the CPU's blocks built through CSR; the transport refused or
 * chosen as documented.
 * Without a CUDA device: the fallbacks (device -1 is the CPU, device 1 is
 * ADIA_ERR_NO_DEVICE on every process), then exit code 77 (skipped). */
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

static adia_dist_matrix *generate(const char *spec, int device)
{
    adia_plan_hints h = {.device = device};
    adia_dist_matrix *D = NULL;
    CHECK_OK(adia_dist_generate(MPI_COMM_WORLD, spec, &h, &D));
    return D;
}

/* Errors that need no device: hints.device out of range, a device product
 * on a CPU matrix, device 1 without a GPU (no device anywhere only). */
static void test_refusals(void)
{
    adia_plan_hints h = {.device = 2};
    adia_dist_matrix *D = NULL;
    CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap2d5:20", &h, &D), ADIA_ERR_INVALID_ARG,
              "hints.device 2");
    double v[400] = {0}, w[400];
    D = generate("lap2d5:20", 0);
#ifdef ADIA_HAVE_CUDA
    CHECK_ERR(adia_dist_spmv_device(D, 1.0, v, 0.0, w, NULL), ADIA_ERR_INVALID_ARG,
              "planned on the CPU");
#else
    CHECK_ERR(adia_dist_spmv_device(D, 1.0, v, 0.0, w, NULL), ADIA_ERR_NO_DEVICE,
              "built without CUDA");
#endif
    adia_dist_destroy(D);
    if (devices) return;
    h.device = 1;
    CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap2d5:20", &h, &D), ADIA_ERR_NO_DEVICE,
              "hints.device 1");
    D = generate("lap2d5:20", -1);
    adia_dist_info in;
    CHECK(D && adia_dist_get_info(D, &in) == ADIA_OK && in.gpu == -1 &&
          !strcmp(in.transport, "mpi-host"), "device -1 without a GPU: the CPU");
    adia_dist_destroy(D);
}

#ifdef ADIA_HAVE_CUDA
#ifdef ADIA_HAVE_NCCL
static const int nccl_built = 1;
#else
static const int nccl_built = 0;
#endif

/* y = alpha A x + beta y: the whole matrix here, the device matrix's on
 * device vectors (pass 0: default stream, alpha 1, beta 0; pass 1: a
 * stream of its own, alpha 2, beta -0.5), then on host vectors. */
static void test_spmv(const char *spec, const char *transport)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_generate(spec, &A));
    adia_dist_matrix *D = generate(spec, 1);
    adia_dist_info in;
    if (!A || !D || adia_dist_get_info(D, &in) != ADIA_OK) goto out;
    CHECK(!strcmp(in.transport, transport) && in.gpu == rank % devices && in.ranks == size,
          "%s: transport %s (expected %s), device %d", spec, in.transport, transport, in.gpu);
    int64_t n = in.n, f = in.first, m = in.rows;
    double *xf = malloc(n * sizeof *xf), *yf = malloc(n * sizeof *yf), *y = malloc(m * sizeof *y);
    double *d_x = NULL, *d_y = NULL;
    cudaStream_t st = NULL;
    CHECK(cudaMalloc((void **)&d_x, m * sizeof *d_x) == cudaSuccess &&
          cudaMalloc((void **)&d_y, m * sizeof *d_y) == cudaSuccess &&
          cudaStreamCreate(&st) == cudaSuccess, "device vectors");
    for (int64_t i = 0; i < n; i++) xf[i] = xval(i);
    cudaMemcpy(d_x, xf + f, m * sizeof *d_x, cudaMemcpyHostToDevice);
    for (int pass = 0; pass < 3; pass++) {
        double alpha = pass ? 2.0 : 1.0, beta = pass ? -0.5 : 0.0;
        for (int64_t i = 0; i < n; i++) yf[i] = xval(n - 1 - i);
        memcpy(y, yf + f, m * sizeof *y);
        CHECK_OK(adia_matrix_spmv(A, alpha, xf, beta, yf));
        if (pass < 2) {
            cudaStream_t s = pass ? st : NULL;
            cudaMemcpy(d_y, y, m * sizeof *d_y, cudaMemcpyHostToDevice);
            CHECK_OK(adia_dist_spmv_device(D, alpha, d_x, beta, d_y, s));
            CHECK(cudaStreamSynchronize(s) == cudaSuccess &&
                  cudaMemcpy(y, d_y, m * sizeof *y, cudaMemcpyDeviceToHost) == cudaSuccess,
                  "%s: y back", spec);
        } else {
            CHECK_OK(adia_dist_spmv(D, alpha, xf + f, beta, y));
        }
        double e = dist_err(y, yf + f, m, yf, n);
        CHECK(e <= 1e-12, "%s (%s, %s vectors, pass %d): max rel err %g (rank %d: %s)", spec,
              in.transport, pass < 2 ? "device" : "host", pass, e, rank, in.format);
    }
    double c = 1;   /* the check recomputes A x: y of a plain product */
    CHECK_OK(adia_dist_spmv(D, 1.0, xf + f, 0.0, y));
    CHECK_OK(adia_dist_check_spmv(D, xf + f, y, &c));
    CHECK(c <= 1e-12, "%s: check against the blocks' CSR %g", spec, c);
    CHECK_ERR(adia_dist_spmv_device(D, 1.0, rank == size - 1 ? NULL : d_x, 0.0, d_y, NULL),
              ADIA_ERR_INVALID_ARG, "x or y is NULL");
    cudaStreamDestroy(st);
    cudaFree(d_x);
    cudaFree(d_y);
    free(xf);
    free(yf);
    free(y);
out:
    adia_dist_destroy(D);
    adia_matrix_destroy(A);
}

/* A Laplacian on device matrices is filled on each GPU straight into dia
 * (no CSR): the same matrix as the CPU's blocks built through CSR -- the
 * same layout, halo and nonzeros, the same products; its check by the
 * stencil's rule passes the product and catches a wrong entry. */
static void test_fill(const char *spec)
{
    adia_dist_matrix *G = generate(spec, 1), *C = generate(spec, 0);
    adia_dist_info g, c;
    if (!G || !C || adia_dist_get_info(G, &g) != ADIA_OK || adia_dist_get_info(C, &c) != ADIA_OK)
        goto out;
    CHECK(!strcmp(g.format, "dia") && g.gpu >= 0, "%s: filled on the device as dia (%s, gpu %d)",
          spec, g.format, g.gpu);
    /* one process: every row is interior (no halo, x read in place); more:
     * the interior when it is at least half the rows -- on the CPU too */
    for (int d = 0; d < 2; d++) {
        const adia_dist_info *in = d ? &c : &g;
        CHECK(size > 1 ? in->interior_rows == 0 || 2 * in->interior_rows >= in->rows
                       : in->interior_rows == in->rows,
              "%s rank %d (%s): %lld of %lld rows interior", spec, rank, d ? "cpu" : "gpu",
              (long long)in->interior_rows, (long long)in->rows);
    }
    if (g.rows >= 1000)   /* 40 planes of 72 rows, over at most 3 processes */
        CHECK(g.interior_rows > 0, "%s rank %d: %lld rows and no interior", spec, rank,
              (long long)g.rows);
    CHECK(g.n == c.n && g.nnz == c.nnz && g.first == c.first && g.rows == c.rows &&
              g.local_cols == c.local_cols && g.intervals == c.intervals && g.from_offsets &&
              g.neighbours == c.neighbours && g.halo_bytes == c.halo_bytes,
          "%s rank %d: filled n %lld nnz %lld rows %lld+%lld x %lld (%d intervals, %d peers, %lld "
          "halo bytes); through CSR n %lld nnz %lld rows %lld+%lld x %lld (%d, %d, %lld)", spec,
          rank, (long long)g.n, (long long)g.nnz, (long long)g.first, (long long)g.rows,
          (long long)g.local_cols, g.intervals, g.neighbours, (long long)g.halo_bytes,
          (long long)c.n, (long long)c.nnz, (long long)c.first, (long long)c.rows,
          (long long)c.local_cols, c.intervals, c.neighbours, (long long)c.halo_bytes);
    double *x = malloc(g.rows * sizeof *x), *yg = malloc(g.rows * sizeof *yg),
           *yc = malloc(g.rows * sizeof *yc), err = 1;
    for (int64_t i = 0; i < g.rows; i++) x[i] = xval(g.first + i);
    CHECK_OK(adia_dist_spmv(G, 1.0, x, 0.0, yg));
    CHECK_OK(adia_dist_spmv(C, 1.0, x, 0.0, yc));
    double d = 0;
    for (int64_t i = 0; i < g.rows; i++) d = fmax(d, fabs(yg[i] - yc[i]) / (1 + fabs(yc[i])));
    MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(d <= 1e-14, "%s: filled and CSR-built products differ by %g", spec, d);
    /* the check of a filled block: by the stencil's rule, no CSR; it finds
     * a wrong entry on the last process */
    CHECK_OK(adia_dist_check_spmv(G, x, yg, &err));
    CHECK(err <= 1e-14, "%s: the filled blocks' product against the stencil's rule: %g", spec,
          err);
    if (rank == size - 1) yg[g.rows - 1] += 1e-6 * (1 + fabs(yg[g.rows - 1]));
    CHECK_OK(adia_dist_check_spmv(G, x, yg, &err));
    CHECK(err > 1e-8, "%s: a wrong y[n-1] passes the check (%g)", spec, err);
    free(x);
    free(yg);
    free(yc);
out:
    adia_dist_destroy(G);
    adia_dist_destroy(C);
}

/* Every matrix with the transport env asks for (NULL: auto, checked on
 * one matrix). */
static void test_transport(const char *env, const char *expect)
{
    const char *specs[] = {"lap2d5:30", "lap3d7:10", "type2:2000", "type3:9000,7,0.4",
                           "band:500,4,sym"};
    if (env) setenv("ADIA_DIST_TRANSPORT", env, 1);
    else unsetenv("ADIA_DIST_TRANSPORT");
    for (size_t k = 0; k < (env ? sizeof specs / sizeof *specs : 1); k++) test_spmv(specs[k], expect);
}

static void test_device(void)
{
    int own_gpu = devices >= size;   /* one node: rank r on device r % devices */
    test_transport("staged", "staged");
    const char *fills[] = {"lap3d7:7x5x9", "lap3d27:6x5x4", "lap2d9:2x40", "lap2d5:61x3",
                           "lap3d7:4x1x3", "lap2d5:3x1", "lap3d7:9x8x40", "lap2d5:7x300"};
    for (size_t k = 0; k < sizeof fills / sizeof *fills; k++) test_fill(fills[k]);
    adia_dist_matrix *D = NULL;
    adia_plan_hints h = {.device = 1};
    if (nccl_built && own_gpu) {
        test_transport("nccl", "nccl");
    } else {
        setenv("ADIA_DIST_TRANSPORT", "nccl", 1);
        CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap2d5:20", &h, &D), ADIA_ERR_UNSUPPORTED,
                  nccl_built ? "share a GPU" : "built without NCCL");
    }
    /* peer: where NCCL runs with several processes (the default there) */
    if (nccl_built && own_gpu && size > 1) {
        test_transport("peer", "peer");
    } else {
        setenv("ADIA_DIST_TRANSPORT", "peer", 1);
        CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap2d5:20", &h, &D), ADIA_ERR_UNSUPPORTED,
                  !nccl_built ? "built without NCCL" : !own_gpu ? "share a GPU" : "one process");
    }
    test_transport(NULL, nccl_built && own_gpu && size > 1 ? "peer" : "staged");
    setenv("ADIA_DIST_TRANSPORT", "carrier-pigeon", 1);
    CHECK_ERR(adia_dist_generate(MPI_COMM_WORLD, "lap2d5:20", &h, &D), ADIA_ERR_INVALID_ARG,
              "ADIA_DIST_TRANSPORT=carrier-pigeon");
    unsetenv("ADIA_DIST_TRANSPORT");
    D = generate("lap2d5:20", -1);
    adia_dist_info in;
    CHECK(D && adia_dist_get_info(D, &in) == ADIA_OK && in.gpu >= 0, "device -1 with GPUs");
    adia_dist_destroy(D);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_BEGIN();
    devices = dist_devices();
    test_refusals();
#ifdef ADIA_HAVE_CUDA
    if (devices) test_device();
#endif
    int rc = TEST_END();
    if (!devices && rank == 0) printf("SKIPPED: no CUDA device (only the fallbacks checked)\n");
    MPI_Finalize();
    return rc ? rc : devices ? 0 : 77;
}
