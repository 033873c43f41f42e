/* gen_grid.c -- stencil matrices on structured grids: the 2D/3D Laplacians
 * (natural ordering, x fastest) and the type II two-field matrix. */
#include "gen.h"
#include "stencil.h"

#include <inttypes.h>
#include <math.h>

static int32_t grid_row(const gen_rows *g, int32_t i, int32_t *col, double *val)
{
    const adia_stencil *s = g->ctx;
    int64_t c[3];
    adia__stencil_coords(s, i, c);
    int32_t k = 0;
    for (int p = 0; p < s->npts; p++) {
        double v = adia__stencil_value(s, c, p);
        if (v == 0) continue;   /* outside the grid: every entry inside is nonzero */
        if (col) {
            col[k] = (int32_t)(i + adia__stencil_offset(s, p));
            val[k] = v;
        }
        k++;
    }
    return k;
}

/* Nonzeros of the whole grid: point p has an entry in every row whose
 * neighbour lies inside, prod_d (n_d - |dp_d|) rows.  A block of rows:
 * unknown here (-1; at least one entry a row, the centre). */
static int64_t grid_count(const gen_rows *g, int32_t first, int32_t rows)
{
    const adia_stencil *s = g->ctx;
    if (first != 0 || rows != g->rows) return -1;
    int64_t nnz = 0;
    for (int p = 0; p < s->npts; p++) {
        int64_t in = 1;
        for (int d = 0; d < 3; d++) {
            int64_t span = s->n[d] - (s->pt[p][d] < 0 ? -s->pt[p][d] : s->pt[p][d]);
            in *= span > 0 ? span : 0;   /* < 2^31 rows in all: no overflow */
        }
        nnz += in;
    }
    return nnz;
}

/* The Laplacians: grid dimensions, and box (all 3^dims neighbours) or the
 * 2 dims + 1 point star. */
typedef struct laplacian { const char *kind; int dims, box; } laplacian;
static const laplacian laplacians[] = {
    {"lap2d5", 2, 0}, {"lap2d9", 2, 1}, {"lap3d7", 3, 0}, {"lap3d27", 3, 1}};

static adia_status make_stencil(const gen_args *a, const laplacian *L, adia_stencil *s)
{
    const int dims = L->dims, box = L->box;
    if (a->count != 1 && a->count != dims)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": give one size or %d sizes joined by 'x', not %d",
                          a->spec, dims, a->count);
    *s = (adia_stencil){.npts = 0};
    for (int d = 0; d < 3; d++) s->n[d] = d >= dims ? 1 : a->num[a->count == 1 ? 0 : d];
    /* each size < 2^31: the product of three stays below 2^93; 2^62 keeps
     * every index and offset sum of the fill inside int64 */
    if ((double)s->n[0] * (double)s->n[1] * (double)s->n[2] > 0x1p62)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": the grid has more than "
                          "2^62 points", a->spec);
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int far = abs(dx) + abs(dy) + abs(dz);
                if ((dims == 2 && dz) || (!box && far > 1)) continue;
                s->pt[s->npts][0] = (int8_t)dx;
                s->pt[s->npts][1] = (int8_t)dy;
                s->pt[s->npts][2] = (int8_t)dz;
                s->npts++;
            }
    s->center = s->npts - 1;  /* 4, 8, 6, 26: row sums >= 0, SPD */
    return ADIA_OK;
}

adia_status adia__gen_stencil(const char *kind, const gen_args *a, adia_stencil *s)
{
    for (size_t k = 0; k < sizeof laplacians / sizeof *laplacians; k++)
        if (!strcmp(laplacians[k].kind, kind)) return make_stencil(a, &laplacians[k], s);
    return adia__error(ADIA_ERR_UNSUPPORTED, "generator spec \"%s\": %s is not a stencil (the "
                      "diagonal fill takes lap2d5, lap2d9, lap3d7 and lap3d27)", a->spec, kind);
}

int adia__stencil_diagonals(const adia_stencil *s, int64_t off[STENCIL_MAX_POINTS],
                            uint32_t points[STENCIL_MAX_POINTS])
{
    int nd = 0;
    for (int p = 0; p < s->npts; p++) {
        int possible = 1;
        for (int d = 0; d < 3; d++) possible &= s->pt[p][d] == 0 || s->n[d] > 1;
        if (!possible) continue;
        int64_t o = adia__stencil_offset(s, p);
        int k = 0;
        while (k < nd && off[k] < o) k++;
        if (k == nd || off[k] != o) {   /* a new diagonal, kept in order */
            memmove(off + k + 1, off + k, (size_t)(nd - k) * sizeof *off);
            memmove(points + k + 1, points + k, (size_t)(nd - k) * sizeof *points);
            off[k] = o;
            points[k] = 0;
            nd++;
        }
        points[k] |= 1u << p;
    }
    return nd;
}

