/* test_mtx_comments.c -- a Matrix Market header's comment lines stay with
 * the matrix read from it and adia_matrix_write_mtx writes them back (issue
 * 27, item 9: `adia convert F G` dropped them): in order, from their '%',
 * without the input's own "% written by adia" line, through
 * adia_matrix_copy; none for a matrix made otherwise; a failed read and
 * adia_matrix_read_shape free them (ASan's leak check in CI); a header of
 * more than 64 KiB of comments is cut with a line saying so. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include "testutil.h"

#include <string.h>
#include <unistd.h>

static char dir[64];

/* The text of path (malloc'd), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *t = malloc(cap + 1);
    if (t) n = fread(t, 1, cap, f);
    fclose(f);
    if (t) t[n] = '\0';
    return t;
}

/* Write A to dir/name and return the file's text (malloc'd). */
static char *written(const adia_matrix *A, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_OK(adia_matrix_write_mtx(A, path));
    char *t = slurp(path);
    unlink(path);
    return t;
}

static const char text[] =
    "%%MatrixMarket matrix coordinate real general\n"
    "%-----\n"
    "% name: test\r\n"
    "  \t% indented\n"
    "\n"
    "% written by adia 0.0.1\n"
    "%%MatrixMarket again, a comment\n"
    "2 2 2\n"
    "1 1 1\n"
    "% a comment among the entries is not the header's\n"
    "2 2 2\n";
static const char want[] =
    "%%MatrixMarket matrix coordinate real general\n"
    "%-----\n"
    "% name: test\n"
    "% indented\n"
    "%%MatrixMarket again, a comment\n"
    "% written by adia ";

int main(void)
{
    TEST_BEGIN();
    snprintf(dir, sizeof dir, "/tmp/adia-comments-XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");

    adia_matrix *A = NULL, *B = NULL, *C = NULL;
    CHECK_OK(adia_matrix_parse_mtx(text, sizeof text - 1, "t.mtx", &A));
    char *t = A ? written(A, "a.mtx") : NULL;
    CHECK(t && !strncmp(t, want, sizeof want - 1), "written header:\n%s", t ? t : "(none)");
    CHECK(t && strstr(t, "\n2 2 2\n1 1 1\n2 2 2\n"), "size line and entries after it:\n%s",
          t ? t : "(none)");
    CHECK(t && !strstr(t, "among the entries"), "only the header's comments");
    CHECK(t && !strstr(t, "0.0.1"), "the input's 'written by' line left out");

    /* read back: the same comments again, not doubled */
    if (t) {
        CHECK_OK(adia_matrix_parse_mtx(t, strlen(t), "a.mtx", &B));
        char *t2 = B ? written(B, "b.mtx") : NULL;
        CHECK(t2 && !strcmp(t, t2), "write(read(write(A))) == write(A):\n%s", t2 ? t2 : "");
        free(t2);
    }
    /* a copy keeps them; destroying the original leaves the copy whole */
    if (A) CHECK_OK(adia_matrix_copy(A, &C));
    adia_matrix_destroy(A);
    A = NULL;
    char *t3 = C ? written(C, "c.mtx") : NULL;
    CHECK(t3 && t && !strcmp(t, t3), "copy: the same file:\n%s", t3 ? t3 : "");
    free(t3);
    free(t);
    adia_matrix_destroy(B);
    adia_matrix_destroy(C);

    /* made otherwise: the banner, then our line */
    adia_matrix *G = test_generate("lap2d5:2");
    char *tg = G ? written(G, "g.mtx") : NULL;
    CHECK(tg && !strncmp(tg, "%%MatrixMarket matrix coordinate real general\n% written by adia ",
                         62), "generated: no comments:\n%s", tg ? tg : "");
    free(tg);
    adia_matrix_destroy(G);

    /* a read that fails after comments, and a shape read: nothing leaks */
    static const char bad[] = "%%MatrixMarket matrix coordinate real general\n% c\n2 2 1\n3 1 1\n";
    adia_matrix *X = NULL;
    CHECK(adia_matrix_parse_mtx(bad, sizeof bad - 1, "bad.mtx", &X) == ADIA_ERR_PARSE && !X,
          "a bad entry after comments is refused");

    /* more than 64 KiB of comments: the first kept, then the cut said */
    size_t cap = 200000, n = 0;
    char *big = malloc(cap);
    if (big) {
        n += (size_t)snprintf(big + n, cap - n, "%%%%MatrixMarket matrix coordinate real general\n");
        for (int i = 0; i < 2000; i++)
            n += (size_t)snprintf(big + n, cap - n, "%% line %d ..................................."
                                  "...................\n", i);
        n += (size_t)snprintf(big + n, cap - n, "1 1 1\n1 1 5\n");
        adia_matrix *H = NULL;
        CHECK_OK(adia_matrix_parse_mtx(big, n, "big.mtx", &H));
        char *th = H ? written(H, "h.mtx") : NULL;
        CHECK(th && strstr(th, "\n% line 0 ..."), "the first comment kept");
        CHECK(th && !strstr(th, "\n% line 1999 "), "the last one not");
        CHECK(th && strstr(th, "\n% (further header comments of the input left out)\n% written by"),
              "the cut said, before our line");
        CHECK(th && strlen(th) < 64 * 1024 + 200, "at most 64 KiB of comments (%zu bytes)",
              th ? strlen(th) : 0);
        free(th);
        adia_matrix_destroy(H);
        free(big);
    }
    rmdir(dir);
    return TEST_END();
}
