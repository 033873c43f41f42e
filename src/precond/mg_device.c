/* mg_device.c -- the multigrid hierarchy of a GPU plan built on the device
 * (issue 30), phase by phase as the host's (mg.c), with device stencils:
 *   grid      the offsets from the format's host structure (tiny), every
 *             stored nonzero checked on the device (first bad row);
 *   stencil   the finest level's stencil read from the plan's diagonal
 *             storage on the device (no download, no CSR): a double DIA
 *             plan's diagonals are the stencil's arrays, others copied;
 *   galerkin  the level's couplings (integer sums, the host's numbers) pick
 *             the directions to coarsen (adia__mg_coarse_grid, the host's
 *             rule); A_c = R A P, a thread per coarse point (the
 *             host's row, unrolled at compile time);
 *   plans     each coarse stencil written as DIA in the plan's value type,
 *             taken over by adia_plan_create_device_dia (no copy);
 *   smoother  power steps with deterministic sums, the scaling by a kernel;
 *   coarse    the coarsest stencil (<= MG_DENSE_MAX rows) to the host,
 *             its dense inverse there (mg_smooth.c), uploaded.
 * A plan whose storage the device reader cannot take (not a diagonal
 * format, CRSD's scatter points) is set up on the host, as before; explain
 * says why.  The counts of launches and bytes are a model written beside
 * each phase (S->setup), so that explain can set them against the time. */
#include "mg.h"

#include <stdio.h>

/* The view as a grid source: the check on the device (the points present
 * of the last grid checked kept), the bad entry named on the host. */
typedef struct view_source {
    const mg_dview *v;
    mg_state *S;
    unsigned mask;
} view_source;

static adia_status view_bad_row(void *ctx, const int32_t n[3], int64_t *bad)
{
    view_source *c = ctx;
    c->S->setup.kernels++, c->S->setup.syncs++;
    c->S->setup.bytes += (double)c->v->rows * c->v->noff * (double)adia_value_size(c->v->vt);
    return adia__mg_gpu_check(c->v, n, bad, &c->mask);
}

static adia_status view_report(void *ctx, const int32_t n[3], int64_t i)
{
    const view_source *c = ctx;
    int64_t j;
    double val;
    ADIA_TRY(adia__mg_gpu_bad_entry(c->v, n, i, &j, &val));
    return adia__mg_error_off_grid(n, i, j, val);
}

/* The distinct |offsets| of the view (the format's offsets, repeated per
 * group), sorted; -1 past MG_MAX_OFFSETS. */
static int view_offsets(const mg_dview *v, int64_t off[MG_MAX_OFFSETS])
{
    int64_t seen[MG_MAX_OFFSETS + 1];
    int m = 0;
    for (int k = 0; k < v->noff && m <= MG_MAX_OFFSETS; k++) {
        const int64_t a = llabs((int64_t)v->offsets[k]);
        int e = 0;
        while (e < m && seen[e] != a) e++;
        if (a != 0 && e == m) seen[m++] = a;
    }
    return adia__mg_distinct_offsets(seen, m, off);
}

