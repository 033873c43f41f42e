/* mtx_csr.c -- the CSR matrix built block by block while a general
 * coordinate file comes row by row (mtx_csr.h says when and why). */
#include "mtx_csr.h"
#include "triplets.h"

#include <inttypes.h>

/* Room for need entries: twice the capacity, at most the limit (realloc
 * of large arrays moves pages, not bytes). */
static adia_status reserve(mtx_csr *m, int64_t need)
{
    if (need <= m->cap) return ADIA_OK;
    int64_t cap = 2 * m->cap > need ? 2 * m->cap : need;
    if (cap > m->limit) cap = m->limit;
    int32_t *c = realloc(m->colind, (size_t)cap * sizeof *c);
    if (c) m->colind = c;
    double *v = m->pattern || !c ? NULL : realloc(m->val, (size_t)cap * sizeof *v);
    if (v) m->val = v;
    if (!c || (!m->pattern && !v))
        return adia__error(ADIA_ERR_NO_MEMORY, "out of memory for %" PRId64 " matrix entries",
                          cap);
    m->cap = cap;
    return ADIA_OK;
}

adia_status adia__mtx_csr_init(mtx_csr *m, int32_t first, int32_t rows, int32_t cols,
                               bool pattern, int64_t room, int64_t limit)
{
    *m = (mtx_csr){.on = true, .strict = true, .pattern = pattern, .first = first,
                   .rows = rows, .cols = cols, .row = -1, .limit = limit};
    m->rowptr = adia__alloc((size_t)rows + 1, sizeof *m->rowptr, "Matrix Market row pointers");
    if (!m->rowptr) return ADIA_ERR_NO_MEMORY;
    m->rowptr[0] = 0;
    m->cap = room < limit ? room : limit;
    m->colind = adia__alloc((size_t)m->cap, sizeof *m->colind, "Matrix Market columns");
    m->val = pattern ? NULL : adia__alloc((size_t)m->cap, sizeof *m->val, "Matrix Market values");
    return m->colind && (pattern || m->val) ? ADIA_OK : ADIA_ERR_NO_MEMORY;
}

void adia__mtx_csr_scan(const int32_t *row, const int32_t *col, int64_t n, mtx_span *s)
{
    bool ordered = true, strict = true;
    for (int64_t k = 1; k < n; k++) {
        ordered &= row[k] >= row[k - 1];
        strict &= row[k] > row[k - 1] || col[k] > col[k - 1];
    }
    *s = (mtx_span){ordered, strict && ordered, row[0], col[0], row[n - 1], col[n - 1]};
}

adia_status adia__mtx_csr_place(mtx_csr *m, const mtx_span *s, int64_t n, bool *ordered,
                                int64_t *at, int32_t *after)
{
    int32_t first = s->first_row - m->first;
    *ordered = s->ordered && first >= m->row;
    if (!*ordered) return ADIA_OK;
    ADIA_TRY(reserve(m, m->n + n));
    m->strict &= s->strict && (first > m->row || s->first_col > m->col);
    *at = m->n;
    *after = m->row;
    m->n += n;
    m->row = s->last_row - m->first;
    m->col = s->last_col;
    return ADIA_OK;
}

void adia__mtx_csr_fill(mtx_csr *m, int64_t at, int32_t after, const int32_t *row,
                        const int32_t *col, const double *val, int64_t n)
{
    int64_t *ptr = m->rowptr;
    int32_t r = after;   /* rows after it up to this block's first start here */
    for (int64_t k = 0; k < n; k++) {
        int32_t i = row[k] - m->first;
        while (r < i) ptr[++r] = at + k;
    }
    memcpy(m->colind + at, col, (size_t)n * sizeof *col);
    if (!m->pattern) memcpy(m->val + at, val, (size_t)n * sizeof *val);
}

adia_status adia__mtx_csr_to_triplets(mtx_csr *m, int32_t **row, int32_t **col, double **val,
                                      int64_t *n)
{
    int32_t *r = adia__alloc((size_t)m->n, sizeof *r, "Matrix Market rows");
    if (!r) return ADIA_ERR_NO_MEMORY;
    for (int32_t i = 0; i <= m->row; i++) {
        int64_t end = i < m->row ? m->rowptr[i + 1] : m->n;
        for (int64_t k = m->rowptr[i]; k < end; k++) r[k] = m->first + i;
    }
    *row = r;
    *col = m->colind;
    *val = m->val;
    *n = m->n;
    free(m->rowptr);
    *m = (mtx_csr){.on = false};
    return ADIA_OK;
}

adia_status adia__mtx_csr_finish(mtx_csr *m, adia_matrix **out)
{
    for (int32_t i = m->row + 1; i <= m->rows; i++) m->rowptr[i] = m->n;
    if (m->pattern) {
        m->val = adia__alloc((size_t)m->n, sizeof *m->val, "Matrix Market values");
        if (!m->val) return ADIA_ERR_NO_MEMORY;
        for (int64_t k = 0; k < m->n; k++) m->val[k] = 1.0;
    } else if (m->cap > m->n) {   /* a declaration above the entries read: give back the rest */
        double *v = realloc(m->val, (size_t)(m->n ? m->n : 1) * sizeof *v);
        if (v) m->val = v;
    }
    if (m->cap > m->n) {
        int32_t *c = realloc(m->colind, (size_t)(m->n ? m->n : 1) * sizeof *c);
        if (c) m->colind = c;
    }
    adia_csr A = {m->rows, m->cols, m->n, m->rowptr, m->colind, m->val, ADIA_DOUBLE};
    bool strict = m->strict, pattern = m->pattern;
    *m = (mtx_csr){.on = false};
    int32_t unused_row, unused_col;   /* no mirrored copies here: no pair to report */
    adia_status s = strict ? ADIA_OK : adia__io_finish_rows(&A, pattern, &unused_row, &unused_col);
    if (s != ADIA_OK) {
        adia__csr_free(&A);
        return s;
    }
    return adia__matrix_wrap(&A, out);
}

void adia__mtx_csr_free(mtx_csr *m)
{
    free(m->rowptr);
    free(m->colind);
    free(m->val);
    *m = (mtx_csr){.on = false};
}
