/* gen_pde.c -- diffusion operators -div(k grad u) on structured grids,
 * the problems a multigrid preconditioner meets (issue 30): an anisotropic
 * Laplacian (aniso3d), jumping coefficients in a checkerboard of blocks
 * (jump3d) and smooth variable coefficients (vardiff2d, vardiff3d); and
 * one it cannot meet on a grid, the 1D fourth difference (biharm1d, at the
 * end of the file).
 *
 * The 5-point (2D) or 7-point (3D) finite-volume stencil on the lap2d5 /
 * lap3d7 grid: points numbered x fastest, A(p, q) = -w(p, q) for each
 * neighbour q inside the grid, A(p, p) = the sum of the w of all 2 dims
 * faces of p.  A face on the boundary (its neighbour outside: Dirichlet,
 * the neighbour eliminated) keeps its coefficient in the diagonal and
 * drops the entry, as the Laplacians do (constant w = 1 gives lap2d5 /
 * lap3d7 exactly).  w(p, q) is computed from the face alone, the same
 * floating-point operations from either side, so A = A^T bit for bit;
 * every w > 0, so A is an irreducibly diagonally dominant M-matrix with
 * positive diagonal: symmetric positive definite. */
#include "gen.h"

#include <inttypes.h>
#include <math.h>

/* Defaults (documented in the generator help and docs/cli.md). */
#define ANISO_EPS 1e-3       /* aniso3d: coupling in z, 1 in x and y */
#define JUMP_CONTRAST 1e4    /* jump3d: the coefficient of the odd blocks */

typedef enum pde_kind { PDE_ANISO, PDE_JUMP, PDE_SMOOTH } pde_kind;

typedef struct pde_grid {
    pde_kind kind;
    int dims;
    int64_t n[3];            /* 1 beyond dims */
    double w[3];             /* PDE_ANISO: the coefficient of each direction */
    int64_t block;           /* PDE_JUMP: block edge in points */
    double contrast;         /* PDE_JUMP: coefficient of the odd blocks */
    /* PDE_SMOOTH: sin(2 pi x) at the points, at[d][c], and at the faces,
     * mid[d][lo + 1] (lo = -1 .. n_d - 1): a table read from both sides of
     * a face, 3 sines a face otherwise (3x the time of lap3d7's build) */
    double *at[3], *mid[3];
} pde_grid;

/* PDE_JUMP: the cell coefficient, 1 or contrast in a checkerboard of
 * block^dims cells. */
static double jump_cell(const pde_grid *G, const int64_t c[3])
{
    int64_t parity = 0;
    for (int d = 0; d < G->dims; d++) parity += c[d] / G->block;
    return parity % 2 ? G->contrast : 1.0;
}

/* PDE_SMOOTH: k(x) = 1 + 0.9 prod_d sin(2 pi x_d) on the unit square or
 * cube, in [0.1, 1.9]; point c_d sits at x_d = (c_d + 1) h_d, h_d =
 * 1 / (n_d + 1), and the face to the neighbour at c_d + side at the
 * midpoint, (lo + 1.5) h_d with lo = min(c_d, c_d + side): the same
 * table entry from both sides of a face. */
static double smooth_face(const pde_grid *G, const int64_t c[3], int d, int side)
{
    double prod = 1;
    for (int e = 0; e < G->dims; e++)
        prod *= e != d ? G->at[e][c[e]] : G->mid[e][side < 0 ? c[e] : c[e] + 1];
    return 1 + 0.9 * prod;
}

/* The sine tables of PDE_SMOOTH (freed by smooth_free). */
static adia_status smooth_tables(pde_grid *G)
{
    const double two_pi = 6.283185307179586;
    for (int d = 0; d < G->dims; d++) {
        int64_t n = G->n[d];
        double h = 1.0 / (double)(n + 1);
        G->at[d] = adia__alloc((size_t)n, sizeof(double), "generator coefficients");
        G->mid[d] = adia__alloc((size_t)n + 1, sizeof(double), "generator coefficients");
        if (!G->at[d] || !G->mid[d]) return ADIA_ERR_NO_MEMORY;
        for (int64_t c = 0; c < n; c++) G->at[d][c] = sin(two_pi * ((double)c + 1) * h);
        for (int64_t lo = -1; lo < n; lo++) G->mid[d][lo + 1] = sin(two_pi * ((double)lo + 1.5) * h);
    }
    return ADIA_OK;
}

