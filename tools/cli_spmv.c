/* cli_spmv.c -- one checked, timed SpMV of a built format on the CPU or the
 * GPU: what `adia spmv` and `adia demo` share. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* splitmix64 of the i-th step from seed: uniform in [-1, 1). */
double cli_random_x(uint64_t seed, int64_t i)
{
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Same definition as the test harness (norm-wise), but a NaN on one side
 * only gives INFINITY, so that `err > tolerance` catches it. */
static double rel_err(const double *y, const double *ref, int64_t n)
{
    double num = 0, den = 1e-300;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(y[i]) != isnan(ref[i])) return INFINITY;
        if (isnan(ref[i])) continue;
        if (y[i] != ref[i]) {   /* equal infinities match */
            double d = fabs(y[i] - ref[i]);
            if (!(d <= num)) num = d;
        }
        if (fabs(ref[i]) > den) den = fabs(ref[i]);
    }
    return num / den;
}

/* Host vectors of one run: x, y in the format's type, x and y in double. */
typedef struct spmv_vectors {
    void *x, *y;             /* format's value type */
    double *xd, *yd, *ref;   /* double: x (rounded like x), result, reference */
    size_t vsize;
    int32_t rows, cols;
} spmv_vectors;

static void free_vectors(spmv_vectors *v)
{
    free(v->x); free(v->y); free(v->xd); free(v->yd); free(v->ref);
}

/* x from x_in (cols doubles) or, when NULL, random for the seed. */
static int make_vectors(const char *cmd, const adia_format *F, const double *x_in, uint64_t seed,
                        spmv_vectors *v)
{
    memset(v, 0, sizeof *v);
    v->rows = adia_format_rows(F);
    v->cols = adia_format_cols(F);
    v->vsize = adia_value_size(adia_format_value_type(F));
    /* +1: a 0 x 0 matrix still gets valid pointers */
    v->x = malloc(((size_t)v->cols + 1) * v->vsize);
    v->y = malloc(((size_t)v->rows + 1) * v->vsize);
    v->xd = malloc(((size_t)v->cols + 1) * sizeof(double));
    v->yd = malloc(((size_t)v->rows + 1) * sizeof(double));
    v->ref = malloc(((size_t)v->rows + 1) * sizeof(double));
    if (!v->x || !v->y || !v->xd || !v->yd || !v->ref) {
        free_vectors(v);
        fprintf(stderr, "adia %s: out of memory for the vectors (%d rows)\n", cmd, (int)v->rows);
        return 1;
    }
    bool single = v->vsize == sizeof(float);
    for (int32_t j = 0; j < v->cols; j++) {
        double r = x_in ? x_in[j] : cli_random_x(seed, j);
        if (single) {
            ((float *)v->x)[j] = (float)r;
            v->xd[j] = (double)(float)r;
        } else {
            ((double *)v->x)[j] = v->xd[j] = r;
        }
    }
    return 0;
}

static void y_to_double(spmv_vectors *v)
{
    for (int32_t i = 0; i < v->rows; i++)
        v->yd[i] = v->vsize == sizeof(float) ? (double)((float *)v->y)[i] : ((double *)v->y)[i];
}

static int run_cpu(const char *cmd, adia_format *F, spmv_vectors *v, int runs, double *t)
{
    adia_status s = adia_format_spmv(F, 1.0, v->x, 0.0, v->y);
    if (s != ADIA_OK) return cli_fail(cmd, s);
    y_to_double(v);
    for (int k = 0; k < runs; k++) {
        double t0 = cli_now();
        s = adia_format_spmv(F, 1.0, v->x, 0.0, v->y);
        t[k] = (cli_now() - t0) * 1e3;
        if (s != ADIA_OK) return cli_fail(cmd, s);
    }
    return 0;
}

#ifdef ADIA_HAVE_CUDA
static int cuda_fail(const char *cmd, cudaError_t e, const char *what)
{
    fprintf(stderr, "adia %s: CUDA error in %s: %s\n", cmd, what, cudaGetErrorString(e));
    return 1;
}

