/* pbcsr.c -- the "pbcsr" format, the IBM patent's block storage (seed 001:
 * constant-size blocks whose starting column is aligned to the half-warp,
 * rows of a block kept sparse and "filled with minimal zeros just enough to
 * make the number of entries in each row of a block a multiple of the
 * half-warp size").  Params: r (block rows, default 4, clamped to the
 * matrix when not given), c (block columns, default 4*pad, must be a
 * multiple of pad; blocks may stick out of the matrix), pad (default 16).
 * A separate module rather than a bcsr option: bcsr's blocks are dense and
 * its struct is what the GPU kernels read; this one is CSR inside blocks.
 * Storage: (brows + 1)*8 + nblocks*4 + (nblocks*r + 1)*8 + slots*(4 + value). */
#include "row_common.h"
#include "row_extra.h"

#include <inttypes.h>

#define VALUE double
#define FN(name) name##_d
#include "pbcsr_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "pbcsr_kernel.inc"

static void pbcsr_free(adia_pbcsr *P)
{
    adia__row_bcsr_free(&P->blocks);
    free(P->rowoff);
    free(P->colind);
    free(P->values);
    free(P);
}

/* Entries of block row bi, each to its block row x = b*r + ii: counted
 * into rowoff[x + 1] (next NULL) or written at next[x]. */
static void walk_block_row(const adia_csr *A, adia_pbcsr *P, int32_t bi, int64_t *next)
{
    const adia_bcsr *B = &P->blocks;
    for (int32_t ii = 0; ii < B->r && (int64_t)bi * B->r + ii < A->rows; ii++) {
        int32_t i = bi * B->r + ii;
        int64_t b = B->browptr[bi];
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            while (B->bcolind[b] < A->colind[k] / B->c) b++;   /* blocks sorted, entry's is there */
            int64_t x = b * B->r + ii;
            if (!next) {
                P->rowoff[x + 1]++;
                continue;
            }
            P->colind[next[x]] = A->colind[k] % B->c;
            row_value_set(P->values, B->vtype, next[x]++, adia_csr_value(A, k));
        }
    }
}

static adia_status fill(const adia_csr *A, adia_pbcsr *P)
{
    const adia_bcsr *B = &P->blocks;
    int64_t nx;
    ADIA_TRY(adia__row_mul(B->nblocks, B->r, "pbcsr block rows", &nx));
    P->rowoff = adia__calloc((size_t)nx + 1, sizeof *P->rowoff, "pbcsr row offsets");
    if (!P->rowoff) return ADIA_ERR_NO_MEMORY;
    for (int32_t bi = 0; bi < B->brows; bi++) walk_block_row(A, P, bi, NULL);
    for (int64_t x = 0; x < nx; x++) {
        int64_t padded = (P->rowoff[x + 1] + P->pad - 1) / P->pad * P->pad;
        if (!adia_add_i64(P->rowoff[x], padded, &P->rowoff[x + 1]))
            return adia__error(ADIA_ERR_OVERFLOW, "pbcsr: slot count overflows");
    }
    int64_t *next = adia__alloc((size_t)nx + 1, sizeof *next, "pbcsr fill cursors");
    P->colind = adia__alloc((size_t)P->rowoff[nx], sizeof *P->colind, "pbcsr column indices");
    P->values = adia__row_values_alloc(P->rowoff[nx], B->vtype, "pbcsr values");
    if (!next || !P->colind || !P->values) {
        free(next);
        return ADIA_ERR_NO_MEMORY;
    }
    memcpy(next, P->rowoff, ((size_t)nx + 1) * sizeof *next);
    for (int32_t bi = 0; bi < B->brows; bi++) walk_block_row(A, P, bi, next);
    for (int64_t x = 0; x < nx; x++)   /* padding: last column again, value 0 */
        for (int64_t q = next[x]; q < P->rowoff[x + 1]; q++) P->colind[q] = P->colind[q - 1];
    free(next);
    return ADIA_OK;
}

static adia_status pbcsr_params(const adia_csr *A, const adia_format_params *p,
                                int32_t *r, int32_t *c, int32_t *pad)
{
    *pad = adia_param(p->pad, 16);
    ADIA_TRY(adia__row_block_param("pbcsr", "r", p->bcsr_r, 4, A->rows, "rows", r));
    if (p->bcsr_c > 0) {
        ADIA_TRY(adia__row_block_param("pbcsr", "c", p->bcsr_c, 1, A->cols, "columns", c));
    } else {
        if (*pad > INT32_MAX / 4)
            return adia__error(ADIA_ERR_INVALID_ARG, "pbcsr: pad=%d too large", (int)*pad);
        *c = 4 * *pad;
    }
    if (*c % *pad)
        return adia__error(ADIA_ERR_INVALID_ARG, "pbcsr: block width c=%d is not a multiple of "
                          "pad=%d (blocks must start at aligned columns)", (int)*c, (int)*pad);
    return ADIA_OK;
}

