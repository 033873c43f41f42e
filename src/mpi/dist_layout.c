/* dist_layout.c -- which columns a block of rows needs, and the local x
 * they are laid out in.
 *
 * A diagonal matrix's block of rows [f, f + m) needs, for each offset o,
 * the columns [f + o, f + m + o) (clipped to the matrix): near offsets
 * overlap into one widened range around the block's own rows, far ones
 * (type II's +-n/2) stay separate ranges.  Those ranges, merged, are the
 * local x side by side in ascending column order, and local column =
 * position in it.  Each offset's range lies inside one merged interval, so
 * column j = i + o of row i maps to (i - f) + (o + f - start + pos): a
 * diagonal stays a diagonal of the local block and the planner sees the
 * same structure as for the whole matrix.  With more distinct offsets than
 * DIST_MAX_OFFSETS (a general matrix) the ranges come from the columns
 * actually used instead: runs of consecutive columns, found once here. */
#include "dist.h"

#include <math.h>

#define DIST_MAX_OFFSETS 256
#define SET_SLOTS 1024   /* power of two, > 2 DIST_MAX_OFFSETS: short probes */

/* Distinct offsets, open addressing; full beyond DIST_MAX_OFFSETS. */
typedef struct offset_set {
    int64_t key[SET_SLOTS];
    unsigned char used[SET_SLOTS];
    int count;
} offset_set;

/* Add o; 0 when the set would exceed DIST_MAX_OFFSETS. */
static int set_add(offset_set *s, int64_t o)
{
    uint64_t h = (uint64_t)o * 0x9e3779b97f4a7c15ull >> 54;   /* 10 bits: SET_SLOTS */
    for (;; h = (h + 1) & (SET_SLOTS - 1)) {
        if (!s->used[h]) break;
        if (s->key[h] == o) return 1;
    }
    if (s->count == DIST_MAX_OFFSETS) return 0;
    s->used[h] = 1;
    s->key[h] = o;
    s->count++;
    return 1;
}

/* The block's distinct offsets (col - global row) into s; 0 if too many. */
static int collect_offsets(const adia_csr_view *v, int64_t first, offset_set *s)
{
    for (int32_t i = 0; i < v->rows; i++)
        for (int64_t k = v->rowptr[i]; k < v->rowptr[i + 1]; k++)
            if (!set_add(s, (int64_t)v->colind[k] - (first + i))) return 0;
    return 1;
}

static int cmp_interval(const void *a, const void *b)
{
    int64_t x = ((const dist_interval *)a)->start, y = ((const dist_interval *)b)->start;
    return (x > y) - (x < y);
}

/* Sort by start, merge intervals that overlap or touch; returns the count. */
static int merge(dist_interval *iv, int n)
{
    qsort(iv, (size_t)n, sizeof *iv, cmp_interval);
    int w = 0;
    for (int k = 0; k < n; k++) {
        int64_t end = iv[k].start + iv[k].len;
        if (w > 0 && iv[k].start <= iv[w - 1].start + iv[w - 1].len) {
            int64_t wend = iv[w - 1].start + iv[w - 1].len;
            if (end > wend) iv[w - 1].len = end - iv[w - 1].start;
        } else {
            iv[w++] = iv[k];
        }
    }
    return w;
}

/* The block's rows shifted by each of the count offsets o, and its own rows. */
static adia_status intervals_from_offsets(adia_dist_matrix *D, const int64_t *o, int count)
{
    D->iv = adia__dist_alloc((size_t)count + 1, sizeof *D->iv, "column intervals");
    if (!D->iv) return ADIA_ERR_NO_MEMORY;
    int n = 0;
    D->iv[n++] = (dist_interval){D->first, D->rows, 0};
    for (int k = 0; k < count; k++) {
        int64_t lo = D->first + o[k], hi = lo + D->rows;
        if (lo < 0) lo = 0;
        if (hi > D->n) hi = D->n;
        if (lo < hi) D->iv[n++] = (dist_interval){lo, hi - lo, 0};
    }
    D->niv = merge(D->iv, n);
    return ADIA_OK;
}

