/* test_rowfmt_block.c -- the block formats: bcsr (survey 003 eqs.
 * 2.16-2.19), its streamed form sbcsr (eqs. 2.48-2.55) and the patent's
 * aligned sparse blocks pbcsr (seed 001): round trip,
 * invariants, SpMV (rowfmt_check.h), the worked example's arrays, the
 * storage formula as predicted bytes, block sizes larger than the matrix. */
#include "rowfmt_check.h"
#include "formats/row_extra.h"

static void test_all(void)
{
    static const struct { const char *name, *params; int32_t r, c; } cases[] = {
        {"bcsr", NULL, 0, 0},  {"bcsr", "r=3,c=2", 3, 2}, {"bcsr", "r=1,c=1", 1, 1},
        {"bcsr", "r=4,c=7", 4, 7}, {"bcsr", "r=1,c=5", 1, 5}, {"sbcsr", NULL, 0, 0},
        {"sbcsr", "r=2,c=3", 2, 3}, {"sbcsr", "r=5,c=1", 5, 1}, {"pbcsr", NULL, 0, 0},
        {"pbcsr", "r=2,c=4,pad=2", 2, 4}, {"pbcsr", "r=3,c=3,pad=1", 3, 3},
        {"pbcsr", "r=1,c=16", 1, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        adia_format_params p = rf_params(cases[i].params);
        rf_check_format_min(cases[i].name, cases[i].params ? &p : NULL, cases[i].r, cases[i].c);
    }
}

/* 2x2 blocks of the 5x5 sample.  The survey's eqs. 2.17-2.18
 * (Bcolumn-indices [0 1 0 2 0], Row-ptr [0 2 4 5]) do not fit its own
 * matrix (their figure 2.16 is lost): block row 0 (rows 0-1) touches block
 * columns 0, 1, 2 (row 1 has columns 0, 2, 4), block row 2 (row 4) touches
 * 0 and 1 (columns 0, 3).  The right arrays are below, worked by hand. */
static void test_bcsr_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = rf_build(A, "bcsr", NULL);
    const adia_bcsr *B = F->impl;
    const int64_t ptr[] = {0, 3, 5, 7};
    const int32_t bcol[] = {0, 1, 2, 0, 2, 0, 1};
    const double val[] = {0, 4, 2, 0, 0, 7, 3, 0, 0, 0, 6, 0, 0, 5, 0, 0,
                          0, 0, 2, 0, 1, 0, 0, 0, 0, 6, 0, 0};
    CHECK(B->r == 2 && B->c == 2 && B->brows == 3 && B->nblocks == 7 &&
              rf_eq_i64(B->browptr, ptr, 4) && rf_eq_i32(B->bcolind, bcol, 7) &&
              rf_eq_f64(B->values, val, 28), "bcsr 2x2 arrays of the sample");
    CHECK(adia_format_padded_zeros(F) == 28 - 9, "bcsr padding %lld",
          (long long)adia_format_padded_zeros(F));
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Eqs. 2.49-2.54: 4x4 blocks of the CMRS sample (eq. 2.30).  Ind and Ptr
 * match the survey; the third stream is its eq. 2.51 exactly. */
static void test_sbcsr_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample_cmrs);
    adia_format *F = rf_build(A, "sbcsr", NULL);
    const adia_bcsr *B = &((const adia_sbcsr *)F->impl)->b;
    const int64_t ptr[] = {0, 1, 3};
    const int32_t ind[] = {0, 0, 1};
    const double val[] = {4, 5, 0, 1, 0, 0, 0, 10, 11, 0, 0, 0,   /* stream 0 */
                          0, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0,    /* stream 1 */
                          0, 9, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0,    /* stream 2 = eq. 2.51 */
                          0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0};   /* stream 3 */
    CHECK(B->r == 4 && B->c == 4 && B->nblocks == 3 && rf_eq_i64(B->browptr, ptr, 3) &&
              rf_eq_i32(B->bcolind, ind, 3) && rf_eq_f64(B->values, val, 48),
          "sbcsr arrays of eqs. 2.51-2.54");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* The patent's blocks (pbcsr) on the sample, 2x2 blocks, rows padded to
 * 2 (worked by hand): bcsr's block structure, each block row's entries
 * (column inside the block) padded with its last column and 0. */
