/* spmm.c -- the public diagonal products: shape checks, the structure
 * phase (output diagonals, pairs, nnz, memory estimate) and the driver that
 * runs a CPU or GPU numeric phase and hands C back as a master matrix. */
#define _POSIX_C_SOURCE 200809L
#include "spmm_internal.h"

#include <inttypes.h>
#include <math.h>

/* Default of adia_spgemm_options.max_fill: C's diagonal storage may be up to
 * 4 times the bound of its true nonzeros.  The bound (the multiplications
 * of a row-by-row product) is exact for banded and full-diagonal operands
 * (storage/bound <= 1 there) and only overestimates, so a refusal proves
 * that more than 3/4 of C's storage would be zeros: the "diagonal" product
 * of unstructured matrices, where a general SpGEMM is the right tool. */
#define SPMM_DEFAULT_MAX_FILL 4.0

void adia_spgemm_options_default(adia_spgemm_options *opt)
{
    if (opt) memset(opt, 0, sizeof *opt);
}

static const char *op_name(adia_op op) { return op == ADIA_OP_T ? "^T" : ""; }

/* op(X)'s shape and ascending offsets (negated and reversed for op = T). */
static adia_status operand_init(const adia_matrix *X, adia_op op, spmm_operand *x)
{
    memset(x, 0, sizeof *x);
    x->csr = &X->csr;
    x->op = op;
    x->rows = op == ADIA_OP_T ? X->csr.cols : X->csr.rows;
    x->cols = op == ADIA_OP_T ? X->csr.rows : X->csr.cols;
    ADIA_TRY(adia__csr_offsets(&X->csr, &x->off, &x->dg));
    if (op == ADIA_OP_T)
        for (int32_t a = 0, b = x->dg - 1; a <= b; a++, b--) {
            int32_t t = x->off[a];
            x->off[a] = -x->off[b];
            x->off[b] = -t;
        }
    for (int32_t d = 0; d < x->dg; d++) x->stored += adia_diag_len(x->rows, x->cols, x->off[d]);
    return ADIA_OK;
}

void adia__spmm_plan_free(spmm_plan *p)
{
    spmm_operand *ops[] = {&p->a, &p->b};
    for (int i = 0; i < 2; i++) {
        free(ops[i]->off);
        free(ops[i]->base);
        free(ops[i]->list);
    }
    free(p->c_off);
    free(p->c_base);
    free(p->pair_ptr);
    free(p->pair_a);
    free(p->pair_b);
    memset(p, 0, sizeof *p);
}

/* Index range [*lo, *hi) of B's offsets ob with oa + ob inside (-m, n). */
static void b_range(const spmm_plan *p, int64_t oa, int32_t *lo, int32_t *hi)
{
    *lo = adia__offset_lower_bound(p->b.dg, p->b.off, -(int64_t)p->m - oa + 1);
    *hi = adia__offset_lower_bound(p->b.dg, p->b.off, (int64_t)p->n - oa);
    if (*hi < *lo) *hi = *lo;
}

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Arrays over the offset span (m + n slots or bits) pay when the span is
 * small beside the number of candidates (at most 16 slots each); else sort
 * or search.  Used by the output offsets and the pairs alike. */
static bool span_is_small(int64_t span, int64_t candidates)
{
    return span <= 16 * candidates;
}

/* The budget of one product: the process's (adia_memory_budget), or
 * opt->max_bytes where that is smaller. */
static adia_status check_budget(const adia_spgemm_options *opt, int64_t bytes, const char *what)
{
    return adia__budget_check_limit(bytes, opt->max_bytes, "adia_spgemm_options.max_bytes", what);
}

/* dst bits u + shift |= src bits u for u in [u0, u1), a source word at a
 * time; every bit copied lands inside dst (the caller's ranges say so). */
static void or_shifted(uint64_t *dst, const uint64_t *src, int64_t u0, int64_t u1, int64_t shift)
{
    for (int64_t u = u0; u < u1;) {
        int bit = (int)(u & 63);
        int64_t take = 64 - bit < u1 - u ? 64 - bit : u1 - u;
        uint64_t v = src[u >> 6] >> bit;
        if (take < 64) v &= ((uint64_t)1 << take) - 1;
        int64_t at = u + shift;
        int sb = (int)(at & 63);
        dst[at >> 6] |= v << sb;
        if (sb && sb + take > 64) dst[(at >> 6) + 1] |= v >> (64 - sb);
        u += take;
    }
}

