/* mg_galerkin.c -- coarse grids, trilinear interpolation P (restriction
 * R = P^T), the Galerkin operator A_c = R A P computed point by point in
 * stencil form (a 7-point fine operator gives a 27-point coarse one;
 * variable coefficients kept), and a level's CSR.
 *
 * P is a tensor product of 1D linear interpolations: along a halved
 * direction fine point 2c takes coarse c (weight 1), fine 2c + 1 takes c
 * and c + 1 (1/2 each; c + 1 past the end: the Dirichlet boundary's zero,
 * so only 1/2 of c); a direction not halved is the identity.  Which
 * directions halve is the coarsening rule's (adia__mg_coarse_grid): every
 * one (full coarsening), or only the strongly coupled ones
 * (semicoarsening, hypre PFMG's idea: a point smoother leaves the error
 * smooth only along the strong couplings, so only those may be coarsened). */
#include "mg.h"

#define PARALLEL_ROWS 2000

/* A direction of one point has nothing to coarsen (and no coupling).
 * Without any coupling (a diagonal operator) every direction halves.
 * SEMI: the first of the strongest.  AUTO: those within MG_SEMI_FACTOR of
 * the strongest (the comparison in double: the integers convert alike on
 * every machine). */
void adia__mg_coarse_grid(const int32_t n[3], const uint64_t c[3], mg_coarsening mode,
                          int32_t nc[3], int coarsened[3])
{
    uint64_t cmax = 0;
    int strongest = -1;
    for (int d = 0; d < 3; d++)
        if (n[d] > 1 && (strongest < 0 || c[d] > cmax)) cmax = c[d], strongest = d;
    for (int d = 0; d < 3; d++) {
        coarsened[d] = n[d] > 1;
        if (coarsened[d] && cmax > 0 && mode == MG_COARSEN_SEMI) coarsened[d] = d == strongest;
        if (coarsened[d] && cmax > 0 && mode == MG_COARSEN_AUTO)
            coarsened[d] = (double)c[d] * MG_SEMI_FACTOR >= (double)cmax;
        nc[d] = coarsened[d] ? (n[d] + 1) / 2 : n[d];
    }
}

void adia__mg_coupling(const mg_stencil *S, uint64_t c[3])
{
    adia__mg_coupling_rows(S, 0, S->rows, c);
}

void adia__mg_coupling_rows(const mg_stencil *S, int64_t r0, int64_t r1, uint64_t c[3])
{
    uint64_t cx = 0, cy = 0, cz = 0;
#pragma omp parallel for schedule(static) if (r1 - r0 > PARALLEL_ROWS) num_threads(adia__threads()) \
    reduction(+ : cx, cy, cz)
    for (int64_t i = r0; i < r1; i++) {
        uint64_t r[3] = {0, 0, 0};
        mg_row_coupling(S, i, r);
        cx += r[0], cy += r[1], cz += r[2];
    }
    c[0] = cx, c[1] = cy, c[2] = cz;
}

/* The parents of a fine point along one direction: n of them, each a
 * coarse point's share q of the stencil point's number (stride (dq + 1),
 * stride 1, 3, 9 for x, y, z) and its halves h (mg_parent's slots that
 * are one). */
typedef struct {
    int n, q[2], h[2];
} rap_up;

/* One direction of a coarse row's Galerkin terms: its children (slot k:
 * fine point f[k], R's halves hr[k]; on[k] 0 where slot k is no child)
 * and the parents of the point child k's stencil step dp reaches. */
typedef struct {
    int32_t f[3];
    int hr[3], on[3];
    rap_up up[3][3];   /* [k][dp + 1] */
} rap_dir;

static void rap_direction(int coarsened, int32_t ci, int32_t nf, int32_t nc, int stride,
                          rap_dir *r)
{
    for (int k = 0; k < 3; k++) {
        double w;
        r->on[k] = mg_child(coarsened, ci, nf, 0, k, &r->f[k], &w);
        r->hr[k] = w != 1;
        for (int dp = -1; dp <= 1; dp++) {
            rap_up *u = &r->up[k][dp + 1];
            u->n = 0;
            for (int e = 0; e < 2; e++) {   /* a fine point off the grid has a zero a_p */
                int32_t c;
                if (!mg_parent(coarsened, r->f[k] + dp, nc, 0, e, &c, &w)) continue;
                u->q[u->n] = stride * (c - ci + 1);
                u->h[u->n++] = w != 1;
            }
        }
    }
}

