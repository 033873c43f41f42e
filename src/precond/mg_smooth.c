/* mg_smooth.c -- a level's smoother set-up and the coarsest level's dense
 * inverse, both on the host from the level's stencil.
 *
 * Smoothers (what the cycle's kernels do with s, lmax, lmin):
 *  - Chebyshev: s = 1/a_ii, the polynomial in D^-1 A of the given degree
 *    that is least on [lmin, lmax] (Saad, Iterative Methods, Alg. 12.1);
 *    lmax = 1.1 x an estimate of lambda_max(D^-1 A) (level 0: at most
 *    its Gershgorin bound, which it is once certified), lmin = lmax / 5.
 *    The smoother targets the upper part of the spectrum; hypre's default
 *    fraction 0.3 puts lmin at lmax / 3.3, PETSc's default bounds (0.1,
 *    1.1) x the estimate at lmax / 11, Ifpack2's ratio at lmax / 30.
 *    Measured (V-cycle as a stationary iteration, lap3d7:33, lap2d5:129,
 *    lap3d27:25, 2026-11-27): degree 2 gives factors 0.12 / 0.09 / 0.14 /
 *    0.24 / 0.56 at ratios 4 / 5 / 7 / 10 / 30 (degree 3: 0.06 / 0.045 /
 *    0.05 / 0.08 / 0.33): a low degree needs a narrow interval, and
 *    degree 2 at ratio 5 reduces the residual most per product;
 *  - weighted Jacobi: s = omega / a_ii with omega lmax = 4/3, 1.6, 1.7 in
 *    1, 2, 3 directions coupled: the classical best smoothing weights, 2/3
 *    (1D), 4/5 (2D 5-point) and 6/7 (3D 7-point), are omega lambda_max =
 *    4/3, 1.6 and 1.71; measured on lap3d7:33 (V(2,2)) 0.28 / 0.24 / 0.21
 *    / 0.19 / 0.30 at omega lmax = 4/3 / 1.5 / 1.6 / 1.7 / 1.8, and 0.206
 *    at 12/7.  One weight for every dimension (1.7) was right while level
 *    0's lmax sat 4% above lambda_max; at its certified bound (=
 *    lambda_max on the Laplacians) lap2d5:129x100 took 0.21 a cycle with
 *    it, 0.11 with 1.6 (CPU, 2026-11-27);
 *  - L1-Jacobi: s = 1 / sum_j |a_ij| (Baker, Falgout, Kolev, Yang, SISC
 *    2011: convergent for any SPD A, no weight to choose).
 * Each is a symmetric operator (D^-1/2 p(D^-1/2 A D^-1/2) D^-1/2), so the
 * same sweeps before and after the coarse correction make the V-cycle
 * symmetric; and each converges when lmax bounds lambda_max, so the cycle
 * is positive definite for SPD A. */
#include "mg.h"

#include <math.h>
#include <stdio.h>

#define LMAX_SAFETY 1.1
#define CHEB_RATIO 5.0         /* lmin = lmax / 5: measured, see above   */

/* The estimate (adia__mg_estimate): Rayleigh quotients v'Av / v'Dv of a
 * power iteration on D^-1 A (from mg_start_value, pseudo-random in
 * [-1, 1)): the last, a lower bound of
 * lambda_max for SPD A that converges at twice the power method's rate.
 * Ten steps land 8-10% low on the Laplacians (lap3d7:17/33/65: 1.803,
 * 1.833, 1.832 against 1.985, 1.996, 1.999), so lmax = 1.1 x estimate
 * sits at the true value, within 0.1%.  The smoothers stay convergent
 * (the cycle SPD) up to lambda_max = 1.23 lmax (Chebyshev, ratio 5,
 * degree 2: |T_2| reaches T_2(1.5) = 3.5 there) and 1.17 lmax (Jacobi);
 * Lanczos steps would tighten it (a later step).  (Those figures are from
 * a sequential xorshift start; the hash start shared with the device
 * set-up gives 1.820 / 1.826 / 1.835, within 1%: 2026-11-27.)  Level 0
 * first takes up to MG_CHECKER_STEPS from the checkerboard, and stops as
 * soon as Gershgorin's bound certifies the quotient (mg.h); the hash's
 * steps follow only where it did not. */
adia_status adia__mg_estimate(const mg_stencil *S, int fine, mg_estimate *e)
{
    return adia__mg_estimate_slab(S, 0, 0, S->rows, NULL, 0, fine, e);
}

