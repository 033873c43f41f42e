/* test_formats.c -- the conformance test of every registered format: it
 * loops over adia_format_count(), so a format is tested the moment its
 * registry line exists.  ADIA_TEST_FORMAT=name runs it for one format.
 *
 * For each format, each awkward matrix (empty rows, one row, one column,
 * rectangular both ways, diagonals leaving the matrix, explicit zeros
 * including -0.0, no entries) and both value types:
 *  - build (a format may refuse a shape it cannot hold with
 *    ADIA_ERR_UNSUPPORTED or ADIA_ERR_DIMENSION, never otherwise), check;
 *  - exact round trip, explicit zeros included (adia_format_to_matrix);
 *  - bytes = storage bytes + vector bytes, padded zeros >= 0;
 *  - CPU SpMV against the reference (beta 0 and general);
 *  - a non-finite x[j] reaches only the rows with a nonzero in column j:
 *    padded slots never multiply x (CPU, and GPU when present), and the
 *    issue's 3 x 3 example through a CPU plan;
 *  - the diagonal A(i,i) (issue 28): the resolved slot, the reference
 *    (adia_format_to_matrix) and adia__format_diagonal all equal A's,
 *    bitwise (-0.0 stays -0.0, 0 where not stored or rows >= cols); on the
 *    device the GPU twin in double and float and the device route;
 *  - GPU SpMV against the CPU when a device is present and the table has
 *    a GPU side; no GPU side: the upload says unsupported;
 *  - code generator and spy overlay: accepted exactly for the formats the
 *    table marks as diagonal-core storage, refused cleanly for the others
 *    (run under AddressSanitizer: no format may be read as another). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static const char *only;   /* ADIA_TEST_FORMAT */
static int gpu_count;

/* A rows x cols matrix of random entries (density d, every third row empty)
 * plus explicit zeros (0.0 and -0.0) at a few places. */
static adia_matrix *awkward(uint64_t seed, int32_t rows, int32_t cols, double d, int zeros)
{
    test_coo m = {.rows = rows, .cols = cols};
    uint64_t st = seed;
    for (int32_t i = 0; i < rows; i++) {
        if (i % 3 == 1) continue;
        for (int32_t j = 0; j < cols; j++)
            if (fabs(test_rand(&st)) < d) test_coo_add(&m, i, j, test_rand(&st) + 2.0);
    }
    for (int z = 0; z < zeros && rows > 0 && cols > 0; z++) {
        int32_t i = (int32_t)((z * 7 + 2) % rows), j = (int32_t)((z * 13 + 5) % cols);
        if (i % 3 == 1) i = (i + 1) % rows;
        /* a position not taken yet: the last column of the row is a new one */
        int taken = 0;
        for (int64_t k = 0; k < m.n; k++) taken |= m.r[k] == i && m.c[k] == j;
        if (!taken) test_coo_add(&m, i, j, z % 2 ? -0.0 : 0.0);
    }
    return test_coo_matrix(&m);
}

/* Diagonals that leave the matrix: offsets beyond both sides of a wide and
 * of a tall matrix, with an explicit zero on one of them. */
static adia_matrix *leaving(int32_t rows, int32_t cols)
{
    static const int32_t off[] = {-70, -9, -1, 0, 2, 31, 90};
    test_coo m = {.rows = rows, .cols = cols};
    uint64_t st = 99;
    for (int k = 0; k < 7; k++)
        for (int32_t i = 0; i < rows; i++) {
            int64_t j = (int64_t)i + off[k];
            if (j < 0 || j >= cols) continue;
            test_coo_add(&m, i, j, i == 5 && off[k] == 2 ? 0.0 : test_rand(&st) + 3.0);
        }
    return test_coo_matrix(&m);
}

/* The diagonal with gaps, beside offsets -2 and 3: missing where i % 5 is
 * 2 and, in the second half, in three rows of four (a lone diagonal entry
 * in a CRSD segment: a scatter point); explicit 0.0 and -0.0 on it. */
static adia_matrix *gappy(int32_t rows, int32_t cols)
{
    test_coo m = {.rows = rows, .cols = cols};
    uint64_t st = 7;
    for (int32_t i = 0; i < rows; i++)
        for (int32_t o = -2; o <= 3; o++) {
            int64_t j = (int64_t)i + o;
            if ((o != -2 && o != 0 && o != 3) || j < 0 || j >= cols) continue;
            if (o == 0 && (i % 5 == 2 || (i >= rows / 2 && i % 4 != 0))) continue;
            double v = test_rand(&st) + 3.0;
            if (o == 0 && i % 7 == 3) v = 0.0;
            if (o == 0 && i % 11 == 4) v = -0.0;
            test_coo_add(&m, i, j, v);
        }
    return test_coo_matrix(&m);
}

