/* test_read_order.c -- general coordinate files whose entries come row by
 * row are built into the matrix during the parse (src/io/mtx_csr.h); any
 * other order goes through the triplet blocks.  Both give the matrix of
 * adia_matrix_create_coo on the same triplets, whatever the chunk size,
 * the thread count and the place where the order breaks: row-ordered with
 * sorted columns, row-ordered with shuffled columns and duplicates, broken
 * after most of the file, shuffled; real, integer and pattern fields; rows
 * of the matrix (adia_matrix_read_mtx_rows); and errors at the same lines
 * (bad tokens, too many entries, truncation) in both paths. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include "testutil.h"
#include "io/source.h"

#include <omp.h>
#include <string.h>
#include <unistd.h>

enum { R = 20000, C = 3000, PER_ROW = 9 };

typedef enum order { SORTED, SHUFFLED_COLS, BROKEN, SHUFFLED } order;
static const char *order_name[] = {"sorted", "shuffled columns", "broken", "shuffled"};
static const char *field_name[] = {"real", "integer", "pattern"};

typedef struct entries {
    int64_t n;
    int32_t *r, *c;
    double *v;
} entries;

static void swap_entries(entries *e, int64_t a, int64_t b)
{
    int32_t r = e->r[a], c = e->c[a];
    double v = e->v[a];
    e->r[a] = e->r[b], e->c[a] = e->c[b], e->v[a] = e->v[b];
    e->r[b] = r, e->c[b] = c, e->v[b] = v;
}

/* PER_ROW entries a row (R x C), in the order asked for; every order but
 * SORTED has duplicates (about one entry in 20 repeats a column). */
static entries make_entries(order o, int field, uint64_t seed)
{
    entries e = {(int64_t)R * PER_ROW, NULL, NULL, NULL};
    e.r = malloc((size_t)e.n * sizeof *e.r);
    e.c = malloc((size_t)e.n * sizeof *e.c);
    e.v = malloc((size_t)e.n * sizeof *e.v);
    int64_t k = 0;
    for (int32_t i = 0; i < R; i++)
        for (int j = 0; j < PER_ROW; j++, k++) {
            e.r[k] = i;
            e.c[k] = (int32_t)((i * 7 + j * (C / PER_ROW)) % C);
            if (o != SORTED && test_rand(&seed) > 0.9 && j) e.c[k] = e.c[k - 1];
            double x = test_rand(&seed);
            e.v[k] = field == 0 ? x : field == 1 ? (double)(int)(x * 1000) : 1.0;
        }
    if (o == SORTED) {   /* columns increasing in each row */
        for (int64_t b = 0; b < e.n; b += PER_ROW)
            for (int64_t a = b + 1; a < b + PER_ROW; a++)
                for (int64_t m = a; m > b && e.c[m - 1] > e.c[m]; m--) swap_entries(&e, m, m - 1);
    }
    for (int64_t a = 0; o == SHUFFLED_COLS && a < e.n; a += PER_ROW)
        swap_entries(&e, a, a + (int64_t)((test_rand(&seed) + 1) * PER_ROW / 2));
    if (o == BROKEN) swap_entries(&e, e.n * 3 / 4, e.n / 3);   /* an early row late */
    for (int64_t a = e.n - 1; o == SHUFFLED && a > 0; a--)
        swap_entries(&e, a, (int64_t)((test_rand(&seed) + 1) / 2 * (double)(a + 1)) % (a + 1));
    return e;
}

static char *make_text(const entries *e, int field, int64_t declared, size_t *len)
{
    char *t = malloc((size_t)e->n * 40 + 256), *p = t;
    p += sprintf(p, "%%%%MatrixMarket matrix coordinate %s general\n%% order test\n%d %d %lld\n",
                 field_name[field], R, C, (long long)declared);
    for (int64_t k = 0; k < e->n; k++) {
        p += sprintf(p, "%d %d", e->r[k] + 1, e->c[k] + 1);
        if (field == 0) p += sprintf(p, " %.17g\n", e->v[k]);
        else if (field == 1) p += sprintf(p, " %d\n", (int)e->v[k]);
        else *p++ = '\n';
        if (k % 1000 == 999) p += sprintf(p, "%% a comment\n\n");
    }
    *len = (size_t)(p - t);
    return t;
}

