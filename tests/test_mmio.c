/* test_mmio.c -- Matrix Market and binary I/O: every format/field/symmetry
 * variant on small exact examples, round trips (plain, gzip, binary),
 * exact number parsing against strtod, and the parallel parser agreeing
 * with the serial one (entries and error line numbers). */
#include "testutil.h"
#include "io/numparse.h"
#include "io/source.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#define DATA "tests/data/"

/* Read path and compare with the dense row-major matrix a. */
static void check_file(const char *path, int32_t rows, int32_t cols, const double *a)
{
    adia_matrix *A = NULL, *E = test_dense_matrix(rows, cols, a);
    CHECK_OK(adia_matrix_read_mtx(path, &A));
    CHECK(adia_matrix_equal(A, E), "%s differs from the expected matrix", path);
    adia_matrix_destroy(A);
    adia_matrix_destroy(E);
}

static void test_variants(void)
{
    const double general[] = {1.75, 0, 0, 0, 0, -2, 0.4, 0, 1e300};
    check_file(DATA "general.mtx", 3, 3, general);
    const double sym[] = {2, -1, 0, -1, 0, -1, 0, -1, 2};
    check_file(DATA "symmetric.mtx", 3, 3, sym);
    const double skew[] = {0, -5, 0.5, 5, 0, 0, -0.5, 0, 0};
    check_file(DATA "skew.mtx", 3, 3, skew);
    const double pattern[] = {1, 0, 1, 0, 0, 1, 1, 1, 0};
    check_file(DATA "pattern.mtx", 3, 3, pattern);
    const double integer[] = {7, 3, 0, 0, 0, -12};
    check_file(DATA "integer.mtx", 2, 3, integer);
    const double array[] = {1, 2.5, 0, 0, -1, 3};
    check_file(DATA "array.mtx", 2, 3, array);
    const double array_sym[] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    check_file(DATA "array_sym.mtx", 3, 3, array_sym);
    const double array_skew[] = {0, -1, -2, 1, 0, -3, 2, 3, 0};
    check_file(DATA "array_skew.mtx", 3, 3, array_skew);
}

/* CRLF, blank lines, comments, NaN/Inf, explicit zeros, tabs, no final LF. */
static void test_accepted(void)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_read_mtx(DATA "crlf.mtx", &A));
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    CHECK(v.nnz == 2 && v.values[0] == 1.25 && isnan(v.values[1]), "crlf.mtx entries");
    CHECK(!strcmp(adia_matrix_name(A), "crlf"), "name %s", adia_matrix_name(A));
    adia_matrix_destroy(A);

    const char *text = "%%MatrixMarket matrix coordinate real general\n"
                       "\n% comment\n  \n%another\n"
                       "2 2 4\n\t1\t1\tinf \n\n2 1 -Infinity\n1 2 0\n% late comment\n2 2 -0.0";
    CHECK_OK(adia_matrix_parse_mtx(text, strlen(text), "dir/odd.mtx.gz", &A));
    CHECK_OK(adia_matrix_csr(A, &v));
    CHECK(v.nnz == 4, "explicit zeros are kept: nnz %lld", (long long)v.nnz);
    CHECK(v.nnz == 4 && isinf(v.values[0]) && v.values[0] > 0 && v.values[1] == 0 &&
              isinf(v.values[2]) && v.values[2] < 0 && signbit(v.values[3]),
          "inf / zero / -inf / -0 values");
    CHECK(!strcmp(adia_matrix_name(A), "odd"), "name %s", adia_matrix_name(A));
    adia_matrix_destroy(A);

    text = "%%matrixmarket MATRIX Coordinate Real General\n0 0 0\n";
    CHECK_OK(adia_matrix_parse_mtx(text, strlen(text), "empty", &A));
    CHECK(adia_matrix_rows(A) == 0 && adia_matrix_nnz(A) == 0, "0 x 0 matrix");
    adia_matrix_destroy(A);
}

/* Entries in random order with duplicates (rows longer than the
 * insertion-sort limit): the same matrix as adia_matrix_create_coo gives
 * from the same triplets (both sum duplicates in file order). */
