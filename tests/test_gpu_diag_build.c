/* test_gpu_diag_build.c -- adia__gpu_diag_build (BRCSD-II built on the GPU
 * from a device CSR) against the host build adia_format_build(A, "brcsd2",
 * B=...): every array equal (pieces, groups and their numbering, offsets,
 * piece_data, data bitwise, explicit zero lists), the device data equal to
 * the downloaded one, download=0 giving the same structure and no host data.
 * Matrices: generators (stencils, band, type II, type III, random,
 * power-law) and hand-made ones (wide and tall with far offsets, empty rows,
 * one row, no rows, no nonzeros, explicit zeros and values that are zero
 * only in float, a diagonal in one piece only); pieces of 1, 32, 64, 100,
 * 256 rows and more rows than the matrix; double and float.  Plus bad
 * arguments and an invalid device CSR.  A failure names the matrix, the
 * array and the first index that differs.  Skips (77) without a device. */
#include "testutil.h"

#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include "cuda/diag_build.h"

#include <cuda_runtime.h>
#include <math.h>

/* ------------------------------------------------------ device CSR */

static int cuda_ok(cudaError_t e, const char *what)
{
    CHECK(e == cudaSuccess, "%s: %s", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

/* ------------------------------------------------------ comparison */

/* Arrays of n elements of sz bytes equal bytewise; names the first miss. */
static void same(const char *label, const char *what, const void *a, const void *b, int64_t n, size_t sz)
{
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz)) bad = i;
    CHECK(bad < 0, "%s: %s differs first at index %lld (of %lld)", label, what, (long long)bad, (long long)n);
}

static void same_n(const char *label, const char *what, int64_t gpu, int64_t host)
{
    CHECK(gpu == host, "%s: %s = %lld on the GPU, %lld on the host", label, what, (long long)gpu, (long long)host);
}

/* Everything but the data. */
static int same_structure(const char *label, const adia_diag *G, const adia_diag *H)
{
    int before = test_failed;
    same_n(label, "rows", G->rows, H->rows);
    same_n(label, "cols", G->cols, H->cols);
    same_n(label, "vtype", G->vtype, H->vtype);
    same_n(label, "nnz", G->nnz, H->nnz);
    same_n(label, "n_scatter", G->n_scatter, 0);
    same_n(label, "offsets_per_piece", G->offsets_per_piece, H->offsets_per_piece);
    same_n(label, "n_pieces", G->n_pieces, H->n_pieces);
    same_n(label, "n_groups", G->n_groups, H->n_groups);
    same_n(label, "n_zero", G->n_zero, H->n_zero);
    if (test_failed > before) return 0;
    int64_t np = H->n_pieces, ng = H->n_groups;
    same(label, "piece_start", G->piece_start, H->piece_start, np + 1, sizeof *H->piece_start);
    same(label, "piece_group", G->piece_group, H->piece_group, np, sizeof *H->piece_group);
    same(label, "piece_data", G->piece_data, H->piece_data, np + 1, sizeof *H->piece_data);
    same(label, "group_start", G->group_start, H->group_start, ng + 1, sizeof *H->group_start);
    if (test_failed > before) return 0;
    same(label, "offsets", G->offsets, H->offsets, H->group_start[ng], sizeof *H->offsets);
    same(label, "zero_row", G->zero_row, H->zero_row, H->n_zero, sizeof *H->zero_row);
    same(label, "zero_col", G->zero_col, H->zero_col, H->n_zero, sizeof *H->zero_col);
    return test_failed == before;
}

/* Diagonals of the whole matrix: the union of the groups' offsets. */
static int64_t distinct_offsets(const adia_diag *H)
{
    int64_t span = (int64_t)H->rows + H->cols, n = 0;
    unsigned char *seen = calloc((size_t)span + 1, 1);
    if (!seen) return -1;
    for (int32_t k = 0; k < H->group_start[H->n_groups]; k++) {
        int64_t at = (int64_t)H->offsets[k] + H->rows;
        n += !seen[at];
        seen[at] = 1;
    }
    free(seen);
    return n;
}

/* GPU build (download or not) of g against the host build of A in format
 * fmt: brcsd2 (B rows a piece), hdi (hack B) or dia (one piece; B unused). */
