/* agg.c -- multigrid by smoothed aggregation of consecutive rows (kind
 * "agg", issue 30's item 3) for symmetric positive definite matrices that
 * no stencil grid suits: banded operators of high order (biharm1d: 1 -4 6
 * -4 1), one-dimensional finite elements with several unknowns a node,
 * any SPD matrix whose smooth error varies slowly along its rows.
 *
 * Each level's rows are taken in blocks of AGG_BLOCK consecutive rows (the
 * aggregates; the last may be shorter), P0 the piecewise constant
 * interpolation from them, and
 *
 *   P = (I - omega / lmax D^-1 A) P0,   A_c = P' A P,   omega = 4/3,
 *
 * smoothed aggregation (Vanek, Mandel, Brezina 1996): P0 alone does not
 * scale (PCG iterations grow with n; bench/aggregation-probe.py), the
 * smoothed P does far better.  P and A_c stay banded -- A's half
 * bandwidth k becomes about (3k + 1) / 2 on the next level -- so every
 * level is a diagonal matrix again, planned as any matrix is.  The cycle
 * is mg's V(1,1) with its Chebyshev smoother (mg.h's step and kernels,
 * degree 2 on [lmax / 5, lmax] of D^-1 A), the residual and the transfers
 * by products (adia_spmv on the level's plan, P's and P's transpose's),
 * and a dense inverse on the coarsest level (at most AGG_COARSE_ROWS).
 * M is symmetric (R = P', the same smoother before and after) and
 * positive definite for SPD A, so CG may use it.  The cycle queues only
 * adia_spmv_async and mg's kernels on the caller's stream, its arrays
 * where the plan lives (adia__precond_array), as mg's and cheb's do.
 *
 * Set up on the host (the products in CSR, here); on a GPU plan each
 * level's plans are made for the device in the plan's value type and the
 * arrays live there: the cycle is then the device's. */
#include "mg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define AGG_BLOCK 2           /* rows an aggregate (the probe: 2 beat 3 and k + 1) */
#define AGG_COARSE_ROWS 128   /* the coarsest level's rows at most: dense inverse */
#define AGG_MAX_LEVELS 32
#define AGG_OMEGA (4.0 / 3.0) /* P's smoothing weight, over lmax */
#define AGG_DEGREE 2          /* Chebyshev steps of the smoother (mg's) */
/* The set-up's products may take AGG_WORK multiplications per nonzero of
 * A, and at least AGG_MIN_WORK (about half a second on one core), in all:
 * each is counted before it runs and refused past what is left.  A band
 * of half width k costs (2k + 1)(k + 2) a row, growing by about 1.125 a
 * level as the band widens 1.5x and the rows halve: a 1D band stays well
 * under it; a 2D or 3D grid's band (k = nx, nx ny) takes thousands a row
 * from the first product (lap2d5:256, lap3d7:24 took 6-10 s before this
 * budget, refused now within a second) -- not what this kind suits: mg's. */
#define AGG_WORK 1024
#define AGG_MIN_WORK ((int64_t)1 << 29)

typedef struct agg_level {
    adia_matrix *A;           /* the level's matrix (host CSR, owned)          */
    adia_plan *plan;          /* its product: level 0 the caller's, else own   */
    adia_plan *P, *R;         /* to this level from the next and back (not on
                                 the coarsest)                                 */
    mg_level L;               /* rows, bounds and arrays the smoother reads:
                                 s = 1 / a_ii, t = A x, d, b, x; the coarsest's
                                 ainv                                          */
} agg_level;

typedef struct agg_state {
    int nlev, degree;
    mg_state ctx;             /* what mg's kernels read (device)                */
    agg_level lev[AGG_MAX_LEVELS];
    int64_t nnz;              /* of every level's matrix                        */
    int64_t budget;           /* multiplications the set-up's products have left */
    double setup_ms;
    double coarse_shift;      /* tau of the coarsest's shift (0: none)          */
} agg_state;

/* ------------------------------------------------------- CSR products */

/* C = A B (host CSR; adia_spgemm multiplies diagonals, and P's entries
 * lie on a line of slope 1/2, on no diagonal), rows on threads.  Row i's
 * terms a_ik b_kj land in a dense accumulator over the columns the row
 * can reach -- [first column of B's row k, last] over A's k: a window as
 * wide as the band, not B's width, so each thread holds one -- added in
 * the order p, q (the same bits whatever the threads), and read back in
 * column order: C comes out canonical and is kept as it is (the sort of
 * adia_matrix_create_csr on unsorted rows was most of a level's product:
 * biharm1d:300000's set-up, 2 cores).  Two passes: the counts, then the
 * values.  The work is the multiplications, sum over A's entries a_ik of
 * row k's length in B. */
