/* mg_grid.c -- the multigrid's grid: given, or found from the matrix's
 * offsets (a stencil's +-1, +-nx, +-nx ny and, for box stencils, their
 * sums), every nonzero checked to couple grid neighbours only (|dx|, |dy|,
 * |dz| <= 1, no wrap-around across a grid line); and the finest level's
 * stencil read from the CSR. */
#include "mg.h"
#include "../formats/diag_core.h"   /* a CPU plan's diagonals, read in place */

#include <stdio.h>

#define PARALLEL_ROWS 20000

static void coords(const int32_t n[3], int64_t i, int64_t c[3])
{
    c[0] = i % n[0];
    c[1] = i / n[0] % n[1];
    c[2] = i / ((int64_t)n[0] * n[1]);
}

/* 1: grid points a and b are neighbours (or one point). */
static int neighbours(const int64_t a[3], const int64_t b[3])
{
    return llabs(a[0] - b[0]) <= 1 && llabs(a[1] - b[1]) <= 1 && llabs(a[2] - b[2]) <= 1;
}

/* How an entry's offset o = j - i names its stencil point on grid n.
 * When the offsets of the points possible on the grid (no step along a
 * dimension of one point) are distinct -- dimensions of at least 3 points
 * -- o alone names the point, and the row's coordinates say whether its
 * neighbour exists (no division per nonzero); else the column's own
 * coordinates are compared (grids 2 points wide). */
typedef struct grid_map {
    int32_t n[3];
    int by_offset;
    int np;
    int64_t off[MG_POINTS];   /* ascending */
    int pt[MG_POINTS];
} grid_map;

static void map_init(grid_map *g, const int32_t n[3])
{
    memcpy(g->n, n, sizeof g->n);
    g->np = 0;
    for (int p = 0; p < MG_POINTS; p++) {
        int possible = 1;
        for (int d = 0; d < 3; d++) possible &= mg_dx(p, d) == 0 || n[d] > 1;
        if (!possible) continue;
        const int64_t o = mg_dx(p, 0) + (int64_t)n[0] * (mg_dx(p, 1) + (int64_t)n[1] * mg_dx(p, 2));
        int k = g->np++;
        while (k > 0 && g->off[k - 1] > o) g->off[k] = g->off[k - 1], g->pt[k] = g->pt[k - 1], k--;
        g->off[k] = o, g->pt[k] = p;
    }
    g->by_offset = 1;
    for (int k = 1; k < g->np; k++) g->by_offset &= g->off[k] != g->off[k - 1];
}

/* The point of entry (i, i + o), row i at coordinates c; -1 when the two
 * are not grid neighbours.  *at: where the row's last entry was found in
 * the ascending offsets (0 at the row's start): a row's columns ascend
 * (adia_csr's rule), so its offsets are found by one walk up the list, not
 * a search each (with distinct_offsets' row compare: lap3d27:64's grid and
 * stencil phases 70 + 53 -> 52 + 42 ms, lap3d7:96's 53 + 47 -> 48-51 + 37;
 * 2 cores, 2026-11-28). */
static int map_point(const grid_map *g, const int64_t c[3], int64_t i, int64_t o, int *at)
{
    if (g->by_offset) {
        int k = *at;
        while (k < g->np && g->off[k] < o) k++;
        *at = k;
        if (k == g->np || g->off[k] != o) return -1;
        const int p = g->pt[k];
        for (int d = 0; d < 3; d++)
            if (c[d] + mg_dx(p, d) < 0 || c[d] + mg_dx(p, d) >= g->n[d]) return -1;
        return p;
    }
    int64_t cj[3];
    coords(g->n, i + o, cj);
    for (int d = 0; d < 3; d++)
        if (llabs(cj[d] - c[d]) > 1) return -1;
    return mg_point((int)(cj[0] - c[0]), (int)(cj[1] - c[1]), (int)(cj[2] - c[2]));
}

/* The first row with a nonzero (exact zeros are not entries of the
 * stencil) coupling points that are not neighbours; rows if none. */
static int64_t first_bad_row(const adia_csr *A, const int32_t n[3])
{
    const double *v = A->values;
    grid_map g;
    map_init(&g, n);
    int64_t bad = A->rows;
#pragma omp parallel for reduction(min : bad) schedule(static) if (A->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int32_t i = 0; i < A->rows; i++) {
        int64_t ci[3];
        int at = 0;
        coords(n, i, ci);
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (v[k] != 0 && map_point(&g, ci, i, (int64_t)A->colind[k] - i, &at) < 0) {
                if (i < bad) bad = i;
                break;
            }
    }
    return bad;
}

