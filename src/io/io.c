/* io.c -- whole-file reading (plain or gzip), file names, and the entry
 * points that take a path: read_mtx and load. */
#include "io.h"

#include <errno.h>
#include <inttypes.h>
#include <zlib.h>

#define GZ_MAGIC0 0x1f
#define GZ_MAGIC1 0x8b

bool adia_io_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && !strcmp(path + n - m, suffix);
}

void adia_io_basename(const char *path, char *out, size_t size)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 3 && !strcmp(b + n - 3, ".gz")) n -= 3;
    if (n > 4 && (!strncmp(b + n - 4, ".mtx", 4) || !strncmp(b + n - 4, ".bin", 4))) n -= 4;
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), b);
}

static adia_status grow(char **buf, size_t *cap, size_t need, const char *path)
{
    if (need <= *cap) return ADIA_OK;
    size_t ncap = *cap ? *cap : 1 << 20;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return adia_error(ADIA_ERR_OVERFLOW, "%s: file too large", path);
        ncap *= 2;
    }
    char *nb = realloc(*buf, ncap);
    if (!nb)
        return adia_error(ADIA_ERR_NO_MEMORY, "%s: %zu bytes for the file failed",
                          path, ncap);
    *buf = nb;
    *cap = ncap;
    return ADIA_OK;
}

/* gunzip the whole file; concatenated gzip members are read as one. */
static adia_status read_gzip(const char *path, char **buf, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return adia_error(ADIA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    gzbuffer(gz, 1 << 18);
    size_t cap = 0, n = 0;
    adia_status s = ADIA_OK;
    for (;;) {
        if (cap - n < (1 << 16) && (s = grow(buf, &cap, n + (1 << 20) + 1, path)) != ADIA_OK)
            break;
        int got = gzread(gz, *buf + n, (unsigned)(cap - n - 1 > (1u << 30) ? 1u << 30 : cap - n - 1));
        if (got < 0) {
            int err;
            const char *msg = gzerror(gz, &err);
            s = adia_error(ADIA_ERR_IO, "%s: gzip data is corrupt: %s", path, msg);
            break;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    gzclose(gz);
    if (s != ADIA_OK) {
        free(*buf);
        *buf = NULL;
        return s;
    }
    (*buf)[n] = '\0';
    *len = n;
    return ADIA_OK;
}

adia_status adia_io_read_file(const char *path, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return adia_error(ADIA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char magic[2] = {0, 0};
    size_t m = fread(magic, 1, 2, f);
    if (m == 2 && magic[0] == GZ_MAGIC0 && magic[1] == GZ_MAGIC1) {
        fclose(f);
        return read_gzip(path, buf, len);
    }
    /* Plain file: read in large blocks into a growing buffer (works for
     * pipes and files whose size changes too). */
    size_t cap = 0, n = m;
    adia_status s = grow(buf, &cap, (size_t)m + (1 << 20), path);
    if (s == ADIA_OK) memcpy(*buf, magic, m);
    if (s == ADIA_OK && fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size > 0) s = grow(buf, &cap, (size_t)size + 1, path);
        fseek(f, (long)m, SEEK_SET);
    }
    while (s == ADIA_OK) {
        if (n + 1 >= cap && (s = grow(buf, &cap, n + (1 << 16) + 1, path)) != ADIA_OK) break;
        size_t got = fread(*buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) s = adia_error(ADIA_ERR_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (s != ADIA_OK) {
        free(*buf);
        *buf = NULL;
        return s;
    }
    (*buf)[n] = '\0';
    *len = n;
    return ADIA_OK;
}

adia_status adia_matrix_read_mtx(const char *path, adia_matrix **out)
{
    if (!out) return adia_error(ADIA_ERR_INVALID_ARG, "adia_matrix_read_mtx: out is NULL");
    *out = NULL;
    if (!path) return adia_error(ADIA_ERR_INVALID_ARG, "adia_matrix_read_mtx: path is NULL");
    char *text;
    size_t len;
    ADIA_TRY(adia_io_read_file(path, &text, &len));
    adia_status s = adia_matrix_parse_mtx(text, len, path, out);
    free(text);
    return s;
}

/* First 8 bytes of the (maybe gzipped) file. */
static adia_status sniff(const char *path, char magic[8], int *n)
{
    gzFile gz = gzopen(path, "rb");   /* reads plain files transparently */
    if (!gz) return adia_error(ADIA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    *n = gzread(gz, magic, 8);   /* on corrupt gzip data the reader reports */
    gzclose(gz);
    return ADIA_OK;
}

adia_status adia_matrix_load(const char *path, adia_matrix **out)
{
    if (!out) return adia_error(ADIA_ERR_INVALID_ARG, "adia_matrix_load: out is NULL");
    *out = NULL;
    if (!path) return adia_error(ADIA_ERR_INVALID_ARG, "adia_matrix_load: path is NULL");
    char magic[8];
    int n = 0;
    ADIA_TRY(sniff(path, magic, &n));
    if (n == 8 && !memcmp(magic, "ADIABIN1", 8)) return adia_matrix_read_bin(path, out);
    return adia_matrix_read_mtx(path, out);
}
