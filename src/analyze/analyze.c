/* analyze.c -- matrix features (the paper's Table 1 symbols plus row
 * statistics) and the search engine that picks the matrix type.
 *
 * One sweep over the CSR arrays in row order, with per-diagonal state in
 * arrays indexed by offset o = col - row, one slot per offset between the
 * least and the greatest present (each row's first and last column give
 * them, columns being sorted: a band's width, not rows + cols, so that a
 * stencil's arrays stay in cache): the number of nonzeros, the first and
 * the last row seen.  Because rows come in
 * order, the next nonzero of a diagonal closes the zero run since its last
 * one; the runs before the first and after the last nonzero are added at
 * the end.  O(nnz + rows + cols) time and memory, no rows x n_diag array.
 * Threads sweep contiguous row ranges with their own arrays, merged in
 * range order (a zero run may span ranges).
 *
 * Choices where the paper (seed 002) is silent or its text lost formulas;
 * Table 4 checked by hand:
 *  - delta = ceil(rows / Z): Table 4's deltas are rows/100 rounded UP
 *    (nemeth21: 9506 rows -> 96, Maxwell 2D512: 786432 -> 7865).
 *  - alpha = (1 - 1/K)/Z with K = n_diag and p_zero = 1 - nnz/(K*rows):
 *    Table 4 agrees (nemeth21: K 169 -> 0.009941, p_zero 0.269383).  Its
 *    s3dkt3m2, s3dkq4m2 and af_*_k101 rows match only with K and nnz of
 *    the stored lower triangle (K = (655+1)/2 = 328 -> alpha 0.009970,
 *    p_zero 0.936350): the authors analysed the symmetric files as stored.
 *    We analyse the matrix as it is (expanded).  kim2 (0.028261) matches
 *    neither reading.
 *  - Type I takes p_zero <= alpha, not the strict "<" of the paper's type
 *    list: section 3.4 calls (1 - 1/K)/Z the upper bound of p_zero for
 *    which DIA wins (the comparison sign itself was lost in the text), and
 *    "<" would send a pure diagonal matrix (K = 1, alpha = 0, p_zero = 0)
 *    and the 100 x 100 5-point Laplacian (p_zero = alpha = 0.008 exactly)
 *    to type III.  A relative 1e-12 absorbs rounding at such ties.  A
 *    matrix without nonzeros is type I.
 *  - Matrices without nonzeros: dia_fill = 1 (nothing padded),
 *    dense_diag_share = 1, p_offset = p_zero = 0; no rows: row stats 0. */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define DEFAULT_Z 100.0
#define DEFAULT_B 256
#define MIN_NNZ_PER_THREAD (1 << 20)
#define MAX_THREADS 16

const char *adia_matrix_type_name(adia_matrix_type t)
{
    switch (t) {
    case ADIA_TYPE_I: return "I";
    case ADIA_TYPE_II: return "II";
    case ADIA_TYPE_III: return "III";
    }
    return "?";
}

/* Per-diagonal state of one row range, indexed by o - omin. */
typedef struct diag_sweep {
    int32_t *count, *first, *last;
    int64_t long_inside;   /* long zero runs between two nonzeros of the range */
} diag_sweep;

static void sweep_free(diag_sweep *s)
{
    free(s->count);
    free(s->first);
    free(s->last);
}

static adia_status sweep_alloc(diag_sweep *s, size_t slots)
{
    /* zeroed by writing, not calloc: the sweep reads a count before it
     * writes it, so a calloc'd page was mapped to the zero page on the
     * read and copied on the write -- a second fault, and with several
     * threads a TLB shootdown to every core (18% of random:1000000,7's
     * analysis on 2 cores, perf) */
    s->count = adia__alloc(slots, sizeof *s->count, "analysis diagonal counts");
    if (s->count) memset(s->count, 0, slots * sizeof *s->count);
    s->first = adia__alloc(slots, sizeof *s->first, "analysis diagonal first rows");
    s->last = adia__alloc(slots, sizeof *s->last, "analysis diagonal last rows");
    s->long_inside = 0;
    if (s->count && s->first && s->last) return ADIA_OK;
    sweep_free(s);
    return ADIA_ERR_NO_MEMORY;
}

