/* test_read_stream.c -- the streaming reader: chunk boundaries anywhere
 * (tiny chunks give the same matrix and the same error lines), gzip
 * verified (truncation, CRC, length, trailing garbage, concatenated
 * members, detection by content), the memory budget checked from the
 * header, directories, symmetric files given in either triangle but not
 * both, the duplicate policy per field, CR-only line ends and a BOM. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp, truncate */
#include "testutil.h"
#include "io/source.h"

#include <omp.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define HDR "%%MatrixMarket matrix coordinate real general\n"
#define SYM "%%MatrixMarket matrix coordinate real symmetric\n"

static char dir[64];

static const char *tmp_path(const char *name)
{
    static char path[4][128];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "writing %s", path);
}

/* Whole file into a malloc'd buffer. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = malloc(1 << 20);
    *n = f ? fread(b, 1, 1 << 20, f) : 0;
    if (f) fclose(f);
    return b;
}

/* text gzip-compressed into path as `members` concatenated gzip members. */
static void write_gzip(const char *path, const char *text, int members)
{
    FILE *f = fopen(path, "wb");
    size_t len = strlen(text), at = 0;
    for (int m = 0; m < members; m++) {
        size_t part = m + 1 == members ? len - at : len / (size_t)members;
        unsigned char out[1 << 16];
        z_stream z;
        memset(&z, 0, sizeof z);
        deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        z.next_in = (unsigned char *)text + at;
        z.avail_in = (uInt)part;
        z.next_out = out;
        z.avail_out = sizeof out;
        CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
        fwrite(out, 1, sizeof out - z.avail_out, f);
        deflateEnd(&z);
        at += part;
    }
    fclose(f);
}

static adia_status load(const char *path, adia_matrix **A)
{
    *A = NULL;
    adia_status s = adia_matrix_load(path, A);
    CHECK(s == ADIA_OK || *A == NULL, "failed load left a matrix behind");
    return s;
}

static adia_status parse(const char *text)
{
    adia_matrix *A = NULL;
    adia_status s = adia_matrix_parse_mtx(text, strlen(text), "t.mtx", &A);
    adia_matrix_destroy(A);
    return s;
}

/* A text of n x n with entries on three diagonals, comments and blank
 * lines sprinkled in. */
static char *test_text(int32_t n)
{
    char *t = malloc((size_t)n * 120 + 256), *p = t;
    p += sprintf(p, "%s%% a comment\n%d %d %d\n", HDR, n, n, 3 * n - 2);
    for (int32_t i = 1; i <= n; i++) {
        if (i % 7 == 0) p += sprintf(p, "\n%% comment %d\n", i);
        p += sprintf(p, "%d %d %d.25\n", i, i, i);
        if (i > 1) p += sprintf(p, "%d %d -%d\r\n%d %d 1e-3\n", i, i - 1, i, i - 1, i);
    }
    return t;
}

static void test_chunks(void)
{
    char *t = test_text(2000);
    const char *plain = tmp_path("c.mtx"), *gz = tmp_path("c.mtx.gz");
    write_bytes(plain, t, strlen(t));
    write_gzip(gz, t, 1);
    adia_matrix *E = NULL, *A = NULL;
    CHECK_OK(adia_matrix_parse_mtx(t, strlen(t), "c", &E));
    size_t sizes[] = {1, 7, 64, 1000};
    for (int i = 0; i < 4; i++) {
        adia__lines_set_chunk(sizes[i]);
        CHECK_OK(load(plain, &A));
        CHECK(adia_matrix_equal(A, E), "chunk %zu: plain file differs", sizes[i]);
        adia_matrix_destroy(A);
        CHECK_OK(load(gz, &A));
        CHECK(adia_matrix_equal(A, E), "chunk %zu: gzip file differs", sizes[i]);
        adia_matrix_destroy(A);
        CHECK_OK(adia_matrix_parse_mtx(t, strlen(t), "c", &A));
        CHECK(adia_matrix_equal(A, E), "chunk %zu: text in memory differs", sizes[i]);
        adia_matrix_destroy(A);
    }
    /* An error's line number wherever the chunks are cut. */
    char *bad = strstr(t, "\n1500 1500 ");
    memcpy(bad + 1, "15x0", 4);
    int64_t line = 1;
    for (char *q = t; q <= bad; q++) line += *q == '\n';
    char needle[96];
    snprintf(needle, sizeof needle, "c.mtx:%lld: row index is not an integer (15x0)",
             (long long)line);
    write_bytes(plain, t, strlen(t));
    for (int i = 0; i < 4; i++) {
        adia__lines_set_chunk(sizes[i]);
        CHECK_ERR(load(plain, &A), ADIA_ERR_PARSE, needle);
    }
    adia__lines_set_chunk(0);
    adia_matrix_destroy(E);
    free(t);
}