double adia__mg_gershgorin(const mg_stencil *S, int64_t r0, int64_t r1)
{
    double g = 0;
    for (int64_t i = r0; i < r1; i++) g = fmax(g, mg_row_gershgorin(S, i));
    return g;
}

/* v = the start of the global rows origin + i: the checkerboard or the hash. */
static void start(const mg_stencil *S, int64_t origin, int checker, double *v)
{
    for (int64_t i = 0; i < S->rows; i++)
        v[i] = checker ? mg_checker_value(origin + i, S->n[0], S->n[1])
                       : mg_start_value(origin + i);
}

/* One power step v <- D^-1 A v / |D^-1 A v|: its quotient into e (steps
 * counted); *end 1 where the steps end here -- D^-1 A v zero or not finite
 * (the quotient stands as it is: the bounds refuse it) or certified. */
static adia_status step(const mg_stencil *S, int64_t r0, int64_t r1, const adia_slab_comm *c,
                        int level, double *v, double *w, mg_estimate *e, int *end)
{
    const double *diag = S->coef[mg_point(0, 0, 0)];
    adia__mg_stencil_apply(S, v, w);
    double sum[3] = {0, 0, 0};   /* v'Av, v'Dv, w'w (w = D^-1 A v) over rows r0..r1 */
    for (int64_t i = 0; i < S->rows; i++) {
        const int own = i >= r0 && i < r1;
        if (own) sum[0] += v[i] * w[i], sum[1] += v[i] * diag[i] * v[i];
        w[i] /= diag[i];
        if (own) sum[2] += w[i] * w[i];
    }
    if (c) c->sum(c->ctx, sum, 3);
    e->q = sum[0] / sum[1];
    e->steps++;
    *end = !(sum[2] > 0) || !isfinite(sum[2]) || mg_certified(e->q, e->bound);
    if (*end) return ADIA_OK;
    const double scale = 1 / sqrt(sum[2]);
    for (int64_t i = 0; i < S->rows; i++) v[i] = w[i] * scale;
    /* the next step reads v's ghost planes */
    return c ? c->agree(c->ctx, c->exchange(c->ctx, level, v, 0, NULL)) : ADIA_OK;
}

adia_status adia__mg_estimate_slab(const mg_stencil *S, int64_t origin, int64_t r0, int64_t r1,
                                   const adia_slab_comm *c, int level, int fine, mg_estimate *e)
{
    double *v = adia__alloc((size_t)S->rows + 1, sizeof *v, "mg eigenvalue estimate");
    double *w = adia__alloc((size_t)S->rows + 1, sizeof *w, "mg eigenvalue estimate");
    adia_status s = v && w ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (c) s = c->agree(c->ctx, s);
    *e = (mg_estimate){0, 0, 0};
    if (fine && s == ADIA_OK) {   /* every process's largest (all get the same) */
        e->bound = adia__mg_gershgorin(S, r0, r1);
        if (c) c->max(c->ctx, &e->bound, 1);
    }
    int end = 0;
    /* the checkerboard's few steps (level 0), then, unless they ended, the hash's */
    for (int checker = fine; checker >= 0 && !end && s == ADIA_OK; checker--) {
        start(S, origin, checker, v);
        const int steps = checker ? MG_CHECKER_STEPS : MG_POWER_STEPS;
        for (int k = 0; k < steps && !end && s == ADIA_OK; k++)
            s = step(S, r0, r1, c, level, v, w, e, &end);
    }
    free(v);
    free(w);
    return s;
}

adia_status adia__mg_bounds(const mg_estimate *e, int64_t rows, double *lmax, double *lmin)
{
    if (!(e->q > 0) || !isfinite(e->q))
        return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: a level of %lld rows has "
                          "Rayleigh quotient v'Av / v'Dv = %g: A is not positive definite",
                          (long long)rows, e->q);
    /* q <= lambda_max <= G: where 1.1 q bounds lambda_max, so does the
     * lesser of the two (and certified, 1.1 q > G: G itself) */
    *lmax = e->bound > 0 ? fmin(LMAX_SAFETY * e->q, e->bound) : LMAX_SAFETY * e->q;
    *lmin = *lmax / CHEB_RATIO;
    return ADIA_OK;
}

