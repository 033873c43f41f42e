/* mtx_csr.h -- the matrix built during the parse.  While a general
 * coordinate file's entries come row by row (rows never decreasing: what
 * adia's own writer, scipy's and most others write), each parsed block is
 * appended to the CSR arrays as soon as it is checked: no triplet arrays
 * of the whole file, no count and scatter passes over them.  The first
 * entry out of row order turns what was appended back into one triplet
 * block (its rows regenerated from the row pointers), and the reader goes
 * on as for any file. */
#ifndef ADIA_IO_MTX_CSR_H
#define ADIA_IO_MTX_CSR_H

#include "internal.h"

typedef struct mtx_csr {
    bool on;                   /* building: the entries so far came row by row */
    bool strict;               /* and columns increasing in each row: nothing to sort or sum */
    bool pattern;              /* no values: every value is 1 */
    int32_t first, rows, cols; /* the rows kept, [first, first + rows) */
    int32_t row, col;          /* local row and column of the last entry (row -1: none) */
    int64_t n, cap, limit;     /* entries appended, allocated, at most (the declaration) */
    int64_t *rowptr;           /* rowptr[r] for r <= row so far */
    int32_t *colind;
    double *val;               /* NULL for pattern files */
} mtx_csr;

/* Start building rows [first, first + rows) of a rows x cols matrix of at
 * most limit entries, with room for reserve (what the data can hold: the
 * arrays grow past it only as entries arrive). */
adia_status adia__mtx_csr_init(mtx_csr *m, int32_t first, int32_t rows, int32_t cols,
                               bool pattern, int64_t reserve, int64_t limit);
/* Append n entries in file order (rows global, all among those kept).
 * *ordered false: one came before the last row appended, and none of the
 * n was appended. */
adia_status adia__mtx_csr_append(mtx_csr *m, const int32_t *row, const int32_t *col,
                                 const double *val, int64_t n, bool *ordered);
/* Stop building: the entries appended as triplets (global rows; *val NULL
 * for pattern files), m owning nothing any more. */
adia_status adia__mtx_csr_to_triplets(mtx_csr *m, int32_t **row, int32_t **col, double **val,
                                      int64_t *n);
/* The matrix: rows sorted and duplicates summed where the file needs it
 * (in file order; pattern: one entry of value 1); m owns nothing after. */
adia_status adia__mtx_csr_finish(mtx_csr *m, adia_matrix **out);
void adia__mtx_csr_free(mtx_csr *m);

#endif
