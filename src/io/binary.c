/* binary.c -- the adia binary matrix format (docs/binary-format.md):
 * a 40-byte little-endian header, then the raw CSR arrays. */
#define _POSIX_C_SOURCE 200809L   /* pread */
#include "io.h"
#include "outfile.h"
#include "source.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "binary.c writes the arrays raw and assumes a little-endian host"
#endif

#define BIN_MAGIC "ADIABIN1"
#define BIN_VERSION 1
#define BIN_HEADER 40

static void put_i64(unsigned char *p, int64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)((uint64_t)v >> (8 * i));
}

static int64_t get_i64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return (int64_t)v;
}

adia_status adia_matrix_write_bin(const adia_matrix *A, const char *path)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_write_bin"));
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_write_bin: path is NULL");
    const adia_csr *a = &A->csr;
    unsigned char head[BIN_HEADER];
    memcpy(head, BIN_MAGIC, 8);
    put_i64(head + 8, BIN_VERSION);
    put_i64(head + 16, a->rows);
    put_i64(head + 24, a->cols);
    put_i64(head + 32, a->nnz);
    adia_outfile out;
    ADIA_TRY(adia__outfile_open(&out, path, adia__io_has_suffix(path, ".gz")));
    /* errors stick in out: the commit reports the first */
    adia__outfile_write(&out, head, sizeof head);
    adia__outfile_write(&out, a->rowptr, ((size_t)a->rows + 1) * sizeof *a->rowptr);
    adia__outfile_write(&out, a->colind, (size_t)a->nnz * sizeof *a->colind);
    adia__outfile_write(&out, a->values, (size_t)a->nnz * sizeof(double));
    return adia__outfile_commit(&out);
}

/* Read exactly n bytes (in parts, so a short read is seen early). */
static adia_status read_exact(adia_source *src, void *dst, size_t n, const char *what)
{
    size_t got;
    ADIA_TRY(adia__source_read(src, dst, n, &got));
    if (got < n)
        return adia__error(ADIA_ERR_PARSE, "%s: binary file ends inside the %s (truncated)",
                          src->name, what);
    return ADIA_OK;
}

adia_status adia__bin_bad_magic(const char *name, const unsigned char *h, const char *what_else)
{
    char text[9], hex[3 * 8];   /* "41 44 ... 31" */
    for (int i = 0; i < 8; i++) {
        text[i] = h[i] >= 32 && h[i] < 127 ? (char)h[i] : '.';
        snprintf(hex + 3 * i, 3, "%02x", h[i]);
        hex[3 * i + 2] = i < 7 ? ' ' : '\0';
    }
    text[8] = '\0';
    if (!memcmp(h, BIN_MAGIC, 7))
        return adia__error(ADIA_ERR_PARSE, "%s: not an adia binary file of this version: magic "
                          "number '%s' (%s), this build reads %s (another version of the "
                          "format, or a damaged file)", name, text, hex, BIN_MAGIC);
    return adia__error(ADIA_ERR_PARSE, "%s: not an adia binary file: its magic number (the first "
                      "8 bytes) is '%s' (%s), not %s%s", name, text, hex, BIN_MAGIC, what_else);
}

/* Check the header's sizes and compute the file length they imply. */
static adia_status check_header(const unsigned char *h, const char *path,
                                adia_csr *a, int64_t *length)
{
    if (memcmp(h, BIN_MAGIC, 8) != 0) return adia__bin_bad_magic(path, h, "");
    int64_t version = get_i64(h + 8), rows = get_i64(h + 16), cols = get_i64(h + 24),
            nnz = get_i64(h + 32);
    if (version != BIN_VERSION)
        return adia__error(ADIA_ERR_UNSUPPORTED, "%s: binary format version %" PRId64
                          " (this build reads version %d)", path, version, BIN_VERSION);
    if (rows < 0 || rows > INT32_MAX || cols < 0 || cols > INT32_MAX || nnz < 0)
        return adia__error(ADIA_ERR_PARSE, "%s: corrupt header: rows %" PRId64 ", cols %"
                          PRId64 ", nnz %" PRId64 " out of range", path, rows, cols, nnz);
    int64_t cells, ptr_bytes, ent_bytes, total;
    if (!adia_mul_i64(rows, cols, &cells) || nnz > cells)
        return adia__error(ADIA_ERR_PARSE, "%s: corrupt header: nnz %" PRId64 " exceeds "
                          "%" PRId64 " x %" PRId64, path, nnz, rows, cols);
    if (!adia_mul_i64(rows + 1, 8, &ptr_bytes) || !adia_mul_i64(nnz, 12, &ent_bytes) ||
        !adia_add_i64(ptr_bytes, ent_bytes, &total) ||
        !adia_add_i64(total, BIN_HEADER, &total))
        return adia__error(ADIA_ERR_OVERFLOW, "%s: corrupt header: sizes overflow", path);
    a->rows = (int32_t)rows;
    a->cols = (int32_t)cols;
    a->nnz = nnz;
    *length = total;
    return ADIA_OK;
}

/* Before anything is allocated: a plain file's length must match the
 * header, and the arrays (the file less its header) must fit the budget. */
static adia_status check_cost(const adia_source *src, const adia_csr *a, int64_t length)
{
    if (src->size >= 0 && src->size != length)
        return adia__error(ADIA_ERR_PARSE, "%s: file has %" PRId64 " bytes, the header "
                          "implies %" PRId64 " (truncated or corrupt)", src->name, src->size,
                          length);
    char what[300];
    snprintf(what, sizeof what, "%s: reading a %" PRId32 " x %" PRId32 " binary matrix with %"
             PRId64 " entries", src->name, a->rows, a->cols, a->nnz);
    return adia__budget_check(length - BIN_HEADER, what);
}

