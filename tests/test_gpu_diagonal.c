/* test_gpu_diagonal.c -- the device diagonal (issue 28).
 *
 *  - adia__format_diagonal_gpu of every format with a GPU side, stored in
 *    double and in float, written in double and in float, equals A(i,i) of
 *    A rounded to the storage's type bitwise (0 where not stored, -0.0
 *    kept, rows >= cols 0), on matrices larger than a warp: a stencil, the
 *    diagonal with gaps (square, wide, tall; CRSD scatter points on it),
 *    a random matrix; adia__format_diagonal on the uploaded format (the
 *    device route, n values back) the same;
 *  - plans whose format was built on the device (adia_plan_create_device_csr
 *    with dia, hdi, brcsd2; adia_plan_create_device_dia; adia_plan_create
 *    of a host matrix for the GPU when it builds there): the diagonal, the
 *    jacobi preconditioner (setup and apply: z = r / A(i,i)) and
 *    adia_plan_solve with jacobi leave host_stale set -- the format is
 *    never downloaded for them; a zero on the diagonal is refused naming
 *    its row, still without a download.
 * Skips (77) without a device. */
#include "internal.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

/* The diagonal with gaps beside offsets -2 and 3 (as test_formats.c):
 * missing where i % 5 is 2 and in three rows of four of the second half
 * (CRSD: scatter points on it); 0.0 where i % 7 is 3, -0.0 where i % 11
 * is 4. */
static adia_matrix *gappy(int32_t rows, int32_t cols)
{
    static const int32_t off[3] = {-2, 0, 3};
    test_coo m = {.rows = rows, .cols = cols};
    uint64_t st = 7;
    for (int32_t i = 0; i < rows; i++)
        for (int k = 0; k < 3; k++) {
            int64_t j = (int64_t)i + off[k];
            int diag = off[k] == 0;
            if (j < 0 || j >= cols || (diag && (i % 5 == 2 || (i >= rows / 2 && i % 4 != 0))))
                continue;
            double v = test_rand(&st) + 3.0;
            if (diag && i % 7 == 3) v = 0.0;
            if (diag && i % 11 == 4) v = -0.0;
            test_coo_add(&m, i, j, v);
        }
    return test_coo_matrix(&m);
}

/* A(i,i) of A's CSR rounded to vt (0 where not stored). */
static void want_diagonal(const adia_matrix *A, adia_value_type vt, double *d)
{
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    for (int32_t i = 0; i < v.rows; i++) {
        d[i] = 0.0;
        for (int64_t k = v.rowptr[i]; k < v.rowptr[i + 1]; k++)
            if (v.colind[k] == i) d[i] = vt == ADIA_FLOAT ? (double)(float)v.values[k] : v.values[k];
    }
}

static int32_t first_difference(const double *a, const double *b, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a)) return i;
    return -1;
}

/* The GPU twin into a device array (written in out_vt, poisoned first)
 * and back: bitwise equal to want rounded to out_vt. */
static void check_twin(const adia_format *F, const double *want, adia_value_type out_vt,
                       const char *what)
{
    int32_t n = F->rows;
    int fl = out_vt == ADIA_FLOAT;
    double *got = malloc(((size_t)n + 1) * sizeof *got), *w = malloc(((size_t)n + 1) * sizeof *w);
    for (int32_t i = 0; i < n; i++) got[i] = 12345.5;
    void *d = test_gpu_upload(got, n, fl);
    CHECK(d != NULL, "%s: device array", what);
    if (d) {
        CHECK_OK(adia__format_diagonal_gpu(F, d, out_vt, NULL));
        CHECK(test_gpu_download(got, d, n, fl) == 0, "%s: download", what);
        for (int32_t i = 0; i < n; i++) w[i] = fl ? (double)(float)want[i] : want[i];
        int32_t i = first_difference(got, w, n);
        CHECK(i < 0, "%s: GPU diagonal in %s at row %d: %g, A has %g", what,
              adia_value_type_name(out_vt), (int)i, i < 0 ? 0 : got[i], i < 0 ? 0 : w[i]);
        cudaFree(d);
    }
    free(got);
    free(w);
}

