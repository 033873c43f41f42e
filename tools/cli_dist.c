/* cli_dist.c -- `adia spmv` and `adia solve` under an MPI launcher
 * (mpirun -np N, N > 1): the matrix distributed by rows (adia_mpi.h),
 * each process generating or reading only its rows; vector files read or
 * written by rank 0 and scattered / gathered.  Only rank 0 prints (the
 * others' stdout and stderr go to /dev/null: errors are agreed by every
 * process and carry the failing rank's message).  A plain run never
 * initialises MPI: the launcher is recognised from its environment first. */
#define _GNU_SOURCE   /* sched_getaffinity, CPU_AND */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#ifndef ADIA_HAVE_MPI
int cli_dist_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 1;
}
void cli_dist_finalize(void) {}
int cli_dist_ranks(void) { return 1; }
int cli_dist_spmv(const char *cmd, const cli_dist_args *a)
{
    (void)a;
    fprintf(stderr, "adia %s: built without MPI\n", cmd);
    return 1;
}
int cli_dist_solve(const char *cmd, const cli_dist_args *a) { return cli_dist_spmv(cmd, a); }
int cli_dist_start(const char *cmd) { return cli_dist_spmv(cmd, NULL); }
#else
#include "adia_mpi.h"

#include <math.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>
#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static int ranks = 1, rank = 0, mpi_on = 0;
static int bound_to_one;   /* some process of the node may run on one processor only */

/* The processes of one node share its processors: left to OpenMP's
 * default, each started a thread per processor, and libadia's host passes
 * over the vectors ran 10-40x slower at P = 2 (2 H200, 32 cores: 23 ms
 * to check b and x0 finite, 0.5 ms in one process).  Unless
 * OMP_NUM_THREADS says otherwise, each takes its share of the processors
 * it may run on: those of its affinity mask (mpirun binds 2 processes to
 * a core each by default) over the processes of the node whose masks
 * meet it. */
static void share_processors(void)
{
    MPI_Comm node;
    int on_node = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &on_node);
    int sharing = on_node;
#ifdef __linux__
    cpu_set_t mine, *all = malloc((size_t)on_node * sizeof *all);
    CPU_ZERO(&mine);
    int ok = all && sched_getaffinity(0, sizeof mine, &mine) == 0, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    if (all_ok) {
        MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, node);
        sharing = 0;
        for (int q = 0; q < on_node; q++) {
            cpu_set_t both;
            CPU_AND(&both, &mine, &all[q]);
            sharing += CPU_COUNT(&both) > 0;
            bound_to_one |= CPU_COUNT(&all[q]) == 1 && sysconf(_SC_NPROCESSORS_ONLN) > 1;
        }
    }
    free(all);
#endif
    MPI_Comm_free(&node);
    const char *env = getenv("OMP_NUM_THREADS");
    if (env && *env) return;
    const int share = omp_get_num_procs() / (sharing > 0 ? sharing : 1);
    omp_set_num_threads(share > 0 ? share : 1);
}

/* The number of processes the launcher started (Open MPI, MPICH/Hydra,
 * PMI); 0 when it says nothing of the size (PMIx alone), -1 when no
 * launcher is seen. */
static long launcher_size(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++)
        if (getenv(vars[k])) return strtol(getenv(vars[k]), NULL, 10);
    return getenv("PMIX_RANK") ? 0 : -1;
}

int cli_dist_init(int *argc, char ***argv)
{
    long n = launcher_size();
    if (n == -1 || n == 1) return 1;
    MPI_Init(argc, argv);
    mpi_on = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    share_processors();
    if (rank > 0 && ranks > 1) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) return ranks;
    }
    return ranks;
}

int cli_dist_start(const char *cmd)
{
    (void)cmd;
    if (mpi_on) return 0;
    MPI_Init(NULL, NULL);
    mpi_on = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return 0;
}

void cli_dist_finalize(void)
{
    if (mpi_on) MPI_Finalize();
}

int cli_dist_ranks(void) { return ranks; }

static double setup_ms;   /* open_matrix's wall clock: reading or generating, planning */

