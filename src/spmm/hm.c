/* hm.c -- the "hm" format: HM diagonal storage (seed 004 section 3.1),
 * see hm.h for the layout. */
#include "hm.h"

#include <inttypes.h>

#define VALUE double
#define FN(name) name##_d
#include "hm_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "hm_kernel.inc"

void adia__hm_free(adia_hm *h)
{
    if (!h) return;
    free(h->ds);
    free(h->start);
    free(h->list);
    h->ds = NULL;
    h->start = NULL;
    h->list = NULL;
}

int32_t *adia__hm_sorted(const adia_hm *h)
{
    int32_t *idx = adia__alloc((size_t)h->dg, sizeof *idx, "sorted diagonals");
    if (!idx) return NULL;
    /* seed order = non-negative ascending, then negative descending */
    int32_t npos = 0;
    while (npos < h->dg && h->ds[npos] >= 0) npos++;
    int32_t w = 0;
    for (int32_t d = h->dg - 1; d >= npos; d--) idx[w++] = d;
    for (int32_t d = 0; d < npos; d++) idx[w++] = d;
    return idx;
}

/* Ascending offsets and bases (value at row i = list[base + i]) of h. */
static adia_status hm_sorted_view(const adia_hm *h, int32_t **off, int64_t **base)
{
    int32_t *idx = adia__hm_sorted(h);
    *off = adia__alloc((size_t)h->dg, sizeof **off, "hm offsets");
    *base = adia__alloc((size_t)h->dg, sizeof **base, "hm bases");
    if (!idx || !*off || !*base) {
        free(idx);
        free(*off);
        free(*base);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int32_t a = 0; a < h->dg; a++) {
        int32_t d = idx[a];
        (*off)[a] = h->ds[d];
        (*base)[a] = h->start[d] - adia_diag_row0(h->ds[d]);
    }
    free(idx);
    return ADIA_OK;
}

adia_status adia__hm_build(const adia_csr *A, adia_value_type vt, adia_hm *out)
{
    memset(out, 0, sizeof *out);
    out->rows = A->rows;
    out->cols = A->cols;
    out->vtype = vt;
    out->nnz = A->nnz;
    int32_t *asc = NULL, n = 0;
    ADIA_TRY(adia__csr_offsets(A, &asc, &n));
    out->dg = n;
    out->ds = adia__alloc((size_t)n, sizeof *out->ds, "hm offsets");
    out->start = adia__alloc((size_t)n + 1, sizeof *out->start, "hm starts");
    adia_status s = out->ds && out->start ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        int32_t z = 0, w = 0;                  /* z = number of negative offsets */
        while (z < n && asc[z] < 0) z++;
        for (int32_t a = z; a < n; a++) out->ds[w++] = asc[a];
        for (int32_t a = z - 1; a >= 0; a--) out->ds[w++] = asc[a];
        out->start[0] = 0;
        for (int32_t d = 0; d < n; d++)        /* sum of lengths <= rows*cols: no overflow */
            out->start[d + 1] = out->start[d] + adia_diag_len(A->rows, A->cols, out->ds[d]);
        out->list = adia__calloc((size_t)out->start[n], adia_value_size(vt), "hm values");
        if (!out->list) s = ADIA_ERR_NO_MEMORY;
    }
    free(asc);
    int32_t *off = NULL;
    int64_t *base = NULL;
    if (s == ADIA_OK) s = hm_sorted_view(out, &off, &base);
    if (s == ADIA_OK) s = adia__diag_scatter(A, n, off, base, out->list, vt);
    free(off);
    free(base);
    if (s != ADIA_OK) adia__hm_free(out);
    return s;
}

adia_status adia__hm_to_csr(const adia_hm *h, adia_csr *out)
{
    int32_t *off;
    int64_t *base;
    ADIA_TRY(hm_sorted_view(h, &off, &base));
    adia_status s = adia__diag_emit_csr(h->rows, h->cols, h->dg, off, base, h->list,
                                       h->vtype, false, out);
    free(off);
    free(base);
    return s;
}

adia_status adia__hm_check(const adia_hm *h)
{
    if (h->dg < 0 || !h->start || h->start[0] != 0)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "hm: bad diagonal count %" PRId32
                          " or start[0]", h->dg);
    for (int32_t d = 0; d < h->dg; d++) {
        int32_t o = h->ds[d];
        if (o <= -(int64_t)h->rows || o >= h->cols)
            return adia__error(ADIA_ERR_INVALID_MATRIX, "hm: diagonal %" PRId32 " has offset %"
                              PRId32 " outside %" PRId32 " x %" PRId32, d, o, h->rows, h->cols);
        if (d > 0 && !adia_hm_before(h->ds[d - 1], o))
            return adia__error(ADIA_ERR_INVALID_MATRIX, "hm: offsets %" PRId32 ", %" PRId32
                              " at %" PRId32 " break the order (super ascending, then sub "
                              "descending)", h->ds[d - 1], o, d);
        if (h->start[d + 1] - h->start[d] != adia_diag_len(h->rows, h->cols, o))
            return adia__error(ADIA_ERR_INVALID_MATRIX, "hm: diagonal %" PRId32 " (offset %"
                              PRId32 ") stores %" PRId64 " values, its length is %" PRId64,
                              d, o, h->start[d + 1] - h->start[d],
                              adia_diag_len(h->rows, h->cols, o));
    }
    return ADIA_OK;
}

/* ------------------------------------------------------ operations table */

static adia_status hm_build(const adia_csr *A, const adia_format_params *p,
                            adia_value_type vt, void **impl)
{
    (void)p;
    adia_hm *h = adia__alloc(1, sizeof *h, "hm format");
    if (!h) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__hm_build(A, vt, h);
    if (s != ADIA_OK) {
        free(h);
        return s;
    }
    *impl = h;
    return ADIA_OK;
}

static adia_status hm_to_csr(const void *impl, adia_csr *out) { return adia__hm_to_csr(impl, out); }
static adia_status hm_check(const void *impl) { return adia__hm_check(impl); }

static void hm_destroy(void *impl)
{
    adia__hm_free(impl);
    free(impl);
}

static int64_t hm_padded_zeros(const void *impl)
{
    const adia_hm *h = impl;
    return h->start[h->dg] - h->nnz;
}

static int64_t hm_storage_bytes(const void *impl)
{
    const adia_hm *h = impl;
    return (int64_t)h->dg * 4 + ((int64_t)h->dg + 1) * 8 +
           h->start[h->dg] * (int64_t)adia_value_size(h->vtype);
}

static ADIA_SPMV_SLOT(hm_spmv, hm_spmv, adia_hm, A, A->vtype)

const adia_format_ops adia__format_hm = {
    .name = "hm",
    .zeros_apart = 1,   /* to_csr keeps nonzero values: zeros are fill */
    .description = "HM diagonal storage: stored diagonals back to back, no padding (seed 004)",
    .build = hm_build,
    .to_csr = hm_to_csr,
    .check = hm_check,
    .destroy = hm_destroy,
    .padded_zeros = hm_padded_zeros,
    .storage_bytes = hm_storage_bytes,
    .spmv = hm_spmv,
};