/* adia__format_diagonal (the device route once F is on the device). */
static void check_entry(const adia_format *F, const double *want, const char *what)
{
    int32_t n = F->rows;
    double *got = malloc(((size_t)n + 1) * sizeof *got);
    for (int32_t i = 0; i < n; i++) got[i] = 12345.5;
    CHECK_OK(adia__format_diagonal(F, got));
    int32_t i = first_difference(got, want, n);
    CHECK(i < 0, "%s: adia__format_diagonal at row %d: %g, A has %g", what, (int)i,
          i < 0 ? 0 : got[i], i < 0 ? 0 : want[i]);
    free(got);
}

/* Every GPU format built on the host and uploaded, both storage types. */
static void check_uploaded(const adia_matrix *A, const char *name)
{
    int32_t n = adia_matrix_rows(A);
    double *want = malloc(((size_t)n + 1) * sizeof *want);
    for (int f = 0; f < adia_format_count(); f++) {
        const char *fmt = adia_format_name_at(f);
        if (!adia_format_has_gpu(fmt)) continue;
        for (int t = 0; t < 2; t++) {
            adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
            adia_format *F = NULL;
            adia_status s = adia_format_build(A, fmt, NULL, vt, &F);
            if (s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_DIMENSION) continue;
            char what[160];
            snprintf(what, sizeof what, "%s on %s (%s storage)", fmt, name, adia_value_type_name(vt));
            CHECK(s == ADIA_OK, "%s: build: %s", what, adia_last_error());
            if (s == ADIA_OK) s = adia_format_upload(F);
            CHECK(s == ADIA_OK, "%s: upload: %s", what, adia_last_error());
            if (s == ADIA_OK) {
                want_diagonal(A, vt, want);
                check_twin(F, want, ADIA_DOUBLE, what);
                check_twin(F, want, ADIA_FLOAT, what);
                check_entry(F, want, what);
            }
            adia_format_destroy(F);
        }
    }
    free(want);
}

