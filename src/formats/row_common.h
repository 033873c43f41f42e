/*
 * row_common.h -- small pieces the row-format modules share: typed value
 * arrays, row lengths, the to_csr builder, index checks and the sizes in
 * bytes of index/value arrays used by every storage_bytes.
 */
#ifndef ADIA_ROW_COMMON_H
#define ADIA_ROW_COMMON_H

#include "internal.h"
#include "row_formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The csr module's table: formats stored as CSR arrays reuse its slots. */
extern const adia_format_ops adia__format_csr;

/* Zero-filled array of n values of type vt (NULL + error on failure). */
void *adia__row_values_alloc(int64_t n, adia_value_type vt, const char *what);
/* Store / load value i of a typed array. */
static inline void row_value_set(void *v, adia_value_type vt, int64_t i, double x)
{
    if (vt == ADIA_DOUBLE) ((double *)v)[i] = x;
    else ((float *)v)[i] = (float)x;
}
static inline double row_value_get(const void *v, adia_value_type vt, int64_t i)
{
    return vt == ADIA_DOUBLE ? ((const double *)v)[i] : (double)((const float *)v)[i];
}
/* Bytes of n values of type vt (n * 4 or 8). */
static inline int64_t row_value_bytes(int64_t n, adia_value_type vt)
{
    return n * (int64_t)adia_value_size(vt);
}
/* Length of row i of A. */
static inline int64_t row_len(const adia_csr *A, int32_t i)
{
    return A->rowptr[i + 1] - A->rowptr[i];
}
/* Longest row of A (0 for no rows). */
int64_t adia__row_max_len(const adia_csr *A);

/* n*m as int64 with an overflow error naming what; ADIA_OK or error. */
adia_status adia__row_mul(int64_t n, int64_t m, const char *what, int64_t *out);

/* Check idx[0..n) lies in [0, limit) or equals ADIA_ROW_PAD when pad_ok;
 * the message names the format, the array and the first bad position. */
adia_status adia__row_check_index(const char *fmt, const char *array, const int32_t *idx,
                            int64_t n, int32_t limit, bool pad_ok);

/* to_csr builder: out gets rows x cols double CSR with room for nnz
 * entries; add entries in row-major order with row_csr_push, then
 * adia__row_csr_finish fills rowptr (and checks that nnz entries came). */
typedef struct row_csr_builder {
    adia_csr *out;
    int64_t n;                /* entries pushed */
} row_csr_builder;
adia_status adia__row_csr_begin(row_csr_builder *b, adia_csr *out, int32_t rows,
                          int32_t cols, int64_t nnz);
static inline void row_csr_push(row_csr_builder *b, int32_t i, int32_t j, double v)
{
    b->out->rowptr[i + 1]++;
    b->out->colind[b->n] = j;
    ((double *)b->out->values)[b->n++] = v;
}
adia_status adia__row_csr_finish(row_csr_builder *b, const char *fmt);

/* Entries of a padded row slice col[0..n) that are real: the strictly
 * increasing prefix of non-padding columns (padding repeats the last real
 * column or is ADIA_ROW_PAD), as pcsr and scsr store rows. */
static inline int64_t row_real_prefix(const int32_t *col, int64_t n)
{
    int64_t k = 0;
    while (k < n && col[k] != ADIA_ROW_PAD && (k == 0 || col[k] > col[k - 1])) k++;
    return k;
}

/* The slot k < n of a row whose columns col[k * stride] ascend, padding
 * (ADIA_ROW_PAD) after them, that holds column c; -1 if none.  Compared
 * unsigned, the padding's -1 sorts after every column: the scan stops at
 * the first column past c. */
static inline int64_t row_find_col(const int32_t *col, int64_t n, int64_t stride, int32_t c)
{
    for (int64_t k = 0; k < n; k++) {
        uint32_t j = (uint32_t)col[k * stride];
        if (j >= (uint32_t)c) return j == (uint32_t)c ? k : -1;
    }
    return -1;
}
/* Rows of a matrix above which its diagonal's read runs on threads. */
#define ROW_DIAGONAL_PAR_MIN 32768