/* One coarse row of the Galerkin product, acc[q] = (R A P)(I, I + q) for
 * the 27 coarse points q around I (coarse coordinates ci).  Its terms,
 * one per child (fine point 2 ci + dk), stencil point p (dp) and parent of
 * the fine point reached, are added into acc[q] in the order of dk_z,
 * dp_z, dk_y, dp_y, dk_x, dp_x (each -1, 0, 1), each a_p times its weight
 * (R's times P's: a power of 2) by mg_add_mul.  The device's kernel
 * (mg_setup_gpu.cu) adds each q's terms in this order with these
 * operations: the same bits. */
static void galerkin_row(const mg_stencil *A, const int32_t nc[3], const int co[3],
                         const int64_t ci[3], double acc[MG_POINTS])
{
    rap_dir r[3];
    for (int d = 0; d < 3; d++)
        rap_direction(co[d], (int32_t)ci[d], A->n[d], nc[d], d == 0 ? 1 : d == 1 ? 3 : 9, &r[d]);
    for (int q = 0; q < MG_POINTS; q++) acc[q] = 0;
    const int64_t nx = A->n[0], nxy = nx * A->n[1];
    for (int kz = 0; kz < 3; kz++) {
        if (!r[2].on[kz]) continue;
        for (int pz = 0; pz < 3; pz++) {
            const int64_t iz = nxy * r[2].f[kz];
            for (int ky = 0; ky < 3; ky++) {
                if (!r[1].on[ky]) continue;
                for (int py = 0; py < 3; py++) {
                    const int64_t iy = iz + nx * r[1].f[ky];
                    for (int kx = 0; kx < 3; kx++) {
                        if (!r[0].on[kx]) continue;
                        const int64_t i = iy + r[0].f[kx];
                        const int hr = r[0].hr[kx] + r[1].hr[ky] + r[2].hr[kz];
                        for (int px = 0; px < 3; px++) {
                            const double *a = A->coef[px + 3 * py + 9 * pz];
                            if (!a || a[i] == 0) continue;   /* a nonzero stays on the grid */
                            const rap_up *ux = &r[0].up[kx][px], *uy = &r[1].up[ky][py],
                                         *uz = &r[2].up[kz][pz];
                            for (int z = 0; z < uz->n; z++)
                                for (int y = 0; y < uy->n; y++)
                                    for (int x = 0; x < ux->n; x++) {
                                        const int q = ux->q[x] + uy->q[y] + uz->q[z];
                                        const int m = hr + ux->h[x] + uy->h[y] + uz->h[z];
                                        acc[q] = mg_add_mul(acc[q], a[i], mg_half_pow(m));
                                    }
                        }
                    }
                }
            }
        }
    }
}

/* Rows whose three directions' lists (rap_direction) are one row's, the
 * representative's, shifted: their terms are its terms, listed once --
 * each (child, point) pair in galerkin_row's order with its value's
 * offset from the row's first child and its parents' (q, 2^-m) -- so such
 * a row is a walk down the list, not the lists made again: the same terms
 * in the same order, the same bits.  The other rows (the grid's edges)
 * take galerkin_row. */
typedef struct rap_table {
    int npairs, nparents;
    struct { int p, parents; int64_t off; } pair[729];   /* parents: how many */
    struct { int q; double w; } parent[2197];
} rap_table;

/* 1: ci's lists along a direction are rep's shifted (on, hr, up alike). */
static int same_lists(const rap_dir *a, const rap_dir *rep)
{
    for (int k = 0; k < 3; k++) {
        if (a->on[k] != rep->on[k] || (a->on[k] && a->hr[k] != rep->hr[k])) return 0;
        for (int dp = 0; dp < 3 && a->on[k]; dp++) {
            const rap_up *u = &a->up[k][dp], *v = &rep->up[k][dp];
            if (u->n != v->n) return 0;
            for (int e = 0; e < u->n; e++)
                if (u->q[e] != v->q[e] || u->h[e] != v->h[e]) return 0;
        }
    }
    return 1;
}

