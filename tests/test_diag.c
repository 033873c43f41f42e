/* test_diag.c -- the five diagonal formats (dia, hdi, brcsd1, brcsd2, crsd)
 * on structured, random and edge-case matrices: invariants, exact round trip
 * to CSR, CPU SpMV against the reference in double and float.  Exact arrays
 * of hand-made examples are in test_diag_exact.c, the shared real matrices
 * in test_diag_shared.c. */
#include "testutil.h"
#include "formats/diag_core.h"

#include <math.h>
#include <string.h>

/* The diagonal core's formats, from the registry (filled in main). */
static const char *formats[64];
static int n_formats;
static void find_formats(void)
{
    for (int i = 0; i < adia_format_count() && n_formats < 64; i++)
        if (adia_format_is_diagonal(adia_format_name_at(i))) formats[n_formats++] = adia_format_name_at(i);
}

/* Build A in every format, both precisions, with params text; check
 * invariants, the round trip and SpMV with several alpha/beta. */
static void check_all(const char *what, const adia_matrix *A, const char *params)
{
    adia_format_params p;
    adia_format_params_default(&p);
    if (params) CHECK_OK(adia_format_params_parse(&p, params));
    adia_matrix *Af = test_rounded(A, ADIA_FLOAT);
    for (int f = 0; f < n_formats; f++)
        for (int vt = 0; vt < 2; vt++) {
            adia_format *F = NULL;
            adia_status s = adia_format_build(A, formats[f], &p, (adia_value_type)vt, &F);
            CHECK(s == ADIA_OK, "%s %s %s: build: %s", what, formats[f], params ? params : "", adia_last_error());
            if (s != ADIA_OK) continue;
            const adia_diag *D = adia__format_diag(F);
            CHECK(D && adia__diag_check(D) == ADIA_OK, "%s %s: check: %s", what, formats[f], adia_last_error());
            CHECK(adia_format_padded_zeros(F) >= 0, "%s %s: padded %lld", what, formats[f],
                  (long long)adia_format_padded_zeros(F));
            adia_matrix *B = NULL;
            CHECK_OK(adia_format_to_matrix(F, &B));
            CHECK(B && adia_matrix_equal(B, vt ? Af : A), "%s %s %s: round trip differs", what,
                  formats[f], vt ? "float" : "double");
            adia_matrix_destroy(B);
            double tol = vt ? 2e-5 : 1e-13;
            const double ab[][2] = {{1.0, 0.0}, {1.5, -0.5}, {-2.0, 1.0}};
            for (int k = 0; k < 3; k++) {
                double e = test_format_spmv_error(F, A, 7 + k, ab[k][0], ab[k][1]);
                CHECK(e <= tol, "%s %s %s alpha %g beta %g: error %g", what, formats[f],
                      vt ? "float" : "double", ab[k][0], ab[k][1], e);
            }
            adia_format_destroy(F);
        }
    adia_matrix_destroy(Af);
}

static void check_both(const char *what, adia_matrix *A)
{
    CHECK(A != NULL, "%s: matrix built", what);
    if (!A) return;
    check_all(what, A, NULL);
    check_all(what, A, "B=4,eta=4,hack=32,seg=2");
    check_all(what, A, "B=32,eta=64,hack=64,seg=8");
    adia_matrix_destroy(A);
}


/* Diagonals `offs` on rows x cols, entry kept where keep(r, o) (NULL: all). */
static adia_matrix *diagonals(int32_t rows, int32_t cols, const int32_t *offs, int K,
                              int (*keep)(int64_t r, int32_t o))
{
    test_coo m = {.rows = rows, .cols = cols};
    for (int k = 0; k < K; k++)
        for (int64_t r = 0; r < rows; r++) {
            int64_t c = r + offs[k];
            if (c >= 0 && c < cols && (!keep || keep(r, offs[k])))
                test_coo_add(&m, r, c, 1.0 + 0.001 * (double)(r % 97) + offs[k] * 0.01);
        }
    return test_coo_matrix(&m);
}

/* Long zero sections: diagonal o is empty on rows [300, 900) unless o == 0. */
static int broken(int64_t r, int32_t o) { return o == 0 || r < 300 || r >= 900; }
/* 2D 5-point stencil on a 30x30 grid: neighbours across the grid edge absent. */
static int stencil(int64_t r, int32_t o) { return !((o == 1 && r % 30 == 29) || (o == -1 && r % 30 == 0)); }