static void smooth_free(pde_grid *G)
{
    for (int d = 0; d < 3; d++) {
        free(G->at[d]);
        free(G->mid[d]);
    }
}

/* w of the face of point c towards c + side e_d (side -1 or +1); a face
 * on the boundary takes the coefficient of c (the ghost point mirrors it). */
static double face_weight(const pde_grid *G, const int64_t c[3], int d, int side)
{
    switch (G->kind) {
    case PDE_ANISO:
        return G->w[d];
    case PDE_JUMP: {
        int64_t q[3] = {c[0], c[1], c[2]};
        q[d] += side;
        double a = jump_cell(G, c);
        if (q[d] < 0 || q[d] >= G->n[d]) return a;
        double b = jump_cell(G, q);
        /* harmonic mean: commutative operations only, so w(p,q) = w(q,p) */
        return a == b ? a : 2 * (a * b) / (a + b);
    }
    case PDE_SMOOTH:
        return smooth_face(G, c, d, side);
    }
    return 0;
}

static int32_t pde_row(const gen_rows *g, int32_t i, int32_t *col, double *val)
{
    const pde_grid *G = g->ctx;
    int64_t c[3] = {i % G->n[0], (i / G->n[0]) % G->n[1], i / (G->n[0] * G->n[1])};
    int64_t stride[3] = {1, G->n[0], G->n[0] * G->n[1]};
    /* faces in column order: -z, -y, -x, then +x, +y, +z */
    int32_t k = 0, center = -1;
    double diag = 0;
    for (int t = 0; t < 2 * G->dims; t++) {
        int side = t < G->dims ? -1 : 1;
        int d = side < 0 ? G->dims - 1 - t : t - G->dims;
        if (side > 0 && center < 0) center = k++;
        double w = col ? face_weight(G, c, d, side) : 0;
        diag += w;
        int64_t q = c[d] + side;
        if (q < 0 || q >= G->n[d]) continue;
        if (col) {
            col[k] = (int32_t)(i + side * stride[d]);
            val[k] = -w;
        }
        k++;
    }
    if (col) {
        col[center] = i;
        val[center] = diag;
    }
    return k;
}

/* Nonzeros of the whole grid: every point, and along each dimension d
 * two entries per pair of neighbours, (n_d - 1) prod_{e != d} n_e pairs.
 * A block of rows: unknown here (-1; at least the centre a row). */
static int64_t pde_count(const gen_rows *g, int32_t first, int32_t rows)
{
    const pde_grid *G = g->ctx;
    if (first != 0 || rows != g->rows) return -1;
    int64_t points = G->n[0] * G->n[1] * G->n[2], nnz = points;
    for (int d = 0; d < G->dims; d++) nnz += 2 * (points / G->n[d]) * (G->n[d] - 1);
    return nnz;
}

/* The grid n^dims of a spec's first number, at most INT32_MAX points. */
static adia_status pde_grid_size(const gen_args *a, pde_grid *G)
{
    for (int d = 0; d < 3; d++) G->n[d] = d < G->dims ? a->num[0] : 1;
    if (pow((double)a->num[0], G->dims) > (double)INT32_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": the grid %" PRId64
                          "^%d has more than %d points", a->spec, a->num[0], G->dims, INT32_MAX);
    return ADIA_OK;
}

static adia_status pde_build(const gen_args *a, pde_grid *G, adia_matrix **out)
{
    ADIA_TRY(pde_grid_size(a, G));
    int32_t rows = (int32_t)(G->n[0] * G->n[1] * G->n[2]);
    gen_rows g = {.rows = rows, .cols = rows, .max_row = 2 * G->dims + 1, .row = pde_row,
                  .count = pde_count, .min_row = 1, .ctx = G};
    adia_status s = G->kind == PDE_SMOOTH && out ? smooth_tables(G) : ADIA_OK;
    if (s == ADIA_OK) s = adia__gen_build(&g, a, out);
    smooth_free(G);
    return s;
}

