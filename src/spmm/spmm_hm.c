/* spmm_hm.c -- the HM numeric phase on the CPU: each output diagonal is
 * the sum, pair by pair in ascending oa, of elementwise products of two
 * shifted input diagonals (three unit-stride streams).  Parallel over row
 * blocks, each doing every output diagonal's rows in the block (the
 * block's rows of A and B stay in cache: spmm_cpu_block_rows); every
 * element is summed by one thread in the pair order, so any thread count
 * gives bitwise the same C. */
#include "spmm_internal.h"


adia_status adia__spmm_operand_store(spmm_operand *x)
{
    if (x->list) return ADIA_OK;
    const int32_t dg = x->dg;
    const int t = x->op == ADIA_OP_T;
    int32_t *xoff = adia__alloc((size_t)dg, sizeof *xoff, "operand offsets");
    x->base = adia__alloc((size_t)dg, sizeof *x->base, "operand bases");
    x->list = adia__calloc((size_t)x->stored, sizeof *x->list, "operand diagonals");
    if (!xoff || !x->base || !x->list) {
        free(xoff);
        return ADIA_ERR_NO_MEMORY;
    }
    /* X's own diagonals, ascending; op(X)'s diagonal d is X's d (N) or
     * X's dg-1-d with offset negated (T) -- same values, other base */
    int64_t start = 0;
    for (int32_t e = 0; e < dg; e++) {
        int64_t o = t ? -(int64_t)x->off[dg - 1 - e] : x->off[e];
        xoff[e] = (int32_t)o;
        x->base[e] = start - adia_diag_row0(o);
        start += adia_diag_len(x->csr->rows, x->csr->cols, o);
    }
    adia_status s = adia__diag_scatter(x->csr, dg, xoff, x->base, x->list, ADIA_DOUBLE);
    if (s == ADIA_OK && t) {
        /* op(X)[i][i+o'] = X[i-o][i] with o = -o': base shifts by -o */
        int64_t *b = adia__alloc((size_t)dg, sizeof *b, "operand bases");
        if (!b) s = ADIA_ERR_NO_MEMORY;
        for (int32_t d = 0; b && d < dg; d++)
            b[d] = x->base[dg - 1 - d] - xoff[dg - 1 - d];
        if (b) {
            free(x->base);
            x->base = b;
        }
    }
    free(xoff);
    return s;
}

/* Rows [i0, i1) of output diagonal d; out[j] is row i0 + j. */
static void hm_tile(const spmm_plan *p, int32_t d, int64_t i0, int64_t i1,
                    double *restrict out)
{
    const int64_t oc = p->c_off[d];
    for (int64_t q = p->pair_ptr[d]; q < p->pair_ptr[d + 1]; q++) {
        const int32_t ia = p->pair_a[q], ib = p->pair_b[q];
        const int64_t oa = p->a.off[ia];
        int64_t lo, hi;
        spmm_pair_rows(p, oa, oc, &lo, &hi);
        if (lo < i0) lo = i0;
        if (hi > i1) hi = i1;
        if (lo >= hi) continue;
        double *restrict cp = out + (lo - i0);
        const double *restrict ap = p->a.list + p->a.base[ia] + lo;
        const double *restrict bp = p->b.list + p->b.base[ib] + oa + lo;
        const int64_t len = hi - lo;
        for (int64_t j = 0; j < len; j++) cp[j] += ap[j] * bp[j];
    }
}

/* Every output diagonal's rows in [i0, i1); out_d(i) = c[c_base[d] + i]
 * (stride 0) or out[d * stride + i - i0]. */
static void hm_rows(const spmm_plan *p, int64_t i0, int64_t i1, double *c, int64_t stride)
{
    for (int32_t d = 0; d < p->dc; d++) {
        int64_t r0 = adia_diag_row0(p->c_off[d]);
        int64_t r1 = r0 + adia_diag_len(p->m, p->n, p->c_off[d]);
        int64_t lo = r0 > i0 ? r0 : i0, hi = r1 < i1 ? r1 : i1;
        if (lo >= hi) continue;
        double *out = stride ? c + (int64_t)d * stride + (lo - i0) : c + p->c_base[d] + lo;
        hm_tile(p, d, lo, hi, out);
    }
}

adia_status adia__spmm_cpu_hm(spmm_plan *p, double *c, double *time_ms)
{
    ADIA_TRY(adia__spmm_operand_store(&p->a));
    ADIA_TRY(adia__spmm_operand_store(&p->b));
    const int nt = p->threads > 0 ? p->threads : adia__threads();
    const int64_t rows = spmm_cpu_block_rows(p->m, (int64_t)p->a.dg + p->b.dg + p->dc, nt);
    const int64_t blocks = ((int64_t)p->m + rows - 1) / rows;
    const double start_ms = adia__now_ms();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t blk = 0; blk < blocks; blk++) {
        int64_t i0 = blk * rows, i1 = i0 + rows < p->m ? i0 + rows : p->m;
        hm_rows(p, i0, i1, c, 0);
    }
    *time_ms = adia__now_ms() - start_ms;
    return ADIA_OK;
}

adia_status adia__spmm_cpu_hm_rows(spmm_plan *p, int64_t i0, int64_t i1, double *out)
{
    ADIA_TRY(adia__spmm_operand_store(&p->a));
    ADIA_TRY(adia__spmm_operand_store(&p->b));
    if (i1 > i0) hm_rows(p, i0, i1, out, i1 - i0);
    return ADIA_OK;
}

int64_t adia__spmm_gpu_bytes(const spmm_plan *p)
{
    /* values of A, B, C; the larger kernel structure: the streaming one's
     * (24-byte diagonal descriptors, tile and pair pointers, 24-byte pair
     * descriptors) or the tiled one's (descriptors, <= one 16-byte step a
     * pair) */
    double b = 8.0 * ((double)p->a.stored + (double)p->b.stored + (double)p->c_len) +
               24.0 * ((double)p->a.dg + p->b.dg + p->dc) + 16.0 * ((double)p->dc + 1) +
               24.0 * (double)p->n_pairs + 64.0 * 6;
    return b < 9.2e18 ? (int64_t)b : INT64_MAX;
}
