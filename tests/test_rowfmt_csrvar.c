/* test_rowfmt_csrvar.c -- the CSR variants pcsr (patent 001), rgcsr, cmrs
 * and scsr (survey 003 sections 2.2.2, 2.3.1, 2.3.3.1): round trip,
 * invariants, SpMV (rowfmt_check.h), worked examples with exact arrays,
 * storage formulas 2.25, 2.35, 2.47 as predicted bytes. */
#include "rowfmt_check.h"
#include "formats/row_extra.h"

#define P ADIA_ROW_PAD

static void test_all(void)
{
    static const struct { const char *name, *params; } cases[] = {
        {"pcsr", NULL},  {"pcsr", "pad=1"},     {"pcsr", "pad=3"},    {"rgcsr", NULL},
        {"rgcsr", "group=3"}, {"rgcsr", "group=1"}, {"cmrs", NULL},   {"cmrs", "strip=1"},
        {"cmrs", "strip=7"},  {"scsr", NULL},    {"scsr", "streams=1"}, {"scsr", "streams=5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        adia_format_params p = rf_params(cases[i].params);
        rf_check_format(cases[i].name, cases[i].params ? &p : NULL);
    }
}

/* pad = 4 on the 5x5 sample (worked by hand): every row takes 4 slots,
 * padding repeats the row's last column with value 0. */
static void test_pcsr_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format_params p = rf_params("pad=4");
    adia_format *F = rf_build(A, "pcsr", &p);
    const adia_pcsr *C = F->impl;
    const int64_t ptr[] = {0, 4, 8, 12, 16, 20};
    const int32_t col[] = {1, 3, 3, 3, 0, 2, 4, 4, 1, 1, 1, 1, 4, 4, 4, 4, 0, 3, 3, 3};
    const double val[] = {4, 7, 0, 0, 2, 3, 6, 0, 5, 0, 0, 0, 2, 0, 0, 0, 1, 6, 0, 0};
    CHECK(rf_eq_i64(C->csr.rowptr, ptr, 6) && rf_eq_i32(C->csr.colind, col, 20) &&
              rf_eq_f64(C->csr.values, val, 20), "pcsr arrays, pad 4");
    CHECK(adia_format_padded_zeros(F) == 11, "pcsr padding");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Eqs. 2.21-2.24 use the sample with a sixth row (4 in column 2; the
 * row lengths of eq. 2.23 say so) and groups of 3: the arrays match the
 * survey exactly (its "*" are ADIA_ROW_PAD; eq. 2.24 lists group starts
 * [0 9], we also keep the end, 15). */
static void test_rgcsr_example(void)
{
    double a[30];
    memcpy(a, rf_sample5, sizeof rf_sample5);
    memset(a + 25, 0, 5 * sizeof *a);
    a[27] = 4;
    adia_matrix *A = test_dense_matrix(6, 5, a);
    adia_format_params p = rf_params("group=3");
    adia_format *F = rf_build(A, "rgcsr", &p);
    const adia_rgcsr *R = F->impl;
    const int64_t gp[] = {0, 9, 15};
    const int32_t len[] = {2, 3, 1, 1, 2, 1};
    const int32_t col[] = {1, 0, 1, 3, 2, P, P, 4, P, 4, 0, 2, P, 3, P};
    const double val[] = {4, 2, 5, 7, 3, 0, 0, 6, 0, 2, 1, 4, 0, 6, 0};
    CHECK(R->ngroups == 2 && rf_eq_i64(R->group_ptr, gp, 3) && rf_eq_i32(R->rowlen, len, 6) &&
              rf_eq_i32(R->colind, col, 15) && rf_eq_f64(R->values, val, 15),
          "rgcsr arrays of eqs. 2.21-2.24");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Eqs. 2.30-2.34 with strips of 2 rows.  The survey's column array (2.32)
 * lists 10 of the 11 entries (one 3 of rows 3-4 is lost) and its strip
 * pointers [0 5 9 2] end in a typo for 11. */
static void test_cmrs_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample_cmrs);
    adia_format_params p = rf_params("strip=2");
    adia_format *F = rf_build(A, "cmrs", &p);
    const adia_cmrs *M = F->impl;
    const int64_t sp[] = {0, 5, 9, 11};
    const int32_t col[] = {0, 1, 3, 1, 2, 1, 2, 3, 3, 3, 4};
    const int32_t ris[] = {0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0};
    const double val[] = {4, 5, 1, 7, 8, 9, 2, 3, 6, 10, 11};
    CHECK(M->nstrips == 3 && rf_eq_i64(M->strip_ptr, sp, 4) && rf_eq_i32(M->colind, col, 11) &&
              rf_eq_i32(M->row_in_strip, ris, 11) && rf_eq_f64(M->values, val, 11),
          "cmrs arrays of eqs. 2.31-2.34");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Eqs. 2.38-2.46, 4 streams: exactly the survey's arrays (R, G, B, P one
 * after the other; "*" = ADIA_ROW_PAD). */