static void compare(const char *name, const adia_matrix *A, const adia_gpu_csr *g,
                    const char *fmt, int32_t B, adia_value_type vt, int download,
                    int64_t *zeros_seen)
{
    char label[256], params[32];
    snprintf(label, sizeof label, "%s %s B=%d %s%s", name, fmt, (int)B, adia_value_type_name(vt),
             download ? "" : " download=0");
    int dia = !strcmp(fmt, "dia"), hdi = !strcmp(fmt, "hdi");
    snprintf(params, sizeof params, hdi ? "hack=%d" : dia ? "" : "B=%d", (int)B);
    adia_format_params p;
    adia_format_params_default(&p);
    CHECK_OK(adia_format_params_parse(&p, params));
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, fmt, &p, vt, &F));
    adia_diag *G = NULL;
    void *dd = NULL;
    adia_gpu_build_info info;
    int32_t rows = adia_matrix_rows(A);
    adia_status s = adia__gpu_diag_build(g, dia ? (rows > 0 ? rows : 1) : B, hdi, vt, download,
                                        &G, &dd, &info);
    CHECK(s == ADIA_OK, "%s: %s", label, adia_last_error());
    const adia_diag *H = adia__format_diag(F);
    if (s == ADIA_OK && H && same_structure(label, G, H)) {
        int64_t stored = H->piece_data[H->n_pieces];
        size_t vs = adia_value_size(vt);
        same_n(label, "info.stored", info.stored, stored);
        same_n(label, "info.n_diag", info.n_diag, distinct_offsets(H));
        CHECK((dd != NULL) == (stored > 0), "%s: device data %p for %lld slots", label, dd, (long long)stored);
        if (download) {
            same(label, "data", G->data, H->data, stored, vs);
        } else {
            CHECK(G->data == NULL, "%s: data downloaded although download=0", label);
        }
        void *back = malloc((size_t)stored * vs + 1);
        if (back && stored > 0 && cuda_ok(cudaMemcpy(back, dd, (size_t)stored * vs, cudaMemcpyDeviceToHost), label))
            same(label, "device data", back, H->data, stored, vs);
        free(back);
        *zeros_seen += H->n_zero;
    }
    cudaFree(dd);
    adia__diag_free(G);
    adia_format_destroy(F);
}

static void run_matrix(const char *name, adia_matrix *A, int64_t *zeros_seen)
{
    if (!A) return;
    adia_gpu_csr g;
    if (test_gpu_csr_upload(A, &g)) {
        int32_t rows = adia_matrix_rows(A);
        const int32_t Bs[] = {1, 32, 64, 100, 256, rows + 5 > 0 ? rows + 5 : 1};
        for (size_t i = 0; i < sizeof Bs / sizeof *Bs; i++)
            for (int t = 0; t < 2; t++)
                compare(name, A, &g, "brcsd2", Bs[i], t ? ADIA_FLOAT : ADIA_DOUBLE, 1, zeros_seen);
        compare(name, A, &g, "brcsd2", 64, ADIA_DOUBLE, 0, zeros_seen);
        for (int t = 0; t < 2; t++) {
            adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
            compare(name, A, &g, "dia", 0, vt, 1, zeros_seen);
            compare(name, A, &g, "hdi", 32, vt, 1, zeros_seen);
            compare(name, A, &g, "hdi", 128, vt, 1, zeros_seen);
        }
    }
    test_gpu_csr_free(&g);
    adia_matrix_destroy(A);
}

/* ------------------------------------------------- hand-made matrices */

/* rows x cols: main diagonal and +-1 with rows [skip0, skip1) empty, the
 * far corners (offsets -(rows-1), cols-1), +-rows/2 on a few rows, a
 * diagonal (+7) in rows 40..49 only, and every 13th entry an explicit zero
 * (every 17th a value that is zero in float only). */
static adia_matrix *far_matrix(int32_t rows, int32_t cols, int32_t skip0, int32_t skip1, uint64_t *seed)
{
    test_coo m = {.rows = rows, .cols = cols};
    int64_t k = 0;
    for (int32_t r = 0; r < rows; r++) {
        for (int o = -1; o <= 1; o++) {
            int64_t c = (int64_t)r + o;
            if (c < 0 || c >= cols || (r >= skip0 && r < skip1)) continue;
            k++;
            test_coo_add(&m, r, (int32_t)c, k % 13 == 0 ? 0.0 : k % 17 == 0 ? 1e-50 : test_rand(seed) + 2.0);
        }
        if (r >= 40 && r < 50 && r + 7 < cols) test_coo_add(&m, r, r + 7, -3.0);
        if (r % 97 == 5 && r + rows / 2 < cols) test_coo_add(&m, r, r + rows / 2, 5.0);
        if (r % 89 == 3 && r >= rows / 2 && r - rows / 2 < cols) test_coo_add(&m, r, r - rows / 2, 6.0);
    }
    if (rows > 0 && cols > 0) {
        test_coo_add(&m, rows - 1, 0, 7.0);
        test_coo_add(&m, 0, cols - 1, 8.0);
    }
    return test_coo_matrix(&m);
}

