/* bench_spmm.c -- diagonal products: CPU sequential vs OpenMP (HM and CDM),
 * the GPU streaming kernel and cusparseSpGEMM ALG1/ALG3 (time and peak
 * device memory from cudaMemGetInfo), on the seed's sizes and large ones.
 *
 *   bench_spmm [small|seed|large|all]      (default: small)
 *
 * Every GPU result is checked against the CPU product before it is
 * reported.  Times: median of the repetitions; "num" = numeric phase only
 * (structure and copies excluded; GPU: kernel by CUDA events), "tot" = the
 * whole adia_spmm call. */
#define _POSIX_C_SOURCE 200809L
#include "adia.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#include <cusparse.h>
#endif

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static double urand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* n x n with full diagonals at the given offsets; values in [0.5, 1.5). */
static adia_matrix *make_diags(int32_t n, int K, const int32_t *off, uint64_t seed)
{
    int64_t cap = 0;
    for (int d = 0; d < K; d++) cap += n - (off[d] < 0 ? -off[d] : off[d]);
    int32_t *r = malloc((cap + 1) * sizeof *r), *c = malloc((cap + 1) * sizeof *c);
    double *v = malloc((cap + 1) * sizeof *v);
    adia_matrix *A = NULL;
    if (r && c && v) {
        int64_t k = 0;
        uint64_t st = seed * 0x9E3779B97F4A7C15ull + 1;
        for (int d = 0; d < K; d++)
            for (int32_t i = off[d] < 0 ? -off[d] : 0; i < n && i + off[d] < n; i++) {
                r[k] = i;
                c[k] = i + off[d];
                v[k++] = 0.5 + urand(&st);
            }
        if (adia_matrix_create_coo(n, n, k, r, c, v, ADIA_DOUBLE, &A) != ADIA_OK)
            fprintf(stderr, "bench_spmm: %s\n", adia_last_error());
    }
    free(r);
    free(c);
    free(v);
    return A;
}

static adia_matrix *make_banded(int32_t n, int32_t bw, uint64_t seed)
{
    int32_t off[2 * 64 + 1];
    for (int32_t o = -bw; o <= bw; o++) off[o + bw] = o;
    return make_diags(n, 2 * bw + 1, off, seed);
}

/* K distinct offsets, uniform in [-spread, spread] (main diagonal included). */
static adia_matrix *make_random(int32_t n, int K, int32_t spread, uint64_t seed)
{
    int32_t *off = malloc((size_t)K * sizeof *off);
    char *used = calloc(2 * (size_t)spread + 1, 1);
    uint64_t st = seed + 77;
    int k = 0;
    if (off && used) {
        off[k++] = 0;
        used[spread] = 1;
        while (k < K) {
            int32_t o = (int32_t)(urand(&st) * (2 * spread + 1)) - spread;
            if (o <= -n || o >= n || used[o + spread]) continue;
            used[o + spread] = 1;
            off[k++] = o;
        }
    }
    adia_matrix *A = off && used ? make_diags(n, K, off, seed) : NULL;
    free(off);
    free(used);
    return A;
}

/* 3D 7-point Laplacian on N^3 (couplings across the boundary left out). */
static adia_matrix *make_lap3d7(int32_t N)
{
    int64_t n = (int64_t)N * N * N, cap = 7 * n;
    int32_t *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    adia_matrix *A = NULL;
    if (r && c && v) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t x = i % N, y = i / N % N, z = i / ((int64_t)N * N);
            int64_t nb[6] = {x > 0 ? i - 1 : -1, x < N - 1 ? i + 1 : -1,
                             y > 0 ? i - N : -1, y < N - 1 ? i + N : -1,
                             z > 0 ? i - (int64_t)N * N : -1, z < N - 1 ? i + (int64_t)N * N : -1};
            r[k] = (int32_t)i, c[k] = (int32_t)i, v[k++] = 6.0;
            for (int j = 0; j < 6; j++)
                if (nb[j] >= 0) r[k] = (int32_t)i, c[k] = (int32_t)nb[j], v[k++] = -1.0;
        }
        adia_matrix_create_coo((int32_t)n, (int32_t)n, k, r, c, v, ADIA_DOUBLE, &A);
    }
    free(r);
    free(c);
    free(v);
    return A;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run adia_spmm reps times; median numeric and total ms; keeps the last C. */
