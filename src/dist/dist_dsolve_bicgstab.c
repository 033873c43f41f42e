/* dist_dsolve_bicgstab.c -- right-preconditioned BiCGSTAB on a device
 * matrix (dist_dsolve.h): the CPU's iteration (src/solve/solve.c), its
 * dot products gathered into TWO reductions an iteration (the CPU's take
 * eight: four dot products, two scale-safe norms of two each):
 *
 *   after v = A M p:  r0'v, r'r              alpha; ||r|| for the stop test
 *   after t = A M s:  s's, t's, t't, r0's, r0't
 *                     ||s||, omega, and rho_next = r0'(s - omega t)
 *                                                = r0's - omega r0't
 *
 * rho_next by that recurrence loses nothing against the direct r0'r:
 * alpha makes r0's = rho - alpha r0'v vanish in exact arithmetic, so r0's
 * is the rounding a direct product would carry and rho_next ~ -omega r0't
 * involves no cancellation.  ||r||^2 = s's - 2 omega t's + omega^2 t't
 * would cancel (omega minimises ||r||: near convergence ||r|| << ||s||),
 * so r'r is taken from r itself, in the next iteration's first reduction:
 * the stop test of an iteration's start comes after its product A M p,
 * which the CPU does not make when it stops there -- one product more at
 * the end; x, the decisions and their order are the CPU's. */
#include "dist_dsolve.h"

#include <math.h>

/* r0, p, v (p and v adjacent: one memset), t; ph, sh with Jacobi (else p, s) */
static dsolve_need bicgstab_need(int jacobi, int restart)
{
    (void)restart;
    return (dsolve_need){.vectors = 4 + 2 * !!jacobi, .sums = 5};
}

/* The vectors: r holds s between the two steps (s is r - alpha v). */
typedef struct bicg {
    double *r, *r0, *p, *v, *t, *ph, *sh;
} bicg;

/* r'r over every process, for the stop test where no product follows. */
static double residual_sq(dsolve *c)
{
    const double *a[] = {c->r};
    double rr;
    adia__dsolve_dots(c, 1, a, a, &rr);
    return rr;
}

/* p = r + beta (p - omega v), v = A M p; the first reduction: d = r0'v, r'r. */
static void p_step(dsolve *c, const bicg *q, double beta, double omega, double d[2])
{
    adia__dsolve_cuda(c, adia__dist_bicgstab_p(c->n, beta, omega, q->r, q->v, q->p, c->inv_diag,
                                               q->ph, c->st), "the BiCGSTAB p kernel");
    adia__dsolve_product(c, q->ph, q->v);
    const double *a[] = {q->r0, q->r}, *b[] = {q->v, q->r};
    adia__dsolve_dots(c, 2, a, b, d);
}

/* s = r - alpha v (into r), t = A M s; the second reduction:
 * d = s's, t's, t't, r0's, r0't. */
static void s_step(dsolve *c, const bicg *q, double alpha, double d[5])
{
    adia__dsolve_cuda(c, adia__dist_bicgstab_s(c->n, alpha, q->v, q->r, c->inv_diag, q->sh,
                                               c->st), "the BiCGSTAB s kernel");
    adia__dsolve_product(c, q->sh, q->t);
    const double *a[] = {q->r, q->t, q->t, q->r0, q->r0}, *b[] = {q->r, q->r, q->t, q->r, q->t};
    adia__dsolve_dots(c, 5, a, b, d);
}

/* r = b - A x, r0 = r, p = v = 0. */
static void start(dsolve *c, const bicg *q)
{
    adia__dsolve_residual(c, NULL);
    adia__dsolve_cuda(c, cudaMemcpyAsync(q->r0, q->r, (size_t)c->n * sizeof *q->r,
                                         cudaMemcpyDeviceToDevice, c->st), "cudaMemcpyAsync (r0)");
    adia__dsolve_cuda(c, cudaMemsetAsync(q->p, 0, 2 * (size_t)c->n * sizeof *q->p, c->st),
                      "cudaMemsetAsync");
}

static void bicgstab_iterate(dsolve *c)
{
    const int64_t n = c->n;
    adia_solve_info *info = c->info;
    bicg q = {.r = c->r, .r0 = c->w, .p = c->w + n, .v = c->w + 2 * n, .t = c->w + 3 * n};
    q.ph = c->inv_diag ? q.t + n : q.p;
    q.sh = c->inv_diag ? q.ph + n : q.r;
    start(c, &q);
    double rho = 1, alpha = 1, omega = 1, rho_next = residual_sq(c), d[5];   /* r0'r = r'r */
    for (;;) {
        if (info->iterations >= c->max_iter) {
            adia__dsolve_check_residual(c, sqrt(residual_sq(c)));
            return;
        }
        p_step(c, &q, (rho_next / rho) * (alpha / omega), omega, d);
        if (adia__dsolve_check_residual(c, sqrt(d[1]))) return;
        if (rho_next == 0 || !isfinite(rho_next)) {
            adia__dsolve_stop(c, "breakdown: (r0, r) = %g", rho_next);
            return;
        }
        rho = rho_next;
        if (d[0] == 0 || !isfinite(d[0])) {
            adia__dsolve_stop(c, "breakdown: (r0, A p) = %g", d[0]);
            return;
        }
        alpha = rho / d[0];
        s_step(c, &q, alpha, d);
        info->iterations++;
        const double ss = d[0], ts = d[1], tt = d[2];
        int done = adia__dsolve_check_residual(c, sqrt(ss));
        if (done > 0)
            adia__dsolve_cuda(c, adia__dist_axpy(n, alpha, q.ph, c->x, c->st), "the axpy kernel");
        if (done) return;
        if (isinf(tt)) {
            adia__dsolve_stop(c, "breakdown: (t, t) overflowed");
            return;
        }
        omega = tt > 0 ? ts / tt : 0;
        adia__dsolve_cuda(c, adia__dist_bicgstab_x(n, alpha, omega, q.ph, q.sh, q.t, c->x, q.r,
                                                   c->st), "the BiCGSTAB x kernel");
        if (omega == 0 || !isfinite(omega)) {
            adia__dsolve_stop(c, "breakdown: omega = %g", omega);
            return;
        }
        rho_next = d[3] - omega * d[4];
    }
}

const dsolve_method adia__dsolve_bicgstab = {.need = bicgstab_need, .iterate = bicgstab_iterate};
