/* bench_gpu_build.c -- BRCSD-II built on the GPU from a device CSR
 * (adia__gpu_diag_build) against the host build (adia_format_build), on
 * matrices of about 5e7 nonzeros (the issue: analysis + BRCSD-II build of a
 * 5*10^7-nonzero matrix under 20 ms).  Per matrix (double): the CSR upload
 * once (ms), then adia__gpu_diag_build with download=0, one warm-up and the
 * median of 5 of: analyze_ms, host_ms, build_ms (the library's split) and
 * the call's wall time; "x floor" = wall / (nnz * 20 bytes / 3.3 TB/s), the
 * time to read CSR (12 B/nnz) and write the data (8 B/nnz) once at H100
 * bandwidth.  Then one build with download=1 compared array by array with
 * the host build (median of 3 timed).  Skips (exit 0) without a device.
 *
 *   bench_gpu_build [spec ...]   (default: the three matrices below) */
#define _POSIX_C_SOURCE 200809L
#include "adia.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ADIA_HAVE_CUDA
int main(void)
{
    printf("bench_gpu_build: built without CUDA, nothing to measure\n");
    return 0;
}
#else
#include "cuda/diag_build.h"

#include <cuda_runtime.h>

enum { REPS = 5, HOST_REPS = 3 };

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    return t[n / 2];
}

static void *dev_copy(const void *h, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) return NULL;
    if (bytes && cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(d);
        return NULL;
    }
    return d;
}

/* Name of the first array in which G and H differ, NULL if none. */
static const char *diag_diff(const adia_diag *G, const adia_diag *H)
{
    if (G->n_pieces != H->n_pieces || G->n_groups != H->n_groups || G->n_zero != H->n_zero ||
        G->n_scatter != 0 || G->nnz != H->nnz)
        return "counts";
    int64_t np = H->n_pieces, ng = H->n_groups;
    struct { const char *name; const void *a, *b; int64_t n; size_t sz; } arr[] = {
        {"piece_start", G->piece_start, H->piece_start, np + 1, sizeof *H->piece_start},
        {"piece_group", G->piece_group, H->piece_group, np, sizeof *H->piece_group},
        {"piece_data", G->piece_data, H->piece_data, np + 1, sizeof *H->piece_data},
        {"group_start", G->group_start, H->group_start, ng + 1, sizeof *H->group_start},
        {"offsets", G->offsets, H->offsets, H->group_start[ng], sizeof *H->offsets},
        {"zero_row", G->zero_row, H->zero_row, H->n_zero, sizeof *H->zero_row},
        {"zero_col", G->zero_col, H->zero_col, H->n_zero, sizeof *H->zero_col},
        {"data", G->data, H->data, H->piece_data[np], adia_value_size(H->vtype)},
    };
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++)
        if (arr[i].n > 0 && memcmp(arr[i].a, arr[i].b, (size_t)arr[i].n * arr[i].sz)) return arr[i].name;
    return NULL;
}

/* Median of HOST_REPS host builds (ms) and the GPU build with download=1
 * compared with the last one: "equal" or the first differing array. */
static const char *verify(const adia_matrix *A, const adia_gpu_csr *g, double *host_ms)
{
    adia_format_params p;
    adia_format_params_default(&p);
    p.block_rows = 256;
    adia_format *F = NULL;
    double t[HOST_REPS];
    for (int r = 0; r < HOST_REPS; r++) {
        adia_format_destroy(F);
        double t0 = now_ms();
        if (adia_format_build(A, "brcsd2", &p, ADIA_DOUBLE, &F) != ADIA_OK) return "host build failed";
        t[r] = now_ms() - t0;
    }
    *host_ms = median(t, HOST_REPS);
    adia_diag *G = NULL;
    const char *diff = "GPU build failed";
    if (adia__gpu_diag_build(g, 256, 0, ADIA_DOUBLE, 1, &G, NULL, NULL) == ADIA_OK) {
        diff = diag_diff(G, adia__format_diag(F));
        if (!diff) diff = "equal";
    } else {
        fprintf(stderr, "bench_gpu_build: %s\n", adia_last_error());
    }
    adia__diag_free(G);
    adia_format_destroy(F);
    return diff;
}

static void bench(const char *spec)
{
    adia_matrix *A = NULL;
    if (adia_matrix_generate(spec, &A) != ADIA_OK) {
        printf("%-24s generate failed: %s\n", spec, adia_last_error());
        return;
    }
    adia_csr_view v;
    adia_matrix_csr(A, &v);
    double t0 = now_ms();
    adia_gpu_csr g = {v.rows, v.cols, v.nnz, dev_copy(v.rowptr, ((size_t)v.rows + 1) * 8),
                      dev_copy(v.colind, (size_t)v.nnz * 4), dev_copy(v.values, (size_t)v.nnz * 8)};
    cudaDeviceSynchronize();
    double up = now_ms() - t0;
    double an[REPS], ho[REPS], bu[REPS], wall[REPS];
    adia_gpu_build_info info = {0};
    int ok = g.rowptr && g.colind && g.values;
    for (int r = -1; ok && r < REPS; r++) { /* r = -1: warm-up */
        adia_diag *D = NULL;
        double w = now_ms();
        ok = adia__gpu_diag_build(&g, 256, 0, ADIA_DOUBLE, 0, &D, NULL, &info) == ADIA_OK;
        w = now_ms() - w;
        adia__diag_free(D);
        if (r < 0) continue;
        an[r] = info.analyze_ms, ho[r] = info.host_ms, bu[r] = info.build_ms, wall[r] = w;
    }
    if (ok) {
        double host = 0, floor_ms = (double)v.nnz * 20 / 3.3e9;
        const char *eq = verify(A, &g, &host);
        double wm = median(wall, REPS);
        printf("%-24s %10lld %7lld %8.2f %8.2f %8.2f %8.2f %8.2f %7.1f %9.2f %6.1f  %s\n", spec,
               (long long)v.nnz, (long long)info.n_diag, up, median(an, REPS), median(ho, REPS),
               median(bu, REPS), wm, wm / floor_ms, host, host / wm, eq);
    } else {
        printf("%-24s failed: %s\n", spec, adia_last_error());
    }
    cudaFree((void *)g.rowptr);
    cudaFree((void *)g.colind);
    cudaFree((void *)g.values);
    adia_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    int n = 0;
    if (adia_gpu_device_count(&n) != ADIA_OK || n == 0) {
        printf("bench_gpu_build: no CUDA device, skipped\n");
        return 0;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    time_t now = time(NULL);
    printf("bench_gpu_build: %s, %s", prop.name, ctime(&now));
    printf("BRCSD-II B=256, double; ms, median of %d (host build: of %d)\n", REPS, HOST_REPS);
    printf("%-24s %10s %7s %8s %8s %8s %8s %8s %7s %9s %6s  %s\n", "matrix", "nnz", "diags", "upload",
           "analyze", "host", "build", "total", "x floor", "host bld", "x gpu", "check");
    static const char *const dflt[] = {"type3:4000000,41,0.34", "band:1000000,25", "lap3d7:200"};
    if (argc > 1)
        for (int i = 1; i < argc; i++) bench(argv[i]);
    else
        for (size_t i = 0; i < sizeof dflt / sizeof *dflt; i++) bench(dflt[i]);
    return 0;
}
#endif
