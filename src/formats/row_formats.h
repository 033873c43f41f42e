/*
 * row_formats.h -- the host storage of the basic row formats coo, ell, sell,
 * hyb, bcsr and csc (survey 003, sections 2.1-2.3), shared by their modules,
 * the CPU kernels (row_kernels.c) and the GPU kernels.
 *
 * Common conventions:
 *  - indices are 0-based; column/row indices int32, offsets into entry
 *    arrays int64;
 *  - values is a double* or float* array by vtype (never mixed);
 *  - a padding slot of ell/sell/hyb has column ADIA_ROW_PAD and value 0, so
 *    kernels skip it and to_csr is exact even for explicitly stored zeros;
 *  - every struct owns its arrays (freed by its module's destroy).
 */
#ifndef ADIA_ROW_FORMATS_H
#define ADIA_ROW_FORMATS_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Column index of a padding slot (value 0, never multiplied). */
#define ADIA_ROW_PAD (-1)

/* COO (eqs. 2.6-2.10): triplets sorted by row, then column. */
typedef struct adia_coo {
    int32_t rows, cols;
    int64_t nnz;
    int32_t *rowind;          /* [nnz] row of entry k, nondecreasing        */
    int32_t *colind;          /* [nnz] column of entry k, increasing per row */
    void *values;             /* [nnz] value of entry k                      */
    adia_value_type vtype;
} adia_coo;

/* ELLPACK (eqs. 2.3-2.5): width slots per row, column-major so that slot k
 * of row i is at k*rows + i (consecutive rows = consecutive addresses, the
 * coalesced order on a GPU).  Entries of a row fill its first slots in
 * column order; the rest are padding (ADIA_ROW_PAD). */
typedef struct adia_ell {
    int32_t rows, cols;
    int32_t width;            /* slots per row                               */
    int64_t nnz;              /* stored entries (non-padding slots)          */
    int32_t *colind;          /* [width*rows] column or ADIA_ROW_PAD         */
    void *values;             /* [width*rows] value, 0 in padding            */
    adia_value_type vtype;
} adia_ell;

/* SELL-C-sigma (eqs. 2.56-2.60, Kreutzer et al.): rows sorted by decreasing
 * length inside windows of sigma consecutive rows (sigma == 1: no sorting),
 * then cut into slices of C sorted rows; each slice is an ELL block of its
 * own width, column-major: slot k of local row r of slice s is at
 * slice_ptr[s] + k*C + r.  The last slice is padded to C rows with empty
 * rows.  y is written in the original row order through perm. */
typedef struct adia_sell {
    int32_t rows, cols;
    int32_t C, sigma;
    int32_t nslices;          /* ceil(rows / C)                              */
    int64_t nnz;              /* stored entries                              */
    int64_t *slice_ptr;       /* [nslices+1] first slot of each slice        */
    int32_t *slice_width;     /* [nslices] slots per row in slice s          */
    int32_t *perm;            /* [rows] perm[s*C + r] = original row of local
                                 row r of slice s (sorted position -> row)  */
    int32_t *colind;          /* [slice_ptr[nslices]] column or ADIA_ROW_PAD */
    void *values;             /* [slice_ptr[nslices]] value, 0 in padding    */
    adia_value_type vtype;
} adia_sell;

/* HYB (Bell & Garland): an ELL part of a fixed width plus the entries that
 * do not fit (row entries beyond the width) as COO.  Both parts have the
 * matrix's full dimensions; y = ell*x + coo*x. */
typedef struct adia_hyb {
    adia_ell ell;
    adia_coo coo;
} adia_hyb;

/* BCSR (eqs. 2.16-2.19): the matrix cut into r x c blocks (the last block
 * row/column may stick out of the matrix; those positions hold 0).  A block
 * is stored if it has at least one entry; blocks are listed block-row by
 * block-row as CSR over blocks, each block's r*c values row-major.  to_csr
 * keeps the nonzero values (a stored zero is indistinguishable from fill). */
typedef struct adia_bcsr {
    int32_t rows, cols;
    int32_t r, c;             /* block size                                  */
    int32_t brows, bcols;     /* ceil(rows/r), ceil(cols/c)                  */
    int64_t nblocks;          /* stored blocks                               */
    int64_t nnz;              /* entries of the source matrix               */
    int64_t *browptr;         /* [brows+1] first block of each block row     */
    int32_t *bcolind;         /* [nblocks] block column of each block        */
    void *values;             /* [nblocks*r*c] block b, element (i,j) at
                                 b*r*c + i*c + j                             */
    adia_value_type vtype;
} adia_bcsr;

/* CSC (section 2.1.5): CSR of the transpose. */
typedef struct adia_csc {
    int32_t rows, cols;
    int64_t nnz;
    int64_t *colptr;          /* [cols+1] first entry of each column         */
    int32_t *rowind;          /* [nnz] row of entry k, increasing per column */
    void *values;             /* [nnz] */
    adia_value_type vtype;
} adia_csc;

/* CPU SpMV kernels (row_kernels.c), y = alpha*A*x + beta*y accumulated in
 * double; x, y of the struct's value type.  csc needs a workspace and can
 * fail for memory.  hyb = adia__ell_spmv(beta) then adia__coo_spmv(beta = 1). */
adia_status adia__coo_spmv(const void *impl, double alpha, const void *x, double beta, void *y);
adia_status adia__ell_spmv(const void *impl, double alpha, const void *x, double beta, void *y);
adia_status adia__sell_spmv(const void *impl, double alpha, const void *x, double beta, void *y);
adia_status adia__bcsr_spmv(const void *impl, double alpha, const void *x, double beta, void *y);
adia_status adia__csc_spmv(const adia_csc *A, double alpha, const void *x, double beta, void *y);

/* SELL's C and sigma from the parameters (sell.c; the GPU build lays out
 * the same): C default 32, sigma default 256 rounded up to a multiple of
 * C; sigma must be 1 or a multiple of C (ADIA_ERR_INVALID_ARG). */
adia_status adia__row_sell_params(const adia_format_params *p, int32_t *C, int32_t *sigma);

#ifdef __cplusplus
}
#endif
#endif /* ADIA_ROW_FORMATS_H */
