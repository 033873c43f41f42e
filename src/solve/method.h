/* method.h -- a method once, for the CPU and the GPU (docs/solvers.md):
 * the solver's state, each method's scalar step and stop tests (SOLVE_HD:
 * the same code on the host and on the device), the stop reason's words,
 * and the table of vector kernels each device implements (solve.c for
 * the CPU, solve_gpu.cu and the *_gpu.cu files for the GPU), over which
 * the methods' iterations are written once (cg.c, bicgstab.c, gmres.c).
 *
 * A method's iteration is a sequence of stages -- the preconditioner's
 * z = M r, the operator's product with its fused sums, the method's
 * vector pass -- each a kernel of the device's table.  The scalars
 * (alpha, beta, the stop test) are computed where the vector pass runs:
 * by the last block of its reduction on the GPU (so no iteration waits
 * for the host), by the calling thread on the CPU, both with the
 * functions below, so both take the same decisions on the same sums. */
#ifndef ADIA_SOLVE_METHOD_H
#define ADIA_SOLVE_METHOD_H

#include "solve_internal.h"

#include <math.h>

#ifdef __CUDACC__
#define SOLVE_HD __host__ __device__
#else
#define SOLVE_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum solve_status { SOLVE_RUNNING = 0, SOLVE_CONVERGED, SOLVE_LIMIT, SOLVE_BREAKDOWN,
                    SOLVE_NONFINITE };
/* Which quantity stopped it (solve_state.broke), for the stop's words. */
enum solve_broke { BROKE_RESIDUAL = 0, BROKE_R0V, BROKE_OMEGA, BROKE_RHO, BROKE_PAP,
                   BROKE_HESSENBERG };

/* The sums of the operator's product, in adia_spmv_sums_async's order
 * (x'y, z'x, z'z, y'y, z'y). */
enum { SOLVE_DOT_XY = 0, SOLVE_DOT_ZX, SOLVE_DOT_ZZ, SOLVE_DOT_YY, SOLVE_DOT_ZY,
       SOLVE_NDOT = ADIA_SPMV_SUMS };

/* The solver's scalars: device memory on the GPU, the host's on the CPU. */
typedef struct solve_state {
    double tol2;                 /* (rtol ||b||)^2                          */
    double rr;                   /* ||r||^2 of the recurrence               */
    double rz, alpha, beta;      /* CG                                      */
    double rho, omega;           /* BiCGSTAB                                */
    double why;                  /* the value that stopped it               */
    int broke;                   /* which quantity (solve_broke)            */
    double tt;                   /* BiCGSTAB: t't when omega broke          */
    int iter, max_iter, status;
    unsigned count;              /* GPU: blocks done in the current reduction */
    double norm_max, norm;       /* GPU: scaled norm: max |v|, then the norm */
    double norm_m;               /* GPU: the norm is norm_m 2^norm_e (it may */
    int norm_e;                  /*      exceed the range of double)         */
    long long xbad, xlost;       /* GPU: x scaled back: the first row out of
                                    range, the first that lost bits (or n)  */
    int j, m, reorth;            /* GMRES: Arnoldi step, restart, 2nd pass  */
    int reorths;                 /* GMRES: second passes run (bytes moved)  */
    double hnext, wbefore2, wnorm2;   /* GMRES: h(j+1,j), ||w||^2 before/after */
    int split;                   /* reductions finish after the processes' sum */
    double sums[2];              /* split: this process's totals, then all's */
} solve_state;

/* Stop test once the recurrence's ||r||^2 is known. */
static inline SOLVE_HD void solve_check_stop(solve_state *st, double rr)
{
    st->rr = rr;
    if (!isfinite(rr)) {
        st->status = SOLVE_NONFINITE;
        st->broke = BROKE_RESIDUAL;
        st->why = rr;
    } else if (rr <= st->tol2) {
        st->status = SOLVE_CONVERGED;
    } else if (st->iter >= st->max_iter) {
        st->status = SOLVE_LIMIT;
    }
}

