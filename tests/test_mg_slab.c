/* test_mg_slab.c -- the premise of one multigrid across processes
 * (docs/distributed.md, "Next: one multigrid across processes"): a
 * process holding whole planes [z0, z1) of a grid gets its planes of the
 * Galerkin operator R A P exactly, from its slab of A's stencil and 2
 * ghost planes on each side (fewer at the grid's ends), with the
 * existing stencil Galerkin product -- level after level, the coarse
 * slabs' ghost planes being the neighbours' coarse planes.  Checked
 * against the whole grid's hierarchy, for full coarsening and for
 * semicoarsening with z halved or kept, 7- and 27-point fine stencils
 * with variable and jumping coefficients, 2 and 4 slabs. */
#include "testutil.h"
#include "precond/mg.h"

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

/* co: the directions halved on every level. */
static void check_slabs(const char *spec, int slabs, const int co[3])
{
    adia_matrix *A = test_generate(spec);
    if (!A) return;
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    const adia_csr c = {.rows = v.rows, .cols = v.cols, .nnz = v.nnz, .rowptr = (int64_t *)v.rowptr,
                        .colind = (int32_t *)v.colind, .values = (double *)v.values,
                        .vtype = ADIA_DOUBLE};
    const int nogrid[3] = {0, 0, 0};
    int32_t n[3];
    mg_stencil W[LEVELS + 1];   /* the whole grid's hierarchy */
    memset(W, 0, sizeof W);
    CHECK_OK(adia__mg_grid(&c, nogrid, n));
    CHECK_OK(adia__mg_stencil_from_csr(&c, n, &W[0]));
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
    adia_matrix_destroy(A);
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
    return TEST_END();
}