static adia_status pbcsr_build(const adia_csr *A, const adia_format_params *p,
                               adia_value_type vt, void **impl)
{
    int32_t r, c, pad;
    ADIA_TRY(pbcsr_params(A, p, &r, &c, &pad));
    adia_pbcsr *P = adia__calloc(1, sizeof *P, "pbcsr format");
    if (!P) return ADIA_ERR_NO_MEMORY;
    P->pad = pad;
    adia_status s = adia__row_block_layout(A, r, c, vt, &P->blocks);
    if (s == ADIA_OK) s = fill(A, P);
    if (s != ADIA_OK) {
        pbcsr_free(P);
        return s;
    }
    *impl = P;
    return ADIA_OK;
}

/* Real entries of slot row x: the strictly increasing prefix. */
static int64_t real_len(const adia_pbcsr *P, int64_t x)
{
    return row_real_prefix(P->colind + P->rowoff[x], P->rowoff[x + 1] - P->rowoff[x]);
}

static adia_status pbcsr_to_csr(const void *impl, adia_csr *out)
{
    const adia_pbcsr *P = impl;
    const adia_bcsr *B = &P->blocks;
    row_csr_builder bld;
    ADIA_TRY(adia__row_csr_begin(&bld, out, B->rows, B->cols, B->nnz));
    for (int32_t i = 0; i < B->rows; i++) {
        int32_t bi = i / B->r, ii = i % B->r;
        for (int64_t b = B->browptr[bi]; b < B->browptr[bi + 1]; b++) {
            int64_t x = b * B->r + ii;
            for (int64_t q = P->rowoff[x]; q < P->rowoff[x] + real_len(P, x); q++)
                row_csr_push(&bld, i, B->bcolind[b] * B->c + P->colind[q],
                             row_value_get(P->values, B->vtype, q));
        }
    }
    return adia__row_csr_finish(&bld, "pbcsr");
}

static adia_status pbcsr_check(const void *impl)
{
    const adia_pbcsr *P = impl;
    const adia_bcsr *B = &P->blocks;
    ADIA_TRY(adia__row_bcsr_check(B));
    int64_t nx = B->nblocks * B->r, n = 0;
    ADIA_TRY(adia__row_check_index("pbcsr", "colind", P->colind, P->rowoff[nx], B->c, false));
    for (int64_t x = 0; x < nx; x++) {
        int64_t len = real_len(P, x), b = x / B->r;
        bool bad = P->rowoff[x] % P->pad || P->rowoff[x + 1] < P->rowoff[x] ||
                   (len > 0 && (int64_t)B->bcolind[b] * B->c + P->colind[P->rowoff[x] + len - 1] >= B->cols);
        for (int64_t q = P->rowoff[x] + len; !bad && q < P->rowoff[x + 1]; q++)
            bad = row_value_get(P->values, B->vtype, q) != 0.0;
        if (bad)
            return adia__error(ADIA_ERR_INVALID_MATRIX, "pbcsr: row %" PRId64 " of block %" PRId64
                              " misaligned, outside the matrix or with nonzero padding",
                              x % B->r, b);
        n += len;
    }
    if (n != B->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "pbcsr: %" PRId64 " entries stored, header says %"
                          PRId64, n, B->nnz);
    return ADIA_OK;
}

static void pbcsr_destroy(void *impl) { pbcsr_free(impl); }

static int64_t pbcsr_padded_zeros(const void *impl)
{
    const adia_pbcsr *P = impl;
    return P->rowoff[P->blocks.nblocks * P->blocks.r] - P->blocks.nnz;
}

static int64_t pbcsr_storage_bytes(const void *impl)
{
    const adia_pbcsr *P = impl;
    const adia_bcsr *B = &P->blocks;
    int64_t nx = B->nblocks * B->r, slots = P->rowoff[nx];
    return ((int64_t)B->brows + 1) * 8 + B->nblocks * 4 + (nx + 1) * 8 + slots * 4 +
           row_value_bytes(slots, B->vtype);
}

static ADIA_SPMV_SLOT(pbcsr_spmv, pbcsr_spmv, adia_pbcsr, A, A->blocks.vtype)

const adia_format_ops adia__format_pbcsr = {
    .name = "pbcsr",
    .description = "patent block CSR: aligned r x c blocks, rows padded to pad (params r, c, pad)",
    .build = pbcsr_build,
    .to_csr = pbcsr_to_csr,
    .check = pbcsr_check,
    .destroy = pbcsr_destroy,
    .padded_zeros = pbcsr_padded_zeros,
    .storage_bytes = pbcsr_storage_bytes,
    .spmv = pbcsr_spmv,
};
