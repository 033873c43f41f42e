/* mqt.c -- the "mqt" format, minimal quad tree (Langr & Trdlicka; survey
 * 003 section 2.2.4, eq. 2.29): the matrix in a square of side 2^levels;
 * every non-empty node of side > 1 writes 4 structure bits (its quadrants
 * NW, NE, SW, SE: 1 = non-empty), depth first with a node's children after
 * its 4 bits; the values of the non-empty elements follow in that same Z
 * order (layout in row_extra.h).  Storage: ceil(nbits/8) +
 * nnz*value bytes; eq. 2.29 bounds the bits by 4N(1/3 + log4(n^2/N)).
 * A compact I/O format: CPU SpMV decodes the stream once per call, in one
 * thread (the stream has no index to split it at); only the final
 * y = alpha*sum + beta*y runs in parallel. */
#include "row_common.h"
#include "row_extra.h"

#include <inttypes.h>

/* Gather the even bits of x into a 32-bit word (inverse of interleaving). */
static uint32_t compact_bits(uint64_t x)
{
    x &= 0x5555555555555555ull;
    x = (x | x >> 1) & 0x3333333333333333ull;
    x = (x | x >> 2) & 0x0f0f0f0f0f0f0f0full;
    x = (x | x >> 4) & 0x00ff00ff00ff00ffull;
    x = (x | x >> 8) & 0x0000ffff0000ffffull;
    x = (x | x >> 16) & 0x00000000ffffffffull;
    return (uint32_t)x;
}

/* ------------------------------------------------------------ encoding */

typedef struct encoder {
    const adia_csr *A;
    const row_zentry *e;      /* entries in Z order (element keys)          */
    adia_mqt *M;
    int64_t p;                /* next entry                                 */
} encoder;

