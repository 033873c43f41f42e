/* adia__gen_build.c -- the two-pass CSR builder behind every generator, and the
 * seeded random numbers. */
#include "gen.h"

#include <inttypes.h>

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

gen_rng adia__gen_rng_init(uint64_t seed, uint64_t stream)
{
    gen_rng r = {splitmix64(seed ^ splitmix64(stream))};
    if (r.s == 0) r.s = 0x9e3779b97f4a7c15ull;  /* xorshift must not be 0 */
    return r;
}

uint64_t adia__gen_rng_next(gen_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dull;
}

double adia__gen_rng_unit(gen_rng *r)
{
    return (double)(adia__gen_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t adia__gen_rng_below(gen_rng *r, uint64_t n)
{
    return adia__gen_rng_next(r) % n;  /* bias < n / 2^64: irrelevant here */
}

/* The builder's peak: the row lengths beside the CSR result.  Checked twice:
 * before counting (the row arrays alone, as nnz is not known yet) and with
 * the counted nonzeros, before the CSR is allocated. */
static adia_status check_budget(const gen_rows *g, const char *name, int64_t nnz)
{
    int64_t rows1 = (int64_t)g->rows + 1;
    int64_t peak = adia_sat_add(adia_sat_mul(rows1, 16), adia_sat_mul(nnz, 12));
    char what[200], count[48] = "";
    if (nnz > 0) snprintf(count, sizeof count, ", %" PRId64 " nonzeros", nnz);
    snprintf(what, sizeof what, "generating %s (%" PRId32 " x %" PRId32 "%s)", name, g->rows,
             g->cols, count);
    return adia_budget_check(peak, what);
}

adia_status adia__gen_build(const gen_rows *g, const char *name, adia_matrix **out)
{
    ADIA_TRY(check_budget(g, name, 0));
    int64_t *len = adia_alloc((size_t)g->rows + 1, sizeof *len, "generator row lengths");
    if (!len) return ADIA_ERR_NO_MEMORY;
    len[0] = 0;
#pragma omp parallel for schedule(static) num_threads(adia__threads())
    for (int32_t i = 0; i < g->rows; i++) len[i + 1] = g->row(g, i, NULL, NULL);
    for (int32_t i = 0; i < g->rows; i++) len[i + 1] += len[i];  /* <= 2^31 * 2^31 */

    adia_csr c;
    adia_status s = check_budget(g, name, len[g->rows]);
    if (s == ADIA_OK) s = adia_csr_alloc(&c, g->rows, g->cols, len[g->rows], ADIA_DOUBLE);
    if (s != ADIA_OK) {
        free(len);
        return s;
    }
    memcpy(c.rowptr, len, ((size_t)g->rows + 1) * sizeof *len);
    free(len);
    double *val = c.values;
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) num_threads(adia__threads())
    for (int32_t i = 0; i < g->rows; i++) {
        int64_t p = c.rowptr[i];
        bad |= g->row(g, i, c.colind + p, val + p) != c.rowptr[i + 1] - p;
    }
    if (bad) {
        adia_csr_free(&c);
        return adia_error(ADIA_ERR_INTERNAL, "generator %s: row lengths differ between passes", name);
    }
    adia_matrix *A = NULL;
    ADIA_TRY(adia_matrix_wrap(&c, &A));
    s = adia_matrix_set_name(A, name);
    if (s != ADIA_OK) {
        adia_matrix_destroy(A);
        return s;
    }
    *out = A;
    return ADIA_OK;
}