adia_status adia__mg_error_off_grid(const int32_t n[3], int64_t i, int64_t j, double v)
{
    int64_t ci[3], cj[3];
    coords(n, i, ci);
    coords(n, j, cj);
    return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: not on a grid of %dx%dx%d: "
                      "A(%lld,%lld) = %g couples grid points (%lld,%lld,%lld) and "
                      "(%lld,%lld,%lld), not neighbours (give the grid in "
                      "adia_precond_options.grid if it is another)", n[0], n[1], n[2],
                      (long long)i, (long long)j, v, (long long)ci[0], (long long)ci[1],
                      (long long)ci[2], (long long)cj[0], (long long)cj[1], (long long)cj[2]);
}

adia_status adia__mg_error_diagonal(const int32_t n[3], int64_t i, double v)
{
    int64_t c[3];
    coords(n, i, c);
    return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: needs A(%lld,%lld) (grid point "
                      "(%lld,%lld,%lld)) nonzero and finite, it is %g", (long long)i,
                      (long long)i, (long long)c[0], (long long)c[1], (long long)c[2], v);
}

static adia_status check_grid(const adia_csr *A, const int32_t n[3])
{
    const int64_t i = first_bad_row(A, n);
    if (i == A->rows) return ADIA_OK;
    const double *v = A->values;
    int64_t ci[3], cj[3];
    coords(n, i, ci);
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
        coords(n, A->colind[k], cj);
        if (v[k] != 0 && !neighbours(ci, cj)) return adia__mg_error_off_grid(n, i, A->colind[k], v[k]);
    }
    return ADIA_OK;
}

/* The distinct |column - row| > 0 of the nonzeros, ascending; -1 when
 * there are more than MG_MAX_OFFSETS (not a stencil of 27 points).  Most
 * rows of a stencil have the last row's offsets: such a row is compared
 * with it (one compare an entry) and adds nothing. */
static int distinct_offsets(const adia_csr *A, int64_t off[MG_MAX_OFFSETS])
{
    enum { ROW_MAX = 32 };   /* a row longer than a stencil's is walked whole */
    const double *v = A->values;
    int64_t last[ROW_MAX], cur[ROW_MAX];
    int k = 0, nlast = -1;
    for (int32_t i = 0; i < A->rows; i++) {
        int ncur = 0;
        for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1] && ncur <= ROW_MAX; e++)
            if (v[e] != 0 && ncur++ < ROW_MAX) cur[ncur - 1] = (int64_t)A->colind[e] - i;
        if (ncur == nlast && !memcmp(cur, last, (size_t)ncur * sizeof *cur)) continue;
        for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++) {
            int64_t o = llabs((int64_t)A->colind[e] - i);
            if (o == 0 || v[e] == 0) continue;
            int p = 0;
            while (p < k && off[p] < o) p++;
            if (p < k && off[p] == o) continue;
            if (k == MG_MAX_OFFSETS) return -1;
            memmove(off + p + 1, off + p, (size_t)(k - p) * sizeof *off);
            off[p] = o;
            k++;
        }
        nlast = ncur <= ROW_MAX ? ncur : -1;
        if (nlast >= 0) memcpy(last, cur, (size_t)ncur * sizeof *cur);
    }
    return k;
}

/* Grids the offsets suggest, most likely first: nx is the smallest offset
 * above 1 (star stencils) or one more (box stencils: nx - 1, nx, nx + 1);
 * the plane nx ny is the smallest offset beyond nx + 1 or up to nx + 1
 * more (box and 19-point stencils start at nx ny - nx - 1 or nx ny - nx). */
int adia__mg_grid_candidates(int64_t rows, const int64_t *off, int k, int32_t cand[][3], int max)
{
    int c = 0;
    int q = 0;
    while (q < k && off[q] <= 1) q++;
    if (q == k) {   /* only +-1 (or a diagonal): one dimension */
        cand[c][0] = (int32_t)rows, cand[c][1] = 1, cand[c][2] = 1;
        return 1;
    }
    for (int64_t nx = off[q]; nx <= off[q] + 1; nx++) {
        if (rows % nx) continue;
        int r = q;
        while (r < k && off[r] <= nx + 1) r++;
        if (r == k) {
            if (c < max) cand[c][0] = (int32_t)nx, cand[c][1] = (int32_t)(rows / nx),
                         cand[c][2] = 1, c++;
            continue;
        }
        const int64_t plane[4] = {off[r], off[r] + 1, off[r] + nx, off[r] + nx + 1};
        for (int p = 0; p < 4; p++)
            if (plane[p] % nx == 0 && plane[p] > nx && rows % plane[p] == 0 && c < max)
                cand[c][0] = (int32_t)nx, cand[c][1] = (int32_t)(plane[p] / nx),
                cand[c][2] = (int32_t)(rows / plane[p]), c++;
    }
    return c;
}

