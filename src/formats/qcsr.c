/* qcsr.c -- the "qcsr" format, quad-tree CSR (Zhang et al.; survey 003
 * section 2.2.3, eq. 2.27): the matrix split recursively into quadrants
 * down to Q x Q leaves (param qt, default 32); empty nodes are dropped,
 * each non-empty leaf is a CSR with local row pointers (32-bit, so Q is at
 * most 46340) and local columns.  Leaves are kept in the tree's depth-first
 * (Z) order with their tile coordinates (see row_extra.h).  Storage:
 *   nnz*(4 + value) + N_a*(Q + 1)*4 + N_a*8 + (N_a + 1)*8,
 * eq. 2.27's N_a x CSR_storage (2 nnz_leaf + Q + 1 per leaf) plus the leaf
 * coordinates and entry pointers the formula leaves out.
 * CPU SpMV: threads own ranges of tile rows; each scans the leaf list and
 * multiplies its own leaves into a shared double accumulator (disjoint
 * rows, no races), then finishes its rows. */
#include "row_common.h"
#include "row_extra.h"

#include <inttypes.h>
#include <omp.h>

#define VALUE double
#define FN(name) name##_d
#include "qcsr_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "qcsr_kernel.inc"

static void qcsr_free(adia_qcsr *T)
{
    free(T->leaf_row);
    free(T->leaf_col);
    free(T->leaf_ptr);
    free(T->leaf_rowptr);
    free(T->colind);
    free(T->values);
    free(T);
}

static adia_status qcsr_alloc(adia_qcsr *T)
{
    int64_t rp;
    ADIA_TRY(adia__row_mul(T->nleaves, (int64_t)T->Q + 1, "qcsr leaf row pointers", &rp));
    T->leaf_row = adia__alloc((size_t)T->nleaves, sizeof *T->leaf_row, "qcsr leaf rows");
    T->leaf_col = adia__alloc((size_t)T->nleaves, sizeof *T->leaf_col, "qcsr leaf columns");
    T->leaf_ptr = adia__alloc((size_t)T->nleaves + 1, sizeof *T->leaf_ptr, "qcsr leaf pointers");
    T->leaf_rowptr = adia__calloc((size_t)rp, sizeof *T->leaf_rowptr, "qcsr leaf row pointers");
    T->colind = adia__alloc((size_t)T->nnz, sizeof *T->colind, "qcsr column indices");
    T->values = adia__row_values_alloc(T->nnz, T->vtype, "qcsr values");
    return T->leaf_row && T->leaf_col && T->leaf_ptr && T->leaf_rowptr && T->colind && T->values
               ? ADIA_OK : ADIA_ERR_NO_MEMORY;
}

/* Leaves from the Z-ordered entries: a new leaf at every new tile key;
 * entries of one leaf come in row-major order. */
static void fill_leaves(const adia_csr *A, const row_zentry *e, adia_qcsr *T)
{
    int64_t l = -1;
    for (int64_t p = 0; p < A->nnz; p++) {
        if (p == 0 || e[p].key != e[p - 1].key) {
            T->leaf_ptr[++l] = p;
            T->leaf_row[l] = e[p].i / T->Q;
            T->leaf_col[l] = A->colind[e[p].k] / T->Q;
        }
        T->leaf_rowptr[l * (T->Q + 1) + e[p].i % T->Q + 1]++;
        T->colind[p] = A->colind[e[p].k] % T->Q;
        row_value_set(T->values, T->vtype, p, adia_csr_value(A, e[p].k));
    }
    T->leaf_ptr[T->nleaves] = A->nnz;
    for (l = 0; l < T->nleaves; l++)
        for (int32_t r = 0; r < T->Q; r++)
            T->leaf_rowptr[l * (T->Q + 1) + r + 1] += T->leaf_rowptr[l * (T->Q + 1) + r];
}

static adia_status qcsr_build(const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    int32_t Q = adia_param(p->qt_size, 32);
    if ((int64_t)Q * Q > INT32_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG, "qcsr: qt=%d too large (leaf offsets are "
                          "32-bit: at most 46340)", (int)Q);
    row_zentry *e;
    ADIA_TRY(adia__row_zorder(A, Q, &e));
    adia_qcsr *T = adia__calloc(1, sizeof *T, "qcsr format");
    if (!T) {
        free(e);
        return ADIA_ERR_NO_MEMORY;
    }
    *T = (adia_qcsr){.rows = A->rows, .cols = A->cols, .Q = Q, .nnz = A->nnz, .vtype = vt};
    int32_t side = A->rows > A->cols ? A->rows : A->cols;
    while (((int64_t)Q << T->depth) < side) T->depth++;
    for (int64_t k = 0; k < A->nnz; k++) T->nleaves += k == 0 || e[k].key != e[k - 1].key;
    adia_status s = qcsr_alloc(T);
    if (s == ADIA_OK) fill_leaves(A, e, T);
    free(e);
    if (s != ADIA_OK) {
        qcsr_free(T);
        return s;
    }
    *impl = T;
    return ADIA_OK;
}

/* Entries leaf by leaf, counted into out->rowptr (next NULL) or placed at
 * next[row] (next given): leaves of one tile
 * row come in increasing tile column (Z order is monotone along a row), so
 * appending per row keeps columns sorted. */
