/* gen_diag.c -- matrices given by a list of diagonals: band, bandh, bandr,
 * randdiag and type3.  Each diagonal is full, periodic (runs of nonzeros separated by
 * long zero runs), full but for a few holes, or a single entry; values are random with a dominant
 * main diagonal (sum of |off-diagonal| + 1), so every matrix is
 * nonsingular. */
#include "gen.h"

#include <inttypes.h>
#include <math.h>

/* Zero runs of type3 diagonals by default: 4 row blocks of the default
 * B = 256, so that they stay long zero sections for any B up to 1024. */
#define TYPE3_ZERO_RUN 1024
#define TYPE3_SCATTER 3

typedef struct diag_pattern {
    int32_t off;
    int32_t period;   /* 0: full (or single) */
    int32_t nzrun;    /* positions p with (p + phase) % period < nzrun */
    int32_t phase;
    int32_t single;   /* >= 0: only position `single` is nonzero */
    int32_t nholes;   /* > 0: full but for positions [hole[2h], hole[2h] + hole[2h+1]) */
    const int32_t *hole;
} diag_pattern;

typedef struct diag_list {
    int32_t n, k;
    diag_pattern *d;  /* sorted by offset, offset 0 present */
    int sym;          /* values symmetric: A(i,j) from the pair {i, j}, not the row */
    int32_t *holes;   /* the holes of every diagonal (bandr), NULL or owned */
} diag_list;

static int diag_has(const diag_pattern *d, int32_t p)
{
    if (d->single >= 0) return p == d->single;
    for (int32_t h = 0; h < d->nholes; h++)
        if (p >= d->hole[2 * h] && p - d->hole[2 * h] < d->hole[2 * h + 1]) return 0;
    if (d->period == 0) return 1;
    return (int32_t)(((int64_t)p + d->phase) % d->period) < d->nzrun;
}

/* The random number of the pair {lo, hi} (lo < hi): A(i,j) = A(j,i). */
static double pair_unit(uint64_t seed, int32_t lo, int32_t hi)
{
    gen_rng r = adia__gen_rng_init(seed, (uint64_t)lo << 32 | (uint64_t)hi);
    return adia__gen_rng_unit(&r);
}

static int32_t diag_row(const gen_rows *g, int32_t i, int32_t *col, double *val)
{
    const diag_list *L = g->ctx;
    gen_rng rng = adia__gen_rng_init(g->seed, (uint64_t)i);
    int32_t k = 0, center = -1;
    double sum = 0;
    for (int32_t q = 0; q < L->k; q++) {
        int64_t j = (int64_t)i + L->d[q].off;
        if (j < 0 || j >= L->n) continue;
        int32_t p = (int32_t)(j < i ? j : i);  /* position along the diagonal */
        if (!diag_has(&L->d[q], p)) continue;
        if (col) {
            col[k] = (int32_t)j;
            if (j == i) {
                center = k;
            } else {
                val[k] = 2 * (L->sym ? pair_unit(g->seed, p, (int32_t)(j < i ? i : j))
                                     : adia__gen_rng_unit(&rng)) - 1;
                sum += fabs(val[k]);
            }
        }
        k++;
    }
    if (col && center >= 0) val[center] = sum + 1;
    return k;
}

/* Positions p in [0, x) of diagonal d that hold an entry. */
static int64_t positions_below(const diag_pattern *d, int64_t x)
{
    if (x <= 0) return 0;
    if (d->single >= 0) return d->single < x;
    if (d->nholes > 0) {
        int64_t in = x;
        for (int32_t h = 0; h < d->nholes; h++) {   /* less the holes' parts below x */
            int64_t lo = d->hole[2 * h], hi = lo + d->hole[2 * h + 1];
            in -= (hi < x ? hi : x) - lo > 0 ? (hi < x ? hi : x) - lo : 0;
        }
        return in;
    }
    if (d->period == 0) return x;
    /* #{q in [0, y): q % period < nzrun}, shifted by the phase */
    int64_t per = d->period, run = d->nzrun, y = x + d->phase, ph = d->phase;
    int64_t upto_y = y / per * run + (y % per < run ? y % per : run);
    int64_t upto_ph = ph / per * run + (ph % per < run ? ph % per : run);
    return upto_y - upto_ph;
}