/* A real argument at index at, given or the default, must be > 0. */
static adia_status positive_real(const gen_args *a, int at, double def, const char *name,
                                 double *v)
{
    *v = a->count > at ? a->real : def;
    if (!(*v > 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": %s = %g must be "
                          "positive", a->spec, name, *v);
    return ADIA_OK;
}

adia_status adia__gen_aniso3d(const gen_args *a, adia_matrix **out)
{
    pde_grid G = {.kind = PDE_ANISO, .dims = 3, .w = {1, 1, 1}};
    ADIA_TRY(positive_real(a, 1, ANISO_EPS, "EPS", &G.w[2]));
    return pde_build(a, &G, out);
}

adia_status adia__gen_jump3d(const gen_args *a, adia_matrix **out)
{
    pde_grid G = {.kind = PDE_JUMP, .dims = 3};
    G.block = a->count > 1 ? a->num[1] : (a->num[0] >= 4 ? a->num[0] / 4 : 1);
    ADIA_TRY(positive_real(a, 2, JUMP_CONTRAST, "CONTRAST", &G.contrast));
    return pde_build(a, &G, out);
}

adia_status adia__gen_vardiff2d(const gen_args *a, adia_matrix **out)
{
    pde_grid G = {.kind = PDE_SMOOTH, .dims = 2};
    return pde_build(a, &G, out);
}

adia_status adia__gen_vardiff3d(const gen_args *a, adia_matrix **out)
{
    pde_grid G = {.kind = PDE_SMOOTH, .dims = 3};
    return pde_build(a, &G, out);
}

/* biharm1d: the 1D fourth difference d4u/dx4 on N points, rows (1, -4,
 * 6, -4, 1) at offsets -2..2, clamped ends (u = u' = 0: the ghost point
 * reflected, so the first and last rows' diagonal is 7).  Symmetric
 * positive definite with a condition number near N^4 / 16: CG + Jacobi
 * needs thousands of iterations at N = 1,000.  Its offsets fit a grid only
 * as 2 x N/2 with diagonal neighbours, where geometric coarsening does not
 * suit it (CG + mg: 97,078 iterations at N = 10,000, 2026-11-28): the
 * class of issue 30's item 3, banded SPD matrices that want aggregation of
 * consecutive rows. */
static int32_t biharm_row(const gen_rows *g, int32_t i, int32_t *col, double *val)
{
    static const double stencil[5] = {1, -4, 6, -4, 1};
    int32_t k = 0;
    for (int o = -2; o <= 2; o++) {
        const int64_t j = (int64_t)i + o;
        if (j < 0 || j >= g->rows) continue;
        if (col) {
            col[k] = (int32_t)j;
            val[k] = o == 0 && (i == 0 || i == g->rows - 1) ? 7 : stencil[o + 2];
        }
        k++;
    }
    return k;
}

/* Nonzeros of rows [first, first + rows): offset o holds N - |o| entries
 * in all (a block: unknown, -1). */
static int64_t biharm_count(const gen_rows *g, int32_t first, int32_t rows)
{
    if (first != 0 || rows != g->rows) return -1;
    int64_t nnz = 0;
    for (int o = -2; o <= 2; o++) nnz += g->rows > abs(o) ? g->rows - abs(o) : 0;
    return nnz;
}

adia_status adia__gen_biharm1d(const gen_args *a, adia_matrix **out)
{
    if (a->num[0] > INT32_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": N = %" PRId64 " has "
                          "more than 2147483647 points", a->spec, a->num[0]);
    const gen_rows g = {.rows = (int32_t)a->num[0], .cols = (int32_t)a->num[0], .max_row = 5,
                        .row = biharm_row, .count = biharm_count, .min_row = 1};
    return adia__gen_build(&g, a, out);
}
