/* test_numformat.c -- the writers' number formatting (src/io/numformat.c):
 * every finite double reads back bit for bit (strtod, and adia's own
 * readers through files), with the fewest digits and, among those, the
 * nearest (as the correctly rounded %.*e that first reads back); the
 * layout follows %g; NaN and infinities as %.17g writes them. */
#define _XOPEN_SOURCE 700   /* mkdtemp */
#include "testutil.h"
#include "io/numformat.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t next_bits(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint64_t to_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* The doubles under test, kind i % 7: any bit pattern, subnormals, powers
 * of ten and their neighbours, integers, short decimals, ties, integers
 * below 2^53 with trailing zeros (numformat.c's shortcut). */
static double sample(long i)
{
    switch (i % 7) {
    case 0: return from_bits(next_bits());
    case 1: return from_bits(next_bits() & UINT64_C(0x800FFFFFFFFFFFFF));
    case 2: {
        double p = pow(10, (double)(next_bits() % 632) - 323);
        uint64_t step = next_bits() % 3;   /* the power, or a neighbour */
        return step == 0 ? p : from_bits(to_bits(p) + step - 2 + (step == 2));
    }
    case 3: return (double)((int64_t)next_bits() >> (next_bits() % 64));
    case 4: return (double)(int64_t)(next_bits() % 2000001 - 1000000) / 1000;
    case 5: return (double)(next_bits() % 100000) * pow(10, (double)(next_bits() % 12));
    default: return ldexp((double)(next_bits() % (UINT64_C(1) << 53)) + 0.5, -(int)(next_bits() % 60));
    }
}

static const char *format(double v)
{
    static char buf[ADIA_DOUBLE_CHARS + 8];
    memset(buf, 'x', sizeof buf);
    char *end = adia__format_double(buf, v);
    if (end - buf > ADIA_DOUBLE_CHARS) CHECK(0, "%.17g: %d characters", v, (int)(end - buf));
    *end = '\0';
    return buf;
}

/* The significant digits of s (no sign, point, exponent or leading and
 * trailing zeros). */
static void digits_of(const char *s, char *d)
{
    for (; *s && *s != 'e'; s++)
        if ((*s >= '1' && *s <= '9') || (*s == '0' && d[-1] != '\0')) *d++ = *s;
    *d = '\0';
}

static bool shortest_nearest(double v, const char *s)
{
    char ref[40], want[40] = {0}, got[40] = {0};
    for (int p = 0; p < 17; p++) {
        snprintf(ref, sizeof ref, "%.*e", p, v);
        if (strtod(ref, NULL) == v) break;
    }
    digits_of(ref, want + 1);
    digits_of(s, got + 1);
    size_t n = strlen(want + 1), m = strlen(got + 1);
    while (n > 1 && want[n] == '0') want[n--] = '\0';
    while (m > 1 && got[m] == '0') got[m--] = '\0';
    return !strcmp(want + 1, got + 1);
}

static void test_random(void)
{
    long bad = 0, longer = 0, n = 300000;
    for (long i = 0; i < n; i++) {
        double v = sample(i);
        if (!isfinite(v)) continue;
        const char *s = format(v);
        if (to_bits(strtod(s, NULL)) != to_bits(v) && bad++ < 5)
            CHECK(0, "%016llx (%.17g) written as %s", (unsigned long long)to_bits(v), v, s);
        if (v != 0 && !shortest_nearest(v, s) && longer++ < 5)
            CHECK(0, "%.17g written as %s: not the shortest nearest", v, s);
    }
    CHECK(bad == 0 && longer == 0, "%ld of %ld differ on reading back, %ld not shortest", bad, n,
          longer);
}

static void test_layout(void)
{
    static const struct { double v; const char *s; } cases[] = {
        {0.0, "0"}, {-0.0, "-0"}, {1, "1"}, {26, "26"}, {-1, "-1"}, {0.1, "0.1"},
        {-0.1, "-0.1"}, {1e-4, "0.0001"}, {1.5e-5, "1.5e-05"}, {123.456, "123.456"},
        {1e16, "10000000000000000"}, {1e17, "1e+17"}, {1.25e17, "1.25e+17"},
        {2.0 / 3, "0.6666666666666666"}, {1e23, "1e+23"}, {5e-324, "5e-324"},
        {-2.2250738585072014e-308, "-2.2250738585072014e-308"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {9007199254740993.0, "9007199254740992"}, {INFINITY, "inf"}, {-INFINITY, "-inf"},
        /* odd mantissa: the upper midpoint ...990 reads back as the
         * neighbour (ties to even), so the shorter 1.801439850948199e+16
         * would not do */
        {18014398509481988.0, "18014398509481988"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *s = format(cases[i].v);
        CHECK(!strcmp(s, cases[i].s), "%.17g written as %s, not %s", cases[i].v, s, cases[i].s);
    }
    CHECK(!strcmp(format(NAN), "nan") || !strcmp(format(NAN), "-nan"), "NaN as %s", format(NAN));
    char buf[16];
    for (int i = 0; i < 40; i++) {
        uint32_t v = i < 32 ? (uint32_t)1 << i : (uint32_t)next_bits();
        char want[16];
        snprintf(want, sizeof want, "%u", v);
        *adia__format_u32(buf, v) = '\0';
        CHECK(!strcmp(buf, want), "%u written as %s", v, buf);
    }
}

/* Through files: the vector and matrix writers, then adia's readers,
 * give back every value bit for bit. */
static void test_files(void)
{
    char dir[] = "/tmp/adia_numformat_XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        CHECK(0, "cannot make a temporary folder");
        return;
    }
    enum { N = 200000 };
    double *x = malloc(N * sizeof *x);
    for (long i = 0; i < N; i++) {
        do x[i] = sample(i);
        while (!isfinite(x[i]));
    }
    x[0] = -0.0;
    snprintf(path, sizeof path, "%s/x.mtx", dir);
    CHECK_OK(adia_vector_write_mtx(path, N, x));
    int32_t n = 0;
    double *y = NULL;
    CHECK_OK(adia_vector_read_mtx(path, &n, &y));
    CHECK(n == N && y && !memcmp(x, y, N * sizeof *x), "vector read back bit for bit");
    free(y);

    int64_t *ptr = malloc((N + 1) * sizeof *ptr);
    int32_t *col = malloc(N * sizeof *col);
    for (int32_t i = 0; i <= N; i++) ptr[i] = i;
    for (int32_t i = 0; i < N; i++) col[i] = (int32_t)(next_bits() % N);
    adia_matrix *A = NULL, *B = NULL;
    CHECK_OK(adia_matrix_create_csr(N, N, N, ptr, col, x, ADIA_DOUBLE, &A));
    snprintf(path, sizeof path, "%s/A.mtx", dir);
    CHECK_OK(adia_matrix_write_mtx(A, path));
    CHECK_OK(adia_matrix_read_mtx(path, &B));
    adia_csr_view b = {0};
    if (B) CHECK_OK(adia_matrix_csr(B, &b));
    CHECK(b.nnz == N && !memcmp(b.values, x, N * sizeof *x) && !memcmp(b.colind, col, N * sizeof *col),
          "matrix read back bit for bit");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    unlink(path);
    snprintf(path, sizeof path, "%s/x.mtx", dir);
    unlink(path);
    rmdir(dir);
    free(ptr);
    free(col);
    free(x);
}

int main(void)
{
    TEST_BEGIN();
    test_layout();
    test_random();
    test_files();
    return TEST_END();
}