static int count_zeros(const adia_matrix *A)
{
    int n = 0;
    for (int64_t k = 0; k < A->csr.nnz; k++) n += ((const double *)A->csr.values)[k] == 0.0;
    return n;
}

/* y = F x (alpha 1, beta 0) with host doubles in and out, through the
 * CPU SpMV in F's value type (or, in check_gpu, the GPU's). */
typedef adia_status (*spmv_host_fn)(adia_format *F, const double *x, double *y);

static adia_status cpu_spmv(adia_format *F, const double *x, double *y)
{
    int32_t m = F->rows, n = F->cols;
    int fl = F->vtype == ADIA_FLOAT;
    void *xt = calloc((size_t)n + 1, 8), *yt = calloc((size_t)m + 1, 8);
    adia_status s = ADIA_ERR_NO_MEMORY;
    if (xt && yt) {
        for (int32_t j = 0; j < n; j++)
            if (fl) ((float *)xt)[j] = (float)x[j]; else ((double *)xt)[j] = x[j];
        s = adia_format_spmv(F, 1.0, xt, 0.0, yt);
        for (int32_t i = 0; i < m; i++) y[i] = fl ? ((float *)yt)[i] : ((double *)yt)[i];
    }
    free(xt);
    free(yt);
    return s;
}

/* Padded slots never multiply x (docs/formats-diagonal.md): with x finite
 * but for x[j] (Inf, -Inf or NaN as j % 3), y = A x is the stored
 * nonzeros' alone -- the kind of non-finite value CSR gives in the rows
 * with a nonzero in column j, the finite reference in every other row.  A
 * row whose explicit zero meets x[j] may give either (CSR's 0 * Inf is
 * NaN; a format that stores its zeros as it stores padding skips both).
 * R: A with its values rounded to F's type.  Columns j = 0, step, 2 step,
 * ...; one assertion for the lot, naming the first row that differs. */
static void check_nonfinite_x(adia_format *F, const adia_matrix *R, int32_t step, spmv_host_fn f,
                              const char *fmt, const char *what, const char *side)
{
    int32_t m = F->rows, n = F->cols;
    const adia_csr *A = &R->csr;
    const double *v = A->values;
    double tol = F->vtype == ADIA_FLOAT ? 1e-5 : 1e-13;
    double *x = calloc((size_t)n + 1, sizeof *x), *y = calloc((size_t)m + 1, sizeof *y);
    char bad[200] = "";
    uint64_t st = 23;
    test_rand_vector(&st, x, n);
    for (int32_t j = 0; j < n; j++) x[j] = F->vtype == ADIA_FLOAT ? (double)(float)x[j] : x[j];
    for (int32_t j = 0; j < n && !bad[0]; j += step) {
        double keep = x[j];
        x[j] = j % 3 == 0 ? INFINITY : j % 3 == 1 ? -INFINITY : NAN;
        adia_status s = f(F, x, y);
        if (s != ADIA_OK)
            snprintf(bad, sizeof bad, "SpMV: %s", adia_last_error());
        for (int32_t i = 0; i < m && s == ADIA_OK && !bad[0]; i++) {
            double want = 0, size = 0;
            int loose = 0;
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                if (v[k] == 0) {
                    loose |= A->colind[k] == j;
                    continue;
                }
                want += v[k] * x[A->colind[k]];
                size += fabs(v[k] * x[A->colind[k]]);
            }
            int same = isnan(want) ? isnan(y[i]) : isinf(want) ? y[i] == want
                       : fabs(y[i] - want) <= tol * (1 + size);
            if (!same && !loose)
                snprintf(bad, sizeof bad, "x[%d] = %g: y[%d] = %g, the stored nonzeros give %g",
                         j, x[j], i, y[i], want);
        }
        x[j] = keep;
    }
    CHECK(!bad[0], "%s on %s (%s, %s): padding multiplies x: %s", fmt, what,
          adia_value_type_name(F->vtype), side, bad);
    free(x);
    free(y);
}