/* ------------------------------------------------------ bad arguments */

static void bad_arguments(adia_matrix *A)
{
    adia_gpu_csr g;
    memset(&g, 0, sizeof g);
    int ok = A && test_gpu_csr_upload(A, &g);
    adia_matrix_destroy(A);
    if (!ok) {
        test_gpu_csr_free(&g);
        return;
    }
    adia_diag dummy, *D = &dummy; /* must be reset to NULL on failure */
    CHECK_ERR(adia__gpu_diag_build(&g, 0, 0, ADIA_DOUBLE, 1, &D, NULL, NULL), ADIA_ERR_INVALID_ARG, "block_rows");
    CHECK(D == NULL, "out not reset on failure");
    CHECK_ERR(adia__gpu_diag_build(&g, -5, 0, ADIA_FLOAT, 1, &D, NULL, NULL), ADIA_ERR_INVALID_ARG, "block_rows");
    CHECK_ERR(adia__gpu_diag_build(NULL, 64, 0, ADIA_DOUBLE, 1, &D, NULL, NULL), ADIA_ERR_INVALID_ARG, "NULL");
    CHECK_ERR(adia__gpu_diag_build(&g, 64, 0, ADIA_DOUBLE, 1, NULL, NULL, NULL), ADIA_ERR_INVALID_ARG, "NULL");
    CHECK_ERR(adia__gpu_diag_build(&g, 64, 0, (adia_value_type)77, 1, &D, NULL, NULL), ADIA_ERR_INVALID_ARG,
              "value type");
    adia_gpu_csr h = g;
    h.rows = -1;
    CHECK_ERR(adia__gpu_diag_build(&h, 64, 0, ADIA_DOUBLE, 1, &D, NULL, NULL), ADIA_ERR_INVALID_ARG, "negative");
    h = g;
    h.colind = NULL;
    CHECK_ERR(adia__gpu_diag_build(&h, 64, 0, ADIA_DOUBLE, 1, &D, NULL, NULL), ADIA_ERR_INVALID_ARG, "NULL device");
    h = g;
    h.nnz = g.nnz - 1;    /* rowptr[rows] no longer nnz */
    CHECK_ERR(adia__gpu_diag_build(&h, 64, 0, ADIA_DOUBLE, 1, &D, NULL, NULL), ADIA_ERR_INVALID_MATRIX, "rowptr");
    h = g;
    h.cols = 10;          /* columns >= 10 now lie outside the matrix */
    CHECK_ERR(adia__gpu_diag_build(&h, 64, 0, ADIA_DOUBLE, 1, &D, NULL, NULL), ADIA_ERR_INVALID_MATRIX, "column");
    CHECK(D == NULL, "out not reset on failure");
    test_gpu_csr_free(&g);
}

/* ------------------------------------------------ the public entry */

/* max |y_gpu - y_ref| / max |y_ref| of y = A x on the device through F. */
static double gpu_error(adia_format *F, const adia_matrix *A)
{
    int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    double *x = calloc((size_t)n + 1, 8), *ref = calloc((size_t)m + 1, 8), *y = calloc((size_t)m + 1, 8);
    double err = INFINITY;
    uint64_t st = 11;
    if (x && ref && y) {
        test_rand_vector(&st, x, n);
        if (adia_format_value_type(F) == ADIA_FLOAT)   /* the reference sees the rounded x */
            for (int32_t j = 0; j < n; j++) x[j] = (float)x[j];
        adia_status s = adia_matrix_spmv(A, 1.0, x, 0.0, ref);
        if (s == ADIA_OK) s = test_gpu_format_spmv(F, 1.0, x, 0.0, y);
        CHECK(s == ADIA_OK, "GPU SpMV of the device-built format: %s", adia_last_error());
        if (s == ADIA_OK) err = test_rel_err(y, ref, m);
    }
    free(x);
    free(ref);
    free(y);
    return err;
}

/* adia_format_build_brcsd2_device: a format usable on the device (its data
 * adopted from the conversion) and on the host (CPU SpMV, back to CSR). */
