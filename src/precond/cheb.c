/* cheb.c -- the Chebyshev polynomial preconditioner (kind "cheb") for a
 * symmetric positive definite A, on any sparsity (no grid):
 *
 *   z = alpha p(D^-1 A) D^-1 r,   1 - t p(t) = T_k((theta - t) / delta) / T_k(theta / delta),
 *
 * theta +- delta = [lmin, lmax] an interval of D^-1 A's spectrum, k the
 * degree: the result of k Chebyshev steps (Saad, Iterative Methods, Alg.
 * 12.1, with D as the inner preconditioner) on A z = r from z = 0 -- k - 1
 * products and k vector passes per apply.  Each step is the multigrid's
 * Chebyshev smoothing kernel (mg.h: adia__mg_cpu_kernels / gpu .smooth,
 * one numerics for both kinds and both devices), each product
 * adia_spmv_async on the plan, every array allocated at setup: on a GPU
 * plan the apply queues only kernels on the caller's stream (graph 2).
 *
 * M is SPD when t p(t) > 0 on the spectrum: on [0, lmax] by construction
 * (|T_k| <= 1 inside [lmin, lmax], T_k(x) < T_k(sigma) for 1 < x < sigma
 * below it) and up to lmax + lmin above it, where |T_k| reaches
 * T_k(sigma).  The polynomial is fixed at setup, so M does not vary and
 * CG may use it.
 *
 * The interval: lmax = min(1.1 x a power estimate, the Gershgorin bound
 * max_i sum_j |a_ij| / a_ii) -- the estimate is a Rayleigh quotient, a
 * lower bound that lands 8-10% low on the Laplacians after ten steps
 * (mg_smooth.c), and Gershgorin's disc bound is never below lambda_max,
 * so taking the lesser keeps lmax tight where the estimate overshoots
 * (Laplacians: 2.0) without losing the 1.1 margin elsewhere.  lmin =
 * lmax / CHEB_RATIO, or the discs' lower end 2 - G where that is higher
 * (a diagonally dominant A): a preconditioner must act on the whole
 * spectrum, not only its upper part as the smoother does (ratio 5), but
 * an interval reaching too far down loses the upper end (T_k(sigma) near
 * 1 leaves t p(t) near 0 inside the interval): measured below.  Any lmin
 * in (0, lmax) keeps M SPD; only lmax must bound the spectrum. */
#include "mg.h"

#include <math.h>
#include <stdio.h>

#define POWER_STEPS 10
#define LMAX_SAFETY 1.1
/* Degree and ratio, measured on the CPU (CG to 1e-8, x0 = 0, b = A ones,
 * 2026-11-27; docs/preconditioners.md has the table).  Ratio: CG
 * iterations x degree (products) least at 30-60 on lap3d7:32/64,
 * lap2d5:256, aniso3d:40, jump3d:40, vardiff3d:48 (30 within 3% of 60
 * everywhere, and Ifpack2's default eigenvalue ratio); 10 is better on
 * well-conditioned banded matrices, where the Gershgorin lower end takes
 * over.  Degree: with ratio 30, CG iterations fall from Jacobi's 158 to
 * 81 / 55 / 43 / 36 / 31 at degrees 2-6 (lap3d7:64); the CPU's time to
 * solution (best of 5) is least at degree 4 there (-10% against Jacobi,
 * degree 3 -6%) and within 1.2% of the least on jump3d:48 and
 * lap2d5:384 (-20%, -17%).  On the GPU an iteration moves (184 + 128
 * (k - 1)) bytes per row against Jacobi's fused 160 (the solver's
 * passes, 7-point DIA in double): degree 4 is 3-6% below Jacobi, within
 * 1% of degree 3, the least.  A well-conditioned banded matrix (18
 * Jacobi iterations) is slower with any degree (+50% at 3 and 4).  (Those
 * bytes are before mg_step: an apply now passes 3 vectors fewer, 24 bytes
 * a row in double.) */
#define CHEB_DEGREE 4
#define CHEB_RATIO 30.0
#define CHEB_MIN_RATIO 2.0

typedef struct cheb_state {
    int degree;
    double est, gershgorin;   /* the power estimate, the disc bound      */
    double lmax, lmin;
    double bounds_ms;         /* of setup: diagonal, estimate, Gershgorin */
    int on_device;            /* 1: the bounds were found on the device   */
    mg_state ctx;             /* what the smoothing kernel reads: device
                                 (the rest unused)                        */
    mg_level L;               /* rows, vtype; s = 1 / a_ii, t = A z, d (the
                                 direction) where the plan lives          */
} cheb_state;

