/*
 * row_extra.h -- host storage of the further row formats of survey 003 and
 * the IBM patent (seed 001): pcsr, rgcsr, cmrs, scsr, sbcsr, qcsr, mqt.
 * Conventions as in row_formats.h (ADIA_ROW_PAD marks a slot without a
 * column; values typed by vtype; structs own their arrays).
 */
#ifndef ADIA_ROW_EXTRA_H
#define ADIA_ROW_EXTRA_H

#include "row_formats.h"

/* Padded CSR (patent 001): CSR whose rows are padded with zeros to a
 * multiple of pad entries, so every row starts at a multiple of pad (an
 * aligned half-warp segment for pad = 16).  A padding entry repeats the
 * last real column of its row with value 0 (a valid address, adds 0); real
 * columns increase strictly, so a repeated column marks padding. */
typedef struct adia_pcsr {
    adia_csr csr;             /* padded arrays; csr.nnz = padded entries     */
    int32_t pad;
    int64_t nnz;              /* real entries                                */
} adia_pcsr;

/* Row-grouped CSR (Heller & Oberhuber; survey eqs. 2.20-2.26): groups of G
 * consecutive rows; inside group g (n_g rows, width w_g = its longest row)
 * slot k of local row r is at group_ptr[g] + k*n_g + r, i.e. first entries
 * of all rows of the group, then second entries...; slots beyond a row's
 * length are ADIA_ROW_PAD / 0. */
typedef struct adia_rgcsr {
    int32_t rows, cols, G;
    int32_t ngroups;          /* ceil(rows / G)                              */
    int64_t nnz;
    int64_t *group_ptr;       /* [ngroups+1] first slot of each group        */
    int32_t *rowlen;          /* [rows] entries of each row                  */
    int32_t *colind;          /* [group_ptr[ngroups]]                        */
    void *values;
    adia_value_type vtype;
} adia_rgcsr;

/* Compressed multi-row storage (Koza et al.; survey eqs. 2.30-2.35):
 * values and columns exactly as CSR; strips of h rows; strip_ptr[s] = first
 * entry of strip s; row_in_strip[k] = row of entry k inside its strip. */
typedef struct adia_cmrs {
    int32_t rows, cols, h;
    int32_t nstrips;          /* ceil(rows / h)                              */
    int64_t nnz;
    int64_t *strip_ptr;       /* [nstrips+1] */
    int32_t *row_in_strip;    /* [nnz] 0 .. h-1                              */
    int32_t *colind;          /* [nnz] */
    void *values;             /* [nnz] */
    adia_value_type vtype;
} adia_cmrs;

/* Streamed CSR (survey eqs. 2.37-2.47): row i goes to stream i mod S;
 * "block row" b = rows b*S .. b*S+S-1; every stream gets, for block row b,
 * the same number of slots, the longest row of the block row, starting at
 * ptr[b].  Slot k of block row b in stream t is at t*len + ptr[b] + k
 * (len = ptr[nbrows], one stream after the other).  Padding repeats the
 * row's last column with value 0, or is ADIA_ROW_PAD for rows without
 * entries (and rows past the end). */
typedef struct adia_scsr {
    int32_t rows, cols, S;
    int32_t nbrows;           /* ceil(rows / S)                              */
    int64_t nnz;
    int64_t *ptr;             /* [nbrows+1] first slot of each block row     */
    int32_t *colind;          /* [S*ptr[nbrows]] */
    void *values;             /* [S*ptr[nbrows]] */
    adia_value_type vtype;
} adia_scsr;

/* Streamed BCSR (survey eqs. 2.48-2.55): BCSR (row_formats.h) whose values
 * are stored stream by stream: stream ii holds row ii of every block in
 * block order, value (ii, jj) of block b at ii*nblocks*c + b*c + jj.  The
 * bcsr struct's values use that order here. */
typedef struct adia_sbcsr {
    adia_bcsr b;
} adia_sbcsr;

/* Patent block format (seed 001, "dense sub-blocks" paragraph): bcsr's
 * block structure (r x c blocks, c a multiple of pad so that every block
 * starts at an aligned column and its x segment loads coalesced), but a
 * block is not made dense: each of its r rows keeps its own entries (column
 * inside the block, value), zero-padded to a multiple of pad (a half-warp
 * for pad = 16).  Padding repeats the row's last column inside the block,
 * value 0 (as pcsr). */
typedef struct adia_pbcsr {
    adia_bcsr blocks;         /* structure only (values NULL)                */
    int32_t pad;
    int64_t *rowoff;          /* [nblocks*r + 1] row ii of block b starts at
                                 rowoff[b*r + ii] (a multiple of pad)        */
    int32_t *colind;          /* [rowoff[nblocks*r]] column inside the block */
    void *values;             /* [rowoff[nblocks*r]] */
} adia_pbcsr;

/* Quad-tree CSR (Zhang et al.; survey eqs. 2.27): the matrix, embedded in
 * a square of side Q*2^depth, split recursively into quadrants down to
 * Q x Q leaves (param qt, default 32); empty nodes are dropped and every
 * non-empty leaf (mixed or full) is a small CSR.  The tree is stored
 * linearised: its leaves in depth-first (Z/Morton) order with their tile
 * coordinates, which is all that SpMV and conversion need. */
typedef struct adia_qcsr {
    int32_t rows, cols, Q;
    int32_t depth;            /* levels above the leaves                     */
    int64_t nleaves, nnz;
    int32_t *leaf_row;        /* [nleaves] tile row (rows leaf_row*Q ...)    */
    int32_t *leaf_col;        /* [nleaves] tile column                       */
    int64_t *leaf_ptr;        /* [nleaves+1] first entry of each leaf        */
    int32_t *leaf_rowptr;     /* [nleaves*(Q+1)] leaf l's local CSR row
                                 pointers at l*(Q+1), relative to leaf_ptr  */
    int32_t *colind;          /* [nnz] column inside the leaf, 0 .. Q-1      */
    void *values;             /* [nnz] */
    adia_value_type vtype;
} adia_qcsr;

/* Minimal quad tree (Langr & Trdlicka; survey eqs. 2.28-2.29): the matrix
 * in a square of side 2^levels; each non-empty node of side > 1 writes 4
 * bits (quadrants NW, NE, SW, SE: 1 = non-empty), depth first, children
 * after their parent's 4 bits; the values of the non-empty 1x1 nodes
 * follow in the same (Z/Morton) order.  An empty matrix has no bits. */
typedef struct adia_mqt {
    int32_t rows, cols;
    int32_t levels;           /* side 2^levels >= rows, cols                 */
    int64_t nnz;
    int64_t nbits;            /* structure bits                              */
    uint8_t *bits;            /* [ceil(nbits/8)] bit b = bits[b/8] >> (b%8)  */
    void *values;             /* [nnz] in Z order                            */
    adia_value_type vtype;
} adia_mqt;

#endif /* ADIA_ROW_EXTRA_H */
