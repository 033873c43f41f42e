/* test_mmio_errors.c -- every kind of bad input gets its own CHECK_ERR:
 * the status code and the "FILE:LINE: what (value)" message.  Inputs are
 * in-memory strings (named t.mtx), tests/data/bad_* files, and corrupted
 * binary files written here. */
#define _POSIX_C_SOURCE 200809L  /* truncate */
#include "testutil.h"

#include <omp.h>
#include <string.h>
#include <unistd.h>

#define HDR "%%MatrixMarket matrix coordinate real general\n"
#define SYM "%%MatrixMarket matrix coordinate real symmetric\n"

/* Parse text; a failure must leave *out NULL (no partial matrix). */
static adia_status parse(const char *text)
{
    adia_matrix *A = (adia_matrix *)&A;   /* poison: must be overwritten */
    adia_status s = adia_matrix_parse_mtx(text, strlen(text), "t.mtx", &A);
    CHECK(s == ADIA_OK || A == NULL, "failed parse left a matrix behind");
    if (s == ADIA_OK) adia_matrix_destroy(A);
    return s;
}

static adia_status read_file(const char *path)
{
    adia_matrix *A = NULL;
    adia_status s = adia_matrix_load(path, &A);
    adia_matrix_destroy(A);
    return s;
}

static void test_header(void)
{
    CHECK_ERR(parse(""), ADIA_ERR_PARSE, "t.mtx:1: empty file");
    CHECK_ERR(parse("3 3 1\n1 1 1\n"), ADIA_ERR_PARSE, "t.mtx:1: missing %%MatrixMarket banner (3)");
    CHECK_ERR(parse("\n" HDR), ADIA_ERR_PARSE, "t.mtx:1: missing %%MatrixMarket banner (empty line)");
    CHECK_ERR(parse("%%MatrixMarket tensor coordinate real general\n1 1 0\n"), ADIA_ERR_PARSE,
              "t.mtx:1: object must be \"matrix\" (tensor)");
    CHECK_ERR(parse("%%MatrixMarket vector coordinate real general\n1 1 0\n"), ADIA_ERR_UNSUPPORTED,
              "t.mtx:1: object must be \"matrix\" (vector)");
    CHECK_ERR(parse("%%MatrixMarket matrix coord real general\n1 1 0\n"), ADIA_ERR_PARSE,
              "t.mtx:1: unknown format (coord)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate float general\n1 1 0\n"), ADIA_ERR_PARSE,
              "t.mtx:1: unknown field (float)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate real upper\n1 1 0\n"), ADIA_ERR_PARSE,
              "t.mtx:1: unknown symmetry (upper)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate real\n1 1 0\n"), ADIA_ERR_PARSE,
              "t.mtx:1: header lacks the symmetry");
    CHECK_ERR(parse("%%MatrixMarket matrix\n1 1 0\n"), ADIA_ERR_PARSE,
              "t.mtx:1: header lacks the format");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate real general extra\n1 1 0\n"),
              ADIA_ERR_PARSE, "t.mtx:1: extra text in header (extra)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"),
              ADIA_ERR_UNSUPPORTED, "t.mtx:1: complex matrices are not supported");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n"),
              ADIA_ERR_UNSUPPORTED, "complex matrices are not supported");
    CHECK_ERR(parse("%%MatrixMarket matrix array pattern general\n1 1\n"), ADIA_ERR_PARSE,
              "t.mtx:1: pattern is only allowed");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n"),
              ADIA_ERR_PARSE, "t.mtx:1: pattern is only allowed");
}