/* ------------------------------------------------------------------ CG
 *
 * Chronopoulos-Gear CG: one product and one vector pass an iteration.  The
 * product w = A u (u = D r, M r, or r itself) carries the iteration's
 * three sums (delta = u'w, gamma = r'u, rho = r'r), so the vector pass
 * reads no reduction of its own:
 *   beta = gamma / gamma_prev, alpha = gamma / (delta - beta gamma / alpha_prev)
 *   p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = D r.
 * In exact arithmetic it is CG (s = A p, delta - beta gamma / alpha_prev =
 * p'Ap), with the same iterates; the stop test reads rho of the current r
 * before the update, so `iterations` counts updates.  With a stage M the
 * pass also sums the updated r'r and stops right after the update that
 * converged (testing rho at the next product would run one more M r and
 * product for nothing: 7.9 of mg-PCG's 35.7 ms on lap3d7:256, H200,
 * 2026-11-27), except across processes on the GPU (st->split: the sum
 * over them is not at hand in the kernel), where the stop stays at the
 * next product. */

/* One step's scalars and verdict, from the product's sums. */
typedef struct solve_cg_scalars {
    double alpha, beta;
    double why;                  /* the value the verdict is on             */
    int status, broke;           /* solve_status, solve_broke               */
} solve_cg_scalars;

static inline SOLVE_HD solve_cg_scalars solve_cg_step_scalars(const double *dots,
                                                              const solve_state *st)
{
    const double delta = dots[SOLVE_DOT_XY], gamma = dots[SOLVE_DOT_ZX],
                 rho = dots[SOLVE_DOT_ZZ];
    const int first = st->iter == 0;
    solve_cg_scalars c = {0, first ? 0 : gamma / st->rz, rho, SOLVE_RUNNING, BROKE_RESIDUAL};
    const double pap = first ? delta : delta - c.beta * gamma / st->alpha;
    c.alpha = gamma / pap;
    if (!isfinite(rho)) c.status = SOLVE_NONFINITE;
    else if (rho <= st->tol2) c.status = SOLVE_CONVERGED;
    else if (st->iter >= st->max_iter) c.status = SOLVE_LIMIT;
    if (c.status != SOLVE_RUNNING) return c;
    c.why = pap;
    c.broke = BROKE_PAP;
    if (!isfinite(pap) || !isfinite(c.alpha) || !isfinite(c.beta)) c.status = SOLVE_NONFINITE;
    else if (!(pap > 0)) c.status = SOLVE_BREAKDOWN;   /* p'Ap <= 0: A is not SPD */
    return c;
}

/* The step's end, once its vector pass is done: the state from the
 * scalars and the sums, which it zeroes for the next product (that adds
 * to them); stage: rr is the updated r'r over every process, tested at
 * once. */
static inline SOLVE_HD void solve_cg_finish(solve_state *st, double *dots,
                                            const solve_cg_scalars *c, int stage, double rr)
{
    st->rr = dots[SOLVE_DOT_ZZ];
    st->status = c->status;
    st->why = c->why;
    st->broke = c->broke;
    const double rz = dots[SOLVE_DOT_ZX];
    for (int j = 0; j < SOLVE_NDOT; j++) dots[j] = 0;
    if (c->status != SOLVE_RUNNING) return;
    st->iter++;
    st->rz = rz;
    st->alpha = c->alpha;
    if (stage && !st->split) solve_check_stop(st, rr);
}

/* ------------------------------------------------------------ BiCGSTAB
 *
 * Right-preconditioned (D = Jacobi, M a stage, or I):
 *   p = r + beta (p - omega v); ph = D p; v = A ph; alpha = rho / r0'v;
 *   s = r - alpha v; sh = D s; t = A sh; omega = t's / t't;
 *   x += alpha ph + omega sh; r = s - omega t; rho' = r0'r; beta = ...
 * r0'v comes out of the product v = A ph (companion r0), t's, t't and s's
 * (the early finish's test) out of t = A sh (companion s): three
 * reductions an iteration, the two products' and the update's.  s lives
 * in r. */

