/* bench_solve.c -- adia's solvers on the GPU (and the CPU for reference):
 * b = A * ones, x0 = 0, no preconditioner, rtol 1e-8 (double) / 1e-5
 * (float).  Per matrix and method: the format the planner picks for the
 * solve, iterations, time to solution (best of REPS solves on one plan),
 * time per iteration, bytes per iteration and the floor.
 *
 * Bytes per iteration and the floor's bytes are the library's
 * (adia_solve_info: bytes_per_iter, floor_bytes_per_iter); the floor time
 * is those bytes at the read bandwidth measured in the same run.
 *
 * Beside it, in the same run: the textbook CG / BiCGSTAB on cuSPARSE +
 * cuBLAS (bench_solve_cusparse.inc) and, for the iteration count, this
 * project's CPU solver (--no-cpu skips it).
 *
 *   bench_solve [--float] [--method cg|bicgstab|gmres] [--no-cpu] [spec|file.mtx ...] */
#define _POSIX_C_SOURCE 200809L
#include "adia.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ADIA_HAVE_CUDA
int main(void)
{
    printf("bench_solve: built without CUDA, nothing to measure\n");
    return 0;
}
#else
#include <cuda_runtime.h>

enum { REPS = 3 };

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

#include "bench_solve_cusparse.inc"

typedef struct bench_opts {
    adia_value_type vt;
    adia_solver method;
    int cpu;                 /* also the CPU solver (the iteration reference) */
    double bw_gbs;
} bench_opts;

/* Best of REPS adia solves on one plan (the planner's choice for the
 * solve's products, on the GPU). */
static adia_status adia_best(const adia_matrix *A, const double *b, const bench_opts *o,
                             adia_plan *P, adia_solve_info *best)
{
    int32_t n = adia_matrix_rows(A);
    double *x = calloc((size_t)n + 1, sizeof *x);
    adia_solve_options so;
    adia_solve_options_default(&so);
    so.method = o->method;
    so.max_iter = 20000;
    so.rtol = o->vt == ADIA_FLOAT ? 1e-5 : 1e-8;
    adia_status s = x ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    adia_solve_info in;
    for (int r = 0; s == ADIA_OK && r < REPS; r++) {
        memset(x, 0, (size_t)n * sizeof *x);
        s = adia_solve(A, P, b, x, &so, &in);
        if (r == 0 || in.time_ms < best->time_ms) *best = in;
    }
    free(x);
    return s;
}

