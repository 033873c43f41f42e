/* adia__gen_random.c -- unstructured matrices, the inputs where diagonal formats
 * must not be chosen and CSR kernels are compared with cuSPARSE:
 *
 *   random:N,AVG        row lengths uniform in 1 .. 2*AVG-1 (mean AVG)
 *   powerlaw:N,MIN,MAX  row lengths ceil(MIN/u), u uniform in (0,1], capped
 *                       at MAX: P(length > L) = MIN/L, a heavy tail of long
 *                       rows as in web and social graphs
 *
 * Columns of a row of length L: [0, N) cut into L equal strata, one column
 * drawn uniformly in each, the stratum holding i replaced by i itself --
 * distinct, sorted and spread over the whole row without any scratch
 * space, so each row is computed from (seed, i) alone like every other
 * generator.  Values random in [-1, 1), diagonal = sum |off-diagonal| + 1. */
#include "gen.h"

#include <inttypes.h>
#include <math.h>

typedef struct random_rows {
    int64_t n;
    int64_t lo, hi;      /* random: lengths lo..hi; powerlaw: MIN, MAX */
    int power;
} random_rows;

static int32_t row_length(const random_rows *r, gen_rng *rng)
{
    int64_t len;
    if (r->power) {
        double u = 1.0 - adia__gen_rng_unit(rng);            /* (0, 1] */
        double l = ceil((double)r->lo / u);
        len = l > (double)r->hi ? r->hi : (int64_t)l;
    } else {
        len = r->lo + (int64_t)adia__gen_rng_below(rng, (uint64_t)(r->hi - r->lo + 1));
    }
    return (int32_t)(len < r->n ? len : r->n);
}

static int32_t random_row(const gen_rows *g, int32_t i, int32_t *col, double *val)
{
    const random_rows *r = g->ctx;
    gen_rng rng = adia__gen_rng_init(g->seed, (uint64_t)i);
    int32_t len = row_length(r, &rng);
    if (!col) return len;
    double sum = 0;
    int32_t center = -1;
    for (int32_t k = 0; k < len; k++) {
        int64_t lo = r->n * k / len, hi = r->n * (k + 1) / len;   /* stratum [lo, hi) */
        if (i >= lo && i < hi) {
            col[k] = i;
            center = k;
            continue;
        }
        col[k] = (int32_t)(lo + (int64_t)adia__gen_rng_below(&rng, (uint64_t)(hi - lo)));
        val[k] = 2 * adia__gen_rng_unit(&rng) - 1;
        sum += fabs(val[k]);
    }
    if (center >= 0) val[center] = sum + 1;
    return len;
}

static adia_status random_build(const gen_args *a, random_rows *r, adia_matrix **out)
{
    if (r->hi > r->n) r->hi = r->n;
    if (r->n * r->hi > GEN_MAX_NNZ)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": N x longest row = %" PRId64 " x %" PRId64
                          " exceeds the 2^36 possible nonzeros a generator builds", a->spec, r->n,
                          r->hi);
    /* row lengths are random: only their least is known (lo, at most n) */
    gen_rows g = {.rows = (int32_t)r->n, .cols = (int32_t)r->n, .max_row = (int32_t)r->hi,
                  .row = random_row, .min_row = (int32_t)(r->lo < r->n ? r->lo : r->n),
                  .ctx = r, .seed = a->seed};
    return adia__gen_build(&g, a, out);
}

adia_status adia__gen_random(const gen_args *a, adia_matrix **out)
{
    random_rows r = {.n = a->num[0], .lo = 1, .hi = 2 * a->num[1] - 1};
    return random_build(a, &r, out);
}

adia_status adia__gen_powerlaw(const gen_args *a, adia_matrix **out)
{
    random_rows r = {.n = a->num[0], .lo = a->num[1], .hi = a->num[2], .power = 1};
    if (r.lo > r.hi)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": MIN = %" PRId64 " is larger than MAX = %" PRId64,
                          a->spec, r.lo, r.hi);
    return random_build(a, &r, out);
}
