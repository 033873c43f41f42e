/* cdm.c -- the "cdm" format: compact diagonal storage (seed 004 section
 * 3.2), see cdm.h for the layout. */
#include "cdm.h"

#include <inttypes.h>

#define VALUE double
#define FN(name) name##_d
#include "cdm_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "cdm_kernel.inc"

void adia__cdm_free(adia_cdm *c)
{
    if (!c) return;
    free(c->ds);
    free(c->list);
    c->ds = NULL;
    c->list = NULL;
}

adia_status adia__cdm_alloc(int32_t n, int32_t dg, const int32_t *ds,
                           adia_value_type vt, adia_cdm *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->vtype = vt;
    out->dg = dg;
    int64_t total;
    if (!adia_mul_i64(dg, n, &total))
        return adia__error(ADIA_ERR_OVERFLOW, "cdm: %" PRId32 " compact diagonals of length %"
                          PRId32 " overflow", dg, n);
    out->ds = adia__alloc((size_t)dg, sizeof *out->ds, "cdm offsets");
    out->list = adia__calloc((size_t)total, adia_value_size(vt), "cdm values");
    if (!out->ds || !out->list) {
        adia__cdm_free(out);
        return ADIA_ERR_NO_MEMORY;
    }
    memcpy(out->ds, ds, (size_t)dg * sizeof *ds);
    return ADIA_OK;
}

int32_t adia__cdm_find(const adia_cdm *c, int64_t k)
{
    int32_t lo = 0, hi = c->dg;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (c->ds[mid] < k) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->dg && c->ds[lo] == k ? lo : -1;
}

adia_status adia__cdm_view(const adia_cdm *c, int32_t **off, int64_t **base,
                          int32_t *count)
{
    int32_t m = c->dg + (c->dg > 0 && c->ds[0] == 0 ? c->dg - 1 : c->dg);
    *off = adia__alloc((size_t)m, sizeof **off, "cdm view offsets");
    *base = adia__alloc((size_t)m, sizeof **base, "cdm view bases");
    if (!*off || !*base) {
        free(*off);
        free(*base);
        return ADIA_ERR_NO_MEMORY;
    }
    int32_t w = 0;
    for (int32_t d = 0; d < c->dg; d++)        /* sub-diagonals k - n: ascending with k */
        if (c->ds[d] > 0) {
            (*off)[w] = c->ds[d] - c->n;
            (*base)[w++] = (int64_t)d * c->n;
        }
    for (int32_t d = 0; d < c->dg; d++) {      /* super-diagonals k */
        (*off)[w] = c->ds[d];
        (*base)[w++] = (int64_t)d * c->n;
    }
    *count = w;
    return ADIA_OK;
}

adia_status adia__cdm_build(const adia_csr *A, adia_value_type vt, adia_cdm *out)
{
    memset(out, 0, sizeof *out);
    if (A->rows != A->cols)
        return adia__error(ADIA_ERR_DIMENSION, "cdm: needs a square matrix, got %" PRId32
                          " x %" PRId32, A->rows, A->cols);
    int32_t *off = NULL, n = 0;
    ADIA_TRY(adia__csr_offsets(A, &off, &n));
    /* compact index of offset o is o mod n (super-diagonal k and
     * sub-diagonal k - n share compact diagonal k): merge the ascending
     * runs of non-negative offsets and of n + negative offsets */
    int32_t *ks = adia__alloc((size_t)n, sizeof *ks, "cdm compact indices");
    if (!ks) {
        free(off);
        return ADIA_ERR_NO_MEMORY;
    }
    int32_t z = 0, dg = 0;
    while (z < n && off[z] < 0) z++;
    int32_t a = z, b = 0;                      /* a: non-negatives, b: negatives */
    while (a < n || b < z) {
        int64_t ka = a < n ? off[a] : INT64_MAX;
        int64_t kb = b < z ? (int64_t)off[b] + A->rows : INT64_MAX;
        int64_t k = ka < kb ? ka : kb;
        if (ka == k) a++;
        if (kb == k) b++;
        ks[dg++] = (int32_t)k;
    }
    free(off);
    adia_status s = adia__cdm_alloc(A->rows, dg, ks, vt, out);
    free(ks);
    if (s != ADIA_OK) return s;
    out->nnz = A->nnz;
    int32_t *voff = NULL, vn = 0;
    int64_t *vbase = NULL;
    s = adia__cdm_view(out, &voff, &vbase, &vn);
    if (s == ADIA_OK) s = adia__diag_scatter(A, vn, voff, vbase, out->list, vt);
    free(voff);
    free(vbase);
    if (s != ADIA_OK) adia__cdm_free(out);
    return s;
}

adia_status adia__cdm_to_csr(const adia_cdm *c, adia_csr *out)
{
    int32_t *off, count;
    int64_t *base;
    ADIA_TRY(adia__cdm_view(c, &off, &base, &count));
    adia_status s = adia__diag_emit_csr(c->n, c->n, count, off, base, c->list, c->vtype,
                                       false, out);
    free(off);
    free(base);
    return s;
}

adia_status adia__cdm_check(const adia_cdm *c)
{
    if (c->n < 0 || c->dg < 0 || c->dg > c->n)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "cdm: %" PRId32 " compact diagonals "
                          "for n = %" PRId32, c->dg, c->n);
    for (int32_t d = 0; d < c->dg; d++) {
        if (c->ds[d] < 0 || c->ds[d] >= c->n || (d > 0 && c->ds[d] <= c->ds[d - 1]))
            return adia__error(ADIA_ERR_INVALID_MATRIX, "cdm: compact index %" PRId32
                              " at %" PRId32 " is out of [0, %" PRId32 ") or not ascending",
                              c->ds[d], d, c->n);
    }
    return ADIA_OK;
}

/* ------------------------------------------------------ operations table */

static adia_status cdm_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    (void)p;
    adia_cdm *c = adia__alloc(1, sizeof *c, "cdm format");
    if (!c) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__cdm_build(A, vt, c);
    if (s != ADIA_OK) {
        free(c);
        return s;
    }
    *impl = c;
    return ADIA_OK;
}

static adia_status cdm_to_csr(const void *impl, adia_csr *out) { return adia__cdm_to_csr(impl, out); }
static adia_status cdm_check(const void *impl) { return adia__cdm_check(impl); }

static void cdm_destroy(void *impl)
{
    adia__cdm_free(impl);
    free(impl);
}

static int64_t cdm_padded_zeros(const void *impl)
{
    const adia_cdm *c = impl;
    return (int64_t)c->dg * c->n - c->nnz;
}

static int64_t cdm_storage_bytes(const void *impl)
{
    const adia_cdm *c = impl;
    return (int64_t)c->dg * 4 + (int64_t)c->dg * c->n * (int64_t)adia_value_size(c->vtype);
}

static ADIA_SPMV_SLOT(cdm_spmv, cdm_spmv, adia_cdm, A, A->vtype)

const adia_format_ops adia__format_cdm = {
    .name = "cdm",
    .zeros_apart = 1,   /* to_csr keeps nonzero values: zeros are fill */
    .description = "compact diagonals: super-diagonal k over sub-diagonal n-k, square only (seed 004)",
    .build = cdm_build,
    .to_csr = cdm_to_csr,
    .check = cdm_check,
    .destroy = cdm_destroy,
    .padded_zeros = cdm_padded_zeros,
    .storage_bytes = cdm_storage_bytes,
    .spmv = cdm_spmv,
};
