/* test_rowfmt_tree.c -- the quad-tree formats qcsr and mqt (survey 003
 * sections 2.2.3-2.2.4): round trip, invariants, SpMV (rowfmt_check.h),
 * both on the 5x5 sample with arrays worked by hand (the survey's figures
 * are lost), storage: eq. 2.27 (qcsr) and the bound of eq. 2.29 (mqt),
 * plus an exact bit count from the non-empty nodes counted here. */
#include "rowfmt_check.h"
#include "formats/row_extra.h"

#include <math.h>

static void test_all(void)
{
    static const char *const cases[][2] = {
        {"qcsr", NULL}, {"qcsr", "qt=1"}, {"qcsr", "qt=2"}, {"qcsr", "qt=5"}, {"mqt", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        adia_format_params p = rf_params(cases[i][1]);
        rf_check_format(cases[i][0], cases[i][1] ? &p : NULL);
    }
    adia_matrix *A = test_random_matrix(3, 1, 1, 1.0);   /* 1x1 with its entry */
    CHECK(A && A->csr.nnz == 1, "1x1 matrix");
    rf_check_matrix("mqt", NULL, A, "1x1");
    rf_check_matrix("qcsr", NULL, A, "1x1");
    adia_matrix_destroy(A);
}

/* 2x2 leaves of the sample in Z order of their tiles: (0,0) (0,1) (1,0)
 * (0,2) (1,2) (2,0) (2,1). */
static void test_qcsr_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format_params p = rf_params("qt=2");
    adia_format *F = rf_build(A, "qcsr", &p);
    const adia_qcsr *T = F->impl;
    const int32_t lr[] = {0, 0, 1, 0, 1, 2, 2}, lc[] = {0, 1, 0, 2, 2, 0, 1};
    const int64_t lp[] = {0, 2, 4, 5, 6, 7, 8, 9};
    const int32_t rp[] = {0, 1, 2, 0, 1, 2, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1};
    const int32_t col[] = {1, 0, 1, 0, 1, 0, 0, 0, 1};
    const double val[] = {4, 2, 7, 3, 5, 6, 2, 1, 6};
    CHECK(T->depth == 2 && T->nleaves == 7 && rf_eq_i32(T->leaf_row, lr, 7) &&
              rf_eq_i32(T->leaf_col, lc, 7) && rf_eq_i64(T->leaf_ptr, lp, 8) &&
              rf_eq_i32(T->leaf_rowptr, rp, 21) && rf_eq_i32(T->colind, col, 9) &&
              rf_eq_f64(T->values, val, 9), "qcsr arrays, qt 2");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

static void bits_string(const adia_mqt *M, char *s)
{
    for (int64_t b = 0; b < M->nbits; b++) s[b] = (char)('0' + (M->bits[b / 8] >> (b % 8) & 1));
    s[M->nbits] = 0;
}

/* The sample in an 8x8 square: root 1110; its NW 1110 with 2x2 children
 * 0110 0110 0100; NE 1010 with 0010 0010; SW 1100 with 1000 0100. */
static void test_mqt_example(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = rf_build(A, "mqt", NULL);
    const adia_mqt *M = F->impl;
    char s[128];
    bits_string(M, s);
    const double val[] = {4, 2, 7, 3, 5, 6, 2, 1, 6};
    CHECK(M->levels == 3 && M->nbits == 44 &&
              !strcmp(s, "1110" "1110" "0110" "0110" "0100" "1010" "0010" "0010" "1100" "1000"
                          "0100"),
          "mqt stream %s (%lld bits)", s, (long long)M->nbits);
    CHECK(rf_eq_f64(M->values, val, 9), "mqt values in Z order");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Non-empty q x q tiles of A for q = 2^l, counted independently. */
static int64_t count_tiles(const adia_matrix *A, int64_t q)
{
    return rf_count_blocks(A, (int32_t)q, (int32_t)q);
}

static void test_storage(void)
{
    adia_matrix *A = rf_long_row_matrix(203, 150, 17);
    int64_t nnz = A->csr.nnz;
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        int64_t vs = (int64_t)adia_value_size(vt);
        static const int32_t qs[] = {1, 4, 32};
        for (int u = 0; u < 3; u++) {   /* eq. 2.27 + coordinates and leaf pointers */
            char text[16];
            snprintf(text, sizeof text, "qt=%d", (int)qs[u]);
            adia_format_params p = rf_params(text);
            adia_format *F = NULL;
            CHECK_OK(adia_format_build(A, "qcsr", &p, vt, &F));
            int64_t na = count_tiles(A, qs[u]);
            int64_t want = nnz * (4 + vs) + na * (qs[u] + 1) * 4 + na * 8 + (na + 1) * 8;
            CHECK(adia_format_storage_bytes(F) == want, "qcsr %s: %lld bytes, eq. 2.27 gives %lld",
                  text, (long long)adia_format_storage_bytes(F), (long long)want);
            adia_format_destroy(F);
        }
        /* mqt: 4 bits per non-empty node of side 2, 4, ..., 256 (side 2^8 >= 203) */
        int64_t bits = 0;
        for (int l = 1; l <= 8; l++) bits += 4 * count_tiles(A, (int64_t)1 << l);
        adia_format *F = NULL;
        CHECK_OK(adia_format_build(A, "mqt", NULL, vt, &F));
        int64_t got = adia_format_storage_bytes(F);
        CHECK(got == (bits + 7) / 8 + nnz * vs, "mqt: %lld bytes, %lld bits predicted",
              (long long)got, (long long)bits);
        double bound = 4.0 * nnz * (1.0 / 3 + log((256.0 * 256.0) / nnz) / log(4.0));
        CHECK(bits <= bound, "mqt: %lld bits above eq. 2.29's bound %.0f", (long long)bits, bound);
        adia_format_destroy(F);
    }
    adia_matrix_destroy(A);
}

static void test_bad_params(void)
{
    adia_matrix *A = test_dense_matrix(5, 5, rf_sample5);
    adia_format *F = NULL;
    adia_format_params p = rf_params("qt=50000");
    CHECK_ERR(adia_format_build(A, "qcsr", &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
              "qcsr: qt=50000 too large");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_all();
    test_qcsr_example();
    test_mqt_example();
    test_storage();
    test_bad_params();
    return TEST_END();
}
