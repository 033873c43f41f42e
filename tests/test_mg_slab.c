/* test_mg_slab.c -- the premise of one multigrid across processes
 * (docs/distributed.md, "Next: one multigrid across processes"): a
 * process holding whole planes [z0, z1) of a grid gets its planes of the
 * Galerkin operator R A P exactly, from its slab of A's stencil and 2
 * ghost planes on each side (fewer at the grid's ends), with the
 * existing stencil Galerkin product -- level after level, the coarse
 * slabs' ghost planes being the neighbours' coarse planes.  Checked
 * against the whole grid's hierarchy, for full coarsening and for
 * semicoarsening with z halved or kept, 7- and 27-point fine stencils
 * with variable and jumping coefficients, 2 and 4 slabs.  The transfers
 * likewise: R b and x + P xc on a slab whose vectors carry 2 ghost planes
 * a side are the whole grid's on its planes. */
#include "mg_testutil.h"

#include <string.h>

enum { GHOST = 2, LEVELS = 2 };

/* Planes [p0, p1) of S as a stencil of their own (copied). */
static mg_stencil planes(const mg_stencil *S, int32_t p0, int32_t p1)
{
    const int64_t plane = (int64_t)S->n[0] * S->n[1];
    mg_stencil E = {.n = {S->n[0], S->n[1], p1 - p0}, .rows = plane * (p1 - p0)};
    for (int p = 0; p < MG_POINTS; p++) {
        if (!S->coef[p]) continue;
        E.coef[p] = malloc((size_t)E.rows * sizeof(double) + 8);
        if (E.coef[p]) memcpy(E.coef[p], S->coef[p] + plane * p0, (size_t)E.rows * sizeof(double));
    }
    return E;
}

/* The largest difference between planes [c0, c0 + count) of the whole
 * coarse stencil W and planes [e0, e0 + count) of the slab's E,
 * relative to max |W|; a point present in one only counts its values. */
static double slab_diff(const mg_stencil *W, int32_t c0, const mg_stencil *E, int32_t e0,
                        int32_t count)
{
    const int64_t plane = (int64_t)W->n[0] * W->n[1], m = plane * count;
    double d = 0, big = 0;
    for (int p = 0; p < MG_POINTS; p++)
        for (int64_t i = 0; i < m; i++) {
            const double w = W->coef[p] ? W->coef[p][plane * c0 + i] : 0;
            const double e = E->coef[p] ? E->coef[p][plane * e0 + i] : 0;
            d = fmax(d, fabs(w - e));
            big = fmax(big, fabs(w));
        }
    return d / (big > 0 ? big : 1);
}

/* The transfers on slab [z0, z1) of fine grid n (coarse nc, halved co)
 * with GHOST planes of the vectors on each side: R b and x + P xc on the
 * slab's planes equal the whole grid's.  Returns the larger difference. */
static double check_transfers(const int32_t n[3], const int32_t nc[3], const int co[3], int32_t z0,
                              int32_t z1, const double *b, const double *xc, const double *rb,
                              const double *px)
{
    const int64_t fp = (int64_t)n[0] * n[1], cp = (int64_t)nc[0] * nc[1];
    const int32_t e0 = z0 - GHOST > 0 ? z0 - GHOST : 0, e1 = z1 + GHOST < n[2] ? z1 + GHOST : n[2];
    const int32_t ce0 = co[2] ? e0 / 2 : e0, ce1 = co[2] ? (e1 + 1) / 2 : e1;
    const int32_t c0 = co[2] ? z0 / 2 : z0, c1 = co[2] ? (z1 + 1) / 2 : z1;
    const int64_t fr = fp * (e1 - e0), cr = cp * (ce1 - ce0);
    mg_state S = {.device = 0};
    mg_level L = {.rows = fr, .n = {n[0], n[1], e1 - e0}};
    mg_level Lc = {.rows = cr, .n = {nc[0], nc[1], ce1 - ce0}};
    memcpy(Lc.coarsened, co, sizeof Lc.coarsened);
    L.t = calloc((size_t)fr + 1, sizeof(double));
    double *x = calloc((size_t)fr + 1, sizeof *x);
    Lc.b = calloc((size_t)cr + 1, sizeof(double));
    Lc.x = malloc((size_t)cr * sizeof(double) + 8);
    double d = 1;
    if (L.t && x && Lc.b && Lc.x) {
        memcpy(Lc.x, xc + cp * ce0, (size_t)cr * sizeof(double));
        CHECK_OK(adia__mg_cpu_kernels.restrict_residual(&S, &L, &Lc, 1.0, b + fp * e0, NULL));
        CHECK_OK(adia__mg_cpu_kernels.prolong(&S, &L, &Lc, x, NULL));
        d = 0;
        for (int64_t i = 0; i < cp * (c1 - c0); i++)
            d = fmax(d, fabs(((double *)Lc.b)[cp * (c0 - ce0) + i] - rb[cp * c0 + i]));
        for (int64_t i = 0; i < fp * (z1 - z0); i++)
            d = fmax(d, fabs(x[fp * (z0 - e0) + i] - px[fp * z0 + i]));
    }
    free(L.t), free(x), free(Lc.b), free(Lc.x);
    return d;
}

