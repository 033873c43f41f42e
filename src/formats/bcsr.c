/* bcsr.c -- the "bcsr" format (blocked CSR, survey 003 eqs. 2.16-2.19):
 * the matrix cut into r x c blocks (params r, c; default 2x2, clamped to
 * the matrix when not given; a given size larger than the matrix is an
 * error); every block holding an entry is stored, block rows as CSR over
 * blocks (int64 block-row pointers, int32 block columns), the r*c values of
 * a block row-major.  Blocks of the last block row/column may stick out of
 * the matrix; those positions hold 0.  Storage:
 *   (brows + 1)*8 + nblocks*4 + nblocks*r*c*value
 * Eq. 2.19 writes N_nzb*2r + N_nzb + m/r + 1 elements; a block holds r*c
 * values (r^2 for square blocks, not 2r), and m/r must be rounded up.
 * to_csr returns the nonzero values (stored zeros look like fill). */
#include "row_common.h"

#include <inttypes.h>

void adia__row_bcsr_free(adia_bcsr *B)
{
    free(B->browptr);
    free(B->bcolind);
    free(B->values);
    memset(B, 0, sizeof *B);
}

/* Block columns of block row bi into B->bcolind + B->browptr[bi] when
 * write, counted into *n always; mark[] (bcols, initialised -1) remembers
 * the last block row that saw each block column. */
static int64_t block_row_scan(const adia_csr *A, const adia_bcsr *B, int32_t bi,
                              int64_t *mark, bool write)
{
    int64_t n = 0;
    int32_t i1 = (int32_t)(((int64_t)bi + 1) * B->r < A->rows ? ((int64_t)bi + 1) * B->r : A->rows);
    for (int32_t i = bi * B->r; i < i1; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int32_t bj = A->colind[k] / B->c;
            if (mark[bj] == bi) continue;
            mark[bj] = bi;
            if (write) B->bcolind[B->browptr[bi] + n] = bj;
            n++;
        }
    return n;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Values of block row bi: each entry goes to its block (binary search in
 * the sorted block columns of the row). */
static void block_row_fill(const adia_csr *A, adia_bcsr *B, int32_t bi)
{
    int64_t b0 = B->browptr[bi], nb = B->browptr[bi + 1] - b0, bs = (int64_t)B->r * B->c;
    int32_t i1 = (int32_t)(((int64_t)bi + 1) * B->r < A->rows ? ((int64_t)bi + 1) * B->r : A->rows);
    for (int32_t i = bi * B->r; i < i1; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int32_t bj = A->colind[k] / B->c;
            const int32_t *hit = bsearch(&bj, B->bcolind + b0, (size_t)nb, sizeof bj, cmp_i32);
            int64_t b = b0 + (hit - (B->bcolind + b0));
            row_value_set(B->values, B->vtype,
                          b * bs + (int64_t)(i - bi * B->r) * B->c + A->colind[k] % B->c,
                          adia_csr_value(A, k));
        }
}

adia_status adia__row_block_layout(const adia_csr *A, int32_t r, int32_t c, adia_value_type vt,
                             adia_bcsr *B)
{
    *B = (adia_bcsr){.rows = A->rows, .cols = A->cols, .r = r, .c = c,
                     .brows = (int32_t)(((int64_t)A->rows + r - 1) / r),
                     .bcols = (int32_t)(((int64_t)A->cols + c - 1) / c), .nnz = A->nnz,
                     .vtype = vt};
    int64_t *mark = adia__alloc((size_t)B->bcols, sizeof *mark, "bcsr block marks");
    B->browptr = adia__calloc((size_t)B->brows + 1, sizeof *B->browptr, "bcsr block-row pointers");
    adia_status s = mark && B->browptr ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        for (int32_t j = 0; j < B->bcols; j++) mark[j] = -1;
        for (int32_t bi = 0; bi < B->brows; bi++)
            B->browptr[bi + 1] = B->browptr[bi] + block_row_scan(A, B, bi, mark, false);
        B->nblocks = B->browptr[B->brows];
        B->bcolind = adia__alloc((size_t)B->nblocks, sizeof *B->bcolind, "bcsr block columns");
        if (!B->bcolind) s = ADIA_ERR_NO_MEMORY;
    }
    if (s == ADIA_OK) {
        for (int32_t j = 0; j < B->bcols; j++) mark[j] = -1;
        for (int32_t bi = 0; bi < B->brows; bi++) {
            block_row_scan(A, B, bi, mark, true);
            qsort(B->bcolind + B->browptr[bi], (size_t)(B->browptr[bi + 1] - B->browptr[bi]),
                  sizeof *B->bcolind, cmp_i32);
        }
    }
    free(mark);
    if (s != ADIA_OK) adia__row_bcsr_free(B);
    return s;
}

adia_status adia__row_bcsr_fill(const adia_csr *A, int32_t r, int32_t c, adia_value_type vt,
                          adia_bcsr *B)
{
    int64_t bsize;
    ADIA_TRY(adia__row_block_layout(A, r, c, vt, B));
    adia_status s = adia__row_mul(r, c, "bcsr block", &bsize);
    if (s == ADIA_OK) s = adia__row_mul(B->nblocks, bsize, "bcsr values", &bsize);
    if (s == ADIA_OK) {
        B->values = adia__row_values_alloc(bsize, vt, "bcsr values");
        if (!B->values) s = ADIA_ERR_NO_MEMORY;
    }
    if (s != ADIA_OK) {
        adia__row_bcsr_free(B);
        return s;
    }
    for (int32_t bi = 0; bi < B->brows; bi++) block_row_fill(A, B, bi);
    return ADIA_OK;
}