static void test_size_line(void)
{
    CHECK_ERR(parse(HDR "% only comments\n\n"), ADIA_ERR_PARSE,
              "t.mtx:3: file ends before the size line");
    CHECK_ERR(parse(HDR), ADIA_ERR_PARSE, "t.mtx:1: file ends before the size line");
    CHECK_ERR(parse(HDR "3 x 1\n"), ADIA_ERR_PARSE, "t.mtx:2: column count is not an integer (x)");
    CHECK_ERR(parse(HDR "3 3\n"), ADIA_ERR_PARSE, "t.mtx:2: size line lacks entry count");
    CHECK_ERR(parse(HDR "-3 3 1\n"), ADIA_ERR_PARSE, "t.mtx:2: negative row count (-3)");
    CHECK_ERR(parse(HDR "3000000000 3 1\n"), ADIA_ERR_OVERFLOW,
              "t.mtx:2: row count too large, at most 2147483647 (3000000000)");
    CHECK_ERR(parse(HDR "3 3 99999999999999999999\n"), ADIA_ERR_OVERFLOW,
              "t.mtx:2: entry count too large");
    CHECK_ERR(parse(HDR "2 2 5\n"), ADIA_ERR_PARSE, "t.mtx:2: 5 entries declared but a 2 x 2");
    CHECK_ERR(parse(HDR "3 3 1 7\n1 1 1\n"), ADIA_ERR_PARSE,
              "t.mtx:2: extra text after the size line's numbers (7)");
    CHECK_ERR(parse(SYM "3 4 1\n1 1 1\n"), ADIA_ERR_PARSE, "t.mtx:2: a symmetric or "
              "skew-symmetric matrix must be square (3 x 4)");
    /* An absurd declared count with a tiny body: refused as truncated, and
     * nothing is allocated from the declared count (fuzz/ASan checks). */
    CHECK_ERR(parse(HDR "1000000 1000000 1000000000000\n1 1 1\n"), ADIA_ERR_PARSE,
              "t.mtx:3: file ends after 1 of 1000000000000 entries");
}

static void test_entries(void)
{
    CHECK_ERR(parse(HDR "3 3 3\n1 1 1\n2 2 2\n"), ADIA_ERR_PARSE,
              "t.mtx:4: file ends after 2 of 3 entries");
    CHECK_ERR(parse(HDR "3 3 1\n1 1 1\n2 2 2\n"), ADIA_ERR_PARSE,
              "t.mtx:4: too many entries: the size line declares 1");
    CHECK_ERR(parse(HDR "3 3 1\n0 1 1\n"), ADIA_ERR_PARSE, "t.mtx:3: row index out of range 1..3 (0)");
    CHECK_ERR(parse(HDR "3 3 1\n1 4 1\n"), ADIA_ERR_PARSE,
              "t.mtx:3: column index out of range 1..3 (4)");
    CHECK_ERR(parse(HDR "3 3 1\n-1 1 1\n"), ADIA_ERR_PARSE, "t.mtx:3: row index out of range 1..3 (-1)");
    CHECK_ERR(parse(HDR "3 3 1\n99999999999999999999 1 1\n"), ADIA_ERR_PARSE,
              "t.mtx:3: row index out of range 1..3 (99999999999999999999)");
    CHECK_ERR(parse(HDR "3 3 1\na 1 1\n"), ADIA_ERR_PARSE, "t.mtx:3: row index is not an integer (a)");
    CHECK_ERR(parse(HDR "3 3 1\n1.0 1 1\n"), ADIA_ERR_PARSE, "t.mtx:3: row index is not an integer (1.0)");
    CHECK_ERR(parse(HDR "3 3 1\n1\n"), ADIA_ERR_PARSE, "t.mtx:3: missing column index (end of line)");
    CHECK_ERR(parse(HDR "3 3 1\n1 1 abc\n"), ADIA_ERR_PARSE, "t.mtx:3: value is not a number (abc)");
    CHECK_ERR(parse(HDR "3 3 1\n1 1 1.0x\n"), ADIA_ERR_PARSE, "t.mtx:3: value is not a number (1.0x)");
    CHECK_ERR(parse(HDR "3 3 1\n1 1\n"), ADIA_ERR_PARSE, "t.mtx:3: missing value (end of line)");
    CHECK_ERR(parse(HDR "3 3 1\r\n1 1\r\n"), ADIA_ERR_PARSE, "t.mtx:3: missing value");
    CHECK_ERR(parse(HDR "3 3 1\n1 1 1.0 x\n"), ADIA_ERR_PARSE, "t.mtx:3: extra text after the entry (x)");
    CHECK_ERR(parse(HDR "3 3 2\n1 1 1\n\n\n2 2 2 2\n"), ADIA_ERR_PARSE,
              "t.mtx:6: extra text after the entry (2)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n"),
              ADIA_ERR_PARSE, "t.mtx:3: extra text after the entry (1)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n"),
              ADIA_ERR_PARSE, "t.mtx:3: value is not an integer (1.5)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 "
                    "99999999999999999999\n"),
              ADIA_ERR_PARSE, "t.mtx:3: integer value out of range (99999999999999999999)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1.5\n"),
              ADIA_ERR_PARSE, "t.mtx:3: diagonal entry in a skew-symmetric matrix (1.5 at 2,2)");
    CHECK_ERR(parse("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n3 3 0\n"),
              ADIA_ERR_PARSE, "t.mtx:4: diagonal entry in a skew-symmetric matrix (0 at 3,3)");
    const char nul[] = HDR "3 3 1\n1 1 1\0\n";
    adia_matrix *A = NULL;
    CHECK_ERR(adia_matrix_parse_mtx(nul, sizeof nul - 1, "t.mtx", &A), ADIA_ERR_PARSE,
              "t.mtx:3: value is not a number (1?)");
}

