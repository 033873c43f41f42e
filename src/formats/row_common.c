/* row_common.c -- helpers shared by the row-format modules (row_common.h). */
#include "row_common.h"

#include "row_formats.h"

#include <inttypes.h>

void *adia__row_values_alloc(int64_t n, adia_value_type vt, const char *what)
{
    if (n < 0) {
        adia__error(ADIA_ERR_INVALID_ARG, "%s: negative size %" PRId64, what, n);
        return NULL;
    }
    return adia__calloc((size_t)n, adia_value_size(vt), what);
}

int64_t adia__row_max_len(const adia_csr *A)
{
    int64_t m = 0;
    for (int32_t i = 0; i < A->rows; i++)
        if (row_len(A, i) > m) m = row_len(A, i);
    return m;
}

adia_status adia__row_mul(int64_t n, int64_t m, const char *what, int64_t *out)
{
    if (!adia_mul_i64(n, m, out))
        return adia__error(ADIA_ERR_OVERFLOW, "%s: size %" PRId64 " x %" PRId64
                          " overflows 64-bit integers", what, n, m);
    return ADIA_OK;
}

adia_status adia__row_check_index(const char *fmt, const char *array, const int32_t *idx,
                            int64_t n, int32_t limit, bool pad_ok)
{
    for (int64_t k = 0; k < n; k++) {
        if (pad_ok && idx[k] == ADIA_ROW_PAD) continue;
        if (idx[k] < 0 || idx[k] >= limit)
            return adia__error(ADIA_ERR_INVALID_MATRIX, "%s: %s[%" PRId64 "] = %d outside [0, %d)",
                              fmt, array, k, (int)idx[k], (int)limit);
    }
    return ADIA_OK;
}

adia_status adia__row_csr_begin(row_csr_builder *b, adia_csr *out, int32_t rows,
                          int32_t cols, int64_t nnz)
{
    b->out = out;
    b->n = 0;
    return adia__csr_alloc(out, rows, cols, nnz, ADIA_DOUBLE);
}

adia_status adia__row_csr_finish(row_csr_builder *b, const char *fmt)
{
    adia_csr *A = b->out;
    if (b->n != A->nnz) {
        int64_t want = A->nnz;
        adia__csr_free(A);
        return adia__error(ADIA_ERR_INVALID_MATRIX, "%s: to_csr found %" PRId64
                          " entries, expected %" PRId64, fmt, b->n, want);
    }
    for (int32_t i = 0; i < A->rows; i++) A->rowptr[i + 1] += A->rowptr[i];
    return ADIA_OK;
}

/* Spread the 32 bits of v to the even bits of a 64-bit word. */
static uint64_t spread_bits(uint32_t v)
{
    uint64_t x = v;
    x = (x | x << 16) & 0x0000ffff0000ffffull;
    x = (x | x << 8) & 0x00ff00ff00ff00ffull;
    x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
    x = (x | x << 2) & 0x3333333333333333ull;
    x = (x | x << 1) & 0x5555555555555555ull;
    return x;
}

static int by_zkey(const void *a, const void *b)
{
    const row_zentry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

adia_status adia__row_zorder(const adia_csr *A, int32_t q, row_zentry **out)
{
    row_zentry *e = adia__alloc((size_t)A->nnz, sizeof *e, "Z-order of entries");
    if (!e) return ADIA_ERR_NO_MEMORY;
    for (int32_t i = 0; i < A->rows; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            e[k] = (row_zentry){spread_bits((uint32_t)(i / q)) << 1 |
                                    spread_bits((uint32_t)(A->colind[k] / q)), k, i};
    qsort(e, (size_t)A->nnz, sizeof *e, by_zkey);
    *out = e;
    return ADIA_OK;
}