static void test_gzip(void)
{
    char *t = test_text(300);
    const char *gz = tmp_path("g.mtx.gz"), *cut = tmp_path("cut.mtx.gz");
    adia_matrix *E = NULL, *A = NULL;
    CHECK_OK(adia_matrix_parse_mtx(t, strlen(t), "g", &E));
    write_gzip(gz, t, 3);   /* concatenated members are one stream */
    CHECK_OK(load(gz, &A));
    CHECK(adia_matrix_equal(A, E), "three gzip members read fully");
    adia_matrix_destroy(A);
    size_t n;
    unsigned char *z = slurp(gz, &n);
    size_t cuts[] = {2, 10, n / 2, n - 8, n - 4, n - 1};   /* 8: CRC + length trailer */
    for (int i = 0; i < 6; i++) {
        write_bytes(cut, z, cuts[i]);
        CHECK_ERR(load(cut, &A), ADIA_ERR_PARSE, "cut.mtx.gz: truncated gzip data (after");
    }
    write_gzip(gz, t, 1);
    free(z);
    z = slurp(gz, &n);
    z[n - 6] ^= 1;   /* a CRC byte */
    write_bytes(cut, z, n);
    CHECK_ERR(load(cut, &A), ADIA_ERR_PARSE, "cut.mtx.gz: gzip CRC mismatch");
    z[n - 6] ^= 1;
    z[n - 2] ^= 1;   /* a length byte */
    write_bytes(cut, z, n);
    CHECK_ERR(load(cut, &A), ADIA_ERR_PARSE, "cut.mtx.gz: gzip length mismatch");
    z[n - 2] ^= 1;
    memcpy(z + n, "junk", 4);
    write_bytes(cut, z, n + 4);
    CHECK_ERR(load(cut, &A), ADIA_ERR_PARSE, "cut.mtx.gz: trailing garbage after gzip data");
    /* Detected by content: a gzip file named .mtx, a plain file named .gz. */
    const char *odd = tmp_path("odd.mtx");
    write_bytes(odd, z, n);
    CHECK_OK(load(odd, &A));
    CHECK(adia_matrix_equal(A, E), "gzip content under a .mtx name");
    adia_matrix_destroy(A);
    write_bytes(cut, t, strlen(t));
    CHECK_OK(load(cut, &A));
    CHECK(adia_matrix_equal(A, E), "plain content under a .gz name");
    adia_matrix_destroy(A);
    /* Binary files through gzip: the same checks. */
    const char *bin = tmp_path("b.bin.gz");
    CHECK_OK(adia_matrix_write_bin(E, bin));
    free(z);
    z = slurp(bin, &n);
    write_bytes(bin, z, n - 3);
    CHECK_ERR(load(bin, &A), ADIA_ERR_PARSE, "b.bin.gz: truncated gzip data (after");
    memcpy(z + n, "\0\0", 2);
    write_bytes(bin, z, n + 2);
    CHECK_ERR(load(bin, &A), ADIA_ERR_PARSE, "b.bin.gz: trailing garbage after gzip data");
    z[n - 7] ^= 0x40;
    write_bytes(bin, z, n);
    CHECK_ERR(load(bin, &A), ADIA_ERR_PARSE, "b.bin.gz: gzip CRC mismatch");
    free(z);
    adia_matrix_destroy(E);
    free(t);
}

/* A gzip file cut at 3/4, over 1 MB chunks: the next chunk is inflated
 * by one thread while the others parse, and its error (in that thread)
 * is what the read reports -- unless an earlier line is bad: then that
 * line's error, in file order. */
