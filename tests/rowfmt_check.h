/* rowfmt_check.h -- checks every row-format test (tests/test_rowfmt_*.c)
 * runs on each format: exact round trip, invariants, SpMV against the
 * reference in double and float, on a fixed set of awkward random matrices
 * and on the shared real matrices.  Header-only (static) so each test
 * program stays one file plus this. */
#ifndef ADIA_ROWFMT_CHECK_H
#define ADIA_ROWFMT_CHECK_H

#include "internal.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <string.h>

/* Build name(params) from A in double and float: invariants hold, to_csr
 * gives A back exactly, SpMV matches the reference; what names A. */
/* Formats with a block size refuse matrices smaller than the block: the
 * checks below expect that error for matrices under rf_min_rows x
 * rf_min_cols (set by rf_check_format_min). */
static int32_t rf_min_rows = 0, rf_min_cols = 0;

static inline void rf_check_matrix(const char *name, const adia_format_params *p,
                            const adia_matrix *A, const char *what)
{
    adia_format *F = NULL;
    if (A->csr.rows < rf_min_rows || A->csr.cols < rf_min_cols) {
        CHECK_ERR(adia_format_build(A, name, p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
                  "larger than the matrix");
        return;
    }
    adia_status s = adia_format_build(A, name, p, ADIA_DOUBLE, &F);
    CHECK(s == ADIA_OK, "%s on %s: build: %s", name, what, adia_last_error());
    if (s != ADIA_OK) return;
    CHECK(F->ops->check(F->impl) == ADIA_OK, "%s on %s: check: %s", name, what, adia_last_error());
    adia_matrix *B = NULL;
    CHECK_OK(adia_format_to_matrix(F, &B));
    CHECK(B && adia_matrix_equal(A, B), "%s on %s: round trip not exact", name, what);
    adia_matrix_destroy(B);
    CHECK(adia_format_padded_zeros(F) >= 0, "%s on %s: padded zeros", name, what);
    CHECK(adia_format_bytes(F) == adia_format_storage_bytes(F) +
              adia__vector_bytes(A->csr.rows, A->csr.cols, ADIA_DOUBLE),
          "%s on %s: spmv_bytes = storage + vectors", name, what);
    double e = test_format_spmv_error(F, A, 5, 1.5, -0.75);
    CHECK(e <= 1e-14, "%s on %s: double SpMV error %g", name, what, e);
    e = test_format_spmv_error(F, A, 6, -0.5, 0.0);
    CHECK(e <= 1e-14, "%s on %s: double SpMV (beta 0) error %g", name, what, e);
    adia_format_destroy(F);
    CHECK_OK(adia_format_build(A, name, p, ADIA_FLOAT, &F));
    if (!F) return;
    CHECK(F->ops->check(F->impl) == ADIA_OK, "%s on %s: float check: %s", name, what,
          adia_last_error());
    e = test_format_spmv_error(F, A, 7, 2.0, 0.5);
    CHECK(e <= 1e-5, "%s on %s: float SpMV error %g", name, what, e);
    adia_format_destroy(F);
}

/* A random rows x cols matrix with row `longrow` full (a row much longer
 * than the others). */
static inline adia_matrix *rf_long_row_matrix(int32_t rows, int32_t cols, int32_t longrow)
{
    adia_matrix *R = test_random_matrix(11, rows, cols, 0.02);
    int32_t *r, *c;
    double *v;
    if (!R || adia_matrix_to_coo(R, &r, &c, &v) != ADIA_OK) return NULL;
    int64_t n = R->csr.nnz, m = n + cols;
    r = realloc(r, (size_t)m * sizeof *r);
    c = realloc(c, (size_t)m * sizeof *c);
    v = realloc(v, (size_t)m * sizeof *v);
    int64_t k = 0;   /* drop longrow's entries, then add it full */
    for (int64_t q = 0; q < n; q++)
        if (r[q] != longrow) { r[k] = r[q]; c[k] = c[q]; v[k++] = v[q]; }
    for (int32_t j = 0; j < cols; j++) { r[k] = longrow; c[k] = j; v[k++] = 1.0 + j; }
    adia_matrix *A = NULL;
    adia_matrix_create_coo(rows, cols, k, r, c, v, ADIA_DOUBLE, &A);
    free(r); free(c); free(v);
    adia_matrix_destroy(R);
    return A;
}

/* The awkward random shapes every format must handle. */
static inline void rf_check_random(const char *name, const adia_format_params *p)
{
    static const struct { int32_t rows, cols; double density; const char *what; } shapes[] = {
        {60, 45, 0.08, "60x45 random (empty rows)"}, {1, 70, 0.3, "one row"},
        {70, 1, 0.5, "one column"},  {7, 300, 0.05, "wide 7x300"},
        {300, 7, 0.2, "tall 300x7"}, {9, 9, 0.0, "9x9 without entries"},
        {0, 0, 0.0, "0x0"},          {37, 53, 0.11, "odd 37x53"},
        {129, 131, 0.04, "129x131"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        adia_matrix *A = test_random_matrix(100 + i, shapes[i].rows, shapes[i].cols,
                                            shapes[i].density);
        CHECK(A != NULL, "random matrix %s", shapes[i].what);
        if (A) rf_check_matrix(name, p, A, shapes[i].what);
        adia_matrix_destroy(A);
    }
    adia_matrix *A = rf_long_row_matrix(90, 80, 41);
    CHECK(A != NULL, "long-row matrix");
    if (A) rf_check_matrix(name, p, A, "90x80 with one full row");
    adia_matrix_destroy(A);
}

/* Every matrix of ../shared/matrices (skipped with a note when the folder
 * is absent or the Matrix Market reader is not there yet). */
static inline void rf_check_shared(const char *name, const adia_format_params *p)
{
    const char *dir = test_shared_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        printf("note: ../shared/matrices absent, real matrices skipped\n");
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".mtx")) continue;
        adia_matrix *A = NULL;
        adia_status s = adia_matrix_read_mtx(test_shared_path(e->d_name), &A);
        if (s == ADIA_ERR_UNSUPPORTED && test_contains(adia_last_error(), "not implemented yet")) {
            printf("note: %s\n", adia_last_error());
            break;
        }
        if (s == ADIA_ERR_UNSUPPORTED) {   /* e.g. complex values: not ours to test */
            printf("note: %s skipped: %s\n", e->d_name, adia_last_error());
            continue;
        }
        CHECK(s == ADIA_OK, "read %s: %s", e->d_name, adia_last_error());
        if (A) rf_check_matrix(name, p, A, e->d_name);
        adia_matrix_destroy(A);
    }
    closedir(d);
}

