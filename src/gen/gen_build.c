/* gen_build.c -- the two-pass CSR builder behind every generator (all rows,
 * or one block of rows: what a process of a distributed run holds), and the
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

/* The builder's peak: the row lengths beside the CSR result.  Checked
 * twice: before any row is visited, with the nonzeros known from the spec
 * (exact, or at least; *known < 0: none), and with the counted nonzeros,
 * before the CSR is allocated.  A spec whose matrix cannot fit is refused
 * at once, not after a counting pass over every row (type3 of 10^8 rows:
 * 5.8 s and 848 MB of row lengths before "needs 16.3 GB"). */
static adia_status check_budget(const gen_rows *g, int32_t rows, const char *name, int64_t nnz,
                                int at_least)
{
    int64_t rows1 = (int64_t)rows + 1;
    int64_t peak = adia_sat_add(adia_sat_mul(rows1, 16), adia_sat_mul(nnz, 12));
    char what[200], count[64] = "";
    if (nnz > 0)
        snprintf(count, sizeof count, ", %s%" PRId64 " nonzeros", at_least ? "at least " : "", nnz);
    snprintf(what, sizeof what, "generating %s (%" PRId32 " x %" PRId32 "%s)", name, rows,
             g->cols, count);
    return adia__budget_check(peak, what);
}

/* The nonzeros of rows [first, first + rows) known before counting:
 * *exact = 1 when g->count says, else the lower bound rows x min_row. */
static int64_t known_nnz(const gen_rows *g, int32_t first, int32_t rows, int *exact)
{
    int64_t n = g->count ? g->count(g, first, rows) : -1;
    *exact = n >= 0;
    return n >= 0 ? n : adia_sat_mul(rows, g->min_row > 0 ? g->min_row : 0);
}

/* The rows asked for, inside the matrix. */
static adia_status row_range(const gen_rows *g, const gen_args *a, int32_t *first, int32_t *rows)
{
    int64_t f = a->row_count < 0 ? 0 : a->row_first;
    int64_t n = a->row_count < 0 ? g->rows : a->row_count;
    if (f < 0 || n > g->rows || f > g->rows - n)
        return adia__error(ADIA_ERR_DIMENSION, "generator spec \"%s\": rows %" PRId64 "..%" PRId64
                          " asked for, the matrix has rows 0..%" PRId32, a->spec, f, f + n - 1,
                          g->rows - 1);
    *first = (int32_t)f;
    *rows = (int32_t)n;
    return ADIA_OK;
}

/* Fill the CSR arrays of rows first.. of g into c (row pointers set). */
static adia_status fill_rows(const gen_rows *g, int32_t first, adia_csr *c, const char *name)
{
    double *val = c->values;
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) num_threads(adia__threads())
    for (int32_t i = 0; i < c->rows; i++) {
        int64_t p = c->rowptr[i];
        bad |= g->row(g, first + i, c->colind + p, val + p) != c->rowptr[i + 1] - p;
    }
    if (bad) return adia__error(ADIA_ERR_INTERNAL, "generator %s: row lengths differ between passes",
                               name);
    return ADIA_OK;
}

adia_status adia__gen_build(const gen_rows *g, const gen_args *a, adia_matrix **out)
{
    const char *name = a->spec;
    if (a->rows_out) *a->rows_out = g->rows;
    if (a->cols_out) *a->cols_out = g->cols;
    if (!out) return ADIA_OK;
    int32_t first, rows;
    ADIA_TRY(row_range(g, a, &first, &rows));
    int exact;
    int64_t known = known_nnz(g, first, rows, &exact);
    ADIA_TRY(check_budget(g, rows, name, known, !exact));
    int64_t *len = adia__alloc((size_t)rows + 1, sizeof *len, "generator row lengths");
    if (!len) return ADIA_ERR_NO_MEMORY;
    len[0] = 0;
#pragma omp parallel for schedule(static) num_threads(adia__threads())
    for (int32_t i = 0; i < rows; i++) len[i + 1] = g->row(g, first + i, NULL, NULL);
    for (int32_t i = 0; i < rows; i++) len[i + 1] += len[i];  /* <= 2^31 * 2^31 */

    adia_csr c;
    adia_status s = check_budget(g, rows, name, len[rows], 0);
    if (s == ADIA_OK && (exact ? len[rows] != known : len[rows] < known))
        s = adia__error(ADIA_ERR_INTERNAL, "generator %s: %" PRId64 " nonzeros counted, %s%"
                       PRId64 " predicted from the spec", name, len[rows],
                       exact ? "" : "at least ", known);
    if (s == ADIA_OK) s = adia__csr_alloc(&c, rows, g->cols, len[rows], ADIA_DOUBLE);
    if (s != ADIA_OK) {
        free(len);
        return s;
    }
    memcpy(c.rowptr, len, ((size_t)rows + 1) * sizeof *len);
    free(len);
    if ((s = fill_rows(g, first, &c, name)) != ADIA_OK) {
        adia__csr_free(&c);
        return s;
    }
    adia_matrix *A = NULL;
    ADIA_TRY(adia__matrix_wrap(&c, &A));
    s = adia_matrix_set_name(A, name);
    if (s != ADIA_OK) {
        adia_matrix_destroy(A);
        return s;
    }
    *out = A;
    return ADIA_OK;
}