static void set_bit(uint64_t *bits, int64_t i) { bits[i >> 6] |= (uint64_t)1 << (i & 63); }

/* Every in-range oa + ob and the offsets acc_off of an existing C, as bits
 * over oc + m in [0, m + n).  Per diagonal of op(A), its partners in B are
 * one run of B's ascending offsets: set one by one, or B's offsets as a bit
 * set (ob + k) shifted by oa and or-ed a word at a time, whichever takes
 * fewer steps.  Unstructured operands have up to 10^9 pairs on a span of
 * 10^5 (powerlaw:20000,2,500 squared): word steps make that 2 * 10^7. */
static adia_status offsets_by_bits(spmm_plan *p, const int32_t *acc_off, int32_t n_acc)
{
    int64_t span = (int64_t)p->m + p->n, span_b = (int64_t)p->k + p->n;
    uint64_t *bits = adia__calloc((size_t)(span / 64 + 2), 8, "output diagonal bits");
    uint64_t *b_bits = adia__calloc((size_t)(span_b / 64 + 2), 8, "operand diagonal bits");
    if (!bits || !b_bits) {
        free(bits);
        free(b_bits);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int32_t b = 0; b < p->b.dg; b++) set_bit(b_bits, (int64_t)p->b.off[b] + p->k);
    for (int32_t a = 0; a < p->a.dg; a++) {
        int32_t lo, hi;
        int64_t oa = p->a.off[a];
        b_range(p, oa, &lo, &hi);
        if (lo == hi) continue;
        int64_t u0 = (int64_t)p->b.off[lo] + p->k, u1 = (int64_t)p->b.off[hi - 1] + p->k + 1;
        if (hi - lo <= (u1 - u0) / 64 + 2)
            for (int32_t b = lo; b < hi; b++) set_bit(bits, oa + p->b.off[b] + p->m);
        else
            or_shifted(bits, b_bits, u0, u1, oa + p->m - p->k);
    }
    for (int32_t d = 0; d < n_acc; d++) set_bit(bits, (int64_t)acc_off[d] + p->m);
    free(b_bits);
    int64_t dc = 0;
    for (int64_t w = 0; w <= span / 64; w++) dc += __builtin_popcountll(bits[w]);
    if (dc > INT32_MAX) {
        free(bits);
        return adia__error(ADIA_ERR_OVERFLOW, "spmm: %" PRId64 " output diagonals exceed "
                          "32-bit counts", dc);
    }
    p->c_off = adia__alloc((size_t)dc, sizeof *p->c_off, "output offsets");
    if (!p->c_off) {
        free(bits);
        return ADIA_ERR_NO_MEMORY;
    }
    dc = 0;
    for (int64_t w = 0; w <= span / 64; w++)
        for (uint64_t x = bits[w]; x; x &= x - 1)
            p->c_off[dc++] = (int32_t)(w * 64 + __builtin_ctzll(x) - p->m);
    free(bits);
    p->dc = (int32_t)dc;
    return ADIA_OK;
}

/* The same set by sorting the candidate sums (n_pairs + n_acc of them):
 * for few pairs on long diagonals, where even bits over m + n would cost
 * more than the whole product structure. */
static adia_status offsets_by_sort(spmm_plan *p, const int32_t *acc_off, int32_t n_acc)
{
    int64_t k = 0;
    p->c_off = adia__alloc((size_t)(p->n_pairs + n_acc), sizeof *p->c_off, "output offsets");
    if (!p->c_off) return ADIA_ERR_NO_MEMORY;
    for (int32_t a = 0; a < p->a.dg; a++) {
        int32_t lo, hi;
        b_range(p, p->a.off[a], &lo, &hi);
        for (int32_t b = lo; b < hi; b++) p->c_off[k++] = p->a.off[a] + p->b.off[b];
    }
    for (int32_t d = 0; d < n_acc; d++) p->c_off[k++] = acc_off[d];
    qsort(p->c_off, (size_t)k, sizeof *p->c_off, cmp_i32);
    int64_t dc = 0;
    for (int64_t i = 0; i < k; i++)
        if (dc == 0 || p->c_off[i] != p->c_off[dc - 1]) p->c_off[dc++] = p->c_off[i];
    p->dc = (int32_t)dc;
    return ADIA_OK;
}

