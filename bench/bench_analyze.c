/* bench_analyze.c -- time matrix generation and analysis on big generated
 * matrices (default: lap3d27:155, about 9.3e7 nonzeros; ~1.2 GB).
 *
 *   bench_analyze [SPEC...] [--reps N]
 *
 * Prints one JSON line per spec: generation time, analysis time (median of
 * the repetitions), nnz/s of the analysis, and the features found. */
#include "adia.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench(const char *spec, int reps)
{
    adia_matrix *A = NULL;
    double t0 = now();
    if (adia_matrix_generate(spec, &A) != ADIA_OK) {
        fprintf(stderr, "bench_analyze: %s\n", adia_last_error());
        return 1;
    }
    double t_gen = now() - t0;
    double t[64];
    adia_features f;
    for (int r = 0; r < reps; r++) {
        t0 = now();
        if (adia_matrix_analyze(A, NULL, &f) != ADIA_OK) {
            fprintf(stderr, "bench_analyze: %s\n", adia_last_error());
            adia_matrix_destroy(A);
            return 1;
        }
        t[r] = now() - t0;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    double med = t[reps / 2];
    time_t wall = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall));
    printf("{\"spec\":\"%s\",\"date\":\"%s\",\"threads\":%d,\"rows\":%d,\"nnz\":%lld,"
           "\"gen_s\":%.3f,\"analyze_s\":%.3f,\"analyze_min_s\":%.3f,\"analyze_nnz_per_s\":%.3g,"
           "\"n_diag\":%lld,\"p_offset\":%.4f,\"p_zero\":%.6f,\"n_long_zero\":%lld,"
           "\"n_scatter\":%lld,\"dia_fill\":%.4f,\"type\":\"%s\",\"format\":\"%s\"}\n",
           spec, date, omp_get_max_threads(), f.rows, (long long)f.nnz, t_gen, med, t[0],
           (double)f.nnz / med, (long long)f.n_diag, f.p_offset, f.p_zero,
           (long long)f.n_long_zero, (long long)f.n_scatter, f.dia_fill,
           adia_matrix_type_name(f.type), f.format);
    fflush(stdout);
    adia_matrix_destroy(A);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 3, nspec = 0, rc = 0;
    const char *specs[64];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1 || reps > 64) {
                fprintf(stderr, "bench_analyze: --reps must be 1..64\n");
                return 2;
            }
        } else if (nspec < 64) {
            specs[nspec++] = argv[i];
        }
    }
    if (nspec == 0) specs[nspec++] = "lap3d27:155";
    for (int i = 0; i < nspec; i++) rc |= bench(specs[i], reps);
    return rc;
}