static void test_pbcsr_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format_params p = rf_params("r=2,c=2,pad=2");
    adia_format *F = rf_build(A, "pbcsr", &p);
    const adia_pbcsr *P = F->impl;
    const int64_t bptr[] = {0, 3, 5, 7};
    const int32_t bcol[] = {0, 1, 2, 0, 2, 0, 1};
    const int64_t off[] = {0, 2, 4, 6, 8, 8, 10, 12, 12, 12, 14, 16, 16, 18, 18};
    const int32_t col[] = {1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1};
    const double val[] = {4, 0, 2, 0, 7, 0, 3, 0, 6, 0, 5, 0, 2, 0, 1, 0, 6, 0};
    CHECK(rf_eq_i64(P->blocks.browptr, bptr, 4) && rf_eq_i32(P->blocks.bcolind, bcol, 7) &&
              rf_eq_i64(P->rowoff, off, 15) && rf_eq_i32(P->colind, col, 18) &&
              rf_eq_f64(P->values, val, 18), "pbcsr arrays of the sample");
    CHECK(adia_format_storage_bytes(F) == 4 * 8 + 7 * 4 + 15 * 8 + 18 * 12, "pbcsr bytes %lld",
          (long long)adia_format_storage_bytes(F));
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Eq. 2.19 says N_nzb*2r + N_nzb + m/r + 1 elements: a block holds r*c
 * values (not 2r) and m/r rounds up, so the bytes are
 * N_nzb*r*c*value + N_nzb*4 + (ceil(m/r) + 1)*8.  Eq. 2.55 (streamed) says
 * N_s*(N_nzb*b_size) + 2*N_nzb: the same values (N_s = r streams of
 * b_size = c), N_nzb block columns, but ceil(m/r) + 1 block-row pointers. */
static void test_bcsr_storage(void)
{
    adia_matrix *A = rf_long_row_matrix(203, 150, 17);
    static const int32_t sizes[][2] = {{2, 2}, {3, 5}, {1, 1}, {8, 4}};
    for (size_t t = 0; t < 8; t++) {
        int32_t r = sizes[t % 4][0], c = sizes[t % 4][1];
        adia_value_type vt = t < 4 ? ADIA_DOUBLE : ADIA_FLOAT;
        char text[32];
        snprintf(text, sizeof text, "r=%d,c=%d", (int)r, (int)c);
        adia_format_params p = rf_params(text);
        int64_t nb = rf_count_blocks(A, r, c), vs = (int64_t)adia_value_size(vt);
        int64_t want = nb * r * c * vs + nb * 4 + ((203 + r - 1) / r + 1) * 8;
        for (int s = 0; s < 2; s++) {   /* bcsr and its streamed order: same bytes */
            const char *name = s ? "sbcsr" : "bcsr";
            adia_format *F = NULL;
            CHECK_OK(adia_format_build(A, name, &p, vt, &F));
            CHECK(adia_format_storage_bytes(F) == want, "%s %s: %lld bytes, eq. %s (fixed) %lld",
                  name, text, (long long)adia_format_storage_bytes(F), s ? "2.55" : "2.19",
                  (long long)want);
            CHECK(adia_format_padded_zeros(F) == nb * r * c - A->csr.nnz, "%s %s padding", name, text);
            adia_format_destroy(F);
        }
    }
    adia_matrix_destroy(A);
}

/* pbcsr bytes: bcsr's indices, one offset per block row of each block,
 * and per (row, block column) its entries rounded up to pad. */
static void test_pbcsr_storage(void)
{
    adia_matrix *A = rf_long_row_matrix(203, 150, 17);
    const int32_t r = 3, c = 8, pad = 4, bcols = (150 + c - 1) / c;
    int64_t *cnt = calloc(bcols, sizeof *cnt), slots = 0, nb = rf_count_blocks(A, r, c);
    for (int32_t i = 0; i < 203; i++) {
        for (int64_t k = A->csr.rowptr[i]; k < A->csr.rowptr[i + 1]; k++) cnt[A->csr.colind[k] / c]++;
        for (int32_t j = 0; j < bcols; j++) { slots += (cnt[j] + pad - 1) / pad * pad; cnt[j] = 0; }
    }
    free(cnt);
    adia_format_params p = rf_params("r=3,c=8,pad=4");
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "pbcsr", &p, ADIA_FLOAT, &F));
    int64_t want = (68 + 1) * 8 + nb * 4 + (nb * r + 1) * 8 + slots * (4 + 4);
    CHECK(adia_format_storage_bytes(F) == want, "pbcsr: %lld bytes, predicted %lld",
          (long long)adia_format_storage_bytes(F), (long long)want);
    CHECK(adia_format_padded_zeros(F) == slots - A->csr.nnz, "pbcsr padding");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

static void test_bad_block(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = NULL;
    adia_format_params p = rf_params("r=6");
    CHECK_ERR(adia_format_build(A, "bcsr", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "bcsr: block size r=6 is larger than the matrix's 5 rows");
    p = rf_params("r=2,c=9");
    CHECK_ERR(adia_format_build(A, "bcsr", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "bcsr: block size c=9 is larger than the matrix's 5 columns");
    CHECK(F == NULL, "no format on error");
    p = rf_params("r=2,c=3,pad=2");
    CHECK_ERR(adia_format_build(A, "pbcsr", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "pbcsr: block width c=3 is not a multiple of pad=2");
    p = rf_params("r=4,c=6");
    CHECK_ERR(adia_format_build(A, "sbcsr", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "sbcsr: block size c=6 is larger than the matrix's 5 columns");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_all();
    test_bcsr_example();
    test_sbcsr_example();
    test_pbcsr_example();
    test_pbcsr_storage();
    test_bcsr_storage();
    test_bad_block();
    return TEST_END();
}