typedef struct window {
    int32_t lo, hi;           /* row i's reachable columns [lo, hi]; lo > hi: none */
} window;

static window row_window(const adia_csr *a, const adia_csr *b, int32_t i)
{
    window w = {INT32_MAX, -1};
    for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
        const int32_t k = a->colind[p];
        if (b->rowptr[k] == b->rowptr[k + 1]) continue;
        w.lo = b->colind[b->rowptr[k]] < w.lo ? b->colind[b->rowptr[k]] : w.lo;
        w.hi = b->colind[b->rowptr[k + 1] - 1] > w.hi ? b->colind[b->rowptr[k + 1] - 1] : w.hi;
    }
    return w;
}

/* Row i of A B into acc / mark (span entries from w.lo); its count, and
 * with cols its columns and values written there in order. */
static int64_t product_row(const adia_csr *a, const adia_csr *b, int32_t i, window w, double *acc,
                           int64_t *mark, int32_t *cols, double *vals)
{
    const double *av = a->values, *bv = b->values;
    for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
        const int32_t k = a->colind[p];
        for (int64_t q = b->rowptr[k]; q < b->rowptr[k + 1]; q++) {
            const int32_t x = b->colind[q] - w.lo;
            if (mark[x] != i) mark[x] = i, acc[x] = 0;
            acc[x] += av[p] * bv[q];
        }
    }
    int64_t count = 0;
    for (int32_t x = 0; x <= w.hi - w.lo; x++)
        if (mark[x] == i) {
            if (cols) cols[count] = w.lo + x, vals[count] = acc[x];
            count++;
        }
    return count;
}

static adia_status csr_multiply(const adia_matrix *Am, const adia_matrix *Bm, int64_t *budget,
                                adia_matrix **C)
{
    const adia_csr *a = &Am->csr, *b = &Bm->csr;   /* master matrices: double, canonical */
    window *win = adia__alloc((size_t)a->rows + 1, sizeof *win, "agg product");
    if (!win) return ADIA_ERR_NO_MEMORY;
    int64_t mults = 0, span = 1;
    const int threads = adia__threads();
#pragma omp parallel for reduction(+ : mults) reduction(max : span) schedule(static) num_threads(threads) if (a->nnz > 65536)
    for (int32_t i = 0; i < a->rows; i++) {
        for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++)
            mults += b->rowptr[a->colind[p] + 1] - b->rowptr[a->colind[p]];
        win[i] = row_window(a, b, i);
        if ((int64_t)win[i].hi - win[i].lo + 1 > span) span = (int64_t)win[i].hi - win[i].lo + 1;
    }
    if (mults > *budget) {
        free(win);
        return adia__error(ADIA_ERR_UNSUPPORTED, "agg preconditioner: a Galerkin product of %d "
                          "rows would take %lld multiplications, past the %lld the set-up has "
                          "left (%d per nonzero of A, at least 2^29, in all): the matrix is not "
                          "banded enough for aggregation of consecutive rows (a grid's: mg)",
                          a->rows, (long long)mults, (long long)*budget, AGG_WORK);
    }
    *budget -= mults;
    adia_csr c = {.rows = a->rows, .cols = b->cols, .vtype = ADIA_DOUBLE};
    c.rowptr = adia__calloc((size_t)a->rows + 1, sizeof *c.rowptr, "agg product");
    /* each thread's accumulator on cache lines of its own: a band's span
     * is a few entries, and threads writing one line took 2 cores 1.4x
     * the time of one */
    const int64_t stride = (span + 7) / 8 * 8 + 8;
    double *acc = adia__alloc((size_t)(stride * threads), sizeof *acc, "agg product");
    int64_t *mark = adia__alloc((size_t)(stride * threads), sizeof *mark, "agg product");
    adia_status s = c.rowptr && acc && mark ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int pass = 0; pass < 2 && s == ADIA_OK; pass++) {
#pragma omp parallel num_threads(threads) if (mults > 65536)
        {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            double *my_acc = acc + stride * t;
            int64_t *my_mark = mark + stride * t;
            for (int64_t x = 0; x < span; x++) my_mark[x] = -1;
#pragma omp for schedule(static)
            for (int32_t i = 0; i < a->rows; i++) {
                if (win[i].lo > win[i].hi) continue;
                if (pass == 0)
                    c.rowptr[i + 1] = product_row(a, b, i, win[i], my_acc, my_mark, NULL, NULL);
                else
                    product_row(a, b, i, win[i], my_acc, my_mark, c.colind + c.rowptr[i],
                                (double *)c.values + c.rowptr[i]);
            }
        }
        if (pass == 0) {
            for (int32_t i = 0; i < a->rows; i++) c.rowptr[i + 1] += c.rowptr[i];
            c.nnz = c.rowptr[a->rows];
            c.colind = adia__alloc((size_t)c.nnz + 1, sizeof *c.colind, "agg product");
            c.values = adia__alloc((size_t)c.nnz + 1, sizeof(double), "agg product");
            if (!c.colind || !c.values) s = ADIA_ERR_NO_MEMORY;
        }
    }
    free(win), free(acc), free(mark);
    if (s != ADIA_OK) {
        adia__csr_free(&c);
        return s;
    }
    return adia__matrix_wrap(&c, C);
}