/* The representative's terms (rep[d]: its lists), A's points present. */
static void rap_table_make(const mg_stencil *A, const rap_dir rep[3], const int32_t f0[3],
                           rap_table *t)
{
    const int64_t nx = A->n[0], nxy = nx * A->n[1];
    t->npairs = t->nparents = 0;
    for (int kz = 0; kz < 3; kz++) {
        if (!rep[2].on[kz]) continue;
        for (int pz = 0; pz < 3; pz++)
            for (int ky = 0; ky < 3; ky++) {
                if (!rep[1].on[ky]) continue;
                for (int py = 0; py < 3; py++)
                    for (int kx = 0; kx < 3; kx++) {
                        if (!rep[0].on[kx]) continue;
                        const int hr = rep[0].hr[kx] + rep[1].hr[ky] + rep[2].hr[kz];
                        const int64_t off = (rep[0].f[kx] - f0[0]) + nx * (rep[1].f[ky] - f0[1]) +
                                            nxy * (rep[2].f[kz] - f0[2]);
                        for (int px = 0; px < 3; px++) {
                            const int p = px + 3 * py + 9 * pz;
                            if (!A->coef[p]) continue;
                            const rap_up *ux = &rep[0].up[kx][px], *uy = &rep[1].up[ky][py],
                                         *uz = &rep[2].up[kz][pz];
                            const int first = t->nparents;
                            for (int z = 0; z < uz->n; z++)
                                for (int y = 0; y < uy->n; y++)
                                    for (int x = 0; x < ux->n; x++) {
                                        t->parent[t->nparents].q = ux->q[x] + uy->q[y] + uz->q[z];
                                        t->parent[t->nparents++].w = mg_half_pow(
                                            hr + ux->h[x] + uy->h[y] + uz->h[z]);
                                    }
                            t->pair[t->npairs].p = p;
                            t->pair[t->npairs].off = off;
                            t->pair[t->npairs++].parents = t->nparents - first;
                        }
                    }
            }
    }
}

/* A row whose lists are the table's: galerkin_row's sums (a zero a_p
 * adds nothing there, skipped alike here). */
static void table_row(const mg_stencil *A, const rap_table *t, int64_t base,
                      double acc[MG_POINTS])
{
    for (int q = 0; q < MG_POINTS; q++) acc[q] = 0;
    for (int e = 0, k = 0; e < t->npairs; k += t->pair[e++].parents) {
        const double a = A->coef[t->pair[e].p][base + t->pair[e].off];
        if (a == 0) continue;
        for (int j = k; j < k + t->pair[e].parents; j++)
            acc[t->parent[j].q] = mg_add_mul(acc[t->parent[j].q], a, t->parent[j].w);
    }
}

adia_status adia__mg_galerkin(const mg_stencil *A, const int32_t nc[3], const int coarsened[3],
                              mg_stencil *C)
{
    *C = (mg_stencil){.n = {nc[0], nc[1], nc[2]}, .rows = (int64_t)nc[0] * nc[1] * nc[2]};
    for (int p = 0; p < MG_POINTS; p++) {
        C->coef[p] = adia__alloc((size_t)C->rows + 1, sizeof(double), "mg coarse stencil");
        if (!C->coef[p]) {
            adia__mg_stencil_free(C);
            return ADIA_ERR_NO_MEMORY;
        }
    }
    /* the representative: a middle row; which coordinates share its lists */
    rap_dir rep[3];
    int32_t f0[3];
    uint8_t *same[3] = {NULL, NULL, NULL};
    rap_table *t = adia__alloc(1, sizeof *t, "mg Galerkin terms");
    adia_status s = t ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int d = 0; d < 3 && s == ADIA_OK; d++) {
        const int stride = d == 0 ? 1 : d == 1 ? 3 : 9;
        const int32_t mid = nc[d] / 2;
        f0[d] = coarsened[d] ? 2 * mid : mid;
        rap_direction(coarsened[d], mid, A->n[d], nc[d], stride, &rep[d]);
        same[d] = adia__alloc((size_t)nc[d], 1, "mg Galerkin rows");
        if (!same[d]) {
            s = ADIA_ERR_NO_MEMORY;
            break;
        }
        for (int32_t c = 0; c < nc[d]; c++) {
            rap_dir r;
            rap_direction(coarsened[d], c, A->n[d], nc[d], stride, &r);
            same[d][c] = (uint8_t)same_lists(&r, &rep[d]);
        }
    }
    if (s == ADIA_OK) rap_table_make(A, rep, f0, t);
    const int64_t rows = C->rows, nx = A->n[0], nxy = nx * A->n[1];