/* All of the above for one format and parameter set; the real matrices
 * only for the default parameters (p NULL), to keep the run short. */
static inline void rf_check_format(const char *name, const adia_format_params *p)
{
    adia_format_params dflt;
    adia_format_params_default(&dflt);
    rf_check_random(name, p ? p : &dflt);
    if (!p) rf_check_shared(name, &dflt);
}

/* The same for a format with a given block size min_rows x min_cols. */
static inline void rf_check_format_min(const char *name, const adia_format_params *p,
                                int32_t min_rows, int32_t min_cols)
{
    rf_min_rows = min_rows;
    rf_min_cols = min_cols;
    rf_check_format(name, p);
    rf_min_rows = rf_min_cols = 0;
}

/* The survey's 5x5 sample matrix (eqs. 2.1, 2.3, 2.6, 2.11) and its 6x5
 * extension (eq. 2.56), and the CMRS/streamed sample (eq. 2.30). */
static const double rf_sample5[25] = {0, 4, 0, 7, 0, 2, 0, 3, 0, 6, 0, 5, 0, 0, 0,
                                      0, 0, 0, 0, 2, 1, 0, 0, 6, 0};
static const double rf_sample6[30] = {0, 4, 0, 7, 0, 2, 0, 3, 0, 6, 0, 5, 0, 0, 0,
                                      0, 0, 0, 0, 2, 1, 0, 0, 6, 0, 2, 4, 0, 0, 5};
static const double rf_sample_cmrs[25] = {4, 5, 0, 1, 0, 0, 7, 8, 0, 0, 0, 9, 2, 3, 0,
                                          0, 0, 0, 6, 0, 0, 0, 0, 10, 11};

/* Compare n int32 / int64 / double entries, naming what differs. */
static inline int rf_eq_i32(const int32_t *a, const int32_t *b, int64_t n)
{
    return !memcmp(a, b, (size_t)n * sizeof *a);
}
static inline int rf_eq_i64(const int64_t *a, const int64_t *b, int64_t n)
{
    return !memcmp(a, b, (size_t)n * sizeof *a);
}
static inline int rf_eq_f64(const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Parameters from "key=value,..." text (NULL: defaults); a parse error
 * fails the test. */
static inline adia_format_params rf_params(const char *text)
{
    adia_format_params p;
    adia_format_params_default(&p);
    if (text) CHECK_OK(adia_format_params_parse(&p, text));
    return p;
}

/* Nonzero r x c blocks of A, counted independently of the modules (BCSR
 * blocks; quad-tree tiles with r = c = q). */
static inline int64_t rf_count_blocks(const adia_matrix *A, int32_t r, int32_t c)
{
    int32_t bcols = (A->csr.cols + c - 1) / c;
    int32_t *last = malloc(((size_t)bcols + 1) * sizeof *last);
    int64_t n = 0;
    for (int32_t j = 0; j < bcols; j++) last[j] = -1;
    for (int32_t i = 0; i < A->csr.rows; i++)
        for (int64_t k = A->csr.rowptr[i]; k < A->csr.rowptr[i + 1]; k++) {
            int32_t bj = A->csr.colind[k] / c;
            if (last[bj] != i / r) { last[bj] = i / r; n++; }
        }
    free(last);
    return n;
}

/* A format of A with params p in double (NULL + failed check on error). */
static inline adia_format *rf_build(const adia_matrix *A, const char *name, const adia_format_params *p)
{
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, name, p, ADIA_DOUBLE, &F));
    return F;
}

#endif
