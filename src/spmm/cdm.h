/*
 * cdm.h -- the compact diagonal storage (CDM) of seed 004, section 3.2, for
 * square n x n matrices: compact diagonal k (0 <= k < n) is the
 * super-diagonal k (length n - k) stacked over the sub-diagonal n - k
 * (length k), one vector of length n.  Entry t of compact diagonal k is
 *
 *     a[t][(t + k) mod n]
 *
 * (t < n - k: the super-diagonal; t >= n - k: the sub-diagonal).  The
 * transpose's compact diagonal k is the reversed compact diagonal of the
 * seed, entry t = a[(t + k) mod n][t] = entry (t + k) mod n of compact
 * diagonal (n - k) mod n: a rotation of stored data, no data movement.
 *
 *   dg, ds[dg]   the stored compact diagonals, ascending in [0, n)
 *   list         dg * n values, compact diagonal d at list[d * n ..]
 */
#ifndef ADIA_SPMM_CDM_H
#define ADIA_SPMM_CDM_H

#include "hm.h"

typedef struct adia_cdm {
    int32_t n;
    adia_value_type vtype;
    int32_t dg;
    int32_t *ds;
    void *list;
    int64_t nnz;              /* nonzeros of the source matrix */
} adia_cdm;

/* Zero-filled storage for the given compact diagonals (ascending; copied). */
adia_status adia__cdm_alloc(int32_t n, int32_t dg, const int32_t *ds,
                           adia_value_type vt, adia_cdm *out);
/* Build from a square CSR matrix (ADIA_ERR_DIMENSION otherwise). */
adia_status adia__cdm_build(const adia_csr *A, adia_value_type vt, adia_cdm *out);
/* Back to CSR (double), padded zeros dropped. */
adia_status adia__cdm_to_csr(const adia_cdm *c, adia_csr *out);
adia_status adia__cdm_check(const adia_cdm *c);
void adia__cdm_free(adia_cdm *c);
/* The stored data as ordinary diagonals (see hm.h): every super-diagonal k
 * and sub-diagonal k - n (k > 0) of the stored compact diagonals, ascending,
 * both with base d * n (malloc'd, *count entries). */
adia_status adia__cdm_view(const adia_cdm *c, int32_t **off, int64_t **base,
                          int32_t *count);
/* Index of compact diagonal k in ds, or -1. */
int32_t adia__cdm_find(const adia_cdm *c, int64_t k);

#endif