/* The CUDA calls of one timed GPU run; any failure ends it with a message. */
static int gpu_timed(const char *cmd, adia_format *F, spmv_vectors *v, void *dx, void *dy,
                     cudaEvent_t e0, cudaEvent_t e1, int runs, double *t)
{
    cudaError_t e;
    if ((e = cudaMemcpy(dx, v->x, (size_t)v->cols * v->vsize, cudaMemcpyHostToDevice)))
        return cuda_fail(cmd, e, "copying x");
    adia_status s = adia_format_spmv_gpu(F, 1.0, dx, 0.0, dy, NULL);
    if (s != ADIA_OK) return cli_fail(cmd, s);
    if ((e = cudaMemcpy(v->y, dy, (size_t)v->rows * v->vsize, cudaMemcpyDeviceToHost)))
        return cuda_fail(cmd, e, "copying y back");
    y_to_double(v);
    for (int k = 0; k < runs; k++) {
        if ((e = cudaEventRecord(e0, NULL))) return cuda_fail(cmd, e, "cudaEventRecord");
        s = adia_format_spmv_gpu(F, 1.0, dx, 0.0, dy, NULL);
        if (s != ADIA_OK) return cli_fail(cmd, s);
        if ((e = cudaEventRecord(e1, NULL))) return cuda_fail(cmd, e, "cudaEventRecord");
        if ((e = cudaEventSynchronize(e1))) return cuda_fail(cmd, e, "the SpMV kernel");
        float ms = 0;
        if ((e = cudaEventElapsedTime(&ms, e0, e1))) return cuda_fail(cmd, e, "cudaEventElapsedTime");
        t[k] = ms;
    }
    return 0;
}

static int run_gpu(const char *cmd, adia_format *F, spmv_vectors *v, int runs, double *t)
{
    void *dx = NULL, *dy = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaError_t e;
    int rc = 1;
    if ((e = cudaMalloc(&dx, ((size_t)v->cols + 1) * v->vsize)) ||
        (e = cudaMalloc(&dy, ((size_t)v->rows + 1) * v->vsize)))
        cuda_fail(cmd, e, "allocating the vectors");
    else if ((e = cudaEventCreate(&e0)) || (e = cudaEventCreate(&e1)))
        cuda_fail(cmd, e, "cudaEventCreate");
    else
        rc = gpu_timed(cmd, F, v, dx, dy, e0, e1, runs, t);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(dx);
    cudaFree(dy);
    return rc;
}
#else
static int run_gpu(const char *cmd, adia_format *F, spmv_vectors *v, int runs, double *t)
{
    (void)F; (void)v; (void)runs; (void)t;
    fprintf(stderr, "adia %s: no CUDA device: adia was built without CUDA\n", cmd);
    return 1;
}
#endif

bool cli_gpu_usable(adia_format *F, adia_status *status)
{
    int n = 0;
    *status = adia_gpu_device_count(&n);
    if (*status != ADIA_OK || n == 0) return false;
    *status = adia_format_upload(F);
    if (*status == ADIA_ERR_UNSUPPORTED || *status == ADIA_ERR_NO_DEVICE) *status = ADIA_OK;
    else if (*status == ADIA_OK) return true;
    return false;
}

int cli_spmv_run(const char *cmd, const adia_matrix *A, adia_format *F, bool gpu,
                 int runs, uint64_t seed, const double *x_in, double *y_out,
                 cli_spmv_result *r)
{
    memset(r, 0, sizeof *r);
    r->device = gpu ? "gpu" : "cpu";
    bool single = adia_format_value_type(F) == ADIA_FLOAT;
    r->tolerance = single ? 1e-5 : 1e-12;
    if (runs < 1) runs = 1;
    spmv_vectors v;
    if (make_vectors(cmd, F, x_in, seed, &v)) return 1;
    double *t = malloc((size_t)runs * sizeof *t);
    int rc = 1;
    adia_status s;
    if (!t)
        fprintf(stderr, "adia %s: out of memory\n", cmd);
    else if ((s = adia_matrix_spmv(A, 1.0, v.xd, 0.0, v.ref)) != ADIA_OK)
        rc = cli_fail(cmd, s);
    else
        rc = gpu ? run_gpu(cmd, F, &v, runs, t) : run_cpu(cmd, F, &v, runs, t);
    if (rc == 0) {
        r->max_rel_err = rel_err(v.yd, v.ref, v.rows);
        r->time_ms = median(t, runs);
        r->bytes = adia_format_bytes(F);
        double sec = r->time_ms * 1e-3;
        r->gflops = sec > 0 ? 2.0 * (double)adia_matrix_nnz(A) / sec * 1e-9 : NAN;
        r->gbytes_per_s = sec > 0 && r->bytes >= 0 ? (double)r->bytes / sec * 1e-9 : NAN;
        if (y_out) memcpy(y_out, v.yd, (size_t)v.rows * sizeof *y_out);
    }
    free(t);
    free_vectors(&v);
    return rc;
}
