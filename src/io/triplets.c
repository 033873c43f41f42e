/* triplets.c -- build the master CSR matrix straight from the readers'
 * triplet blocks: count per row, scatter in file order, sort the rows that
 * are not sorted already (stable, so duplicates are summed in file order),
 * sum duplicates.  Needs O(rows + entries) memory, nothing per column.
 *
 * Symmetric storage: the mirrored copy of (i, j) is written into row j
 * with MIRRORED set in its column index (columns are below 2^31, so the
 * top bit is free) until the rows are finished.  A duplicate in a row that
 * is one direct and one mirrored copy means the file gave both (i, j) and
 * (j, i): that is refused, not summed. */
#include "triplets.h"

#include <inttypes.h>

#define MIRRORED INT32_MIN

static inline int32_t col_of(int32_t c) { return c & INT32_MAX; }

typedef struct col_val {
    int32_t col;
    int64_t pos;   /* position in file order: makes the sort stable */
    double val;
} col_val;

static int cmp_col_val(const void *a, const void *b)
{
    const col_val *x = a, *y = b;
    if (col_of(x->col) != col_of(y->col)) return col_of(x->col) < col_of(y->col) ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Stable sort of one row: insertion sort when short, qsort on (col, pos)
 * pairs in tmp otherwise. */
static void sort_row(int32_t *c, double *v, int64_t n, col_val *tmp)
{
    if (n <= 32) {
        for (int64_t k = 1; k < n; k++) {
            int32_t cc = c[k];
            double vv = v[k];
            int64_t m = k;
            for (; m > 0 && col_of(c[m - 1]) > col_of(cc); m--) {
                c[m] = c[m - 1];
                v[m] = v[m - 1];
            }
            c[m] = cc;
            v[m] = vv;
        }
        return;
    }
    for (int64_t k = 0; k < n; k++) tmp[k] = (col_val){c[k], k, v[k]};
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_col_val);
    for (int64_t k = 0; k < n; k++) {
        c[k] = tmp[k].col;
        v[k] = tmp[k].val;
    }
}

adia_status adia__io_finish_rows(adia_csr *A, bool pattern, int32_t *both_row, int32_t *both_col)
{
    int64_t longest = 0;
    for (int32_t i = 0; i < A->rows; i++) {
        int64_t n = A->rowptr[i + 1] - A->rowptr[i];
        if (n > longest) longest = n;
    }
    col_val *tmp = NULL;
    double *v = A->values;
    int32_t *c = A->colind;
    int64_t w = 0;
    adia_status s = ADIA_OK;
    for (int32_t i = 0; i < A->rows && s == ADIA_OK; i++) {
        int64_t b = A->rowptr[i], e = A->rowptr[i + 1];
        bool sorted = true;
        for (int64_t k = b + 1; k < e && sorted; k++) sorted = col_of(c[k - 1]) < col_of(c[k]);
        if (!sorted) {
            if (!tmp && longest > 32 &&
                !(tmp = adia__alloc((size_t)longest, sizeof *tmp, "row sort buffer")))
                s = ADIA_ERR_NO_MEMORY;
            else
                sort_row(c + b, v + b, e - b, tmp);
        }
        A->rowptr[i] = w;
        int32_t first = 0;   /* the raw index of the current column's first copy */
        for (int64_t k = b; k < e && s == ADIA_OK; k++) {
            if (k > b && col_of(c[k]) == col_of(first)) {
                if ((c[k] ^ first) & MIRRORED) {
                    *both_row = i;
                    *both_col = col_of(first);
                    s = ADIA_ERR_PARSE;
                }
                if (!pattern) v[w - 1] += v[k];
            } else {
                first = c[k];
                c[w] = col_of(c[k]);
                v[w++] = v[k];
            }
        }
    }
    A->rowptr[A->rows] = w;
    A->nnz = w;
    free(tmp);
    return s;
}

/* The first entry at (i, j) in block order. */
static adia_triplet_ref find_entry(const adia_triplets *blk, int nblk, int32_t i, int32_t j)
{
    for (int b = 0; b < nblk; b++)
        for (int64_t k = 0; k < blk[b].n; k++)
            if (blk[b].row[k] == i && blk[b].col[k] == j) return (adia_triplet_ref){b, k};
    return (adia_triplet_ref){-1, -1};
}