/* A(i,i) of R's CSR (0 where not stored): what every route must give. */
static void csr_diagonal(const adia_matrix *R, double *d)
{
    const adia_csr *c = &R->csr;
    for (int32_t i = 0; i < c->rows; i++) {
        d[i] = 0.0;
        for (int64_t k = c->rowptr[i]; k < c->rowptr[i + 1]; k++)
            if (c->colind[k] == i) d[i] = ((const double *)c->values)[k];
    }
}

/* The first row where a and b differ bitwise (-0.0 is not 0.0), or -1. */
static int32_t diagonal_differs(const double *a, const double *b, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a)) return i;
    return -1;
}

/* Fill d with a value no route writes, so a row left untouched shows. */
static void poison(double *d, int32_t n)
{
    for (int32_t i = 0; i < n; i++) d[i] = 12345.5;
}

/* The slot, the reference and the one entry (on the device once F is
 * uploaded) against want, A(i,i) of A rounded to F's type. */
static void check_diagonal(adia_format *F, const double *want, const char *fmt, const char *what)
{
    int32_t n = F->rows;
    double *got = malloc(((size_t)n + 1) * sizeof *got);
    const char *route[3] = {"slot", "reference", "adia__format_diagonal"};
    for (int r = 0; r < 3; r++) {
        poison(got, n);
        adia_status s = r == 0 ? F->ops->diagonal(F, got)
                      : r == 1 ? adia__format_diagonal_ref(F, got) : adia__format_diagonal(F, got);
        CHECK(s == ADIA_OK, "%s on %s: diagonal (%s): %s", fmt, what, route[r], adia_last_error());
        int32_t i = s == ADIA_OK ? diagonal_differs(got, want, n) : -1;
        CHECK(i < 0, "%s on %s (%s%s): diagonal (%s) at row %d: %g, A has %g", fmt, what,
              adia_value_type_name(F->vtype), F->dev ? ", uploaded" : "", route[r], (int)i,
              i < 0 ? 0 : got[i], i < 0 ? 0 : want[i]);
    }
    free(got);
}

#ifdef ADIA_HAVE_CUDA
/* The GPU twin in double and in float against want rounded to each. */
static void check_diagonal_gpu(const adia_format *F, const double *want, const char *fmt,
                               const char *what)
{
    int32_t n = F->rows;
    double *got = malloc(((size_t)n + 1) * sizeof *got), *w = malloc(((size_t)n + 1) * sizeof *w);
    for (int fl = 0; fl < 2; fl++) {
        poison(got, n);
        void *d = test_gpu_upload(got, n, fl);
        CHECK(d != NULL, "%s on %s: a device array", fmt, what);
        if (!d) continue;
        adia_value_type vt = fl ? ADIA_FLOAT : ADIA_DOUBLE;
        CHECK_OK(adia__format_diagonal_gpu(F, d, vt, NULL));
        CHECK(test_gpu_download(got, d, n, fl) == 0, "%s on %s: download", fmt, what);
        for (int32_t i = 0; i < n; i++) w[i] = fl ? (double)(float)want[i] : want[i];
        int32_t i = diagonal_differs(got, w, n);
        CHECK(i < 0, "%s on %s (%s): GPU diagonal in %s at row %d: %g, A has %g", fmt, what,
              adia_value_type_name(F->vtype), adia_value_type_name(vt), (int)i,
              i < 0 ? 0 : got[i], i < 0 ? 0 : w[i]);
        cudaFree(d);
    }
    free(got);
    free(w);
}

static adia_status gpu_spmv(adia_format *F, const double *x, double *y)
{
    memset(y, 0, (size_t)F->rows * sizeof *y);
    return test_gpu_format_spmv(F, 1.0, x, 0.0, y);
}

/* GPU SpMV (each kernel variant the table lists) against the CPU SpMV, and
 * its padding never multiplying x (R: A rounded to F's type, or NULL). */