/* The distributed matrix of the arguments; the planner told calls. */
static int open_matrix(const char *cmd, const cli_dist_args *a, int64_t calls,
                       adia_dist_matrix **D)
{
    if (a->path && a->gen) return cli_usage_error(cmd, "give a FILE or --gen SPEC, not both");
    if (!a->path && !a->gen) return cli_usage_error(cmd, "no matrix: give a FILE or --gen SPEC");
    adia_plan_hints h = {.expected_calls = calls, .chooser = ADIA_CHOOSE_MODEL, .device = a->gpu};
    if (a->format) {
        h.chooser = ADIA_CHOOSE_FIXED;
        h.format = a->format;
    }
    /* mpirun binds 2 processes to a core each by default: NCCL's helper
     * threads then share that core (its connection took 2.1 s instead of
     * 0.35 s on 2 H200, 2026-11-27) and the host's passes run on one */
    if (a->gpu && bound_to_one && rank == 0)
        fprintf(stderr, "adia %s: note: a process is bound to one processor (mpirun's default "
                "binding for 2 processes); with GPUs NCCL's set-up and the host's passes are "
                "then slower: launch with mpirun --bind-to none\n", cmd);
    double t0 = MPI_Wtime();
    adia_status s = a->gen ? adia_dist_generate(MPI_COMM_WORLD, a->gen, &h, D)
                           : adia_dist_read_mtx(MPI_COMM_WORLD, a->path, &h, D);
    setup_ms = (MPI_Wtime() - t0) * 1e3;
    return s == ADIA_OK ? 0 : cli_fail(cmd, s);
}

static const char *matrix_name(const cli_dist_args *a)
{
    if (a->gen) return a->gen;
    const char *b = strrchr(a->path, '/');
    return b ? b + 1 : a->path;
}

/* The first lines / keys both commands print. */
static void describe(const cli_dist_args *a, const adia_dist_info *in, cli_json *j)
{
    if (j) {
        json_str(j, "matrix", matrix_name(a));
        json_int(j, "rows", in->n);
        json_int(j, "nnz", in->nnz);
        json_int(j, "ranks", in->ranks);
        json_int(j, "rows_per_rank_min", in->rows_min);
        json_int(j, "rows_per_rank_max", in->rows_max);
        json_str(j, "device", in->gpu >= 0 ? "gpu" : "cpu");
        json_str(j, "format", in->format);
        json_int(j, "halo_bytes_per_spmv", in->halo_bytes_all);
        json_str(j, "transport", in->transport);
        json_str(j, "reduce", in->reduce);
        json_int(j, "interior_rows_rank0", in->interior_rows);
        json_num(j, "setup_ms", setup_ms);
        json_num(j, "connect_ms", in->connect_ms);
        return;
    }
    printf("%s: %lld x %lld, %lld nonzeros, %d process%s (%lld..%lld rows each), format %s on "
           "rank 0 (%s, double)\n", matrix_name(a), (long long)in->n, (long long)in->n,
           (long long)in->nnz, in->ranks, in->ranks == 1 ? "" : "es", (long long)in->rows_min,
           (long long)in->rows_max,
           in->format, in->gpu >= 0 ? "gpu" : "cpu");
    printf("  set up in %.3f s (%s, planned", setup_ms / 1e3, a->gen ? "generated" : "read");
    if (in->connect_ms > 0) printf("; NCCL connected in %.3f s", in->connect_ms / 1e3);
    printf(")\n");
    printf("  halo: %lld bytes per SpMV over all processes (local x from the %s), transport %s; "
           "sums by %s\n", (long long)in->halo_bytes_all,
           in->from_offsets ? "diagonal offsets" : "column indices", in->transport, in->reduce);
}

/* This process's rows of a vector file, or a value for every row (NAN: 0). */
static int local_vector(const char *cmd, const adia_dist_matrix *D, const adia_dist_info *in,
                        const char *path, double fill, double **v)
{
    if (path) {
        adia_status s = adia_dist_vector_read_mtx(D, path, v);
        return s == ADIA_OK ? 0 : cli_fail(cmd, s);
    }
    *v = malloc(((size_t)in->rows + 1) * sizeof **v);
    int ok = *v != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        fprintf(stderr, "adia %s: out of memory for the vectors\n", cmd);
        return 1;
    }
    /* on the process's threads: the pages' first touch is most of the cost
     * (lap3d7:1600 on 4 GPUs: three vectors of 1.02 G rows a process, 20-29
     * s of the run's wall clock outside set-up and solve, one thread each) */
    const double value = isnan(fill) ? 0 : fill;
    const int64_t n = in->rows;
    double *p = *v;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) p[i] = value;
    return 0;
}

/* Medians of the timed runs: wall time (the slowest process) and halo. */
static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The vectors of the timed products: on a device matrix, device copies
 * of x and y (x uploaded once, so the product alone is timed). */