/* The offsets of the set, in slot order. */
static int set_keys(const offset_set *s, int64_t *o)
{
    int n = 0;
    for (int h = 0; h < SET_SLOTS; h++)
        if (s->used[h]) o[n++] = s->key[h];
    return n;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Runs of consecutive columns the block uses, and its own rows. */
static adia_status intervals_from_columns(adia_dist_matrix *D, const adia_csr_view *v)
{
    int32_t *c = adia__dist_alloc((size_t)v->nnz, sizeof *c, "column scan");
    D->iv = adia__dist_alloc((size_t)v->nnz + 1, sizeof *D->iv, "column intervals");
    if (!c || !D->iv) {
        free(c);
        return ADIA_ERR_NO_MEMORY;
    }
    memcpy(c, v->colind, (size_t)v->nnz * sizeof *c);
    qsort(c, (size_t)v->nnz, sizeof *c, cmp_i32);
    int n = 0;
    D->iv[n++] = (dist_interval){D->first, D->rows, 0};
    for (int64_t k = 0; k < v->nnz; k++) {
        dist_interval *last = &D->iv[n - 1];
        if (n > 1 && c[k] <= last->start + last->len) {
            if (c[k] == last->start + last->len) last->len++;
        } else {
            D->iv[n++] = (dist_interval){c[k], 1, 0};
        }
    }
    free(c);
    D->niv = merge(D->iv, n);
    return ADIA_OK;
}

/* Positions of the intervals in the local x; its length must fit int32. */
static adia_status place(adia_dist_matrix *D)
{
    int64_t pos = 0;
    for (int k = 0; k < D->niv; k++) {
        D->iv[k].pos = pos;
        pos += D->iv[k].len;
        if (D->iv[k].start <= D->first && D->first < D->iv[k].start + D->iv[k].len)
            D->own_pos = (int32_t)(D->iv[k].pos + D->first - D->iv[k].start);
    }
    if (pos >= INT32_MAX)
        return adia_set_error(ADIA_ERR_OVERFLOW, "rank %d: its rows need %lld columns of x, "
                              "more than a block's 32-bit local indices hold", D->rank,
                              (long long)pos);
    D->local_cols = (int32_t)pos;
    return ADIA_OK;
}

/* Local column of global column j: its interval found by bisection. */
static int32_t local_col(const adia_dist_matrix *D, int64_t j)
{
    int lo = 0, hi = D->niv - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (D->iv[mid].start <= j) lo = mid;
        else hi = mid - 1;
    }
    return (int32_t)(D->iv[lo].pos + j - D->iv[lo].start);
}

/* The block in local columns; its diagonal and largest |a| on the way. */
static adia_status renumber(adia_dist_matrix *D, const adia_csr_view *v, adia_matrix **local)
{
    int32_t *col = adia__dist_alloc((size_t)v->nnz, sizeof *col, "local column indices");
    D->diag = adia__dist_alloc((size_t)v->rows + 1, sizeof *D->diag, "matrix diagonal");
    if (!col || !D->diag) {
        free(col);
        return ADIA_ERR_NO_MEMORY;
    }
    D->max_abs = 0;
    for (int32_t i = 0; i < v->rows; i++) {
        D->diag[i] = 0;
        for (int64_t k = v->rowptr[i]; k < v->rowptr[i + 1]; k++) {
            col[k] = local_col(D, v->colind[k]);
            if (v->colind[k] == D->first + i) D->diag[i] = v->values[k];
            if (fabs(v->values[k]) > D->max_abs) D->max_abs = fabs(v->values[k]);
        }
    }
    adia_status s = adia_matrix_create_csr(v->rows, D->local_cols, v->nnz, v->rowptr, col,
                                           v->values, ADIA_DOUBLE, local);
    free(col);
    return s;
}

adia_status adia__dist_layout(adia_dist_matrix *D, const adia_matrix *L, adia_matrix **local)
{
    adia_csr_view v;
    DIST_TRY(adia_matrix_csr(L, &v));
    offset_set *s = calloc(1, sizeof *s);
    if (!s) return adia_set_error(ADIA_ERR_NO_MEMORY, "allocating the offset set failed");
    D->from_offsets = collect_offsets(&v, D->first, s);
    int64_t o[DIST_MAX_OFFSETS];
    adia_status st = D->from_offsets ? intervals_from_offsets(D, o, set_keys(s, o))
                                     : intervals_from_columns(D, &v);
    free(s);
    if (st == ADIA_OK) st = place(D);
    if (st == ADIA_OK) st = renumber(D, &v, local);
    return st;
}

adia_status adia__dist_layout_offsets(adia_dist_matrix *D, const int64_t *offsets, int count)
{
    D->from_offsets = 1;
    DIST_TRY(intervals_from_offsets(D, offsets, count));
    return place(D);
}

int adia__dist_local_offset(const adia_dist_matrix *D, int64_t o, int64_t *local)
{
    int64_t lo = D->first + o, hi = lo + D->rows;
    if (hi <= 0 || lo >= D->n) return 0;
    int64_t in = lo < 0 ? 0 : lo;   /* a column of the diagonal inside the matrix */
    *local = local_col(D, in) - (in - lo);
    return 1;
}