static void check_gpu(adia_format *F, const adia_matrix *R, const char *fmt, const char *what)
{
    int32_t m = F->rows, n = F->cols;
    double *x = calloc((size_t)n + 1, sizeof *x), *yc = calloc((size_t)m + 1, sizeof *yc);
    double *yg = calloc((size_t)m + 1, sizeof *yg);
    void *xt = calloc((size_t)n + 1, 8), *yt = calloc((size_t)m + 1, 8);
    uint64_t st = 5;
    test_rand_vector(&st, x, n);
    test_rand_vector(&st, yc, m);
    int fl = F->vtype == ADIA_FLOAT;
    for (int32_t j = 0; j < n; j++)
        if (fl) ((float *)xt)[j] = (float)x[j]; else ((double *)xt)[j] = x[j];
    for (int32_t i = 0; i < m; i++) {
        if (fl) ((float *)yt)[i] = (float)yc[i]; else ((double *)yt)[i] = yc[i];
        yc[i] = fl ? (double)(float)yc[i] : yc[i];
    }
    memcpy(yg, yc, (size_t)m * sizeof *yg);
    CHECK_OK(adia_format_spmv(F, -1.5, xt, 0.5, yt));
    for (int32_t i = 0; i < m; i++) yc[i] = fl ? ((float *)yt)[i] : ((double *)yt)[i];
    for (int32_t j = 0; j < n; j++) x[j] = fl ? (double)(float)x[j] : x[j];
    unsigned kernels = F->ops->gpu->kernels;
    for (int k = 0; k < 32; k++) {
        if (k && !(kernels & (1u << k))) continue;
        if (k) {
            adia_status s = adia_format_set_kernel(F, (adia_gpu_kernel)k);
            if (s == ADIA_ERR_NVRTC || s == ADIA_ERR_UNSUPPORTED) continue;  /* no generator */
            CHECK(s == ADIA_OK, "%s on %s: set kernel %d: %s", fmt, what, k, adia_last_error());
        }
        double *y = malloc(((size_t)m + 1) * sizeof *y);
        memcpy(y, yg, (size_t)m * sizeof *y);
        CHECK_OK(test_gpu_format_spmv(F, -1.5, x, 0.5, y));
        double e = test_rel_err(y, yc, m);
        CHECK(e <= (fl ? 1e-5 : 1e-12), "%s on %s (%s, kernel %d): GPU vs CPU error %g", fmt,
              what, adia_value_type_name(F->vtype), k, e);
        char side[32];
        snprintf(side, sizeof side, "GPU kernel %d", k);
        if (R) check_nonfinite_x(F, R, n > 8 ? n / 8 : 1, gpu_spmv, fmt, what, side);
        free(y);
    }
    free(x); free(yc); free(yg); free(xt); free(yt);
}
#endif

static void check_one(const char *fmt, const adia_matrix *A, adia_value_type vt, const char *what)
{
    adia_format *F = NULL;
    adia_status s = adia_format_build(A, fmt, NULL, vt, &F);
    if (s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_DIMENSION) {
        CHECK(F == NULL, "%s on %s: refused but returned a handle", fmt, what);
        return;   /* a shape the format cannot hold (cdm: square only) */
    }
    CHECK(s == ADIA_OK, "%s on %s (%s): build: %s", fmt, what, adia_value_type_name(vt),
          adia_last_error());
    if (s != ADIA_OK) return;
    CHECK(F->ops->check(F->impl) == ADIA_OK, "%s on %s: check: %s", fmt, what, adia_last_error());
    /* exact round trip, explicit zeros included */
    adia_matrix *B = NULL, *R = test_rounded(A, vt);
    CHECK_OK(adia_format_to_matrix(F, &B));
    CHECK(B && R && adia_matrix_equal(B, R), "%s on %s (%s): round trip not exact "
          "(nnz %lld, back %lld, %d explicit zeros)", fmt, what, adia_value_type_name(vt),
          (long long)adia_matrix_nnz(A), (long long)(B ? adia_matrix_nnz(B) : -1), count_zeros(A));
    adia_matrix_destroy(B);
    CHECK(adia_format_padded_zeros(F) >= 0, "%s on %s: padded zeros", fmt, what);
    CHECK(adia_format_bytes(F) == adia_format_storage_bytes(F) +
              adia__vector_bytes(A->csr.rows, A->csr.cols, vt),
          "%s on %s: bytes = storage + vectors", fmt, what);
    double tol = vt == ADIA_FLOAT ? 1e-5 : 1e-13;
    double e = test_format_spmv_error(F, A, 3, 1.0, 0.0);
    CHECK(e <= tol, "%s on %s (%s): SpMV (beta 0) error %g", fmt, what, adia_value_type_name(vt), e);
    e = test_format_spmv_error(F, A, 4, -1.5, 0.5);
    CHECK(e <= tol, "%s on %s (%s): SpMV error %g", fmt, what, adia_value_type_name(vt), e);
    if (R) check_nonfinite_x(F, R, 1, cpu_spmv, fmt, what, "CPU");
    double *want = malloc(((size_t)A->csr.rows + 1) * sizeof *want);
    if (R) csr_diagonal(R, want);
    if (R) check_diagonal(F, want, fmt, what);
    /* the code generator: diagonal-core formats only, never a wrong read */
    char *src = NULL;
    s = adia_codegen_source(F, &src);
    if (adia_format_is_diagonal(fmt))
        CHECK(s == ADIA_OK || s == ADIA_ERR_UNSUPPORTED, "%s on %s: codegen: %s", fmt, what,
              adia_last_error());
    else
        CHECK(s == ADIA_ERR_UNSUPPORTED && !src, "%s on %s: codegen must refuse: %s", fmt, what,
              adia_status_string(s));
    free(src);
    /* GPU */
    if (!F->ops->gpu) {
        CHECK(!adia_format_has_gpu(fmt), "%s: has_gpu disagrees with the table", fmt);
        if (gpu_count > 0)
            CHECK_ERR(adia_format_upload(F), ADIA_ERR_UNSUPPORTED, "GPU");
    }
#ifdef ADIA_HAVE_CUDA
    else if (gpu_count > 0) {
        s = adia_format_upload(F);
        CHECK(s == ADIA_OK, "%s on %s: upload: %s", fmt, what, adia_last_error());
        if (s == ADIA_OK) check_gpu(F, R, fmt, what);
        if (s == ADIA_OK && R) {
            check_diagonal(F, want, fmt, what);   /* now read on the device */
            check_diagonal_gpu(F, want, fmt, what);
        }
    }
#endif
    free(want);
    adia_matrix_destroy(R);
    adia_format_destroy(F);
}