/* Pairs (oa, ob) with oa + ob on C, counted without listing them. */
static void count_pairs(spmm_plan *p)
{
    p->n_pairs = 0;
    for (int32_t a = 0; a < p->a.dg; a++) {
        int32_t lo, hi;
        b_range(p, p->a.off[a], &lo, &hi);
        p->n_pairs += hi - lo;
    }
}

/* Output offsets (every in-range oa + ob, joined with the offsets of an
 * existing C, acc, may be NULL), their bases and C's length. */
static adia_status output_offsets(spmm_plan *p, const adia_csr *acc,
                                  const adia_spgemm_options *opt)
{
    int32_t *acc_off = NULL, n_acc = 0;
    if (acc) ADIA_TRY(adia__csr_offsets(acc, &acc_off, &n_acc));
    int64_t span = (int64_t)p->m + p->n;
    bool bits = span_is_small(span, p->n_pairs + n_acc);
    /* bits over both spans and the offsets (< m + n), or the sums to sort */
    int64_t bytes = bits ? (span + (int64_t)p->k + p->n) / 8 + 32 + 4 * span
                         : adia_sat_mul(p->n_pairs + n_acc, 4);
    adia_status s = check_budget(opt, bytes, "spmm: the output diagonals");
    if (s == ADIA_OK)
        s = bits ? offsets_by_bits(p, acc_off, n_acc) : offsets_by_sort(p, acc_off, n_acc);
    free(acc_off);
    ADIA_TRY(s);
    p->c_base = adia__alloc((size_t)p->dc ? (size_t)p->dc : 1, sizeof *p->c_base, "output bases");
    if (!p->c_base) return ADIA_ERR_NO_MEMORY;
    int64_t start = 0;                         /* <= m * n: no overflow */
    for (int32_t d = 0; d < p->dc; d++) {
        p->c_base[d] = start - adia_diag_row0(p->c_off[d]);
        start += adia_diag_len(p->m, p->n, p->c_off[d]);
    }
    p->c_len = start;
    return ADIA_OK;
}

/* Count and sum of t = oa + ob over B's offsets ob with t in [t0, t1);
 * bsum: prefix sums of B's offsets. */
static void t_range(const spmm_plan *p, const int64_t *bsum, int64_t oa, int64_t t0, int64_t t1,
                    int64_t *cnt, int64_t *sum)
{
    *cnt = *sum = 0;
    if (t0 >= t1) return;
    int32_t i0 = adia__offset_lower_bound(p->b.dg, p->b.off, t0 - oa);
    int32_t i1 = adia__offset_lower_bound(p->b.dg, p->b.off, t1 - oa);
    *cnt = i1 - i0;
    *sum = *cnt * oa + (bsum[i1] - bsum[i0]);
}

/* Multiplications of the product -- the rows every pair reaches
 * (spmm_pair_rows), summed -- in closed form, O(log) per diagonal of op(A)
 * instead of a walk over every pair.  For oa, with L = max(0, -oa) and
 * H = min(m, k - oa), pair (oa, ob) reaches min(H, n - t) - max(L, -t)
 * rows, t = oa + ob, which is positive exactly for t in (-H, n - L): a sum
 * of a constant or of -t on each side of t = n - H and of t = -L. */
static adia_status count_mults(spmm_plan *p)
{
    int64_t *bsum = adia__alloc((size_t)p->b.dg + 1, sizeof *bsum, "spmm offset sums");
    if (!bsum) return ADIA_ERR_NO_MEMORY;
    bsum[0] = 0;
    for (int32_t b = 0; b < p->b.dg; b++) bsum[b + 1] = bsum[b] + p->b.off[b];
    int64_t total = 0, m = p->m, n = p->n;
    for (int32_t a = 0; a < p->a.dg; a++) {
        int64_t oa = p->a.off[a], L = oa < 0 ? -oa : 0, H = m < p->k - oa ? m : p->k - oa;
        int64_t t0 = 1 - H, t1 = n - L, c, sum;
        if (t0 >= t1) continue;
        t_range(p, bsum, oa, t0, n - H + 1 < t1 ? n - H + 1 : t1, &c, &sum);   /* h = H */
        total += H * c;
        t_range(p, bsum, oa, n - H + 1 > t0 ? n - H + 1 : t0, t1, &c, &sum);   /* h = n - t */
        total += n * c - sum;
        t_range(p, bsum, oa, t0, -L < t1 ? -L : t1, &c, &sum);                 /* l = -t */
        total += sum;
        t_range(p, bsum, oa, -L > t0 ? -L : t0, t1, &c, &sum);                 /* l = L */
        total -= L * c;
    }
    free(bsum);
    p->mults = total;
    return ADIA_OK;
}

