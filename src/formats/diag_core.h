/*
 * diag_core.h -- the one storage structure behind every diagonal format.
 *
 * DIA, HDI, BRCSD-I, BRCSD-II and CRSD all cut the rows into *pieces*; each
 * piece points to an *offset group* (a list of diagonal offsets o = col-row,
 * shared by consecutive pieces with the same list) and stores DIA-style data
 * for its rows: for piece p with rows [r0, r1) and group g with K offsets,
 *
 *     value of diagonal k at row r  =  data[piece_data[p] + k*(r1-r0) + (r-r0)]
 *
 * so consecutive rows of one diagonal are consecutive in memory (coalesced
 * on a GPU).  Entries whose column o+r falls outside [0, cols) are stored as
 * zero and must never be read as x[o+r] by a kernel.  Formats differ only in
 * the partition policy: how rows are cut and which offsets a piece keeps.
 * CRSD additionally stores its scatter points apart, as COO.
 */
#ifndef ADIA_DIAG_CORE_H
#define ADIA_DIAG_CORE_H

#include "../core/internal.h"

typedef struct adia_diag {
    int32_t rows, cols;
    adia_value_type vtype;

    int32_t n_pieces;
    int32_t *piece_start;     /* n_pieces + 1 row boundaries, [0] = 0, [n] = rows */
    int32_t *piece_group;     /* n_pieces: group of each piece                 */
    int64_t *piece_data;      /* n_pieces + 1: element offset of each piece    */

    int32_t n_groups;
    int32_t *group_start;     /* n_groups + 1: index into offsets              */
    int32_t *offsets;         /* group_start[n_groups] offsets, ascending in a group */

    void *data;               /* piece_data[n_pieces] values (double or float) */

    int64_t n_scatter;        /* CRSD scatter points (COO, row-sorted), else 0 */
    int32_t *scatter_row, *scatter_col;
    void *scatter_val;

    int64_t nnz;              /* nonzeros of the source matrix                 */
} adia_diag;

#endif /* ADIA_DIAG_CORE_H */