typedef struct spmv_vectors {
    const double *x;
    double *y, *d_x, *d_y;
} spmv_vectors;

/* `count` products back to back, as the check ran them (its result was
 * checked already); on a device matrix, then one synchronisation. */
static void timed_products(adia_dist_matrix *D, const spmv_vectors *v, int count)
{
#ifdef ADIA_HAVE_CUDA
    if (v->d_x) {
        for (int k = 0; k < count; k++)
            if (adia_dist_spmv_device(D, 1.0, v->d_x, 0.0, v->d_y, NULL) != ADIA_OK) break;
        cudaStreamSynchronize(NULL);
        return;
    }
#endif
    for (int k = 0; k < count; k++) adia_dist_spmv(D, 1.0, v->x, 0.0, v->y);
}

/* y allocated, and on a GPU the device copies of x and y; 0 when that
 * failed on some process (every process says so). */
static int timed_vectors(const adia_dist_info *in, spmv_vectors *v)
{
    int ok = v->y != NULL, all;
#ifdef ADIA_HAVE_CUDA
    size_t bytes = (size_t)in->rows * sizeof *v->x;
    ok = ok && (in->gpu < 0 ||
                (cudaMalloc((void **)&v->d_x, bytes) == cudaSuccess &&
                 cudaMalloc((void **)&v->d_y, bytes) == cudaSuccess &&
                 cudaMemcpy(v->d_x, v->x, bytes, cudaMemcpyHostToDevice) == cudaSuccess));
#else
    (void)in;
#endif
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static void free_timed_vectors(spmv_vectors *v)
{
#ifdef ADIA_HAVE_CUDA
    cudaFree(v->d_x);
    cudaFree(v->d_y);
#endif
    v->d_x = v->d_y = NULL;
}

/* Products per timed run: enough for about BATCH_TARGET_MS, at most
 * BATCH_MAX -- a solver calls SpMV back to back, and one product per run
 * would add the launch, the synchronisation and the status agreement to
 * each (libadia's GPU timing batches the same way: src/cuda/bench.cu).
 * From one product of the slowest process, so the same everywhere. */
enum { BATCH_MAX = 100 };
#define BATCH_TARGET_MS 0.5

static double one_product_ms(adia_dist_matrix *D, const spmv_vectors *v)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    timed_products(D, v, 1);
    double one = (MPI_Wtime() - t0) * 1e3;
    MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return one;
}

static int batch_for(double one_ms, double target_ms)
{
    return one_ms * BATCH_MAX < target_ms ? BATCH_MAX : (int)ceil(target_ms / one_ms);
}

/* Products per captured run: enough for about GRAPH_TARGET_MS, at most
 * BATCH_MAX, so that the skew of the processes' launches after the
 * barrier (a few microseconds) is spread over many products. */
#define GRAPH_TARGET_MS 10.0

#ifdef ADIA_HAVE_CUDA
/* A device matrix on the nccl or peer transport runs its products as a
 * solver does, captured: `batch` of them in one CUDA graph, each run one
 * launch timed by events around it (the one-process `adia spmv` times its
 * batches so, src/cuda/bench.cu).  The host's launches and each call's
 * status agreement stay out of the time; so do the halo's own times,
 * which happen on the device.  1 when every process captured. */
typedef struct graph_runs {
    cudaStream_t st;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaEvent_t a, b;
} graph_runs;

static int graph_open(adia_dist_matrix *D, const adia_dist_info *in, const spmv_vectors *v,
                      int batch, graph_runs *g)
{
    int ok = v->d_x && (!strcmp(in->transport, "nccl") || !strcmp(in->transport, "peer")), all;
    ok = ok && cudaStreamCreateWithFlags(&g->st, cudaStreamNonBlocking) == cudaSuccess &&
         cudaEventCreate(&g->a) == cudaSuccess && cudaEventCreate(&g->b) == cudaSuccess;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) return 0;   /* every process calls its products below, or none */
    ok = cudaStreamBeginCapture(g->st, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (ok) cudaStreamEndCapture(g->st, &g->graph);
        (void)cudaGetLastError();
        return 0;
    }
    for (int k = 0; k < batch && ok; k++)   /* agreed calls: every process stops alike */
        ok = adia_dist_spmv_device(D, 1.0, v->d_x, 0.0, v->d_y, g->st) == ADIA_OK;
    ok = cudaStreamEndCapture(g->st, &g->graph) == cudaSuccess && ok;
    /* the nodes keep their streams' priorities (the halo's stream is the
     * highest), as in the solvers' graphs: without, the ends waited for
     * the interior's last block, 12 us a product on 2 H200 */
    ok = ok && cudaGraphInstantiate(&g->exec, g->graph, cudaGraphInstantiateFlagUseNodePriority) ==
                   cudaSuccess;
    (void)cudaGetLastError();
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* One run's time per product (ms) on this process; NaN on an error. */
static double graph_run(const graph_runs *g, int batch)
{
    float ms = 0;
    int ok = cudaEventRecord(g->a, g->st) == cudaSuccess &&
             cudaGraphLaunch(g->exec, g->st) == cudaSuccess &&
             cudaEventRecord(g->b, g->st) == cudaSuccess &&
             cudaEventSynchronize(g->b) == cudaSuccess &&
             cudaEventElapsedTime(&ms, g->a, g->b) == cudaSuccess;
    return ok ? ms / batch : NAN;
}