/* Level 0: the grid and the stencil of the plan's storage. */
static adia_status fine_level(adia_precond *M, mg_state *S, const mg_dview *v,
                              const adia_precond_options *o, mg_stencil *st)
{
    const double t0 = adia__now_ms();
    int64_t off[MG_MAX_OFFSETS];
    view_source ctx = {.v = v, .S = S};
    mg_grid_source src = {.rows = v->rows, .off = off, .k = view_offsets(v, off),
                          .bad_row = view_bad_row, .report = view_report, .ctx = &ctx};
    int32_t n[3];
    ADIA_TRY(adia__mg_repays_early(M, src.rows, off, src.k, o->grid));
    ADIA_TRY(adia__mg_grid_find(&src, o->grid, n));   /* its last check: grid n's */
    ADIA_TRY(adia__mg_repays(M, n));
    const double t1 = adia__now_ms();
    S->ms.grid = t1 - t0;
    int64_t bad_diag;
    double dval;
    ADIA_TRY(adia__mg_gpu_stencil(v, n, ctx.mask, &st[0], &bad_diag, &dval));
    int points = 0;
    for (int p = 0; p < MG_POINTS; p++) points += st[0].coef[p] != NULL;
    S->setup.kernels++, S->setup.syncs++;
    S->setup.lent = st[0].lent;
    S->setup.bytes += S->setup.lent ? (double)v->rows * 8.0   /* the diagonal checked */
                                    : (double)v->rows * v->noff * (double)adia_value_size(v->vt) +
                                          (double)v->rows * points * 8.0;
    if (bad_diag < v->rows) return adia__mg_error_diagonal(n, bad_diag, dval);
    S->ms.stencil = adia__now_ms() - t1;
    mg_level *L0 = &S->lev[0];
    adia__mg_set_grid(L0, n);
    L0->plan = M->plan;
    L0->points = points;
    L0->nnz = adia_format_nnz(adia_plan_format(M->plan));
    S->nlev = 1;
    if (!S->mixed) return ADIA_OK;
    const double t2 = adia__now_ms();   /* the finest in the levels' type: a plan of its own */
    ADIA_TRY(adia__mg_device_level_plan(M, S, L0, &st[0]));
    S->ms.plans += adia__now_ms() - t2;
    return ADIA_OK;
}

adia_status adia__mg_device_level_plan(adia_precond *M, mg_state *S, mg_level *C,
                                       const mg_stencil *st)
{
    int64_t offsets[MG_POINTS];
    int ndiag;
    adia_device_dia dd = {.rows = (int32_t)C->rows, .cols = (int32_t)C->rows,
                          .offsets = offsets, .values_type = C->vtype, .adopt = 1};
    ADIA_TRY(adia__mg_gpu_to_dia(st, C->vtype, offsets, &ndiag, &dd.values));
    dd.ndiag = ndiag;
    const adia_plan_hints h = adia__mg_level_hints(M, C);
    ADIA_TRY(adia_plan_create_device_dia(&dd, &h, &C->plan));   /* frees values on failure */
    C->own_plan = 1;
    C->points = 0;
    for (int p = 0; p < MG_POINTS; p++) C->points += st->coef[p] != NULL;
    C->nnz = adia_format_nnz(adia_plan_format(C->plan));
    const double slots = (double)C->rows * ndiag * (double)adia_value_size(C->vtype);
    S->setup.kernels += 2, S->setup.syncs++;   /* to DIA; the plan's count of nonzeros */
    S->setup.bytes += (double)C->rows * C->points * 8.0 + 3 * slots;
    return ADIA_OK;
}

/* Levels 1.. by Galerkin products on the device, each a plan. */
static adia_status coarse_levels(adia_precond *M, mg_state *S, int max_levels, mg_stencil *st)
{
    while (S->nlev < max_levels && adia__mg_coarsen_more(&S->lev[S->nlev - 1])) {
        const int l = S->nlev;
        mg_level *C = &S->lev[l], *F = &S->lev[l - 1];
        int32_t nc[3];
        const double t0 = adia__now_ms();
        ADIA_TRY(adia__mg_gpu_coupling(&st[l - 1], F->coupling));   /* the host's integers */
        adia__mg_coarse_grid(F->n, F->coupling, S->coarsening, nc, C->coarsened);
        adia__mg_set_grid(C, nc);
        ADIA_TRY(adia__mg_gpu_galerkin(&st[l - 1], nc, C->coarsened, &st[l]));
        S->nlev++;
        int fine_points = 0;
        for (int p = 0; p < MG_POINTS; p++) fine_points += st[l - 1].coef[p] != NULL;
        S->setup.kernels += 2, S->setup.syncs += 2;   /* couplings, product */
        S->setup.bytes += ((double)F->rows * fine_points * 2 + (double)C->rows * MG_POINTS) * 8.0;
        const double t1 = adia__now_ms();
        C->galerkin_ms = t1 - t0;
        S->ms.galerkin += C->galerkin_ms;
        ADIA_TRY(adia__mg_device_level_plan(M, S, C, &st[l]));
        C->plan_ms = adia__now_ms() - t1;
        S->ms.plans += C->plan_ms;
    }
    return adia__mg_check_coarsest(S, max_levels);
}