static adia_status gen_laplacian(const gen_args *a, const laplacian *L, adia_matrix **out)
{
    adia_stencil s;
    ADIA_TRY(make_stencil(a, L, &s));
    int64_t rows = s.n[0] * s.n[1] * s.n[2];
    if (rows > INT32_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": the grid has more than "
                          "%d rows (%" PRId64 " points; GPU runs of adia_mpi fill it on the "
                          "devices: adia_stencil_fill_device)", a->spec, INT32_MAX, rows);
    gen_rows g = {.rows = (int32_t)rows, .cols = (int32_t)rows, .max_row = s.npts,
                  .row = grid_row, .count = grid_count, .min_row = 1, .ctx = &s};
    return adia__gen_build(&g, a, out);
}

adia_status adia__gen_lap2d5(const gen_args *a, adia_matrix **out)
{
    return gen_laplacian(a, &laplacians[0], out);
}
adia_status adia__gen_lap2d9(const gen_args *a, adia_matrix **out)
{
    return gen_laplacian(a, &laplacians[1], out);
}
adia_status adia__gen_lap3d7(const gen_args *a, adia_matrix **out)
{
    return gen_laplacian(a, &laplacians[2], out);
}
adia_status adia__gen_lap3d27(const gen_args *a, adia_matrix **out)
{
    return gen_laplacian(a, &laplacians[3], out);
}

/* type2: two fields of s x s points, field after field, i.e. an s x 2s grid
 * with the 5-point stencil, plus point-to-point coupling of the two fields
 * at offsets +-s^2 = +-rows/2.  The fields are joined along their common
 * edge on purpose: otherwise the +-s diagonals would have a zero run of s
 * rows there, a long zero section (type III) once s >= B.  Every diagonal
 * is full except +-1, which miss one entry every s rows: the paper's type
 * II (far diagonals, no long zero section, no scatter point). */
static int32_t type2_row(const gen_rows *g, int32_t i, int32_t *col, double *val)
{
    int32_t s = *(const int32_t *)g->ctx, half = g->rows / 2;
    int32_t x = i % s, y = i / s;
    int32_t c[7];
    int k = 0;
    if (i >= half) c[k++] = i - half;
    if (y > 0) c[k++] = i - s;
    if (x > 0) c[k++] = i - 1;
    int center = k;
    c[k++] = i;
    if (x < s - 1) c[k++] = i + 1;
    if (y < 2 * s - 1) c[k++] = i + s;
    if (i < half) c[k++] = i + half;
    if (col)
        for (int p = 0; p < k; p++) {
            col[p] = c[p];
            val[p] = p == center ? 5.0 : -1.0;  /* 4 neighbours + coupling */
        }
    return k;
}

/* Whole matrix: every row its centre and its coupling, x +- 1 in 2s rows
 * of s - 1 each, y +- 1 in s columns of 2s - 1 each: 12 s^2 - 6 s.  A
 * block of rows: unknown here (at least those two a row). */
static int64_t type2_count(const gen_rows *g, int32_t first, int32_t rows)
{
    int64_t s = *(const int32_t *)g->ctx;
    return first == 0 && rows == g->rows ? 12 * s * s - 6 * s : -1;
}

adia_status adia__gen_type2(const gen_args *a, adia_matrix **out)
{
    int64_t s = (int64_t)sqrt((double)a->num[0] / 2);
    while (2 * (s + 1) * (s + 1) <= a->num[0]) s++;
    while (s > 0 && 2 * s * s > a->num[0]) s--;
    if (s < 1)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": type2 needs N >= 2 (N = 2*s*s rows)", a->spec);
    int32_t side = (int32_t)s;
    gen_rows g = {.rows = (int32_t)(2 * s * s), .cols = (int32_t)(2 * s * s),
                  .max_row = 7, .row = type2_row, .count = type2_count, .min_row = 2,
                  .ctx = &side};
    return adia__gen_build(&g, a, out);
}