static void test_gzip_overlap(void)
{
    char *t = test_text(60000);
    size_t len = strlen(t);
    const char *gz = tmp_path("big.mtx.gz");
    int64_t line = 1;
    char *bad = strstr(t, "\n6000 6000 ");
    for (char *q = t; q <= bad; q++) line += *q == '\n';
    char needle[96];
    snprintf(needle, sizeof needle, "big.mtx.gz:%lld: row index is not an integer (60x0)",
             (long long)line);
    for (int broken = 0; broken < 2; broken++) {
        if (broken) memcpy(bad + 1, "60x0", 4);
        gzFile f = gzopen(gz, "wb");
        CHECK(f && gzwrite(f, t, (unsigned)len) == (int)len && gzclose(f) == Z_OK, "gzip %s", gz);
        FILE *g = fopen(gz, "rb");
        fseek(g, 0, SEEK_END);
        long n = ftell(g);
        fclose(g);
        CHECK(len > (3u << 20) && truncate(gz, n * 3 / 4) == 0, "cutting %s", gz);
        adia__lines_set_chunk(1 << 20);
        for (int threads = 1; threads <= 2; threads++) {
            omp_set_num_threads(threads);
            adia_matrix *A = NULL;
            CHECK_ERR(load(gz, &A), ADIA_ERR_PARSE,
                      broken ? needle : "big.mtx.gz: truncated gzip data (after");
        }
    }
    adia__lines_set_chunk(0);
    free(t);
}

static void test_budget(void)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_set_memory_budget((int64_t)1 << 30));
    /* A 72-byte file announcing 2^31-1 x 2^31-1: refused from the header. */
    double t0 = test_seconds();
    CHECK_ERR(parse(HDR "2147483647 2147483647 0\n"), ADIA_ERR_NO_MEMORY,
              "t.mtx:2: reading 2147483647 x 2147483647 with 0 entries declared (row pointers "
              "17179869184 bytes) needs 17.2 GB, budget 1.1 GB");
    CHECK(test_seconds() - t0 < 5, "the refusal took %.1f s", test_seconds() - t0);
    /* The declared entries count where the data could hold them. */
    CHECK_ERR(parse(HDR "1000 1000 1000000\n"), ADIA_ERR_PARSE, "t.mtx:2: file ends after 0 of 1000000");
    const char *gz = tmp_path("big.mtx.gz");
    write_gzip(gz, HDR "1000000 1000000 100000000\n1 1 1\n", 1);
    CHECK_ERR(load(gz, &A), ADIA_ERR_NO_MEMORY, "big.mtx.gz:2: reading 1000000 x 1000000 with "
              "100000000 entries declared");
    /* Binary: the header's sizes, before anything is allocated. */
    unsigned char head[40] = "ADIABIN1\1";
    head[16] = 0xff, head[17] = 0xff, head[18] = 0xff, head[19] = 0x7f;
    const char *bin = tmp_path("huge.bin");
    write_bytes(bin, head, sizeof head);
    CHECK_ERR(load(bin, &A), ADIA_ERR_PARSE, "huge.bin: file has 40 bytes, the header implies");
    gzFile g = gzopen(tmp_path("huge.bin.gz"), "wb");
    gzwrite(g, head, sizeof head);
    gzclose(g);
    CHECK_ERR(load(tmp_path("huge.bin.gz"), &A), ADIA_ERR_NO_MEMORY,
              "huge.bin.gz: reading a 2147483647 x 0 binary matrix with 0 entries needs 17.2 GB");
    /* Chunks grow only as far as the budget leaves room: with 64 MB chunks
     * (16 threads) the buffers alone (128 MB) and the row pointers (80 MB)
     * passed a budget of 200 MB, which the read fits with smaller chunks. */
    const char *empty = tmp_path("empty.mtx");
    write_bytes(empty, HDR "10000000 10000000 0\n", strlen(HDR "10000000 10000000 0\n"));
    CHECK_OK(adia_set_memory_budget(200000000));
    adia__lines_set_chunk((size_t)64 << 20);
    CHECK_OK(load(empty, &A));
    CHECK(A && adia_matrix_rows(A) == 10000000, "the empty 10^7 x 10^7 matrix");
    adia_matrix_destroy(A);
    A = NULL;
    adia__lines_set_chunk(0);
    CHECK_OK(adia_set_memory_budget(0));
}

