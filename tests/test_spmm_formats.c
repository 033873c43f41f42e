/* test_spmm_formats.c -- the "hm" and "cdm" formats: the seed's worked
 * layouts with exact arrays, size formulas, round trips, SpMV through the
 * format API, invariants and errors. */
#include "testutil.h"
#include "spmm/cdm.h"

#include <string.h>

/* a_ij = 10 i + j + 1 on the entries where mask is set (distinct, nonzero). */
static adia_matrix *indexed_matrix(int32_t n, int (*keep)(int32_t, int32_t))
{
    double *a = calloc((size_t)n * n + 1, sizeof *a);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++)
            if (keep(i, j)) a[i * n + j] = 10.0 * i + j + 1;
    adia_matrix *A = test_dense_matrix(n, n, a);
    free(a);
    return A;
}
static int band_2_1(int32_t i, int32_t j) { return j - i <= 2 && i - j <= 1; }
static int dense(int32_t i, int32_t j) { (void)i; (void)j; return 1; }
static double av(int32_t i, int32_t j) { return 10.0 * i + j + 1; }

static const void *impl_of(const adia_format *F) { return F->impl; }

static void test_seed_hm_example(void)
{
    /* Figure 2a (k_u = 2, k_l = 1, n = 4) in HM order, section 3.1:
     * (a00 a11 a22 a33 | a01 a12 a23 | a02 a13 | a10 a21 a32) */
    adia_matrix *A = indexed_matrix(4, band_2_1);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "hm", NULL, ADIA_DOUBLE, &F));
    const adia_hm *h = impl_of(F);
    int32_t ds[] = {0, 1, 2, -1};
    int64_t st[] = {0, 4, 7, 9, 12};
    double list[] = {av(0, 0), av(1, 1), av(2, 2), av(3, 3), av(0, 1), av(1, 2), av(2, 3),
                     av(0, 2), av(1, 3), av(1, 0), av(2, 1), av(3, 2)};
    CHECK(h->dg == 4 && !memcmp(h->ds, ds, sizeof ds), "Ds = 0 1 2 -1");
    CHECK(!memcmp(h->start, st, sizeof st), "StartDg");
    CHECK(!memcmp(h->list, list, sizeof list), "list");
    CHECK(adia_format_padded_zeros(F) == 0, "no padding in HM of a full band");
    adia_format_destroy(F);
    adia_matrix_destroy(A);

    /* size n(ku+kl+1) - ku(ku+1)/2 - kl(kl+1)/2 and first element of
     * super-diagonal k at n k - k(k-1)/2 (dense: ku = kl = n-1) */
    const int32_t n = 7;
    A = indexed_matrix(n, dense);
    CHECK_OK(adia_format_build(A, "hm", NULL, ADIA_DOUBLE, &F));
    h = impl_of(F);
    int64_t ku = n - 1, kl = n - 1;
    CHECK(h->start[h->dg] == n * (ku + kl + 1) - ku * (ku + 1) / 2 - kl * (kl + 1) / 2,
          "HM size %lld", (long long)h->start[h->dg]);
    for (int32_t k = 1; k < n; k++)
        CHECK(h->ds[k] == k && h->start[k] == (int64_t)n * k - (int64_t)k * (k - 1) / 2,
              "super-diagonal %d starts at %lld", k, (long long)h->start[k]);
    CHECK(h->ds[n] == -1 && h->ds[2 * n - 2] == -(n - 1), "sub-diagonals descending");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