static void graph_close(graph_runs *g)
{
    if (g->exec) cudaGraphExecDestroy(g->exec);
    if (g->graph) cudaGraphDestroy(g->graph);
    if (g->a) cudaEventDestroy(g->a);
    if (g->b) cudaEventDestroy(g->b);
    if (g->st) cudaStreamDestroy(g->st);
    (void)cudaGetLastError();
    memset(g, 0, sizeof *g);
}
#endif

/* Median time per product over the runs (the slowest process's), and of
 * the halo exchange in it (NaN where it runs inside a CUDA graph);
 * *batch: products per run.  0 (on every process) when a run failed
 * somewhere or memory ran out. */
static int timed_runs(adia_dist_matrix *D, const adia_dist_info *info, const spmv_vectors *v,
                      int runs, double *t_ms, double *halo_ms, int *batch)
{
    double *t = malloc(2 * (size_t)runs * sizeof *t), *h = t + runs;
    int ok = t != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        free(t);
        return 0;
    }
    const double one = one_product_ms(D, v);
#ifdef ADIA_HAVE_CUDA
    graph_runs g = {0};
    const int graphed = graph_open(D, info, v, batch_for(one, GRAPH_TARGET_MS), &g);
#else
    (void)info;
    const int graphed = 0;
#endif
    *batch = batch_for(one, graphed ? GRAPH_TARGET_MS : BATCH_TARGET_MS);
    adia_dist_info in;
    int all_ran = 1;
    for (int k = 0; k < runs && all_ran; k++) {
        adia_dist_get_info(D, &in);
        double h0 = in.halo_ms;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), mine[2] = {0, NAN};
#ifdef ADIA_HAVE_CUDA
        if (graphed) mine[0] = graph_run(&g, *batch);
#endif
        if (!graphed) {
            timed_products(D, v, *batch);
            mine[0] = (MPI_Wtime() - t0) * 1e3 / *batch;
            adia_dist_get_info(D, &in);
            mine[1] = (in.halo_ms - h0) / *batch;
        }
        int ran = isfinite(mine[0]);   /* a device error: NaN (MPI_MAX may drop it) */
        MPI_Allreduce(&ran, &all_ran, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, mine, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[k] = mine[0];
        h[k] = graphed ? NAN : mine[1];
    }
#ifdef ADIA_HAVE_CUDA
    graph_close(&g);
#endif
    if (!all_ran) {
        free(t);
        return 0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    qsort(h, (size_t)runs, sizeof *h, cmp_double);
    *t_ms = t[runs / 2];
    *halo_ms = h[runs / 2];
    free(t);
    return 1;
}

/* x from the file, or the serial command's random x for the seed (the
 * same values: x_i depends on i alone). */
static int spmv_x(const char *cmd, const adia_dist_matrix *D, const adia_dist_info *in,
                  const cli_dist_args *a, double **x)
{
    int rc = local_vector(cmd, D, in, a->x_path, NAN, x);
    if (rc || a->x_path) return rc;
    const int64_t n = in->rows, first = in->first;
    double *p = *x;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) p[i] = adia_random_value(a->seed, first + i);
    return 0;
}

