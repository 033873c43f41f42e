/* test_rowfmt_basic.c -- the basic row formats coo, ell, sell, hyb, csc:
 * round trip, invariants and SpMV on awkward and real matrices
 * (rowfmt_check.h), the survey's worked examples (003, eqs. 2.1-2.14 and
 * 2.56-2.59) with their exact arrays, the storage formulas (eqs. 2.5, 2.10,
 * 2.15, 2.60) as predicted bytes, and malformed parameters. */
#include "rowfmt_check.h"
#include "formats/row_formats.h"

#define P ADIA_ROW_PAD

static void test_all_formats(void)
{
    static const struct { const char *name, *params; } cases[] = {
        {"coo", NULL},  {"ell", NULL}, {"sell", NULL}, {"sell", "C=4,sigma=8"},
        {"sell", "C=3,sigma=1"}, {"sell", "C=1"},
        {"sell", "C=300,sigma=300"},   /* slices wider than the kernel's 256 accumulators */
        {"hyb", NULL}, {"hyb", "width=2"},
        {"csc", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        adia_format_params p = rf_params(cases[i].params);
        rf_check_format(cases[i].name, cases[i].params ? &p : NULL);
    }
}

/* eqs. 2.6-2.9: the sample's COO arrays. */
static void test_coo_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = rf_build(A, "coo", NULL);
    const adia_coo *C = F->impl;
    const int32_t row[] = {0, 0, 1, 1, 1, 2, 3, 4, 4}, col[] = {1, 3, 0, 2, 4, 1, 4, 0, 3};
    const double val[] = {4, 7, 2, 3, 6, 5, 2, 1, 6};
    CHECK(C->nnz == 9 && rf_eq_i32(C->rowind, row, 9) && rf_eq_i32(C->colind, col, 9) &&
              rf_eq_f64(C->values, val, 9), "coo arrays of eqs. 2.7-2.9");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* eq. 2.4, stored column-major: slot k of row i at k*5 + i. */
static void test_ell_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = rf_build(A, "ell", NULL);
    const adia_ell *E = F->impl;
    const int32_t col[] = {1, 0, 1, 4, 0, 3, 2, P, P, 3, P, 4, P, P, P};
    const double val[] = {4, 2, 5, 2, 1, 7, 3, 0, 0, 6, 0, 6, 0, 0, 0};
    CHECK(E->width == 3 && rf_eq_i32(E->colind, col, 15) && rf_eq_f64(E->values, val, 15),
          "ell arrays of eq. 2.4 (width %d)", (int)E->width);
    CHECK(adia_format_padded_zeros(F) == 6, "ell padding %lld", (long long)adia_format_padded_zeros(F));
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

static void check_sell(const adia_sell *S, const int64_t *ptr, const int32_t *perm,
                       const int32_t *col, const double *val, const char *what)
{
    CHECK(S->nslices == 3 && rf_eq_i64(S->slice_ptr, ptr, 4) && rf_eq_i32(S->perm, perm, 6) &&
              rf_eq_i32(S->colind, col, 14) && rf_eq_f64(S->values, val, 14),
          "sell arrays: %s", what);
}

/* eqs. 2.56-2.59 (C = 2).  The survey's values/columns are SELL-2 without
 * sorting (sigma = 1); its slice pointers [0 6 9 15] do not match its own
 * 14 values: slices of widths 3, 1, 3 times C = 2 give [0 6 8 14]. */
static void test_sell_example(void)
{
    adia_matrix *A = test_dense_matrix(6, 5, rf_sample6);
    adia_format_params p = rf_params("C=2,sigma=1");
    adia_format *F = rf_build(A, "sell", &p);
    const int64_t ptr[] = {0, 6, 8, 14};
    const int32_t id[] = {0, 1, 2, 3, 4, 5};
    const int32_t col[] = {1, 0, 3, 2, P, 4, 1, 4, 0, 0, 3, 1, P, 4};
    const double val[] = {4, 2, 7, 3, 0, 6, 5, 2, 1, 2, 6, 4, 0, 5};
    check_sell(F->impl, ptr, id, col, val, "eqs. 2.57-2.59, sigma=1");
    adia_format_destroy(F);
    /* sigma = 4 as the text describes: rows 0-3 sorted by length -> 1 0 2 3,
     * rows 4-5 -> 5 4 (worked by hand). */
    p = rf_params("C=2,sigma=4");
    F = rf_build(A, "sell", &p);
    const int32_t perm[] = {1, 0, 2, 3, 5, 4};
    const int32_t col4[] = {0, 1, 2, 3, 4, P, 1, 4, 0, 0, 1, 3, 4, P};
    const double val4[] = {2, 4, 3, 7, 6, 0, 5, 2, 2, 1, 4, 6, 5, 0};
    check_sell(F->impl, ptr, perm, col4, val4, "sigma=4");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* hyb with width 2 on the sample: row 1's third entry (col 4, 6) is COO. */
static void test_hyb_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format_params p = rf_params("width=2");
    adia_format *F = rf_build(A, "hyb", &p);
    const adia_hyb *H = F->impl;
    CHECK(H->ell.width == 2 && H->coo.nnz == 1 && H->coo.rowind[0] == 1 &&
              H->coo.colind[0] == 4 && ((double *)H->coo.values)[0] == 6,
          "hyb split: width %d, coo nnz %lld", (int)H->ell.width, (long long)H->coo.nnz);
    adia_format_destroy(F);
    F = rf_build(A, "hyb", NULL);   /* 5 rows < 4096: the rule gives width 0 */
    H = F->impl;
    CHECK(H->ell.width == 0 && H->coo.nnz == 9, "hyb rule on 5 rows: width %d", (int)H->ell.width);
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* CSC = CSR of the transpose of the sample. */
static void test_csc_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = rf_build(A, "csc", NULL);
    const adia_csc *S = F->impl;
    const int64_t ptr[] = {0, 2, 4, 5, 7, 9};
    const int32_t row[] = {1, 4, 0, 2, 1, 0, 4, 1, 3};
    const double val[] = {2, 1, 4, 5, 3, 7, 6, 6, 2};
    CHECK(rf_eq_i64(S->colptr, ptr, 6) && rf_eq_i32(S->rowind, row, 9) &&
              rf_eq_f64(S->values, val, 9), "csc arrays");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Row lengths of A and the longest. */
static int64_t longest_row(const adia_matrix *A)
{
    int64_t m = 0;
    for (int32_t i = 0; i < A->csr.rows; i++)
        if (A->csr.rowptr[i + 1] - A->csr.rowptr[i] > m) m = A->csr.rowptr[i + 1] - A->csr.rowptr[i];
    return m;
}

/* Sum over slices of C consecutive lengths (sorted decreasing when sorted)
 * of the longest: sum_i N_nzv(i) of eq. 2.60. */
static int64_t slice_width_sum(const adia_matrix *A, int32_t C, int sorted)
{
    int32_t m = A->csr.rows;
    int64_t *len = malloc(((size_t)m + 1) * sizeof *len), sum = 0;
    for (int32_t i = 0; i < m; i++) len[i] = A->csr.rowptr[i + 1] - A->csr.rowptr[i];
    for (int32_t i = 0; sorted && i < m; i++)   /* insertion sort, decreasing */
        for (int32_t j = i; j > 0 && len[j] > len[j - 1]; j--) {
            int64_t t = len[j]; len[j] = len[j - 1]; len[j - 1] = t;
        }
    for (int32_t s = 0; s < m; s += C) {
        int64_t w = 0;
        for (int32_t i = s; i < m && i < s + C; i++) if (len[i] > w) w = len[i];
        sum += w;
    }
    free(len);
    return sum;
}

static void expect_bytes(const adia_matrix *A, const char *name, const char *ptext,
                         adia_value_type vt, int64_t want, const char *formula)
{
    adia_format_params p = rf_params(ptext);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, name, &p, vt, &F));
    int64_t got = adia_format_storage_bytes(F);
    CHECK(got == want, "%s %s (%s): storage %lld bytes, %s predicts %lld", name,
          ptext ? ptext : "", vt == ADIA_FLOAT ? "float" : "double", (long long)got, formula,
          (long long)want);
    adia_format_destroy(F);
}