/* A smoothed level: bounds from its estimate, the scaling s. */
static adia_status smoother(mg_state *S, int l, const mg_stencil *st)
{
    mg_level *L = &S->lev[l];
    int points = 0;
    for (int p = 0; p < MG_POINTS; p++) points += st->coef[p] != NULL;
    /* the start, the steps and their sums, the scaling (the wait: one for
     * all levels); the finest level's bound and restart besides, and its
     * launches after the certificate skipped, their arrays not read */
    const int fine = mg_fine_estimate(S, l);
    S->setup.kernels += 2 * (MG_POWER_STEPS + (fine ? MG_CHECKER_STEPS : 0)) + 2 + 2 * fine;
    S->setup.bytes += ((L->est.steps + fine) * (double)(points + 2) + 1) * (double)L->rows * 8.0 +
                      (double)L->rows * (points * 8.0 + (double)adia_value_size(L->vtype));
    ADIA_TRY(adia__mg_bounds(&L->est, L->rows, &L->lmax, &L->lmin));
    return adia__mg_gpu_scaling(st, S->smoother, adia__mg_jacobi_omega(st, L->lmax), L->vtype,
                                &L->s);
}

/* The coarsest level: its stencil to the host, the inverse uploaded. */
static adia_status coarsest(mg_state *S, mg_level *L, const mg_stencil *st)
{
    const double t0 = adia__now_ms();
    mg_stencil h;
    memset(&h, 0, sizeof h);
    adia__phase("mg: before the coarsest level");
    ADIA_TRY(adia__mg_gpu_download(st, &h));
    adia__phase("mg: coarsest stencil downloaded");
    double *inv = adia__alloc((size_t)(L->rows * L->rows) + 1, sizeof *inv, "mg inverse");
    adia_status s = inv ? adia__mg_dense_inverse(&h, inv, &S->coarse_spd) : ADIA_ERR_NO_MEMORY;
    adia__mg_stencil_free(&h);
    adia__phase("mg: coarsest inverse");
    if (s == ADIA_OK) s = adia__precond_upload(L->vtype, L->rows * L->rows, inv, &L->ainv);
    adia__phase("mg: coarsest inverse uploaded");
    free(inv);
    S->setup.syncs += 2;
    S->ms.coarse += adia__now_ms() - t0;
    return s;
}

static adia_status hierarchy(adia_precond *M, mg_state *S, const mg_dview *v,
                             const adia_precond_options *o, int max_levels, mg_stencil *st)
{
    adia__phase("mg: start");
    ADIA_TRY(fine_level(M, S, v, o, st));
    adia__phase("mg: finest level");
    ADIA_TRY(coarse_levels(M, S, max_levels, st));
    adia__phase("mg: coarse levels (Galerkin, plans)");
    const double t0 = adia__now_ms();
    mg_estimate est[MG_MAX_LEVELS];   /* the levels' at once */
    ADIA_TRY(adia__mg_gpu_estimate(st, S->nlev - 1, mg_fine_estimate(S, 0), est));
    S->setup.syncs++;
    for (int l = 0; l < S->nlev - 1; l++) {
        S->lev[l].est = est[l];
        ADIA_TRY(smoother(S, l, &st[l]));
    }
    S->ms.smoother = adia__now_ms() - t0;
    adia__phase("mg: estimates, smoothers");
    return coarsest(S, &S->lev[S->nlev - 1], &st[S->nlev - 1]);
}

adia_status adia__mg_build_device(adia_precond *M, mg_state *S, const adia_precond_options *o,
                                  int max_levels, int *done)
{
    *done = 0;
    mg_dview v;
    adia_status s = adia__mg_gpu_view(M->plan, &v, S->setup.why_host, sizeof S->setup.why_host);
    if (s == ADIA_ERR_UNSUPPORTED) return ADIA_OK;   /* the host builds it; why_host says why */
    *done = 1;
    S->setup.on_device = 1;
    mg_stencil st[MG_MAX_LEVELS];
    memset(st, 0, sizeof st);
    if (s == ADIA_OK) s = hierarchy(M, S, &v, o, max_levels, st);
    for (int l = 0; l < MG_MAX_LEVELS; l++) adia__mg_gpu_stencil_free(&st[l]);
    adia__mg_gpu_view_free(&v);
    return s;
}