/* Output diagonal index of each offset oc + m in [0, m + n) when that
 * span is small beside the pairs, else NULL and a binary search per pair. */
static int32_t *offset_slots(const spmm_plan *p)
{
    int64_t span = (int64_t)p->m + p->n;
    if (!span_is_small(span, p->n_pairs)) return NULL;
    int32_t *slot = adia__alloc((size_t)span, sizeof *slot, "output diagonal slots");
    for (int32_t d = 0; slot && d < p->dc; d++) slot[(int64_t)p->c_off[d] + p->m] = d;
    return slot;
}

/* Pairs grouped by output diagonal, oa ascending within each. */
static adia_status output_pairs(spmm_plan *p)
{
    p->pair_ptr = adia__calloc((size_t)p->dc + 1, sizeof *p->pair_ptr, "pair pointers");
    p->pair_a = adia__alloc((size_t)p->n_pairs, sizeof *p->pair_a, "pair list");
    p->pair_b = adia__alloc((size_t)p->n_pairs, sizeof *p->pair_b, "pair list");
    int64_t *next = adia__alloc((size_t)p->dc + 1, sizeof *next, "pair cursors");
    int32_t *slot = offset_slots(p);   /* NULL: search (few pairs, long span) */
    if (!p->pair_ptr || !p->pair_a || !p->pair_b || !next) {
        free(next);
        free(slot);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t a = 0; a < p->a.dg; a++) {
            int32_t lo, hi;
            int64_t oa = p->a.off[a];
            b_range(p, oa, &lo, &hi);
            for (int32_t b = lo; b < hi; b++) {
                int64_t oc = oa + p->b.off[b];
                int32_t d = slot ? slot[oc + p->m] : adia__offset_lower_bound(p->dc, p->c_off, oc);
                if (pass == 0) {
                    p->pair_ptr[d + 1]++;
                } else {
                    p->pair_a[next[d]] = a;
                    p->pair_b[next[d]++] = b;
                }
            }
        }
        if (pass == 0) {
            for (int32_t d = 0; d < p->dc; d++) p->pair_ptr[d + 1] += p->pair_ptr[d];
            memcpy(next, p->pair_ptr, ((size_t)p->dc + 1) * sizeof *next);
        }
    }
    free(next);
    free(slot);
    return ADIA_OK;
}

/* Entries in each line of X along the product's inner dimension: its
 * columns (by_col) or its rows; cnt holds the k inner indices. */
static void inner_counts(const adia_csr *x, bool by_col, int32_t *cnt)
{
    if (by_col)
        for (int64_t q = 0; q < x->nnz; q++) cnt[x->colind[q]]++;
    else
        for (int32_t i = 0; i < x->rows; i++) cnt[i] = (int32_t)(x->rowptr[i + 1] - x->rowptr[i]);
}

/* Upper bound of C's true nonzeros, O(nnz) before any diagonal work: sum
 * over k of (entries in column k of op(A)) x (entries in row k of op(B)),
 * each multiplication making at most one entry, plus an accumulated C's. */
static adia_status nnz_bound(spmm_plan *p, const adia_csr *acc)
{
    int32_t *ca = adia__calloc((size_t)p->k + 1, sizeof *ca, "product bound counts");
    int32_t *cb = adia__calloc((size_t)p->k + 1, sizeof *cb, "product bound counts");
    if (!ca || !cb) {
        free(ca);
        free(cb);
        return ADIA_ERR_NO_MEMORY;
    }
    inner_counts(p->a.csr, p->a.op == ADIA_OP_N, ca);
    inner_counts(p->b.csr, p->b.op == ADIA_OP_T, cb);
    int64_t bound = acc ? acc->nnz : 0;
    for (int32_t k = 0; k < p->k; k++) bound += (int64_t)ca[k] * cb[k];  /* <= nnz(A) * n */
    p->nnz_bound = bound;
    free(ca);
    free(cb);
    return ADIA_OK;
}