static void test_unsorted(void)
{
    enum { R = 6, C = 400, N = 2000 };
    int32_t row[N], col[N];
    double val[N];
    uint64_t st = 5;
    char *text = malloc(N * 64 + 128), *p = text;
    p += sprintf(p, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", R, C, N);
    for (int k = 0; k < N; k++) {
        row[k] = (int32_t)((test_rand(&st) + 1) * R / 2);
        col[k] = (int32_t)((test_rand(&st) + 1) * C / 2);
        val[k] = test_rand(&st);
        p += sprintf(p, "%d %d %.17g\n", row[k] + 1, col[k] + 1, val[k]);
    }
    adia_matrix *A = NULL, *B = NULL;
    CHECK_OK(adia_matrix_parse_mtx(text, (size_t)(p - text), "shuffled", &A));
    CHECK_OK(adia_matrix_create_coo(R, C, N, row, col, val, ADIA_DOUBLE, &B));
    CHECK(adia_matrix_equal(A, B) && adia_matrix_nnz(A) < N, "shuffled entries with duplicates");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    free(text);
}

/* write -> read gives the same matrix, for .mtx, .mtx.gz, .bin, .bin.gz;
 * load picks the reader by content. */
static void test_round_trips(void)
{
    adia_matrix *A = test_random_matrix(7, 300, 200, 0.05), *B = NULL;
    const char *mtx[] = {"build-test-rt.mtx", "build-test-rt.mtx.gz"};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(adia_matrix_write_mtx(A, mtx[i]));
        CHECK_OK(adia_matrix_read_mtx(mtx[i], &B));
        CHECK(adia_matrix_equal(A, B), "%s round trip", mtx[i]);
        CHECK(!strcmp(adia_matrix_name(B), "build-test-rt"), "name %s", adia_matrix_name(B));
        adia_matrix_destroy(B);
        CHECK_OK(adia_matrix_load(mtx[i], &B));
        CHECK(adia_matrix_equal(A, B), "%s load", mtx[i]);
        adia_matrix_destroy(B);
        remove(mtx[i]);
    }
    const char *bin[] = {"build-test-rt.bin", "build-test-rt.bin.gz"};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(adia_matrix_write_bin(A, bin[i]));
        CHECK_OK(adia_matrix_read_bin(bin[i], &B));
        CHECK(adia_matrix_equal(A, B), "%s round trip", bin[i]);
        adia_matrix_destroy(B);
        CHECK_OK(adia_matrix_load(bin[i], &B));
        CHECK(adia_matrix_equal(A, B), "%s load", bin[i]);
        adia_matrix_destroy(B);
        remove(bin[i]);
    }
    adia_matrix_destroy(A);
}

/* adia__parse_f64 gives exactly what strtod gives, on hand-picked tokens
 * and on %.17g / %.15g / %.6e / %.3f renderings of random doubles. */
static int same_as_strtod(const char *tok)
{
    const char *p = tok, *end = tok + strlen(tok);
    double got, want;
    char *stop;
    want = strtod(tok, &stop);
    int valid = *tok && *stop == '\0';
    adia_num_result r = adia__parse_f64(&p, end, &got);
    if (!valid) return r == ADIA_NUM_BAD;
    return r == ADIA_NUM_OK && p == end &&
           (memcmp(&got, &want, sizeof got) == 0 || (isnan(got) && isnan(want)));
}