/* Nonzeros of rows [first, first + rows), diagonal by diagonal: row i
 * holds diagonal o when 0 <= i + o < n and position min(i, i + o) does. */
static int64_t diag_count(const gen_rows *g, int32_t first, int32_t rows)
{
    const diag_list *L = g->ctx;
    int64_t nnz = 0;
    for (int32_t q = 0; q < L->k; q++) {
        int64_t o = L->d[q].off;
        int64_t lo = first, hi = (int64_t)first + rows;        /* rows i in [lo, hi) */
        if (lo < -o) lo = -o;
        if (hi > L->n - o) hi = L->n - o;
        if (hi <= lo) continue;
        int64_t shift = o < 0 ? o : 0;                          /* p = i + min(0, o) */
        nnz += positions_below(&L->d[q], hi + shift) - positions_below(&L->d[q], lo + shift);
    }
    return nnz;
}

static int cmp_pattern(const void *a, const void *b)
{
    int32_t x = ((const diag_pattern *)a)->off, y = ((const diag_pattern *)b)->off;
    return (x > y) - (x < y);
}

/* |offset| ascending, then +o before -o: "the first of +-o" is +o. */
static int cmp_abs_offset(const void *a, const void *b)
{
    int32_t x = ((const diag_pattern *)a)->off, y = ((const diag_pattern *)b)->off;
    if (abs(x) != abs(y)) return (abs(x) > abs(y)) - (abs(x) < abs(y));
    return (x < y) - (x > y);
}

/* The symmetric variant: every offset o (first of +-o wins) at both +o and
 * -o with the same pattern -- positions along a diagonal are min(i, j), so
 * (i, j) and (j, i) share their zero sections -- in a list of up to 2k. */
static adia_status mirror(diag_list *L)
{
    diag_pattern *d = adia__alloc((size_t)L->k * 2, sizeof *d, "generator diagonals");
    if (!d) return ADIA_ERR_NO_MEMORY;
    qsort(L->d, (size_t)L->k, sizeof *L->d, cmp_abs_offset);
    int32_t k = 0;
    for (int32_t q = 0; q < L->k; q++) {
        if (q > 0 && abs(L->d[q].off) == abs(L->d[q - 1].off)) continue;
        d[k++] = L->d[q];
        if (L->d[q].off == 0) continue;
        d[k] = L->d[q];
        d[k++].off = -L->d[q].off;
    }
    free(L->d);
    L->d = d;
    L->k = k;
    L->sym = 1;
    return ADIA_OK;
}

static adia_status diag_build(const gen_args *a, diag_list *L, adia_matrix **out)
{
    if (a->sym) {
        adia_status s = mirror(L);
        if (s != ADIA_OK) {
            free(L->d);
            free(L->holes);
            return s;
        }
    }
    qsort(L->d, (size_t)L->k, sizeof *L->d, cmp_pattern);
    gen_rows g = {.rows = L->n, .cols = L->n, .max_row = L->k, .row = diag_row,
                  .count = diag_count, .min_row = 1, .ctx = L, .seed = a->seed};
    adia_status s = adia__gen_build(&g, a, out);
    free(L->d);
    free(L->holes);
    return s;
}

static adia_status diag_alloc(const gen_args *a, diag_list *L, int32_t n, int64_t k)
{
    if (n * k > GEN_MAX_NNZ)  /* both < 2^32 */
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": up to %" PRId32 " x %" PRId64
                          " nonzeros, more than the 2^36 a generator builds", a->spec, n, k);
    L->n = n;
    L->k = (int32_t)k;
    L->sym = 0;
    L->holes = NULL;
    L->d = adia__alloc((size_t)k, sizeof *L->d, "generator diagonals");
    if (!L->d) return ADIA_ERR_NO_MEMORY;
    for (int64_t q = 0; q < k; q++)
        L->d[q] = (diag_pattern){.off = 0, .period = 0, .single = -1};
    return ADIA_OK;
}

/* Floyd's sampling of k distinct integers from [0, m) (k <= m), written
 * to out in no particular order; a bitmap marks those taken. */
