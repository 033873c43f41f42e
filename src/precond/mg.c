/* mg.c -- the geometric multigrid preconditioner (kind "mg"): setup in
 * phases (grid, finest stencil, Galerkin hierarchy with a plan per level,
 * smoothers, coarsest inverse, level arrays), the cycle driver written
 * once over a table of vector kernels (host: mg_cpu.c, device: mg_gpu.cu),
 * explain, destroy and the operations table.
 *
 * The cycle, z = alpha M r from z = 0: on each level pre-smoothing, the
 * residual restricted in one pass with the product before it, the coarse
 * level (V: once; W: twice; F: an F-cycle, then a V-cycle from its
 * answer), x += P x_c, post-smoothing with the same sweeps (each smoother
 * is a symmetric operator, so the V and W cycles are symmetric:
 * mg_smooth.c; the F cycle's two coarse cycles differ, so it is not), and
 * on the coarsest level x = A_c^-1 b by a dense inverse.
 * alpha scales the finest right-hand side inside the kernels that read it.
 * On a GPU plan the cycle queues only kernels and adia_spmv_async on the
 * caller's stream, with every array allocated at setup: a CUDA graph may
 * capture it.  The level arrays are the preconditioner's own: one apply at
 * a time per preconditioner (as adia_spmv_sums_async's work).  The setup of
 * a GPU plan of a diagonal format runs on the device (mg_device.c: no host
 * copy of a large array); every other plan's on the host, from its CSR. */
#include "mg.h"
#include "adia_bench.h"   /* adia_gpu_time_call: a cycle timed in a CUDA graph */
#include "../formats/diag_core.h"   /* a diagonal plan's offsets: auto's early refusal */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define CHEB_DEGREE 2          /* default Chebyshev degree (sweeps 1): the
                                  cost of V(2,2), factor 0.09 (mg_smooth.c) */
#define PLAN_CALLS 100         /* a level's products over one solve (6-25
                                  cycles of 3-5): below the generated
                                  kernel's threshold, whose compile (90-160
                                  ms a level, H200) one solve never repays */
/* float_levels' default on one process's GPU plan (level_types): the
 * coarse levels in float.  Measured (H200, 2026-11-28, bench_mg_setup and
 * `adia solve --precond mg`, CG to 1e-8): the same PCG iterations as all
 * levels in double on lap3d7:64/160/256, lap3d27:128, lap2d5:2048,
 * aniso3d, jump3d and vardiff3d at 160^3 (6, 18 on jump3d); lap3d7:256's
 * cycle 3.24 -> 3.03 ms, its total 40.7 -> 37.9-39.2 ms; no copy of the
 * plan's matrix (ALL's float copy cost 0.8-2.4 ms of set-up and half the
 * matrix's memory, for a cycle of 2.42 ms: the choice for many solves). */
#define MG_GPU_FLOAT_LEVELS ADIA_FLOAT_LEVELS_COARSE

/* ---------------------------------------------------------------- cycle */

typedef struct mg_run {
    const mg_state *S;
    const mg_kernels *K;
    void *stream;
    int dry;                   /* 1: only count launches and bytes        */
    int kernels, products, exchanges;
    double bytes;              /* moved through memory (a model: each
                                  array read or written once per launch) */
    /* Across processes: how many ghost planes (each side) of each level's
     * b, x and Chebyshev direction are right (need, below) */
    int vb[MG_MAX_LEVELS], vx[MG_MAX_LEVELS], vd[MG_MAX_LEVELS];
} mg_run;

/* Bytes of one value of level L's arrays: its type on the device, a
 * double on the host. */
static size_t value_size(const mg_state *S, const mg_level *L)
{
    return S->device ? adia_value_size(L->vtype) : sizeof(double);
}

/* Bytes of `vectors` values per row of L, plus extra values, in L's type. */
static double level_bytes(const mg_run *R, const mg_level *L, double vectors, double extra)
{
    return (vectors * (double)L->rows + extra) * (double)value_size(R->S, L);
}

/* One launch of ours moving `vectors` values per row of L, plus extra. */
static void count(mg_run *R, const mg_level *L, int vectors, double extra)
{
    R->kernels++;
    R->bytes += level_bytes(R, L, vectors, extra);
}

/* A transfer between L and Lc: two vectors of L, one of Lc. */
static void count_pair(mg_run *R, const mg_level *L, const mg_level *Lc)
{
    R->kernels++;
    R->bytes += level_bytes(R, L, 2, 0) + level_bytes(R, Lc, 1, 0);
}

static adia_status product(mg_run *R, const mg_level *L, const void *x)
{
    R->products++;
    R->bytes += (double)adia_format_bytes(adia_plan_format(L->plan));
    return R->dry ? ADIA_OK : adia_spmv_async(L->plan, 1.0, x, 0.0, L->t, R->stream);
}

/* Across processes: at least k ghost planes of level l's v right (*valid:
 * how many are), else all of them refilled from their owners (one
 * process: nothing).  What stays right: a pointwise step keeps the least
 * of its inputs' counts; a product loses one plane (the slab's edge is a
 * false boundary), so its own rows need x right on one ghost plane; x +=
 * P x_c needs x_c right on one (an own fine plane next to the edge may
 * have a coarse parent beyond it) and keeps x right on the lesser of x's
 * count and 2 k_c - 1 where z is halved (a fine plane k deep has its
 * parents at most k / 2 + 1 deep), k_c where it is not (plane k on plane
 * k).  The first smoothing step from x = 0 is pointwise in b and the
 * scaling s, whose ghost planes are all right (mg_slab.c exchanges s).  tests/mpi/test_dist.c checks M r against one process's with
 * 2, 3 and 4 ghost planes. */
static adia_status need(mg_run *R, int l, void *v, int *valid, int k)
{
    const adia_slab_comm *c = R->S->slab;
    if (!c || *valid >= k) return ADIA_OK;
    *valid = c->ghosts;
    R->exchanges++;
    return R->dry ? ADIA_OK : c->exchange(c->ctx, l, v, R->S->device, R->stream);
}