static void test_structured(void)
{
    int32_t band[] = {-3, -2, -1, 0, 1, 2, 3};
    check_both("band 1000", diagonals(1000, 1000, band, 7, NULL));
    int32_t lap[] = {-30, -1, 0, 1, 30};
    check_both("5-point 30x30", diagonals(900, 900, lap, 5, stencil));
    int32_t far[] = {-700, -1, 0, 1, 700};
    check_both("type II far diagonals", diagonals(1403, 1403, far, 5, NULL));
    int32_t br[] = {-40, -2, 0, 5, 300};
    adia_matrix *A = diagonals(1200, 1200, br, 5, broken);
    test_coo m = {.rows = 1200, .cols = 1200};   /* plus scatter points */
    adia_csr_view v;
    adia_matrix_csr(A, &v);
    for (int32_t r = 0; r < v.rows; r++)
        for (int64_t j = v.rowptr[r]; j < v.rowptr[r + 1]; j++) test_coo_add(&m, r, v.colind[j], v.values[j]);
    test_coo_add(&m, 10, 1000, 2.5);
    test_coo_add(&m, 777, 3, -1.5);
    adia_matrix_destroy(A);
    check_both("type III broken + scatter", test_coo_matrix(&m));
    int32_t wide[] = {-5, 0, 7, 150};
    check_both("wide 60x200 leaving diagonals", diagonals(60, 200, wide, 4, NULL));
    int32_t tall[] = {-150, -7, 0, 5};
    check_both("tall 200x60 leaving diagonals", diagonals(200, 60, tall, 4, NULL));
    int32_t big[] = {-1, 0, 1};
    check_both("n not multiple of B (1001)", diagonals(1001, 1001, big, 3, NULL));
    check_both("B larger than n (17)", diagonals(17, 17, big, 3, NULL));
}

static void test_edges(void)
{
    check_both("random 100x100", test_random_matrix(1, 100, 100, 0.05));
    check_both("random 301x257", test_random_matrix(2, 301, 257, 0.02));
    check_both("random wide 37x401", test_random_matrix(3, 37, 401, 0.05));
    check_both("random tall 401x37", test_random_matrix(4, 401, 37, 0.05));
    check_both("one row", test_random_matrix(5, 1, 50, 0.3));
    check_both("one column", test_random_matrix(6, 50, 1, 0.3));
    double one = 4.0;
    check_both("1x1", test_dense_matrix(1, 1, &one));
    double zeros[12] = {0};
    check_both("empty 3x4", test_dense_matrix(3, 4, zeros));
    double single[25] = {0};
    single[4 * 5 + 0] = 3.0;             /* a single scatter point at (4, 0) */
    check_both("single scatter point", test_dense_matrix(5, 5, single));
    int32_t none[1];
    double nv[1];
    adia_matrix *Z = NULL;
    CHECK_OK(adia_matrix_create_coo(0, 5, 0, none, none, nv, ADIA_DOUBLE, &Z));
    check_both("0x5", Z);
    CHECK_OK(adia_matrix_create_coo(5, 0, 0, none, none, nv, ADIA_DOUBLE, &Z));
    check_both("5x0", Z);
    CHECK_OK(adia_matrix_create_coo(0, 0, 0, none, none, nv, ADIA_DOUBLE, &Z));
    check_both("0x0", Z);
    double rows_empty[36] = {0};          /* rows 1, 2, 5 empty */
    rows_empty[0] = 1; rows_empty[3 * 6 + 3] = 2; rows_empty[3 * 6 + 5] = 3; rows_empty[4 * 6 + 1] = 4;
    check_both("empty rows", test_dense_matrix(6, 6, rows_empty));
}

/* A product big enough (over 32 MiB moved) for the kernel's non-temporal
 * write of y (beta = 0), into y at an odd element offset so the stores
 * first reach their 16-byte boundary; rows not a multiple of the chunk. */