static adia_status sample_distinct(gen_rng *rng, int64_t m, int64_t k, int64_t *out)
{
    uint8_t *taken = adia__calloc((size_t)(m / 8 + 1), 1, "generator offset bitmap");
    if (!taken) return ADIA_ERR_NO_MEMORY;
    for (int64_t j = m - k, q = 0; j < m; j++, q++) {
        int64_t t = (int64_t)adia__gen_rng_below(rng, (uint64_t)j + 1);
        if (taken[t / 8] & (1u << (t % 8))) t = j;
        taken[t / 8] |= (uint8_t)(1u << (t % 8));
        out[q] = t;
    }
    free(taken);
    return ADIA_OK;
}

/* Put k random distinct offsets with lo <= |o| <= hi (both signs) into d. */
static adia_status pick_offsets(gen_rng *rng, int64_t lo, int64_t hi, int64_t k,
                                diag_pattern *d)
{
    if (k == 0) return ADIA_OK;
    int64_t width = hi - lo + 1, *idx = adia__alloc((size_t)k, sizeof *idx, "generator offsets");
    if (!idx) return ADIA_ERR_NO_MEMORY;
    adia_status s = sample_distinct(rng, 2 * width, k, idx);
    for (int64_t q = 0; s == ADIA_OK && q < k; q++)
        d[q].off = (int32_t)(idx[q] < width ? -(lo + idx[q]) : lo + idx[q] - width);
    free(idx);
    return s;
}

adia_status adia__gen_band(const gen_args *a, adia_matrix **out)
{
    int64_t n = a->num[0], bw = a->num[1];
    if (bw >= n)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": BW = %" PRId64 " must be less than N = %" PRId64,
                          a->spec, bw, n);
    diag_list L;
    ADIA_TRY(diag_alloc(a, &L, (int32_t)n, 2 * bw + 1));
    for (int64_t q = 0; q < L.k; q++) L.d[q].off = (int32_t)(q - bw);
    return diag_build(a, &L, out);
}

adia_status adia__gen_randdiag(const gen_args *a, adia_matrix **out)
{
    int64_t n = a->num[0], k = a->num[1];
    int64_t spread = a->num[2] < n - 1 ? a->num[2] : n - 1;
    if (k > 2 * spread + 1)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": K = %" PRId64 " is more than the %" PRId64
                          " diagonals with |offset| <= %" PRId64,
                          a->spec, k, 2 * spread + 1, spread);
    diag_list L;
    ADIA_TRY(diag_alloc(a, &L, (int32_t)n, k));
    gen_rng rng = adia__gen_rng_init(a->seed, UINT64_MAX);
    adia_status s = pick_offsets(&rng, 1, spread, k - 1, L.d + 1);  /* d[0]: main */
    if (s != ADIA_OK) {
        free(L.d);
        return s;
    }
    return diag_build(a, &L, out);
}

/* type3 layout: the full main diagonal; (K-1)/2 "near" diagonals with
 * 1 <= |o| <= N/64 and the rest "far" with N/8 <= |o| <= N/2, all broken
 * into runs of nonzeros separated by zero runs of TYPE3_ZERO_RUN rows; and
 * TYPE3_SCATTER scatter points in the corners (offsets +-(N-2), N-3: short
 * diagonals, so they hardly change the fill). */
static adia_status type3_offsets(const gen_args *a, gen_rng *rng, diag_list *L)
{
    int64_t n = L->n, others = L->k - 1 - TYPE3_SCATTER;
    int64_t near = others / 2, far = others - near;
    int64_t near_hi = n / 64, far_lo = n / 8, far_hi = n / 2;
    if (near > 2 * near_hi || far > 2 * (far_hi - far_lo + 1))
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": K = %" PRId64 " diagonals do not fit: at most %"
                          PRId64 " near (|o| <= N/64) and %" PRId64 " far (N/8 <= |o| <= N/2)",
                          a->spec, a->num[1], 2 * near_hi, 2 * (far_hi - far_lo + 1));
    diag_pattern *d = L->d + 1;  /* d[0]: main */
    ADIA_TRY(pick_offsets(rng, 1, near_hi, near, d));
    ADIA_TRY(pick_offsets(rng, far_lo, far_hi, far, d + near));
    int32_t corner[TYPE3_SCATTER] = {(int32_t)(n - 2), (int32_t)(2 - n), (int32_t)(n - 3)};
    for (int q = 0; q < TYPE3_SCATTER; q++) {
        diag_pattern *c = &d[others + q];
        c->off = corner[q];
        c->single = (int32_t)adia__gen_rng_below(rng, (uint64_t)(n - abs(corner[q])));
    }
    return ADIA_OK;
}