/* Rows r0..r1 (inclusive), all with row r0's offsets, into the state: as
 * row-by-row updates would leave it (consecutive rows leave no zero run). */
static inline void sweep_run(const adia_csr *a, int32_t r0, int32_t r1, int32_t B, int64_t omin,
                      diag_sweep *s)
{
    for (int64_t p = a->rowptr[r0]; p < a->rowptr[r0 + 1]; p++) {
        int64_t d = (int64_t)a->colind[p] - r0 - omin;
        if (s->count[d] == 0)
            s->first[d] = r0;
        else if (r0 - s->last[d] - 1 >= B)
            s->long_inside++;
        s->last[d] = r1;
        s->count[d] += r1 - r0 + 1;
    }
}

/* Rows of one pattern come in runs (a stencil's interior, a band): each
 * row is compared with its run's first, and the per-diagonal state is
 * written once a run (lap3d7:120 on 2 cores: the sweep took 60% of the
 * analysis, a read-modify-write of three arrays per nonzero; 23 -> 11 ms).
 * Where rows differ from their neighbours (an unstructured matrix), after
 * IRREGULAR_RUNS runs of one row the next rows go one at a time without
 * comparing, 64 at first, twice as many each time the rows after them
 * still differ (up to 65536), as few again once a run forms. */
#define IRREGULAR_RUNS 4
#define IRREGULAR_ROWS 64
#define IRREGULAR_MAX 65536
static void sweep_rows(const adia_csr *a, int32_t r0, int32_t r1, int32_t B, int64_t omin,
                       diag_sweep *s, uint8_t *repeat)
{
    int32_t run = r0, singles = 0, skip = IRREGULAR_ROWS;
    for (int32_t i = r0 + 1; i < r1; i++) {
        if (adia__csr_same_offsets(a, run, i)) {   /* so also row i - 1's */
            if (repeat) repeat[i] = 1;
            singles = 0;
            skip = IRREGULAR_ROWS;
            continue;
        }
        sweep_run(a, run, i - 1, B, omin, s);
        singles = run == i - 1 ? singles + 1 : 0;
        run = i;
        if (singles >= IRREGULAR_RUNS) {
            const int32_t end = r1 - i > skip ? i + skip : r1;
            for (; i < end - 1; i++) sweep_run(a, i, i, B, omin, s);
            run = i;   /* end - 1 starts a run again */
            singles = IRREGULAR_RUNS - 1;   /* one more single row: skip again, longer */
            skip = skip < IRREGULAR_MAX ? 2 * skip : skip;
        }
    }
    if (r0 < r1) sweep_run(a, run, r1 - 1, B, omin, s);
}

/* First row whose nonzeros start at or after target (rows balanced by nnz). */
static int32_t row_at_nnz(const adia_csr *a, int64_t target)
{
    int32_t lo = 0, hi = a->rows;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (a->rowptr[mid] < target) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Sweep with nt threads, then merge everything into s[0]. */
static adia_status sweep_all(const adia_csr *a, int32_t B, int64_t omin, size_t slots, int nt,
                             diag_sweep *s, uint8_t *repeat)
{
    adia_status st = ADIA_OK;
    for (int t = 0; t < nt && st == ADIA_OK; t++) {
        st = sweep_alloc(&s[t], slots);
        if (st != ADIA_OK)
            for (int u = 0; u < t; u++) sweep_free(&s[u]);
    }
    if (st != ADIA_OK) return st;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++)
        sweep_rows(a, row_at_nnz(a, a->nnz / nt * t),
                   t == nt - 1 ? a->rows : row_at_nnz(a, a->nnz / nt * (t + 1)), B, omin, &s[t],
                   repeat);
    int64_t long_join = 0;
#pragma omp parallel for reduction(+ : long_join) schedule(static) num_threads(adia__threads())
    for (int64_t d = 0; d < (int64_t)slots; d++)
        for (int t = 1; t < nt; t++) {
            if (s[t].count[d] == 0) continue;
            if (s[0].count[d] == 0) {
                s[0].first[d] = s[t].first[d];
            } else if (s[t].first[d] - s[0].last[d] - 1 >= B) {
                long_join++;
            }
            s[0].last[d] = s[t].last[d];
            s[0].count[d] += s[t].count[d];
        }
    for (int t = 1; t < nt; t++) {
        s[0].long_inside += s[t].long_inside;
        sweep_free(&s[t]);
    }
    s[0].long_inside += long_join;
    return ADIA_OK;
}

