/* spmm_cdm.c -- the CDM numeric phase on the CPU (seed 004 section 4):
 *
 *     C_kc[t] += sum over ka of  opA_ka[t] * opB_kb[(t + ka) mod n],
 *     kb = (kc - ka) mod n,
 *
 * with op(X)'s compact diagonal k read as a rotation of X's stored compact
 * diagonal (X^T: diagonal (n - k) mod n rotated by k), so transposed
 * products move no data.  Each output compact diagonal is a full length-n
 * vector; the true output diagonals are copied in from and out to the
 * driver's HM-layout C.  Summation order per element: ka ascending. */
#include "spmm_internal.h"
#include "cdm.h"


typedef struct cdm_op {
    adia_cdm x;               /* X's compact diagonals */
    int32_t dg;
    int32_t *k;               /* op(X)'s compact indices, ascending */
    int32_t *slot;            /* stored compact diagonal of each */
    int64_t *rot;             /* entry t = x.list[slot * n + (t + rot) mod n] */
} cdm_op;

static void cdm_op_free(cdm_op *o)
{
    adia__cdm_free(&o->x);
    free(o->k);
    free(o->slot);
    free(o->rot);
}

static adia_status cdm_op_init(const spmm_operand *s, cdm_op *o)
{
    memset(o, 0, sizeof *o);
    ADIA_TRY(adia__cdm_build(s->csr, ADIA_DOUBLE, &o->x));
    const int32_t dg = o->x.dg, n = o->x.n;
    o->dg = dg;
    o->k = adia__alloc((size_t)dg, sizeof *o->k, "cdm operand");
    o->slot = adia__alloc((size_t)dg, sizeof *o->slot, "cdm operand");
    o->rot = adia__alloc((size_t)dg, sizeof *o->rot, "cdm operand");
    if (!o->k || !o->slot || !o->rot) {
        cdm_op_free(o);
        return ADIA_ERR_NO_MEMORY;
    }
    const int zero = dg > 0 && o->x.ds[0] == 0;
    for (int32_t e = 0; e < dg; e++) {
        if (s->op == ADIA_OP_N) {
            o->k[e] = o->x.ds[e];
            o->slot[e] = e;
            o->rot[e] = 0;
        } else {                               /* (n - k) mod n: 0 first, rest reversed */
            int32_t src = zero && e == 0 ? 0 : dg - 1 - (e - zero);
            o->slot[e] = src;
            o->k[e] = o->x.ds[src] == 0 ? 0 : n - o->x.ds[src];
            o->rot[e] = o->k[e];
        }
    }
    return ADIA_OK;
}

static int32_t find_k(const cdm_op *o, int64_t k)
{
    int32_t lo = 0, hi = o->dg;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (o->k[mid] < k) lo = mid + 1;
        else hi = mid;
    }
    return lo < o->dg && o->k[lo] == k ? lo : -1;
}

/* c[t] += a[(t + ra) mod n] * b[(t + rb) mod n] for t in [t0, t1): cut at
 * the wrap points into unit-stride runs. */
static void rotated_fma(int64_t n, int64_t t0, int64_t t1, double *restrict c,
                        const double *restrict a, int64_t ra,
                        const double *restrict b, int64_t rb)
{
    for (int64_t t = t0; t < t1;) {
        int64_t ia = (t + ra) % n, ib = (t + rb) % n, len = t1 - t;
        if (n - ia < len) len = n - ia;
        if (n - ib < len) len = n - ib;
        for (int64_t j = 0; j < len; j++) c[t + j] += a[ia + j] * b[ib + j];
        t += len;
    }
}

/* Copy the true output diagonals between the HM layout and compact C. */
static void copy_true(const spmm_plan *p, const adia_cdm *cc, double *hm, int to_cdm)
{
    double *comp = cc->list;
    for (int32_t d = 0; d < p->dc; d++) {
        int64_t oc = p->c_off[d], kc = oc < 0 ? oc + p->n : oc;
        int64_t cb = (int64_t)adia__cdm_find(cc, kc) * p->n;
        int64_t r0 = adia_diag_row0(oc), r1 = r0 + adia_diag_len(p->m, p->n, oc);
        for (int64_t i = r0; i < r1; i++) {
            if (to_cdm) comp[cb + i] = hm[p->c_base[d] + i];
            else hm[p->c_base[d] + i] = comp[cb + i];
        }
    }
}

static adia_status output_compacts(const spmm_plan *p, adia_cdm *cc)
{
    int32_t *ks = adia__alloc((size_t)p->dc, sizeof *ks, "cdm output");
    if (!ks) return ADIA_ERR_NO_MEMORY;
    int32_t z = 0, dg = 0;
    while (z < p->dc && p->c_off[z] < 0) z++;
    int32_t a = z, b = 0;                      /* merge non-negatives with n + negatives */
    while (a < p->dc || b < z) {
        int64_t ka = a < p->dc ? p->c_off[a] : INT64_MAX;
        int64_t kb = b < z ? (int64_t)p->c_off[b] + p->n : INT64_MAX;
        int64_t k = ka < kb ? ka : kb;
        if (ka == k) a++;
        if (kb == k) b++;
        ks[dg++] = (int32_t)k;
    }
    adia_status s = adia__cdm_alloc(p->n, dg, ks, ADIA_DOUBLE, cc);
    free(ks);
    return s;
}

static void cdm_tile(const cdm_op *A, const cdm_op *B, const adia_cdm *cc,
                     int32_t e, int64_t t0, int64_t t1)
{
    const int64_t n = cc->n, kc = cc->ds[e];
    double *c = (double *)cc->list + (int64_t)e * n;
    const double *al = A->x.list, *bl = B->x.list;
    for (int32_t a = 0; a < A->dg; a++) {
        int64_t ka = A->k[a], kb = kc - ka;
        if (kb < 0) kb += n;
        int32_t b = find_k(B, kb);
        if (b < 0) continue;
        rotated_fma(n, t0, t1, c, al + (int64_t)A->slot[a] * n, A->rot[a],
                    bl + (int64_t)B->slot[b] * n, (ka + B->rot[b]) % n);
    }
}

adia_status adia__spmm_cpu_cdm(spmm_plan *p, double *c, double *time_ms)
{
    cdm_op A, B;
    adia_cdm cc;
    ADIA_TRY(cdm_op_init(&p->a, &A));
    adia_status s = cdm_op_init(&p->b, &B);
    if (s != ADIA_OK) {
        cdm_op_free(&A);
        return s;
    }
    s = output_compacts(p, &cc);
    if (s == ADIA_OK) {
        copy_true(p, &cc, c, 1);
        /* row blocks in parallel, every output compact diagonal inside one
         * (its positions of A, B and C stay in cache: spmm_cpu_block_rows) */
        const int nt = p->threads > 0 ? p->threads : adia__threads();
        const int64_t rows = spmm_cpu_block_rows(p->n, (int64_t)A.dg + B.dg + cc.dg, nt);
        const int64_t blocks = ((int64_t)p->n + rows - 1) / rows;
        const double start_ms = adia__now_ms();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (int64_t blk = 0; blk < blocks; blk++) {
            int64_t t0 = blk * rows, t1 = t0 + rows < p->n ? t0 + rows : p->n;
            for (int32_t e = 0; e < cc.dg; e++) cdm_tile(&A, &B, &cc, e, t0, t1);
        }
        *time_ms = adia__now_ms() - start_ms;
        copy_true(p, &cc, c, 0);
        adia__cdm_free(&cc);
    }
    cdm_op_free(&A);
    cdm_op_free(&B);
    return s;
}