/* The survey's formulas count array elements; with 4-byte indices, 8-byte
 * pointers and value size vs they become the byte counts below. */
static void test_storage_formulas(void)
{
    adia_matrix *A = rf_long_row_matrix(203, 150, 17);
    int64_t m = A->csr.rows, n = A->csr.cols, nnz = A->csr.nnz, w = longest_row(A);
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        int64_t vs = (int64_t)adia_value_size(vt);
        expect_bytes(A, "coo", NULL, vt, nnz * (4 + 4 + vs), "eq. 2.10 (3 x NZV)");
        expect_bytes(A, "ell", NULL, vt, w * m * (4 + vs), "eq. 2.5 (2 N_mnzr m)");
        expect_bytes(A, "csc", NULL, vt, (n + 1) * 8 + nnz * (4 + vs), "eq. 2.15 (2 NZV + n + 1)");
        int64_t ns = (m + 3) / 4;   /* eq. 2.60 with its 4 read as 2C, plus widths and perm */
        expect_bytes(A, "sell", "C=4,sigma=1", vt,
                     (ns + 1) * 8 + ns * 4 + m * 4 + 4 * slice_width_sum(A, 4, 0) * (4 + vs),
                     "eq. 2.60, unsorted");
        expect_bytes(A, "sell", "C=4,sigma=204", vt,
                     (ns + 1) * 8 + ns * 4 + m * 4 + 4 * slice_width_sum(A, 4, 1) * (4 + vs),
                     "eq. 2.60, one sorting window");
        int64_t spill = 0;   /* hyb width 3: entries beyond 3 per row go to COO */
        for (int32_t i = 0; i < m; i++) {
            int64_t len = A->csr.rowptr[i + 1] - A->csr.rowptr[i];
            if (len > 3) spill += len - 3;
        }
        expect_bytes(A, "hyb", "width=3", vt, 3 * m * (4 + vs) + spill * (8 + vs), "ELL + COO");
        expect_bytes(A, "hyb", NULL, vt, nnz * (8 + vs), "all COO below 4096 rows");
    }
    adia_matrix_destroy(A);
}