static int least(int a, int b)
{
    return a < b ? a : b;
}

/* Reads s, b (t, x unless zero_x; d where c1 != 0 and it is not x),
 * writes x (and d where kept). */
static adia_status smooth_step(mg_run *R, const mg_level *L, mg_step st, double bs,
                               const void *b, void *x)
{
    count(R, L, 3 + (st.zero_x ? 0 : 2) + (st.c1 != 0 && !st.d_is_x) + st.keep_d, 0);
    return R->dry ? ADIA_OK : R->K->smooth(R->S, L, st, bs, b, x, R->stream);
}

/* The sweeps of the level's smoother; zero_x: x enters as 0 (not read).
 * Across processes each product needs x right on one ghost plane. */
static adia_status smooth(mg_run *R, int l, double bs, const void *b, void *x, int zero_x)
{
    const mg_level *L = &R->S->lev[l];
    const mg_state *S = R->S;
    const int cheb = S->smoother == MG_CHEB;
    const double theta = 0.5 * (L->lmax + L->lmin), delta = 0.5 * (L->lmax - L->lmin);
    for (int sw = 0; sw < S->sweeps; sw++) {
        double rho = 0;
        for (int k = 0; k < (cheb ? S->degree : 1); k++) {
            const mg_step st = cheb ? mg_cheb_step(k, S->degree, theta, delta, zero_x, &rho)
                                    : (mg_step){.c2 = 1, .zero_x = zero_x};
            if (!st.zero_x) ADIA_TRY(need(R, l, x, &R->vx[l], 1));
            if (!st.zero_x) ADIA_TRY(product(R, L, x));
            ADIA_TRY(smooth_step(R, L, st, bs, b, x));
            int right = st.zero_x ? R->vb[l] : least(R->vx[l] - 1, R->vb[l]);
            if (st.c1 != 0 && !st.d_is_x) right = least(right, R->vd[l]);
            R->vx[l] = right;
            if (st.keep_d) R->vd[l] = right;
        }
        zero_x = 0;
    }
    return ADIA_OK;
}

/* Solve approximately on level l from x = 0 (zero_x) or from x by a
 * cycle of kind 'v', 'w' or 'f'. */
static adia_status cycle(mg_run *R, int l, double bs, const void *b, void *x, int zero_x,
                         char kind)
{
    const mg_state *S = R->S;
    const mg_level *L = &S->lev[l];
    if (l == S->nlev - 1 && S->slab) {   /* gathered, solved by the inner mg */
        count(R, L, 2, 0);
        R->exchanges++;
        R->vx[l] = S->slab->ghosts;   /* the whole grid's answer: every plane */
        return R->dry ? ADIA_OK : adia__mg_slab_coarse(S, L, b, x, R->stream);
    }
    if (l == S->nlev - 1) {   /* exact: entered from x = 0 only */
        count(R, L, 2, (double)L->rows * (double)L->rows);
        return R->dry ? ADIA_OK : R->K->coarse(S, L, bs, b, x, R->stream);
    }
    const mg_level *Lc = L + 1;
    ADIA_TRY(smooth(R, l, bs, b, x, zero_x));
    /* the restriction reads the residual one plane beyond the own ones */
    ADIA_TRY(need(R, l, x, &R->vx[l], 2));
    ADIA_TRY(product(R, L, x));
    count_pair(R, L, Lc);   /* reads b, t; writes the coarse b */
    if (!R->dry) ADIA_TRY(R->K->restrict_residual(S, L, Lc, bs, b, R->stream));
    /* the coarse b right on every ghost plane, so that its smoother's x
     * starts so (a gathered level reads only its own planes) */
    R->vb[l + 1] = 0;
    if (S->slab && l + 1 < S->nlev - 1)
        ADIA_TRY(need(R, l + 1, Lc->b, &R->vb[l + 1], S->slab->ghosts));
    ADIA_TRY(cycle(R, l + 1, 1.0, Lc->b, Lc->x, 1, kind));
    if (kind != 'v' && l + 1 < S->nlev - 1)   /* a second exact solve changes nothing */
        ADIA_TRY(cycle(R, l + 1, 1.0, Lc->b, Lc->x, 0, kind == 'f' ? 'v' : kind));
    if (S->slab) ADIA_TRY(need(R, l + 1, Lc->x, &R->vx[l + 1], 1));
    count_pair(R, L, Lc);   /* x += P x_c */
    if (!R->dry) ADIA_TRY(R->K->prolong(S, L, Lc, x, R->stream));
    R->vx[l] = least(R->vx[l], Lc->coarsened[2] ? 2 * R->vx[l + 1] - 1 : R->vx[l + 1]);
    return smooth(R, l, bs, b, x, 0);
}

/* Across processes r and z are the own planes of level 0's: r goes into
 * its b (scaled by alpha), whose ghost planes come from the neighbours,
 * and z is read off its x. */
static adia_status slab_cycle(mg_run *R, double alpha, const void *r, void *z)
{
    const mg_state *S = R->S;
    const mg_level *L = &S->lev[0];
    const int64_t plane = (int64_t)L->n[0] * L->n[1], own = (L->z1 - L->z0) * plane;
    const size_t at = (size_t)((L->z0 - L->zs) * plane) * sizeof(double);
    if (!R->dry) ADIA_TRY(adia__mg_copy(S, own, alpha, r, (char *)L->b + at, R->stream));
    R->vb[0] = 0;
    if (S->nlev > 1) ADIA_TRY(need(R, 0, L->b, &R->vb[0], S->slab->ghosts));
    ADIA_TRY(cycle(R, 0, 1.0, L->b, L->x, 1, S->cycle));
    return R->dry ? ADIA_OK : adia__mg_copy(S, own, 1.0, (char *)L->x + at, z, R->stream);
}

/* Levels in another type than the plan's (float_levels): r converted into
 * level 0's b (scaled by alpha), z out of its x. */
