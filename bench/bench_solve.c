/* bench_solve.c -- adia's solvers on the GPU (and the CPU for reference):
 * b = A * ones, x0 = 0, no preconditioner, rtol 1e-8 (double) / 1e-5
 * (float).  Per matrix and method: the format the planner picks for the
 * solve, iterations, time to solution (best of REPS solves on one plan),
 * time per iteration, bytes per iteration and the floor.
 *
 * Bytes per iteration, as the kernels of src/solve/solve_gpu.cu move them:
 * the format's SpMV bytes (storage + x + y) per product, plus CG 11 vector
 * passes (p'q: 2; x, r update: 6; p = D r + beta p: 3), BiCGSTAB 18 (2
 * products).  The floor: the matrix once per product plus the fewest
 * vector passes with every dot product fused into a neighbouring kernel --
 * CG 11 (the 144 B/row for a 7-point double stencil: 56 + 88),
 * BiCGSTAB 20 -- at the read bandwidth measured in the same run.
 *
 *   bench_solve [--float] [--method cg|bicgstab] [spec ...]            */
#include "adia.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPS = 3 };

/* Vector passes per iteration beside the format's SpMV bytes (see above). */
static int vectors_per_iteration(adia_solver m) { return m == ADIA_SOLVE_CG ? 11 : 18; }
static int floor_vectors(adia_solver m) { return m == ADIA_SOLVE_CG ? 11 : 20; }

static int run(const char *spec, adia_value_type vt, adia_solver m, double bw_gbs)
{
    adia_matrix *A = NULL;
    adia_plan *P = NULL;
    adia_status s = adia_matrix_generate(spec, &A);
    int32_t n = s == ADIA_OK ? adia_matrix_rows(A) : 0;
    adia_plan_hints h = {.expected_calls = 1000, .vtype = vt, .device = 1,
                         .chooser = ADIA_CHOOSE_MEASURE};
    if (s == ADIA_OK) s = adia_plan_create(A, &h, &P);
    double *b = calloc((size_t)n + 1, sizeof *b), *x = calloc((size_t)n + 1, sizeof *x),
           *ones = malloc(((size_t)n + 1) * sizeof *ones);
    for (int32_t i = 0; i < n; i++) ones[i] = 1;
    if (s == ADIA_OK) s = adia_matrix_spmv(A, 1.0, ones, 0.0, b);
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.method = m;
    o.max_iter = 20000;
    o.rtol = vt == ADIA_FLOAT ? 1e-5 : 1e-8;
    adia_solve_info best = {0}, in;
    for (int r = 0; s == ADIA_OK && r < REPS; r++) {
        memset(x, 0, (size_t)n * sizeof *x);
        s = adia_solve(A, P, b, x, &o, &in);
        if (r == 0 || in.time_ms < best.time_ms) best = in;
    }
    if (s != ADIA_OK) {
        printf("%s: %s: %s\n", spec, adia_status_string(s), adia_last_error());
    } else {
        double vs = (double)adia_value_size(vt);
        int64_t fmt = adia_format_bytes(adia_plan_format(P));
        double per_it = (double)fmt + vectors_per_iteration(m) * vs * n;
        double floor_b = adia_format_storage_bytes(adia_plan_format(P)) * (m == ADIA_SOLVE_CG ? 1 : 2)
                         + floor_vectors(m) * vs * n;
        double ms_it = best.time_ms / (best.iterations > 0 ? best.iterations : 1);
        double floor_ms = floor_b / (bw_gbs * 1e6);
        printf("| %s | %s | %s | %d | %s | %d | %.3f | %.4f | %.0f | %.4f | %.2f | %.2e | %s |\n",
               spec, adia_value_type_name(vt), adia_solver_name(m), n, best.format,
               best.iterations, best.time_ms, ms_it, per_it / n, floor_ms, ms_it / floor_ms,
               best.residual, best.converged ? "yes" : best.stop);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    free(b);
    free(x);
    free(ones);
    return s == ADIA_OK && best.converged ? 0 : 1;
}

int main(int argc, char **argv)
{
    adia_value_type vt = ADIA_DOUBLE;
    adia_solver m = ADIA_SOLVE_CG;
    int first = 1;
    for (; first < argc && !strncmp(argv[first], "--", 2); first++) {
        if (!strcmp(argv[first], "--float")) vt = ADIA_FLOAT;
        else if (!strcmp(argv[first], "--method") && first + 1 < argc)
            m = !strcmp(argv[++first], "bicgstab") ? ADIA_SOLVE_BICGSTAB : ADIA_SOLVE_CG;
    }
    int ndev = 0;
    if (adia_gpu_device_count(&ndev) != ADIA_OK || ndev == 0) {
        printf("bench_solve: no CUDA device, nothing to measure\n");
        return 0;
    }
    double bw = 0;
    if (adia_gpu_read_bandwidth(0, 5, &bw) != ADIA_OK) {
        fprintf(stderr, "bandwidth probe: %s\n", adia_last_error());
        return 1;
    }
    adia_gpu_info gi;
    adia_gpu_get_info(&gi);
    printf("%s, read bandwidth %.0f GB/s; time = best of %d solves on one plan\n\n", gi.name, bw,
           REPS);
    printf("| matrix | prec | method | rows | format | iterations | ms | ms/it | B/row/it | "
           "floor ms/it | t/floor | residual | converged |\n");
    printf("| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    static const char *dflt[] = {"lap3d7:64", "lap3d7:160", "lap2d5:2048"};
    int rc = 0;
    if (first >= argc)
        for (size_t i = 0; i < sizeof dflt / sizeof *dflt; i++) rc |= run(dflt[i], vt, m, bw);
    for (int i = first; i < argc; i++) rc |= run(argv[i], vt, m, bw);
    return rc;
}