static void test_numbers(void)
{
    const char *toks[] = {"1", "-0", "+0.0", "0.5", ".5", "5.", "1e22", "1e23", "-1e-22",
                          "9007199254740993", "9007199254740992", "123456789012345678901234",
                          "0.1", "0.30000000000000004", "2.2250738585072011e-308",
                          "4.9406564584124654e-324", "1e-400", "1e400", "1.7976931348623157e308",
                          "nan", "-inf", "Infinity", "0x1p3", "00000000000000000000000001.5",
                          "0.000000000000000000000000000123", "1e", "e5", "--1", "1.2.3",
                          "+.e1", ".", "-", "1e+", "12abc", "1d5"};
    for (size_t i = 0; i < sizeof toks / sizeof *toks; i++)
        CHECK(same_as_strtod(toks[i]), "token \"%s\"", toks[i]);
    uint64_t st = 12345;
    int bad = 0;
    const char *fmts[] = {"%.17g", "%.15g", "%.6e", "%.3f", "%.17e"};
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = (uint64_t)((test_rand(&st) + 1.0) * 9.2e18) ^ ((uint64_t)i << 40);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (i % 2) d = test_rand(&st) * pow(10.0, (double)(i % 40 - 20));
        char buf[400];
        snprintf(buf, sizeof buf, fmts[i % 5], d);
        if (!same_as_strtod(buf) && bad++ < 5) CHECK(0, "token \"%s\"", buf);
    }
    CHECK(bad == 0, "%d random tokens differ from strtod", bad);
    /* Long mantissas with exponents around the fast paths' limits, and
     * odd multiples of 2^k just above 2^53 (double midpoints). */
    bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t m = (uint64_t)((test_rand(&st) + 1.0) * 4.9e18) + (uint64_t)i;
        if (i % 3 == 0) m = ((UINT64_C(1) << 53) + 2 * (uint64_t)i + 1) << (i % 11);
        char buf[64];
        snprintf(buf, sizeof buf, "%s%llue%d", i % 2 ? "-" : "", (unsigned long long)m,
                 i % 61 - 30);
        if (!same_as_strtod(buf) && bad++ < 5) CHECK(0, "token \"%s\"", buf);
    }
    CHECK(bad == 0, "%d long-mantissa tokens differ from strtod", bad);
    /* Mantissas of 1-19 digits over the whole exponent range (the
     * Eisel-Lemire path, its subnormal / overflow edges), and the decimal
     * renderings of double midpoints (ties to even). */
    bad = 0;
    for (int i = 0; i < 300000; i++) {
        uint64_t m = (uint64_t)((test_rand(&st) + 1.0) * 4.9e18) + (uint64_t)i;
        for (int cut = i % 19; cut > 0; cut--) m /= 10;
        if (m == 0) m = 1;
        int e = (int)((test_rand(&st) + 1.0) * 330) - 345;
        char buf[64];
        snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)m, e);
        if (!same_as_strtod(buf) && bad++ < 5) CHECK(0, "token \"%s\"", buf);
    }
    for (int i = 0; i < 100000; i++) {   /* (2k + 1) 2^j above 2^53: a midpoint, exactly */
        uint64_t k = (UINT64_C(1) << 52) | ((uint64_t)((test_rand(&st) + 1.0) * 2.2e15) &
                                             ((UINT64_C(1) << 52) - 1));
        char buf[64];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)((2 * k + 1) << (i % 7)));
        if (!same_as_strtod(buf) && bad++ < 5) CHECK(0, "token \"%s\"", buf);
    }
    CHECK(bad == 0, "%d full-range tokens differ from strtod", bad);
    /* Integers (indices): leading zeros do not count against the 19 digits
     * that need no overflow check; a 20th significant digit is a range error. */
    static const struct { const char *tok; adia_num_result r; int64_t v; } ints[] = {
        {"0000000000000000000000001", ADIA_NUM_OK, 1}, {"9223372036854775807", ADIA_NUM_OK, INT64_MAX},
        {"-9223372036854775808", ADIA_NUM_OK, INT64_MIN}, {"9223372036854775808", ADIA_NUM_RANGE, 0},
        {"9999999999999999999", ADIA_NUM_RANGE, 0}, {"12345678901234567890", ADIA_NUM_RANGE, 0},
        {"0", ADIA_NUM_OK, 0}, {"-", ADIA_NUM_BAD, 0}, {"12x", ADIA_NUM_BAD, 0}, {"", ADIA_NUM_BAD, 0}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        const char *p = ints[i].tok;
        int64_t v = -7;
        adia_num_result r = adia_parse_i64(&p, p + strlen(p), &v);
        CHECK(r == ints[i].r && (r != ADIA_NUM_OK || v == ints[i].v), "integer \"%s\": result %d, "
              "value %lld", ints[i].tok, (int)r, (long long)v);
    }
    /* Random digit strings: 0-24 digits, zeros-heavy, a point anywhere. */
    bad = 0;
    for (int i = 0; i < 100000; i++) {
        char buf[64], *q = buf;
        int nd = (int)((test_rand(&st) + 1) * 12.5), dot = (int)((test_rand(&st) + 1) * 13) - 1;
        for (int k = 0; k < nd; k++) {
            if (k == dot) *q++ = '.';
            int d = (int)((test_rand(&st) + 1) * 10) % 10;
            *q++ = (char)('0' + (test_rand(&st) < -0.3 ? 0 : d));
        }
        if (i % 4 == 0) q += sprintf(q, "e%d", i % 71 - 35);
        *q = '\0';
        if (!same_as_strtod(buf) && bad++ < 5) CHECK(0, "token \"%s\"", buf);
    }
    CHECK(bad == 0, "%d random digit strings differ from strtod", bad);
    int64_t v;
    const char *p = "9223372036854775807", *q = "9223372036854775808", *n = "-9223372036854775808";
    CHECK(adia_parse_i64(&p, p + strlen(p), &v) == ADIA_NUM_OK && v == INT64_MAX, "INT64_MAX");
    CHECK(adia_parse_i64(&q, q + strlen(q), &v) == ADIA_NUM_RANGE, "INT64_MAX + 1");
    CHECK(adia_parse_i64(&n, n + strlen(n), &v) == ADIA_NUM_OK && v == INT64_MIN, "INT64_MIN");
}

