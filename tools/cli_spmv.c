/* cli_spmv.c -- one checked, timed SpMV of a built format on the CPU or the
 * GPU: what `adia spmv` and `adia demo` share. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
        double r = x_in ? x_in[j] : adia_random_value(seed, j);
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

/* The library's timing (the one `adia bench` and the planner use): a
 * first call leaves y = F*x, then `runs` timed samples. */
static int run_timed(const char *cmd, adia_format *F, bool gpu, spmv_vectors *v, int runs,
                     adia_gpu_timing *t)
{
    adia_status s = gpu ? adia_gpu_time_spmv_x(F, runs, v->x, v->y, t)
                        : adia_cpu_time_spmv(F, runs, v->x, v->y, t);
    if (s != ADIA_OK) return cli_fail(cmd, s);
    y_to_double(v);
    return 0;
}

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
    adia_gpu_timing t;
    adia_status s = adia_matrix_spmv(A, 1.0, v.xd, 0.0, v.ref);
    int rc = s != ADIA_OK ? cli_fail(cmd, s) : run_timed(cmd, F, gpu, &v, runs, &t);
    if (rc == 0) {
        r->max_rel_err = adia_rel_err(v.yd, v.ref, v.rows);
        r->time_ms = t.median_ms;
        r->bytes = adia_format_bytes(F);
        double sec = r->time_ms * 1e-3;
        r->gflops = sec > 0 ? 2.0 * (double)adia_matrix_nnz(A) / sec * 1e-9 : NAN;
        r->gbytes_per_s = sec > 0 && r->bytes >= 0 ? (double)r->bytes / sec * 1e-9 : NAN;
        if (y_out) memcpy(y_out, v.yd, (size_t)v.rows * sizeof *y_out);
    }
    free_vectors(&v);
    return rc;
}