static adia_status mixed_cycle(mg_run *R, adia_value_type vt, double alpha, const void *r,
                               void *z)
{
    const mg_state *S = R->S;
    const mg_level *L = &S->lev[0];
    count(R, L, 3, 0);   /* a double read and a float written: 3 floats a row */
    if (!R->dry) ADIA_TRY(adia__precond_convert_gpu(vt, L->vtype, L->rows, alpha, r, L->b, R->stream));
    ADIA_TRY(cycle(R, 0, 1.0, L->b, L->x, 1, S->cycle));
    count(R, L, 3, 0);
    return R->dry ? ADIA_OK
                  : adia__precond_convert_gpu(L->vtype, vt, L->rows, 1.0, L->x, z, R->stream);
}

/* z = alpha M r (r, z: the plan's type, where it lives) */
static adia_status top_cycle(mg_run *R, adia_value_type vt, double alpha, const void *r, void *z)
{
    if (R->S->slab) return slab_cycle(R, alpha, r, z);
    if (R->S->mixed) return mixed_cycle(R, vt, alpha, r, z);
    return cycle(R, 0, alpha, r, z, 1, R->S->cycle);
}

static adia_status mg_apply(const adia_precond *M, double alpha, const void *r, void *z,
                            void *stream)
{
    const mg_state *S = M->impl;
    mg_run R = {.S = S, .K = M->device ? &adia__mg_gpu_kernels : &adia__mg_cpu_kernels,
                .stream = stream};
    return top_cycle(&R, M->vtype, alpha, r, z);
}

/* ---------------------------------------------------------------- setup */

/* The coarsening rule: ADIA_MG_COARSENING = auto (default), full or semi
 * -- an environment variable until adia_precond_options has a field for
 * it (a public change, proposed in issue 30). */
static adia_status parse_coarsening(mg_state *S)
{
    const char *c = getenv("ADIA_MG_COARSENING");
    if (!c || !*c || !strcmp(c, "auto")) S->coarsening = MG_COARSEN_AUTO;
    else if (!strcmp(c, "full")) S->coarsening = MG_COARSEN_FULL;
    else if (!strcmp(c, "semi")) S->coarsening = MG_COARSEN_SEMI;
    else
        return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: ADIA_MG_COARSENING=\"%s\": "
                          "not auto, full or semi", c);
    return ADIA_OK;
}

static adia_status parse_options(mg_state *S, const adia_precond_options *o)
{
    const char *sm = o->smoother ? o->smoother : "cheb";
    if (!strcmp(sm, "cheb") || !strcmp(sm, "chebyshev")) S->smoother = MG_CHEB;
    else if (!strcmp(sm, "jacobi")) S->smoother = MG_JACOBI;
    else if (!strcmp(sm, "l1jacobi")) S->smoother = MG_L1JACOBI;
    else
        return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: smoother \"%s\": not "
                          "cheb, jacobi or l1jacobi", sm);
    if (o->degree > 0 && S->smoother != MG_CHEB)
        return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: degree %d is the Chebyshev "
                          "smoother's; smoother \"%s\" has none", o->degree, sm);
    S->cycle = o->cycle == 'w' || o->cycle == 'f' ? o->cycle : 'v';
    S->sweeps = o->sweeps > 0 ? o->sweeps : S->smoother == MG_CHEB ? 1 : 2;
    S->degree = o->degree > 0 ? o->degree : CHEB_DEGREE;
    S->grid_given = o->grid[0] > 0 || o->grid[1] > 0 || o->grid[2] > 0;
    return parse_coarsening(S);
}

static void free_array(const mg_state *S, void *p)
{
    if (S->device) adia__precond_free_gpu(p);
    else free(p);
}

/* n values of level L's where the plan lives: h's (host doubles) or
 * zeros (h NULL). */
static adia_status level_array(const mg_state *S, const mg_level *L, int64_t n, const double *h,
                               void **out)
{
    *out = NULL;
    if (S->device)
        return h ? adia__precond_upload(L->vtype, n, h, out) : adia__mg_gpu_zeros(L->vtype, n, out);
    double *a = adia__calloc((size_t)n + 1, sizeof *a, "mg level array");
    if (!a) return ADIA_ERR_NO_MEMORY;
    if (h) memcpy(a, h, (size_t)n * sizeof *a);
    *out = a;
    return ADIA_OK;
}

void adia__mg_set_grid(mg_level *L, const int32_t n[3])
{
    memcpy(L->n, n, sizeof L->n);
    L->rows = (int64_t)n[0] * n[1] * n[2];
}

int adia__mg_coarse_enough(const int64_t n[3])
{
    const int dims = (n[0] > 1) + (n[1] > 1) + (n[2] > 1);
    return dims == 0 || n[0] * n[1] * n[2] <= (dims == 3 ? MG_COARSE_ROWS_3D : MG_COARSE_ROWS);
}

int adia__mg_coarsen_more(const mg_level *L)
{
    const int64_t n[3] = {L->n[0], L->n[1], L->n[2]};
    return !adia__mg_coarse_enough(n);
}

adia_status adia__mg_repays(adia_precond *M, const int32_t n[3])
{
    if (M->automatic && mg_strip(n)) {
        M->strip = 1;   /* for agg, which auto tries next */
        return adia__error(ADIA_ERR_UNSUPPORTED, "mg preconditioner: grid %dx%dx%d, a strip 2 "
                          "points wide: A is a band more than a grid (agg's)", n[0], n[1], n[2]);
    }
    if (!M->automatic || mg_longest_edge(n) >= MG_AUTO_MIN_EDGE) return ADIA_OK;
    return adia__error(ADIA_ERR_UNSUPPORTED, "mg preconditioner: grid %dx%dx%d, its longest edge "
                      "under %d points: CG + Jacobi's few iterations cost less than mg's set-up",
                      n[0], n[1], n[2], MG_AUTO_MIN_EDGE);
}