/* The diagonal, checked positive and finite (A SPD), and the Gershgorin
 * bound of D^-1 A. */
static adia_status diagonal(const char *kind, const adia_csr *c, double *diag,
                            double *gershgorin)
{
    const double *v = c->values;
    double g = 0;
    for (int32_t i = 0; i < c->rows; i++) {
        double d = 0, sum = 0;
        for (int64_t k = c->rowptr[i]; k < c->rowptr[i + 1]; k++) {
            if (c->colind[k] == i) d = v[k];
            sum += fabs(v[k]);
        }
        if (!(d > 0) || !isfinite(d))
            return adia__error(ADIA_ERR_INVALID_ARG, "%s preconditioner: needs A(%d,%d) > 0 "
                              "and finite (A symmetric positive definite), it is %g", kind, i,
                              i, d);
        if (!isfinite(sum))
            return adia__error(ADIA_ERR_INVALID_ARG, "%s preconditioner: row %d of A has a "
                              "non-finite entry", kind, i);
        diag[i] = d;
        g = fmax(g, sum / d);
    }
    *gershgorin = g;
    return ADIA_OK;
}

/* The last Rayleigh quotient v'Av / v'Dv of a power iteration on D^-1 A
 * from mg.h's start (mg_start_value: the device's too, cheb_gpu.cu). */
static adia_status estimate(const adia_matrix *A, const double *diag, int64_t n, double *est)
{
    double *v = adia__alloc((size_t)n + 1, sizeof *v, "eigenvalue estimate");
    double *w = adia__alloc((size_t)n + 1, sizeof *w, "eigenvalue estimate");
    adia_status s = v && w ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int64_t i = 0; s == ADIA_OK && i < n; i++) v[i] = mg_start_value(i);
    double q = NAN;
    for (int k = 0; s == ADIA_OK && k < POWER_STEPS; k++) {
        s = adia_matrix_spmv(A, 1.0, v, 0.0, w);
        double vav = 0, vdv = 0, ww = 0;
        for (int64_t i = 0; s == ADIA_OK && i < n; i++) {
            vav += v[i] * w[i];
            vdv += v[i] * diag[i] * v[i];
            w[i] /= diag[i];
            ww += w[i] * w[i];
        }
        q = vav / vdv;
        if (!(ww > 0) || !isfinite(ww)) break;
        const double scale = 1 / sqrt(ww);
        for (int64_t i = 0; i < n; i++) v[i] = w[i] * scale;
    }
    free(v);
    free(w);
    *est = q;
    return s;
}

/* A Rayleigh quotient of an SPD matrix is positive. */
static adia_status check_quotient(const char *kind, double q)
{
    if (!(q > 0) || !isfinite(q))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s preconditioner: Rayleigh quotient v'Av / "
                          "v'Dv = %g: A is not positive definite", kind, q);
    return ADIA_OK;
}

adia_status adia__precond_spd_bounds(const char *kind, const adia_matrix *A, double *diag,
                                     double *est, double *gershgorin)
{
    const adia_csr *c = &A->csr;
    ADIA_TRY(diagonal(kind, c, diag, gershgorin));
    *est = 1;   /* no rows: nothing to bound */
    if (c->rows > 0) ADIA_TRY(estimate(A, diag, c->rows, est));
    return c->rows > 0 ? check_quotient(kind, *est) : ADIA_OK;
}

/* The estimate and bound from the plan's matrix on the host, and s =
 * 1 / a_ii where the plan lives. */
static adia_status host_bounds(adia_precond *M, cheb_state *c)
{
    double *diag = adia__alloc((size_t)M->n + 1, sizeof *diag, "cheb diagonal");
    adia_matrix *A = NULL;
    adia_status s = diag ? adia_format_to_matrix(adia_plan_format(M->plan), &A)
                         : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) s = adia__precond_spd_bounds("cheb", A, diag, &c->est, &c->gershgorin);
    adia_matrix_destroy(A);
    for (int64_t i = 0; s == ADIA_OK && i < M->n; i++) diag[i] = 1 / diag[i];
    if (s == ADIA_OK) s = adia__precond_array(M, M->n, diag, &c->L.s);
    free(diag);
    return s;
}

/* lmax, lmin from the estimate and the bound: on the device where the
 * plan's storage is read there (the plan never comes to the host), else
 * on the host. */