static adia_status check_args(adia_op opA, const adia_matrix *A, adia_op opB,
                              const adia_matrix *B, const adia_spgemm_options *opt,
                              const char *func)
{
    ADIA_TRY(adia__matrix_check_handle(A, func));
    ADIA_TRY(adia__matrix_check_handle(B, func));
    if ((opA != ADIA_OP_N && opA != ADIA_OP_T) || (opB != ADIA_OP_N && opB != ADIA_OP_T))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: op must be ADIA_OP_N or ADIA_OP_T", func);
    if (opt && (opt->device < ADIA_DEVICE_CPU || opt->device > ADIA_DEVICE_GPU ||
                opt->algorithm < ADIA_SPGEMM_AUTO || opt->algorithm > ADIA_SPGEMM_CDM))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: bad device %d or algorithm %d", func,
                          (int)opt->device, (int)opt->algorithm);
    /* OpenMP tries to start every thread asked for: 100000 crashed */
    if (opt && opt->threads > adia_thread_limit())
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: threads = %d, more than the limit of %d "
                          "(%d per processor)", func, opt->threads, adia_thread_limit(),
                          ADIA_THREADS_PER_PROC);
    return ADIA_OK;
}

/* Structure phase, everything but the pair list: shapes, the bound of C's
 * nonzeros, the number of pairs and of multiplications, output offsets.
 * Time and memory near-linear in the operands and m + n, whatever the
 * number of pairs: fill and memory are checked before the pairs are
 * listed (plan_pairs).  acc: existing C or NULL. */
static adia_status plan_shape(adia_op opA, const adia_matrix *A, adia_op opB,
                              const adia_matrix *B, const adia_csr *acc,
                              const adia_spgemm_options *opt, spmm_plan *p)
{
    memset(p, 0, sizeof *p);
    adia_status s = operand_init(A, opA, &p->a);
    if (s == ADIA_OK) s = operand_init(B, opB, &p->b);
    if (s == ADIA_OK && p->a.cols != p->b.rows)
        s = adia__error(ADIA_ERR_DIMENSION, "spmm: A%s is %" PRId32 " x %" PRId32 " and B%s is %"
                       PRId32 " x %" PRId32 ": inner dimensions %" PRId32 " and %" PRId32
                       " differ", op_name(opA), p->a.rows, p->a.cols, op_name(opB), p->b.rows,
                       p->b.cols, p->a.cols, p->b.rows);
    p->m = p->a.rows;
    p->k = p->a.cols;
    p->n = p->b.cols;
    if (s == ADIA_OK && acc && (acc->rows != p->m || acc->cols != p->n))
        s = adia__error(ADIA_ERR_DIMENSION, "spmm: accumulating into C of %" PRId32 " x %" PRId32
                       " but A%s * B%s is %" PRId32 " x %" PRId32, acc->rows, acc->cols,
                       op_name(opA), op_name(opB), p->m, p->n);
    double t0 = adia__now_ms();
    if (s == ADIA_OK) s = nnz_bound(p, acc);
    if (s == ADIA_OK) {
        count_pairs(p);
        s = output_offsets(p, acc, opt);
    }
    if (s == ADIA_OK) s = count_mults(p);
    p->struct_ms = adia__now_ms() - t0;
    if (s != ADIA_OK) adia__spmm_plan_free(p);
    return s;
}

/* The pair list, after plan_shape and the checks of adia_spgemm. */
static adia_status plan_pairs(spmm_plan *p)
{
    double t0 = adia__now_ms();
    adia_status s = output_pairs(p);
    p->struct_ms += adia__now_ms() - t0;
    return s;
}

static adia_spgemm_algo choose_algorithm(const spmm_plan *p, const adia_spgemm_options *opt)
{
    if (opt->algorithm != ADIA_SPGEMM_AUTO) return opt->algorithm;
    if (opt->device == ADIA_DEVICE_GPU || p->m != p->k || p->k != p->n) return ADIA_SPGEMM_HM;
    /* CDM multiplies whole length-n compact diagonals: worth it when the
     * pairs' row ranges are nearly full anyway (narrow bands) */
    double cdm_work = (double)p->n_pairs * (double)p->n;
    return cdm_work <= 1.25 * (double)p->mults ? ADIA_SPGEMM_CDM : ADIA_SPGEMM_HM;
}