/* Table 1 diagonal features and labels from the merged sweep. */
static void diagonal_features(const adia_csr *a, const diag_sweep *s, int64_t omin, size_t slots,
                              int32_t B, adia_features *f)
{
    int64_t n_diag = 0, n_offset = 0, n_long = s->long_inside, n_scatter = 0;
    int64_t total_len = 0, dense_nnz = 0;
    int32_t lower = 0, upper = 0;
    for (size_t d = 0; d < slots; d++) {
        if (s->count[d] == 0) continue;
        int64_t o = (int64_t)d + omin;
        int64_t start = o < 0 ? -o : 0;                              /* first row */
        int64_t end = (a->cols - o < a->rows ? a->cols - o : a->rows); /* past last */
        int64_t len = end - start;
        n_diag++;
        n_offset += (double)llabs(o) > f->delta;
        n_scatter += s->count[d] == 1;
        n_long += (s->first[d] - start >= B) + (end - 1 - s->last[d] >= B);
        total_len += len;
        if (2 * (int64_t)s->count[d] >= len) dense_nnz += s->count[d];
        if (-o > lower) lower = (int32_t)-o;
        if (o > upper) upper = (int32_t)o;
    }
    f->n_diag = n_diag;
    f->n_offset = n_offset;
    f->n_long_zero = n_long;
    f->n_scatter = n_scatter;
    f->label_lz = n_long > 0;
    f->label_s = n_scatter > 0;
    f->dia_fill = total_len ? (double)a->nnz / (double)total_len : 1.0;
    f->dense_diag_share = a->nnz ? (double)dense_nnz / (double)a->nnz : 1.0;
    f->lower_bandwidth = lower;
    f->upper_bandwidth = upper;
}

static void row_features(const adia_csr *a, adia_features *f)
{
    int64_t mn = INT64_MAX, mx = 0, empty = 0;
    double mean = a->rows ? (double)a->nnz / a->rows : 0, ss = 0;
#pragma omp parallel for reduction(min : mn) reduction(max : mx) reduction(+ : empty, ss) num_threads(adia__threads())
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t len = a->rowptr[i + 1] - a->rowptr[i];
        if (len < mn) mn = len;
        if (len > mx) mx = len;
        empty += len == 0;
        ss += (len - mean) * (len - mean);
    }
    f->row_min = a->rows ? (int32_t)mn : 0;
    f->row_max = (int32_t)mx;  /* a row holds at most cols < 2^31 entries */
    f->row_mean = mean;
    f->row_var = a->rows ? ss / a->rows : 0;
    f->empty_rows = (int32_t)empty;
}

static void value_features(const adia_csr *a, adia_features *f)
{
    const double *v = a->values;
    int64_t nan = 0, inf = 0;
#pragma omp parallel for reduction(+ : nan, inf) num_threads(adia__threads())
    for (int64_t p = 0; p < a->nnz; p++) {
        nan += isnan(v[p]) != 0;
        inf += isinf(v[p]) != 0;
    }
    f->nan_count = nan;
    f->inf_count = inf;
}

