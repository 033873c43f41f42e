/* bench_cpu_spmv.c -- CPU SpMV of every format with a cost model, the
 * planner's default choice and a plain OpenMP CSR loop, against the floor
 * of a read bandwidth measured in the same run.
 *
 *   bench_cpu_spmv SPEC|FILE.mtx ...
 *
 * One Markdown row per matrix at the current OMP_NUM_THREADS:
 *   floor ms   = (8 nnz + 16 rows) bytes / read bandwidth (measured per
 *                matrix, right after its timings) (values and x, y
 *                once; the index-free minimum of a diagonal format)
 *   plain csr  = the textbook `omp parallel for` CSR loop
 *   best       = the fastest format the planner can choose (median of 30)
 *                and its time / floor
 *   own floor  = the best format's time / (its own bytes: its stored arrays,
 *                padding and indices included, + x and y once, as in the
 *                floor / read bandwidth)
 *   model pick = adia_plan_create with the MODEL chooser for 1000 calls
 *                (the default hints otherwise), its time / the best's
 *   librsb     = librsb's rsb_spmv on its default (untuned) structure from
 *                the CSR, at OMP_NUM_THREADS threads, and its time / the
 *                best diagonal format's (when built with librsb: found at
 *                configure time, else "-")
 * threads = OMP_NUM_THREADS, and "(adia N)" where the library ran its
 *           formats with fewer: other processes kept cores busy (adia_threads)
 * Times are medians in ms (adia_cpu_time_spmv).  Formats are timed in
 * registry order, all in one process, so run the script twice and compare
 * rows: another process on the machine shows up as spread. */
#include "adia.h"
#include "adia_bench.h"   /* adia_cpu_time_spmv, adia_random_value */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef ADIA_BENCH_LIBRSB
#include <rsb.h>
#endif

#define RUNS 30

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* GB/s of a parallel read of 128 MiB with eight independent accumulators
 * per thread (best of 5). */
static double read_gbs(void)
{
    int64_t n = (int64_t)1 << 24;
    double *a = malloc((size_t)n * sizeof *a), best = INFINITY, sink = 0;
    if (!a) return NAN;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) a[i] = (double)(i & 7);
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ms(), s = 0;
#pragma omp parallel reduction(+ : s)
        {
            double acc[8] = {0};
#pragma omp for schedule(static)
            for (int64_t i = 0; i < n / 8; i++)
                for (int k = 0; k < 8; k++) acc[k] += a[8 * i + k];
            for (int k = 0; k < 8; k++) s += acc[k];
        }
        double t = now_ms() - t0;
        sink += s;
        if (t < best) best = t;
    }
    free(a);
    return sink == 1.5 ? 0 : (double)n * 8 / (best * 1e6);
}

/* The plain OpenMP CSR loop, median of RUNS. */
static double plain_csr_ms(const adia_csr_view *A, const double *x, double *y)
{
    double ms[RUNS];
    for (int r = -1; r < RUNS; r++) {
        double t0 = now_ms();
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < A->rows; i++) {
            double s = 0;
            for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++)
                s += A->values[j] * x[A->colind[j]];
            y[i] = s;
        }
        if (r >= 0) ms[r] = now_ms() - t0;
    }
    qsort(ms, RUNS, sizeof *ms, cmp_double);
    return ms[RUNS / 2];
}

#ifdef ADIA_BENCH_LIBRSB
/* rsb_spmv y = A x on librsb's default structure, median of RUNS (NaN when
 * librsb refuses the matrix, e.g. over its int32 nonzero count). */
static double librsb_ms(const adia_csr_view *A, const double *x, double *y)
{
    rsb_err_t err = RSB_ERR_NO_ERROR;
    rsb_coo_idx_t *rp = malloc(((size_t)A->rows + 1) * sizeof *rp);
    if (!rp || A->nnz > INT32_MAX) {
        free(rp);
        return NAN;
    }
    for (int32_t i = 0; i <= A->rows; i++) rp[i] = (rsb_coo_idx_t)A->rowptr[i];
    struct rsb_mtx_t *M = rsb_mtx_alloc_from_csr_const(A->values, rp, A->colind, (rsb_nnz_idx_t)A->nnz,
                                                       RSB_NUMERICAL_TYPE_DOUBLE, A->rows, A->cols, 1, 1,
                                                       RSB_FLAG_DEFAULT_RSB_MATRIX_FLAGS, &err);
    free(rp);
    if (!M || err != RSB_ERR_NO_ERROR) return NAN;
    const double one = 1.0, zero = 0.0;
    double ms[RUNS];
    for (int r = -1; r < RUNS && err == RSB_ERR_NO_ERROR; r++) {
        double t0 = now_ms();
        err = rsb_spmv(RSB_TRANSPOSITION_N, &one, M, x, 1, &zero, y, 1);
        if (r >= 0) ms[r] = now_ms() - t0;
    }
    rsb_mtx_free(M);
    if (err != RSB_ERR_NO_ERROR) return NAN;
    qsort(ms, RUNS, sizeof *ms, cmp_double);
    return ms[RUNS / 2];
}
#else
static double librsb_ms(const adia_csr_view *A, const double *x, double *y)
{
    (void)A, (void)x, (void)y;
    return NAN;
}
#endif