/* The best smoothing weight of the d-dimensional Laplacian (see above), d
 * the grid directions the stencil couples: the same on every process of
 * a slab and on the device. */
double adia__mg_jacobi_omega(const mg_stencil *S, double lmax)
{
    int axis[3] = {0, 0, 0};
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                if (S->coef[mg_point(dx, dy, dz)]) {
                    axis[0] |= dx != 0;
                    axis[1] |= dy != 0;
                    axis[2] |= dz != 0;
                }
    static const double omega_lmax[4] = {4.0 / 3, 4.0 / 3, 1.6, 1.7};
    return omega_lmax[axis[0] + axis[1] + axis[2]] / lmax;
}

adia_status adia__mg_smoother_setup(const mg_stencil *S, int fine, mg_smoother kind, double *s,
                                    mg_level *L)
{
    ADIA_TRY(adia__mg_estimate(S, fine, &L->est));
    ADIA_TRY(adia__mg_bounds(&L->est, S->rows, &L->lmax, &L->lmin));
    adia__mg_smoother_scale(S, kind, L->lmax, s);
    return ADIA_OK;
}

void adia__mg_smoother_scale(const mg_stencil *S, mg_smoother kind, double lmax, double *s)
{
    const double *diag = S->coef[mg_point(0, 0, 0)];
    const double omega = adia__mg_jacobi_omega(S, lmax);
    for (int64_t i = 0; i < S->rows; i++) {
        if (kind == MG_L1JACOBI) {
            double sum = 0;
            for (int p = 0; p < MG_POINTS; p++) sum += S->coef[p] ? fabs(S->coef[p][i]) : 0;
            s[i] = 1 / sum;
        } else {
            s[i] = (kind == MG_JACOBI ? omega : 1.0) / diag[i];
        }
    }
}

/* The dense matrix of S, row-major, each row's points placed at their
 * columns (a product per column, n of them, took the host 1 ms of a
 * 125-row level: 2 cores, 2026-11-27). */
static adia_status dense(const mg_stencil *S, double *a)
{
    const int64_t n = S->rows, nx = S->n[0], ny = S->n[1];
    memset(a, 0, (size_t)(n * n) * sizeof *a);
    for (int64_t i = 0; i < n; i++) {
        int64_t x[3];
        mg_coords(S, i, x);
        for (int p = 0; p < MG_POINTS; p++)
            if (S->coef[p] && mg_inside(S, x, p))
                a[i * n + i + mg_dx(p, 0) + nx * (mg_dx(p, 1) + ny * mg_dx(p, 2))] +=
                    S->coef[p][i];
    }
    return ADIA_OK;
}

/* Lower Cholesky factor in place (rows contiguous: a row-oriented
 * left-looking update); the failing column, or -1.  The dot products here
 * and below may be vectorised (omp simd: an order fixed by the build). */
static int64_t cholesky(double *a, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        double d = 0;
#pragma omp simd reduction(+ : d)
        for (int64_t k = 0; k < j; k++) d += a[j * n + k] * a[j * n + k];
        d = a[j * n + j] - d;
        if (!(d > 0)) return j;
        d = sqrt(d);
        a[j * n + j] = d;
#pragma omp parallel for schedule(static) if (n - j > 128) num_threads(adia__threads())
        for (int64_t i = j + 1; i < n; i++) {
            double s = 0;
#pragma omp simd reduction(+ : s)
            for (int64_t k = 0; k < j; k++) s += a[i * n + k] * a[j * n + k];
            a[i * n + j] = (a[i * n + j] - s) / d;
        }
    }
    return -1;
}

/* inv = (L L^T)^-1 = W^T W with W = L^-1: the columns of W (stored as
 * rows of wt, contiguous), then inv(i,j) = wt_i . wt_j, computed once per
 * pair so that inv is exactly symmetric (the V-cycle's symmetry rests on
 * it). */
/* Threads from this size on: below it the sums (about n^3 / 3) take less
 * than starting a team -- lap3d7:256's coarsest 64 rows took 0.6 ms with
 * 16 threads, and 10.8 ms in about one set-up in four (H200 host,
 * 2026-11-27). */
