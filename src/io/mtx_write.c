/* mtx_write.c -- Matrix Market output: coordinate real general, values
 * with %.17g (exact round trip).  Blocks of entries are formatted in
 * parallel into per-thread buffers, then written in order. */
#include "io.h"

#include <inttypes.h>
#include <omp.h>

#define WRITE_BLOCK (1 << 16)   /* entries per formatted block */
#define ENTRY_MAX 64            /* "2147483647 2147483647 -1.2345678901234567e-308\n" */

/* Decimal digits of v at p; returns the end. */
static char *put_u32(char *p, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

/* Format entries [b, e) of A into buf; returns the byte count. */
static size_t format_block(const adia_csr *A, int64_t b, int64_t e, char *buf)
{
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
        p = put_u32(p, (uint32_t)i + 1);
        *p++ = ' ';
        p = put_u32(p, (uint32_t)A->colind[k] + 1);
        *p++ = ' ';
        p += snprintf(p, ENTRY_MAX - 24, "%.17g", v[k]);
        *p++ = '\n';
    }
    return (size_t)(p - buf);
}

static adia_status write_entries(const adia_csr *A, adia_sink *out)
{
    int nt = omp_get_max_threads();
    if (nt < 1) nt = 1;
    int64_t nblocks = (A->nnz + WRITE_BLOCK - 1) / WRITE_BLOCK;
    char *buf = adia_alloc((size_t)nt, (size_t)WRITE_BLOCK * ENTRY_MAX, "output buffers");
    size_t *len = adia_alloc((size_t)nt, sizeof *len, "output lengths");
    adia_status s = buf && len ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int64_t g = 0; g < nblocks && s == ADIA_OK; g += nt) {
        int n = nblocks - g < nt ? (int)(nblocks - g) : nt;
#pragma omp parallel for schedule(static, 1) num_threads(n)
        for (int t = 0; t < n; t++) {
            int64_t b = (g + t) * WRITE_BLOCK;
            int64_t e = b + WRITE_BLOCK < A->nnz ? b + WRITE_BLOCK : A->nnz;
            len[t] = format_block(A, b, e, buf + (size_t)t * WRITE_BLOCK * ENTRY_MAX);
        }
        for (int t = 0; t < n && s == ADIA_OK; t++)
            s = adia_sink_write(out, buf + (size_t)t * WRITE_BLOCK * ENTRY_MAX, len[t]);
    }
    free(buf);
    free(len);
    return s;
}

adia_status adia_matrix_write_mtx(const adia_matrix *A, const char *path)
{
    ADIA_TRY(adia_matrix_check_handle(A, "adia_matrix_write_mtx"));
    if (!path) return adia_error(ADIA_ERR_INVALID_ARG, "adia_matrix_write_mtx: path is NULL");
    adia_sink out;
    ADIA_TRY(adia_sink_open(&out, path));
    char head[256];
    int n = snprintf(head, sizeof head,
                     "%%%%MatrixMarket matrix coordinate real general\n"
                     "%% written by adia " ADIA_VERSION_STRING "\n"
                     "%" PRId32 " %" PRId32 " %" PRId64 "\n",
                     A->csr.rows, A->csr.cols, A->csr.nnz);
    adia_status s = adia_sink_write(&out, head, (size_t)n);
    if (s == ADIA_OK) s = write_entries(&A->csr, &out);
    return adia_sink_close(&out, s);
}