/* Host bytes of the plan's arrays: operand and output offsets, output
 * bases, the pair list (8 bytes a pair, known from the two operands'
 * offsets before it is built), its pointers and cursors, the slot map. */
static int64_t structure_bytes(const spmm_plan *p)
{
    int64_t span = (int64_t)p->m + p->n;
    int64_t b = adia_sat_add(adia_sat_mul(p->n_pairs, 8), 28 * ((int64_t)p->dc + 1));
    b = adia_sat_add(b, 4 * ((int64_t)p->a.dg + p->b.dg));
    return span_is_small(span, p->n_pairs) ? adia_sat_add(b, 4 * span) : b;
}

static void plan_info(const spmm_plan *p, adia_spgemm_algo algo, adia_spgemm_info *info)
{
    memset(info, 0, sizeof *info);
    info->rows = p->m;
    info->cols = p->n;
    info->n_diag = p->dc;
    info->nnz = p->c_len;
    info->nnz_bound = p->nnz_bound;
    info->n_pairs = p->n_pairs;
    info->flops = adia_sat_mul(2, p->mults);
    info->algorithm = algo;
    /* plan arrays + operand storage + C's values + C's CSR (the old CSR of
     * an accumulated C is freed only after the new one exists) */
    int64_t ops = algo == ADIA_SPGEMM_CDM
                      ? adia_sat_mul(adia_sat_mul((int64_t)p->a.dg + p->b.dg + p->dc, p->n), 8)
                      : adia_sat_mul(adia_sat_add(p->a.stored, p->b.stored), 8);
    ops = adia_sat_add(ops, adia_sat_mul(p->c_len, 8));     /* C in HM layout, both paths */
    int64_t csr = adia_sat_add(adia_sat_mul(p->c_len, 12), adia_sat_mul((int64_t)p->m + 1, 8));
    info->peak_bytes = adia_sat_add(adia_sat_add(structure_bytes(p), ops), csr);
    info->device_bytes = adia__spmm_gpu_bytes(p);
}

adia_status adia_spgemm_structure(adia_op opA, const adia_matrix *A, adia_op opB,
                                  const adia_matrix *B, const adia_spgemm_options *opt,
                                  adia_spgemm_info *info, int32_t **offsets)
{
    ADIA_TRY(check_args(opA, A, opB, B, opt, "adia_spgemm_structure"));
    if (!info) return adia__error(ADIA_ERR_INVALID_ARG, "adia_spgemm_structure: info is NULL");
    adia_spgemm_options dflt;
    adia_spgemm_options_default(&dflt);
    if (!opt) opt = &dflt;
    spmm_plan p;
    ADIA_TRY(plan_shape(opA, A, opB, B, NULL, opt, &p));
    plan_info(&p, choose_algorithm(&p, opt), info);
    if (offsets) {
        *offsets = p.c_off;
        p.c_off = NULL;
    }
    adia__spmm_plan_free(&p);
    return ADIA_OK;
}

/* Refuse a product whose diagonal storage would be mostly zeros
 * (adia_spgemm_options.max_fill; SPMM_DEFAULT_MAX_FILL says why).  The slack
 * of one full diagonal (max(m, n)) keeps tiny and empty products, whose
 * bound may be 0, from being refused. */
static adia_status check_fill(const spmm_plan *p, const adia_spgemm_options *opt)
{
    double max_fill = opt->max_fill > 0 ? opt->max_fill : SPMM_DEFAULT_MAX_FILL;
    double allowed = max_fill * (double)p->nnz_bound + (double)(p->m > p->n ? p->m : p->n);
    if (!((double)p->c_len > allowed)) return ADIA_OK;   /* INFINITY * 0: NaN, allowed */
    return adia__error(ADIA_ERR_UNSUPPORTED, "adia_spgemm: C (%" PRId32 " x %" PRId32 ") would "
                      "store %" PRId64 " entries on %" PRId32 " diagonals for at most %" PRId64
                      " true nonzeros: density of the diagonals at most %.3g%%, more than "
                      "max_fill = %g times the nonzeros; the product is not diagonal (set "
                      "adia_spgemm_options.max_fill, CLI --allow-fill, to run it anyway)",
                      p->m, p->n, p->c_len, p->dc, p->nnz_bound,
                      p->c_len ? 100.0 * (double)p->nnz_bound / (double)p->c_len : 0.0, max_fill);
}