/* A's CSR in device memory (64-bit row pointers, doubles): mem[3] owned. */
static int device_csr(const adia_matrix *A, adia_device_csr *d, void *mem[3])
{
    adia_csr_view v;
    memset(mem, 0, 3 * sizeof *mem);
    if (adia_matrix_csr(A, &v) != ADIA_OK) return 0;
    size_t rp = ((size_t)v.rows + 1) * 8, nz = (size_t)v.nnz;
    int ok = cudaMalloc(&mem[0], rp) == cudaSuccess && cudaMalloc(&mem[1], nz * 4 + 4) == cudaSuccess &&
             cudaMalloc(&mem[2], nz * 8 + 8) == cudaSuccess &&
             cudaMemcpy(mem[0], v.rowptr, rp, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(mem[1], v.colind, nz * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(mem[2], v.values, nz * 8, cudaMemcpyHostToDevice) == cudaSuccess;
    *d = (adia_device_csr){v.rows, v.cols, v.nnz, mem[0], 64, mem[1], mem[2], ADIA_DOUBLE};
    return ok;
}

/* Jacobi on plan P of A (square, nonzero diagonal): setup and apply on the
 * device, z = r / A(i,i) to the storage's rounding; the solve with jacobi
 * converges; host_stale (stale: as it was after the build) unchanged. */
static void check_jacobi(adia_plan *P, const adia_matrix *A, int stale, const char *what)
{
    const adia_format *F = adia_plan_format(P);
    int32_t n = F->rows;
    adia_value_type vt = F->vtype;
    int fl = vt == ADIA_FLOAT;
    double *want = malloc(((size_t)n + 1) * 8), *r = malloc(((size_t)n + 1) * 8);
    double *z = malloc(((size_t)n + 1) * 8);
    want_diagonal(A, vt, want);
    uint64_t st = 3;
    test_rand_vector(&st, r, n);
    for (int32_t i = 0; i < n; i++) r[i] = fl ? (double)(float)r[i] : r[i];
    adia_precond *M = NULL;
    CHECK_OK(adia_precond_create(P, NULL, &M));
    CHECK(F->host_stale == stale, "%s: jacobi setup downloaded the format", what);
    void *dr = test_gpu_upload(r, n, fl), *dz = test_gpu_upload(r, n, fl);
    if (M && dr && dz) {
        CHECK_OK(adia_precond_apply(M, dr, dz, NULL));
        CHECK(test_gpu_download(z, dz, n, fl) == 0, "%s: download z", what);
        double e = 0;
        for (int32_t i = 0; i < n; i++) e = fmax(e, fabs(z[i] - r[i] / want[i]) / fabs(r[i] / want[i]));
        CHECK(e <= (fl ? 1e-6 : 1e-15), "%s: jacobi z = r / A(i,i), relative error %g", what, e);
    }
    adia_precond_destroy(M);
    /* the jacobi flag's path (a Jacobi preconditioner on the plan), b = A * ones */
    double *one = malloc(((size_t)n + 1) * 8), *b = malloc(((size_t)n + 1) * 8);
    for (int32_t i = 0; i < n; i++) one[i] = 1;
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
    void *db = test_gpu_upload(b, n, fl);
    for (int32_t i = 0; i < n; i++) one[i] = 0;
    void *dx = test_gpu_upload(one, n, fl);
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.jacobi = 1;
    o.rtol = fl ? 1e-5 : 1e-10;
    adia_solve_info info;
    if (db && dx) {
        CHECK_OK(adia_plan_solve(P, db, dx, &o, &info, NULL));
        CHECK(info.converged, "%s: CG with jacobi: %s", what, info.stop);
    }
    CHECK(F->host_stale == stale, "%s: the solve's jacobi downloaded the format", what);
    cudaFree(dr); cudaFree(dz); cudaFree(db); cudaFree(dx);
    free(want); free(r); free(z); free(one); free(b);
}

/* Plans built on the device from a device CSR: the diagonal without a
 * download; jacobi on an SPD matrix; a zero diagonal refused. */
static void check_device_built(const adia_matrix *A, const char *name, int spd)
{
    static const char *fmts[] = {"dia", "hdi", "brcsd2"};
    adia_device_csr d;
    void *mem[3];
    CHECK(device_csr(A, &d, mem), "%s on the device", name);
    int32_t n = adia_matrix_rows(A);
    double *want = malloc(((size_t)n + 1) * 8);
    for (int f = 0; f < 3; f++)
        for (int t = 0; t < 2; t++) {
            adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
            adia_plan_hints h = {.expected_calls = 10, .vtype = vt, .device = 1,
                                 .chooser = ADIA_CHOOSE_FIXED, .format = fmts[f]};
            adia_plan *P = NULL;
            char what[160];
            snprintf(what, sizeof what, "%s built on the device from %s (%s)", fmts[f], name,
                     adia_value_type_name(vt));
            adia_status s = adia_plan_create_device_csr(&d, &h, &P);
            CHECK(s == ADIA_OK, "%s: %s", what, adia_last_error());
            if (s != ADIA_OK) continue;
            const adia_format *F = adia_plan_format(P);
            CHECK(F->host_stale == 1, "%s: built on the device, host copy stale", what);
            want_diagonal(A, vt, want);
            check_twin(F, want, ADIA_DOUBLE, what);
            check_twin(F, want, ADIA_FLOAT, what);
            check_entry(F, want, what);
            CHECK(F->host_stale == 1, "%s: the diagonal downloaded the format", what);
            if (spd) check_jacobi(P, A, 1, what);
            else {
                adia_precond *M = NULL;
                CHECK_ERR(adia_precond_create(P, NULL, &M), ADIA_ERR_INVALID_ARG, "A(2,2)");
                CHECK(F->host_stale == 1, "%s: a refused jacobi downloaded the format", what);
            }
            adia_plan_destroy(P);
        }
    free(want);
    for (int i = 0; i < 3; i++) cudaFree(mem[i]);
}

/* adia_plan_create_device_dia: lap2d5 of a 33 x 33 grid by its five
 * diagonals. */
static void check_device_dia(void)
{
    adia_matrix *A = test_generate("lap2d5:33");
    if (!A) return;
    int32_t n = adia_matrix_rows(A);
    static const int64_t off[5] = {-33, -1, 0, 1, 33};
    double *h = calloc((size_t)n * 5, 8);
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    for (int32_t i = 0; i < n; i++)
        for (int64_t k = v.rowptr[i]; k < v.rowptr[i + 1]; k++)
            for (int q = 0; q < 5; q++)
                if (v.colind[k] - i == off[q]) h[(size_t)q * n + i] = v.values[k];
    void *dv = test_gpu_upload(h, (int64_t)n * 5, 0);
    adia_device_dia dd = {.rows = n, .cols = n, .ndiag = 5, .offsets = off, .values = dv,
                          .values_type = ADIA_DOUBLE, .adopt = 0};
    adia_plan_hints hint = {.expected_calls = 10, .vtype = ADIA_DOUBLE, .device = 1};
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create_device_dia(&dd, &hint, &P));
    if (P) {
        const adia_format *F = adia_plan_format(P);
        double *want = malloc(((size_t)n + 1) * 8);
        want_diagonal(A, ADIA_DOUBLE, want);
        CHECK(F->host_stale == 1, "device DIA: host copy stale");
        check_twin(F, want, ADIA_DOUBLE, "device DIA");
        check_entry(F, want, "device DIA");
        check_jacobi(P, A, 1, "device DIA");
        free(want);
    }
    adia_plan_destroy(P);
    cudaFree(dv);
    free(h);
    adia_matrix_destroy(A);
}

/* A host matrix planned for the GPU (the CLI's path): whatever it built,
 * jacobi keeps it where it is. */
static void check_host_plan(const char *spec)
{
    adia_matrix *A = test_generate(spec);
    if (!A) return;
    for (int t = 0; t < 2; t++) {
        adia_plan_hints h = {.expected_calls = 1000, .vtype = t ? ADIA_FLOAT : ADIA_DOUBLE,
                             .device = 1};
        adia_plan *P = NULL;
        CHECK_OK(adia_plan_create(A, &h, &P));
        if (!P) continue;
        char what[160];
        snprintf(what, sizeof what, "%s planned for the GPU (%s, %s)", spec,
                 adia_plan_format_name(P), adia_value_type_name(h.vtype));
        check_jacobi(P, A, adia_plan_format(P)->host_stale, what);
        adia_plan_destroy(P);
    }
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    struct {
        const char *name;
        adia_matrix *A;
    } mats[] = {
        {"lap3d7:11", test_generate("lap3d7:11")},
        {"diagonal with gaps", gappy(1001, 1001)},
        {"wide, diagonal with gaps", gappy(300, 777)},
        {"tall, diagonal with gaps", gappy(777, 300)},
        {"random 513 x 513", test_random_matrix(11, 513, 513, 0.01)},
    };
    for (size_t i = 0; i < sizeof mats / sizeof *mats; i++)
        if (mats[i].A) check_uploaded(mats[i].A, mats[i].name);
    if (mats[0].A) check_device_built(mats[0].A, mats[0].name, 1);
    if (mats[1].A) check_device_built(mats[1].A, mats[1].name, 0);
    check_device_dia();
    check_host_plan("lap3d7:24");
    for (size_t i = 0; i < sizeof mats / sizeof *mats; i++) adia_matrix_destroy(mats[i].A);
    return TEST_END();
}
#endif