#define INVERSE_THREADS_ROWS 160
static adia_status cholesky_inverse(const double *l, int64_t n, double *inv)
{
    double *wt = adia__calloc((size_t)(n * n) + 1, sizeof *wt, "mg coarsest inverse");
    if (!wt) return ADIA_ERR_NO_MEMORY;
    const int par = n >= INVERSE_THREADS_ROWS;
#pragma omp parallel for schedule(dynamic, 8) if (par) num_threads(adia__threads())
    for (int64_t j = 0; j < n; j++) {   /* L w = e_j, w_i = 0 for i < j */
        double *w = wt + j * n;
        w[j] = 1 / l[j * n + j];
        for (int64_t i = j + 1; i < n; i++) {
            double s = 0;
#pragma omp simd reduction(+ : s)
            for (int64_t k = j; k < i; k++) s += l[i * n + k] * w[k];
            w[i] = -s / l[i * n + i];
        }
    }
#pragma omp parallel for schedule(dynamic, 8) if (par) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            double s = 0;
#pragma omp simd reduction(+ : s)
            for (int64_t k = i; k < n; k++) s += wt[i * n + k] * wt[j * n + k];
            inv[i * n + j] = s;
        }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < i; j++) inv[j * n + i] = inv[i * n + j];
    free(wt);
    return ADIA_OK;
}

/* Gauss-Jordan with partial pivoting: inv = a^-1 (a destroyed). */
static adia_status gauss_jordan(double *a, int64_t n, double *inv)
{
    double big = 0;
    for (int64_t i = 0; i < n * n; i++) big = fmax(big, fabs(a[i]));
    memset(inv, 0, (size_t)(n * n) * sizeof *inv);
    for (int64_t i = 0; i < n; i++) inv[i * n + i] = 1;
    for (int64_t j = 0; j < n; j++) {
        int64_t p = j;
        for (int64_t i = j + 1; i < n; i++)
            if (fabs(a[i * n + j]) > fabs(a[p * n + j])) p = i;
        if (!(fabs(a[p * n + j]) > 1e-14 * big))
            return adia__error(ADIA_ERR_INVALID_ARG, "mg preconditioner: the coarsest matrix "
                              "(%lld rows) is singular at column %lld", (long long)n,
                              (long long)j);
        for (int64_t k = 0; k < n && p != j; k++) {
            double t = a[j * n + k];
            a[j * n + k] = a[p * n + k], a[p * n + k] = t;
            t = inv[j * n + k];
            inv[j * n + k] = inv[p * n + k], inv[p * n + k] = t;
        }
        const double d = 1 / a[j * n + j];
        for (int64_t k = 0; k < n; k++) a[j * n + k] *= d, inv[j * n + k] *= d;
#pragma omp parallel for schedule(static) if (n > 256) num_threads(adia__threads())
        for (int64_t i = 0; i < n; i++) {
            if (i == j || a[i * n + j] == 0) continue;
            const double f = a[i * n + j];
            for (int64_t k = 0; k < n; k++) {
                a[i * n + k] -= f * a[j * n + k];
                inv[i * n + k] -= f * inv[j * n + k];
            }
        }
    }
    return ADIA_OK;
}

static int symmetric(const double *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < i; j++)
            if (fabs(a[i * n + j] - a[j * n + i]) >
                1e-12 * fmax(fabs(a[i * n + i]), fabs(a[j * n + j])))
                return 0;
    return 1;
}

adia_status adia__dense_inverse(const double *a0, int64_t n, double *inv, int *spd)
{
    double *a = adia__alloc((size_t)(n * n) + 1, sizeof *a, "dense inverse");
    if (!a) return ADIA_ERR_NO_MEMORY;
    memcpy(a, a0, (size_t)(n * n) * sizeof *a);
    *spd = symmetric(a, n) && cholesky(a, n) < 0;
    adia_status st;
    if (*spd) {
        st = cholesky_inverse(a, n, inv);
    } else {   /* not SPD (non-symmetric A, BiCGSTAB or GMRES): LU */
        memcpy(a, a0, (size_t)(n * n) * sizeof *a);
        st = gauss_jordan(a, n, inv);
    }
    free(a);
    return st;
}

adia_status adia__mg_dense_inverse(const mg_stencil *S, double *inv, int *spd)
{
    const int64_t n = S->rows;
    double *a = adia__alloc((size_t)(n * n) + 1, sizeof *a, "mg coarsest matrix");
    if (!a) return ADIA_ERR_NO_MEMORY;
    adia_status st = dense(S, a);
    if (st == ADIA_OK) st = adia__dense_inverse(a, n, inv, spd);
    free(a);
    return st;
}