static void test_scsr_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample_cmrs);
    adia_format *F = rf_build(A, "scsr", NULL);
    const adia_scsr *T = F->impl;
    const int64_t ptr[] = {0, 3, 5};
    const int32_t col[] = {0, 1, 3, 3, 4, 1, 2, 2, P, P, 1, 2, 3, P, P, 3, 3, 3, P, P};
    const double val[] = {4, 5, 1, 10, 11, 7, 8, 0, 0, 0, 9, 2, 3, 0, 0, 6, 0, 0, 0, 0};
    CHECK(T->S == 4 && T->nbrows == 2 && rf_eq_i64(T->ptr, ptr, 3) &&
              rf_eq_i32(T->colind, col, 20) && rf_eq_f64(T->values, val, 20),
          "scsr arrays of eqs. 2.38-2.46");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

static int64_t rlen(const adia_matrix *A, int64_t i)
{
    return i < A->csr.rows ? A->csr.rowptr[i + 1] - A->csr.rowptr[i] : 0;
}

/* Sum over groups of n consecutive rows of (longest row) * (rows in the
 * group when full_groups is 0, else n). */
static int64_t grouped_slots(const adia_matrix *A, int64_t n, int full_groups)
{
    int64_t sum = 0, m = A->csr.rows;
    for (int64_t g = 0; g < m; g += n) {
        int64_t w = 0, rows = m - g < n ? m - g : n;
        for (int64_t i = g; i < g + rows; i++) if (rlen(A, i) > w) w = rlen(A, i);
        sum += w * (full_groups ? n : rows);
    }
    return sum;
}

static void expect_bytes(const adia_matrix *A, const char *name, const char *text,
                         adia_value_type vt, int64_t want, const char *formula)
{
    adia_format_params p = rf_params(text);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, name, &p, vt, &F));
    CHECK(adia_format_storage_bytes(F) == want, "%s %s: %lld bytes, %s predicts %lld", name,
          text, (long long)adia_format_storage_bytes(F), formula, (long long)want);
    adia_format_destroy(F);
}

static void test_storage_formulas(void)
{
    adia_matrix *A = rf_long_row_matrix(203, 150, 17);
    int64_t m = 203, nnz = A->csr.nnz;
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        int64_t vs = (int64_t)adia_value_size(vt), padded = 0;
        for (int64_t i = 0; i < m; i++) padded += (rlen(A, i) + 15) / 16 * 16;
        expect_bytes(A, "pcsr", "pad=16", vt, (m + 1) * 8 + padded * (4 + vs), "CSR on padded rows");
        /* eq. 2.25: 2X + m + Ng, plus the end pointer; X of eq. 2.26 with
         * the last, short group counted by its real rows */
        expect_bytes(A, "rgcsr", "group=8", vt,
                     (26 + 1) * 8 + m * 4 + grouped_slots(A, 8, 0) * (4 + vs), "eq. 2.25");
        expect_bytes(A, "cmrs", "strip=4", vt, (51 + 1) * 8 + nnz * (8 + vs), "eq. 2.35");
        /* eq. 2.47: 2*(N_S*max NZS) + S_r + 1, max NZS = sum of block-row widths */
        expect_bytes(A, "scsr", "streams=4", vt,
                     (51 + 1) * 8 + grouped_slots(A, 4, 1) * (4 + vs), "eq. 2.47");
    }
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_all();
    test_pcsr_example();
    test_rgcsr_example();
    test_cmrs_example();
    test_scsr_example();
    test_storage_formulas();
    return TEST_END();
}