static void spmv_report(const cli_dist_args *a, const adia_dist_info *in, double t, double halo,
                        int batch, double err)
{
    double gflops = t > 0 ? 2.0 * (double)in->nnz / (t * 1e6) : NAN;
    if (a->json) {
        cli_json j;
        json_begin(&j, stdout);
        describe(a, in, &j);
        json_int(&j, "runs", a->runs);
        json_int(&j, "batch", batch);
        json_num(&j, "time_ms", t);
        json_num(&j, "comm_ms", halo);
        json_num(&j, "comm_share", t > 0 ? halo / t : NAN);
        json_num(&j, "gflops", gflops);
        json_num(&j, "max_rel_err", err);
        json_num(&j, "tolerance", 1e-12);
        json_bool(&j, "pass", err <= 1e-12);
        json_end(&j);
        return;
    }
    describe(a, in, NULL);
    printf("  median time %.4f ms per product over %ld run%s of %d (slowest process), ", t,
           a->runs, a->runs == 1 ? "" : "s", batch);
    if (isnan(halo))
        printf("the halo inside a CUDA graph (not timed apart), %.2f GFLOPS\n", gflops);
    else
        printf("of which %.4f ms (%.0f%%) in the halo exchange, %.2f GFLOPS\n", halo,
               t > 0 ? 100 * halo / t : 0.0, gflops);
    printf("  max relative error %.3g (tolerance 1e-12, against the host's product): %s\n", err,
           err <= 1e-12 ? "ok" : "FAILED");
}

int cli_dist_spmv(const char *cmd, const cli_dist_args *a)
{
    adia_dist_matrix *D = NULL;
    int rc = open_matrix(cmd, a, a->calls > 0 ? a->calls : a->runs + 1, &D);
    if (rc) return rc;
    adia_dist_info in;
    adia_dist_get_info(D, &in);
    double *x = NULL, *y = NULL, t = 0, halo = 0, err = INFINITY;
    adia_status s;
    if ((rc = spmv_x(cmd, D, &in, a, &x)) || (rc = local_vector(cmd, D, &in, NULL, 0, &y)))
        goto out;
    if ((s = adia_dist_spmv(D, 1.0, x, 0.0, y)) != ADIA_OK ||
        (s = adia_dist_check_spmv(D, x, y, &err)) != ADIA_OK) {
        rc = cli_fail(cmd, s);
        goto out;
    }
    /* a y of their own: y stays the checked one */
    spmv_vectors v = {.x = x, .y = malloc(((size_t)in.rows + 1) * sizeof *v.y)};
    int batch = 1;
    int ok = timed_vectors(&in, &v) && timed_runs(D, &in, &v, (int)a->runs, &t, &halo, &batch);
    free(v.y);
    free_timed_vectors(&v);
    if (!ok) {
        fprintf(stderr, "adia %s: the timed runs failed on some process (out of memory, or a "
                "device error)\n", cmd);
        rc = 1;
        goto out;
    }
    adia_dist_get_info(D, &in);
    spmv_report(a, &in, t, halo, batch, err);
    if (!(err <= 1e-12)) {
        fprintf(stderr, "adia %s: check failed: max relative error %.3g > 1e-12\n", cmd, err);
        rc = 1;
    } else if (a->y_path && (s = adia_dist_vector_write_mtx(D, a->y_path, y)) != ADIA_OK) {
        rc = cli_fail(cmd, s);
    }
out:
    free(x);
    free(y);
    adia_dist_destroy(D);
    return rc;
}

/* The block preconditioner made (kind, set-up ms), or none. */
typedef struct made_precond {
    const char *kind;
    double ms;
    const char *scope;   /* adia_dist_precond_scope */
} made_precond;

static void solve_report(const cli_dist_args *a, const adia_dist_info *in, const adia_solve_info *s,
                         const made_precond *pc, double comm_ms, double err, double wall_ms)
{
    double share = s->time_ms > 0 ? comm_ms / s->time_ms : NAN;
    if (a->json) {
        cli_json j;
        json_begin(&j, stdout);
        describe(a, in, &j);
        json_str(&j, "method", adia_solver_name(a->solve.method));
        json_bool(&j, "jacobi", a->solve.jacobi);
        if (pc->kind) {
            json_str(&j, "precond", pc->kind);
            json_str(&j, "precond_scope", pc->scope);
            json_num(&j, "precond_setup_ms", pc->ms);
        }
        cli_json_solve(&j, s, err);
        json_num(&j, "comm_ms", comm_ms);
        json_num(&j, "comm_share", share);
        json_num(&j, "spmv_ms", s->spmv_ms);
        json_int(&j, "spmvs", s->spmvs);
        json_str(&j, "stop", s->stop);
        json_num(&j, "wall_ms", wall_ms);
        json_end(&j);
        return;
    }
    describe(a, in, NULL);
    const int slabs = pc->kind && !strcmp(pc->scope, "slabs");
    if (pc->kind)
        printf("  preconditioner %s %s, set up in %.3f ms\n", pc->kind,
               slabs ? "across the processes (slabs of the grid)"
                     : "on each process's own block (block Jacobi)", pc->ms);
    printf("  %s%s%s: ", adia_solver_name(a->solve.method),
           a->solve.jacobi ? " + Jacobi" : slabs ? " + " : pc->kind ? " + block " : "",
           pc->kind ? pc->kind : "");
    cli_print_solve(s, a->solve.rtol, err);
    printf("\n  ");
    cli_print_solve_times(s, wall_ms);
    if (s->iterations == 0)
        printf("\n");
    else if (isnan(share))
        printf("\n  communication inside the CUDA graph: not timed\n");
    else
        printf("\n  of the iterations %.0f%% in communication (halo exchange and reductions, "
               "rank 0)\n", 100 * share);
}