/* The search engine (paper Fig. 3) on the Table 1 symbols. */
static void choose_type(adia_features *f)
{
    if (f->n_offset == 0 && f->p_zero <= f->alpha * (1 + 1e-12))
        f->type = ADIA_TYPE_I;
    else if (f->n_offset > 0 && !f->label_lz && !f->label_s)
        f->type = ADIA_TYPE_II;
    else
        f->type = ADIA_TYPE_III;
    const char *fmt = f->type == ADIA_TYPE_I ? "dia" : f->type == ADIA_TYPE_II ? "brcsd1" : "brcsd2";
    snprintf(f->format, sizeof f->format, "%s", fmt);
}

static int sweep_threads(int64_t nnz)
{
    int64_t nt = nnz / MIN_NNZ_PER_THREAD;
    int max = adia__threads();
    if (nt > max) nt = max;
    if (nt > MAX_THREADS) nt = MAX_THREADS;
    return nt < 1 ? 1 : (int)nt;
}

int64_t adia__analyze_peak_bytes(int32_t rows, int32_t cols, int64_t nnz)
{
    int64_t slots = (int64_t)rows + cols;
    return adia_sat_mul(adia_sat_mul(slots, 3 * sizeof(int32_t)), sweep_threads(nnz));
}

adia_status adia__analyze_check_budget(const adia_csr *a, const char *func)
{
    char what[160];
    snprintf(what, sizeof what, "%s: the analysis of a %" PRId32 " x %" PRId32 " matrix (%d "
             "thread(s) x %" PRId64 " diagonal slots of 12 bytes)", func, a->rows, a->cols,
             sweep_threads(a->nnz), (int64_t)a->rows + a->cols);
    return adia__budget_check(adia__analyze_peak_bytes(a->rows, a->cols, a->nnz), what);
}

adia_status adia_matrix_analyze(const adia_matrix *A, const adia_search_params *p,
                                adia_features *f)
{
    return adia__analyze_rows(A, p, f, NULL);
}

adia_status adia__analyze_rows(const adia_matrix *A, const adia_search_params *p,
                               adia_features *f, uint8_t *repeat)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_analyze"));
    if (!f) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_analyze: features is NULL");
    const adia_csr *a = &A->csr;
    double Z = p && p->Z > 0 ? p->Z : DEFAULT_Z;
    int32_t B = p && p->B > 0 ? p->B : DEFAULT_B;
    memset(f, 0, sizeof *f);
    f->rows = a->rows;
    f->cols = a->cols;
    f->nnz = a->nnz;
    f->delta = ceil(a->rows / Z);

    ADIA_TRY(adia__analyze_check_budget(a, "adia_matrix_analyze"));
    diag_sweep s[MAX_THREADS];
    int64_t omin, omax;
    adia__csr_offset_range(a, &omin, &omax);
    const size_t slots = (size_t)(omax - omin + 1);   /* at most rows + cols - 1 */
    ADIA_TRY(sweep_all(a, B, omin, slots, sweep_threads(a->nnz), s, repeat));
    diagonal_features(a, &s[0], omin, slots, B, f);
    sweep_free(&s[0]);
    row_features(a, f);
    value_features(a, f);

    if (!adia_mul_i64(f->n_diag, a->rows, &f->n_elem))
        return adia__error(ADIA_ERR_OVERFLOW, "adia_matrix_analyze: n_diag %" PRId64
                          " x rows %" PRId32 " overflows", f->n_diag, a->rows);
    f->n_zero = f->n_elem - a->nnz;
    f->p_zero = f->n_elem ? (double)f->n_zero / (double)f->n_elem : 0;
    f->p_offset = f->n_diag ? (double)f->n_offset / (double)f->n_diag : 0;
    f->alpha = p && p->alpha > 0 ? p->alpha
               : f->n_diag ? (1.0 - 1.0 / (double)f->n_diag) / Z : 0;
    choose_type(f);
    return ADIA_OK;
}