/* The CSR as a grid source (below): the first bad row and its message. */
static adia_status csr_bad_row(void *ctx, const int32_t n[3], int64_t *bad)
{
    *bad = first_bad_row(ctx, n);
    return ADIA_OK;
}

static adia_status csr_report(void *ctx, const int32_t n[3], int64_t i)
{
    (void)i;
    return check_grid(ctx, n);
}

/* The distinct |offsets| > 0 of list[0..k), ascending, into off; -1 when
 * there are more than MG_MAX_OFFSETS. */
int adia__mg_distinct_offsets(const int64_t *list, int k, int64_t off[MG_MAX_OFFSETS])
{
    int m = 0;
    for (int e = 0; e < k; e++) {
        const int64_t o = llabs(list[e]);
        int p = 0;
        while (p < m && off[p] < o) p++;
        if (o == 0 || (p < m && off[p] == o)) continue;
        if (m == MG_MAX_OFFSETS) return -1;
        memmove(off + p + 1, off + p, (size_t)(m - p) * sizeof *off);
        off[p] = o;
        m++;
    }
    return m;
}

int adia_grid_candidates(int64_t rows, const int64_t *offsets, int count, int32_t (*grid)[3],
                         int max)
{
    int64_t off[MG_MAX_OFFSETS];
    if ((!offsets && count > 0) || count < 0 || rows <= 0 || !grid || max <= 0) return 0;
    const int k = count > 0 ? adia__mg_distinct_offsets(offsets, count, off) : 0;
    if (k < 0) return 0;
    return adia__mg_grid_candidates(rows, off, k, grid, max);
}

static adia_status given_grid(const mg_grid_source *src, const int g[3], int32_t n[3])
{
    int64_t pts = 1;
    for (int d = 0; d < 3; d++) {
        n[d] = g[d] > 0 ? g[d] : 1;
        pts *= n[d];
    }
    if (pts != src->rows)
        return adia__error(ADIA_ERR_DIMENSION, "mg preconditioner: the grid %dx%dx%d has %lld "
                          "points, the matrix %lld rows", n[0], n[1], n[2], (long long)pts,
                          (long long)src->rows);
    int64_t bad;
    ADIA_TRY(src->bad_row(src->ctx, n, &bad));
    return bad == src->rows ? ADIA_OK : src->report(src->ctx, n, bad);
}

adia_status adia__mg_grid_find(const mg_grid_source *src, const int opt_grid[3], int32_t n[3])
{
    if (opt_grid[0] > 0 || opt_grid[1] > 0 || opt_grid[2] > 0)
        return given_grid(src, opt_grid, n);
    const int k = src->k;
    if (k < 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: the matrix has more than "
                          "%d distinct offsets: not a stencil of at most 27 points on a grid",
                          MG_MAX_OFFSETS);
    int32_t cand[8][3];
    const int c = adia__mg_grid_candidates(src->rows, src->off, k, cand, 8);
    if (c == 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: the matrix's offsets "
                          "(%d distinct, largest %lld) give no grid whose sizes divide its %lld "
                          "rows; give the grid in adia_precond_options.grid", k,
                          (long long)(k > 0 ? src->off[k - 1] : 0), (long long)src->rows);
    int64_t bad0 = 0;
    for (int i = 0; i < c; i++) {
        int64_t bad;
        ADIA_TRY(src->bad_row(src->ctx, cand[i], &bad));
        if (i == 0) bad0 = bad;
        if (bad == src->rows) {
            memcpy(n, cand[i], 3 * sizeof *n);
            return ADIA_OK;
        }
    }
    return src->report(src->ctx, cand[0], bad0);   /* the message of the likeliest */
}

adia_status adia__mg_grid(const adia_csr *A, const int opt_grid[3], int32_t n[3])
{
    int64_t off[MG_MAX_OFFSETS] = {0};
    mg_grid_source src = {.rows = A->rows, .off = off, .bad_row = csr_bad_row,
                          .report = csr_report, .ctx = (void *)A};
    src.k = opt_grid[0] > 0 || opt_grid[1] > 0 || opt_grid[2] > 0 ? 0 : distinct_offsets(A, off);
    return adia__mg_grid_find(&src, opt_grid, n);
}

