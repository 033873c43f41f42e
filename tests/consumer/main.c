/* A program built against an installed adia (tests/consumer/run.sh): by
 * pkg-config and by CMake's find_package(adia), with libadia.so and with
 * libadia.a.  Generates the 2-D Laplacian, plans and multiplies on the CPU
 * (and on the GPU when there is one), and checks y = A*x against the
 * reference SpMV. */
#include <adia.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check(const char *what, adia_status s)
{
    if (s != ADIA_OK)
        fprintf(stderr, "consumer: %s: %s: %s\n", what, adia_status_string(s), adia_last_error());
    return s == ADIA_OK;
}

/* y = A*x by a plan on device dev; 1 ok, 0 failed, -1 no device */
static int plan_spmv(const adia_matrix *A, int dev, const double *x, double *y)
{
    adia_plan_hints hints = {.expected_calls = 10, .device = dev};
    adia_plan *P = NULL;
    adia_status s = adia_plan_create(A, &hints, &P);
    if (dev == 1 && s == ADIA_ERR_NO_DEVICE) return -1;
    int ok = check("adia_plan_create", s) && check("adia_spmv", adia_spmv(P, 1.0, x, 0.0, y));
    if (ok) printf("consumer: %s plan: %s\n", dev ? "GPU" : "CPU", adia_plan_format_name(P));
    adia_plan_destroy(P);
    return ok;
}

int main(void)
{
    adia_matrix *A = NULL;
    if (!check("adia_matrix_generate", adia_matrix_generate("lap2d5:10", &A))) return 1;
    int32_t n = adia_matrix_rows(A);
    double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n),
           *ref = malloc(sizeof(double) * n);
    if (!x || !y || !ref) return 1;
    for (int32_t i = 0; i < n; i++) x[i] = 1.0 + i % 7;
    int ok = n == 100 && adia_matrix_nnz(A) == 460 &&
             check("adia_matrix_spmv", adia_matrix_spmv(A, 1.0, x, 0.0, ref));
    for (int dev = 0; ok && dev <= 1; dev++) {
        int r = plan_spmv(A, dev, x, y);
        if (r < 0) { printf("consumer: no CUDA device: GPU plan skipped\n"); break; }
        ok = r == 1;
        for (int32_t i = 0; ok && i < n; i++)
            if (fabs(y[i] - ref[i]) > 1e-12 * (1 + fabs(ref[i]))) {
                fprintf(stderr, "consumer: y[%d] = %g, expected %g\n", i, y[i], ref[i]);
                ok = 0;
            }
    }
    printf("consumer: adia %s: %s\n", ADIA_VERSION_STRING, ok ? "ok" : "FAILED");
    free(x); free(y); free(ref);
    adia_matrix_destroy(A);
    return ok ? 0 : 1;
}
