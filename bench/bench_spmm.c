/* bench_spmm.c -- diagonal products: CPU sequential vs OpenMP (HM and CDM),
 * the GPU kernels and cusparseSpGEMM ALG1/ALG3 (time and peak device memory
 * from cudaMemGetInfo), on the seed's sizes and large ones.
 *
 *   bench_spmm [small|seed|large|huge|all]  (default: small; all = seed + large)
 *
 * seed: the seed's banded sweep (n = 1024..9216, bandwidth 5..20), its
 * Table 1 (n = 1000..10000 with its numbers of random diagonals) and Table 2
 * (n = 1e4, 200..600 random diagonals each).
 * large: n = 1e6 .. 2e6; its random case (40 x 40 diagonals within
 * +-5000, n = 2e6: C has ~3e9 entries, too large for a host CSR) runs with
 * C kept on the device, 256 sampled rows compared bitwise with a CPU
 * computation of those rows (cuSPARSE's 32-bit CSR cannot hold such a C).
 * huge: band bw=20 with n = 4e6 (C: 81 diagonals, 324M entries; no
 * sequential run).
 *
 * Every GPU result is checked against the CPU product before it is
 * reported.  Times: median of the repetitions; "num" = numeric phase only
 * (structure and copies excluded; GPU: kernel by CUDA events), "tot" = the
 * whole adia_spgemm call, gpu_dev = adia_spgemm_info.device_ms (what a caller
 * with device-resident operands pays: structure, its upload, allocation of
 * C, kernel -- the span cuSPARSE is timed over), x_cusp = the faster
 * cuSPARSE algorithm's time / gpu_dev, mem_x = our device bytes / the
 * value bytes of A, B and C (8 per entry). */
#define _POSIX_C_SOURCE 200809L
#include "adia.h"
#include "spmm/spmm_internal.h"

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

/* Medians of adia_spgemm's times over the repetitions. */
typedef struct run_times {
    double num, tot, dev, xfer, setup, alloc;
    int tile_rows;
} run_times;

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Run adia_spgemm reps times; keeps the last C. */
static int run_adia(const adia_matrix *A, const adia_matrix *B, adia_device dev,
                    adia_spgemm_algo algo, int threads, int reps, run_times *rt, adia_matrix **C)
{
    double tn[16], tt[16], td[16], tx[16], ts[16], ta[16];
    for (int r = 0; r < reps; r++) {
        adia_spgemm_options opt;
        adia_spgemm_info info;
        adia_spgemm_options_default(&opt);
        opt.device = dev;
        opt.algorithm = algo;
        opt.threads = threads;
        opt.info = &info;
        adia_matrix_destroy(*C);
        *C = NULL;
        double t0 = now_ms();
        adia_status s = adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, B, C, &opt);
        tt[r] = now_ms() - t0;
        if (s != ADIA_OK) {
            fprintf(stderr, "  adia_spgemm: %s\n", adia_last_error());
            return -1;
        }
        tn[r] = info.time_ms;
        td[r] = info.device_ms;
        tx[r] = info.transfer_ms;
        ts[r] = info.device_setup_ms;
        ta[r] = info.device_alloc_ms;
        rt->tile_rows = info.gpu_tile_rows;
    }
    rt->num = median(tn, reps);
    rt->tot = median(tt, reps);
    rt->dev = median(td, reps);
    rt->xfer = median(tx, reps);
    rt->setup = median(ts, reps);
    rt->alloc = median(ta, reps);
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

/* mem_x: our device bytes over the value bytes of A, B and C. */
static double mem_ratio(const adia_matrix *A, const adia_matrix *B, const adia_spgemm_info *si)
{
    double vals = 8.0 * ((double)adia_matrix_nnz(A) + (double)adia_matrix_nnz(B) + (double)si->nnz);
    return (double)si->device_bytes / vals;
}

static void print_case_start(const char *name, const adia_spgemm_info *si)
{
    printf("%-24s %9d %5lld %5lld %11lld %9.3g |", name, si->rows, (long long)si->n_diag,
           (long long)si->n_pairs, (long long)si->nnz, (double)si->flops);
}

