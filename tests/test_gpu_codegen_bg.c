/* test_gpu_codegen_bg.c -- a GPU plan's generated kernel never blocks it
 * (issue 28, item 4).  With an empty kernel cache (ADIA_CACHE_DIR: a new
 * folder) and many expected calls: ADIA_CODEGEN=background plans at once
 * with the generic kernel, the product right from the first call, the
 * generated kernel arriving between two later calls (product still right,
 * within the kernels' 1e-12); a CUDA graph captured before the arrival
 * replays correctly after it; the fused sums (a solver's product) right
 * before and after their own variant arrives; a CG solve started during
 * the compile converges.  sync: generated at once where the calls repay
 * the compile, else generic and explain says why; always: generated
 * whatever the calls; off: generic for good; a second
 * plan of the same structure finds the kernel in the cache (generated at
 * once, in background mode too).  Skips (77) without a device. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

/* The explain's "kernel:" line. */
static void kernel_state(adia_plan *P, char *out, size_t len)
{
    char why[8192];
    out[0] = '\0';
    if (adia_plan_explain(P, why, sizeof why) != ADIA_OK) return;
    const char *k = strstr(why, "\nkernel: ");
    if (!k) return;
    k += 9;
    size_t n = strcspn(k, "\n");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), k);
}

typedef struct vecs { int32_t n; double *x, *ref, *y; void *dx, *dy; } vecs;

static int vecs_make(const adia_matrix *A, vecs *v)
{
    memset(v, 0, sizeof *v);
    v->n = adia_matrix_rows(A);
    size_t b = (size_t)v->n * 8 + 8;
    v->x = malloc(b), v->ref = malloc(b), v->y = malloc(b);
    uint64_t seed = 5;
    for (int32_t i = 0; i < v->n; i++) v->x[i] = test_rand(&seed);
    return v->x && v->ref && v->y && adia_matrix_spmv(A, 1.0, v->x, 0.0, v->ref) == ADIA_OK &&
           cudaMalloc(&v->dx, b) == cudaSuccess && cudaMalloc(&v->dy, b) == cudaSuccess &&
           cudaMemcpy(v->dx, v->x, b - 8, cudaMemcpyHostToDevice) == cudaSuccess;
}

static void vecs_free(vecs *v)
{
    free(v->x);
    free(v->ref);
    free(v->y);
    cudaFree(v->dx);
    cudaFree(v->dy);
}