static void test_array(void)
{
    CHECK_ERR(parse("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n"), ADIA_ERR_PARSE,
              "t.mtx:5: file ends after 3 of 4 entries");
    CHECK_ERR(parse("%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n"), ADIA_ERR_PARSE,
              "t.mtx:5: too many entries: the size line declares 2");
    CHECK_ERR(parse("%%MatrixMarket matrix array real general\n1 2\n1 2\n"), ADIA_ERR_PARSE,
              "t.mtx:3: extra text after the entry (2)");
    CHECK_ERR(parse("%%MatrixMarket matrix array real general\n2 2 4\n"), ADIA_ERR_PARSE,
              "t.mtx:2: extra text after the size line's numbers (4)");
    CHECK_ERR(parse("%%MatrixMarket matrix array real symmetric\n2 3\n"), ADIA_ERR_PARSE,
              "t.mtx:2: a symmetric or skew-symmetric matrix must be square");
}

static void test_files(void)
{
    CHECK_ERR(read_file("tests/data/no_such_file.mtx"), ADIA_ERR_IO,
              "tests/data/no_such_file.mtx: No such file or directory");
    CHECK_ERR(read_file("tests/data/bad_truncated.mtx"), ADIA_ERR_PARSE,
              "tests/data/bad_truncated.mtx:5: file ends after 2 of 3 entries");
    CHECK_ERR(read_file("tests/data/bad_index.mtx"), ADIA_ERR_PARSE,
              "tests/data/bad_index.mtx:4: column index out of range 1..3 (4)");
    CHECK_ERR(read_file("tests/data/bad_value.mtx"), ADIA_ERR_PARSE,
              "tests/data/bad_value.mtx:4: value is not a number (two)");
    CHECK_ERR(read_file("tests/data/bad_header.mtx"), ADIA_ERR_PARSE,
              "tests/data/bad_header.mtx:1: unknown symmetry (genral)");
    CHECK_ERR(read_file("tests/data/bad_junk.mtx"), ADIA_ERR_PARSE,
              "tests/data/bad_junk.mtx:4: extra text after the entry (junk)");
    CHECK_ERR(read_file("tests/data/bad_toomany.mtx"), ADIA_ERR_PARSE,
              "tests/data/bad_toomany.mtx:4: too many entries");
    CHECK_ERR(read_file("tests/data/bad_gzip.mtx.gz"), ADIA_ERR_IO,
              "tests/data/bad_gzip.mtx.gz: gzip data is corrupt");
}