static adia_status bounds(adia_precond *M, cheb_state *c)
{
    if (M->device && M->n > 0) {
        int done = 0;
        ADIA_TRY(adia__precond_spd_bounds_gpu("cheb", M->plan, POWER_STEPS, &c->est,
                                              &c->gershgorin, &c->L.s, &done));
        if (done) ADIA_TRY(check_quotient("cheb", c->est));
        c->on_device = done;
    }
    if (!c->on_device) ADIA_TRY(host_bounds(M, c));
    if (M->n == 0) c->est = c->gershgorin = 1;   /* nothing to bound: any interval */
    c->lmax = fmin(LMAX_SAFETY * c->est, c->gershgorin);
    /* the discs' lower end 2 - G = 1 - max_i R_i (a diagonally dominant
     * A), but an interval at least a factor CHEB_MIN_RATIO wide (D^-1 A
     * = I: [0.5, 1], not a point) */
    c->lmin = fmin(fmax(c->lmax / CHEB_RATIO, 2 - c->gershgorin), c->lmax / CHEB_MIN_RATIO);
    return ADIA_OK;
}

static adia_status check_options(const adia_precond_options *o)
{
    if (o->smoother || o->sweeps > 0 || o->max_levels > 0 || o->cycle != 'v' || o->grid[0] > 0 ||
        o->grid[1] > 0 || o->grid[2] > 0 || o->float_levels)
        return adia__error(ADIA_ERR_INVALID_ARG, "cheb preconditioner: smoother, sweeps, "
                          "max_levels, cycle, grid and float_levels are mg's options (cheb "
                          "takes degree)");
    return ADIA_OK;
}

static adia_status cheb_setup(adia_precond *M, const adia_precond_options *opt)
{
    ADIA_TRY(check_options(opt));
    cheb_state *c = adia__calloc(1, sizeof *c, "cheb preconditioner");
    if (!c) return ADIA_ERR_NO_MEMORY;
    M->impl = c;
    c->degree = opt->degree > 0 ? opt->degree : CHEB_DEGREE;
    c->ctx.device = M->device;
    c->L.vtype = M->vtype;
    c->L.rows = M->n;
    const double t0 = adia__now_ms();
    adia_status s = bounds(M, c);
    c->bounds_ms = adia__now_ms() - t0;
    if (s == ADIA_OK) s = adia__precond_array(M, M->n, NULL, &c->L.t);
    if (s == ADIA_OK) s = adia__precond_array(M, M->n, NULL, &c->L.d);
    return s;
}

/* z = alpha p(D^-1 A) D^-1 r: mg.c's Chebyshev recurrence from z = 0. */
static adia_status cheb_apply(const adia_precond *M, double alpha, const void *r, void *z,
                              void *stream)
{
    const cheb_state *c = M->impl;
    const mg_kernels *K = M->device ? &adia__mg_gpu_kernels : &adia__mg_cpu_kernels;
    const double theta = 0.5 * (c->lmax + c->lmin), delta = 0.5 * (c->lmax - c->lmin);
    double rho = 0;
    for (int k = 0; k < c->degree; k++) {
        const mg_step st = mg_cheb_step(k, c->degree, theta, delta, 1, &rho);
        if (k > 0) ADIA_TRY(adia_spmv_async(M->plan, 1.0, z, 0.0, c->L.t, stream));
        ADIA_TRY(K->smooth(&c->ctx, &c->L, st, alpha, r, z, stream));
    }
    return ADIA_OK;
}

static void cheb_explain(const adia_precond *M, char *buf, size_t len)
{
    const cheb_state *c = M->impl;
    snprintf(buf, len, "cheb: degree %d (%d products + %d vector passes per apply), D^-1 A's "
             "interval [%.4g, %.4g]: lmax = min(%.1f x power estimate %.4g (%d steps), "
             "Gershgorin %.4g), lmin = lmax / %g; bounds in %.2f ms (on the %s)\n", c->degree,
             c->degree - 1, c->degree, c->lmin, c->lmax, LMAX_SAFETY, c->est, POWER_STEPS,
             c->gershgorin, CHEB_RATIO, c->bounds_ms, c->on_device ? "device" : "host");
}

static void cheb_destroy(adia_precond *M)
{
    cheb_state *c = M->impl;
    if (!c) return;
    void *arrays[] = {c->L.s, c->L.t, c->L.d};
    for (int a = 0; a < 3; a++) adia__precond_array_free(M, arrays[a]);
    free(c);
    M->impl = NULL;
}

const adia_precond_ops adia__precond_cheb = {
    .name = "cheb",
    .setup = cheb_setup,
    .apply = cheb_apply,
    .diagonal = NULL,
    .graph = 2,
    .varies = 0,
    .explain = cheb_explain,
    .destroy = cheb_destroy,
};
