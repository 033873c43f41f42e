/* mg_slab.c -- the multigrid hierarchy across processes (adia_slab_comm):
 * the grid is split by planes, each process holds its own planes of every
 * level and `ghosts` of its neighbours' on each side, and the cycle's
 * kernels (mg_cpu.c, mg_gpu.cu) run on that slab as on a whole grid.
 *
 * Why it is exact: a slab's edge is a false Dirichlet boundary, so what
 * the kernels compute on the outermost ghost plane is wrong, and a
 * product carries the error one plane inwards.  With 2 ghost planes the
 * Galerkin product's own coarse rows read only right fine rows (coarse
 * plane c reads fine planes 2c - 2 .. 2c + 2), and so do the restriction
 * (2c - 1 .. 2c + 1) and the prolongation -- tests/test_mg_slab.c checks
 * them bit for bit against the whole grid.  The cycle counts how many
 * ghost planes of each vector are still right and refills them from their
 * owners only where the next step needs one more (mg.c).
 *
 * Coarse plane c is owned by the owner of fine plane 2c (z halved), so
 * every process keeps ceil(z0 / 2) .. ceil(z1 / 2); the Galerkin product
 * runs on the fine slab from an even plane (coarse c on fine 2c, as on the
 * whole grid), its own coarse planes are copied into the coarse slab and
 * the coarse ghost planes exchanged.  A level whose grid is small
 * (SLAB_GATHER_ROWS) or not spread over every process is gathered whole
 * onto every process, where a one-process mg (any kind of plan, the
 * device set-up included) is its solver: the same on every process, so
 * each takes its own planes of the answer. */
