/* bench_mg_setup.c -- the multigrid preconditioner on the device, what
 * issue 30 asks of it: the set-up (at most 40 fine-level SpMV-equivalents;
 * lap3d7:256 at most 20 ms on an H200), one V-cycle (at most 9), and a
 * PCG solve (lap3d7:256 at most 30 ms, all of it at most 50).  Per
 * matrix: the fine GPU plan made on the device (adia_stencil_fill_device +
 * adia_plan_create_device_dia, format dia, as a solver would plan it), one
 * fine SpMV timed (median of 20), then adia_precond_create("mg") once to
 * warm up and the median of 5 timed (wall clock, synchronised), explain
 * of the last (phases, per level, launches and bytes); the cycle z = M r
 * in a CUDA graph as a solver runs it, and launched one by one; CG with M on device vectors, b = A
 * ones, x0 = 0, rtol 1e-8, twice on the same plan and M, the second kept
 * (its set-up: the solve's own -- workspace, graph -- apart from its
 * iterations; the first solve's set-up is printed beside it: the plan
 * keeps the first solve's workspace for the next).  One JSON line per matrix.  Skips (exit 0) without a
 * device.
 *
 *   bench_mg_setup [--float] [--float-levels all|coarse|none] [spec ...]
 *   (default lap3d7:160 lap3d7:256; --float: the plan in float;
 *   --float-levels: which levels of a double plan's hierarchy are float;
 *   without it the library's default) */
#define _POSIX_C_SOURCE 200809L
#include "adia.h"
#include "adia_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ADIA_HAVE_CUDA
int main(void)
{
    printf("bench_mg_setup: built without CUDA, nothing to measure\n");
    return 0;
}
#else
#include <cuda_runtime.h>

enum { REPS = 5, SPMV_REPS = 20 };

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