/* y_i = alpha*sum + beta*y_i with beta == 0 ignoring y (NaN/Inf in an
 * output-only y must not leak): every kernel's last step. */
static inline double row_axpby(double alpha, double sum, double beta, double y)
{
    return beta == 0.0 ? alpha * sum : alpha * sum + beta * y;
}

/* Even split of [0, n) into parts: start of part t of parts. */
static inline int64_t row_split(int64_t n, int t, int parts)
{
    return (int64_t)((__int128)n * t / parts);
}

/* COO and ELL parts, shared by coo, ell and hyb (defined in coo.c, ell.c).
 * adia__row_coo_alloc: arrays for nnz entries (values zeroed). */
adia_status adia__row_coo_alloc(adia_coo *C, int32_t rows, int32_t cols, int64_t nnz,
                          adia_value_type vt);
void adia__row_coo_free(adia_coo *C);
adia_status adia__row_coo_check(const adia_coo *C);
/* ELL part of A with the given width.  Entries beyond the width go to rest
 * (allocated here) or, when rest is NULL, make it an error naming the row. */
adia_status adia__row_ell_fill(const adia_csr *A, int32_t width, adia_value_type vt,
                         adia_ell *E, adia_coo *rest);
void adia__row_ell_free(adia_ell *E);
adia_status adia__row_ell_check(const adia_ell *E);
/* A(i,i) of E's rows into d (every row written: 0 where not stored), and
 * of C's entries (only the rows holding one written: HYB's overflow adds
 * to its ELL part's), rows or entries on threads. */
void adia__row_ell_diagonal(const adia_ell *E, double *d);
void adia__row_coo_diagonal(const adia_coo *C, double *d);
/* CSR of E plus (when not NULL) the row-sorted entries of rest whose
 * columns follow E's in each row, as hyb builds them. */
adia_status adia__row_ell_to_csr(const adia_ell *E, const adia_coo *rest, adia_csr *out);

/* Entries of A in Z (Morton) order of their q x q tiles, used by the
 * quad-tree formats: key = bits of (i/q, j/q) interleaved (row bit above
 * column bit), ties in row-major order (k = CSR position). */
typedef struct row_zentry {
    uint64_t key;
    int64_t k;
    int32_t i;
} row_zentry;
adia_status adia__row_zorder(const adia_csr *A, int32_t q, row_zentry **out);

/* BCSR pieces shared by bcsr and sbcsr (bcsr.c).  adia__row_bcsr_fill: the
 * r x c blocks of A; adia__row_bcsr_to_csr: the nonzero values back. */
adia_status adia__row_bcsr_fill(const adia_csr *A, int32_t r, int32_t c, adia_value_type vt,
                          adia_bcsr *B);
/* Only the block structure (dimensions, browptr, sorted bcolind; values
 * NULL), shared with pbcsr. */
adia_status adia__row_block_layout(const adia_csr *A, int32_t r, int32_t c, adia_value_type vt,
                             adia_bcsr *B);
void adia__row_bcsr_free(adia_bcsr *B);
adia_status adia__row_bcsr_check(const adia_bcsr *B);
adia_status adia__row_bcsr_to_csr(const adia_bcsr *B, adia_csr *out);
int64_t adia__row_bcsr_storage_bytes(const adia_bcsr *B);
/* Block size from parameter given (<= 0: min(dflt, extent), at least 1); a given
 * size larger than extent is an error naming fmt, key and what. */
adia_status adia__row_block_param(const char *fmt, const char *key, int32_t given,
                            int32_t dflt, int32_t extent, const char *what, int32_t *out);

#ifdef __cplusplus
}
#endif
#endif /* ADIA_ROW_COMMON_H */