adia_status adia__mg_repays_early(adia_precond *M, int64_t rows, const int64_t *off, int k,
                                  const int opt_grid[3])
{
    if (!M->automatic || k < 0 || opt_grid[0] > 0 || opt_grid[1] > 0 || opt_grid[2] > 0)
        return ADIA_OK;
    int32_t cand[8][3];
    const int c = adia__mg_grid_candidates(rows, off, k, cand, 8);
    for (int i = 0; i < c; i++)
        if (mg_longest_edge(cand[i]) >= MG_AUTO_MIN_EDGE) return ADIA_OK;
    return c > 0 ? adia__mg_repays(M, cand[0]) : ADIA_OK;   /* its message; none: found later */
}

adia_plan_hints adia__mg_level_hints(const adia_precond *M, const mg_level *L)
{
    return (adia_plan_hints){.expected_calls = PLAN_CALLS, .vtype = L->vtype,
                             .device = M->device, .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
}

adia_status adia__mg_check_coarsest(const mg_state *S, int max_levels)
{
    const mg_level *last = &S->lev[S->nlev - 1];
    if (last->rows > MG_DENSE_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: the coarsest level (grid "
                          "%dx%dx%d, %lld rows, max_levels %d) is above the %d rows of the dense "
                          "direct solve", last->n[0], last->n[1], last->n[2],
                          (long long)last->rows, max_levels, MG_DENSE_MAX);
    return ADIA_OK;
}

/* Level L's plan (its own) from its host stencil. */
static adia_status level_plan(adia_precond *M, mg_level *L, const mg_stencil *st)
{
    L->points = 0;
    for (int p = 0; p < MG_POINTS; p++) L->points += st->coef[p] != NULL;
    adia_plan_hints h = adia__mg_level_hints(M, L);
    if (!M->device) {   /* DIA straight from the stencil: no CSR, no analysis */
        int64_t offsets[MG_POINTS];
        int ndiag;
        double *values;
        ADIA_TRY(adia__mg_host_dia(st, offsets, &ndiag, &values, &L->nnz));
        ADIA_TRY(adia__plan_create_host_dia((int32_t)L->rows, ndiag, offsets, values, L->nnz, &h,
                                            "mg level", &L->plan));
        L->own_plan = 1;
        return ADIA_OK;
    }
    adia_matrix *A = NULL;
    ADIA_TRY(adia__mg_stencil_to_matrix(st, &A, &L->points));
    L->nnz = adia_matrix_nnz(A);
    adia_status s = adia_plan_create(A, &h, &L->plan);
    adia_matrix_destroy(A);
    ADIA_TRY(s);
    L->own_plan = 1;
    return ADIA_OK;
}

/* Levels 1.. by Galerkin products down to MG_COARSE_ROWS, each a plan. */
static adia_status hierarchy(adia_precond *M, mg_state *S, int max_levels, mg_stencil *st)
{
    while (S->nlev < max_levels) {
        mg_level *L = &S->lev[S->nlev - 1];
        if (!adia__mg_coarsen_more(L)) break;
        mg_level *C = &S->lev[S->nlev];
        int32_t nc[3];
        double t0 = adia__now_ms();
        adia__mg_coupling(&st[S->nlev - 1], L->coupling);
        adia__mg_coarse_grid(L->n, L->coupling, S->coarsening, nc, C->coarsened);
        adia__mg_set_grid(C, nc);
        ADIA_TRY(adia__mg_galerkin(&st[S->nlev - 1], nc, C->coarsened, &st[S->nlev]));
        S->nlev++;
        double t1 = adia__now_ms();
        C->galerkin_ms = t1 - t0;
        S->ms.galerkin += t1 - t0;
        ADIA_TRY(level_plan(M, C, &st[S->nlev - 1]));
        C->plan_ms = adia__now_ms() - t1;
        S->ms.plans += C->plan_ms;
    }
    return adia__mg_check_coarsest(S, max_levels);
}

/* The coarsest level: its dense inverse where the plan lives. */
static adia_status coarsest_data(mg_state *S, mg_level *L, const mg_stencil *st)
{
    const double t0 = adia__now_ms();
    double *inv = adia__alloc((size_t)(L->rows * L->rows) + 1, sizeof *inv, "mg inverse");
    if (!inv) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__mg_dense_inverse(st, inv, &S->coarse_spd);
    const double t1 = adia__now_ms();
    S->ms.coarse += t1 - t0;
    if (s == ADIA_OK) s = level_array(S, L, L->rows * L->rows, inv, &L->ainv);
    free(inv);
    S->ms.upload += adia__now_ms() - t1;
    return s;
}

/* A smoothed level: its scaling, bounds and work arrays t (and d). */
static adia_status smoother_data(mg_state *S, int l, const mg_stencil *st)
{
    mg_level *L = &S->lev[l];
    const double t0 = adia__now_ms();
    double *sc = adia__alloc((size_t)L->rows + 1, sizeof *sc, "mg smoother");
    if (!sc) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__mg_smoother_setup(st, mg_fine_estimate(S, l), S->smoother, sc, L);
    const double t1 = adia__now_ms();
    S->ms.smoother += t1 - t0;
    if (s == ADIA_OK) s = level_array(S, L, L->rows, sc, &L->s);
    free(sc);
    S->ms.upload += adia__now_ms() - t1;
    return s;
}

/* Every level's smoother or coarsest inverse from the host stencils. */
static adia_status level_data(mg_state *S, const mg_stencil *st)
{
    for (int l = 0; l < S->nlev; l++)
        ADIA_TRY(l == S->nlev - 1 ? coarsest_data(S, &S->lev[l], &st[l])
                                  : smoother_data(S, l, &st[l]));
    return ADIA_OK;
}

/* Every level's work arrays (zeros): t (and d) of the smoothed levels, b
 * and x below the finest (the finest's are the caller's r and z; a slab's
 * or a float copy's have their own), in one allocation (S->work): one
 * cudaMalloc and memset for them all, where one each (26 on lap3d7:160)
 * took 0.74 ms of its 6 ms set-up (H200, 2026-11-28). */
static adia_status work_arrays(mg_state *S)
{
    const double t0 = adia__now_ms();
    enum { T, D, B, X, ARRAYS };
    size_t at[MG_MAX_LEVELS][ARRAYS], bytes = 0;
    for (int l = 0; l < S->nlev; l++) {
        const mg_level *L = &S->lev[l];
        const int smoothed = l < S->nlev - 1, own_bx = l > 0 || S->slab || S->mixed;
        const int want[ARRAYS] = {smoothed, smoothed && S->smoother == MG_CHEB, own_bx, own_bx};
        const size_t one = ((size_t)L->rows * value_size(S, L) + 255) / 256 * 256;   /* aligned */
        for (int a = 0; a < ARRAYS; a++) {
            at[l][a] = want[a] ? bytes : SIZE_MAX;
            bytes += want[a] ? one : 0;
        }
    }
    if (S->device) {
        ADIA_TRY(adia__mg_gpu_zeros(ADIA_DOUBLE, (int64_t)(bytes / sizeof(double)), &S->work));
    } else if (!(S->work = adia__calloc(bytes + 1, 1, "mg level arrays"))) {
        return ADIA_ERR_NO_MEMORY;
    }
    for (int l = 0; l < S->nlev; l++) {
        void **arrays[ARRAYS] = {&S->lev[l].t, &S->lev[l].d, &S->lev[l].b, &S->lev[l].x};
        for (int a = 0; a < ARRAYS; a++)
            *arrays[a] = at[l][a] == SIZE_MAX ? NULL : (char *)S->work + at[l][a];
    }
    S->ms.upload += adia__now_ms() - t0;
    return ADIA_OK;
}

/* auto's early refusal (adia__mg_repays_early) from a diagonal format's
 * stored offsets, before the plan's CSR copy (CRSD's scatter points, off
 * those offsets, leave it to the grid's check). */
static adia_status structure_repays(adia_precond *M, const adia_precond_options *o)
{
    const adia_diag *D = adia__format_diag_structure(adia_plan_format(M->plan));
    if (!M->automatic || !D || D->n_scatter) return ADIA_OK;
    int64_t off[MG_MAX_OFFSETS];
    const int k = adia__mg_diag_offsets(D, off);
    return adia__mg_repays_early(M, D->rows, off, k, o->grid);
}

/* Level 0's grid and stencil on the host: from a CPU plan's diagonal
 * storage in place where it can be read so, else from the plan's matrix as
 * a CSR (a copy of it). */
static adia_status host_fine(adia_precond *M, mg_state *S, const adia_precond_options *o,
                             mg_stencil *st, int32_t n[3])
{
    double t0 = adia__now_ms();
    const adia_format *F = adia_plan_format(M->plan);
    const adia_diag *D = adia__format_diag_structure(F);
    if (adia__mg_diag_readable(D) && !F->host_stale) {
        adia_status s = adia__mg_grid_diag(D, o->grid, n);
        if (s == ADIA_OK) s = adia__mg_repays(M, n);
        const double t1 = adia__now_ms();
        S->ms.grid = t1 - t0;
        ADIA_TRY(s);
        ADIA_TRY(adia__mg_stencil_from_diag(D, n, &st[0]));
        S->lev[0].nnz = adia_format_nnz(F);
        S->ms.stencil = adia__now_ms() - t1;
        return ADIA_OK;
    }
    adia_matrix *A = NULL;
    ADIA_TRY(adia_format_to_matrix(F, &A));
    adia_status s = adia__mg_grid(&A->csr, o->grid, n);
    if (s == ADIA_OK) s = adia__mg_repays(M, n);
    double t1 = adia__now_ms();
    S->ms.grid = t1 - t0;
    if (s == ADIA_OK) s = adia__mg_stencil_from_csr(&A->csr, n, &st[0]);
    S->lev[0].nnz = A->csr.nnz;
    adia_matrix_destroy(A);
    ADIA_TRY(s);
    S->ms.stencil = adia__now_ms() - t1;
    return ADIA_OK;
}

/* The hierarchy on the host: the finest stencil (host_fine), the Galerkin
 * products and the smoothers from host arrays. */
static adia_status build_host(adia_precond *M, mg_state *S, const adia_precond_options *o,
                              int max_levels, mg_stencil *st)
{
    ADIA_TRY(structure_repays(M, o));
    int32_t n[3];
    ADIA_TRY(host_fine(M, S, o, st, n));
    mg_level *L0 = &S->lev[0];
    adia__mg_set_grid(L0, n);
    L0->plan = M->plan;
    for (int p = 0; p < MG_POINTS; p++) L0->points += st[0].coef[p] != NULL;
    S->nlev = 1;
    if (S->mixed) ADIA_TRY(level_plan(M, L0, &st[0]));   /* the finest in the levels' type */
    ADIA_TRY(hierarchy(M, S, max_levels, st));
    return level_data(S, st);
}

/* A GPU plan's hierarchy is built on the device where its storage can be
 * read there (mg_device.c), else on the host. */
static adia_status build(adia_precond *M, mg_state *S, const adia_precond_options *o,
                         mg_stencil *st)
{
    const int max_levels = o->max_levels > 0 && o->max_levels < MG_MAX_LEVELS ? o->max_levels
                                                                              : MG_MAX_LEVELS;
    int done = 0;
    if (S->slab) {
        ADIA_TRY(adia__mg_build_slab(M, S, o, max_levels));
        done = 1;
    }
    if (M->device && !done) ADIA_TRY(adia__mg_build_device(M, S, o, max_levels, &done));
    /* "auto" (CG's default in the CLI and Python) makes mg only where its
     * set-up is cheap: a GPU plan whose storage the device cannot read
     * would have its hierarchy built on the host, from a downloaded CSR
     * (seconds at 10^6-10^7 rows, against the CG + Jacobi it replaces) */
    if (M->device && !done && M->automatic)
        return adia__error(ADIA_ERR_UNSUPPORTED, "mg preconditioner: the plan's %s storage is "
                          "not read on the device, so the hierarchy would be built on the host "
                          "(%s)", adia_plan_format_name(M->plan), S->setup.why_host);
    if (!done) ADIA_TRY(build_host(M, S, o, max_levels, st));
    ADIA_TRY(work_arrays(S));
    mg_run R = {.S = S, .dry = 1};
    ADIA_TRY(top_cycle(&R, M->vtype, 1.0, NULL, NULL));
    S->kernels = R.kernels;
    S->products = R.products;
    S->cycle_bytes = R.bytes;
    S->exchanges = R.exchanges;
    return ADIA_OK;
}

/* Each level's type (adia_precond_options.float_levels): ALL and COARSE
 * are one process's GPU plan's; DEFAULT is MG_GPU_FLOAT_LEVELS there and
 * NONE elsewhere. */
static adia_status level_types(const adia_precond *M, mg_state *S, int asked)
{
    const int one_gpu = M->device && !S->slab;
    if ((asked == ADIA_FLOAT_LEVELS_ALL || asked == ADIA_FLOAT_LEVELS_COARSE) && !one_gpu)
        return adia__error(ADIA_ERR_UNSUPPORTED, "mg preconditioner: float_levels is for one "
                          "process's GPU plan (%s; asked: %s levels in float)",
                          S->slab ? "this one spans processes" : "this plan is on the CPU",
                          asked == ADIA_FLOAT_LEVELS_ALL ? "all" : "the coarse");
    S->float_levels = asked != ADIA_FLOAT_LEVELS_DEFAULT ? asked
                      : one_gpu                          ? MG_GPU_FLOAT_LEVELS
                                                         : ADIA_FLOAT_LEVELS_NONE;
    for (int l = 0; l < MG_MAX_LEVELS; l++) {
        const int f = S->float_levels == ADIA_FLOAT_LEVELS_ALL ||
                      (S->float_levels == ADIA_FLOAT_LEVELS_COARSE && l > 0);
        S->lev[l].vtype = f ? ADIA_FLOAT : M->vtype;
    }
    S->mixed = S->lev[0].vtype != M->vtype;
    return ADIA_OK;
}

static adia_status mg_setup(adia_precond *M, const adia_precond_options *opt)
{
    mg_state *S = adia__calloc(1, sizeof *S, "mg preconditioner");
    if (!S) return ADIA_ERR_NO_MEMORY;
    M->impl = S;
    S->device = M->device;
    S->slab = opt->slab;
    S->galerkin0 = M->galerkin;
    if (S->slab && M->vtype != ADIA_DOUBLE)
        return adia__error(ADIA_ERR_UNSUPPORTED, "mg preconditioner across processes: a plan in "
                          "double only");
    ADIA_TRY(level_types(M, S, opt->float_levels));
    ADIA_TRY(parse_options(S, opt));
    if (S->cycle == 'f')
        M->asymmetric = "the F cycle: on each coarse level an F-cycle then a V-cycle, two "
                        "different operators";
    mg_stencil st[MG_MAX_LEVELS];
    memset(st, 0, sizeof st);
    adia_status s = build(M, S, opt, st);
    for (int l = 0; l < MG_MAX_LEVELS; l++) adia__mg_stencil_free(&st[l]);
    if (S->slab && s == ADIA_OK)   /* r and z: the own planes */
        M->n = (S->lev[0].z1 - S->lev[0].z0) * S->lev[0].n[0] * S->lev[0].n[1];
    return s;
}

/* --------------------------------------------------- time by level */

#define TIME_RUNS 5   /* timed runs a level (after one not timed) */

/* One cycle from level l down (l < 0: the whole apply z = M r). */
typedef struct timed_cycle {
    mg_run *R;
    const adia_precond *M;
    int l;
    const void *r;
    void *z;
} timed_cycle;

static adia_status run_cycle(const timed_cycle *c)
{
    const mg_state *S = c->R->S;
    if (c->l < 0) return top_cycle(c->R, c->M->vtype, 1.0, c->r, c->z);
    return cycle(c->R, c->l, 1.0, S->lev[c->l].b, S->lev[c->l].x, 1, S->cycle);
}

/* adia_gpu_call: the cycle queued on the timer's stream */
static adia_status queue_cycle(void *ctx, int i, void *stream)
{
    (void)i;
    timed_cycle *c = ctx;
    c->R->stream = stream;
    return run_cycle(c);
}

/* The median (ms) of TIME_RUNS runs of the cycle from level l down.  On
 * the device as the solver runs it, in a CUDA graph, batched
 * (adia_gpu_time_call): launched one by one, a small level's part is the
 * host's launch latency (about 4 us a kernel), not what a solve pays.  On
 * the host each run by the wall clock. */
static adia_status time_cycle(mg_run *R, const adia_precond *M, int l, const void *r, void *z,
                              double *ms)
{
    timed_cycle c = {.R = R, .M = M, .l = l, .r = r, .z = z};
    if (R->S->device) {
        adia_gpu_timing t;
        ADIA_TRY(adia_gpu_time_call(queue_cycle, &c, TIME_RUNS, &t));
        R->stream = NULL;
        *ms = t.median_ms;
        return ADIA_OK;
    }
    double t[TIME_RUNS];
    for (int k = -1; k < TIME_RUNS; k++) {
        const double t0 = adia__now_ms();
        ADIA_TRY(run_cycle(&c));
        if (k >= 0) t[k] = adia__now_ms() - t0;
    }
    adia_gpu_timing sum;
    adia__timing_summarize(t, TIME_RUNS, &sum);
    *ms = sum.median_ms;
    return ADIA_OK;
}

/* The cycle from each level down (ms): from[0] the whole apply (with a
 * mixed plan's conversions), from[l] the cycle on level l's own b and x,
 * from[nlev] 0 -- cycles run now on the preconditioner's own arrays, r =
 * ones (the plan's type, where it lives), so not while it is applied
 * elsewhere.  Not across processes (a cycle there is every process's at
 * once). */
static adia_status time_levels(const adia_precond *M, double from[MG_MAX_LEVELS + 1])
{
    const mg_state *S = M->impl;
    if (S->slab)
        return adia__error(ADIA_ERR_UNSUPPORTED, "a hierarchy across processes is timed by "
                           "its solves");
    mg_run R = {.S = S, .K = S->device ? &adia__mg_gpu_kernels : &adia__mg_cpu_kernels};
    const int64_t n = S->lev[0].rows;
    double *ones = adia__alloc((size_t)n + 1, sizeof *ones, "mg timing");
    if (!ones) return ADIA_ERR_NO_MEMORY;
    for (int64_t i = 0; i < n; i++) ones[i] = 1;
    void *r = NULL, *z = NULL;
    adia_status s = ADIA_OK;
    if (S->device) {
        s = adia__precond_upload(M->vtype, n, ones, &r);
        if (s == ADIA_OK) s = adia__precond_upload(M->vtype, n, ones, &z);
        free(ones);
    } else {
        r = ones;
        z = adia__calloc((size_t)n + 1, sizeof(double), "mg timing");
        if (!z) s = ADIA_ERR_NO_MEMORY;
    }
    for (int l = 0; l <= MG_MAX_LEVELS; l++) from[l] = 0;
    if (s == ADIA_OK) s = time_cycle(&R, M, -1, r, z, &from[0]);   /* fills every level's b */
    for (int l = S->nlev - 1; l >= 1 && s == ADIA_OK; l--) s = time_cycle(&R, M, l, r, z, &from[l]);
    free_array(S, r);
    free_array(S, z);
    return s;
}

/* ---------------------------------------------------- explain, destroy */

static const char *smoother_name(mg_smoother s)
{
    return s == MG_CHEB ? "Chebyshev" : s == MG_JACOBI ? "weighted Jacobi" : "L1-Jacobi";
}

/* Append to buf (len bytes, *k used); 0 once it is full. */
static int put(char *buf, size_t len, size_t *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int put(char *buf, size_t len, size_t *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int w = *k < len ? vsnprintf(buf + *k, len - *k, fmt, ap) : -1;
    va_end(ap);
    if (w < 0 || (size_t)w >= len - *k) {
        *k = len;
        return 0;
    }
    *k += (size_t)w;
    return 1;
}

static const char *coarsening_name(mg_coarsening c)
{
    return c == MG_COARSEN_FULL ? "full" : c == MG_COARSEN_SEMI ? "semi (PFMG)" : "auto";
}

/* ", coarsened xz" (the directions halved from the finer level), and the
 * couplings that chose the next level's, relative to the strongest. */
static void explain_coarsening(const mg_level *L, int l, int last, char *buf, size_t len,
                               size_t *k)
{
    if (l > 0) {
        put(buf, len, k, ", coarsened ");
        for (int d = 0; d < 3; d++)
            if (L->coarsened[d]) put(buf, len, k, "%c", "xyz"[d]);
    }
    const uint64_t m = L->coupling[0] > L->coupling[1] ? L->coupling[0] : L->coupling[1];
    const double cmax = (double)(m > L->coupling[2] ? m : L->coupling[2]);
    if (!last && cmax > 0)
        put(buf, len, k, ", coupling x:y:z %.3g:%.3g:%.3g", (double)L->coupling[0] / cmax,
            (double)L->coupling[1] / cmax, (double)L->coupling[2] / cmax);
}

/* Level L's bound and where it came from: the finest level's quotient
 * certified by Gershgorin's bound (lmax: the bound), else 1.1 x the last
 * quotient (at most the bound, where the level has one). */
static void explain_bound(const mg_level *L, char *buf, size_t len, size_t *k)
{
    const mg_estimate *e = &L->est;
    put(buf, len, k, ", lambda_max(D^-1 A) <= %.4g", L->lmax);
    if (mg_certified(e->q, e->bound))
        put(buf, len, k, " (certified: estimate %.4g >= %g x Gershgorin's bound, %d power "
            "step%s)", e->q, MG_CERTIFY, e->steps, e->steps == 1 ? "" : "s");
    else if (e->bound > 0)
        put(buf, len, k, " (%d power steps, Gershgorin %.4g)", e->steps, e->bound);
    else
        put(buf, len, k, " (%d power steps)", e->steps);
}

/* A line per level, numbered from first (a slab hierarchy's gathered
 * level is its inner mg's level 0: the same grid, numbered alike). */
static void explain_levels(const mg_state *S, int first, char *buf, size_t len, size_t *k)
{
    for (int l = 0; l < S->nlev; l++) {
        const mg_level *L = &S->lev[l];
        if (S->slab)
            put(buf, len, k, "  level %d: grid %dx%dx%lld, planes [%lld, %lld) here (and to "
                "%lld from %lld), %d-point stencil", first + l, L->n[0], L->n[1], (long long)L->nz,
                (long long)L->z0, (long long)L->z1, (long long)(L->zs + L->n[2]),
                (long long)L->zs, L->points);
        else
            put(buf, len, k, "  level %d: grid %dx%dx%d, %lld rows, %d-point stencil, %lld "
                "nonzeros", first + l, L->n[0], L->n[1], L->n[2], (long long)L->rows, L->points,
                (long long)L->nnz);
        explain_coarsening(L, l, l == S->nlev - 1, buf, len, k);
        if (l < S->nlev - 1) {
            put(buf, len, k, ", plan %s", adia_plan_format_name(L->plan));
            explain_bound(L, buf, len, k);
            put(buf, len, k, "\n");
        } else if (S->slab)
            put(buf, len, k, ", gathered onto every process and solved there by one "
                "process's mg (levels %d..):\n", first + l);
        else
            put(buf, len, k, ", dense inverse (%s)\n", S->coarse_spd ? "Cholesky" : "LU, not SPD");
    }
    if (S->inner) explain_levels(S->inner->impl, S->nlev - 1, buf, len, k);
}

/* The cycle measured now, level by level (time_levels): a V-cycle as
 * each level's own part (the cycle from it down less the next's: its
 * smoothing, residual, transfers; the coarsest's solve), which add up to
 * the whole; a W-cycle, whose coarse levels run several times, as the
 * cycle from each level down. */
static void explain_times(const adia_precond *M, char *buf, size_t len, size_t *k)
{
    const mg_state *S = M->impl;
    if (S->slab) return;
    double from[MG_MAX_LEVELS + 1];
    if (time_levels(M, from) != ADIA_OK) {
        put(buf, len, k, "  per cycle, measured: not measured (%.200s)\n", adia_last_error());
        adia_clear_error();
        return;
    }
    const int v = S->cycle == 'v';
    put(buf, len, k, "  per cycle, measured (ms, the median of %d run now%s): %.4f; %s", TIME_RUNS,
        S->device ? " in a CUDA graph" : "", from[0],
        v ? "each level's own part:" : "from each level down:");
    for (int l = 0; l < S->nlev; l++) {   /* a part below the timer's noise: 0, not -0.0001 */
        const double part = from[l] - from[l + 1];
        put(buf, len, k, "%s %d %.4f", l ? "," : " level", l, v ? (part > 0 ? part : 0) : from[l]);
    }
    put(buf, len, k, "\n");
}

static void mg_explain(const adia_precond *M, char *buf, size_t len)
{
    const mg_state *S = M->impl;
    size_t k = 0;
    put(buf, len, &k, "mg: %d levels, %c-cycle, %s smoother (", S->nlev, S->cycle,
        smoother_name(S->smoother));
    if (S->smoother == MG_CHEB) put(buf, len, &k, "degree %d, ", S->degree);
    put(buf, len, &k, "%d sweep%s before and after), grid %s, coarsening %s\n", S->sweeps,
        S->sweeps > 1 ? "s" : "", S->grid_given ? "given" : "found from the offsets",
        coarsening_name(S->coarsening));
    if (S->mixed)
        put(buf, len, &k, "  levels in %s (float_levels), the plan in %s: the finest level a "
            "%s copy of its matrix, r and z converted at each apply\n",
            adia_value_type_name(S->lev[0].vtype), adia_value_type_name(M->vtype),
            adia_value_type_name(S->lev[0].vtype));
    else if (S->nlev > 1 && S->lev[1].vtype != M->vtype)
        put(buf, len, &k, "  coarse levels in %s (float_levels), the finest the plan itself in "
            "%s\n", adia_value_type_name(S->lev[1].vtype), adia_value_type_name(M->vtype));
    explain_levels(S, 0, buf, len, &k);
    int64_t nnz = 0, rows = 0;
    for (int l = 0; l < S->nlev; l++) nnz += S->lev[l].nnz, rows += S->lev[l].rows;
    if (!S->slab)   /* a slab's levels are this process's planes: no whole-grid ratio */
        put(buf, len, &k, "  operator complexity %.3f (nonzeros of all levels / finest), grid "
            "complexity %.3f\n", S->lev[0].nnz ? (double)nnz / (double)S->lev[0].nnz : 0.0,
            S->lev[0].rows ? (double)rows / (double)S->lev[0].rows : 0.0);
    const double fine = (double)adia_format_bytes(adia_plan_format(S->lev[0].plan));
    put(buf, len, &k, "  per cycle: %d kernels of mg + %d products (adia_spmv_async), %.3g MB "
        "moved = %.2f finest-level products (bytes, a model)\n", S->kernels, S->products,
        S->cycle_bytes / 1e6, fine > 0 ? S->cycle_bytes / fine : 0.0);
    explain_times(M, buf, len, &k);
    if (S->slab)
        put(buf, len, &k, "  across processes: %d plane exchange%s and one gather per cycle, "
            "besides the gathered level's own cycle\n", S->exchanges - 1,
            S->exchanges - 1 == 1 ? "" : "s");
    /* the rest of the set-up's wall clock, so that no phase hides (a
     * download of the plan's values once took 0.2-0.8 s unseen here) */
    const double parts = S->ms.grid + S->ms.stencil + S->ms.galerkin + S->ms.plans +
                         S->ms.smoother + S->ms.coarse + S->ms.upload;
    put(buf, len, &k, "  setup ms: grid %.2f, stencil %.2f, galerkin %.2f, plans %.2f, "
        "smoothers %.2f, coarsest %.2f, arrays %.2f, other %.2f (%s)\n", S->ms.grid,
        S->ms.stencil, S->ms.galerkin, S->ms.plans, S->ms.smoother, S->ms.coarse, S->ms.upload,
        M->setup_ms > parts ? M->setup_ms - parts : 0.0,
        S->setup.on_device ? "on the device" : "on the host");
    for (int l = 1; l < S->nlev; l++)
        put(buf, len, &k, "    level %d: galerkin %.2f ms, plan %.2f ms\n", l,
            S->lev[l].galerkin_ms, S->lev[l].plan_ms);
    if (S->setup.on_device)
        put(buf, len, &k, "  device setup: %d launches, %d waits for the host, %.3g MB moved = "
            "%.1f finest-level products (bytes, a model); the finest stencil %s\n",
            S->setup.kernels, S->setup.syncs, S->setup.bytes / 1e6,
            fine > 0 ? S->setup.bytes / fine : 0.0,
            S->setup.lent ? "read in place from the plan's diagonals"
                          : "copied from the plan's storage");
    else if (S->setup.why_host[0])
        put(buf, len, &k, "  setup on the host: %s\n", S->setup.why_host);
}

static void mg_destroy(adia_precond *M)
{
    mg_state *S = M->impl;
    if (!S) return;
    for (int l = 0; l < MG_MAX_LEVELS; l++) {
        mg_level *L = &S->lev[l];
        if (L->own_plan) adia_plan_destroy(L->plan);
        void *arrays[] = {L->s, L->ainv};   /* b, x, t, d: in S->work */
        for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++) free_array(S, arrays[a]);
    }
    adia_precond_destroy(S->inner);
    adia_plan_destroy(S->inner_plan);
    free_array(S, S->work);
    free_array(S, S->full_b);
    free_array(S, S->full_x);
    free(S);
    M->impl = NULL;
}

const adia_precond_ops adia__precond_mg = {
    .name = "mg",
    .setup = mg_setup,
    .apply = mg_apply,
    .diagonal = NULL,
    .graph = 2,
    .varies = 0,
    .explain = mg_explain,
    .destroy = mg_destroy,
};