/* R b and P xc of the whole grid n against each slab's (random b, xc). */
static void check_slab_transfers(const int32_t n[3], int slabs, const int co[3], const char *what)
{
    int32_t nc[3];
    for (int d = 0; d < 3; d++) nc[d] = co[d] ? (n[d] + 1) / 2 : n[d];
    const int64_t fr = (int64_t)n[0] * n[1] * n[2], cr = (int64_t)nc[0] * nc[1] * nc[2];
    double *b = malloc((size_t)fr * sizeof *b), *xc = malloc((size_t)cr * sizeof *xc);
    double *rb = calloc((size_t)cr, sizeof *rb), *px = calloc((size_t)fr, sizeof *px);
    mg_state S = {.device = 0};
    mg_level L = {.rows = fr, .n = {n[0], n[1], n[2]}}, Lc = {.rows = cr, .n = {nc[0], nc[1], nc[2]}};
    memcpy(Lc.coarsened, co, sizeof Lc.coarsened);
    L.t = calloc((size_t)fr, sizeof(double));
    uint64_t seed = 17;
    test_rand_vector(&seed, b, fr);
    test_rand_vector(&seed, xc, cr);
    Lc.b = rb, Lc.x = xc;
    CHECK_OK(adia__mg_cpu_kernels.restrict_residual(&S, &L, &Lc, 1.0, b, NULL));
    CHECK_OK(adia__mg_cpu_kernels.prolong(&S, &L, &Lc, px, NULL));
    for (int s = 0; s < slabs; s++) {
        const double d = check_transfers(n, nc, co, n[2] / slabs * s, n[2] / slabs * (s + 1), b, xc,
                                         rb, px);
        CHECK(d == 0, "%s, slab %d of %d: the slab's R b and P xc differ by %g from the whole "
              "grid's", what, s, slabs, d);
    }
    free(b), free(xc), free(rb), free(px), free(L.t);
}

/* co: the directions halved on every level. */
static void check_slabs(const char *spec, int slabs, const int co[3])
{
    mg_stencil W[LEVELS + 1];   /* the whole grid's hierarchy */
    memset(W, 0, sizeof W);
    if (!host_stencil(spec, &W[0])) return;
    for (int l = 0; l < LEVELS; l++) {
        int32_t nc[3];
        for (int d = 0; d < 3; d++) nc[d] = co[d] ? (W[l].n[d] + 1) / 2 : W[l].n[d];
        CHECK_OK(adia__mg_galerkin(&W[l], nc, co, &W[l + 1]));
    }
    /* each slab, level by level: its planes and ghosts from the level's
     * whole stencil (what the neighbours hold), the product on them */
    double worst = 0;
    for (int s = 0; s < slabs; s++) {
        int32_t z0 = W[0].n[2] / slabs * s, z1 = W[0].n[2] / slabs * (s + 1);
        for (int l = 0; l < LEVELS; l++) {
            const int32_t nz = W[l].n[2];
            const int32_t e0 = z0 - GHOST > 0 ? z0 - GHOST : 0;
            const int32_t e1 = z1 + GHOST < nz ? z1 + GHOST : nz;
            mg_stencil E = planes(&W[l], e0, e1), C = {.rows = 0};
            int32_t nc[3];
            for (int d = 0; d < 3; d++) nc[d] = co[d] ? (E.n[d] + 1) / 2 : E.n[d];
            CHECK_OK(adia__mg_galerkin(&E, nc, co, &C));
            /* the slab's coarse planes: halved with z, else the same */
            const int32_t c0 = co[2] ? z0 / 2 : z0, c1 = co[2] ? (z1 + 1) / 2 : z1;
            const int32_t ce0 = co[2] ? e0 / 2 : e0;
            const double d = slab_diff(&W[l + 1], c0, &C, c0 - ce0, c1 - c0);
            CHECK(d < 1e-15, "%s, %d slabs, slab %d planes [%d, %d) of level %d: R A P differs "
                  "by %g from the whole grid's", spec, slabs, s, c0, c1, l + 1, d);
            worst = fmax(worst, d);
            adia__mg_stencil_free(&E);
            adia__mg_stencil_free(&C);
            z0 = c0, z1 = c1;
        }
    }
    printf("%s, %d slabs, halved %d%d%d: largest difference %g\n", spec, slabs, co[0], co[1],
           co[2], worst);
    for (int l = 0; l <= LEVELS; l++) adia__mg_stencil_free(&W[l]);
}

int main(void)
{
    TEST_BEGIN();
    const int full[3] = {1, 1, 1}, xy[3] = {1, 1, 0}, z[3] = {0, 0, 1};
    check_slabs("vardiff3d:16", 2, full);
    check_slabs("vardiff3d:16", 4, full);
    check_slabs("jump3d:16,4", 4, full);
    check_slabs("lap3d27:7x6x16", 2, full);
    check_slabs("jump3d:16,4", 2, xy);
    check_slabs("aniso3d:16", 4, z);
    check_slab_transfers((const int32_t[3]){7, 6, 16}, 4, full, "7x6x16 halved 111");
    check_slab_transfers((const int32_t[3]){8, 5, 12}, 2, z, "8x5x12 halved 001");
    check_slab_transfers((const int32_t[3]){9, 8, 8}, 2, xy, "9x8x8 halved 110");
    return TEST_END();
}