/* with_seq: also the single-thread run (skipped for the huge cases). */
static void bench_case(const char *name, adia_matrix *A, adia_matrix *B, int have_gpu,
                       int with_seq)
{
    if (!A || !B) {
        printf("%-24s could not build inputs\n", name);
        return;
    }
    adia_spgemm_info si;
    if (adia_spgemm_structure(ADIA_OP_N, A, ADIA_OP_N, B, NULL, &si, NULL) != ADIA_OK) {
        printf("%-24s structure: %s\n", name, adia_last_error());
        return;
    }
    int reps = si.flops < 1e9 ? 5 : si.flops < 2e10 ? 3 : 1;
    run_times seq = {NAN, NAN, NAN, NAN, NAN, NAN, 0}, omp = seq, cdm = seq, gpu = seq;
    double check = NAN;
    adia_matrix *Cs = NULL, *Co = NULL, *Cc = NULL, *Cg = NULL;
    if (with_seq) run_adia(A, B, ADIA_DEVICE_CPU, ADIA_SPGEMM_HM, 1, reps, &seq, &Cs);
    run_adia(A, B, ADIA_DEVICE_CPU, ADIA_SPGEMM_HM, 0, reps, &omp, &Co);
    if (run_adia(A, B, ADIA_DEVICE_CPU, ADIA_SPGEMM_CDM, 0, reps, &cdm, &Cc) != 0) cdm.num = NAN;
    adia_matrix_destroy(Cc);
    if (Cs && Co && !adia_matrix_equal(Cs, Co)) printf("  WARNING: OpenMP != sequential\n");
    adia_matrix_destroy(Cs);
    if (have_gpu && Co &&
        run_adia(A, B, ADIA_DEVICE_GPU, ADIA_SPGEMM_HM, 0, reps, &gpu, &Cg) == 0) {
        adia_csr_view g, c;
        adia_matrix_csr(Cg, &g);
        adia_matrix_csr(Co, &c);
        check = adia_matrix_equal(Cg, Co) ? 0.0 : rel_diff(&g, &c);
    }
    adia_matrix_destroy(Cg);
    print_case_start(name, &si);
    printf(" %9.2f %9.2f %9.2f %9.2f | %8.3f %8.3f %8.2f %3d %8.0f %5.2f %8.1e", seq.num,
           omp.num, omp.tot, cdm.num, gpu.num, gpu.dev, gpu.tot, gpu.tile_rows,
           (double)si.device_bytes / 1e6, mem_ratio(A, B, &si), check);
#ifdef ADIA_HAVE_CUDA
    if (have_gpu && Co) {
        double t1 = cusparse_compare(A, B, Co, CUSPARSE_SPGEMM_ALG1);
        double t3 = cusparse_compare(A, B, Co, CUSPARSE_SPGEMM_ALG3);
        double best = isnan(t1) ? t3 : isnan(t3) ? t1 : fmin(t1, t3);
        printf(" | x_cusp %7.1f | gpu_dev = setup %.3f + alloc %.3f + kernel", best / gpu.dev,
               gpu.setup, gpu.alloc);
    }
#endif
    printf("\n");
    fflush(stdout);
    adia_matrix_destroy(Co);
}

/* A product too large for a host C: GPU with C on the device, 256 rows
 * from the middle checked against the CPU.  cuSPARSE not run when C
 * exceeds its 32-bit indices. */
static void bench_device_only(const char *name, adia_matrix *A, adia_matrix *B, int have_gpu)
{
    adia_spgemm_info si;
    if (!A || !B || !have_gpu) {
        printf("%-24s %s\n", name, !have_gpu ? "skipped: no GPU" : "could not build inputs");
        return;
    }
    int64_t bad = -1, row0 = adia_matrix_rows(A) / 2;
    adia_status s = adia__spmm_gpu_check_rows(ADIA_OP_N, A, ADIA_OP_N, B, row0, 256, &si, &bad);
    if (s != ADIA_OK) {
        printf("%-24s GPU device-only run failed: %s\n", name, adia_last_error());
        return;
    }
    print_case_start(name, &si);
    printf(" %9s %9s %9s %9s | %8.3f %8.3f %8s %3d %8.0f %5.2f %8s", "-", "-", "-", "-",
           si.time_ms, si.device_ms, "-", (int)si.gpu_tile_rows, (double)si.device_bytes / 1e6,
           mem_ratio(A, B, &si), bad == 0 ? "rows-eq" : "ROWS-NE");
    printf(" | sampled rows %lld..%lld: %lld mismatches, transfer %.1f ms", (long long)row0,
           (long long)row0 + 255, (long long)bad, si.transfer_ms);
    if (si.nnz > INT32_MAX)
        printf(" | cuSPARSE not run: C's %lld entries exceed its 32-bit CSR indices",
               (long long)si.nnz);
    printf("\n");
    fflush(stdout);
}

