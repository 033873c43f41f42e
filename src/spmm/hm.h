/*
 * hm.h -- the HM diagonal storage of seed 004 (Hossain & Mahmud): the
 * stored diagonals one after another, without padding beyond the matrix.
 *
 *   dg        number of stored diagonals
 *   ds[dg]    their offsets o = col - row in the seed's order: super-diagonals
 *             ascending (0 first when present), then sub-diagonals descending
 *             (-1, -2, ...)
 *   start     dg + 1 positions in list; diagonal d is list[start[d]..start[d+1])
 *   list      the values (double or float)
 *
 * Element a[i][j] lives on diagonal o = j - i at position min(i, j); the
 * diagonal covers rows max(0, -o) .. min(rows, cols - o) - 1, so rectangular
 * matrices need nothing special.  The transpose of diagonal o is diagonal -o
 * with the same values in the same positions (min(i,j) is symmetric): this is
 * what the products use instead of moving data.
 */
#ifndef ADIA_SPMM_HM_H
#define ADIA_SPMM_HM_H

#include "../core/internal.h"

typedef struct adia_hm {
    int32_t rows, cols;
    adia_value_type vtype;
    int32_t dg;
    int32_t *ds;
    int64_t *start;
    void *list;
    int64_t nnz;              /* nonzeros of the source matrix */
} adia_hm;

/* First row of diagonal o and its length inside a rows x cols matrix. */
static inline int64_t adia_diag_row0(int64_t o) { return o < 0 ? -o : 0; }
static inline int64_t adia_diag_len(int32_t rows, int32_t cols, int64_t o)
{
    int64_t end = (int64_t)cols - o < rows ? (int64_t)cols - o : rows;
    int64_t len = end - adia_diag_row0(o);
    return len > 0 ? len : 0;
}

/* The seed's order of offsets: super-diagonals ascending, then sub descending. */
static inline int adia_hm_before(int32_t a, int32_t b)
{
    if ((a >= 0) != (b >= 0)) return a >= 0;
    return a >= 0 ? a < b : a > b;
}

/* Build from CSR, storing every diagonal that holds an entry. */
adia_status adia__hm_build(const adia_csr *A, adia_value_type vt, adia_hm *out);
/* Back to CSR (double); padded zeros dropped, so exact for matrices without
 * explicit zeros. */
adia_status adia__hm_to_csr(const adia_hm *h, adia_csr *out);
adia_status adia__hm_check(const adia_hm *h);
void adia__hm_free(adia_hm *h);
/* Indices 0..dg-1 ordered by ascending offset (malloc'd). */
int32_t *adia__hm_sorted(const adia_hm *h);

/* ---- diagonal arrays in general (diag_util.c), shared by HM, CDM and the
 * products.  A set of dg diagonals with ascending offsets off[], the value at
 * (i, i + off[d]) stored at vals[base[d] + i] (base may be negative; the sum
 * never is for rows of the diagonal). */

/* Every offset that holds an entry of A, ascending (malloc'd, *n entries).
 * Uses a mark array of rows + cols bytes. */
adia_status adia__csr_offsets(const adia_csr *A, int32_t **offsets, int32_t *n);
/* First index in the sorted offsets off[0..dg) with off >= v (dg if none). */
int32_t adia__offset_lower_bound(int32_t dg, const int32_t *off, int64_t v);
/* Index range [*lo, *hi) of the diagonals of off[0..dg) that cross row i of a
 * matrix with cols columns (offsets -i <= o < cols - i: contiguous). */
void adia__diag_row_range(int32_t dg, const int32_t *off, int32_t cols, int32_t i,
                         int32_t *lo, int32_t *hi);
/* Write A's values (double CSR) into vals (of type vt); every offset of A
 * must be in off (ADIA_ERR_INTERNAL otherwise). */
adia_status adia__diag_scatter(const adia_csr *A, int32_t dg, const int32_t *off,
                              const int64_t *base, void *vals, adia_value_type vt);
/* CSR (double) rows x cols from the diagonals; keep_zeros: every in-matrix
 * entry of every diagonal, else only the nonzero values. */
adia_status adia__diag_emit_csr(int32_t rows, int32_t cols, int32_t dg,
                               const int32_t *off, const int64_t *base,
                               const void *vals, adia_value_type vt,
                               bool keep_zeros, adia_csr *out);

#endif