/* S's arrays of the points in present (zeros). */
static adia_status stencil_points(mg_stencil *S, unsigned present)
{
    for (int p = 0; p < MG_POINTS; p++)
        if (present >> p & 1) {
            S->coef[p] = adia__calloc((size_t)S->rows + 1, sizeof(double), "mg stencil");
            if (!S->coef[p]) {
                adia__mg_stencil_free(S);
                return ADIA_ERR_NO_MEMORY;
            }
        }
    return ADIA_OK;
}

/* The first zero or non-finite diagonal entry: its error, the stencil
 * freed. */
static adia_status check_diagonal(mg_stencil *S, const int32_t n[3])
{
    const double *diag = S->coef[mg_point(0, 0, 0)];
    for (int64_t i = 0; i < S->rows; i++)
        if (diag[i] == 0 || !isfinite(diag[i])) {
            const double bad = diag[i];
            adia__mg_stencil_free(S);
            return adia__mg_error_diagonal(n, i, bad);
        }
    return ADIA_OK;
}

/* ------------------------------------- the plan's diagonal storage (host) */

/* The piece of row r (piece_start ascending). */
static int32_t piece_of(const adia_diag *D, int32_t r)
{
    int32_t lo = 0, hi = D->n_pieces - 1;
    while (lo < hi) {
        const int32_t mid = (lo + hi + 1) / 2;
        if (D->piece_start[mid] <= r) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* A row's stored nonzeros in its group's ascending offsets (those whose
 * column lies in the matrix): row_begin, then row_next until it returns
 * 0.  *piece: the piece of the last row seen (-1 at first), so that a
 * thread's consecutive rows look it up once a piece. */
typedef struct row_iter {
    const double *base;   /* the row's value of the group's first diagonal */
    const int32_t *off;
    int32_t r, k, k1, len, cols;
} row_iter;

static inline void row_begin(const adia_diag *D, int32_t r, int32_t *piece, row_iter *it)
{
    if (*piece < 0 || r < D->piece_start[*piece] || r >= D->piece_start[*piece + 1])
        *piece = piece_of(D, r);
    const int32_t r0 = D->piece_start[*piece], g = D->piece_group[*piece];
    it->base = (const double *)D->data + D->piece_data[*piece] + (r - r0);
    it->off = D->offsets + D->group_start[g];
    it->r = r, it->k = 0, it->k1 = D->group_start[g + 1] - D->group_start[g];
    it->len = D->piece_start[*piece + 1] - r0;
    it->cols = D->cols;
}

static inline int row_next(row_iter *it, int64_t *o, double *x)
{
    for (; it->k < it->k1; it->k++) {
        const int64_t c = (int64_t)it->r + it->off[it->k];
        if (c < 0 || c >= it->cols) continue;   /* DIA's slots outside: stored 0 */
        *x = it->base[(int64_t)it->k * it->len];
        if (*x == 0) continue;
        *o = it->off[it->k++];
        return 1;
    }
    return 0;
}

int adia__mg_diag_readable(const adia_diag *D)
{
    return D && D->vtype == ADIA_DOUBLE && D->data && !D->n_scatter && D->rows == D->cols;
}

/* The first row with a nonzero coupling points that are not neighbours on
 * grid n; rows if none (first_bad_row's, from the diagonals). */
static int64_t diag_first_bad_row(const adia_diag *D, const int32_t n[3])
{
    grid_map g;
    map_init(&g, n);
    int64_t bad = D->rows;
    int32_t piece = -1;   /* each thread's own: its rows are contiguous */
#pragma omp parallel for reduction(min : bad) firstprivate(piece) schedule(static) if (D->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int32_t i = 0; i < D->rows; i++) {
        int64_t ci[3];
        int at = 0, off_grid = 0;
        coords(n, i, ci);
        row_iter it;
        int64_t o;
        double x;
        row_begin(D, i, &piece, &it);
        while (!off_grid && row_next(&it, &o, &x)) off_grid = map_point(&g, ci, i, o, &at) < 0;
        if (off_grid && i < bad) bad = i;
    }
    return bad;
}

static adia_status diag_bad_row(void *ctx, const int32_t n[3], int64_t *bad)
{
    *bad = diag_first_bad_row(ctx, n);
    return ADIA_OK;
}

/* Row i's first nonzero that is not a neighbour: its message. */
static adia_status diag_report(void *ctx, const int32_t n[3], int64_t i)
{
    const adia_diag *D = ctx;
    int64_t ci[3], cj[3];
    int32_t piece = -1;
    coords(n, i, ci);
    row_iter it;
    int64_t o;
    double x;
    row_begin(D, (int32_t)i, &piece, &it);
    while (row_next(&it, &o, &x)) {
        coords(n, i + o, cj);
        if (!neighbours(ci, cj)) return adia__mg_error_off_grid(n, i, i + o, x);
    }
    return ADIA_OK;
}

int adia__mg_diag_offsets(const adia_diag *D, int64_t *off)
{
    enum { CHUNK = 32 };
    int64_t list[MG_MAX_OFFSETS + CHUNK];
    int k = 0;
    for (int32_t t = 0, terms = D->group_start[D->n_groups]; t < terms && k >= 0;) {
        int m = 0;   /* the distinct ones so far, then the next stored ones */
        for (int e = 0; e < k; e++) list[m++] = off[e];
        while (t < terms && m < MG_MAX_OFFSETS + CHUNK) list[m++] = D->offsets[t++];
        k = adia__mg_distinct_offsets(list, m, off);
    }
    return k;
}

adia_status adia__mg_grid_diag(const adia_diag *D, const int opt_grid[3], int32_t n[3])
{
    int64_t off[MG_MAX_OFFSETS] = {0};
    const int k = adia__mg_diag_offsets(D, off);
    mg_grid_source src = {.rows = D->rows, .off = off, .k = k, .bad_row = diag_bad_row,
                          .report = diag_report, .ctx = (void *)D};
    return adia__mg_grid_find(&src, opt_grid, n);
}

/* Every stored nonzero of D on grid n (checked): S NULL, the points
 * present; else written into S's arrays of them. */
static unsigned diag_pass(const adia_diag *D, const int32_t n[3], mg_stencil *S)
{
    grid_map g;
    map_init(&g, n);
    unsigned present = 1u << mg_point(0, 0, 0);
    int32_t piece = -1;   /* each thread's own: its rows are contiguous */
#pragma omp parallel for reduction(| : present) firstprivate(piece) schedule(static) if (D->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int32_t i = 0; i < D->rows; i++) {
        int64_t c[3], o;
        int at = 0;
        double x;
        row_iter it;
        coords(n, i, c);
        row_begin(D, i, &piece, &it);
        while (row_next(&it, &o, &x)) {
            const int p = map_point(&g, c, i, o, &at);
            if (S) S->coef[p][i] = x;
            else present |= 1u << p;
        }
    }
    return present;
}