/* Above 32768 rows the diagonal's read runs on threads (rows split in
 * tasks that cut pieces): every format's slot against A's diagonal on a
 * stencil and on the diagonal with gaps of that size. */
static void check_diagonal_threads(const char *fmt, const adia_matrix *A,
                                   const adia_format_params *p, const char *what)
{
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        adia_format *F = NULL;
        adia_status s = adia_format_build(A, fmt, p, vt, &F);
        if (s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_DIMENSION) continue;
        CHECK(s == ADIA_OK, "%s on %s: build: %s", fmt, what, adia_last_error());
        adia_matrix *R = s == ADIA_OK ? test_rounded(A, vt) : NULL;
        double *want = malloc(((size_t)A->csr.rows + 1) * sizeof *want);
        if (R) {
            csr_diagonal(R, want);
            check_diagonal(F, want, fmt, what);
        }
        free(want);
        adia_matrix_destroy(R);
        adia_format_destroy(F);
    }
}

/* The example: x = [1, 1, Inf] and a 3 x 3 matrix whose third
 * column is read only by padding in row 1 (DIA keeps offset 1 there): y =
 * A x must be CSR's [2, 1, Inf] in every format, through a CPU plan (it
 * was [2, NaN, Inf] in dia, hdi, brcsd1, brcsd2, pbcsr, hm and cdm). */
static void check_padding_example(const char *fmt)
{
    static const double a[9] = {1, 1, 0, 0, 1, 0, 0, 0, 1};
    adia_matrix *A = test_dense_matrix(3, 3, a);
    for (int t = 0; A && t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        adia_plan *P = test_plan_fixed(A, fmt, vt, 0);
        if (!P) continue;
        double xd[3] = {1, 1, INFINITY}, yd[3] = {-7, -7, -7};
        float xf[3] = {1, 1, INFINITY}, yf[3] = {-7, -7, -7};
        CHECK_OK(adia_spmv(P, 1.0, t ? (void *)xf : (void *)xd, 0.0, t ? (void *)yf : (void *)yd));
        double y[3];
        for (int i = 0; i < 3; i++) y[i] = t ? yf[i] : yd[i];
        CHECK(y[0] == 2 && y[1] == 1 && y[2] == INFINITY, "%s (%s): A [1, 1, inf] = [%g, %g, %g], "
              "CSR gives [2, 1, inf]", fmt, adia_value_type_name(vt), y[0], y[1], y[2]);
        adia_plan_destroy(P);
    }
    adia_matrix_destroy(A);
}