/* y = A x on the device (dy poisoned first) against the CPU. */
static double product_error(adia_plan *P, vecs *v)
{
    if (cudaMemset(v->dy, 0xff, (size_t)v->n * 8) != cudaSuccess ||
        adia_spmv(P, 1.0, v->dx, 0.0, v->dy) != ADIA_OK ||
        cudaMemcpy(v->y, v->dy, (size_t)v->n * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        return INFINITY;
    return test_rel_err(v->y, v->ref, v->n);
}

/* The five fused sums of y = A x (z = xd = x) against the host's. */
static double sums_error(adia_plan *P, vecs *v, void *work)
{
    double *dout = NULL, out[ADIA_SPMV_SUMS], want[ADIA_SPMV_SUMS] = {0};
    if (cudaMalloc((void **)&dout, sizeof out) != cudaSuccess ||
        cudaMemset(dout, 0, sizeof out) != cudaSuccess ||
        adia_spmv_sums_async(P, 1.0, v->dx, v->dy, NULL, NULL, dout, work, NULL) != ADIA_OK ||
        cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost) != cudaSuccess) {
        cudaFree(dout);
        return INFINITY;
    }
    cudaFree(dout);
    for (int32_t i = 0; i < v->n; i++) {
        double x = v->x[i], y = v->ref[i];
        want[0] += x * y, want[1] += x * x, want[2] += x * x, want[3] += y * y, want[4] += x * y;
    }
    double err = 0;
    for (int k = 0; k < ADIA_SPMV_SUMS; k++)
        err = fmax(err, fabs(out[k] - want[k]) / fmax(fabs(want[k]), 1e-300));
    return err;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pause_ms(int ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

static adia_plan *gpu_plan_calls(const adia_matrix *A, int64_t calls)
{
    adia_plan_hints h = {.expected_calls = calls, .device = 1, .chooser = ADIA_CHOOSE_FIXED,
                         .format = "dia"};
    adia_plan *P = NULL;
    adia_status s = adia_plan_create(A, &h, &P);
    CHECK(s == ADIA_OK, "plan: %s", adia_last_error());
    return P;
}

static adia_plan *gpu_plan(const adia_matrix *A) { return gpu_plan_calls(A, 100000); }

/* Background: generic first, generated later, right all along. */
static void background(const adia_matrix *A)
{
    setenv("ADIA_CODEGEN", "background", 1);
    double t0 = now_s();
    adia_plan *P = gpu_plan(A);
    double plan_s = now_s() - t0;
    if (!P) return;
    char st[256];
    kernel_state(P, st, sizeof st);
    /* compiling, or (a fast NVRTC) finished and waiting for the next call */
    CHECK(test_contains(st, "generic (compiling") || test_contains(st, "compile finished"),
          "kernel state after planning: '%s'", st);
    CHECK(plan_s < 0.4, "the plan waited %.2f s: for the compile?", plan_s);
    vecs v;
    CHECK(vecs_make(A, &v), "vectors");
    void *work = NULL;
    CHECK(cudaMalloc(&work, adia_spmv_sums_work_bytes(P)) == cudaSuccess &&
          cudaMemset(work, 0, adia_spmv_sums_work_bytes(P)) == cudaSuccess, "sums work");
    CHECK(product_error(P, &v) <= 1e-12, "generic product before the arrival");
    CHECK(sums_error(P, &v, work) <= 1e-12, "generic sums before the arrival");

    /* a graph captured now keeps the generic kernel */
    cudaStream_t s;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream");
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture");
    CHECK_OK(adia_spmv_async(P, 1.0, v.dx, 0.0, v.dy, s));
    CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess &&
          cudaGraphInstantiate(&ge, g, 0) == cudaSuccess, "graph of one product");

    /* calls until the generated kernel arrives (at most 120 s of NVRTC) */
    int calls = 0;
    for (double t = now_s(); now_s() - t < 120; calls++) {
        CHECK(product_error(P, &v) <= 1e-12, "product during the compile (call %d)", calls);
        kernel_state(P, st, sizeof st);
        if (test_contains(st, "arrived") || test_contains(st, "failed")) break;
        pause_ms(20);
    }
    CHECK(test_contains(st, "arrived"), "generated kernel arrived after %d calls: '%s'", calls, st);
    CHECK(product_error(P, &v) <= 1e-12, "generated product after the arrival");
    for (int k = 0; k < 200 && sums_error(P, &v, work) <= 1e-12; k++)
        pause_ms(20);   /* the sums' own variant compiles meanwhile */
    CHECK(sums_error(P, &v, work) <= 1e-12, "sums after the arrivals");

    /* the graph captured before: still right */
    CHECK(cudaMemset(v.dy, 0xff, (size_t)v.n * 8) == cudaSuccess &&
          cudaGraphLaunch(ge, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess &&
          cudaMemcpy(v.y, v.dy, (size_t)v.n * 8, cudaMemcpyDeviceToHost) == cudaSuccess,
          "graph replay");
    CHECK(test_rel_err(v.y, v.ref, v.n) <= 1e-12, "graph captured before the switch");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    cudaFree(work);
    vecs_free(&v);
    adia_plan_destroy(P);

    /* the same structure again: the kernel is in the cache now */
    P = gpu_plan(A);
    kernel_state(P, st, sizeof st);
    char why[8192] = "";
    if (P) CHECK_OK(adia_plan_explain(P, why, sizeof why));
    /* loaded from the cache, then timed against the generic kernel */
    CHECK(test_contains(why, "from the cache") &&
              (!strcmp(st, "generated") || (!strcmp(st, "generic") && test_contains(why, "generic kept"))),
          "second plan, cache warm: '%s', explain:\n%s", st, why);
    adia_plan_destroy(P);
}

/* A CG solve started while the plan's kernel compiles converges (whether
 * the kernel arrives mid-solve depends on the machine's speed). */
static void solve_across(const char *spec)
{
    setenv("ADIA_CODEGEN", "background", 1);
    adia_matrix *A = test_generate(spec);
    adia_plan *P = A ? gpu_plan(A) : NULL;
    if (P) {
        int32_t n = adia_matrix_rows(A);
        double *one = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *x = calloc((size_t)n, 8);
        for (int32_t i = 0; i < n; i++) one[i] = 1;
        CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.max_iter = 5000;
        adia_solve_info in;
        CHECK_OK(adia_solve(A, P, b, x, &o, &in));
        CHECK(in.converged, "%s: CG across the switch: %s", spec, in.stop);
        double e = 0;
        for (int32_t i = 0; i < n; i++) e = fmax(e, fabs(x[i] - 1));
        CHECK(e < 1e-5, "%s: x = ones within %.3g", spec, e);
        free(one);
        free(b);
        free(x);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

static void sync_and_off(void)
{
    char st[256];
    adia_matrix *A = test_generate("lap3d7:7x9x5");
    setenv("ADIA_CODEGEN", "off", 1);
    adia_plan *P = gpu_plan(A);
    kernel_state(P, st, sizeof st);
    CHECK(!strcmp(st, "generic"), "off: '%s'", st);
    adia_plan_destroy(P);
    /* sync, an empty cache: 1000 products of 315 rows do not repay a
     * compile (about 0.1 s): the generic kernel, and the plan says why */
    setenv("ADIA_CODEGEN", "sync", 1);
    P = gpu_plan_calls(A, 1000);
    kernel_state(P, st, sizeof st);
    CHECK(!strcmp(st, "generic"), "sync, 1000 calls: '%s'", st);
    char why[8192] = "";
    CHECK(P && adia_plan_explain(P, why, sizeof why) == ADIA_OK && test_contains(why, "would not repay"),
          "sync, 1000 calls: the reason in explain:\n%s", why);
    adia_plan_destroy(P);
    /* always: compiled whatever the calls (another structure: not cached) */
    setenv("ADIA_CODEGEN", "always", 1);
    adia_matrix *A2 = test_generate("lap3d7:7x9x7");
    P = A2 ? gpu_plan_calls(A2, 1000) : NULL;
    kernel_state(P, st, sizeof st);
    CHECK(!strcmp(st, "generated"), "always, 1000 calls: '%s'", st);
    adia_plan_destroy(P);
    adia_matrix_destroy(A2);
    setenv("ADIA_CODEGEN", "sync", 1);
    /* calls enough to repay it: compiled now, and a solve's fused sums
     * (their own variant, compiled when first asked) right */
    P = gpu_plan_calls(A, (int64_t)1e13);
    kernel_state(P, st, sizeof st);
    why[0] = '\0';
    if (P) CHECK_OK(adia_plan_explain(P, why, sizeof why));
    /* compiled, then timed against the generic kernel: the faster kept,
     * and the explanation says which */
    CHECK(test_contains(why, "timed: generated") &&
              (!strcmp(st, "generated") ? test_contains(why, "generated kept")
                                        : !strcmp(st, "generic") && test_contains(why, "generic kept")),
          "sync: '%s', explain:\n%s", st, why);
    vecs v;
    CHECK(vecs_make(A, &v) && product_error(P, &v) <= 1e-12, "sync: product");
    void *work = NULL;
    CHECK(cudaMalloc(&work, adia_spmv_sums_work_bytes(P)) == cudaSuccess &&
          cudaMemset(work, 0, adia_spmv_sums_work_bytes(P)) == cudaSuccess &&
          sums_error(P, &v, work) <= 1e-12, "sync: fused sums of the generated variant");
    cudaFree(work);
    vecs_free(&v);
    adia_plan_destroy(P);
    P = NULL;
    setenv("ADIA_CODEGEN", "soon", 1);
    adia_plan_hints h = {.expected_calls = 100000, .device = 1};
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "ADIA_CODEGEN=soon");
    unsetenv("ADIA_CODEGEN");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    cudaFree(0);   /* the context now, not inside the first plan's timing */
    char dir[] = "/tmp/adia-codegen-bg-XXXXXX";   /* an empty kernel cache */
    CHECK(mkdtemp(dir) != NULL, "cache folder");
    setenv("ADIA_CACHE_DIR", dir, 1);
    adia_matrix *A = test_generate("lap3d7:13x11x9");
    if (A) background(A);
    adia_matrix_destroy(A);
    solve_across("lap2d5:97x89");
    sync_and_off();
    return TEST_END();
}
#endif
