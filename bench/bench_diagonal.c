/* bench_diagonal.c -- A(i,i) of a format (issue 28: Jacobi's set-up), the
 * old way against the new, per format:
 *
 *   reference  adia__format_diagonal_ref: adia_format_to_matrix and a scan
 *              of each row (what jacobi.c and plan_jacobi did before)
 *   host slot  adia__format_diagonal on the host format (the slot: the
 *              diagonal core's offset-0 slots, csr/ell/sell's row search)
 *   GPU        with a device (ADIA_BENCH_GPU unset or 1): the format
 *              uploaded, adia__format_diagonal (device route: the GPU
 *              twin, n values back) and the twin alone (synchronised);
 *              then a plan for the GPU as `adia solve --device gpu` makes
 *              it and adia_precond_create(jacobi) on it, timed whole.
 *
 * Median of reps (after one warm-up), ms, and the GB/s of the diagonal's
 * own bytes (n values read in the storage's type, n doubles written).
 * Usage: bench_diagonal [spec=lap3d7:160] [reps=5] [formats=dia,hdi,...] */
#include "internal.h"

#include <stdio.h>
#include <time.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef adia_status (*diag_fn)(const adia_format *F, double *d);

/* Median ms of reps calls of f (one warm-up first); NAN on failure. */
static double time_fn(diag_fn f, const adia_format *F, double *d, int reps)
{
    double ms[64];
    if (reps > 64) reps = 64;
    if (f(F, d) != ADIA_OK) {
        fprintf(stderr, "bench_diagonal: %s: %s\n", F->ops->name, adia_last_error());
        return NAN;
    }
    for (int r = 0; r < reps; r++) {
        double t = adia__now_ms();
        f(F, d);
        ms[r] = adia__now_ms() - t;
    }
    qsort(ms, (size_t)reps, sizeof *ms, cmp_d);
    return ms[reps / 2];
}

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>

static void *twin_out;   /* the twin's device output, F's type */

static adia_status twin(const adia_format *F, double *d)
{
    (void)d;
    ADIA_TRY(adia__format_diagonal_gpu(F, twin_out, F->vtype, NULL));
    return cudaDeviceSynchronize() == cudaSuccess ? ADIA_OK : ADIA_ERR_CUDA;
}

/* The format uploaded: the device route and the twin alone. */
static void gpu_times(adia_format *F, double *d, int reps, double *route, double *alone)
{
    *route = *alone = NAN;
    if (adia_format_upload(F) != ADIA_OK ||
        cudaMalloc(&twin_out, (size_t)F->rows * adia_value_size(F->vtype) + 8) != cudaSuccess) {
        fprintf(stderr, "bench_diagonal: %s upload: %s\n", F->ops->name, adia_last_error());
        return;
    }
    *route = time_fn(adia__format_diagonal, F, d, reps);
    *alone = time_fn(twin, F, d, reps);
    cudaFree(twin_out);
}

/* A GPU plan as the CLI makes it, and jacobi's set-up on it. */
static void gpu_plan_jacobi(const adia_matrix *A, const char *spec)
{
    adia_plan_hints h = {.expected_calls = 1000, .vtype = ADIA_DOUBLE, .device = 1};
    adia_plan *P = NULL;
    double t = adia__now_ms();
    if (adia_plan_create(A, &h, &P) != ADIA_OK) {
        fprintf(stderr, "bench_diagonal: GPU plan: %s\n", adia_last_error());
        return;
    }
    double plan_ms = adia__now_ms() - t;
    int stale = adia_plan_format(P)->host_stale;
    adia_precond *M = NULL;
    t = adia__now_ms();
    adia_status s = adia_precond_create(P, NULL, &M);
    double jac_ms = adia__now_ms() - t;
    printf("# %s GPU plan %s (built %s, %.1f ms): jacobi set-up %.2f ms%s\n", spec,
           adia_plan_format_name(P), stale ? "on the device" : "on the host", plan_ms, jac_ms,
           s == ADIA_OK ? "" : " (failed)");
    adia_precond_destroy(M);
    adia_plan_destroy(P);
}
#endif

static const char *DEFAULT_FORMATS = "dia,hdi,brcsd1,brcsd2,crsd,csr,ell,sell,coo,hyb,bcsr";

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "lap3d7:160";
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    char formats[256];
    snprintf(formats, sizeof formats, "%s", argc > 3 ? argv[3] : DEFAULT_FORMATS);
    if (reps < 1) reps = 1;
    adia_matrix *A = NULL;
    if (adia_matrix_generate(spec, &A) != ADIA_OK) {
        fprintf(stderr, "bench_diagonal: %s: %s\n", spec, adia_last_error());
        return 1;
    }
    int gpus = 0;
    const char *g = getenv("ADIA_BENCH_GPU");
    if (!g || strcmp(g, "0")) adia_gpu_device_count(&gpus);
    int32_t n = adia_matrix_rows(A);
    double *d = malloc(((size_t)n + 1) * sizeof *d);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# bench_diagonal %s: %d rows, %lld nonzeros, %d threads, %s, %s\n", spec, (int)n,
           (long long)adia_matrix_nnz(A), adia__threads(), gpus ? "GPU present" : "no GPU", date);
    printf("%-8s %12s %12s %9s %10s %12s %12s\n", "format", "reference ms", "host slot ms",
           "speed-up", "slot GB/s", "GPU route ms", "GPU twin ms");
    for (char *f = strtok(formats, ","); f; f = strtok(NULL, ",")) {
        adia_format *F = NULL;
        if (adia_format_build(A, f, NULL, ADIA_DOUBLE, &F) != ADIA_OK) {
            fprintf(stderr, "bench_diagonal: %s: %s\n", f, adia_last_error());
            continue;
        }
        double ref = time_fn(adia__format_diagonal_ref, F, d, reps);
        double slot = time_fn(adia__format_diagonal, F, d, reps);
        double gb = (double)n * (8 + adia_value_size(F->vtype)) / (slot * 1e6);
        double route = NAN, alone = NAN;
#ifdef ADIA_HAVE_CUDA
        if (gpus > 0) gpu_times(F, d, reps, &route, &alone);
#endif
        printf("%-8s %12.2f %12.2f %8.1fx %10.1f %12.2f %12.3f\n", f, ref, slot, ref / slot, gb,
               route, alone);
        fflush(stdout);
        adia_format_destroy(F);
    }
#ifdef ADIA_HAVE_CUDA
    if (gpus > 0) gpu_plan_jacobi(A, spec);
#endif
    free(d);
    adia_matrix_destroy(A);
    return 0;
}