static bool before(adia_triplet_ref a, adia_triplet_ref b)
{
    return a.blk < b.blk || (a.blk == b.blk && a.k < b.k);
}

/* Both copies of a pair given in both triangles, in block order. */
static adia_status both_triangles(const adia_triplets *blk, int nblk, int32_t i, int32_t j,
                                  adia_triplet_ref both[2])
{
    adia_triplet_ref a = find_entry(blk, nblk, i, j), b = find_entry(blk, nblk, j, i);
    both[0] = before(a, b) ? a : b;
    both[1] = before(a, b) ? b : a;
    return adia__error(ADIA_ERR_PARSE, "entry (%" PRId32 ",%" PRId32 ") is given in both "
                      "triangles of a symmetric matrix", i + 1, j + 1);
}

/* Row r of the result for row i of the matrix, or -1 outside [first, first + rows). */
static inline int32_t local_row(int32_t i, int32_t first, int32_t rows)
{
    return i >= first && i - first < rows ? i - first : -1;
}

/* Entries the result gets: each triplet in its row, and its mirror in row j. */
static adia_status count_entries(int32_t first, int32_t rows, const adia_triplets *blk, int nblk,
                                 int mirror, int64_t *total)
{
    *total = 0;
    for (int b = 0; b < nblk; b++)
        for (int64_t k = 0; k < blk[b].n; k++) {
            int32_t i = blk[b].row[k], j = blk[b].col[k];
            int64_t add = (local_row(i, first, rows) >= 0) +
                          (mirror && i != j && local_row(j, first, rows) >= 0);
            if (!adia_add_i64(*total, add, total))
                return adia__error(ADIA_ERR_OVERFLOW, "matrix entry count overflows");
        }
    return ADIA_OK;
}

adia_status adia__io_build_csr(int32_t first, int32_t rows, int32_t cols, const adia_triplets *blk,
                              int nblk, int mirror, adia_triplet_ref both[2],
                              adia_matrix **out)
{
    int64_t total;
    ADIA_TRY(count_entries(first, rows, blk, nblk, mirror, &total));
    adia_csr A;
    ADIA_TRY(adia__csr_alloc(&A, rows, cols, total, ADIA_DOUBLE));
    /* Count into rowptr[r + 1], prefix-sum into row starts, scatter using
     * rowptr[r] as the cursor of row r (it ends at row r's end = start of
     * row r + 1), then shift back by one. */
    int64_t *ptr = A.rowptr;
    for (int b = 0; b < nblk; b++)
        for (int64_t k = 0; k < blk[b].n; k++) {
            int32_t i = blk[b].row[k], j = blk[b].col[k];
            int32_t ri = local_row(i, first, rows), rj = local_row(j, first, rows);
            if (ri >= 0) ptr[ri + 1]++;
            if (mirror && i != j && rj >= 0) ptr[rj + 1]++;
        }
    for (int32_t r = 0; r < rows; r++) ptr[r + 1] += ptr[r];
    double *val = A.values;
    for (int b = 0; b < nblk; b++)
        for (int64_t k = 0; k < blk[b].n; k++) {
            int32_t i = blk[b].row[k], j = blk[b].col[k];
            int32_t ri = local_row(i, first, rows), rj = local_row(j, first, rows);
            double v = blk[b].val ? blk[b].val[k] : 1.0;
            if (ri >= 0) {
                int64_t p = ptr[ri]++;
                A.colind[p] = j;
                val[p] = v;
            }
            if (mirror && i != j && rj >= 0) {
                int64_t p = ptr[rj]++;
                A.colind[p] = i | MIRRORED;
                val[p] = mirror < 0 ? -v : v;
            }
        }
    memmove(ptr + 1, ptr, (size_t)rows * sizeof *ptr);
    ptr[0] = 0;
    bool pattern = true;
    for (int b = 0; b < nblk; b++) pattern = pattern && !blk[b].val;
    int32_t bi = 0, bj = 0;
    adia_status s = adia__io_finish_rows(&A, pattern, &bi, &bj);
    if (s != ADIA_OK) {
        adia__csr_free(&A);
        return s == ADIA_ERR_PARSE ? both_triangles(blk, nblk, first + bi, bj, both) : s;
    }
    return adia__matrix_wrap(&A, out);
}
