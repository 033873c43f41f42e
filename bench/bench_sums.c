/* bench_sums.c -- the cost of one product with and without the solver's
 * fused sums (adia_spmv_async / adia_spmv_sums_async) on a GPU plan, as a
 * solver's graph replays it: K calls captured into one CUDA graph, the
 * graph launched and timed with events, microseconds per call (median of
 * 5 launches after one warm-up).  Small plans show the fixed cost of a
 * call (a distributed block's end parts are 25 600 rows at 160^3 per
 * GPU); a graph of K small memsets is the floor of a graph node.  Skips
 * (exit 0) without a device.
 *
 *   bench_sums [format [spec ...]]   (default: dia, lap3d7 160x160xZ for Z = 1, 8, 160) */
#define _POSIX_C_SOURCE 200809L
#include "adia.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void)
{
    printf("bench_sums: built without CUDA, nothing to measure\n");
    return 0;
}
#else
#include <cuda_runtime.h>

#define K 200

#define CK(call)                                                                         \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                  \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

typedef struct bufs {
    adia_plan *P;
    double *x, *y, *z, *out;
    void *work;
} bufs;

/* 0: plain products, 1: with the sums, 2: memsets of the sums only */
static void queue(const bufs *b, int kind, cudaStream_t s)
{
    for (int k = 0; k < K; k++) {
        adia_status st = ADIA_OK;
        if (kind == 0) st = adia_spmv_async(b->P, 1.0, b->x, 0.0, b->y, s);
        else if (kind == 1) st = adia_spmv_sums_async(b->P, 1.0, b->x, b->y, NULL, b->z, b->out,
                                                      b->work, s);
        else CK(cudaMemsetAsync(b->out, 0, ADIA_SPMV_SUMS * sizeof(double), s));
        if (st != ADIA_OK) {
            fprintf(stderr, "product: %s\n", adia_last_error());
            exit(1);
        }
    }
}

static int cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* microseconds per call of kind, replayed as a graph */
static double per_call_us(const bufs *b, int kind, cudaStream_t s)
{
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    queue(b, kind, s);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float t[6];
    for (int r = 0; r < 6; r++) {
        CK(cudaEventRecord(e0, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&t[r], e0, e1));
    }
    qsort(t + 1, 5, sizeof *t, cmp);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    return t[3] * 1e3 / K;
}

static void run(const char *spec, const char *format, cudaStream_t s)
{
    adia_matrix *A = NULL;
    if (adia_matrix_generate(spec, &A) != ADIA_OK) {
        fprintf(stderr, "%s: %s\n", spec, adia_last_error());
        exit(1);
    }
    adia_plan_hints h = {.expected_calls = 1000, .device = 1, .chooser = ADIA_CHOOSE_FIXED,
                         .format = format};
    bufs b = {0};
    if (adia_plan_create(A, &h, &b.P) != ADIA_OK) {
        fprintf(stderr, "%s plan: %s\n", spec, adia_last_error());
        exit(1);
    }
    const size_t n = (size_t)adia_matrix_rows(A);
    CK(cudaMalloc((void **)&b.x, n * sizeof(double)));
    CK(cudaMalloc((void **)&b.y, n * sizeof(double)));
    CK(cudaMalloc((void **)&b.z, n * sizeof(double)));
    CK(cudaMalloc((void **)&b.out, ADIA_SPMV_SUMS * sizeof(double)));
    CK(cudaMalloc(&b.work, adia_spmv_sums_work_bytes(b.P)));
    CK(cudaMemset(b.x, 0, n * sizeof(double)));
    CK(cudaMemset(b.z, 0, n * sizeof(double)));
    CK(cudaMemset(b.work, 0, adia_spmv_sums_work_bytes(b.P)));
    /* one of each outside the graph: uploads, generated kernels */
    queue(&b, 0, s);
    queue(&b, 1, s);
    CK(cudaStreamSynchronize(s));
    printf("| %s | %s | %zu | %.2f | %.2f | %.2f |\n", spec, adia_plan_format_name(b.P), n,
           per_call_us(&b, 2, s), per_call_us(&b, 0, s), per_call_us(&b, 1, s));
    cudaFree(b.x);
    cudaFree(b.y);
    cudaFree(b.z);
    cudaFree(b.out);
    cudaFree(b.work);
    adia_plan_destroy(b.P);
    adia_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("bench_sums: no CUDA device, nothing to measure\n");
        return 0;
    }
    const char *format = argc > 1 ? argv[1] : "dia";
    const char *def[] = {"lap3d7:160x160x1", "lap3d7:160x160x8", "lap3d7:160"};
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("| matrix | format | rows | memset us | product us | product + sums us |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: |\n");
    if (argc > 2)
        for (int i = 2; i < argc; i++) run(argv[i], format, s);
    else
        for (int i = 0; i < 3; i++) run(def[i], format, s);
    cudaStreamDestroy(s);
    return 0;
}
#endif
