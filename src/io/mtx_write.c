/* mtx_write.c -- Matrix Market output: matrices as coordinate real
 * general, vectors as array real general, values as the shortest decimal
 * that reads back exactly (numformat.h; NaN and infinities as "nan",
 * "-inf", ..., which the reader's strtod takes back).  Blocks of lines are
 * formatted in parallel into per-thread buffers, then written in order
 * through a safe output file. */
#include "io.h"
#include "numformat.h"
#include "outfile.h"

#include <inttypes.h>

#define WRITE_BLOCK (1 << 16)   /* entries per formatted block */
#define ENTRY_MAX 64            /* "2147483647 2147483647 -1.2345678901234567e-308\n" */
_Static_assert(2 * 11 + ADIA_DOUBLE_CHARS + 1 <= ENTRY_MAX, "an entry fits its slot");

/* Formats lines [b, e) of what ctx holds into buf; returns the byte count. */
typedef size_t (*format_fn)(const void *ctx, int64_t b, int64_t e, char *buf);

/* Entries [b, e) of a CSR matrix. */
static size_t format_entries(const void *ctx, int64_t b, int64_t e, char *buf)
{
    const adia_csr *A = ctx;
    /* Row of entry b: last i with rowptr[i] <= b (rows may be empty). */
    int32_t lo = 0, hi = A->rows;
    while (hi - lo > 1) {
        int32_t mid = lo + (hi - lo) / 2;
        if (A->rowptr[mid] <= b) lo = mid;
        else hi = mid;
    }
    const double *v = A->values;
    char *p = buf;
    int32_t i = lo;
    for (int64_t k = b; k < e; k++) {
        while (A->rowptr[i + 1] <= k) i++;
        p = adia__format_u32(p, (uint32_t)i + 1);
        *p++ = ' ';
        p = adia__format_u32(p, (uint32_t)A->colind[k] + 1);
        *p++ = ' ';
        p = adia__format_double(p, v[k]);
        *p++ = '\n';
    }
    return (size_t)(p - buf);
}

/* Values [b, e) of a vector, one per line. */
static size_t format_values(const void *ctx, int64_t b, int64_t e, char *buf)
{
    const double *x = ctx;
    char *p = buf;
    for (int64_t k = b; k < e; k++) {
        p = adia__format_double(p, x[k]);
        *p++ = '\n';
    }
    return (size_t)(p - buf);
}

/* Lines [0, count) formatted by fmt, in parallel blocks, written in order. */
static adia_status write_lines(format_fn fmt, const void *ctx, int64_t count, adia_outfile *out)
{
    int nt = adia__threads();
    int64_t nblocks = (count + WRITE_BLOCK - 1) / WRITE_BLOCK;
    char *buf = adia__alloc((size_t)nt, (size_t)WRITE_BLOCK * ENTRY_MAX, "output buffers");
    size_t *len = adia__alloc((size_t)nt, sizeof *len, "output lengths");
    adia_status s = buf && len ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int64_t g = 0; g < nblocks && s == ADIA_OK; g += nt) {
        int n = nblocks - g < nt ? (int)(nblocks - g) : nt;
#pragma omp parallel for schedule(static, 1) num_threads(n)
        for (int t = 0; t < n; t++) {
            int64_t b = (g + t) * WRITE_BLOCK;
            int64_t e = b + WRITE_BLOCK < count ? b + WRITE_BLOCK : count;
            len[t] = fmt(ctx, b, e, buf + (size_t)t * WRITE_BLOCK * ENTRY_MAX);
        }
        for (int t = 0; t < n && s == ADIA_OK; t++)
            s = adia__outfile_write(out, buf + (size_t)t * WRITE_BLOCK * ENTRY_MAX, len[t]);
    }
    free(buf);
    free(len);
    return s;
}

#define BANNER "%%%%MatrixMarket matrix "
#define WRITTEN_BY "%% written by adia " ADIA_VERSION_STRING "\n"

adia_status adia_matrix_write_mtx(const adia_matrix *A, const char *path)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_write_mtx"));
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_write_mtx: path is NULL");
    adia_outfile out;
    ADIA_TRY(adia__outfile_open(&out, path, adia__io_has_suffix(path, ".gz")));
    /* the comments of the file A was read from, then ours */
    adia_status s = adia__outfile_printf(&out, BANNER "coordinate real general\n");
    if (s == ADIA_OK && A->comments)
        s = adia__outfile_write(&out, A->comments, strlen(A->comments));
    if (s == ADIA_OK)
        s = adia__outfile_printf(&out, WRITTEN_BY "%" PRId32 " %" PRId32 " %" PRId64 "\n",
                                 A->csr.rows, A->csr.cols, A->csr.nnz);
    if (s == ADIA_OK) s = write_lines(format_entries, &A->csr, A->csr.nnz, &out);
    return adia__outfile_finish(&out, s);
}

adia_status adia_vector_write_mtx(const char *path, int32_t n, const double *x)
{
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_vector_write_mtx: path is NULL");
    if (n < 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_vector_write_mtx: %s: length %" PRId32
                          " is negative", path, n);
    if (!x && n > 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_vector_write_mtx: %s: x is NULL", path);
    adia_outfile out;
    ADIA_TRY(adia__outfile_open(&out, path, adia__io_has_suffix(path, ".gz")));
    adia_status s = adia__outfile_printf(&out, BANNER "array real general\n" WRITTEN_BY
                                        "%" PRId32 " 1\n", n);
    if (s == ADIA_OK) s = write_lines(format_values, x, n, &out);
    return adia__outfile_finish(&out, s);
}