/* Bell-Garland's rule on 6000 rows: 4500 of length 3, 1500 of length 5
 * -> rows with >= 3 entries: 6000 >= max(4096, 2000); with >= 4: 1500 -> 3. */
static void test_hyb_rule(void)
{
    int32_t rows = 6000, cols = 50;
    int64_t cap = (int64_t)rows * 5, n = 0;
    int32_t *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    for (int32_t i = 0; i < rows; i++)
        for (int32_t k = 0; k < (i % 4 == 0 ? 5 : 3); k++) {
            r[n] = i; c[n] = (i + 7 * k) % cols; v[n++] = 1.0 + k;
        }
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_coo(rows, cols, n, r, c, v, ADIA_DOUBLE, &A));
    adia_format *F = rf_build(A, "hyb", NULL);
    const adia_hyb *H = F->impl;
    CHECK(H->ell.width == 3 && H->coo.nnz == 1500 * 2, "hyb rule: width %d, coo %lld",
          (int)H->ell.width, (long long)H->coo.nnz);
    adia_format_destroy(F);
    rf_check_matrix("hyb", NULL, A, "hyb rule matrix");
    adia_matrix_destroy(A);
    free(r); free(c); free(v);
}

static void test_bad_params(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = NULL;
    adia_format_params p = rf_params("width=1");
    CHECK_ERR(adia_format_build(A, "ell", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "ell: row 0 has 2 entries, more than width=1");
    CHECK(F == NULL, "no format on error");
    p = rf_params("width=2");
    CHECK_ERR(adia_format_build(A, "ell", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "row 1 has 3 entries, more than width=2 (use width>=3");
    p = rf_params("C=4,sigma=6");
    CHECK_ERR(adia_format_build(A, "sell", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "sell: sigma=6 is not a multiple of C=4");
    p = rf_params("C=3");   /* default sigma: least multiple of 3 >= 256 */
    F = rf_build(A, "sell", &p);
    CHECK(F && ((adia_sell *)F->impl)->sigma == 258, "default sigma for C=3");
    adia_format_destroy(F);
    /* C = 0 (only through the struct) means "default" by the params contract
     * in adia.h (<= 0: the format's default): C = 32, sigma = 256. */
    adia_format_params_default(&p);
    p.sell_c = 0;
    p.sell_sigma = -5;
    F = rf_build(A, "sell", &p);
    CHECK(F && ((adia_sell *)F->impl)->C == 32 && ((adia_sell *)F->impl)->sigma == 256,
          "C=0 gives the default");
    adia_format_destroy(F);
    p.sell_sigma = 48;   /* 48 is not a multiple of the default C = 32 */
    CHECK_ERR(adia_format_build(A, "sell", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "sigma=48 is not a multiple of C=32");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_all_formats();
    test_coo_example();
    test_ell_example();
    test_sell_example();
    test_hyb_example();
    test_csc_example();
    test_storage_formulas();
    test_hyb_rule();
    test_bad_params();
    return TEST_END();
}