/* What the file means: duplicates summed in file order, or (pattern) one
 * entry of value 1 per position. */
static adia_matrix *expected(const entries *e, int field)
{
    adia_matrix *E = NULL;
    if (field != 2) {
        CHECK_OK(adia_matrix_create_coo(R, C, e->n, e->r, e->c, e->v, ADIA_DOUBLE, &E));
        return E;
    }
    unsigned char *seen = calloc((size_t)R * C, 1);
    entries u = {0, malloc((size_t)e->n * sizeof *u.r), malloc((size_t)e->n * sizeof *u.c), NULL};
    for (int64_t k = 0; k < e->n; k++)
        if (!seen[(size_t)e->r[k] * C + e->c[k]]++) {
            u.r[u.n] = e->r[k];
            u.c[u.n++] = e->c[k];
        }
    CHECK_OK(adia_matrix_create_coo(R, C, u.n, u.r, u.c, NULL, ADIA_DOUBLE, &E));
    free(seen);
    free(u.r);
    free(u.c);
    return E;
}

static void free_entries(entries *e)
{
    free(e->r);
    free(e->c);
    free(e->v);
}

static const size_t chunks[] = {0, 3000, 1 << 20};

/* Every order and field, at 1 and 2 threads, default and small chunks
 * (the order then breaks at another place of a block and a chunk). */
static void test_same_matrix(void)
{
    for (int o = SORTED; o <= SHUFFLED; o++)
        for (int field = 0; field < 3; field++) {
            entries e = make_entries((order)o, field, 11 + (uint64_t)o);
            size_t len;
            char *t = make_text(&e, field, e.n, &len);
            adia_matrix *E = expected(&e, field), *A = NULL;
            for (int threads = 1; threads <= 2; threads++)
                for (size_t ch = 0; ch < sizeof chunks / sizeof *chunks; ch++) {
                    omp_set_num_threads(threads);
                    adia__lines_set_chunk(chunks[ch]);
                    CHECK_OK(adia_matrix_parse_mtx(t, len, "order", &A));
                    CHECK(A && adia_matrix_equal(A, E), "%s %s, %d threads, chunk %zu: not the "
                          "matrix of the triplets", order_name[o], field_name[field], threads,
                          chunks[ch]);
                    adia_matrix_destroy(A);
                }
            adia_matrix_destroy(E);
            free_entries(&e);
            free(t);
        }
    adia__lines_set_chunk(0);
    omp_set_num_threads(2);
}

static char dir[64];

static const char *write_text(const char *name, const char *t, size_t len)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(t, 1, len, f) == len && fclose(f) == 0, "writing %s", path);
    return path;
}

/* Rows of a row-ordered file and of a broken one, read from the file:
 * the rows of the whole matrix. */
static void test_rows(void)
{
    for (int o = SORTED; o <= BROKEN; o += BROKEN - SORTED) {
        entries e = make_entries((order)o, 0, 5);
        size_t len;
        char *t = make_text(&e, 0, e.n, &len);
        const char *path = write_text("rows.mtx", t, len);
        adia_matrix *A = NULL, *P = NULL;
        CHECK_OK(adia_matrix_read_mtx(path, &A));
        for (int p = 0; A && p < 3; p++) {
            int64_t first = (int64_t)R * p / 3, count = (int64_t)R * (p + 1) / 3 - first;
            CHECK_OK(adia_matrix_read_mtx_rows(path, first, count, NULL, NULL, &P));
            CHECK(P && test_rows_equal(A, first, P), "%s: rows %lld + %lld", order_name[o],
                  (long long)first, (long long)count);
            adia_matrix_destroy(P);
        }
        adia_matrix_destroy(A);
        remove(path);
        free_entries(&e);
        free(t);
    }
}

/* Line (1-based) of entry k of a make_text text. */
static long long entry_line(int64_t k) { return 4 + k + 2 * (k / 1000); }

static void check_error(const char *t, size_t len, const char *needle, const char *what)
{
    for (int threads = 1; threads <= 2; threads++)
        for (size_t ch = 0; ch < sizeof chunks / sizeof *chunks; ch++) {
            omp_set_num_threads(threads);
            adia__lines_set_chunk(chunks[ch]);
            adia_matrix *A = NULL;
            adia_status s = adia_matrix_parse_mtx(t, len, "e.mtx", &A);
            CHECK(s == ADIA_ERR_PARSE && A == NULL && test_contains(adia_last_error(), needle),
                  "%s, %d threads, chunk %zu: \"%s\", wanted \"%s\"", what, threads, chunks[ch],
                  adia_last_error(), needle);
            adia_matrix_destroy(A);
        }
    adia__lines_set_chunk(0);
    omp_set_num_threads(2);
}

