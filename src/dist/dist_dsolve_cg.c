/* dist_dsolve_cg.c -- CG on a device matrix (dist_dsolve.h).
 * Chronopoulos-Gear CG: with u = M^-1 r and w = A u, the three scalars
 * u'w, r'u and r'r of an iteration are summed over the processes in ONE
 * reduction, then
 *   beta = gamma / gamma_prev, alpha = gamma / (delta - beta gamma / alpha_prev)
 *   p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = M^-1 r
 * (first iteration: beta = 0, alpha = gamma / delta; delta - beta gamma /
 * alpha_prev is p'Ap).  One product and one reduction an iteration against
 * the CPU CG's one product and two reductions, the same iterates in exact
 * arithmetic; the stop test is the recurrence's ||r||, as the CPU's. */
#include "dist_dsolve.h"

#include <math.h>

/* w, p, s (p and s adjacent: one memset), u (Jacobi; else u is r) */
static dsolve_need cg_need(int jacobi, int restart)
{
    (void)restart;
    return (dsolve_need){.vectors = 3 + !!jacobi, .sums = 3};
}

/* (u'w, r'u, r'r) over every process: the iteration's one reduction. */
static void cg_reduce(dsolve *c, const double *u, const double *w, double v[3])
{
    const double *a[] = {u, c->r, c->r}, *b[] = {w, u, c->r};
    adia__dsolve_dots(c, 3, a, b, v);
}

static void cg_iterate(dsolve *c)
{
    const int64_t n = c->n;
    adia_solve_info *info = c->info;
    double *w = c->w, *p = w + n, *s = p + n, *u = c->inv_diag ? s + n : c->r;
    adia__dsolve_residual(c, u);
    /* beta = 0 at first: p and s must not hold NaN (0 NaN is NaN) */
    adia__dsolve_cuda(c, cudaMemsetAsync(p, 0, 2 * (size_t)n * sizeof *p, c->st),
                      "cudaMemsetAsync");
    adia__dsolve_product(c, u, w);
    double v[3], alpha = 0, gamma_prev = 0;
    cg_reduce(c, u, w, v);
    for (int k = 0;; k++) {
        double delta = v[0], gamma = v[1];
        if (adia__dsolve_check_residual(c, sqrt(v[2])) || info->iterations >= c->max_iter) return;
        if (!isfinite(gamma)) {
            adia__dsolve_stop(c, "breakdown: (r, z) = %g (overflow)", gamma);
            return;
        }
        double beta = k ? gamma / gamma_prev : 0;
        double pap = k ? delta - beta * gamma / alpha : delta;
        if (!(pap > 0) || isinf(pap)) {
            adia__dsolve_stop(c, "breakdown: p'Ap = %g (A is not symmetric positive definite?)",
                              pap);
            return;
        }
        alpha = gamma / pap;
        gamma_prev = gamma;
        adia__dsolve_cuda(c, adia__dist_cg_update(n, alpha, beta, c->inv_diag, w, p, s, c->x,
                                                  c->r, u, c->st), "the CG update kernel");
        info->iterations++;
        adia__dsolve_product(c, u, w);
        cg_reduce(c, u, w, v);
    }
}

const dsolve_method adia__dsolve_cg = {.need = cg_need, .iterate = cg_iterate};