#pragma omp parallel for schedule(static) if (s == ADIA_OK && rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t I = 0; I < rows; I++) {
        if (s != ADIA_OK) continue;
        const int64_t ci[3] = {I % nc[0], I / nc[0] % nc[1], I / ((int64_t)nc[0] * nc[1])};
        double acc[MG_POINTS];
        if (same[0][ci[0]] && same[1][ci[1]] && same[2][ci[2]]) {
            int64_t f[3];
            for (int d = 0; d < 3; d++) f[d] = coarsened[d] ? 2 * ci[d] : ci[d];
            table_row(A, t, f[0] + nx * f[1] + nxy * f[2], acc);
        } else {
            galerkin_row(A, nc, coarsened, ci, acc);
        }
        for (int p = 0; p < MG_POINTS; p++) C->coef[p][I] = acc[p];
    }
    free(t);
    for (int d = 0; d < 3; d++) free(same[d]);
    if (s != ADIA_OK) {
        adia__mg_stencil_free(C);
        return s;
    }
    for (int p = 0; p < MG_POINTS; p++) {   /* drop the points that are zero everywhere */
        int64_t I = 0;
        while (I < rows && C->coef[p][I] == 0) I++;
        if (I == rows && p != mg_point(0, 0, 0)) {
            free(C->coef[p]);
            C->coef[p] = NULL;
        }
    }
    return ADIA_OK;
}

void adia__mg_dia_layout(const mg_stencil *S, int64_t offsets[MG_POINTS], mg_dia_map *m)
{
    int64_t off[MG_POINTS];
    int pts[MG_POINTS], np = 0;
    for (int p = 0; p < MG_POINTS; p++) {
        if (!S->coef[p]) continue;
        const int64_t o = mg_dx(p, 0) + (int64_t)S->n[0] * (mg_dx(p, 1) + (int64_t)S->n[1] *
                                                                             mg_dx(p, 2));
        int k = np++;   /* insertion by offset; equal offsets keep the order of p */
        while (k > 0 && off[k - 1] > o) off[k] = off[k - 1], pts[k] = pts[k - 1], k--;
        off[k] = o, pts[k] = p;
    }
    m->ndiag = 0;
    for (int e = 0; e < np; e++) {
        if (e == 0 || off[e] != off[e - 1]) {
            offsets[m->ndiag] = off[e];
            m->first[m->ndiag++] = e;
        }
        m->pt[e] = pts[e];
    }
    m->first[m->ndiag] = np;
}

adia_status adia__mg_host_dia(const mg_stencil *S, int64_t offsets[MG_POINTS], int *ndiag,
                              double **values, int64_t *nnz)
{
    mg_dia_map m;
    adia__mg_dia_layout(S, offsets, &m);
    *ndiag = m.ndiag;
    *nnz = 0;
    double *v = adia__alloc((size_t)(S->rows * m.ndiag) + 1, sizeof *v, "mg level diagonals");
    *values = v;
    if (!v) return ADIA_ERR_NO_MEMORY;
    int64_t count = 0;
#pragma omp parallel for reduction(+ : count) schedule(static) if (S->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < S->rows; i++) {
        int64_t c[3];
        c[0] = i % S->n[0], c[1] = i / S->n[0] % S->n[1], c[2] = i / ((int64_t)S->n[0] * S->n[1]);
        for (int k = 0; k < m.ndiag; k++) {
            double x = 0;   /* a point off the grid: the slot's 0 (DIA's outside slots too) */
            for (int e = m.first[k]; e < m.first[k + 1]; e++)
                if (mg_inside(S, c, m.pt[e])) x = S->coef[m.pt[e]][i];
            v[(int64_t)k * S->rows + i] = x;
            count += x != 0;
        }
    }
    *nnz = count;
    return ADIA_OK;
}