static int run_adia(const adia_matrix *A, const adia_matrix *B, adia_device dev,
                    adia_spmm_algo algo, int threads, int reps, double *num_ms,
                    double *tot_ms, adia_matrix **C)
{
    double tn[16], tt[16];
    for (int r = 0; r < reps; r++) {
        adia_spmm_options opt;
        adia_spmm_info info;
        adia_spmm_options_default(&opt);
        opt.device = dev;
        opt.algorithm = algo;
        opt.threads = threads;
        opt.info = &info;
        adia_matrix_destroy(*C);
        *C = NULL;
        double t0 = now_ms();
        adia_status s = adia_spmm(ADIA_OP_N, A, ADIA_OP_N, B, C, &opt);
        tt[r] = now_ms() - t0;
        if (s != ADIA_OK) {
            fprintf(stderr, "  adia_spmm: %s\n", adia_last_error());
            return -1;
        }
        tn[r] = info.time_ms;
    }
    qsort(tn, reps, sizeof *tn, cmp_double);
    qsort(tt, reps, sizeof *tt, cmp_double);
    *num_ms = tn[reps / 2];
    *tot_ms = tt[reps / 2];
    return 0;
}

/* max |C - R| / max |R| over the union of the patterns (missing = 0). */
static double rel_diff(const adia_csr_view *c, const adia_csr_view *r)
{
    double num = 0, den = 1e-300;
    for (int32_t i = 0; i < c->rows; i++) {
        int64_t p = c->rowptr[i], q = r->rowptr[i];
        while (p < c->rowptr[i + 1] || q < r->rowptr[i + 1]) {
            int32_t jc = p < c->rowptr[i + 1] ? c->colind[p] : INT32_MAX;
            int32_t jr = q < r->rowptr[i + 1] ? r->colind[q] : INT32_MAX;
            double x = jc <= jr ? c->values[p++] : 0, y = jr <= jc ? r->values[q++] : 0;
            if (fabs(x - y) > num || isnan(x)) num = isnan(x) ? INFINITY : fabs(x - y);
            if (fabs(y) > den) den = fabs(y);
        }
    }
    return num / den;
}

#ifdef ADIA_HAVE_CUDA
#include "bench_spmm_cusparse.inc"
#endif

static void bench_case(const char *name, adia_matrix *A, adia_matrix *B, int have_gpu)
{
    if (!A || !B) {
        printf("%-24s could not build inputs\n", name);
        return;
    }
    adia_spmm_info si;
    if (adia_spmm_structure(ADIA_OP_N, A, ADIA_OP_N, B, NULL, &si, NULL) != ADIA_OK) {
        printf("%-24s structure: %s\n", name, adia_last_error());
        return;
    }
    int reps = si.flops < 1e9 ? 5 : si.flops < 2e10 ? 3 : 1;
    double seq_n = NAN, seq_t = NAN, omp_n = NAN, omp_t = NAN, cdm_n = NAN;
    double tmp, gpu_n = NAN, gpu_t = NAN, check = NAN;
    adia_matrix *Cs = NULL, *Co = NULL, *Cc = NULL, *Cg = NULL;
    run_adia(A, B, ADIA_DEVICE_CPU, ADIA_SPMM_HM, 1, reps, &seq_n, &seq_t, &Cs);
    run_adia(A, B, ADIA_DEVICE_CPU, ADIA_SPMM_HM, 0, reps, &omp_n, &omp_t, &Co);
    if (run_adia(A, B, ADIA_DEVICE_CPU, ADIA_SPMM_CDM, 0, reps, &cdm_n, &tmp, &Cc) != 0)
        cdm_n = NAN;
    adia_matrix_destroy(Cc);
    if (Cs && Co && !adia_matrix_equal(Cs, Co)) printf("  WARNING: OpenMP != sequential\n");
    if (have_gpu && Co && run_adia(A, B, ADIA_DEVICE_GPU, ADIA_SPMM_HM, 0, reps, &gpu_n,
                                   &gpu_t, &Cg) == 0) {
        adia_csr_view g, c;
        adia_matrix_csr(Cg, &g);
        adia_matrix_csr(Co, &c);
        check = adia_matrix_equal(Cg, Co) ? 0.0 : rel_diff(&g, &c);
    }
    printf("%-24s %9d %5lld %5lld %11lld %9.3g | %9.2f %9.2f %9.2f %9.2f | %8.3f %8.2f %8.0f %8.1e",
           name, si.rows, (long long)si.n_diag, (long long)si.n_pairs, (long long)si.nnz,
           (double)si.flops, seq_n, omp_n, omp_t, cdm_n, gpu_n, gpu_t,
           (double)si.device_bytes / 1e6, check);
#ifdef ADIA_HAVE_CUDA
    if (have_gpu && Co) {
        cusparse_compare(A, B, Co, CUSPARSE_SPGEMM_ALG1);
        cusparse_compare(A, B, Co, CUSPARSE_SPGEMM_ALG3);
    }
#endif
    printf("\n");
    fflush(stdout);
    adia_matrix_destroy(Cs);
    adia_matrix_destroy(Co);
    adia_matrix_destroy(Cg);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "small";
    int all = !strcmp(mode, "all"), small = !strcmp(mode, "small");
    int seed = all || !strcmp(mode, "seed"), large = all || !strcmp(mode, "large");
    if (!small && !seed && !large) {
        fprintf(stderr, "usage: bench_spmm [small|seed|large|all]\n");
        return 2;
    }
    int ndev = 0;
    adia_gpu_device_count(&ndev);
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    printf("# bench_spmm %s, %s, C = A*B in double\n", mode, date);
#ifdef ADIA_HAVE_CUDA
    if (ndev > 0) {
        struct cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, 0);
        printf("# device: %s\n", prop.name);
    }