/* The GPU plan of spec in format dia, made on the device. */
static adia_plan *device_plan(const char *spec, adia_value_type vt)
{
    int64_t n, off[ADIA_STENCIL_MAX_DIAGONALS];
    int nd;
    if (adia_stencil_diagonals(spec, &n, &nd, off) != ADIA_OK) {   /* e.g. jump3d: not filled on
                                                                     the device */
        fprintf(stderr, "bench_mg_setup: %s: %s\n", spec, adia_last_error());
        return NULL;
    }
    void *values = NULL;
    const size_t vs = vt == ADIA_FLOAT ? 4 : 8;
    if (cudaMalloc(&values, (size_t)n * nd * vs) != cudaSuccess) return NULL;
    adia_plan *P = NULL;
    adia_device_dia A = {.rows = (int32_t)n, .cols = (int32_t)n, .ndiag = nd, .offsets = off,
                         .values = values, .values_type = vt, .adopt = 1};
    adia_plan_hints h = {.expected_calls = 1000, .vtype = vt, .device = 1,
                         .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
    if (adia_stencil_fill_device(spec, 0, n, values, vt, NULL) != ADIA_OK) {
        cudaFree(values);
        values = NULL;
    }
    if (!values || adia_plan_create_device_dia(&A, &h, &P) != ADIA_OK) {   /* frees values */
        fprintf(stderr, "bench_mg_setup: %s: %s\n", spec, adia_last_error());
        return NULL;
    }
    return P;
}

/* Median time of one product y = A x on P (ms). */
static double spmv_ms(adia_plan *P, adia_value_type vt)
{
    const size_t bytes = (size_t)adia_plan_rows(P) * (vt == ADIA_FLOAT ? 4 : 8);
    void *x = NULL, *y = NULL;
    double t[SPMV_REPS], m = -1;
    if (cudaMalloc(&x, bytes) == cudaSuccess && cudaMalloc(&y, bytes) == cudaSuccess &&
        cudaMemset(x, 0, bytes) == cudaSuccess) {
        adia_spmv(P, 1.0, x, 0.0, y);
        cudaDeviceSynchronize();
        for (int r = 0; r < SPMV_REPS; r++) {
            const double t0 = now_ms();
            adia_spmv(P, 1.0, x, 0.0, y);
            cudaDeviceSynchronize();
            t[r] = now_ms() - t0;
        }
        m = median(t, SPMV_REPS);
    }
    cudaFree(x);
    cudaFree(y);
    return m;
}

/* The cycle: the median of 20 applies z = M r, CUDA events (ms). */
typedef struct apply_ctx {
    adia_precond *M;
    const void *r;
    void *z;
} apply_ctx;

static adia_status queue_apply(void *ctx, int i, void *stream)
{
    (void)i;
    const apply_ctx *c = ctx;
    return adia_precond_apply(c->M, c->r, c->z, stream);
}

/* One apply z = M r (one V-cycle), ms: graph[0] as the solver runs it, in
 * a CUDA graph (adia_gpu_time_call: batched, the median of 20); stream[0]
 * launched kernel by kernel on the default stream between two events (the
 * median of 20), where a small level's kernels wait on the host's launches. */
static void cycle_ms(adia_precond *M, adia_plan *P, adia_value_type vt, double *graph,
                     double *stream)
{
    const size_t bytes = (size_t)adia_plan_rows(P) * (vt == ADIA_FLOAT ? 4 : 8);
    void *r = NULL, *z = NULL;
    cudaEvent_t e0, e1;
    *graph = *stream = -1;
    if (cudaMalloc(&r, bytes) == cudaSuccess && cudaMalloc(&z, bytes) == cudaSuccess &&
        cudaMemset(r, 0, bytes) == cudaSuccess && cudaEventCreate(&e0) == cudaSuccess &&
        cudaEventCreate(&e1) == cudaSuccess) {
        double t[20];
        int ok = adia_precond_apply(M, r, z, NULL) == ADIA_OK;
        for (int k = 0; k < 20 && ok; k++) {
            float ms = 0;
            cudaEventRecord(e0, 0);
            ok = adia_precond_apply(M, r, z, NULL) == ADIA_OK;
            cudaEventRecord(e1, 0);
            ok = ok && cudaEventSynchronize(e1) == cudaSuccess &&
                 cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
            t[k] = ms;
        }
        if (ok) *stream = median(t, 20);
        apply_ctx c = {M, r, z};
        adia_gpu_timing g;
        if (ok && adia_gpu_time_call(queue_apply, &c, 20, &g) == ADIA_OK && g.graph)
            *graph = g.median_ms;
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    cudaFree(r);
    cudaFree(z);
}

/* CG with M on device vectors, b = A ones, x0 = 0: the second of two. */
/* info[0]: the plan's first solve (its workspace allocated: kept with
 * the plan after it), info[1]: the second, the one reported as the solve */
static int pcg(adia_precond *M, adia_plan *P, adia_value_type vt, adia_solve_info info[2])
{
    const int64_t n = adia_plan_rows(P);
    const size_t vs = vt == ADIA_FLOAT ? 4 : 8;
    void *ones = NULL, *b = NULL, *x = NULL;
    int ok = cudaMalloc(&ones, (size_t)n * vs) == cudaSuccess &&
             cudaMalloc(&b, (size_t)n * vs) == cudaSuccess &&
             cudaMalloc(&x, (size_t)n * vs) == cudaSuccess;
    if (ok) {
        void *h = malloc((size_t)n * vs);
        for (int64_t i = 0; h && i < n; i++) {
            if (vt == ADIA_FLOAT) ((float *)h)[i] = 1;
            else ((double *)h)[i] = 1;
        }
        ok = h && cudaMemcpy(ones, h, (size_t)n * vs, cudaMemcpyHostToDevice) == cudaSuccess &&
             adia_spmv(P, 1.0, ones, 0.0, b) == ADIA_OK;
        free(h);
    }
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.precond = M;
    o.rtol = vt == ADIA_FLOAT ? 1e-5 : 1e-8;
    for (int k = 0; k < 2 && ok; k++)
        ok = cudaMemset(x, 0, (size_t)n * vs) == cudaSuccess &&
             adia_plan_solve(P, b, x, &o, &info[k], NULL) == ADIA_OK;
    cudaFree(ones);
    cudaFree(b);
    cudaFree(x);
    return ok;
}

static void bench(const char *spec, adia_value_type vt, int float_levels, const char *device,
                  const char *date)
{
    adia_plan *P = device_plan(spec, vt);
    if (!P) return;
    const double spmv = spmv_ms(P, vt);
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    o.float_levels = float_levels;
    double t[REPS];
    char buf[8192] = "";
    adia_precond *M = NULL;
    int ok = 1;
    for (int r = -1; r < REPS && ok; r++) {   /* r = -1: the warm-up */
        adia_precond_destroy(M);
        M = NULL;
        cudaDeviceSynchronize();
        const double t0 = now_ms();
        ok = adia_precond_create(P, &o, &M) == ADIA_OK && cudaDeviceSynchronize() == cudaSuccess;
        if (r >= 0) t[r] = now_ms() - t0;
    }
    adia_solve_info two[2], in;
    memset(two, 0, sizeof two);
    double cyc = -1, cyc_stream = -1;
    if (ok) {
        adia_precond_explain(M, buf, sizeof buf);
        cycle_ms(M, P, vt, &cyc, &cyc_stream);
        ok = pcg(M, P, vt, two);
    }
    in = two[1];
    if (!ok) fprintf(stderr, "bench_mg_setup: %s: %s\n", spec, adia_last_error());
    if (ok) {
        const double setup = median(t, REPS), total = setup + in.setup_ms + in.time_ms;
        const char *levels = vt == ADIA_FLOAT || float_levels == ADIA_FLOAT_LEVELS_ALL ? "float"
                             : float_levels == ADIA_FLOAT_LEVELS_COARSE ? "coarse float"
                             : float_levels == ADIA_FLOAT_LEVELS_NONE   ? "double"
                                                                        : "default";
        printf("%s (%s, levels %s): setup %.2f ms (median of %d), fine SpMV %.4f ms: %.1f "
               "SpMV-equivalents; cycle %.3f ms = %.2f SpMV in a CUDA graph (launched one by one "
               "%.3f ms = %.2f); PCG %d iterations in %.2f ms "
               "(its own set-up %.2f ms, the plan's first solve's %.2f, %s); total %.2f ms\n%s",
               spec, vt == ADIA_FLOAT ? "float" : "double", levels, setup, REPS, spmv,
               spmv > 0 ? setup / spmv : 0.0, cyc, spmv > 0 ? cyc / spmv : 0.0, cyc_stream,
               spmv > 0 ? cyc_stream / spmv : 0.0, in.iterations, in.time_ms, in.setup_ms,
               two[0].setup_ms, in.stop, total, buf);
        printf("{\"bench\":\"mg_setup\",\"spec\":\"%s\",\"vtype\":\"%s\",\"levels\":\"%s\","
               "\"device\":\"%s\",\"date\":\"%s\",\"setup_ms\":%.3f,\"spmv_ms\":%.5f,"
               "\"spmv_equivalents\":%.2f,\"cycle_ms\":%.4f,\"cycle_spmv\":%.2f,"
               "\"cycle_stream_ms\":%.4f,"
               "\"iterations\":%d,\"converged\":%s,\"solve_ms\":%.3f,\"solve_setup_ms\":%.3f,"
               "\"first_solve_setup_ms\":%.3f,\"total_ms\":%.3f}\n",
               spec, vt == ADIA_FLOAT ? "float" : "double", levels, device, date, setup, spmv,
               spmv > 0 ? setup / spmv : 0.0, cyc, spmv > 0 ? cyc / spmv : 0.0, cyc_stream,
               in.iterations, in.converged ? "true" : "false", in.time_ms, in.setup_ms,
               two[0].setup_ms, total);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
}

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("bench_mg_setup: no CUDA device, nothing to measure\n");
        return 0;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    adia_value_type vt = ADIA_DOUBLE;
    int given = 0, float_levels = ADIA_FLOAT_LEVELS_DEFAULT;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--float")) {
            vt = ADIA_FLOAT;
        } else if (!strcmp(argv[a], "--float-levels") && a + 1 < argc) {
            const char *w = argv[++a];
            float_levels = !strcmp(w, "all")      ? ADIA_FLOAT_LEVELS_ALL
                           : !strcmp(w, "coarse") ? ADIA_FLOAT_LEVELS_COARSE
                           : !strcmp(w, "none")   ? ADIA_FLOAT_LEVELS_NONE
                                                  : -1;
            if (float_levels < 0) {
                fprintf(stderr, "bench_mg_setup: --float-levels all, coarse or none, not %s\n", w);
                return 2;
            }
        } else if (argv[a][0] == '-') {
            fprintf(stderr, "bench_mg_setup: unknown option %s\n", argv[a]);
            return 2;
        } else {
            given = 1;
        }
    }
    printf("bench_mg_setup on %s, %s\n", prop.name, date);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--float-levels")) a++;
        else if (argv[a][0] != '-') bench(argv[a], vt, float_levels, prop.name, date);
    }
    if (!given) {
        bench("lap3d7:160", vt, float_levels, prop.name, date);
        bench("lap3d7:256", vt, float_levels, prop.name, date);
    }
    return 0;
}
#endif
