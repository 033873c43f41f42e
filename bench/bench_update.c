/* bench_update.c -- adia_plan_update_values in SpMV-equivalents (issue 28,
 * item 6: a value update of lap3d7:160 on the GPU in at most 3).
 *
 * For each format: a plan (FIXED, on the GPU when there is one, else the
 * CPU; --cpu forces the CPU), its SpMV time (median; GPU: CUDA events over
 * a batch), then updates with new values of the same pattern, timed with
 * the wall clock after a device synchronisation: the first (a device
 * plan hashes its format's structure then) and the median of 5 later
 * ones, from the host matrix, and on the GPU from a CSR in
 * device memory; the formats the GPU builds (dia, hdi, brcsd2) also as a
 * plan made on the device.  One JSON line per (format, source, plan),
 * with the device and the date.
 *
 *   bench_update [--cpu] [spec [format ...]]
 *   (default lap3d7:160; dia hdi brcsd1 brcsd2 crsd csr ell sell) */
#define _POSIX_C_SOURCE 200809L
#include "adia.h"
#include "adia_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define UPDATES 5

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_update: %s: %s\n", what, adia_last_error());
    exit(1);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void sync_device(int gpu)
{
#ifdef ADIA_HAVE_CUDA
    if (gpu) cudaDeviceSynchronize();
#else
    (void)gpu;
#endif
}

/* One update by source: host matrix M, or device CSR d (NULL: host). */
typedef struct source {
    const adia_matrix *M;
    const adia_device_csr *d;
} source;

static double one_update(adia_plan *P, source s, int gpu)
{
    sync_device(gpu);
    double t0 = now_ms();
    adia_status st = s.d ? adia_plan_update_values_device_csr(P, s.d) : adia_plan_update_values(P, s.M);
    sync_device(gpu);
    if (st != ADIA_OK) die("update");
    return now_ms() - t0;
}

static void report(const char *dev, const char *spec, adia_plan *P, const char *src,
                   const char *built, double spmv_ms, source s, int gpu)
{
    double first = one_update(P, s, gpu), t[UPDATES];
    for (int i = 0; i < UPDATES; i++) t[i] = one_update(P, s, gpu);
    qsort(t, UPDATES, sizeof *t, cmp);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("{\"bench\":\"update\",\"device\":\"%s\",\"date\":\"%s\",\"spec\":\"%s\","
           "\"format\":\"%s\",\"vtype\":\"%s\",\"source\":\"%s\",\"plan\":\"%s\","
           "\"spmv_ms\":%.4f,\"first_update_ms\":%.3f,\"update_ms\":%.3f,"
           "\"update_spmv_equiv\":%.2f}\n",
           dev, date, spec, adia_plan_format_name(P),
           adia_value_type_name(adia_plan_value_type(P)), src, built, spmv_ms, first, t[UPDATES / 2],
           t[UPDATES / 2] / spmv_ms);
    fflush(stdout);
}

static double spmv_ms(adia_plan *P, int gpu, int32_t n)
{
    adia_format *F = adia_plan_format(P);
    adia_gpu_timing t;
    if (gpu) {
        if (adia_gpu_time_spmv(F, 20, &t) != ADIA_OK) die("GPU SpMV timing");
        return t.median_ms;
    }
    double *x = calloc((size_t)n + 1, 8), *y = calloc((size_t)n + 1, 8);
    if (adia_cpu_time_spmv(F, 20, x, y, &t) != ADIA_OK) die("CPU SpMV timing");
    free(x);
    free(y);
    return t.median_ms;
}

#ifdef ADIA_HAVE_CUDA
/* M's CSR in device memory (64-bit row pointers, double values). */
static void to_device(const adia_matrix *M, adia_device_csr *d, void *buf[3])
{
    adia_csr_view v;
    if (adia_matrix_csr(M, &v) != ADIA_OK) die("CSR view");
    size_t rp = (size_t)v.rows + 1, nnz = (size_t)v.nnz;
    if (cudaMalloc(&buf[0], rp * 8) || cudaMalloc(&buf[1], nnz * 4 + 4) ||
        cudaMalloc(&buf[2], nnz * 8 + 8) ||
        cudaMemcpy(buf[0], v.rowptr, rp * 8, cudaMemcpyHostToDevice) ||
        cudaMemcpy(buf[1], v.colind, nnz * 4, cudaMemcpyHostToDevice) ||
        cudaMemcpy(buf[2], v.values, nnz * 8, cudaMemcpyHostToDevice)) {
        fprintf(stderr, "bench_update: device copy of the matrix failed\n");
        exit(1);
    }
    *d = (adia_device_csr){.rows = v.rows, .cols = v.cols, .nnz = v.nnz, .rowptr = buf[0],
                           .rowptr_bits = 64, .colind = buf[1], .values = buf[2],
                           .values_type = ADIA_DOUBLE};
}
#endif

static void run(const adia_matrix *M, const char *spec, const char *fmt, int gpu, const char *dev)
{
    adia_plan_hints h = {.expected_calls = 1000, .vtype = ADIA_DOUBLE, .device = gpu,
                         .chooser = ADIA_CHOOSE_FIXED, .format = fmt};
    adia_plan *P = NULL;
    if (adia_plan_create(M, &h, &P) != ADIA_OK) {
        fprintf(stderr, "bench_update: %s: %s (skipped)\n", fmt, adia_last_error());
        return;
    }
    double ms = spmv_ms(P, gpu, adia_matrix_cols(M));
    report(dev, spec, P, "host", "host", ms, (source){M, NULL}, gpu);
#ifdef ADIA_HAVE_CUDA
    if (gpu) {
        void *buf[3] = {NULL, NULL, NULL};
        adia_device_csr d;
        to_device(M, &d, buf);
        report(dev, spec, P, "device", "host", ms, (source){M, &d}, gpu);
        adia_plan *Q = NULL;
        if (!strcmp(fmt, "dia") || !strcmp(fmt, "hdi") || !strcmp(fmt, "brcsd2")) {
            if (adia_plan_create_device_csr(&d, &h, &Q) != ADIA_OK) die("device plan");
            report(dev, spec, Q, "device", "device", spmv_ms(Q, 1, d.cols), (source){M, &d}, gpu);
            adia_plan_destroy(Q);
        }
        for (int i = 0; i < 3; i++) cudaFree(buf[i]);
    }
#endif
    adia_plan_destroy(P);
}

int main(int argc, char **argv)
{
    static const char *dflt[] = {"dia", "hdi", "brcsd1", "brcsd2", "crsd", "csr", "ell", "sell"};
    int a = 1, gpu = 0;
    if (a < argc && !strcmp(argv[a], "--cpu")) a++;
    else {
        int n = 0;
        gpu = adia_gpu_device_count(&n) == ADIA_OK && n > 0;
    }
    const char *spec = a < argc ? argv[a++] : "lap3d7:160";
    char dev[300] = "cpu";
#ifdef ADIA_HAVE_CUDA
    adia_gpu_info info;
    if (gpu && adia_gpu_get_info(&info) == ADIA_OK) snprintf(dev, sizeof dev, "%s", info.name);
#endif
    adia_matrix *M = NULL;
    if (adia_matrix_generate(spec, &M) != ADIA_OK) die(spec);
    if (a < argc)
        for (; a < argc; a++) run(M, spec, argv[a], gpu, dev);
    else
        for (size_t i = 0; i < sizeof dflt / sizeof *dflt; i++) run(M, spec, dflt[i], gpu, dev);
    adia_matrix_destroy(M);
    return 0;
}
