/* mtx_csr.h -- the matrix built during the parse.  While a general
 * coordinate file's entries come row by row (rows never decreasing: what
 * adia's own writer, scipy's and most others write), each parsed block
 * goes straight into the CSR arrays: no triplet arrays of the whole file,
 * no count and scatter passes over them.  Three steps, so that only the
 * first is per block in file order: each thread scans the blocks it
 * parsed (mtx_span), the reader places them one after the other (their
 * offsets, the order across blocks), then the threads fill them in (row
 * pointers, columns, values; page faults of the new arrays included).
 * The first entry out of row order turns what was placed back into one
 * triplet block (its rows regenerated from the row pointers), and the
 * reader goes on as for any file. */
#ifndef ADIA_IO_MTX_CSR_H
#define ADIA_IO_MTX_CSR_H

#include "internal.h"

typedef struct mtx_csr {
    bool on;                   /* building: the entries so far came row by row */
    bool strict;               /* and columns increasing in each row: nothing to sort or sum */
    bool pattern;              /* no values: every value is 1 */
    int32_t first, rows, cols; /* the rows kept, [first, first + rows) */
    int32_t row, col;          /* local row and column of the last entry (row -1: none) */
    int64_t n, cap, limit;     /* entries placed, allocated, at most (the declaration) */
    int64_t *rowptr;           /* rowptr[r] for r <= row, once filled in */
    int32_t *colind;
    double *val;               /* NULL for pattern files */
} mtx_csr;

/* Start building rows [first, first + rows) of a rows x cols matrix of at
 * most limit entries, with room for reserve (what the data can hold: the
 * arrays grow past it only as entries arrive). */
adia_status adia__mtx_csr_init(mtx_csr *m, int32_t first, int32_t rows, int32_t cols,
                               bool pattern, int64_t reserve, int64_t limit);
/* The order of a block's n > 0 entries (rows global). */
typedef struct mtx_span {
    bool ordered;              /* rows never decrease */
    bool strict;               /* and columns increase within each row */
    int32_t first_row, first_col, last_row, last_col;
} mtx_span;

void adia__mtx_csr_scan(const int32_t *row, const int32_t *col, int64_t n, mtx_span *s);
/* Place the next block (n entries of span s) after those placed: *at its
 * first entry's offset, *after the local row of the entry before it.
 * *ordered false: it does not follow them in row order, nothing placed. */
adia_status adia__mtx_csr_place(mtx_csr *m, const mtx_span *s, int64_t n, bool *ordered,
                                int64_t *at, int32_t *after);
/* Fill in a placed block (blocks placed apart may be filled at once). */
void adia__mtx_csr_fill(mtx_csr *m, int64_t at, int32_t after, const int32_t *row,
                        const int32_t *col, const double *val, int64_t n);
/* Stop building (every placed block filled in): the entries as triplets (global rows; *val NULL
 * for pattern files), m owning nothing any more. */
adia_status adia__mtx_csr_to_triplets(mtx_csr *m, int32_t **row, int32_t **col, double **val,
                                      int64_t *n);
/* The matrix: rows sorted and duplicates summed where the file needs it
 * (in file order; pattern: one entry of value 1); m owns nothing after. */
adia_status adia__mtx_csr_finish(mtx_csr *m, adia_matrix **out);
void adia__mtx_csr_free(mtx_csr *m);

#endif