/* ||x - 1|| / sqrt(n) over all processes: the error when b = A * ones. */
static double error_from_ones(const adia_dist_info *in, const double *x)
{
    double e = 0;
    const int64_t n = in->rows;
#pragma omp parallel for schedule(static) reduction(+ : e)
    for (int64_t i = 0; i < n; i++) e += (x[i] - 1) * (x[i] - 1);
    MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(e / (double)in->n);
}

int cli_dist_solve(const char *cmd, const cli_dist_args *a)
{
    const adia_solve_options *o = &a->solve;
    adia_dist_matrix *D = NULL;
    int64_t calls = (int64_t)o->max_iter * (o->method == ADIA_SOLVE_BICGSTAB ? 2 : 1) + 2;
    const double t0 = MPI_Wtime();   /* the wall clock: set-up, then the solve */
    int rc = open_matrix(cmd, a, calls, &D);
    if (rc) return rc;
    adia_dist_info in;
    adia_dist_get_info(D, &in);
    double *b = NULL, *x = NULL, *one = NULL;
    adia_status s = ADIA_OK;
    if ((rc = local_vector(cmd, D, &in, a->b_path, 1, &b)) ||
        (rc = local_vector(cmd, D, &in, a->x0_path, 0, &x)))
        goto out;
    if (!a->b_path) {   /* b = A * ones: the solution is known */
        if ((rc = local_vector(cmd, D, &in, NULL, 1, &one))) goto out;
        if ((s = adia_dist_spmv(D, 1.0, one, 0.0, b)) != ADIA_OK) goto out;
    }
    adia_solve_options so = *o;
    made_precond pc = {NULL, NAN, ""};
    if (a->precond) {
        const double tp = MPI_Wtime();
        adia_precond *M = NULL;
        if ((s = adia_dist_precond_create(D, a->precond, &M)) != ADIA_OK) goto out;
        pc = (made_precond){adia_precond_kind(M), (MPI_Wtime() - tp) * 1e3,
                            adia_dist_precond_scope(D, M)};
        so.precond = M;   /* D frees it */
        static char text[16384];
        if (a->explain && !a->json && in.rank == 0 &&
            adia_precond_explain(M, text, sizeof text) == ADIA_OK)
            printf("rank 0's %s: %s", strcmp(pc.scope, "slabs") ? "block" : "slab", text);
    }
    adia_solve_info si;
    double before = in.halo_ms + in.reduce_ms;
    if ((s = adia_dist_solve(D, b, x, &so, &si)) != ADIA_OK) goto out;
    adia_dist_get_info(D, &in);
    double err = a->b_path ? NAN : error_from_ones(&in, x);
    /* nccl: the exchange and the sums run inside the solver's CUDA graph,
     * where the host cannot time them */
    const int graphed = !strcmp(in.transport, "nccl") || !strcmp(in.transport, "peer");
    double comm = graphed ? NAN : in.halo_ms + in.reduce_ms - before;
    solve_report(a, &in, &si, &pc, comm, err, (MPI_Wtime() - t0) * 1e3);
    rc = si.converged ? 0 : 1;
    if (rc) fprintf(stderr, "adia %s: did not converge: %s (residual %.3g, rtol %.3g)%s\n", cmd,
                    si.stop, si.residual, o->rtol, a->x_path ? "; the last iterate is written" : "");
    if (a->x_path && (s = adia_dist_vector_write_mtx(D, a->x_path, x)) != ADIA_OK) goto out;
out:
    if (s != ADIA_OK) rc = cli_fail(cmd, s);
    free(b);
    free(x);
    free(one);
    adia_dist_destroy(D);
    return rc;
}
#endif