static int run(const char *spec, const bench_opts *o)
{
    adia_matrix *A = NULL;
    adia_plan *P = NULL;
    adia_status s = strchr(spec, '/') || strstr(spec, ".mtx") ? adia_matrix_load(spec, &A)
                                                              : adia_matrix_generate(spec, &A);
    int32_t n = s == ADIA_OK ? adia_matrix_rows(A) : 0;
    int64_t calls = o->method == ADIA_SOLVE_BICGSTAB ? 2000 : 1000;
    adia_plan_hints h = {.expected_calls = calls, .vtype = o->vt, .device = 1,
                         .chooser = ADIA_CHOOSE_MEASURE};
    if (s == ADIA_OK) s = adia_plan_create(A, &h, &P);
    double *b = calloc((size_t)n + 1, sizeof *b), *ones = malloc(((size_t)n + 1) * sizeof *ones);
    for (int32_t i = 0; i < n; i++) ones[i] = 1;
    if (s == ADIA_OK) s = adia_matrix_spmv(A, 1.0, ones, 0.0, b);
    adia_solve_info best = {0}, cpu = {0};
    if (s == ADIA_OK) s = adia_best(A, b, o, P, &best);
    if (s == ADIA_OK && o->cpu && o->vt == ADIA_DOUBLE) {
        double *x = calloc((size_t)n + 1, sizeof *x);
        adia_solve_options so;
        adia_solve_options_default(&so);
        so.method = o->method;
        so.max_iter = 20000;
        s = adia_solve(A, NULL, b, x, &so, &cpu);
        free(x);
    }
    ref_result ref = {0};
    int have_ref = o->method != ADIA_SOLVE_GMRES && s == ADIA_OK &&
                   ref_solve(A, o->vt, o->method, b, o->vt == ADIA_FLOAT ? 1e-5 : 1e-8, 20000,
                             &ref) == 0;
    if (s != ADIA_OK) {
        printf("%s: %s: %s\n", spec, adia_status_string(s), adia_last_error());
    } else {
        double ms_it = best.time_ms / (best.iterations > 0 ? best.iterations : 1);
        double floor_ms = best.floor_bytes_per_iter / (o->bw_gbs * 1e6);
        double ref_it = have_ref && ref.iterations ? ref.ms / ref.iterations : NAN;
        printf("| %s | %s | %s | %d | %s | %d | %.3f | %.4f | %.0f | %.4f | %.2f | %.1e | ", spec,
               adia_value_type_name(o->vt), adia_solver_name(o->method), n, best.format,
               best.iterations, best.time_ms, ms_it, best.bytes_per_iter / n, floor_ms,
               ms_it / floor_ms, best.residual);
        if (cpu.iterations) printf("%d | ", cpu.iterations);
        else printf("- | ");
        if (have_ref)
            printf("%d | %.3f | %.4f | %.1e | %.2f | %.2f |\n", ref.iterations, ref.ms, ref_it,
                   ref.residual, ref.ms / best.time_ms, ref_it / ms_it);
        else
            printf("- | - | - | - | - | - |%s%s\n", ref.err[0] ? " " : "", ref.err);
        if (!best.converged) printf("(%s: not converged: %s)\n", spec, best.stop);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    free(b);
    free(ones);
    return s == ADIA_OK && best.converged ? 0 : 1;
}

int main(int argc, char **argv)
{
    bench_opts o = {.vt = ADIA_DOUBLE, .method = ADIA_SOLVE_CG, .cpu = 1};
    int first = 1;
    for (; first < argc && !strncmp(argv[first], "--", 2); first++) {
        if (!strcmp(argv[first], "--float")) o.vt = ADIA_FLOAT;
        else if (!strcmp(argv[first], "--no-cpu")) o.cpu = 0;
        else if (!strcmp(argv[first], "--method") && first + 1 < argc) {
            const char *m = argv[++first];
            o.method = !strcmp(m, "bicgstab") ? ADIA_SOLVE_BICGSTAB
                       : !strcmp(m, "gmres")  ? ADIA_SOLVE_GMRES
                                              : ADIA_SOLVE_CG;
        }
    }
    int ndev = 0;
    if (adia_gpu_device_count(&ndev) != ADIA_OK || ndev == 0) {
        printf("bench_solve: no CUDA device, nothing to measure\n");
        return 0;
    }
    if (adia_gpu_read_bandwidth(0, 5, &o.bw_gbs) != ADIA_OK) {
        fprintf(stderr, "bandwidth probe: %s\n", adia_last_error());
        return 1;
    }
    adia_gpu_info gi;
    adia_gpu_get_info(&gi);
    printf("%s, read bandwidth %.0f GB/s; b = A * ones, x0 = 0, no preconditioner; adia: best of "
           "%d solves on one plan; cuSPARSE: textbook solver on cusparseSpMV + cuBLAS, one "
           "solve\n\n", gi.name, o.bw_gbs, REPS);
    printf("| matrix | prec | method | rows | format | iterations | ms | ms/it | B/row/it | "
           "floor ms/it | t/floor | residual | CPU it | cuSPARSE it | cuSPARSE ms | "
           "cuSPARSE ms/it | cuSPARSE residual | speedup | speedup/it |\n");
    printf("| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: | ---: | ---: | ---: | ---: | ---: |\n");
    static const char *dflt[] = {"lap3d7:64", "lap3d7:160", "lap3d7:256", "lap2d5:2048"};
    int rc = 0;
    if (first >= argc)
        for (size_t i = 0; i < sizeof dflt / sizeof *dflt; i++) rc |= run(dflt[i], &o);
    for (int i = first; i < argc; i++) rc |= run(argv[i], &o);
    return rc;
}
#endif