static adia_status check_device(const adia_spgemm_options *opt, adia_spgemm_algo algo)
{
    if (opt->device != ADIA_DEVICE_GPU) return ADIA_OK;
    int n = 0;
    ADIA_TRY(adia_gpu_device_count(&n));
    if (n == 0)
        return adia__error(ADIA_ERR_NO_DEVICE, "adia_spgemm: --device gpu asked for, but no "
                          "CUDA device is usable (or adia was built without CUDA)");
    if (algo == ADIA_SPGEMM_CDM)
        return adia__error(ADIA_ERR_UNSUPPORTED, "adia_spgemm: the GPU runs the HM streaming "
                          "kernel; algorithm CDM is CPU only");
    return ADIA_OK;
}

/* Numeric phase and hand-over of C as a master matrix. */
static adia_status run_gpu(spmm_plan *p, spmm_gpu_run *run, adia_spgemm_info *info)
{
    ADIA_TRY(adia__spmm_gpu_hm(p, run));
    info->time_ms = run->kernel_ms;
    info->device_ms = run->device_ms;
    info->device_setup_ms = run->setup_ms;
    info->device_alloc_ms = run->alloc_ms;
    info->transfer_ms = run->transfer_ms;
    info->gpu_tile_rows = run->tile_rows;
    return ADIA_OK;
}

static adia_status run_numeric(spmm_plan *p, adia_spgemm_algo algo,
                               const adia_spgemm_options *opt, const adia_csr *acc,
                               adia_spgemm_info *info, adia_csr *out)
{
    double *c = adia__alloc((size_t)p->c_len, sizeof *c, "product values");
    if (!c) return ADIA_ERR_NO_MEMORY;
    /* Zeroed here, in parallel, not left to calloc's lazy pages: their
     * first-touch faults would land in the numeric phase (measured on a
     * 2-core VM: HM numeric 181 ms with lazy pages, 40 ms without, and two
     * threads faulting slower than one). */
#pragma omp parallel for schedule(static) num_threads(adia__threads())
    for (int64_t k = 0; k < p->c_len; k++) c[k] = 0.0;
    adia_status s = ADIA_OK;
    if (acc) s = adia__diag_scatter(acc, p->dc, p->c_off, p->c_base, c, ADIA_DOUBLE);
    if (s == ADIA_OK) {
        spmm_gpu_run run;
        memset(&run, 0, sizeof run);
        run.c_list = c;
        run.accumulate = acc != NULL;
        run.kernel = opt->gpu_kernel;
        if (opt->device == ADIA_DEVICE_GPU) s = run_gpu(p, &run, info);
        else if (algo == ADIA_SPGEMM_CDM) s = adia__spmm_cpu_cdm(p, c, &info->time_ms);
        else s = adia__spmm_cpu_hm(p, c, &info->time_ms);
    }
    if (s == ADIA_OK)
        s = adia__diag_emit_csr(p->m, p->n, p->dc, p->c_off, p->c_base, c, ADIA_DOUBLE, true, out);
    free(c);
    return s;
}

