/* sbcsr.c -- the "sbcsr" format, streamed BCSR (survey 003 eqs.
 * 2.48-2.55): the blocks of bcsr (params r, c; default 4x4 as in the
 * survey, clamped to the matrix when not given) with the values stored
 * stream by stream: stream ii holds row ii of every block, in block order
 * (value (ii, jj) of block b at ii*nblocks*c + b*c + jj), so r prefetch
 * streams run through the values in step.  Indices as bcsr (Ind = block
 * columns, Ptr = block-row pointers).  Storage:
 *   r*nblocks*c*value + nblocks*4 + (brows + 1)*8;
 * eq. 2.55 writes N_s*(N_nzb*b_size) + 2*N_nzb elements, counting the
 * block-row pointers as N_nzb; there are brows + 1 of them. */
#include "row_common.h"
#include "row_extra.h"

#define VALUE double
#define FN(name) name##_d
#include "sbcsr_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "sbcsr_kernel.inc"

/* Value index of (ii, jj) of block b in the row-major (bcsr) and the
 * streamed layout. */
static inline int64_t at_rowmajor(const adia_bcsr *B, int64_t b, int32_t ii, int32_t jj)
{
    return (b * B->r + ii) * B->c + jj;
}
static inline int64_t at_streamed(const adia_bcsr *B, int64_t b, int32_t ii, int32_t jj)
{
    return ((int64_t)ii * B->nblocks + b) * B->c + jj;
}

/* Copy B's values between layouts (to_streamed: row-major -> streamed). */
static adia_status relayout(const adia_bcsr *B, bool to_streamed, void **out)
{
    int64_t n = B->nblocks * B->r * B->c;
    void *v = adia__row_values_alloc(n, B->vtype, "sbcsr values");
    if (!v) return ADIA_ERR_NO_MEMORY;
    for (int64_t b = 0; b < B->nblocks; b++)
        for (int32_t ii = 0; ii < B->r; ii++)
            for (int32_t jj = 0; jj < B->c; jj++) {
                int64_t rm = at_rowmajor(B, b, ii, jj), st = at_streamed(B, b, ii, jj);
                row_value_set(v, B->vtype, to_streamed ? st : rm,
                              row_value_get(B->values, B->vtype, to_streamed ? rm : st));
            }
    *out = v;
    return ADIA_OK;
}

static adia_status sbcsr_build(const adia_csr *A, const adia_format_params *p,
                               adia_value_type vt, void **impl)
{
    int32_t r, c;
    ADIA_TRY(adia__row_block_param("sbcsr", "r", p->bcsr_r, 4, A->rows, "rows", &r));
    ADIA_TRY(adia__row_block_param("sbcsr", "c", p->bcsr_c, 4, A->cols, "columns", &c));
    adia_sbcsr *S = adia__calloc(1, sizeof *S, "sbcsr format");
    if (!S) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__row_bcsr_fill(A, r, c, vt, &S->b);
    void *streamed = NULL;
    if (s == ADIA_OK) s = relayout(&S->b, true, &streamed);
    if (s != ADIA_OK) {
        adia__row_bcsr_free(&S->b);
        free(S);
        return s;
    }
    free(S->b.values);
    S->b.values = streamed;
    *impl = S;
    return ADIA_OK;
}

/* bcsr's to_csr on a row-major copy of the values. */
static adia_status sbcsr_to_csr(const void *impl, adia_csr *out)
{
    adia_bcsr B = ((const adia_sbcsr *)impl)->b;
    ADIA_TRY(relayout(&B, false, &B.values));
    adia_status s = adia__row_bcsr_to_csr(&B, out);
    free(B.values);
    return s;
}

static adia_status sbcsr_check(const void *impl) { return adia__row_bcsr_check(&((const adia_sbcsr *)impl)->b); }

static void sbcsr_destroy(void *impl)
{
    adia__row_bcsr_free(&((adia_sbcsr *)impl)->b);
    free(impl);
}

static int64_t sbcsr_padded_zeros(const void *impl)
{
    const adia_bcsr *B = &((const adia_sbcsr *)impl)->b;
    return B->nblocks * B->r * B->c - B->nnz;
}

static int64_t sbcsr_storage_bytes(const void *impl)
{
    return adia__row_bcsr_storage_bytes(&((const adia_sbcsr *)impl)->b);
}

static ADIA_SPMV_SLOT(sbcsr_spmv, sbcsr_spmv, adia_sbcsr, &A->b, A->b.vtype)

const adia_format_ops adia__format_sbcsr = {
    .name = "sbcsr",
    .zeros_apart = 1,   /* to_csr keeps nonzero values: zeros are fill */
    .description = "streamed BCSR: block rows stored stream by stream (params r, c)",
    .build = sbcsr_build,
    .to_csr = sbcsr_to_csr,
    .check = sbcsr_check,
    .destroy = sbcsr_destroy,
    .padded_zeros = sbcsr_padded_zeros,
    .storage_bytes = sbcsr_storage_bytes,
    .spmv = sbcsr_spmv,
};