/* One part of the body: an array, where it lies in the file, its name. */
typedef struct bin_part {
    void *dst;
    size_t bytes;
    int64_t at;
    const char *what;
} bin_part;

/* Bytes per positional read: large enough that a call costs nothing
 * beside its copy, small enough that two threads share the work evenly. */
#define BIN_CHUNK ((size_t)8 << 20)

/* A plain file opened by name (not a pipe, not gzip, not standard input,
 * whose offset need not be 0): its arrays can be read at their offsets. */
static bool positional(const adia_source *src)
{
    return src->fd >= 0 && src->close_fd && !src->gz && src->size >= 0;
}

/* Read the parts with pread in chunks spread over the threads: the copy
 * from the page cache and the first touch of the new arrays (page
 * faults, most of the time on a fresh process) run on every core.  The
 * first failing chunk in file order is reported. */
static adia_status read_positional(const adia_source *src, const bin_part *part, int nparts)
{
    int64_t chunks[4] = {0}, total = 0;   /* chunks[q]: chunks before part q */
    for (int q = 0; q < nparts; q++) {
        chunks[q] = total;
        total += (int64_t)((part[q].bytes + BIN_CHUNK - 1) / BIN_CHUNK);
    }
    int64_t bad = total;   /* the least failing chunk */
    int bad_errno = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(adia__threads())
    for (int64_t c = 0; c < total; c++) {
        int q = nparts - 1;
        while (chunks[q] > c) q--;
        size_t from = (size_t)(c - chunks[q]) * BIN_CHUNK;
        size_t n = part[q].bytes - from < BIN_CHUNK ? part[q].bytes - from : BIN_CHUNK;
        unsigned char *dst = (unsigned char *)part[q].dst + from;
        int err = 0;
        for (size_t got = 0; got < n && err == 0;) {
            ssize_t r = pread(src->fd, dst + got, n - got, (off_t)(part[q].at + (int64_t)(from + got)));
            if (r < 0 && errno == EINTR) continue;
            err = r < 0 ? errno : r == 0 ? -1 : 0;   /* -1: the file ends early */
            if (r > 0) got += (size_t)r;
        }
        if (err != 0) {
#pragma omp critical(adia__bin_read)
            if (c < bad) {
                bad = c;
                bad_errno = err;
            }
        }
    }
    if (bad == total) return ADIA_OK;
    int q = nparts - 1;
    while (chunks[q] > bad) q--;
    if (bad_errno > 0)
        return adia__error(ADIA_ERR_IO, "%s: read error in the %s: %s", src->name, part[q].what,
                          strerror(bad_errno));
    return adia__error(ADIA_ERR_PARSE, "%s: binary file ends inside the %s (truncated)", src->name,
                      part[q].what);
}

/* The arrays after the header: at their offsets with threads from a
 * plain file, else in order from the stream (gzip, a pipe), which must
 * end right after them (reading to the end also verifies a gzip trailer). */
static adia_status read_arrays(adia_source *src, adia_csr *a)
{
    const int64_t ptr_bytes = ((int64_t)a->rows + 1) * 8, col_bytes = a->nnz * 4;
    const bin_part part[3] = {
        {a->rowptr, (size_t)ptr_bytes, BIN_HEADER, "row pointers"},
        {a->colind, (size_t)col_bytes, BIN_HEADER + ptr_bytes, "column indices"},
        {a->values, (size_t)a->nnz * 8, BIN_HEADER + ptr_bytes + col_bytes, "values"}};
    if (positional(src)) return read_positional(src, part, 3);
    for (int q = 0; q < 3; q++) ADIA_TRY(read_exact(src, part[q].dst, part[q].bytes, part[q].what));
    char extra;
    size_t more = 0;
    ADIA_TRY(adia__source_read(src, &extra, 1, &more));
    if (more) return adia__error(ADIA_ERR_PARSE, "%s: trailing bytes after the binary matrix", src->name);
    return ADIA_OK;
}

static adia_status read_body(adia_source *src, adia_csr *a)
{
    unsigned char head[BIN_HEADER];
    int64_t length = 0;
    ADIA_TRY(read_exact(src, head, sizeof head, "header"));
    ADIA_TRY(check_header(head, src->name, a, &length));
    ADIA_TRY(check_cost(src, a, length));
    ADIA_TRY(adia__csr_alloc(a, a->rows, a->cols, a->nnz, ADIA_DOUBLE));
    adia_status s = read_arrays(src, a);
    if (s == ADIA_OK && adia__csr_check(a) != ADIA_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", adia_last_error());
        s = adia__error(ADIA_ERR_PARSE, "%s: corrupt binary matrix: %s", src->name, why);
    }
    if (s != ADIA_OK) adia__csr_free(a);
    return s;
}

adia_status adia__bin_read_source(adia_source *src, adia_matrix **out)
{
    adia_csr a;
    memset(&a, 0, sizeof a);
    ADIA_TRY(read_body(src, &a));
    ADIA_TRY(adia__matrix_wrap(&a, out));
    char base[128];
    adia__io_basename(src->name, base, sizeof base);
    adia_status s = adia_matrix_set_name(*out, base);
    if (s != ADIA_OK) {
        adia_matrix_destroy(*out);
        *out = NULL;
    }
    return s;
}