/* Row i of P = (I - w D^-1 A) P0 (w: omega / lmax / a_ii): the aggregates
 * its entries reach and i's own, ascending (A's columns ascend, so their
 * aggregates do too); its count, and with cols its columns and values
 * written there. */
static int64_t p_row(const adia_csr *a, int32_t i, double w, int32_t *cols, double *vals)
{
    const int32_t own = i / AGG_BLOCK;
    int64_t n = 0;
    int32_t last = -1;   /* the row's last aggregate so far */
    int placed = 0;
    for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
        const int32_t J = a->colind[p] / AGG_BLOCK;
        const double t = w * ((const double *)a->values)[p];
        if (!placed && own < J) {
            if (cols) cols[n] = own, vals[n] = 1;
            n++, last = own, placed = 1;
        }
        if (last == J) {
            if (cols) vals[n - 1] -= t;
        } else {
            if (cols) cols[n] = J, vals[n] = (J == own) - t;
            n++, last = J, placed |= J == own;
        }
    }
    if (!placed) {
        if (cols) cols[n] = own, vals[n] = 1;
        n++;
    }
    return n;
}

/* P = (I - omega / lmax D^-1 A) P0 (n x nc), P0 the aggregates of
 * AGG_BLOCK consecutive rows: rows on threads, two passes (the counts,
 * then the entries), canonical as it comes (the same bits whatever the
 * threads). */
static adia_status smoothed_p(const adia_matrix *Am, const double *dinv, double lmax,
                              int32_t nc, adia_matrix **P)
{
    const adia_csr *a = &Am->csr;
    const int32_t n = a->rows;
    const int threads = adia__threads();
    adia_csr c = {.rows = n, .cols = nc, .vtype = ADIA_DOUBLE};
    c.rowptr = adia__calloc((size_t)n + 1, sizeof *c.rowptr, "agg interpolation");
    if (!c.rowptr) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel for schedule(static) num_threads(threads) if (a->nnz > 65536)
    for (int32_t i = 0; i < n; i++) c.rowptr[i + 1] = p_row(a, i, 0, NULL, NULL);
    for (int32_t i = 0; i < n; i++) c.rowptr[i + 1] += c.rowptr[i];
    c.nnz = c.rowptr[n];
    c.colind = adia__alloc((size_t)c.nnz + 1, sizeof *c.colind, "agg interpolation");
    c.values = adia__alloc((size_t)c.nnz + 1, sizeof(double), "agg interpolation");
    if (!c.colind || !c.values) {
        adia__csr_free(&c);
        return ADIA_ERR_NO_MEMORY;
    }
#pragma omp parallel for schedule(static) num_threads(threads) if (a->nnz > 65536)
    for (int32_t i = 0; i < n; i++)
        p_row(a, i, AGG_OMEGA / lmax * dinv[i], c.colind + c.rowptr[i],
              (double *)c.values + c.rowptr[i]);
    return adia__matrix_wrap(&c, P);
}

/* ------------------------------------------------------------- set-up */

/* A level's plan (its matrix, P or R), where M's lives and in its type. */
static adia_status plan_of(const adia_precond *M, const adia_matrix *A, adia_plan **out)
{
    adia_plan_hints h = {.device = M->device, .vtype = M->vtype, .expected_calls = 100};
    return adia_plan_create(A, &h, out);
}

/* Level V's bounds and smoother arrays (where M lives); its inverse
 * diagonal 1 / a_ii into dinv. */