/* A text of about 2 MB (above the parallel threshold) with an error in
 * its last line when bad is set. */
static char *big_text(int bad, size_t *len, int64_t *lines)
{
    int32_t n = 40000;
    size_t cap = (size_t)n * 3 * 64 + 256;
    char *t = malloc(cap), *p = t;
    p += sprintf(p, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", n, n,
                 3 * n - 3);
    uint64_t st = 99;
    for (int32_t i = 1; i <= n; i++) {
        p += sprintf(p, "%d %d %.17g\n", i, i, test_rand(&st));
        if (i > 1) p += sprintf(p, "%d %d %.17g\n\n", i, i - 1, test_rand(&st));
        if (i > 2) p += sprintf(p, "%d %d %.6e\n", i, i - 2, test_rand(&st));
    }
    if (bad) p += sprintf(p - 1, "%s", " junk\n") - 1;   /* glue junk to the last line */
    *len = (size_t)(p - t);
    *lines = 0;
    for (size_t i = 0; i < *len; i++) *lines += t[i] == '\n';
    return t;
}

static void test_threads(void)
{
    size_t len;
    int64_t lines;
    char *t = big_text(0, &len, &lines);
    adia_matrix *A = NULL, *B = NULL;
    omp_set_num_threads(1);
    CHECK_OK(adia_matrix_parse_mtx(t, len, "big", &A));
    omp_set_num_threads(2);
    CHECK_OK(adia_matrix_parse_mtx(t, len, "big", &B));
    CHECK(A && adia_matrix_nnz(A) == 5 * 40000 - 6, "expanded nnz %lld",
          (long long)adia_matrix_nnz(A));
    CHECK(adia_matrix_equal(A, B), "1 and 2 threads give the same matrix");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    free(t);
    t = big_text(1, &len, &lines);
    char needle[128];
    snprintf(needle, sizeof needle, "big:%lld: extra text after the entry (junk)",
             (long long)lines);
    for (int nt = 1; nt <= 3; nt++) {
        omp_set_num_threads(nt);
        CHECK_ERR(adia_matrix_parse_mtx(t, len, "big", &A), ADIA_ERR_PARSE, needle);
    }
    /* A second, earlier error in the first quarter: that one is reported. */
    char *bad = memchr(t + len / 4, '\n', len) + 1;
    if (*bad == '\n') bad++;
    *bad = 'x';
    int64_t at = 1;
    for (char *q = t; q < bad; q++) at += *q == '\n';
    snprintf(needle, sizeof needle, "big:%lld: row index is not an integer (x", (long long)at);
    for (int nt = 1; nt <= 3; nt++) {
        omp_set_num_threads(nt);
        CHECK_ERR(adia_matrix_parse_mtx(t, len, "big", &A), ADIA_ERR_PARSE, needle);
    }
    free(t);
    /* Declare 7 entries fewer (same width): the 8th-last entry line is the
     * first one too many, wherever the chunks are cut. */
    t = big_text(0, &len, &lines);
    char *size = strchr(t, '\n') + 1, *nnz = size + strlen("40000 40000 ");
    long declared = strtol(nnz, NULL, 10) - 7;
    char digits[32];
    snprintf(digits, sizeof digits, "%ld", declared);
    memcpy(nnz, digits, strlen(digits));
    int64_t line = 0, entries = 0, want = 0;
    for (char *q = size; q < t + len; q = strchr(q, '\n') + 1) {
        line++;
        if (line > 1 && *q != '\n' && ++entries == declared + 1) want = line + 1;
    }
    snprintf(needle, sizeof needle, "big:%lld: too many entries: the size line declares %ld",
             (long long)want, declared);
    for (int nt = 1; nt <= 3; nt++) {
        omp_set_num_threads(nt);
        CHECK_ERR(adia_matrix_parse_mtx(t, len, "big", &A), ADIA_ERR_PARSE, needle);
    }
    free(t);
    /* Entries only after a long comment block: the chunks' first guesses
     * of their entry counts are far off and their arrays must grow. */
    t = malloc(6 << 20);
    char *p = t + sprintf(t, "%%%%MatrixMarket matrix coordinate real general\n");
    p += sprintf(p, "1000 1000 100000\n");
    for (int k = 0; k < 40000; k++) p += sprintf(p, "%% comment line number %d\n", k);
    for (int k = 0; k < 100000; k++) p += sprintf(p, "%d %d %d.5\n", k % 1000 + 1, k / 100 + 1, k);
    omp_set_num_threads(1);
    CHECK_OK(adia_matrix_parse_mtx(t, (size_t)(p - t), "late", &A));
    omp_set_num_threads(2);
    CHECK_OK(adia_matrix_parse_mtx(t, (size_t)(p - t), "late", &B));
    CHECK(A && adia_matrix_nnz(A) == 100000 && adia_matrix_equal(A, B), "late entries");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    free(t);
}