/* After r = b - A x, r0 = r: the state from r0'r (= r'r). */
static inline SOLVE_HD void solve_bicg_start_finish(solve_state *st, double rr)
{
    st->rho = rr;
    st->alpha = st->omega = 1;
    st->beta = 0;            /* first direction: p = r */
    st->iter = 0;
    st->status = SOLVE_RUNNING;
    solve_check_stop(st, rr);
}

/* alpha = rho / r0'v from the first product's sums; 0: a breakdown. */
static inline SOLVE_HD int solve_bicg_alpha(const solve_state *st, const double *dots,
                                            double *alpha)
{
    const double r0v = dots[SOLVE_DOT_ZY];
    *alpha = st->rho / r0v;
    return r0v != 0 && isfinite(r0v) && isfinite(*alpha);
}

/* The half step's end (after s = r - alpha v): alpha kept, or the
 * breakdown; the sums zeroed for the next product. */
static inline SOLVE_HD void solve_bicg_half_finish(solve_state *st, double *dots, double alpha,
                                                   int ok)
{
    st->alpha = alpha;
    if (!ok) {
        const double r0v = dots[SOLVE_DOT_ZY];
        st->status = isfinite(r0v) && isfinite(alpha) ? SOLVE_BREAKDOWN : SOLVE_NONFINITE;
        st->why = r0v;
        st->broke = BROKE_R0V;
    }
    for (int j = 0; j < SOLVE_NDOT; j++) dots[j] = 0;
}

/* omega = t's / t't (0 when s is already small enough: ||s||^2 = s's, the
 * product's companion sum), from the second product's sums; 0: a
 * breakdown. */
static inline SOLVE_HD int solve_bicg_omega(const solve_state *st, const double *dots,
                                            double *omega)
{
    const double ts = dots[SOLVE_DOT_ZY], tt = dots[SOLVE_DOT_YY];
    const int done = dots[SOLVE_DOT_ZZ] <= st->tol2;
    *omega = done ? 0 : tt > 0 ? ts / tt : 0;
    return done || (*omega != 0 && isfinite(*omega));
}

/* The update's end from its sums v = (r0'r, r'r) over every process: the
 * next beta and rho, the stop tests; the sums zeroed. */
static inline SOLVE_HD void solve_bicg_update_finish(solve_state *st, double *dots,
                                                     const double v[2])
{
    if (st->status != SOLVE_RUNNING) return;
    double omega;
    const int ok = solve_bicg_omega(st, dots, &omega);
    const double alpha = st->alpha;
    st->omega = omega;
    if (!ok) {
        st->status = isfinite(omega) ? SOLVE_BREAKDOWN : SOLVE_NONFINITE;
        st->why = omega;
        st->broke = BROKE_OMEGA;
        st->tt = dots[SOLVE_DOT_YY];
    } else {
        st->iter++;
        st->beta = (v[0] / st->rho) * (alpha / omega);
        st->rho = v[0];
        solve_check_stop(st, omega == 0 ? dots[SOLVE_DOT_ZZ] : v[1]);
        if (st->status == SOLVE_RUNNING && (v[0] == 0 || !isfinite(v[0]))) {
            st->status = isfinite(v[0]) ? SOLVE_BREAKDOWN : SOLVE_NONFINITE;
            st->why = v[0];
            st->broke = BROKE_RHO;
        }
    }
    for (int j = 0; j < SOLVE_NDOT; j++) dots[j] = 0;
}