/* Write a valid binary file, then damage one 8-byte field or cut it. */
static void write_damaged(const char *path, const adia_matrix *A, long at, int64_t value,
                          long cut)
{
    CHECK_OK(adia_matrix_write_bin(A, path));
    FILE *f = fopen(path, "r+b");
    if (!f) return;
    if (at >= 0) {
        fseek(f, at, SEEK_SET);
        fwrite(&value, 8, 1, f);   /* the tests run on little-endian hosts */
    }
    fclose(f);
    if (cut >= 0) CHECK(truncate(path, cut) == 0, "truncate %s", path);
}

static void test_binary(void)
{
    const char *p = "build-test-bad.bin";
    const double a[] = {1, 0, 2, 0, 3, 0, 4, 0, 5};
    adia_matrix *A = test_dense_matrix(3, 3, a);
    CHECK_ERR(adia_matrix_read_bin("tests/data/general.mtx", &(adia_matrix *){NULL}),
              ADIA_ERR_PARSE, "tests/data/general.mtx: not an adia binary file");
    /* a wrong magic number is named as one (it was "missing %%MatrixMarket
     * banner (ADIABIN2...)"), by adia_matrix_load and adia_matrix_read_bin */
    int64_t magic;
    memcpy(&magic, "ADIABIN2", 8);
    write_damaged(p, A, 0, magic, -1);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "build-test-bad.bin: not an adia binary file of this "
              "version: magic number 'ADIABIN2' (41 44 49 41 42 49 4e 32), this build reads ADIABIN1");
    CHECK_ERR(adia_matrix_read_bin(p, &(adia_matrix *){NULL}), ADIA_ERR_PARSE,
              "magic number 'ADIABIN2'");
    memcpy(&magic, "XDIABIN1", 8);
    write_damaged(p, A, 0, magic, -1);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "build-test-bad.bin: not an adia binary file: its "
              "magic number (the first 8 bytes) is 'XDIABIN1' (58 44 49 41 42 49 4e 31), not "
              "ADIABIN1, and binary data is no Matrix Market file either");
    CHECK(!test_contains(adia_last_error(), "banner"), "still the banner: %s", adia_last_error());
    memcpy(&magic, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    write_damaged(p, A, 0, magic, -1);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "is '........' (01 02 03 04 05 06 07 08), not ADIABIN1");
    write_damaged(p, A, 8, 2, -1);
    CHECK_ERR(read_file(p), ADIA_ERR_UNSUPPORTED, "build-test-bad.bin: binary format version 2");
    write_damaged(p, A, 16, -5, -1);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "corrupt header: rows -5");
    write_damaged(p, A, 32, INT64_MAX / 4, -1);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "corrupt header: nnz 2305843009213693951 exceeds 3 x 3");
    write_damaged(p, A, 32, 4, -1);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "build-test-bad.bin: file has 132 bytes, the header "
              "implies 120");
    write_damaged(p, A, -1, 0, 100);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "file has 100 bytes, the header implies 132");
    write_damaged(p, A, -1, 0, 20);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "binary file ends inside the header");
    write_damaged(p, A, 40 + 8, 7, -1);   /* rowptr[1] = 7 > rowptr[2] */
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "corrupt binary matrix: csr: row 0 pointers 0..7 not monotone");
    /* colind[0] = 9 (out of range): first int32 after rowptr[4]. */
    write_damaged(p, A, 40 + 32, 9 | ((int64_t)2 << 32), -1);
    CHECK_ERR(read_file(p), ADIA_ERR_PARSE, "corrupt binary matrix: csr: row 0 column 9 out of range");
    remove(p);
    adia_matrix_destroy(A);
}

/* Overwrite n bytes at byte offset at of the file path. */
static void patch(const char *path, long at, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f && fseek(f, at, SEEK_SET) == 0 && fwrite(bytes, 1, n, f) == n, "patch %s at %ld",
          path, at);
    if (f) fclose(f);
}

/* Read path with 1 thread and with 4: the same status and message, which
 * holds want (the first broken row in row order, whichever thread found
 * which broken row first). */