static adia_status smoother(const adia_precond *M, agg_level *V, double *dinv)
{
    double est, g;
    ADIA_TRY(adia__precond_spd_bounds("agg", V->A, dinv, &est, &g));
    mg_estimate e = {.q = est, .bound = g};
    ADIA_TRY(adia__mg_bounds(&e, V->L.rows, &V->L.lmax, &V->L.lmin));
    V->L.est = e;
    for (int64_t i = 0; i < V->L.rows; i++) dinv[i] = 1 / dinv[i];
    ADIA_TRY(adia__precond_array(M, V->L.rows, dinv, &V->L.s));
    ADIA_TRY(adia__precond_array(M, V->L.rows, NULL, &V->L.t));
    return adia__precond_array(M, V->L.rows, NULL, &V->L.d);
}

/* The coarsest level: its dense inverse (where M lives).  A_c = P' A P is
 * SPD in exact arithmetic; where A's condition is beyond double's
 * (biharm1d:300000, about 1e22) the coarsest's least eigenvalues fall
 * under its rounding and Cholesky fails.  Then its symmetric part shifted
 * by the least tau max_i a_ii (tau = 1e-14, 1e-13 ... 1e-8) that Cholesky
 * takes: SPD, so M stays SPD (explain prints tau); past 1e-8 A is taken
 * for what it says, not SPD. */
#define AGG_SHIFT_FIRST 1e-14
#define AGG_SHIFT_LAST 1e-8
static adia_status coarsest(const adia_precond *M, agg_state *G, agg_level *V)
{
    const adia_csr *c = &V->A->csr;
    const double *cv = c->values;
    const int64_t n = c->rows;
    double *a = adia__calloc((size_t)(n * n) + 1, sizeof *a, "agg coarsest matrix");
    double *inv = adia__alloc((size_t)(n * n) + 1, sizeof *inv, "agg coarsest inverse");
    adia_status s = a && inv ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int64_t i = 0; s == ADIA_OK && i < n; i++)
        for (int64_t p = c->rowptr[i]; p < c->rowptr[i + 1]; p++)
            a[i * n + c->colind[p]] = cv[p];
    int spd = 0;
    if (s == ADIA_OK) s = adia__dense_inverse(a, n, inv, &spd);
    double dmax = 0;
    for (int64_t i = 0; s == ADIA_OK && !spd && i < n; i++) {
        dmax = fmax(dmax, a[i * n + i]);
        for (int64_t j = 0; j < i; j++)
            a[i * n + j] = a[j * n + i] = 0.5 * (a[i * n + j] + a[j * n + i]);
    }
    for (double tau = AGG_SHIFT_FIRST, prev = 0; s == ADIA_OK && !spd && tau <= AGG_SHIFT_LAST;
         prev = tau, tau *= 10) {
        for (int64_t i = 0; i < n; i++) a[i * n + i] += (tau - prev) * dmax;
        s = adia__dense_inverse(a, n, inv, &spd);
        G->coarse_shift = spd ? tau : 0;
    }
    if (s == ADIA_OK && !spd)
        s = adia__error(ADIA_ERR_INVALID_ARG, "agg preconditioner: the coarsest matrix (%lld "
                       "rows) is not symmetric positive definite: A is not", (long long)n);
    if (s == ADIA_OK) s = adia__precond_array(M, n * n, inv, &V->L.ainv);
    free(a);
    free(inv);
    return s;
}

/* Level l + 1 from level l: P, R = P', A_c = R (A P), their plans. */
static adia_status coarsen(const adia_precond *M, agg_state *G, int l, const double *dinv)
{
    agg_level *F = &G->lev[l], *C = &G->lev[l + 1];
    const int32_t nc = (int32_t)((F->L.rows + AGG_BLOCK - 1) / AGG_BLOCK);
    adia_matrix *P = NULL, *R = NULL, *AP = NULL;
    adia_status s = smoothed_p(F->A, dinv, F->L.lmax, nc, &P);
    adia__phase("agg: P");
    if (s == ADIA_OK) s = adia_matrix_transpose(P, &R);
    adia__phase("agg: R = P^T");
    if (s == ADIA_OK) s = csr_multiply(F->A, P, &G->budget, &AP);
    if (s == ADIA_OK) s = csr_multiply(R, AP, &G->budget, &C->A);
    adia__phase("agg: A_c = R A P");
    if (s == ADIA_OK) s = plan_of(M, P, &F->P);
    if (s == ADIA_OK) s = plan_of(M, R, &F->R);
    if (s == ADIA_OK) s = plan_of(M, C->A, &C->plan);
    adia__phase("agg: plans of P, R, A_c");
    adia_matrix_destroy(P), adia_matrix_destroy(R), adia_matrix_destroy(AP);
    C->L.rows = nc;
    return s;
}