static void public_entry(const char *name, adia_matrix *A)
{
    adia_gpu_csr g;
    if (!A || !test_gpu_csr_upload(A, &g)) {
        if (A) test_gpu_csr_free(&g);
        adia_matrix_destroy(A);
        return;
    }
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        double tol = t ? 1e-5 : 1e-12;
        adia_format_params p;
        memset(&p, 0, sizeof p);
        p.block_rows = t ? 64 : 0;                       /* 0: the default 256 */
        adia_format *F = NULL;
        adia_status s = adia_format_build_brcsd2_device(g.rows, g.cols, g.nnz, g.rowptr, g.colind,
                                                        g.values, &p, vt, &F);
        CHECK(s == ADIA_OK, "%s %s: device build: %s", name, t ? "float" : "double", adia_last_error());
        if (s != ADIA_OK) continue;
        CHECK(!strcmp(adia_format_name(F), "brcsd2") && adia_format_rows(F) == g.rows &&
              adia_format_cols(F) == g.cols, "%s: handle describes the matrix", name);
        double eg = gpu_error(F, A), ec = test_format_spmv_error(F, A, 5, 1.5, 0.5);
        CHECK(eg <= tol, "%s %s: GPU SpMV error %.3g", name, t ? "float" : "double", eg);
        CHECK(ec <= tol, "%s %s: CPU SpMV of the host copy, error %.3g", name, t ? "float" : "double", ec);
        if (!t) {
            adia_matrix *back = NULL;
            CHECK_OK(adia_format_to_matrix(F, &back));
            CHECK(back && adia_matrix_equal(back, A), "%s: host copy back to CSR equals the source", name);
            adia_matrix_destroy(back);
        }
        adia_format_destroy(F);
    }
    adia_format *F = (adia_format *)&g;   /* must be reset to NULL on failure */
    CHECK_ERR(adia_format_build_brcsd2_device(g.rows, g.cols, g.nnz, g.rowptr, g.colind, g.values,
                                              NULL, ADIA_DOUBLE, NULL), ADIA_ERR_INVALID_ARG, "out is NULL");
    CHECK_ERR(adia_format_build_brcsd2_device(g.rows, g.cols, g.nnz, g.rowptr, g.colind, g.values,
                                              NULL, (adia_value_type)77, &F), ADIA_ERR_INVALID_ARG,
              "bad value type");
    CHECK(F == NULL, "%s: out not reset after a bad value type", name);
    F = (adia_format *)&g;
    if (g.rows > 0 && g.cols > 2 && g.nnz > 0) {
        CHECK_ERR(adia_format_build_brcsd2_device(g.rows, 2, g.nnz, g.rowptr, g.colind, g.values,
                                                  NULL, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_MATRIX, "column");
        CHECK(F == NULL, "%s: out not reset after a failed device build", name);
    }
    test_gpu_csr_free(&g);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    static const char *const specs[] = {
        "lap2d5:50x37", "lap3d7:13", "lap2d9:40", "band:3000,5", "type2:5000",
        "type3:8192,9,0.5", "randdiag:2000,9,1500", "random:1500,6", "powerlaw:1200,2,300"};
    int64_t zeros = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) run_matrix(specs[i], test_generate(specs[i]), &zeros);
    uint64_t seed = 7;
    run_matrix("square 1000, rows 300..700 empty", far_matrix(1000, 1000, 300, 700, &seed), &zeros);
    run_matrix("wide 300x1000", far_matrix(300, 1000, 0, 0, &seed), &zeros);
    run_matrix("tall 1000x300", far_matrix(1000, 300, 0, 0, &seed), &zeros);
    run_matrix("wide 1x500 (one row)", far_matrix(1, 500, 0, 0, &seed), &zeros);
    run_matrix("tall 500x1", far_matrix(500, 1, 0, 0, &seed), &zeros);
    run_matrix("1x1", far_matrix(1, 1, 0, 0, &seed), &zeros);
    run_matrix("all rows empty 200x150", far_matrix(200, 150, 0, 200, &seed), &zeros);
    test_coo none[] = {{.rows = 77, .cols = 91}, {.rows = 0, .cols = 5}, {0}, {.rows = 77, .cols = 91}};
    run_matrix("no nonzeros 77x91", test_coo_matrix(&none[0]), &zeros);
    run_matrix("no rows 0x5", test_coo_matrix(&none[1]), &zeros);
    run_matrix("0x0", test_coo_matrix(&none[2]), &zeros);
    CHECK(zeros > 0, "no explicit zero reached the comparison (the zero lists went untested)");
    bad_arguments(test_generate("lap2d5:30"));
    public_entry("lap2d5:50x37", test_generate("lap2d5:50x37"));
    public_entry("type3:8192,9,0.5", test_generate("type3:8192,9,0.5"));
    public_entry("wide 300x1000", far_matrix(300, 1000, 0, 0, &seed));
    public_entry("no nonzeros 77x91", test_coo_matrix(&none[3]));
    return TEST_END();
}
#endif