/* Blocks of rows (adia_matrix_read_mtx_rows) against the whole matrix,
 * with small chunks too (many parse blocks, entries of other rows between
 * those kept); a file's errors still found where the rows are read. */
static void test_row_blocks(void)
{
    const char *files[] = {DATA "general.mtx", DATA "symmetric.mtx", DATA "skew.mtx",
                           DATA "pattern.mtx", DATA "integer.mtx", DATA "array.mtx",
                           DATA "array_sym.mtx", DATA "crlf.mtx", "data/orsreg_1.mtx"};
    for (size_t t = 0; t < sizeof files / sizeof *files; t++)
        for (int chunk = 0; chunk <= 64; chunk += 64) {
            adia__lines_set_chunk((size_t)chunk);
            adia_matrix *A = NULL;
            CHECK_OK(adia_matrix_read_mtx(files[t], &A));
            if (!A) continue;
            int64_t n = adia_matrix_rows(A), rows = -1, cols = -1;
            CHECK_OK(adia_matrix_read_mtx_rows(files[t], 0, 0, &rows, &cols, NULL));
            CHECK(rows == n && cols == adia_matrix_cols(A), "%s: shape", files[t]);
            for (int p = 0; p < 3; p++) {
                int64_t first = n * p / 3, count = n * (p + 1) / 3 - first;
                adia_matrix *P = NULL;
                CHECK_OK(adia_matrix_read_mtx_rows(files[t], first, count, NULL, NULL, &P));
                CHECK(P && test_rows_equal(A, first, P), "%s: rows %lld + %lld", files[t],
                      (long long)first, (long long)count);
                adia_matrix_destroy(P);
            }
            adia_matrix_destroy(A);
        }
    adia__lines_set_chunk(0);
    adia_matrix *P = NULL;
    CHECK_ERR(adia_matrix_read_mtx_rows(DATA "general.mtx", 2, 2, NULL, NULL, &P),
              ADIA_ERR_DIMENSION, "the matrix has rows 0..2");
    /* (2,1) and (1,2): found by the block holding row 2 (0-based 1) */
    CHECK_ERR(adia_matrix_read_mtx_rows(DATA "bad_both_triangles.mtx", 1, 1, NULL, NULL, &P),
              ADIA_ERR_PARSE, "in either triangle");
    CHECK_OK(adia_matrix_read_mtx_rows(DATA "bad_both_triangles.mtx", 2, 1, NULL, NULL, &P));
    adia_matrix_destroy(P);
    P = NULL;
    CHECK_ERR(adia_matrix_read_mtx_rows(DATA "bad_toomany.mtx", 0, 1, NULL, NULL, &P),
              ADIA_ERR_PARSE, "too many entries");
    CHECK_ERR(adia_matrix_read_mtx_rows(DATA "bad_truncated.mtx", 0, 1, NULL, NULL, &P),
              ADIA_ERR_PARSE, "truncated");
}

int main(void)
{
    TEST_BEGIN();
    test_variants();
    test_accepted();
    test_unsorted();
    test_round_trips();
    test_numbers();
    test_threads();
    test_row_blocks();
    return TEST_END();
}