/* The column of point p from row i = (x, y, z), or -1 outside the grid. */
static int64_t neighbour(const mg_stencil *S, const int64_t c[3], int p)
{
    int64_t j[3];
    for (int d = 0; d < 3; d++) {
        j[d] = c[d] + mg_dx(p, d);
        if (j[d] < 0 || j[d] >= S->n[d]) return -1;
    }
    return j[0] + S->n[0] * (j[1] + (int64_t)S->n[1] * j[2]);
}

static void row_coords(const mg_stencil *S, int64_t i, int64_t c[3])
{
    c[0] = i % S->n[0];
    c[1] = i / S->n[0] % S->n[1];
    c[2] = i / ((int64_t)S->n[0] * S->n[1]);
}

/* Line by line (x fastest): each present point adds a shifted product
 * over the line's points whose neighbour exists (a contiguous range). */
void adia__mg_stencil_apply(const mg_stencil *S, const double *x, double *y)
{
    const int64_t nx = S->n[0], ny = S->n[1], nz = S->n[2];
#pragma omp parallel for schedule(static) if (S->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t line = 0; line < ny * nz; line++) {
        const int64_t yy = line % ny, zz = line / ny, i0 = line * nx;
        double *yl = y + i0;
        for (int64_t k = 0; k < nx; k++) yl[k] = 0;
        for (int p = 0; p < MG_POINTS; p++) {
            const int dx = mg_dx(p, 0), dy = mg_dx(p, 1), dz = mg_dx(p, 2);
            if (!S->coef[p] || yy + dy < 0 || yy + dy >= ny || zz + dz < 0 || zz + dz >= nz)
                continue;
            const double *c = S->coef[p] + i0, *xl = x + i0 + dx + nx * (dy + ny * dz);
            for (int64_t k = dx < 0 ? 1 : 0; k < (dx > 0 ? nx - 1 : nx); k++) yl[k] += c[k] * xl[k];
        }
    }
}

/* Points in ascending p are columns in ascending order within a row (the
 * valid dx of a row span at most nx - 1, and likewise dy): the CSR comes
 * out sorted and unique. */
adia_status adia__mg_stencil_to_matrix(const mg_stencil *S, adia_matrix **out, int *points)
{
    *out = NULL;
    *points = 0;
    for (int p = 0; p < MG_POINTS; p++) *points += S->coef[p] != NULL;
    adia_csr c;
    int64_t *count = adia__calloc((size_t)S->rows + 1, sizeof *count, "mg level rows");
    if (!count) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel for schedule(static) if (S->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < S->rows; i++) {
        int64_t ci[3], k = 0;
        row_coords(S, i, ci);
        for (int p = 0; p < MG_POINTS; p++)
            k += S->coef[p] && S->coef[p][i] != 0 && neighbour(S, ci, p) >= 0;
        count[i + 1] = k;
    }
    for (int64_t i = 0; i < S->rows; i++) count[i + 1] += count[i];
    adia_status st = adia__csr_alloc(&c, (int32_t)S->rows, (int32_t)S->rows, count[S->rows],
                                     ADIA_DOUBLE);
    if (st != ADIA_OK) {
        free(count);
        return st;
    }
    memcpy(c.rowptr, count, ((size_t)S->rows + 1) * sizeof *count);
    free(count);
    double *v = c.values;
#pragma omp parallel for schedule(static) if (S->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < S->rows; i++) {
        int64_t ci[3], k = c.rowptr[i];
        row_coords(S, i, ci);
        for (int p = 0; p < MG_POINTS; p++) {
            if (!S->coef[p] || S->coef[p][i] == 0) continue;
            const int64_t j = neighbour(S, ci, p);
            if (j < 0) continue;
            c.colind[k] = (int32_t)j;
            v[k++] = S->coef[p][i];
        }
    }
    return adia__matrix_wrap(&c, out);
}
