/* gen_grid.c -- stencil matrices on structured grids: the 2D/3D Laplacians
 * (natural ordering, x fastest) and the type II two-field matrix. */
#include "gen.h"

#include <inttypes.h>
#include <math.h>

/* A stencil on an nx x ny x nz grid: points sorted by (dz, dy, dx), which is
 * increasing column order; center value on (0,0,0), -1 elsewhere. */
typedef struct grid_stencil {
    int32_t n[3];
    int npts;
    int8_t pt[27][3];
    double center;
} grid_stencil;

static int32_t grid_row(const gen_rows *g, int32_t i, int32_t *col, double *val)
{
    const grid_stencil *s = g->ctx;
    int64_t nxy = (int64_t)s->n[0] * s->n[1];
    int32_t c[3] = {i % s->n[0], (int32_t)((i / s->n[0]) % s->n[1]), (int32_t)(i / nxy)};
    int32_t k = 0;
    for (int p = 0; p < s->npts; p++) {
        int inside = 1;
        for (int d = 0; d < 3; d++) {
            int32_t q = c[d] + s->pt[p][d];
            inside &= q >= 0 && q < s->n[d];
        }
        if (!inside) continue;
        if (col) {
            col[k] = (int32_t)(i + s->pt[p][0] + (int64_t)s->n[0] * s->pt[p][1] + nxy * s->pt[p][2]);
            int is_center = !s->pt[p][0] && !s->pt[p][1] && !s->pt[p][2];
            val[k] = is_center ? s->center : -1.0;
        }
        k++;
    }
    return k;
}

/* Grid sizes from the spec: N (cube/square) or all dims given. */
static adia_status grid_dims(const gen_args *a, int dims, int32_t n[3], int32_t *rows)
{
    if (a->count != 1 && a->count != dims)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": give one size or %d sizes joined by 'x', not %d",
                          a->spec, dims, a->count);
    int64_t total = 1;
    for (int d = 0; d < 3; d++) {
        n[d] = d >= dims ? 1 : (int32_t)a->num[a->count == 1 ? 0 : d];
        total *= n[d];  /* each factor < 2^31: checked below before the next */
        if (total > INT32_MAX)
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "generator spec \"%s\": the grid has more than %d rows",
                              a->spec, INT32_MAX);
    }
    *rows = (int32_t)total;
    return ADIA_OK;
}

/* box = 1: all 3^dims neighbours; box = 0: the 2*dims+1 point star. */
static adia_status gen_laplacian(const gen_args *a, int dims, int box, adia_matrix **out)
{
    grid_stencil s = {.npts = 0};
    int32_t rows = 0;
    ADIA_TRY(grid_dims(a, dims, s.n, &rows));
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int far = abs(dx) + abs(dy) + abs(dz);
                if ((dims == 2 && dz) || (!box && far > 1)) continue;
                s.pt[s.npts][0] = (int8_t)dx;
                s.pt[s.npts][1] = (int8_t)dy;
                s.pt[s.npts][2] = (int8_t)dz;
                s.npts++;
            }
    s.center = s.npts - 1;  /* 4, 8, 6, 26: row sums >= 0, SPD */
    gen_rows g = {.rows = rows, .cols = rows, .max_row = s.npts, .row = grid_row, .ctx = &s};
    return adia__gen_build(&g, a, out);
}

adia_status adia__gen_lap2d5(const gen_args *a, adia_matrix **out) { return gen_laplacian(a, 2, 0, out); }
adia_status adia__gen_lap2d9(const gen_args *a, adia_matrix **out) { return gen_laplacian(a, 2, 1, out); }
adia_status adia__gen_lap3d7(const gen_args *a, adia_matrix **out) { return gen_laplacian(a, 3, 0, out); }
adia_status adia__gen_lap3d27(const gen_args *a, adia_matrix **out) { return gen_laplacian(a, 3, 1, out); }

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
                  .max_row = 7, .row = type2_row, .ctx = &side};
    return adia__gen_build(&g, a, out);
}