/* --------------------------------------------------------------- GMRES
 *
 * Restarted GMRES(m), right-preconditioned (A D u = b, x = x0 + D V y),
 * Givens rotations on a column of H at a time, |g(j+1)| the residual
 * norm of the current iterate.  A cycle: w = b - A x, beta = ||w||, V_0 =
 * w / beta; a step: w = A z (z = D V_j, M V_j, or V_j), w orthogonalized
 * against V_0..V_j (the device's way: classical Gram-Schmidt with a
 * second pass where needed on the GPU, modified Gram-Schmidt on the CPU,
 * whose caches keep each V_k between its dot and its update) into H's
 * column j and ||w||^2, the rotation, V_{j+1} = w / h(j+1,j); the cycle's
 * end: y = H \ g, x += D V y (a stage: x += M (V y); flexible, M varies:
 * Z_j = M V_j kept, x += Z y). */

/* The short vectors: H column-major, (m + 1) rows; hcol (column j before
 * its rotations), cs, sn, g, y (m + 1 each); c (m + 2: the GPU's V_k'w,
 * then w'w).  Device memory on the GPU, the host's on the CPU. */
typedef struct solve_gm_small {
    double *H, *c, *hcol, *cs, *sn, *g, *y;
} solve_gm_small;

/* A cycle's start from rr = ||b - A x||^2: g = beta e_1, j = 0. */
static inline SOLVE_HD void solve_gm_cycle_finish(solve_state *st, const solve_gm_small *sm,
                                                  double rr)
{
    const double beta = sqrt(rr);
    sm->g[0] = beta;
    st->j = 0;
    st->hnext = beta;
    st->status = SOLVE_RUNNING;
    solve_check_stop(st, rr);
}

/* After hcol (column j) and st->wnorm2 = ||w||^2: h(j+1,j) = ||w||, the
 * earlier rotations on column j, a new rotation zeroing h(j+1,j), g
 * rotated and tested. */
static inline SOLVE_HD void solve_gm_givens(solve_state *st, const solve_gm_small *sm)
{
    if (st->status != SOLVE_RUNNING || st->j >= st->m) return;
    const int j = st->j, m = st->m;
    double *hc = sm->hcol, h1 = sqrt(st->wnorm2);
    for (int k = 0; k < j; k++) {
        double a = hc[k], b = hc[k + 1];
        hc[k] = sm->cs[k] * a + sm->sn[k] * b;
        hc[k + 1] = -sm->sn[k] * a + sm->cs[k] * b;
    }
    double r = hypot(hc[j], h1);
    st->reorth = 0;
    if (!(r > 0) || !isfinite(r)) {
        st->status = isfinite(r) ? SOLVE_BREAKDOWN : SOLVE_NONFINITE;   /* j steps stay usable */
        st->why = r;
        st->broke = BROKE_HESSENBERG;
        return;
    }
    sm->cs[j] = hc[j] / r;
    sm->sn[j] = h1 / r;
    hc[j] = r;
    for (int k = 0; k <= j; k++) sm->H[(int64_t)j * (m + 1) + k] = hc[k];
    sm->g[j + 1] = -sm->sn[j] * sm->g[j];
    sm->g[j] *= sm->cs[j];
    st->iter++;
    st->j = j + 1;
    st->hnext = h1;
    solve_check_stop(st, sm->g[j + 1] * sm->g[j + 1]);
    /* h(j+1,j) = 0: the Krylov space is invariant, x is exact */
    if (st->status == SOLVE_RUNNING && h1 == 0) st->status = SOLVE_CONVERGED;
}

/* y = H(0:k,0:k) \ g(0:k), k = the cycle's steps. */
static inline SOLVE_HD void solve_gm_solve_y(const solve_state *st, const solve_gm_small *sm)
{
    const int k = st->j, m1 = st->m + 1;
    for (int i = k - 1; i >= 0; i--) {
        double s = sm->g[i];
        for (int l = i + 1; l < k; l++) s -= sm->H[(int64_t)l * m1 + i] * sm->y[l];
        sm->y[i] = s / sm->H[(int64_t)i * m1 + i];
    }
}