adia_status adia_spgemm(adia_op opA, const adia_matrix *A, adia_op opB,
                        const adia_matrix *B, adia_matrix **C,
                        const adia_spgemm_options *opt)
{
    ADIA_TRY(check_args(opA, A, opB, B, opt, "adia_spgemm"));
    if (!C) return adia__error(ADIA_ERR_INVALID_ARG, "adia_spgemm: C is NULL");
    adia_spgemm_options dflt;
    adia_spgemm_options_default(&dflt);
    if (!opt) opt = &dflt;
    const adia_csr *acc = NULL;
    if (opt->accumulate) {
        ADIA_TRY(adia__matrix_check_handle(*C, "adia_spgemm (accumulate into *C)"));
        acc = &(*C)->csr;
    } else {
        *C = NULL;
    }
    spmm_plan p;
    ADIA_TRY(plan_shape(opA, A, opB, B, acc, opt, &p));
    p.threads = opt->threads;
    adia_spgemm_algo algo = choose_algorithm(&p, opt);
    adia_spgemm_info info;
    plan_info(&p, algo, &info);
    adia_status s = check_device(opt, algo);
    if (s == ADIA_OK && algo == ADIA_SPGEMM_CDM && (p.m != p.k || p.k != p.n))
        s = adia__error(ADIA_ERR_DIMENSION, "adia_spgemm: algorithm CDM needs square matrices, "
                       "A%s is %" PRId32 " x %" PRId32 " and B%s is %" PRId32 " x %" PRId32,
                       op_name(opA), p.m, p.k, op_name(opB), p.k, p.n);
    /* both before the pair list, whose size alone can be gigabytes */
    if (s == ADIA_OK) s = check_fill(&p, opt);
    if (s == ADIA_OK) {
        char what[192];
        snprintf(what, sizeof what, "adia_spgemm: C = A%s * B%s (%" PRId32 " x %" PRId32 ", %"
                 PRId32 " diagonals, %" PRId64 " entries, %" PRId64 " pairs)", op_name(opA),
                 op_name(opB), p.m, p.n, p.dc, p.c_len, p.n_pairs);
        s = check_budget(opt, info.peak_bytes, what);
    }
    if (s == ADIA_OK) s = plan_pairs(&p);
    adia_csr out;
    if (s == ADIA_OK) s = run_numeric(&p, algo, opt, acc, &info, &out);
    adia__spmm_plan_free(&p);
    if (s != ADIA_OK) return s;
    if (opt->info) *opt->info = info;
    if (acc) {
        adia__csr_free(&(*C)->csr);
        (*C)->csr = out;
        return ADIA_OK;
    }
    ADIA_TRY(adia__matrix_wrap(&out, C));
    snprintf((*C)->name, sizeof (*C)->name, "%.60s%s*%.60s%s", A->name, op_name(opA),
             B->name, op_name(opB));
    return ADIA_OK;
}

/* Entries of x and y (n each) that are not bitwise equal (NaN == NaN). */
static int64_t count_mismatch(const double *x, const double *y, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!(isnan(x[i]) && isnan(y[i])) && memcmp(&x[i], &y[i], sizeof x[i]) != 0) bad++;
    return bad;
}

adia_status adia__spmm_gpu_check_rows(adia_op opA, const adia_matrix *A, adia_op opB,
                                const adia_matrix *B, int64_t row0, int64_t rows,
                                adia_spgemm_info *info, int64_t *mismatches)
{
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    opt.device = ADIA_DEVICE_GPU;
    ADIA_TRY(check_args(opA, A, opB, B, &opt, "adia__spmm_gpu_check_rows"));
    ADIA_TRY(check_device(&opt, ADIA_SPGEMM_HM));
    spmm_plan p;
    ADIA_TRY(plan_shape(opA, A, opB, B, NULL, &opt, &p));
    plan_info(&p, ADIA_SPGEMM_HM, info);
    /* C stays on the device: the host holds the plan and the operands */
    int64_t host = adia_sat_add(structure_bytes(&p), adia_sat_mul(p.a.stored + p.b.stored, 8));
    adia_status s = check_budget(&opt, host, "adia__spmm_gpu_check_rows: the product's structure");
    if (s == ADIA_OK) s = plan_pairs(&p);
    if (row0 < 0 || rows < 0 || row0 + rows > p.m) row0 = rows = 0;
    size_t cells = (size_t)p.dc * (size_t)rows;
    double *gpu = s == ADIA_OK ? adia__calloc(cells, sizeof *gpu, "sampled rows") : NULL;
    double *cpu = s == ADIA_OK ? adia__calloc(cells, sizeof *cpu, "sampled rows") : NULL;
    if (s == ADIA_OK && (!gpu || !cpu)) s = ADIA_ERR_NO_MEMORY;
    spmm_gpu_run run;
    memset(&run, 0, sizeof run);
    run.sample_row0 = row0;
    run.sample_rows = rows;
    run.sample = gpu;
    if (s == ADIA_OK) s = run_gpu(&p, &run, info);  /* rows off a diagonal stay 0 */
    if (s == ADIA_OK) s = adia__spmm_cpu_hm_rows(&p, row0, row0 + rows, cpu);
    if (s == ADIA_OK) *mismatches = count_mismatch(gpu, cpu, (int64_t)cells);
    free(gpu);
    free(cpu);
    adia__spmm_plan_free(&p);
    return s;
}