static void test_streamed_y(void)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_generate("band:1500001,3", &A));
    int32_t n = adia_matrix_rows(A);
    double *x = malloc((size_t)n * sizeof *x), *ref = malloc((size_t)n * sizeof *ref);
    double *yd = malloc(((size_t)n + 1) * sizeof *yd), *got = malloc((size_t)n * sizeof *got);
    float *xf = malloc((size_t)n * sizeof *xf), *yf = malloc(((size_t)n + 3) * sizeof *yf);
    uint64_t st = 5;
    test_rand_vector(&st, x, n);
    for (int32_t i = 0; i < n; i++) xf[i] = (float)x[i];
    for (int f = 0; f < n_formats; f++)
        for (int vt = 0; vt < 2; vt++) {
            adia_format *F = NULL;
            CHECK_OK(adia_format_build(A, formats[f], NULL, (adia_value_type)vt, &F));
            if (!F) continue;
            for (int32_t i = 0; i < n; i++) ref[i] = vt ? (double)xf[i] : x[i];
            adia_matrix *R = vt ? test_rounded(A, ADIA_FLOAT) : NULL;
            double *xr = malloc((size_t)n * sizeof *xr);
            memcpy(xr, ref, (size_t)n * sizeof *xr);
            CHECK_OK(adia_matrix_spmv(R ? R : A, -1.5, xr, 0.0, ref));
            CHECK_OK(adia_format_spmv(F, -1.5, vt ? (void *)xf : (void *)x, 0.0,
                                      vt ? (void *)(yf + 1) : (void *)(yd + 1)));
            for (int32_t i = 0; i < n; i++) got[i] = vt ? (double)yf[i + 1] : yd[i + 1];
            double e = test_rel_err(got, ref, n);
            CHECK(e <= (vt ? 2e-5 : 1e-13), "streamed y %s %s: error %g", formats[f],
                  vt ? "float" : "double", e);
            free(xr);
            adia_matrix_destroy(R);
            adia_format_destroy(F);
        }
    free(x); free(ref); free(yd); free(got); free(xf); free(yf);
    adia_matrix_destroy(A);
}

/* Explicit zeros in the source survive the round trip (kept in a side list). */
static void test_explicit_zeros(void)
{
    int32_t r[] = {0, 0, 1, 2, 3, 3};
    int32_t c[] = {0, 1, 1, 0, 3, 1};
    double v[] = {1.0, 0.0, 2.0, 0.0, -0.0, 5.0};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_coo(4, 4, 6, r, c, v, ADIA_DOUBLE, &A));
    CHECK(adia_matrix_nnz(A) == 6, "explicit zeros stored by the master: nnz %lld",
          (long long)adia_matrix_nnz(A));
    check_both("explicit zeros", A);
}

static void test_param_errors(void)
{
    adia_matrix *A = test_random_matrix(9, 40, 40, 0.1);
    adia_format_params p;
    adia_format *F = NULL;
    adia_format_params_default(&p);
    p.hack = 48;
    CHECK_ERR(adia_format_build(A, "hdi", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG, "multiple of 32");
    CHECK(F == NULL, "no format on error");
    adia_format_params_default(&p);
    p.segment = 3;
    CHECK_ERR(adia_format_build(A, "crsd", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG, "seg=3 must be 2, 4 or 8");
    CHECK(adia__format_diag(NULL) == NULL, "no diag for NULL");
    CHECK_OK(adia_format_build(A, "csr", NULL, ADIA_DOUBLE, &F));
    CHECK(adia__format_diag(F) == NULL, "csr is not diagonal");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* The invariant check catches corrupted storage (and so can fail). */
static void test_check_detects(void)
{
    int32_t offs[] = {-2, 0, 3};
    adia_matrix *A = diagonals(40, 40, offs, 3, NULL);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "brcsd2", &(adia_format_params){.block_rows = 8}, ADIA_DOUBLE, &F));
    adia_diag *D = (adia_diag *)adia__format_diag(F);
    CHECK_OK(adia__diag_check(D));
    int32_t keep = D->offsets[1];
    D->offsets[1] = D->offsets[0];
    CHECK_ERR(adia__diag_check(D), ADIA_ERR_INVALID_MATRIX, "not ascending");
    D->offsets[1] = keep;
    D->piece_start[1]++;
    CHECK_ERR(adia__diag_check(D), ADIA_ERR_INVALID_MATRIX, "stores");
    D->piece_start[1]--;
    D->piece_group[0] = D->n_groups;
    CHECK_ERR(adia__diag_check(D), ADIA_ERR_INVALID_MATRIX, "has group");
    D->piece_group[0] = 0;
    CHECK_OK(adia__diag_check(D));
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    find_formats();
    CHECK(n_formats >= 5, "the registry lists %d diagonal formats", n_formats);
    test_structured();
    test_edges();
    test_explicit_zeros();
    test_streamed_y();
    test_param_errors();
    test_check_detects();
    return TEST_END();
}