/* Periodic pattern giving the non-main diagonals fill f so that the whole
 * matrix has DIA fill about `fill`, with zero runs of zrun rows. */
static adia_status type3_patterns(const gen_args *a, gen_rng *rng, diag_list *L, double fill,
                                  int64_t zrun)
{
    double len_other = 0, len_all = 0;
    for (int32_t q = 0; q < L->k; q++) {
        double len = L->n - fabs((double)L->d[q].off);
        len_all += len;
        if (L->d[q].off != 0 && L->d[q].single < 0) len_other += len;
    }
    double f = len_other > 0 ? (fill * len_all - L->n - TYPE3_SCATTER) / len_other : 1;
    if (f <= 0)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": FILL = %g is below %.4f, the fill of the full main"
                          " diagonal alone", a->spec, fill, (L->n + TYPE3_SCATTER) / len_all);
    for (int32_t q = 0; q < L->k; q++) {
        diag_pattern *d = &L->d[q];
        if (d->off == 0 || d->single >= 0 || f >= 1) continue;
        double run = round((double)zrun * f / (1 - f));
        d->nzrun = run < 1 ? 1 : run > INT32_MAX / 2 ? INT32_MAX / 2 : (int32_t)run;
        d->period = d->nzrun + (int32_t)zrun;
        d->phase = (int32_t)adia__gen_rng_below(rng, (uint64_t)d->period);
    }
    return ADIA_OK;
}

adia_status adia__gen_type3(const gen_args *a, adia_matrix **out)
{
    int64_t n = a->num[0], k = a->num[1], zrun = a->count > 3 ? a->num[3] : TYPE3_ZERO_RUN;
    double fill = a->real;
    if (n < 8 * zrun)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": type3 needs N >= %" PRId64 " so that zero "
                          "sections of %" PRId64 " rows fit", a->spec, 8 * zrun, zrun);
    if (k < 3)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": type3 needs K >= 3 (main, near and far diagonals)",
                          a->spec);
    if (!(fill > 0 && fill <= 1))
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": FILL = %g must be in (0, 1]", a->spec, fill);
    diag_list L;
    ADIA_TRY(diag_alloc(a, &L, (int32_t)n, k + TYPE3_SCATTER));
    gen_rng rng = adia__gen_rng_init(a->seed, UINT64_MAX - 1);
    adia_status s = type3_offsets(a, &rng, &L);
    if (s == ADIA_OK) s = type3_patterns(a, &rng, &L, fill, zrun);
    if (s != ADIA_OK) {
        free(L.d);
        return s;
    }
    return diag_build(a, &L, out);
}

/* bandh layout: the band -BW..BW, each off-diagonal present in runs of HOLE
 * rows separated by holes of HOLE rows (random phase per diagonal), and
 * SCAT single entries on random far diagonals, N/4 <= |o| <= N/2: a wide
 * band whose pieces keep different offset lists, plus scatter points no
 * band format should pad for. */
adia_status adia__gen_bandh(const gen_args *a, adia_matrix **out)
{
    int64_t n = a->num[0], bw = a->num[1], hole = a->num[2], scat = a->num[3];
    if (bw >= n / 4 || hole > n || scat > n / 4)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": bandh needs BW < N/4 (the scatter points lie "
                          "beyond N/4), HOLE <= N and SCAT <= N/4 (N = %" PRId64 ")", a->spec, n);
    diag_list L;
    ADIA_TRY(diag_alloc(a, &L, (int32_t)n, 2 * bw + 1 + scat));
    gen_rng rng = adia__gen_rng_init(a->seed, UINT64_MAX - 2);
    for (int64_t q = 0; q <= 2 * bw; q++) {
        diag_pattern *d = &L.d[q];
        d->off = (int32_t)(q - bw);
        if (d->off == 0) continue;
        d->nzrun = (int32_t)hole;
        d->period = (int32_t)(2 * hole);
        d->phase = (int32_t)adia__gen_rng_below(&rng, (uint64_t)d->period);
    }
    diag_pattern *far = L.d + 2 * bw + 1;
    adia_status s = pick_offsets(&rng, n / 4, n / 2, scat, far);
    for (int64_t q = 0; s == ADIA_OK && q < scat; q++)
        far[q].single = (int32_t)adia__gen_rng_below(&rng, (uint64_t)(n - abs(far[q].off)));
    if (s != ADIA_OK) {
        free(L.d);
        return s;
    }
    return diag_build(a, &L, out);
}