static int64_t first_at_least(const row_zentry *e, int64_t lo, int64_t hi, uint64_t key)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (e[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Node of side 2^level (>= 2) whose keys start at base; it is non-empty. */
static void encode(encoder *c, uint64_t base, int level)
{
    uint64_t quarter = 1ull << (2 * (level - 1));
    int64_t start[5] = {c->p};
    for (int q = 0; q < 4; q++)
        start[q + 1] = first_at_least(c->e, start[q], c->A->nnz, base + (q + 1) * quarter);
    for (int q = 0; q < 4; q++, c->M->nbits++)
        if (start[q + 1] > start[q]) c->M->bits[c->M->nbits / 8] |= (uint8_t)(1u << (c->M->nbits % 8));
    for (int q = 0; q < 4; q++) {
        if (start[q + 1] == start[q]) continue;
        if (level > 1) {
            encode(c, base + q * quarter, level - 1);
        } else {
            row_value_set(c->M->values, c->M->vtype, c->p, adia_csr_value(c->A, c->e[c->p].k));
            c->p++;
        }
    }
}

static void mqt_free(adia_mqt *M)
{
    free(M->bits);
    free(M->values);
    free(M);
}

static adia_status mqt_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    (void)p;
    adia_mqt *M = adia__calloc(1, sizeof *M, "mqt format");
    if (!M) return ADIA_ERR_NO_MEMORY;
    *M = (adia_mqt){.rows = A->rows, .cols = A->cols, .nnz = A->nnz, .vtype = vt};
    int32_t side = A->rows > A->cols ? A->rows : A->cols;
    while ((1ll << M->levels) < side) M->levels++;
    row_zentry *e = NULL;
    adia_status s = adia__row_zorder(A, 1, &e);
    /* at most 4 bits per level per entry */
    if (s == ADIA_OK) M->bits = adia__calloc((size_t)A->nnz * M->levels / 2 + 1, 1, "mqt bits");
    if (s == ADIA_OK) M->values = adia__row_values_alloc(A->nnz, vt, "mqt values");
    if (s == ADIA_OK && (!M->bits || !M->values)) s = ADIA_ERR_NO_MEMORY;
    if (s != ADIA_OK) {
        free(e);
        mqt_free(M);
        return s;
    }
    encoder c = {A, e, M, 0};
    if (A->nnz > 0 && M->levels > 0) encode(&c, 0, M->levels);
    else if (A->nnz > 0) row_value_set(M->values, vt, 0, adia_csr_value(A, 0));   /* 1x1 */
    free(e);
    *impl = M;
    return ADIA_OK;
}

/* ------------------------------------------------------------ decoding */

/* visit(ctx, i, j, value) for every element in Z order; returns false if
 * the stream is inconsistent (more elements or bits than stored). */
typedef void (*visit_fn)(void *ctx, int32_t i, int32_t j, double v);
typedef struct decoder {
    const adia_mqt *M;
    int64_t bit, value;
    visit_fn visit;
    void *ctx;
} decoder;

static bool decode(decoder *d, uint64_t base, int level)
{
    uint64_t quarter = 1ull << (2 * (level - 1));
    if (d->bit + 4 > d->M->nbits) return false;
    unsigned mask = 0;
    for (int q = 0; q < 4; q++, d->bit++) mask |= ((d->M->bits[d->bit / 8] >> (d->bit % 8)) & 1u) << q;
    if (!mask) return false;   /* a stored node is never empty */
    for (int q = 0; q < 4; q++) {
        if (!(mask >> q & 1)) continue;
        if (level > 1) {
            if (!decode(d, base + q * quarter, level - 1)) return false;
            continue;
        }
        uint64_t key = base + q;
        uint32_t i = compact_bits(key >> 1), j = compact_bits(key);
        if (d->value >= d->M->nnz || i >= (uint32_t)d->M->rows || j >= (uint32_t)d->M->cols)
            return false;
        d->visit(d->ctx, (int32_t)i, (int32_t)j, row_value_get(d->M->values, d->M->vtype, d->value++));
    }
    return true;
}

/* Whole stream; an error if it does not decode to exactly nnz elements. */
static adia_status decode_all(const adia_mqt *M, visit_fn visit, void *ctx)
{
    decoder d = {M, 0, 0, visit, ctx};
    bool ok = true;
    if (M->nnz > 0 && M->levels > 0) ok = decode(&d, 0, M->levels);
    else if (M->nnz > 0) visit(ctx, 0, 0, row_value_get(M->values, M->vtype, d.value++));
    if (!ok || d.bit != M->nbits || d.value != M->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "mqt: structure stream broken at bit %" PRId64
                          " of %" PRId64 " (%" PRId64 " of %" PRId64 " values)", d.bit, M->nbits,
                          d.value, M->nnz);
    return ADIA_OK;
}

/* to_csr: Z order visits a row's elements by increasing column, so a
 * counting pass and a placing pass give sorted CSR rows. */
typedef struct csr_ctx {
    adia_csr *out;
    int64_t *next;            /* NULL in the counting pass */
} csr_ctx;

static void to_csr_visit(void *ctx, int32_t i, int32_t j, double v)
{
    csr_ctx *c = ctx;
    if (!c->next) {
        c->out->rowptr[i + 1]++;
        return;
    }
    int64_t q = c->next[i]++;
    c->out->colind[q] = j;
    ((double *)c->out->values)[q] = v;
}

static adia_status mqt_to_csr(const void *impl, adia_csr *out)
{
    const adia_mqt *M = impl;
    ADIA_TRY(adia__csr_alloc(out, M->rows, M->cols, M->nnz, ADIA_DOUBLE));
    csr_ctx c = {out, NULL};
    adia_status s = decode_all(M, to_csr_visit, &c);
    if (s == ADIA_OK) {
        for (int32_t i = 0; i < M->rows; i++) out->rowptr[i + 1] += out->rowptr[i];
        c.next = adia__alloc((size_t)M->rows + 1, sizeof *c.next, "mqt fill cursors");
        s = c.next ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    }
    if (s == ADIA_OK) {
        memcpy(c.next, out->rowptr, ((size_t)M->rows + 1) * sizeof *c.next);
        s = decode_all(M, to_csr_visit, &c);
    }
    free(c.next);
    if (s != ADIA_OK) adia__csr_free(out);
    return s;
}

static void check_visit(void *ctx, int32_t i, int32_t j, double v)
{
    (void)ctx, (void)i, (void)j, (void)v;
}

static adia_status mqt_check(const void *impl) { return decode_all(impl, check_visit, NULL); }

static void mqt_destroy(void *impl) { mqt_free(impl); }

static int64_t mqt_padded_zeros(const void *impl)
{
    (void)impl;
    return 0;
}

static int64_t mqt_storage_bytes(const void *impl)
{
    const adia_mqt *M = impl;
    return (M->nbits + 7) / 8 + row_value_bytes(M->nnz, M->vtype);
}

typedef struct spmv_ctx {
    const void *x;
    adia_value_type vt;
    double *acc;
} spmv_ctx;

static void spmv_visit(void *ctx, int32_t i, int32_t j, double v)
{
    spmv_ctx *c = ctx;
    c->acc[i] += v * row_value_get(c->x, c->vt, j);
}

static adia_status mqt_spmv(const void *impl, double alpha, const void *x,
                            double beta, void *y)
{
    const adia_mqt *M = impl;
    spmv_ctx c = {x, M->vtype, adia__calloc((size_t)M->rows + 1, sizeof(double), "mqt row sums")};
    if (!c.acc) return ADIA_ERR_NO_MEMORY;
    adia_status s = decode_all(M, spmv_visit, &c);
    if (s == ADIA_OK) {
#pragma omp parallel for schedule(static) num_threads(adia__threads())
        for (int32_t i = 0; i < M->rows; i++)
            row_value_set(y, M->vtype, i, row_axpby(alpha, c.acc[i], beta, row_value_get(y, M->vtype, i)));
    }
    free(c.acc);
    return s;
}

const adia_format_ops adia__format_mqt = {
    .name = "mqt",
    .description = "minimal quad tree: 4-bit-per-node structure stream + values (Z order)",
    .build = mqt_build,
    .to_csr = mqt_to_csr,
    .check = mqt_check,
    .destroy = mqt_destroy,
    .padded_zeros = mqt_padded_zeros,
    .storage_bytes = mqt_storage_bytes,
    .spmv = mqt_spmv,
};