/* The spy overlay: accepted for the diagonal core's formats only. */
static void check_overlay(const char *fmt, const adia_matrix *A)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/adia-test-formats-%d.png", (int)getpid());
    adia_spy_options o = {.size = 64, .overlay = fmt};
    adia_status s = adia_matrix_spy_png(A, path, &o);
    if (adia_format_is_diagonal(fmt))
        CHECK(s == ADIA_OK, "%s: spy overlay: %s", fmt, adia_last_error());
    else
        CHECK(s == ADIA_ERR_INVALID_ARG && test_contains(adia_last_error(), "not a diagonal format"),
              "%s: spy overlay must refuse: %s", fmt, adia_last_error());
    unlink(path);
}

int main(void)
{
    TEST_BEGIN();
    only = getenv("ADIA_TEST_FORMAT");
    if (only && *only && !adia_format_exists(only)) {
        fprintf(stderr, "ADIA_TEST_FORMAT=%s: not a registered format\n", only);
        return 1;
    }
    CHECK_OK(adia_gpu_device_count(&gpu_count));
    struct {
        const char *what;
        adia_matrix *A;
    } mats[] = {
        {"square with empty rows and zeros", awkward(1, 37, 37, 0.15, 6)},
        {"one row", awkward(2, 1, 29, 0.4, 2)},
        {"one column", awkward(3, 31, 1, 0.5, 1)},
        {"wide", awkward(4, 23, 71, 0.1, 4)},
        {"tall", awkward(5, 71, 23, 0.1, 4)},
        {"wide, diagonals leaving", leaving(40, 110)},
        {"tall, diagonals leaving", leaving(110, 40)},
        {"square, diagonals leaving", leaving(97, 97)},
        {"stencil", test_generate("lap2d5:9x7")},
        {"no entries", awkward(6, 9, 9, 0.0, 0)},
        {"diagonal with gaps and zeros", gappy(61, 61)},
        {"wide, diagonal with gaps", gappy(37, 64)},
        {"tall, diagonal with gaps", gappy(64, 37)},
    };
    enum { N_MATS = sizeof mats / sizeof *mats };
    CHECK(mats[0].A && count_zeros(mats[0].A) >= 3, "the test matrix keeps its explicit zeros");
    int tested = 0;
    for (int f = 0; f < adia_format_count(); f++) {
        const char *fmt = adia_format_name_at(f);
        if (only && *only && strcmp(only, fmt)) continue;
        const adia_format_ops *ops = adia__format_ops_find(fmt);
        CHECK(ops && ops->to_csr && ops->check && ops->destroy && ops->storage_bytes && ops->spmv &&
                  ops->padded_zeros && ops->diagonal && (ops->build || ops->diag.policy),
              "%s: a host slot is missing after resolution", fmt);
        CHECK(adia_format_is_diagonal(fmt) == (ops->diag.policy != NULL), "%s: is_diagonal", fmt);
        tested++;
        for (int i = 0; i < N_MATS; i++) {
            if (!mats[i].A) continue;
            check_one(fmt, mats[i].A, ADIA_DOUBLE, mats[i].what);
            check_one(fmt, mats[i].A, ADIA_FLOAT, mats[i].what);
        }
        check_overlay(fmt, mats[0].A);
        check_padding_example(fmt);
    }
    adia_matrix *big[2] = {test_generate("lap3d7:33"), gappy(40001, 40001)};
    for (int f = 0; f < adia_format_count(); f++) {
        const char *fmt = adia_format_name_at(f);
        if (only && *only && strcmp(only, fmt)) continue;
        if (big[0]) check_diagonal_threads(fmt, big[0], NULL, "lap3d7:33 (threads)");
        if (big[1])
            check_diagonal_threads(fmt, big[1], NULL, "40001 rows, diagonal with gaps (threads)");
    }
    /* hyb of width 1: an ELL part and the diagonal mostly in the overflow */
    adia_format_params w1 = {.ell_width = 1};
    if (big[1] && (!only || !*only || !strcmp(only, "hyb")))
        check_diagonal_threads("hyb", big[1], &w1, "hyb width=1, diagonal in the overflow");
    adia_matrix_destroy(big[0]);
    adia_matrix_destroy(big[1]);
    CHECK(tested > 0, "no format tested");
    printf("%d formats\n", tested);
    for (int i = 0; i < N_MATS; i++) adia_matrix_destroy(mats[i].A);
    return TEST_END();
}
