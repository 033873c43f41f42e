/* triplets.h -- CSR assembly from blocks of 0-based (row, col, value)
 * triplets, as the readers produce them. */
#ifndef ADIA_IO_TRIPLETS_H
#define ADIA_IO_TRIPLETS_H

#include "internal.h"

typedef struct adia_triplets {
    int64_t n;
    const int32_t *row, *col;   /* in range: the caller checked */
    const double *val;          /* NULL: every value is 1 (pattern) */
} adia_triplets;

/* An entry: block blk, index k. */
typedef struct adia_triplet_ref {
    int blk;
    int64_t k;
} adia_triplet_ref;

/* Build rows [first, first + rows) of the matrix from the blocks in order
 * (row i of the result is row first + i; entries of other rows, mirrored
 * copies included, are dropped: a block of rows of a distributed matrix);
 * mirror 0: as given, 1: also
 * add (j, i, v) for i != j (symmetric), -1: add (j, i, -v) (skew).
 * Duplicates are summed in block order, except in pattern matrices (every
 * val NULL) where a position given twice is still one entry of value 1;
 * explicit zeros are kept.  With mirror, a pair given in both triangles,
 * (i, j) and (j, i), is ADIA_ERR_PARSE and both[] gets the two entries in
 * block order (for the caller's message). */
adia_status adia__io_build_csr(int32_t first, int32_t rows, int32_t cols, const adia_triplets *blk,
                              int nblk, int mirror, adia_triplet_ref both[2],
                              adia_matrix **out);

/* Sort the rows of A that are not sorted (stably: in file order) and sum
 * duplicates (pattern: keep one), compacting in place; nnz is updated.  A
 * direct and a mirrored copy of one position (see triplets.c) stop it
 * with ADIA_ERR_PARSE and *both_row, *both_col set. */
adia_status adia__io_finish_rows(adia_csr *A, bool pattern, int32_t *both_row, int32_t *both_col);

#endif