static void check_both(const char *path, const char *want)
{
    int saved = omp_get_max_threads();
    char first[512] = "";
    for (int t = 1; t <= 4; t += 3) {
        omp_set_num_threads(t);
        CHECK_ERR(read_file(path), ADIA_ERR_PARSE, want);
        if (t == 1) snprintf(first, sizeof first, "%s", adia_last_error());
        else CHECK(!strcmp(first, adia_last_error()), "1 thread: %s; 4 threads: %s", first,
                   adia_last_error());
    }
    omp_set_num_threads(saved);
}

/* A large binary file (160000 rows in 10 blocks of the threaded check,
 * 11 MB in two chunks of the threaded read) damaged in several places:
 * the message names the first broken row, with 1 thread and with 4. */
static void test_binary_threads(void)
{
    const char *p = "build-test-bad-threads.bin";
    adia_matrix *A = test_generate("lap2d5:400");
    adia_csr_view v;
    if (!A || adia_matrix_csr(A, &v) != ADIA_OK) return;
    const long ptr0 = 40, col0 = 40 + 8 * ((long)v.rows + 1);
    const int64_t huge = v.nnz + 5;
    const int32_t far = 1 << 30, last = v.rows - 1;
    char want[256];
    /* a row pointer past nnz in the middle, a column out of range at the end */
    CHECK_OK(adia_matrix_write_bin(A, p));
    patch(p, ptr0 + 8 * 100000, &huge, 8);
    patch(p, col0 + 4 * (long)(v.nnz - 1), &far, 4);
    snprintf(want, sizeof want, "build-test-bad-threads.bin: corrupt binary matrix: csr: row 99999 "
             "pointers %lld..%lld not monotone within 0..%lld", (long long)v.rowptr[99999],
             (long long)huge, (long long)v.nnz);
    check_both(p, want);
    /* the column at the end alone: the last row */
    CHECK_OK(adia_matrix_write_bin(A, p));
    patch(p, col0 + 4 * (long)(v.nnz - 1), &far, 4);
    snprintf(want, sizeof want, "csr: row %d column %d out of range 0..%d", (int)last, (int)far,
             (int)last);
    check_both(p, want);
    /* a repeated column early (row 5000), a broken pointer late (row 150000) */
    CHECK_OK(adia_matrix_write_bin(A, p));
    const int64_t k = v.rowptr[5000] + 1;
    patch(p, col0 + 4 * (long)k, &v.colind[k - 1], 4);
    patch(p, ptr0 + 8 * 150001, &(int64_t){-3}, 8);
    snprintf(want, sizeof want, "csr: row 5000 columns not sorted/unique (%d after %d)",
             (int)v.colind[k - 1], (int)v.colind[k - 1]);
    check_both(p, want);
    /* cut short after the header check: as "file has N bytes" before */
    CHECK_OK(adia_matrix_write_bin(A, p));
    CHECK(truncate(p, col0 + 100) == 0, "truncate %s", p);
    check_both(p, "the header implies");
    remove(p);
    adia_matrix_destroy(A);
}

/* The fuzzer's find (2026-11-27): CRLF lines and a size line padded with
 * 190 zeros declaring 972903087 rows; under a budget the read is refused
 * with the figure before the 7.8 GB of row pointers are asked for. */
static void test_padded_size_budget(void)
{
    char text[512];
    int n = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\r\n"
                     "%% comment\r\n\r\n");
    for (int i = 0; i < 190; i++) text[n++] = '0';
    n += snprintf(text + n, sizeof text - n, "972903087 3 3\n1 1 1\n2 2 2\n3 3 3\n");
    CHECK_OK(adia_set_memory_budget((int64_t)512 << 20));
    adia_matrix *A = NULL;
    CHECK_ERR(adia_matrix_parse_mtx(text, (size_t)n, "t.mtx", &A), ADIA_ERR_NO_MEMORY,
              "needs 7.8 GB");
    CHECK(A == NULL, "no matrix on error");
    CHECK_OK(adia_set_memory_budget(0));
}

int main(void)
{
    TEST_BEGIN();
    test_header();
    test_size_line();
    test_entries();
    test_array();
    test_files();
    test_binary();
    test_binary_threads();
    test_padded_size_budget();
    return TEST_END();
}