static adia_status check_options(const adia_precond_options *o)
{
    if (o->smoother || o->sweeps > 0 || (o->cycle && o->cycle != 'v') || o->grid[0] > 0 ||
        o->grid[1] > 0 || o->grid[2] > 0 || o->float_levels || o->slab)
        return adia__error(ADIA_ERR_INVALID_ARG, "agg preconditioner: smoother, sweeps, cycle, "
                          "grid, float_levels and slab are mg's options (agg takes degree and "
                          "max_levels)");
    return ADIA_OK;
}

static adia_status agg_setup(adia_precond *M, const adia_precond_options *opt)
{
    ADIA_TRY(check_options(opt));
    if (M->automatic && !M->strip)   /* set by mg, which auto tries first */
        return adia__error(ADIA_ERR_UNSUPPORTED, "agg preconditioner: A is no strip 2 points "
                          "wide (auto gives agg only those; give kind agg)");
    const double t0 = adia__now_ms();
    agg_state *G = adia__calloc(1, sizeof *G, "agg preconditioner");
    if (!G) return ADIA_ERR_NO_MEMORY;
    M->impl = G;
    G->degree = opt->degree > 0 ? opt->degree : AGG_DEGREE;
    const int most = opt->max_levels > 0 && opt->max_levels < AGG_MAX_LEVELS ? opt->max_levels
                                                                              : AGG_MAX_LEVELS;
    G->ctx.device = M->device;
    agg_level *V = &G->lev[0];
    ADIA_TRY(adia_format_to_matrix(adia_plan_format(M->plan), &V->A));
    V->plan = M->plan;
    G->budget = V->A->csr.nnz > AGG_MIN_WORK / AGG_WORK ? V->A->csr.nnz * AGG_WORK : AGG_MIN_WORK;
    V->L.rows = M->n;
    V->L.vtype = M->vtype;
    G->nlev = 1;
    adia_status s = ADIA_OK;
    while (s == ADIA_OK && V->L.rows > AGG_COARSE_ROWS && G->nlev < most) {
        double *dinv = adia__alloc((size_t)V->L.rows + 1, sizeof *dinv, "agg diagonal");
        s = dinv ? smoother(M, V, dinv) : ADIA_ERR_NO_MEMORY;
        adia__phase("agg: bounds, smoother arrays");
        if (s == ADIA_OK) s = coarsen(M, G, G->nlev - 1, dinv);
        free(dinv);
        if (s != ADIA_OK) break;
        V = &G->lev[G->nlev++];
        V->L.vtype = M->vtype;
        s = adia__precond_array(M, V->L.rows, NULL, &V->L.b);
        if (s == ADIA_OK) s = adia__precond_array(M, V->L.rows, NULL, &V->L.x);
    }
    if (s == ADIA_OK && V->L.rows > MG_DENSE_MAX)
        s = adia__error(ADIA_ERR_INVALID_ARG, "agg preconditioner: the coarsest level (%lld "
                       "rows, max_levels %d) is above the %d rows of the dense direct solve",
                       (long long)V->L.rows, most, MG_DENSE_MAX);
    if (s == ADIA_OK) s = coarsest(M, G, V);
    for (int l = 0; l < G->nlev; l++) G->nnz += G->lev[l].A ? G->lev[l].A->csr.nnz : 0;
    G->setup_ms = adia__now_ms() - t0;
    return s;
}

/* -------------------------------------------------------------- apply */

static const mg_kernels *kernels(const agg_state *G)
{
    return G->ctx.device ? &adia__mg_gpu_kernels : &adia__mg_cpu_kernels;
}

/* Chebyshev smoothing of level V (mg's step): from x = 0 (zero_x) or x. */
static adia_status smooth(const agg_state *G, const agg_level *V, double bs, const void *b,
                          void *x, int zero_x, void *stream)
{
    const double theta = 0.5 * (V->L.lmax + V->L.lmin), delta = 0.5 * (V->L.lmax - V->L.lmin);
    double rho = 0;
    for (int k = 0; k < G->degree; k++) {
        const mg_step st = mg_cheb_step(k, G->degree, theta, delta, zero_x, &rho);
        if (!st.zero_x) ADIA_TRY(adia_spmv_async(V->plan, 1.0, x, 0.0, V->L.t, stream));
        ADIA_TRY(kernels(G)->smooth(&G->ctx, &V->L, st, bs, b, x, stream));
    }
    return ADIA_OK;
}