/* ------------------------------------------------------- vector kernels */

/* The vectors a method names; each device maps them to its arrays. */
typedef enum solve_vec {
    SV_NONE = -1, SV_X = 0, SV_B, SV_R, SV_P, SV_Q, SV_S, SV_U,
    SV_R0, SV_PH, SV_SH, SV_T   /* BiCGSTAB's (v is q; s lives in r) */
} solve_vec;
/* GMRES: w is r, the product's input z is p (the stage's output q). */

/* A device's kernels, on its run (`run`: the device's own record of one
 * solve).  Each queues (GPU) or does (CPU) its work and returns the first
 * failure. */
typedef struct solve_kernels {
    /* r = b - A x */
    adia_status (*residual)(void *run);
    /* z = M r: the preconditioner's stage */
    adia_status (*precond)(void *run, solve_vec r, solve_vec z);
    /* y = A x with the product's sums (companion z; SV_NONE: x itself),
     * added over the processes */
    adia_status (*product_sums)(void *run, solve_vec x, solve_vec y, solve_vec z);
    /* CG: after r = b - A x, u = D r (Jacobi) and a fresh state */
    adia_status (*cg_start)(void *run);
    /* CG: the vector pass and the state (solve_cg_step_scalars, _finish) */
    adia_status (*cg_step)(void *run);
    /* BiCGSTAB: after r = b - A x, r0 = r, p = v = 0 and the state from
     * r0'r; then an iteration's three vector passes (p and ph, s and sh,
     * x and r with the state) */
    adia_status (*bicg_start)(void *run);
    adia_status (*bicg_direction)(void *run);
    adia_status (*bicg_half)(void *run);
    adia_status (*bicg_update)(void *run);
    /* y = A x, no sums */
    adia_status (*product)(void *run, solve_vec x, solve_vec y);
    /* GMRES: after w = b - A x (in r), beta and the state
     * (solve_gm_cycle_finish); V_j = w / h(j,j-1) and p = D V_j (a stage:
     * V_j); w orthogonalized against V_0..V_j into hcol and wnorm2; the
     * rotation (solve_gm_givens); flexible: Z_j = q (= M V_j) kept; the
     * cycle's end without a stage or flexible: y, x += D V y or Z y; with
     * a fixed stage: y, p = V y (x += M p follows) */
    adia_status (*gm_cycle_start)(void *run);
    adia_status (*gm_next_basis)(void *run);
    adia_status (*gm_orthogonalize)(void *run);
    adia_status (*gm_givens)(void *run);
    adia_status (*gm_keep_z)(void *run);
    adia_status (*gm_update_x)(void *run);
    adia_status (*gm_combine)(void *run);
    /* x += q */
    adia_status (*add_q)(void *run);
} solve_kernels;

/* One solve as a method sees it. */
typedef struct solve_method {
    const solve_kernels *k;
    void *run;
    int jacobi;                  /* a diagonal M, fused in the vector passes */
    int stage;                   /* an M of its own stage                    */
    int flex;                    /* GMRES: M varies (flexible GMRES)         */
} solve_method;

/* cg.c, bicgstab.c, gmres.c: a method's start (after the state's
 * tolerances are set) and one iteration; GMRES's cycle's end. */
adia_status adia__cg_begin(const solve_method *m);
adia_status adia__cg_iteration(const solve_method *m);
adia_status adia__bicg_begin(const solve_method *m);
adia_status adia__bicg_iteration(const solve_method *m);
adia_status adia__gm_begin_cycle(const solve_method *m);
adia_status adia__gm_step(const solve_method *m);
adia_status adia__gm_end_cycle(const solve_method *m);

/* method.c: why it stopped, in the same words on every device. */
void adia__solve_stop_reason(const solve_state *st, adia_solver method, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