static double format_ms(const adia_format *F, const double *x, double *y)
{
    adia_gpu_timing t;
    return adia_cpu_time_spmv((adia_format *)F, RUNS, x, y, &t) == ADIA_OK ? t.median_ms : NAN;
}

/* Whether the model proposes format `name` for A (its candidates). */
static int candidate(const adia_plan_candidate *c, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(c[i].format, name)) return 1;
    return 0;
}

/* Median ms and bytes moved of every format the planner can choose (NaN:
 * not built); *best = the fastest, *best_diag the fastest diagonal format
 * (-1: none). */
static void time_formats(const adia_matrix *A, const adia_plan_hints *h, const double *x,
                         double *y, double *ms, double *bytes, int *best, int *best_diag)
{
    adia_plan_candidate c[64];
    int n = 0;
    adia_plan_candidates(A, h, c, 64, &n);
    *best = *best_diag = -1;
    for (int i = 0; i < adia_format_count(); i++) {
        adia_format *F = NULL;
        ms[i] = NAN;
        if (candidate(c, n, adia_format_name_at(i)) &&
            adia_format_build(A, adia_format_name_at(i), NULL, ADIA_DOUBLE, &F) == ADIA_OK) {
            ms[i] = format_ms(F, x, y);
            bytes[i] = (double)adia_format_storage_bytes(F) + 8.0 * (adia_matrix_rows(A) + adia_matrix_cols(A));
        }
        adia_format_destroy(F);
        if (!isnan(ms[i]) && (*best < 0 || ms[i] < ms[*best])) *best = i;
        if (!isnan(ms[i]) && adia_format_is_diagonal(adia_format_name_at(i)) &&
            (*best_diag < 0 || ms[i] < ms[*best_diag]))
            *best_diag = i;
    }
}

static int bench(const char *what)
{
    adia_matrix *A = NULL;
    adia_status s = strstr(what, ".mtx") ? adia_matrix_read_mtx(what, &A)
                                         : adia_matrix_generate(what, &A);
    adia_csr_view v;
    if (s != ADIA_OK || adia_matrix_csr(A, &v) != ADIA_OK) {
        fprintf(stderr, "bench_cpu_spmv: %s: %s\n", what, adia_last_error());
        return 1;
    }
    double *x = malloc((size_t)v.cols * sizeof *x), *y = malloc((size_t)v.rows * sizeof *y);
    double ms[64], bytes[64];
    int best, best_diag;
    for (int32_t i = 0; i < v.cols; i++) x[i] = adia_random_value(42, i);
    double plain = plain_csr_ms(&v, x, y);
    adia_plan_hints h = {.expected_calls = 1000, .chooser = ADIA_CHOOSE_MODEL};
    /* librsb beside the plain loop, before any format: timed after every
     * format's build and free it ran 1.4-1.8x slower (12 ms against 6.7 on
     * lap3d7:100, one thread), a heap effect a program that uses librsb
     * alone does not have */
    double rsb = librsb_ms(&v, x, y);
    time_formats(A, &h, x, y, ms, bytes, &best, &best_diag);
    adia_plan *P = NULL;
    double pick = NAN;
    const char *pick_name = "-";
    if (adia_plan_create(A, &h, &P) == ADIA_OK) {
        pick = format_ms(adia_plan_format(P), x, y);
        pick_name = adia_plan_format_name(P);
    }
    double gbs = read_gbs();   /* beside the timings: the machine is shared */
    double floor_ms = (8.0 * (double)v.nnz + 16.0 * v.rows) / (gbs * 1e6);
    char threads[32];
    int used = adia_threads(), asked = omp_get_max_threads();
    snprintf(threads, sizeof threads, used < asked ? "%d (adia %d)" : "%d", asked, used);
    printf("| %s | %d | %lld | %s | %.1f | %.3f | %.3f | %s %.3f | %.2f | %.2f | %s %.3f | %.2f | %.3f | %.2f |",
           what, (int)v.rows, (long long)v.nnz, threads, gbs, floor_ms, plain,
           best >= 0 ? adia_format_name_at(best) : "-", best >= 0 ? ms[best] : NAN,
           best >= 0 ? ms[best] / floor_ms : NAN,
           best >= 0 ? ms[best] * gbs * 1e6 / bytes[best] : NAN, pick_name, pick,
           best >= 0 ? pick / ms[best] : NAN, rsb, best_diag >= 0 ? rsb / ms[best_diag] : NAN);
    for (int i = 0; i < adia_format_count(); i++)
        if (!isnan(ms[i])) printf(" %s %.3f", adia_format_name_at(i), ms[i]);
    printf(" |\n");
    fflush(stdout);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    free(x);
    free(y);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_cpu_spmv SPEC|FILE.mtx ...\n");
        return 2;
    }
    printf("| matrix | rows | nnz | threads | read GB/s | floor ms | plain csr ms | best ms | best / floor "
           "| best / own floor | model pick ms | pick / best | librsb ms | librsb / best diag | all formats ms |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |\n");
#ifdef ADIA_BENCH_LIBRSB
    if (rsb_lib_init(RSB_NULL_INIT_OPTIONS) != RSB_ERR_NO_ERROR) return 1;
#endif
    int rc = 0;
    for (int i = 1; i < argc; i++) rc |= bench(argv[i]);
#ifdef ADIA_BENCH_LIBRSB
    rsb_lib_exit(RSB_NULL_EXIT_OPTIONS);
#endif
    return rc;
}
