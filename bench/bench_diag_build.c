/* bench_diag_build.c -- construction time of the diagonal formats on ~1e7
 * nonzero structured matrices built directly (type I band, type II far
 * diagonals, type III broken diagonals + scatter points), against one
 * parallel pass over the CSR arrays.  Prints one table row per format:
 * median of `reps` builds, the ratio to the CSR pass, pieces, groups,
 * padded zeros.  Usage: bench_diag_build [scale=1.0] [reps=3] */
#include "formats/diag_core.h"

#include <omp.h>
#include <stdio.h>
#include <time.h>

/* Diagonals offs[0..K) on n x n; a diagonal other than 0 is empty on rows
 * whose block of `gap` rows is odd (gap 0: no gaps); plus a scatter point
 * every `scat` rows (0: none) at column (7*i) % n. */
static adia_matrix *make(int32_t n, const int32_t *offs, int K, int32_t gap, int32_t scat)
{
    int64_t cap = (int64_t)n * (K + 1);
    int64_t *rp = malloc(((size_t)n + 1) * sizeof *rp);
    int32_t *ci = malloc((size_t)cap * sizeof *ci);
    double *v = malloc((size_t)cap * sizeof *v);
    int64_t k = 0;
    rp[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t extra = scat && i % scat == scat / 2 ? (int32_t)((7 * (int64_t)i) % n) : -1;
        for (int d = 0; d < K; d++) {
            int64_t j = (int64_t)i + offs[d];
            if (extra >= 0 && extra < j) { ci[k] = extra; v[k++] = 3.0; extra = -1; }
            if (extra == j) extra = -1;
            if (j < 0 || j >= n || (gap && offs[d] != 0 && (i / gap) % 2)) continue;
            ci[k] = (int32_t)j;
            v[k++] = 1.0 + d;
        }
        if (extra >= 0) { ci[k] = extra; v[k++] = 3.0; }
        rp[i + 1] = k;
    }
    adia_matrix *A = NULL;
    if (adia_matrix_create_csr(n, n, k, rp, ci, v, ADIA_DOUBLE, &A) != ADIA_OK)
        fprintf(stderr, "bench: %s\n", adia_last_error());
    free(rp); free(ci); free(v);
    return A;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One pass over the CSR arrays (what any conversion must at least read). */
static double csr_pass(const adia_matrix *A, double *sink)
{
    adia_csr_view c;
    adia_matrix_csr(A, &c);
    double t = omp_get_wtime(), s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (int32_t i = 0; i < c.rows; i++)
        for (int64_t j = c.rowptr[i]; j < c.rowptr[i + 1]; j++) s += c.values[j] + (c.colind[j] - i);
    *sink += s;
    return omp_get_wtime() - t;
}

static void bench(const char *label, const adia_matrix *A, int reps)
{
    double sink = 0, t[16];
    for (int r = 0; r < reps; r++) t[r] = csr_pass(A, &sink);
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    double base = t[reps / 2];
    printf("\n%s: %d rows, %lld nonzeros; one CSR pass %.2f ms (sink %g)\n", label, adia_matrix_rows(A),
           (long long)adia_matrix_nnz(A), base * 1e3, sink > 0 ? 1.0 : 0.0);
    printf("%-7s %10s %8s %9s %8s %12s %12s\n", "format", "build ms", "x pass", "pieces", "groups",
           "padded", "scatter");
    const char *names[] = {"dia", "hdi", "brcsd1", "brcsd2", "crsd"};
    for (int f = 0; f < 5; f++) {
        adia_format *F = NULL;
        for (int r = 0; r < reps; r++) {
            adia_format_destroy(F);
            F = NULL;
            double t0 = omp_get_wtime();
            if (adia_format_build(A, names[f], NULL, ADIA_DOUBLE, &F) != ADIA_OK) {
                printf("%-7s failed: %s\n", names[f], adia_last_error());
                break;
            }
            t[r] = omp_get_wtime() - t0;
        }
        if (!F) continue;
        qsort(t, (size_t)reps, sizeof *t, cmp_d);
        const adia_diag *D = adia__format_diag(F);
        printf("%-7s %10.2f %8.1f %9d %8d %12lld %12lld\n", names[f], t[reps / 2] * 1e3,
               t[reps / 2] / base, D->n_pieces, D->n_groups,
               (long long)adia_format_padded_zeros(F), (long long)D->n_scatter);
        adia_format_destroy(F);
    }
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (reps < 1 || reps > 16 || scale <= 0) {
        fprintf(stderr, "usage: bench_diag_build [scale>0] [reps 1..16]\n");
        return 2;
    }
    time_t now = time(NULL);
    printf("bench_diag_build: %d OpenMP threads, %s", omp_get_max_threads(), ctime(&now));
    int32_t n1 = (int32_t)(1430000 * scale), n2 = (int32_t)(2000000 * scale), n3 = (int32_t)(2000000 * scale);
    const int32_t band[] = {-3, -2, -1, 0, 1, 2, 3};
    const int32_t far[] = {-n2 / 2, -1, 0, 1, n2 / 2};
    const int32_t brk[] = {-n3 / 4, -64, -1, 0, 1, 64, n3 / 4};
    adia_matrix *A = make(n1, band, 7, 0, 0);
    if (A) bench("type I (band, 7 diagonals)", A, reps);
    adia_matrix_destroy(A);
    A = make(n2, far, 5, 0, 0);
    if (A) bench("type II (diagonals 0, +-1, +-n/2)", A, reps);
    adia_matrix_destroy(A);
    A = make(n3, brk, 7, 4096, 5000);
    if (A) bench("type III (7 diagonals, 4096-row zero sections, scatter every 5000 rows)", A, reps);
    adia_matrix_destroy(A);
    return 0;
}