/* x ~ A_l^-1 (bs b) from x = 0: one V-cycle, queued on stream. */
static adia_status vcycle(const agg_state *G, int l, double bs, const void *b, void *x,
                          void *stream)
{
    const agg_level *V = &G->lev[l];
    if (l == G->nlev - 1) return kernels(G)->coarse(&G->ctx, &V->L, bs, b, x, stream);
    const agg_level *C = V + 1;
    ADIA_TRY(smooth(G, V, bs, b, x, 1, stream));
    void *r = V->L.t;   /* r = bs b - A x */
    ADIA_TRY(adia__precond_scale(G->ctx.device, V->L.vtype, V->L.rows, bs, NULL, b, r, stream));
    ADIA_TRY(adia_spmv_async(V->plan, -1.0, x, 1.0, r, stream));
    ADIA_TRY(adia_spmv_async(V->R, 1.0, r, 0.0, C->L.b, stream));
    ADIA_TRY(vcycle(G, l + 1, 1.0, C->L.b, C->L.x, stream));
    ADIA_TRY(adia_spmv_async(V->P, 1.0, C->L.x, 1.0, x, stream));   /* x += P x_c */
    return smooth(G, V, bs, b, x, 0, stream);
}

static adia_status agg_apply(const adia_precond *M, double alpha, const void *r, void *z,
                             void *stream)
{
    return vcycle(M->impl, 0, alpha, r, z, stream);
}

/* ------------------------------------------------------ explain, destroy */

static void agg_explain(const adia_precond *M, char *buf, size_t len)
{
    const agg_state *G = M->impl;
    size_t k = (size_t)snprintf(buf, len, "agg: %d levels, smoothed aggregation of %d "
                                "consecutive rows, v-cycle, Chebyshev smoother (degree %d), "
                                "set up in %.2f ms (on the host)\n", G->nlev, AGG_BLOCK,
                                G->degree, G->setup_ms);
    for (int l = 0; l < G->nlev && k < len; l++) {
        const agg_level *V = &G->lev[l];
        k += (size_t)snprintf(buf + k, len - k, "  level %d: %lld rows, %lld nonzeros, plan %s",
                              l, (long long)V->L.rows, (long long)V->A->csr.nnz,
                              adia_plan_format_name(V->plan));
        if (k >= len) break;
        if (l < G->nlev - 1)
            k += (size_t)snprintf(buf + k, len - k, ", lambda_max(D^-1 A) <= %.4g\n", V->L.lmax);
        else if (G->coarse_shift > 0)
            k += (size_t)snprintf(buf + k, len - k, ", dense inverse (Cholesky of its symmetric "
                                  "part + %g max_i a_ii: not SPD in double)\n", G->coarse_shift);
        else
            k += (size_t)snprintf(buf + k, len - k, ", dense inverse (Cholesky)\n");
    }
    if (k < len && G->lev[0].A)
        snprintf(buf + k, len - k, "  operator complexity %.3f (nonzeros of all levels / "
                 "finest)\n", (double)G->nnz / (double)(G->lev[0].A->csr.nnz > 0
                                                            ? G->lev[0].A->csr.nnz : 1));
}

static void agg_destroy(adia_precond *M)
{
    agg_state *G = M->impl;
    if (!G) return;
    for (int l = 0; l < AGG_MAX_LEVELS; l++) {
        agg_level *V = &G->lev[l];
        adia_matrix_destroy(V->A);
        if (l > 0) adia_plan_destroy(V->plan);
        adia_plan_destroy(V->P);
        adia_plan_destroy(V->R);
        void *arrays[] = {V->L.s, V->L.t, V->L.d, V->L.ainv, l > 0 ? V->L.b : NULL,
                          l > 0 ? V->L.x : NULL};
        for (int a = 0; a < 6; a++) adia__precond_array_free(M, arrays[a]);
    }
    free(G);
    M->impl = NULL;
}

const adia_precond_ops adia__precond_agg = {
    .name = "agg",
    .setup = agg_setup,
    .apply = agg_apply,
    .diagonal = NULL,
    .identity = 0,
    .graph = 2,   /* products and kernels only */
    .varies = 0,
    .explain = agg_explain,
    .destroy = agg_destroy,
};