#include "mg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Levels of at most this many rows are gathered: the one-process mg below
 * them costs each process what a slab of the same rows would, without the
 * exchanges (about 10 us each on a GPU: more than a small level's work). */
#define SLAB_GATHER_ROWS 32768

static adia_status agree(const mg_state *S, adia_status s)
{
    return S->slab->agree(S->slab->ctx, s);
}

static int64_t plane_of(const mg_level *L)
{
    return (int64_t)L->n[0] * L->n[1];
}

adia_status adia__mg_copy(const mg_state *S, int64_t n, double alpha, const void *x, void *y,
                          void *stream)
{
    return adia__precond_scale(S->device, S->lev[0].vtype, n, alpha, NULL, x, y, stream);
}

/* The level's planes: own [z0, z1) of nz, held [zs, zs + n[2]). */
static void place(const mg_state *S, mg_level *L, const int32_t nxy[2], int64_t nz, int64_t z0,
                  int64_t z1)
{
    const int g = S->slab->ghosts;
    L->nz = nz, L->z0 = z0, L->z1 = z1;
    L->zs = z0 - g > 0 ? z0 - g : 0;
    const int64_t ze = z1 + g < nz ? z1 + g : nz;
    const int32_t n[3] = {nxy[0], nxy[1], (int32_t)(ze - L->zs)};
    adia__mg_set_grid(L, n);
}

static adia_status layout(const mg_state *S, int l)
{
    const mg_level *L = &S->lev[l];
    const adia_slab_comm *c = S->slab;
    return agree(S, c->layout(c->ctx, l, plane_of(L), L->nz, L->z0, L->z1, L->zs,
                              L->zs + L->n[2]));
}

/* ---- stencils where the plan lives: host arrays (a CPU plan) or device
 * arrays (a GPU plan: the set-up runs there, as mg_device.c's) */

static unsigned points_of(const mg_stencil *st)
{
    unsigned m = 0;
    for (int p = 0; p < MG_POINTS; p++) m |= (unsigned)(st->coef[p] != NULL) << p;
    return m;
}

/* Zeroed arrays of grid n for the points in mask and the centre. */
static adia_status zeros(const mg_state *S, mg_stencil *st, const int32_t n[3], unsigned mask)
{
    if (S->device) return adia__mg_gpu_stencil_zeros(st, n, mask);
    *st = (mg_stencil){.n = {n[0], n[1], n[2]}, .rows = (int64_t)n[0] * n[1] * n[2]};
    mask |= 1u << mg_point(0, 0, 0);
    for (int p = 0; p < MG_POINTS; p++) {
        if (!(mask >> p & 1)) continue;
        st->coef[p] = adia__calloc((size_t)st->rows + 1, sizeof(double), "mg slab stencil");
        if (!st->coef[p]) {
            adia__mg_stencil_free(st);
            return ADIA_ERR_NO_MEMORY;
        }
    }
    return ADIA_OK;
}

static void release(const mg_state *S, mg_stencil *st)
{
    if (S->device) adia__mg_gpu_stencil_free(st);
    else adia__mg_stencil_free(st);
}

/* The points present on any process (their counts summed). */
static unsigned union_points(const mg_state *S, unsigned mine)
{
    uint64_t have[MG_POINTS];
    for (int p = 0; p < MG_POINTS; p++) have[p] = mine >> p & 1;
    S->slab->sum_u64(S->slab->ctx, have, MG_POINTS);
    unsigned all = 0;
    for (int p = 0; p < MG_POINTS; p++) all |= (unsigned)(have[p] > 0) << p;
    return all;
}

/* Every point present on some process gets an array (zeros where it is
 * absent here) on all: the exchanges then run alike everywhere. */
static adia_status agree_points(const mg_state *S, mg_stencil *st)
{
    const unsigned mine = points_of(st), all = union_points(S, mine);
    adia_status s = ADIA_OK;
    if (all != mine) {
        mg_stencil u;
        s = zeros(S, &u, st->n, all);
        for (int p = 0; p < MG_POINTS && s == ADIA_OK; p++)
            if (st->coef[p]) s = adia__mg_copy(S, st->rows, 1.0, st->coef[p], u.coef[p], NULL);
        if (s == ADIA_OK) release(S, st), *st = u;
        else if (u.coef[mg_point(0, 0, 0)]) release(S, &u);   /* made, not filled */
    }
    return agree(S, s);
}

/* The ghost planes of every point's coefficients from their owners. */
static adia_status exchange_stencil(const mg_state *S, int l, mg_stencil *st)
{
    adia_status s = ADIA_OK;
    for (int p = 0; p < MG_POINTS; p++)
        if (st->coef[p] && s == ADIA_OK)
            s = S->slab->exchange(S->slab->ctx, l, st->coef[p], S->device, NULL);
    return agree(S, s);
}

/* The grid checked against the plan's planes. */
static adia_status check_planes(mg_state *S, const int32_t n[3])
{
    const adia_slab_comm *c = S->slab;
    mg_level *L = &S->lev[0];
    place(S, L, n, c->nz, c->z0, c->z1);
    if (L->zs == c->zs && L->n[2] == n[2]) return ADIA_OK;
    return adia__error(ADIA_ERR_INVALID_ARG, "mg across processes: the plan holds planes [%lld, "
                      "%lld) of %lld, owns [%lld, %lld): it must hold [%lld, %lld)",
                      (long long)c->zs, (long long)(c->zs + n[2]), (long long)c->nz,
                      (long long)c->z0, (long long)c->z1, (long long)L->zs,
                      (long long)(L->zs + L->n[2]));
}

/* Level 0's stencil on the host, from the plan's CSR. */
static adia_status finest_host(adia_precond *M, mg_state *S, const adia_precond_options *o,
                               mg_stencil *st)
{
    adia_matrix *A = NULL;
    adia_status s = adia_format_to_matrix(adia_plan_format(M->plan), &A);
    int32_t n[3] = {0, 0, 0};
    if (s == ADIA_OK) s = adia__mg_grid(&A->csr, o->grid, n);
    if (s == ADIA_OK) s = check_planes(S, n);
    const double t1 = adia__now_ms();
    if (s == ADIA_OK) s = adia__mg_stencil_from_csr(&A->csr, n, st);
    if (A) S->lev[0].nnz = A->csr.nnz;
    adia_matrix_destroy(A);
    S->ms.stencil = adia__now_ms() - t1;
    return s;
}

/* Level 0's stencil on the device from the plan's diagonals (lent where
 * they are a double DIA's); *viewed 0: its storage is not readable there. */
static adia_status finest_device(adia_precond *M, mg_state *S, const adia_precond_options *o,
                                 mg_stencil *st, int *viewed)
{
    mg_dview v;
    adia_status s = adia__mg_gpu_view(M->plan, &v, S->setup.why_host, sizeof S->setup.why_host);
    uint64_t unread = s == ADIA_ERR_UNSUPPORTED;
    S->slab->sum_u64(S->slab->ctx, &unread, 1);   /* the same route on every process */
    *viewed = unread == 0;
    if (!*viewed) {   /* the host's stencils would not be device arrays */
        adia__mg_gpu_view_free(&v);
        return adia__error(ADIA_ERR_UNSUPPORTED, "mg across processes: a GPU plan whose "
                          "storage the device set-up cannot read (%s; the slab's plan must be "
                          "dia)", S->setup.why_host[0] ? S->setup.why_host : "another process's");
    }
    int32_t n[3];
    for (int d = 0; d < 3; d++) n[d] = o->grid[d] > 0 ? o->grid[d] : 1;
    int64_t bad = 0, bad_diag = 0, j = 0;
    double val = 0;
    unsigned mask = 0;
    if (s == ADIA_OK)
        s = (int64_t)n[0] * n[1] * n[2] == v.rows
                ? check_planes(S, n)
                : adia__error(ADIA_ERR_INVALID_ARG, "mg across processes: grid %dx%dx%d is not "
                             "the plan's %d rows", n[0], n[1], n[2], v.rows);
    if (s == ADIA_OK) s = adia__mg_gpu_check(&v, n, &bad, &mask);
    if (s == ADIA_OK && bad < v.rows) {   /* the entry named */
        s = adia__mg_gpu_bad_entry(&v, n, bad, &j, &val);
        if (s == ADIA_OK) s = adia__mg_error_off_grid(n, bad, j, val);
    }
    s = agree(S, s);
    const double t1 = adia__now_ms();
    if (s == ADIA_OK) {
        mask = union_points(S, mask);
        s = adia__mg_gpu_stencil(&v, n, mask, st, &bad_diag, &val);
        if (s == ADIA_OK && bad_diag < v.rows) s = adia__mg_error_diagonal(n, bad_diag, val);
    }
    adia__mg_gpu_view_free(&v);
    S->lev[0].nnz = adia_format_nnz(adia_plan_format(M->plan));
    S->setup.on_device = 1;
    S->setup.lent = st->lent;
    S->ms.stencil = adia__now_ms() - t1;
    return s;
}

/* Level 0: the plan's rows, planes [zs, ze) of the caller's slab. */
static adia_status finest(adia_precond *M, mg_state *S, const adia_precond_options *o,
                          mg_stencil *st)
{
    const double t0 = adia__now_ms();
    int viewed = 0;
    adia_status s = S->device ? finest_device(M, S, o, st, &viewed) : finest_host(M, S, o, st);
    if (s == ADIA_ERR_INVALID_ARG) {   /* its rows and points are the slab's: say so */
        char why[768];
        snprintf(why, sizeof why, "%s", adia_last_error());
        const adia_slab_comm *c = S->slab;
        s = adia__error(s, "mg across processes, the slab of planes %lld.. of a grid of %lld "
                        "planes (rows and points numbered from its first): %s", (long long)c->zs,
                        (long long)c->nz, why);
    }
    ADIA_TRY(agree(S, s));
    ADIA_TRY(agree_points(S, st));
    S->ms.grid = adia__now_ms() - t0 - S->ms.stencil;
    mg_level *L = &S->lev[0];
    L->plan = M->plan;
    for (int p = 0; p < MG_POINTS; p++) L->points += st->coef[p] != NULL;
    S->nlev = 1;
    return layout(S, 0);
}

/* SLAB_GATHER_ROWS, or ADIA_MG_GATHER_ROWS (tests: slabs of small grids
 * coarsened over several levels; measurements). */
static adia_status gather_rows(int64_t *rows)
{
    const char *env = getenv("ADIA_MG_GATHER_ROWS");
    *rows = SLAB_GATHER_ROWS;
    if (!env || !*env) return ADIA_OK;
    char *end = NULL;
    const long long v = strtoll(env, &end, 10);
    if (*end || v < 1)
        return adia__error(ADIA_ERR_INVALID_ARG, "ADIA_MG_GATHER_ROWS=%s: a positive count of "
                          "rows", env);
    *rows = v;
    return ADIA_OK;
}

/* Whether level L is smoothed across the processes (else gathered): not
 * the last allowed, above `most` rows and above the rows one process
 * would coarsen no further (the same hierarchy as one process's), every
 * process owning a plane. */
static int spread(const mg_state *S, const mg_level *L, int max_levels, int64_t most)
{
    const int64_t rows = plane_of(L) * L->nz;
    /* processes owning no plane, and those whose most says gather: every
     * process decides on the same sums */
    uint64_t no[2] = {L->z1 <= L->z0, !(rows > most)};
    S->slab->sum_u64(S->slab->ctx, no, 2);
    const int64_t n[3] = {L->n[0], L->n[1], L->nz};
    return S->nlev < max_levels && !adia__mg_coarse_enough(n) && no[0] == 0 && no[1] == 0;
}

/* Level l + 1 from level l: the coarse grid by the couplings of every
 * process's own rows, the Galerkin product on the fine slab, the coarse
 * slab's own planes from it and its ghost planes from their owners. */
static adia_status coarsen(mg_state *S, int l, mg_stencil *st)
{
    mg_level *L = &S->lev[l], *C = L + 1;
    const int64_t plane = plane_of(L), r0 = (L->z0 - L->zs) * plane, r1 = (L->z1 - L->zs) * plane;
    const double t0 = adia__now_ms();
    if (S->device) ADIA_TRY(agree(S, adia__mg_gpu_coupling_rows(&st[l], r0, r1, L->coupling)));
    else adia__mg_coupling_rows(&st[l], r0, r1, L->coupling);
    S->slab->sum_u64(S->slab->ctx, L->coupling, 3);
    const int32_t whole[3] = {L->n[0], L->n[1], (int32_t)L->nz};
    int32_t nc[3];
    adia__mg_coarse_grid(whole, L->coupling, S->coarsening, nc, C->coarsened);
    const int hz = C->coarsened[2];
    place(S, C, nc, nc[2], hz ? (L->z0 + 1) / 2 : L->z0, hz ? (L->z1 + 1) / 2 : L->z1);
    C->shift = hz ? 2 * C->zs - L->zs : C->zs - L->zs;
    /* the fine slab from an even plane: its coarse plane c lies on its
     * fine plane 2c, as on the whole grid */
    const int64_t skip = hz ? L->zs & 1 : 0;
    mg_stencil V = {.n = {L->n[0], L->n[1], (int32_t)(L->n[2] - skip)}};
    V.rows = plane * V.n[2];
    for (int p = 0; p < MG_POINTS; p++)
        V.coef[p] = st[l].coef[p] ? st[l].coef[p] + skip * plane : NULL;
    const int32_t vc[3] = {nc[0], nc[1], hz ? (V.n[2] + 1) / 2 : V.n[2]};
    const int64_t vcz = hz ? (L->zs + skip) / 2 : L->zs;   /* vc's first plane */
    mg_stencil T;
    memset(&T, 0, sizeof T);
    adia_status s = S->device ? adia__mg_gpu_galerkin(&V, vc, C->coarsened, &T)
                              : adia__mg_galerkin(&V, vc, C->coarsened, &T);
    if ((s = agree(S, s)) != ADIA_OK) {
        release(S, &T);   /* made here, failed elsewhere */
        return s;
    }
    mg_stencil *D = &st[l + 1];
    const unsigned all = union_points(S, points_of(&T));
    s = zeros(S, D, C->n, all);
    const int64_t cplane = plane_of(C), own = (C->z1 - C->z0) * cplane;
    for (int p = 0; p < MG_POINTS && s == ADIA_OK; p++)
        if (T.coef[p] && own > 0)
            s = adia__mg_copy(S, own, 1.0, T.coef[p] + (C->z0 - vcz) * cplane,
                              D->coef[p] + (C->z0 - C->zs) * cplane, NULL);
    release(S, &T);
    S->nlev++;
    ADIA_TRY(agree(S, s));
    ADIA_TRY(layout(S, l + 1));
    ADIA_TRY(exchange_stencil(S, l + 1, D));
    C->galerkin_ms = adia__now_ms() - t0;
    S->ms.galerkin += C->galerkin_ms;
    for (int p = 0; p < MG_POINTS; p++) C->points += D->coef[p] != NULL;
    return ADIA_OK;
}

/* Level L's plan from its stencil (DIA, on the plan's side). */
static adia_status level_plan(adia_precond *M, mg_state *S, mg_level *L, const mg_stencil *st)
{
    if (S->device) return adia__mg_device_level_plan(M, S, L, st);
    adia_matrix *A = NULL;
    adia_status s = adia__mg_stencil_to_matrix(st, &A, &L->points);
    if (s == ADIA_OK) {
        L->nnz = adia_matrix_nnz(A);
        adia_plan_hints h = adia__mg_level_hints(M, L);
        s = adia_plan_create(A, &h, &L->plan);
        L->own_plan = s == ADIA_OK;
    }
    adia_matrix_destroy(A);
    return s;
}

/* The level's bound on lambda_max and its smoother's scaling s. */
static adia_status smoother(mg_state *S, int l, const mg_stencil *st)
{
    mg_level *L = &S->lev[l];
    const int64_t plane = plane_of(L), r0 = (L->z0 - L->zs) * plane, r1 = (L->z1 - L->zs) * plane;
    ADIA_TRY((S->device ? adia__mg_gpu_estimate_slab : adia__mg_estimate_slab)(
        st, L->zs * plane, r0, r1, S->slab, l, mg_fine_estimate(S, l), &L->est));
    ADIA_TRY(adia__mg_bounds(&L->est, plane * L->nz, &L->lmax, &L->lmin));
    if (S->device)
        return adia__mg_gpu_scaling(st, S->smoother, adia__mg_jacobi_omega(st, L->lmax),
                                    L->vtype, &L->s);
    double *sc = adia__alloc((size_t)L->rows + 1, sizeof *sc, "mg smoother");
    if (!sc) return ADIA_ERR_NO_MEMORY;
    adia__mg_smoother_scale(st, S->smoother, L->lmax, sc);
    L->s = sc;
    return ADIA_OK;
}

/* A smoothed level's plan (l > 0), bounds and scaling. */
static adia_status smoothed(adia_precond *M, mg_state *S, int l, const mg_stencil *st)
{
    mg_level *L = &S->lev[l];
    const double t0 = adia__now_ms();
    adia_status s = ADIA_OK;
    if (l > 0) s = level_plan(M, S, L, st);
    ADIA_TRY(agree(S, s));
    const double t1 = adia__now_ms();
    L->plan_ms = t1 - t0;
    S->ms.plans += L->plan_ms;
    s = agree(S, smoother(S, l, st));
    /* the scaling's ghost planes from their owners: an L1 row sum on the
     * slab's outermost plane misses the entries beyond it, and the cycle's
     * first step (pointwise in s) counts every ghost plane right */
    if (s == ADIA_OK) s = agree(S, S->slab->exchange(S->slab->ctx, l, L->s, S->device, NULL));
    S->ms.smoother += adia__now_ms() - t1;
    return s;
}

/* The last level gathered whole onto every process: its stencil, a plan
 * of it and a one-process mg, the arrays of its whole grid. */
static adia_status gathered(adia_precond *M, mg_state *S, const adia_precond_options *o,
                            const mg_stencil *st)
{
    const int l = S->nlev - 1;
    const mg_level *L = &S->lev[l];
    const double t0 = adia__now_ms();
    mg_level G;   /* the whole grid, for its plan */
    memset(&G, 0, sizeof G);
    G.vtype = L->vtype;
    const int32_t n[3] = {L->n[0], L->n[1], (int32_t)L->nz};
    adia__mg_set_grid(&G, n);
    mg_stencil F;
    adia_status s = agree(S, zeros(S, &F, n, points_of(st)));
    if (s != ADIA_OK) return s;
    for (int p = 0; p < MG_POINTS && s == ADIA_OK; p++)
        if (st->coef[p])
            s = agree(S, S->slab->gather(S->slab->ctx, l, st->coef[p], F.coef[p], S->device,
                                         NULL));
    if (s == ADIA_OK) s = level_plan(M, S, &G, &F);
    release(S, &F);
    S->inner_plan = G.plan;
    S->lev[l].points = G.points;
    if (s == ADIA_OK) {
        adia_precond_options io = *o;
        io.slab = NULL;
        /* double like the slabs above it: M r stays one process's mg to
         * rounding (the one-GPU default would store its coarse levels in
         * float) */
        io.float_levels = ADIA_FLOAT_LEVELS_NONE;
        for (int d = 0; d < 3; d++) io.grid[d] = n[d];
        io.max_levels = 0;
        /* a Galerkin level, unless the slabs' level 0 went whole to it */
        s = adia__precond_create(S->inner_plan, &io, l > 0, &S->inner);
    }
    ADIA_TRY(agree(S, s));
    S->ms.coarse = adia__now_ms() - t0;
    void *full[2] = {NULL, NULL};
    for (int k = 0; k < 2 && s == ADIA_OK; k++)
        s = S->device ? adia__mg_gpu_zeros(S->lev[0].vtype, G.rows, &full[k])
                      : ((full[k] = adia__calloc((size_t)G.rows + 1, sizeof(double),
                                                 "mg gathered level")) ? ADIA_OK
                                                                       : ADIA_ERR_NO_MEMORY);
    S->full_b = full[0], S->full_x = full[1];
    return agree(S, s);
}

static adia_status hierarchy(adia_precond *M, mg_state *S, const adia_precond_options *o,
                             int max_levels, mg_stencil *st)
{
    int64_t most;
    ADIA_TRY(agree(S, gather_rows(&most)));
    ADIA_TRY(finest(M, S, o, st));
    while (spread(S, &S->lev[S->nlev - 1], max_levels, most)) {
        ADIA_TRY(smoothed(M, S, S->nlev - 1, &st[S->nlev - 1]));
        ADIA_TRY(coarsen(S, S->nlev - 1, st));
    }
    return gathered(M, S, o, &st[S->nlev - 1]);
}

adia_status adia__mg_build_slab(adia_precond *M, mg_state *S, const adia_precond_options *o,
                                int max_levels)
{
    mg_stencil st[MG_MAX_LEVELS];   /* host or device ones, freed here */
    memset(st, 0, sizeof st);
    const adia_status s = hierarchy(M, S, o, max_levels, st);
    for (int l = 0; l < MG_MAX_LEVELS; l++) release(S, &st[l]);
    return s;
}

adia_status adia__mg_slab_coarse(const mg_state *S, const mg_level *L, const void *b, void *x,
                                 void *stream)
{
    const int l = (int)(L - S->lev);
    const adia_slab_comm *c = S->slab;
    ADIA_TRY(c->gather(c->ctx, l, b, S->full_b, S->device, stream));
    ADIA_TRY(S->inner->ops->apply(S->inner, 1.0, S->full_b, S->full_x, stream));
    const size_t at = (size_t)(L->zs * plane_of(L)) * sizeof(double);
    return adia__mg_copy(S, L->rows, 1.0, (const char *)S->full_x + at, x, stream);
}