/* One case, then its operands freed (B may be A). */
static void run_case(const char *name, adia_matrix *A, adia_matrix *B, int gpu, int with_seq,
                     int device_only)
{
    if (device_only) bench_device_only(name, A, B, gpu);
    else bench_case(name, A, B, gpu, with_seq);
    if (B != A) adia_matrix_destroy(B);
    adia_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "small";
    int all = !strcmp(mode, "all"), small = !strcmp(mode, "small");
    int seed = all || !strcmp(mode, "seed"), large = all || !strcmp(mode, "large");
    int huge = !strcmp(mode, "huge");
    if (!small && !seed && !large && !huge) {
        fprintf(stderr, "usage: bench_spmm [small|seed|large|huge|all]\n");
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
           " CDM numeric (all threads), gpu = kernel (events), gpu_dev = device_ms (structure +"
           " its upload + allocation of C + kernel, as cuSPARSE is timed), gpu_tot = whole call,"
           " T = tile rows (0 = streaming kernel), gpu_MB = device bytes, mem_x = device bytes /"
           " value bytes of A+B+C, check = GPU vs CPU (0 = bitwise equal), x_cusp = faster"
           " cuSPARSE / gpu_dev\n");
    printf("%-24s %9s %5s %5s %11s %9s | %9s %9s %9s %9s | %8s %8s %8s %3s %8s %5s %8s%s\n",
           "case", "n", "diagC", "pairs", "nnzC", "flops", "seq", "omp", "omp_tot", "cdm", "gpu",
           "gpu_dev", "gpu_tot", "T", "gpu_MB", "mem_x", "check",
           ndev ? " | cuSPARSE alg: ms MB rel_err | x_cusp" : "");
    char name[64];
    if (small || seed) {
        for (int32_t n = 1024; n <= 9216; n += small ? 4096 : 1024)
            for (int32_t bw = 5; bw <= 20; bw += small ? 15 : 5) {
                adia_matrix *A = make_banded(n, bw, 1), *B = make_banded(n, bw, 2);
                snprintf(name, sizeof name, "band n=%d bw=%d", n, bw);
                run_case(name, A, B, ndev > 0, 1, 0);
            }
        /* seed Table 1: n and (dgA, dgB) random full diagonals */
        static const int table1[][3] = {{1000, 9, 5},    {2000, 9, 15},   {3000, 29, 15},
                                        {4000, 29, 35},  {5000, 59, 35},  {6000, 89, 75},
                                        {7000, 99, 75},  {8000, 109, 35}, {9000, 59, 75},
                                        {10000, 109, 35}};
        for (int r = 0; seed && r < 10; r++) {
            const int n = table1[r][0];
            snprintf(name, sizeof name, "table1 n=%d %dx%d", n, table1[r][1], table1[r][2]);
            run_case(name, make_random(n, table1[r][1], n - 1, 20 + r),
                     make_random(n, table1[r][2], n - 1, 40 + r), ndev > 0, 1, 0);
        }
        for (int K = 200; K <= (small ? 200 : 600); K += 100) {
            adia_matrix *A = make_random(10000, K, 9999, 3), *B = make_random(10000, K, 9999, 4);
            snprintf(name, sizeof name, "random n=1e4 K=%d", K);
            run_case(name, A, B, ndev > 0, 1, 0);
        }
    }
    if (large) {
        run_case("band n=1e6 bw=10", make_banded(1000000, 10, 5), make_banded(1000000, 10, 6),
                 ndev > 0, 1, 0);
        adia_matrix *L = make_lap3d7(128);
        run_case("lap3d7 128^3 squared", L, L, ndev > 0, 1, 0);
        run_case("random n=2e6 K=40 +-5000", make_random(2000000, 40, 5000, 7),
                 make_random(2000000, 40, 5000, 8), ndev > 0, 0, 1);
    }
    if (huge)
        run_case("band n=4e6 bw=20", make_banded(4000000, 20, 9), make_banded(4000000, 20, 10),
                 ndev > 0, 0, 0);
    return 0;
}