/* Nonzero values inside the matrix, row-major: counted, and pushed into b
 * when b is not NULL. */
static int64_t bcsr_walk(const adia_bcsr *B, row_csr_builder *b)
{
    int64_t n = 0, bs = (int64_t)B->r * B->c;
    for (int32_t i = 0; i < B->rows; i++) {
        int32_t bi = i / B->r, ii = i % B->r;
        for (int64_t k = B->browptr[bi]; k < B->browptr[bi + 1]; k++)
            for (int32_t jj = 0; jj < B->c; jj++) {
                int64_t j = (int64_t)B->bcolind[k] * B->c + jj;
                double v = row_value_get(B->values, B->vtype, k * bs + (int64_t)ii * B->c + jj);
                if (j >= B->cols || v == 0.0) continue;
                if (b) row_csr_push(b, i, (int32_t)j, v);
                n++;
            }
    }
    return n;
}

adia_status adia__row_bcsr_to_csr(const adia_bcsr *B, adia_csr *out)
{
    row_csr_builder b;
    ADIA_TRY(adia__row_csr_begin(&b, out, B->rows, B->cols, bcsr_walk(B, NULL)));
    bcsr_walk(B, &b);
    return adia__row_csr_finish(&b, "bcsr");
}

adia_status adia__row_bcsr_check(const adia_bcsr *B)
{
    if (B->browptr[0] != 0 || B->browptr[B->brows] != B->nblocks)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "bcsr: block-row pointers run from %" PRId64
                          " to %" PRId64 ", expected 0 to %" PRId64, B->browptr[0],
                          B->browptr[B->brows], B->nblocks);
    ADIA_TRY(adia__row_check_index("bcsr", "bcolind", B->bcolind, B->nblocks, B->bcols, false));
    for (int32_t bi = 0; bi < B->brows; bi++) {
        if (B->browptr[bi + 1] < B->browptr[bi])
            return adia__error(ADIA_ERR_INVALID_MATRIX, "bcsr: block-row pointer %d decreases",
                              (int)bi + 1);
        for (int64_t k = B->browptr[bi] + 1; k < B->browptr[bi + 1]; k++)
            if (B->bcolind[k] <= B->bcolind[k - 1])
                return adia__error(ADIA_ERR_INVALID_MATRIX, "bcsr: block %" PRId64
                                  " of block row %d not after its predecessor", k, (int)bi);
    }
    return ADIA_OK;
}

int64_t adia__row_bcsr_storage_bytes(const adia_bcsr *B)
{
    return ((int64_t)B->brows + 1) * 8 + B->nblocks * 4 +
           row_value_bytes(B->nblocks * B->r * B->c, B->vtype);
}

adia_status adia__row_block_param(const char *fmt, const char *key, int32_t given,
                            int32_t dflt, int32_t extent, const char *what, int32_t *out)
{
    if (given > 0 && given > extent)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: block size %s=%d is larger than the "
                          "matrix's %d %s", fmt, key, (int)given, (int)extent, what);
    *out = given > 0 ? given : extent < 1 ? 1 : extent < dflt ? extent : dflt;
    return ADIA_OK;
}

static adia_status bcsr_build(const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    int32_t r = 0, c = 0;
    ADIA_TRY(adia__row_block_param("bcsr", "r", p->bcsr_r, 2, A->rows, "rows", &r));
    ADIA_TRY(adia__row_block_param("bcsr", "c", p->bcsr_c, 2, A->cols, "columns", &c));
    adia_bcsr *B = adia__calloc(1, sizeof *B, "bcsr format");
    if (!B) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__row_bcsr_fill(A, r, c, vt, B);
    if (s != ADIA_OK) {
        free(B);
        return s;
    }
    *impl = B;
    return ADIA_OK;
}

static adia_status bcsr_to_csr(const void *impl, adia_csr *out) { return adia__row_bcsr_to_csr(impl, out); }
static adia_status bcsr_check(const void *impl) { return adia__row_bcsr_check(impl); }

static void bcsr_destroy(void *impl)
{
    adia__row_bcsr_free(impl);
    free(impl);
}

static int64_t bcsr_padded_zeros(const void *impl)
{
    const adia_bcsr *B = impl;
    return B->nblocks * B->r * B->c - B->nnz;
}

static int64_t bcsr_storage_bytes(const void *impl) { return adia__row_bcsr_storage_bytes(impl); }

const adia_format_ops adia__format_bcsr = {
    .name = "bcsr",
    .zeros_apart = 1,   /* to_csr keeps nonzero values: zeros are fill */
    .description = "blocked CSR: dense r x c blocks, row-major (params r, c)",
    .build = bcsr_build,
    .to_csr = bcsr_to_csr,
    .check = bcsr_check,
    .destroy = bcsr_destroy,
    .padded_zeros = bcsr_padded_zeros,
    .storage_bytes = bcsr_storage_bytes,
    .spmv = adia__bcsr_spmv,
};