static void test_seed_cdm_example(void)
{
    /* section 3.2, n = 4: A_3 = (a03 a10 a21 a32), A_1 = (a01 a12 a23 a30);
     * the transpose's compact diagonal 3 is the reversed A~_3 = (a30 a01 a12 a23) */
    adia_matrix *A = indexed_matrix(4, dense), *T = NULL;
    adia_format *F = NULL, *G = NULL;
    CHECK_OK(adia_format_build(A, "cdm", NULL, ADIA_DOUBLE, &F));
    const adia_cdm *c = impl_of(F);
    const double *v = c->list;
    double a3[] = {av(0, 3), av(1, 0), av(2, 1), av(3, 2)};
    double a1[] = {av(0, 1), av(1, 2), av(2, 3), av(3, 0)};
    CHECK(c->dg == 4 && c->ds[3] == 3, "four compact diagonals");
    CHECK(!memcmp(v + 12, a3, sizeof a3), "A_3");
    CHECK(!memcmp(v + 4, a1, sizeof a1), "A_1");
    CHECK_OK(adia_matrix_transpose(A, &T));
    CHECK_OK(adia_format_build(T, "cdm", NULL, ADIA_DOUBLE, &G));
    double r3[] = {av(3, 0), av(0, 1), av(1, 2), av(2, 3)};
    CHECK(!memcmp((const double *)((const adia_cdm *)impl_of(G))->list + 12, r3, sizeof r3),
          "transpose's compact diagonal 3 = reversed A~_3");
    adia_format_destroy(F);
    adia_format_destroy(G);
    adia_matrix_destroy(A);
    adia_matrix_destroy(T);

    /* banded: compact diagonals 0, 1, 2 (super) and 3 (= sub 1); padding =
     * the zero sub-diagonals 3, 2 packed under super-diagonals 1, 2 */
    A = indexed_matrix(4, band_2_1);
    CHECK_OK(adia_format_build(A, "cdm", NULL, ADIA_DOUBLE, &F));
    c = impl_of(F);
    CHECK(c->dg == 4 && adia_format_padded_zeros(F) == 16 - 12, "cdm padding %lld",
          (long long)adia_format_padded_zeros(F));
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

static void round_trip(const char *fmt, adia_matrix *A, const char *what)
{
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        adia_format *F = NULL;
        adia_matrix *B = NULL;
        CHECK_OK(adia_format_build(A, fmt, NULL, vt, &F));
        if (!F) continue;
        CHECK_OK(F->ops->check(F->impl));
        CHECK_OK(adia_format_to_matrix(F, &B));
        if (vt == ADIA_DOUBLE)
            CHECK(adia_matrix_equal(A, B), "%s %s: exact round trip", fmt, what);
        else
            CHECK(B && adia_matrix_nnz(B) == adia_matrix_nnz(A), "%s %s: float round trip nnz",
                  fmt, what);
        double err = test_format_spmv_error(F, A, 3, 1.5, vt ? 0.0 : -0.5);
        CHECK(err < (vt ? 1e-5 : 1e-14), "%s %s %s spmv error %g", fmt, what,
              adia_value_type_name(vt), err);
        CHECK(adia_format_storage_bytes(F) > 0 || adia_matrix_nnz(A) == 0, "bytes");
        CHECK(adia_format_bytes(F) >= adia_format_storage_bytes(F), "spmv bytes");
        adia_format_destroy(F);
        adia_matrix_destroy(B);
    }
}

static void test_round_trips(void)
{
    int32_t shapes[][2] = {{1, 1}, {37, 37}, {64, 23}, {23, 64}, {200, 200}, {0, 0}, {5, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int32_t m = shapes[s][0], n = shapes[s][1];
        adia_matrix *A = test_random_matrix(40 + s, m, n, 0.08);
        if (!A) continue;
        round_trip("hm", A, "random");
        if (m == n) round_trip("cdm", A, "random");
        adia_matrix_destroy(A);
    }
    adia_matrix *E = test_dense_matrix(6, 6, (double[36]){0});
    round_trip("hm", E, "empty");
    round_trip("cdm", E, "empty");
    adia_matrix_destroy(E);
}

static void test_errors(void)
{
    adia_matrix *A = test_random_matrix(7, 10, 12, 0.2);
    adia_format *F = NULL;
    CHECK_ERR(adia_format_build(A, "cdm", NULL, ADIA_DOUBLE, &F), ADIA_ERR_DIMENSION,
              "10 x 12");
    CHECK(F == NULL, "no format on error");
    CHECK(adia_format_exists("hm") && adia_format_exists("cdm"), "registered");
    /* a broken HM is reported by check */
    CHECK_OK(adia_format_build(A, "hm", NULL, ADIA_DOUBLE, &F));
    adia_hm *h = F->impl;
    if (h->dg >= 2) {
        int32_t t = h->ds[0];
        h->ds[0] = h->ds[1];
        h->ds[1] = t;
        CHECK_ERR(F->ops->check(F->impl), ADIA_ERR_INVALID_MATRIX, "order");
        h->ds[1] = h->ds[0];
        h->ds[0] = t;
    }
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_seed_hm_example();
    test_seed_cdm_example();
    test_round_trips();
    test_errors();
    return TEST_END();
}
