/* io.c -- file names, and the entry points that take a path: read_mtx,
 * read_bin and load. */
#include "io.h"
#include "mtx_read.h"

#include <inttypes.h>

bool adia__io_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && !strcmp(path + n - m, suffix);
}

void adia__io_basename(const char *path, char *out, size_t size)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 3 && !strcmp(b + n - 3, ".gz")) n -= 3;
    if (n > 4 && (!strncmp(b + n - 4, ".mtx", 4) || !strncmp(b + n - 4, ".bin", 4))) n -= 4;
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), b);
}

/* Open path (or standard input for "-"), run read on it, close it. */
static adia_status with_source(const char *path, const char *fn, adia_matrix **out,
                               adia_status (*read)(adia_source *, adia_matrix **))
{
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "%s: path is NULL", fn);
    adia_source src;
    ADIA_TRY(adia__source_open(&src, path));
    adia_status s = read(&src, out);
    adia__source_close(&src);
    return s;
}

adia_status adia_matrix_read_mtx(const char *path, adia_matrix **out)
{
    return with_source(path, "adia_matrix_read_mtx", out, adia__mtx_read_matrix);
}

adia_status adia_matrix_read_mtx_rows(const char *path, int64_t first, int64_t count,
                                      int64_t *rows, int64_t *cols, adia_matrix **out)
{
    const char *fn = "adia_matrix_read_mtx_rows";
    if (out) *out = NULL;
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "%s: path is NULL", fn);
    if (first < 0 || count < 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: first %" PRId64 " and count %" PRId64
                          " must not be negative", fn, first, count);
    adia_source src;
    ADIA_TRY(adia__source_open(&src, path));
    mtx_rows keep = {first, count};
    adia_status s = out ? adia__mtx_read_rows(&src, &keep, rows, cols, out)
                        : adia__mtx_read_shape(&src, rows, cols);
    adia__source_close(&src);
    return s;
}

adia_status adia_matrix_read_bin(const char *path, adia_matrix **out)
{
    return with_source(path, "adia_matrix_read_bin", out, adia__bin_read_source);
}

/* Bytes no text file holds: NUL and the control characters other than
 * blanks and line ends (a binary header has NULs in its version field). */
static bool binary_bytes(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == 0 || (p[i] < 32 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r' &&
                          p[i] != '\f' && p[i] != '\v'))
            return true;
    return false;
}

/* Binary or Matrix Market by the first decoded bytes, peeked: the source
 * is read once, so pipes work.  A binary file whose magic number is wrong
 * is said to be one ("ADIABIN2", or binary data): the Matrix Market reader
 * would only miss its banner. */
static adia_status load_source(adia_source *src, adia_matrix **out)
{
    unsigned char head[16];
    size_t n;
    ADIA_TRY(adia__source_peek(src, head, sizeof head, &n));
    if (n >= 8 && !memcmp(head, "ADIABIN1", 8)) return adia__bin_read_source(src, out);
    if (n >= 8 && (!memcmp(head, "ADIABIN", 7) || binary_bytes(head, n)))
        return adia__bin_bad_magic(src->name, head, ", and binary data is no Matrix Market file "
                                   "either");
    return adia__mtx_read_matrix(src, out);
}

adia_status adia_matrix_load(const char *path, adia_matrix **out)
{
    return with_source(path, "adia_matrix_load", out, load_source);
}