/* bandr: most holes per diagonal; each diagonal draws 1..BANDR_HOLES. */
#define BANDR_HOLES 8

/* n - 1 sorted uniform cuts of [0, total] into the n parts part[0..n). */
static void random_parts(gen_rng *rng, int64_t total, int n, int64_t *part)
{
    int64_t cut[BANDR_HOLES + 1];
    for (int j = 0; j < n - 1; j++) {
        int64_t c = (int64_t)adia__gen_rng_below(rng, (uint64_t)total + 1), at = j;
        while (at > 0 && cut[at - 1] > c) {   /* insertion: at most 8 cuts */
            cut[at] = cut[at - 1];
            at--;
        }
        cut[at] = c;
    }
    for (int j = 0; j < n; j++) part[j] = (j < n - 1 ? cut[j] : total) - (j > 0 ? cut[j - 1] : 0);
}

/* The holes of a diagonal of len positions keeping round(fill len) of
 * them: h holes (1..BANDR_HOLES, at most the positions to drop) of random
 * lengths >= 1 summing to the drop, placed between h + 1 random runs of
 * kept positions, into hole[0..2h) as (start, length). */
static void bandr_holes(gen_rng *rng, int64_t len, double fill, diag_pattern *d, int32_t *hole)
{
    int64_t drop = len - llround(fill * (double)len);
    d->nholes = 0;
    if (drop <= 0) return;
    int64_t h = 1 + (int64_t)adia__gen_rng_below(rng, BANDR_HOLES);
    if (h > drop) h = drop;
    int64_t size[BANDR_HOLES], gap[BANDR_HOLES + 1];
    random_parts(rng, drop - h, (int)h, size);   /* + 1 each below */
    random_parts(rng, len - drop, (int)h + 1, gap);
    int64_t at = 0;
    for (int64_t j = 0; j < h; j++) {
        at += gap[j];
        hole[2 * j] = (int32_t)at;
        hole[2 * j + 1] = (int32_t)(size[j] + 1);
        at += size[j] + 1;
    }
    d->nholes = (int32_t)h;
    d->hole = hole;
}

/* bandr layout: the band -K..K, the main diagonal full, each off-diagonal
 * with holes at random positions of random lengths keeping FILL of it
 * (rounded per diagonal): the wide band with holes of issue 32, where
 * row blocks keep different offset lists at any block size. */
adia_status adia__gen_bandr(const gen_args *a, adia_matrix **out)
{
    int64_t n = a->num[0], bw = a->num[1];
    double fill = a->real;
    if (bw >= n)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": K = %" PRId64
                          " must be less than N = %" PRId64, a->spec, bw, n);
    if (!(fill > 0 && fill <= 1))
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": FILL = %g must be in (0, 1]", a->spec, fill);
    diag_list L;
    ADIA_TRY(diag_alloc(a, &L, (int32_t)n, 2 * bw + 1));
    L.holes = adia__alloc((size_t)L.k * 2 * BANDR_HOLES, sizeof *L.holes, "generator holes");
    if (!L.holes) {
        free(L.d);
        return ADIA_ERR_NO_MEMORY;
    }
    gen_rng rng = adia__gen_rng_init(a->seed, UINT64_MAX - 3);
    for (int64_t q = 0; q <= 2 * bw; q++) {
        diag_pattern *d = &L.d[q];
        d->off = (int32_t)(q - bw);
        if (d->off != 0)
            bandr_holes(&rng, n - llabs(q - bw), fill, d, L.holes + q * 2 * BANDR_HOLES);
    }
    return diag_build(a, &L, out);
}