/* A bad token late in the file, too many entries and too few: the same
 * message and line in a row-ordered file and in one whose order broke
 * before (at a third of the entries). */
static void test_errors(void)
{
    for (int o = SORTED; o <= BROKEN; o += BROKEN - SORTED) {
        entries e = make_entries((order)o, 0, 9);
        int64_t bad = e.n * 9 / 10;
        e.c[bad] = C;   /* out of range: printed as C + 1 */
        size_t len;
        char *t = make_text(&e, 0, e.n, &len);
        char needle[128];
        snprintf(needle, sizeof needle, "e.mtx:%lld: column index out of range 1..%d (%d)",
                 entry_line(bad), C, C + 1);
        check_error(t, len, needle, order_name[o]);
        free(t);
        e.c[bad] = 0;
        t = make_text(&e, 0, e.n - 5, &len);
        snprintf(needle, sizeof needle, "e.mtx:%lld: too many entries: the size line declares "
                 "%lld", entry_line(e.n - 5), (long long)(e.n - 5));
        check_error(t, len, needle, order_name[o]);
        free(t);
        t = make_text(&e, 0, e.n + 1, &len);
        snprintf(needle, sizeof needle, "e.mtx:%lld: file ends after %lld of %lld entries",
                 entry_line(e.n - 1) + (e.n % 1000 == 0 ? 2 : 0), (long long)e.n,
                 (long long)e.n + 1);
        check_error(t, len, needle, order_name[o]);
        free(t);
        free_entries(&e);
    }
}

/* Index tokens read eight characters at once (up to seven digits, then a
 * blank or line end) and by the general parser (eight digits and more,
 * the last few bytes of the text, every error): the same entries, the
 * same messages. */
static void test_index_tokens(void)
{
    const char *text = "%%MatrixMarket matrix coordinate real general\n1234567 12345678 6\n"
                       "1 1 1\n0000002 9999999 2\n3\t10000000\t3\n1234567 12345678 4\r\n"
                       "00000005 5 5\n6 6 6";
    int32_t r[] = {0, 1, 2, 1234566, 4, 5}, c[] = {0, 9999998, 9999999, 12345677, 4, 5};
    double v[] = {1, 2, 3, 4, 5, 6};
    adia_matrix *A = NULL, *E = NULL;
    CHECK_OK(adia_matrix_parse_mtx(text, strlen(text), "idx", &A));
    CHECK_OK(adia_matrix_create_coo(1234567, 12345678, 6, r, c, v, ADIA_DOUBLE, &E));
    CHECK(A && adia_matrix_equal(A, E), "index tokens of 1 to 8 digits");
    adia_matrix_destroy(A);
    adia_matrix_destroy(E);
    const char *bad[][2] = {
        {"1234568 1 1\n", "e.mtx:3: row index out of range 1..1234567 (1234568)"},
        {"0 1 1\n", "e.mtx:3: row index out of range 1..1234567 (0)"},
        {"1 12345679 1\n", "e.mtx:3: column index out of range 1..12345678 (12345679)"},
        {"1 123x 1\n", "e.mtx:3: column index is not an integer (123x)"},
        {"1 -2 1\n", "e.mtx:3: column index out of range 1..12345678 (-2)"},
        {"1 2.0 1\n", "e.mtx:3: column index is not an integer (2.0)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char t[256];
        int n = snprintf(t, sizeof t, "%%%%MatrixMarket matrix coordinate real general\n"
                         "1234567 12345678 3\n%s2 2 2\n3 3 3\n", bad[i][0]);
        check_error(t, (size_t)n, bad[i][1], bad[i][0]);
    }
}

int main(void)
{
    TEST_BEGIN();
    snprintf(dir, sizeof dir, "/tmp/adia-test-order-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_same_matrix();
    test_rows();
    test_errors();
    test_index_tokens();
    rmdir(dir);
    return TEST_END();
}