adia_status adia__mg_stencil_from_diag(const adia_diag *D, const int32_t n[3], mg_stencil *S)
{
    *S = (mg_stencil){.n = {n[0], n[1], n[2]}, .rows = D->rows};
    ADIA_TRY(stencil_points(S, diag_pass(D, n, NULL)));
    diag_pass(D, n, S);
    return check_diagonal(S, n);
}

int adia__mg_likely(const adia_csr *A)
{
    int64_t off[MG_MAX_OFFSETS];
    const int k = distinct_offsets(A, off);
    int32_t cand[1][3];
    if (k < 0 || adia__mg_grid_candidates(A->rows, off, k, cand, 1) < 1) return 0;
    return mg_longest_edge(cand[0]) >= MG_AUTO_MIN_EDGE;
}

void adia__mg_stencil_free(mg_stencil *S)
{
    for (int p = 0; p < MG_POINTS; p++) {
        free(S->coef[p]);
        S->coef[p] = NULL;
    }
}

/* Every nonzero of A on grid n (checked): S NULL, the points present;
 * else written into S's arrays of them. */
static unsigned csr_pass(const adia_csr *A, const int32_t n[3], mg_stencil *S)
{
    const double *v = A->values;
    grid_map g;
    map_init(&g, n);
    unsigned present = 1u << mg_point(0, 0, 0);
#pragma omp parallel for reduction(| : present) schedule(static) if (A->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int32_t i = 0; i < A->rows; i++) {
        int64_t c[3];
        int at = 0;
        coords(n, i, c);
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (v[k] == 0) continue;
            const int p = map_point(&g, c, i, (int64_t)A->colind[k] - i, &at);
            if (S) S->coef[p][i] = v[k];
            else present |= 1u << p;
        }
    }
    return present;
}

adia_status adia__mg_stencil_from_csr(const adia_csr *A, const int32_t n[3], mg_stencil *S)
{
    *S = (mg_stencil){.n = {n[0], n[1], n[2]}, .rows = A->rows};
    ADIA_TRY(stencil_points(S, csr_pass(A, n, NULL)));
    csr_pass(A, n, S);
    return check_diagonal(S, n);
}