#endif
    if (ndev == 0) printf("# no CUDA device: CPU columns only\n");
    printf("# ms: seq/omp = HM numeric phase with 1/all threads, omp_tot = whole call, cdm ="
           " CDM numeric (all threads), gpu = kernel (events), gpu_tot = whole call,"
           " gpu_MB = device bytes, check = GPU vs CPU (0 = bitwise equal)\n");
    printf("%-24s %9s %5s %5s %11s %9s | %9s %9s %9s %9s | %8s %8s %8s %8s%s\n", "case", "n",
           "diagC", "pairs", "nnzC", "flops", "seq", "omp", "omp_tot", "cdm", "gpu", "gpu_tot",
           "gpu_MB", "check", ndev ? " | cuSPARSE alg: ms MB rel_err" : "");
    char name[64];
    if (small || seed) {
        for (int32_t n = 1024; n <= 9216; n += small ? 4096 : 1024)
            for (int32_t bw = 5; bw <= 20; bw += small ? 15 : 5) {
                adia_matrix *A = make_banded(n, bw, 1), *B = make_banded(n, bw, 2);
                snprintf(name, sizeof name, "band n=%d bw=%d", n, bw);
                bench_case(name, A, B, ndev > 0);
                adia_matrix_destroy(A);
                adia_matrix_destroy(B);
            }
        for (int K = 200; K <= (small ? 200 : 600); K += 100) {
            adia_matrix *A = make_random(10000, K, 9999, 3), *B = make_random(10000, K, 9999, 4);
            snprintf(name, sizeof name, "random n=1e4 K=%d", K);
            bench_case(name, A, B, ndev > 0);
            adia_matrix_destroy(A);
            adia_matrix_destroy(B);
        }
    }
    if (large) {
        adia_matrix *A = make_banded(1000000, 10, 5), *B = make_banded(1000000, 10, 6);
        bench_case("band n=1e6 bw=10", A, B, ndev > 0);
        adia_matrix_destroy(A);
        adia_matrix_destroy(B);
        A = make_lap3d7(128);
        bench_case("lap3d7 128^3 squared", A, A, ndev > 0);
        adia_matrix_destroy(A);
        A = make_random(2000000, 40, 5000, 7);
        B = make_random(2000000, 40, 5000, 8);
        bench_case("random n=2e6 K=40 +-5000", A, B, ndev > 0);
        adia_matrix_destroy(A);
        adia_matrix_destroy(B);
    }
    return 0;
}