static void walk(const adia_qcsr *T, adia_csr *out, int64_t *next)
{
    for (int64_t l = 0; l < T->nleaves; l++) {
        const int32_t *rp = T->leaf_rowptr + l * (T->Q + 1);
        for (int32_t r = 0; r < T->Q; r++) {
            int64_t i = (int64_t)T->leaf_row[l] * T->Q + r;
            for (int64_t k = T->leaf_ptr[l] + rp[r]; k < T->leaf_ptr[l] + rp[r + 1]; k++) {
                if (!next) {   /* counting pass */
                    out->rowptr[i + 1]++;
                    continue;
                }
                int64_t q = next[i]++;
                out->colind[q] = T->leaf_col[l] * T->Q + T->colind[k];
                ((double *)out->values)[q] = row_value_get(T->values, T->vtype, k);
            }
        }
    }
}

static adia_status qcsr_to_csr(const void *impl, adia_csr *out)
{
    const adia_qcsr *T = impl;
    ADIA_TRY(adia__csr_alloc(out, T->rows, T->cols, T->nnz, ADIA_DOUBLE));
    int64_t *next = adia__alloc((size_t)T->rows + 1, sizeof *next, "qcsr fill cursors");
    if (!next) {
        adia__csr_free(out);
        return ADIA_ERR_NO_MEMORY;
    }
    walk(T, out, NULL);
    for (int32_t i = 0; i < T->rows; i++) out->rowptr[i + 1] += out->rowptr[i];
    memcpy(next, out->rowptr, ((size_t)T->rows + 1) * sizeof *next);
    walk(T, out, next);
    free(next);
    return ADIA_OK;
}

static adia_status qcsr_check(const void *impl)
{
    const adia_qcsr *T = impl;
    int64_t tiles_r = ((int64_t)T->rows + T->Q - 1) / T->Q, tiles_c = ((int64_t)T->cols + T->Q - 1) / T->Q;
    if (T->leaf_ptr[0] != 0 || T->leaf_ptr[T->nleaves] != T->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "qcsr: leaf pointers run from %" PRId64
                          " to %" PRId64 ", expected 0 to %" PRId64, T->leaf_ptr[0],
                          T->leaf_ptr[T->nleaves], T->nnz);
    ADIA_TRY(adia__row_check_index("qcsr", "colind", T->colind, T->nnz, T->Q, false));
    for (int64_t l = 0; l < T->nleaves; l++) {
        const int32_t *rp = T->leaf_rowptr + l * (T->Q + 1);
        bool bad = T->leaf_row[l] < 0 || T->leaf_row[l] >= tiles_r || T->leaf_col[l] < 0 ||
                   T->leaf_col[l] >= tiles_c || rp[0] != 0 ||
                   rp[T->Q] != T->leaf_ptr[l + 1] - T->leaf_ptr[l] || rp[T->Q] == 0;
        for (int32_t r = 0; !bad && r < T->Q; r++) {
            int64_t i = (int64_t)T->leaf_row[l] * T->Q + r;
            bad = rp[r + 1] < rp[r] || (rp[r + 1] > rp[r] && i >= T->rows);
            for (int64_t k = T->leaf_ptr[l] + rp[r]; !bad && k < T->leaf_ptr[l] + rp[r + 1]; k++)
                bad = (k > T->leaf_ptr[l] + rp[r] && T->colind[k] <= T->colind[k - 1]) ||
                      (int64_t)T->leaf_col[l] * T->Q + T->colind[k] >= T->cols;
        }
        if (bad)
            return adia__error(ADIA_ERR_INVALID_MATRIX, "qcsr: leaf %" PRId64 " (tile %d, %d) is "
                              "empty, out of the matrix or not a valid local CSR", l,
                              (int)T->leaf_row[l], (int)T->leaf_col[l]);
    }
    return ADIA_OK;
}

static void qcsr_destroy(void *impl) { qcsr_free(impl); }

static int64_t qcsr_padded_zeros(const void *impl)
{
    (void)impl;
    return 0;
}

static int64_t qcsr_storage_bytes(const void *impl)
{
    const adia_qcsr *T = impl;
    return T->nnz * 4 + row_value_bytes(T->nnz, T->vtype) + T->nleaves * ((int64_t)T->Q + 1) * 4 +
           T->nleaves * 8 + (T->nleaves + 1) * 8;
}

static adia_status qcsr_spmv(const void *impl, double alpha, const void *x,
                             double beta, void *y)
{
    const adia_qcsr *T = impl;
    double *acc = adia__calloc((size_t)T->rows + 1, sizeof *acc, "qcsr row sums");
    if (!acc) return ADIA_ERR_NO_MEMORY;
    if (T->vtype == ADIA_DOUBLE) qcsr_spmv_d(T, alpha, x, beta, y, acc);
    else qcsr_spmv_f(T, alpha, x, beta, y, acc);
    free(acc);
    return ADIA_OK;
}

const adia_format_ops adia__format_qcsr = {
    .name = "qcsr",
    .description = "quad-tree CSR: non-empty Q x Q leaves as small CSRs, Z order (param qt)",
    .build = qcsr_build,
    .to_csr = qcsr_to_csr,
    .check = qcsr_check,
    .destroy = qcsr_destroy,
    .padded_zeros = qcsr_padded_zeros,
    .storage_bytes = qcsr_storage_bytes,
    .spmv = qcsr_spmv,
};