static void test_files(void)
{
    adia_matrix *A = NULL;
    CHECK_ERR(load("tests/data", &A), ADIA_ERR_IO, "tests/data: is a directory");
    CHECK_ERR(adia_matrix_read_mtx("tests", &A), ADIA_ERR_IO, "tests: is a directory");
    CHECK_ERR(load(tmp_path("none.mtx"), &A), ADIA_ERR_IO, "none.mtx: No such file or directory");
    CHECK_ERR(load("tests/data/bad_bom.mtx", &A), ADIA_ERR_PARSE,
              "tests/data/bad_bom.mtx:1: starts with a UTF-8 byte-order mark");
    CHECK_ERR(load("tests/data/bad_cr_only.mtx", &A), ADIA_ERR_PARSE,
              "tests/data/bad_cr_only.mtx:1: line ends are CR only (old Mac): convert with");
    CHECK_ERR(load("tests/data/bad_both_triangles.mtx", &A), ADIA_ERR_PARSE,
              "tests/data/bad_both_triangles.mtx:8: entry (1,2) is also given as (2,1) on line 4");
    CHECK_ERR(parse(HDR "2 2 2\n1 1 1\r2 2 2\r"), ADIA_ERR_PARSE,
              "t.mtx:3: line ends are CR only (old Mac)");
    CHECK_OK(parse(HDR "2 2 2\r\n1 1 1\r\n2 2 2\r\n"));
}

/* The dense 2 x 2 matrix text parses to. */
static void check_2x2(const char *text, double a, double b, double c, double d, int64_t nnz)
{
    adia_matrix *A = NULL;
    const double want[] = {a, b, c, d};
    adia_matrix *E = test_dense_matrix(2, 2, want);
    CHECK_OK(adia_matrix_parse_mtx(text, strlen(text), "t.mtx", &A));
    CHECK(A && adia_matrix_equal(A, E) && adia_matrix_nnz(A) == nnz, "%s", text);
    adia_matrix_destroy(A);
    adia_matrix_destroy(E);
}

static void test_triangles_and_duplicates(void)
{
    check_2x2(SYM "2 2 2\n1 2 5\n2 2 1\n", 0, 5, 5, 1, 3);    /* upper triangle given */
    check_2x2(SYM "2 2 2\n2 1 5\n2 1 1\n", 0, 6, 6, 0, 2);    /* same triangle twice: summed */
    check_2x2("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 2 5\n",
              0, 5, -5, 0, 2);
    check_2x2(HDR "2 2 3\n1 1 1.5\n2 1 1\n1 1 2\n", 3.5, 0, 1, 0, 2);
    check_2x2("%%MatrixMarket matrix coordinate integer general\n2 2 2\n2 2 7\n2 2 -3\n",
              0, 0, 0, 4, 1);
    check_2x2("%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 2\n1 2\n2 1\n",
              0, 1, 1, 0, 2);                                  /* pattern: kept once */
    check_2x2("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n2 1\n2 1\n",
              0, 1, 1, 0, 2);
    CHECK_ERR(parse(SYM "3 3 3\n2 1 1\n3 3 1\n1 2 5\n"), ADIA_ERR_PARSE,
              "t.mtx:5: entry (1,2) is also given as (2,1) on line 3");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n3 1\n\n1 3\n"),
              ADIA_ERR_PARSE, "t.mtx:5: entry (1,3) is also given as (3,1) on line 3");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n1 3 1\n3 1 -1\n"),
              ADIA_ERR_PARSE, "t.mtx:4: entry (3,1) is also given as (1,3) on line 3");
}

int main(void)
{
    TEST_BEGIN();
    snprintf(dir, sizeof dir, "/tmp/adia-read-XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    test_chunks();
    test_gzip();
    test_gzip_overlap();
    test_budget();
    test_files();
    test_triangles_and_duplicates();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "removing %s", dir);
    return TEST_END();
}
