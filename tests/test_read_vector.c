/* test_read_vector.c -- adia_vector_read_mtx: array n x 1 and 1 x n,
 * coordinate n x 1 (missing entries 0, duplicates summed, pattern kept
 * once), gzip by content, and the refusals: bad shapes, symmetric,
 * complex, truncated files. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include "testutil.h"

#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static const char *put(const char *name, const char *text, int gzip)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (gzip) {
        gzFile g = gzopen(path, "wb");
        gzwrite(g, text, (unsigned)strlen(text));
        gzclose(g);
    } else {
        FILE *f = fopen(path, "wb");
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* Read text (as a file) and compare with want[0..n). */
static void check_vector(const char *text, int gzip, int32_t n, const double *want)
{
    int32_t got_n = -1;
    double *x = NULL;
    CHECK_OK(adia_vector_read_mtx(put("v.mtx", text, gzip), &got_n, &x));
    int same = got_n == n;
    for (int32_t i = 0; same && i < n; i++) same = x[i] == want[i];
    CHECK(same, "vector of %s: n %d", text, got_n);
    free(x);
}

static adia_status read_text(const char *text)
{
    int32_t n = 0;
    double *x = (double *)&n;   /* poison: must be reset to NULL */
    adia_status s = adia_vector_read_mtx(put("v.mtx", text, 0), &n, &x);
    CHECK(s == ADIA_OK || (x == NULL && n == 0), "failed read left a vector behind");
    free(s == ADIA_OK ? x : NULL);
    return s;
}

static void test_values(void)
{
    const double a[] = {1.5, -2, 0, 1e300};
    const char *col = "%%MatrixMarket matrix array real general\n% c\n4 1\n1.5\n-2\n0\n1e300\n";
    check_vector(col, 0, 4, a);
    check_vector(col, 1, 4, a);
    check_vector("%%MatrixMarket matrix array real general\n1 4\n1.5\n-2\n0\n1e300\n", 0, 4, a);
    const double b[] = {0, 7, 0, -3};
    check_vector("%%MatrixMarket matrix array integer general\n4 1\n0\n7\n0\n-3\n", 0, 4, b);
    const double c[] = {0, 3.5, 0, 0, 1};
    check_vector("%%MatrixMarket matrix coordinate real general\n5 1 3\n2 1 1.5\n5 1 1\n2 1 2\n",
                 0, 5, c);
    const double d[] = {1, 0, 1};
    check_vector("%%MatrixMarket matrix coordinate pattern general\n3 1 3\n1 1\n3 1\n3 1\n", 0, 3, d);
    check_vector("%%MatrixMarket matrix coordinate integer general\n0 1 0\n", 0, 0, NULL);
    /* Random values written with 17 digits read back exactly. */
    double w[100];
    uint64_t st = 5;
    test_rand_vector(&st, w, 100);
    char text[4096], *q = text;
    q += sprintf(q, "%%%%MatrixMarket matrix array real general\n100 1\n");
    for (int i = 0; i < 100; i++) q += sprintf(q, "%.17g\n", w[i]);
    check_vector(text, 1, 100, w);
}

static void test_refused(void)
{
    CHECK_ERR(read_text("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n"),
              ADIA_ERR_PARSE, "v.mtx:2: a vector file must have one column (2 x 3 given)");
    CHECK_ERR(read_text("%%MatrixMarket matrix coordinate real general\n1 3 1\n1 1 1\n"),
              ADIA_ERR_PARSE, "v.mtx:2: a vector file must have one column (1 x 3 given)");
    CHECK_ERR(read_text("%%MatrixMarket matrix array real general\n%\n2 3\n1\n"),
              ADIA_ERR_PARSE, "v.mtx:3: a vector file must have one column or one row (2 x 3 given)");
    CHECK_ERR(read_text("%%MatrixMarket matrix array real symmetric\n1 1\n1\n"),
              ADIA_ERR_PARSE, "v.mtx:1: a vector file must be general (symmetric given)");
    CHECK_ERR(read_text("%%MatrixMarket matrix array complex general\n2 1\n1 0\n2 0\n"),
              ADIA_ERR_UNSUPPORTED, "v.mtx:1: complex matrices are not supported");
    CHECK_ERR(read_text("%%MatrixMarket matrix array real general\n3 1\n1\n2\n"),
              ADIA_ERR_PARSE, "v.mtx:4: file ends after 2 of 3 entries");
    CHECK_ERR(read_text("%%MatrixMarket matrix coordinate real general\n3 1 1\n4 1 1\n"),
              ADIA_ERR_PARSE, "v.mtx:3: row index out of range 1..3 (4)");
    CHECK_ERR(read_text("%%MatrixMarket matrix array real general\n2 1\n1\nx\n"),
              ADIA_ERR_PARSE, "v.mtx:4: value is not a number (x)");
    int32_t n;
    double *x;
    CHECK_ERR(adia_vector_read_mtx(dir, &n, &x), ADIA_ERR_IO, "is a directory");
    CHECK_ERR(adia_vector_read_mtx("tests/data/none.mtx", &n, &x), ADIA_ERR_IO,
              "tests/data/none.mtx: No such file or directory");
    CHECK_ERR(adia_vector_read_mtx(NULL, &n, &x), ADIA_ERR_INVALID_ARG, "path is NULL");
    /* Truncated gzip: the same verification as for matrices. */
    const char *p = put("t.mtx.gz", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n", 1);
    FILE *f = fopen(p, "r+b");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    CHECK(truncate(p, len - 5) == 0, "truncate");
    CHECK_ERR(adia_vector_read_mtx(p, &n, &x), ADIA_ERR_PARSE, "t.mtx.gz: truncated gzip data");
}

int main(void)
{
    TEST_BEGIN();
    snprintf(dir, sizeof dir, "/tmp/adia-vec-XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    test_values();
    test_refused();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "removing %s", dir);
    return TEST_END();
}
