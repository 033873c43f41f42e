/* dist_dsolve_gmres.c -- restarted GMRES(m), right-preconditioned (A D u =
 * b, x = x0 + D V y), on a device matrix (dist_dsolve.h): the CPU's method
 * (src/solve/solve.c) -- the same cycles, stop tests, breakdowns and
 * iteration count -- with classical Gram-Schmidt applied twice (CGS2) in
 * place of modified Gram-Schmidt.  Each pass takes the new vector's dot
 * products with all basis vectors in ONE reduction, the second pass with
 * w'w as well, so an iteration reduces TWICE (the CPU's MGS: j + 3 times
 * at step j).  The basis stays on the device; the Hessenberg matrix, the
 * Givens rotations and the small triangular solve are on the host.
 *
 * The norm after the second pass, w - V c, is sqrt(w'w - c'c) (V is
 * orthonormal to working precision after CGS2): exact up to rounding
 * while c'c <= w'w / 2, which holds unless w lies (nearly) in the span of
 * V -- then, near a lucky breakdown, a third reduction takes the norm
 * from the vector itself. */
#include "dist_dsolve.h"

#include <math.h>

/* V_1 .. V_m right after r = V_0, then z = D v_j (Jacobi); host: H, the
 * rotations, g, y and the second pass's coefficients. */
static dsolve_need gmres_need(int jacobi, int restart)
{
    return (dsolve_need){.vectors = restart + !!jacobi, .sums = restart + 1,
                         .host = ((size_t)restart + 1) * ((size_t)restart + 5)};
}

/* The host's views of c->hw. */
typedef struct hess {
    double *H, *cs, *sn, *g, *y, *c2;   /* H: column j at H + j (m + 1) */
} hess;

/* w = (w + sign D V_{0..k) coef) / div, coef uploaded first (k = 0: w / div). */
static void combine(dsolve *c, int k, const double *coef, double sign, const double *inv_diag,
                    double div, double *w)
{
    if (k) adia__dsolve_upload(c, coef, k);
    adia__dsolve_cuda(c, adia__dist_basis_combine(c->n, k, c->r, c->coef, sign, inv_diag, div, w,
                                                  c->st), "the basis combination kernel");
}

/* w = V_{j+1} (A D v_j on entry) orthogonalised against V_0 .. V_j by
 * CGS2 and normalised (when its norm is positive); hj[0..j] its
 * coefficients.  Returns its norm before normalising. */
static double arnoldi(dsolve *c, int j, double *hj, double *c2)
{
    const int k = j + 1;
    double *V = c->r, *w = V + (int64_t)k * c->n, cc = 0, h1;
    adia__dsolve_basis_dots(c, k, V, w, 0, hj);
    combine(c, k, hj, -1, NULL, 1, w);
    adia__dsolve_basis_dots(c, k, V, w, 1, c2);
    for (int l = 0; l < k; l++) {
        cc += c2[l] * c2[l];
        hj[l] += c2[l];
    }
    if (cc <= c2[k] / 2) {   /* false for NaN */
        h1 = sqrt(c2[k] - cc);
        combine(c, k, c2, -1, NULL, h1 > 0 ? h1 : 1, w);
        return h1;
    }
    combine(c, k, c2, -1, NULL, 1, w);
    adia__dsolve_basis_dots(c, 0, V, w, 1, &h1);
    h1 = sqrt(h1);
    combine(c, 0, NULL, 0, NULL, h1 > 0 ? h1 : 1, w);
    return h1;
}

/* Givens rotation (c, s) taking (a, b) to (r, 0); a, b finite. */
static void givens(double a, double b, double *c, double *s, double *r)
{
    *r = hypot(a, b);
    *c = *r > 0 ? a / *r : 1;
    *s = *r > 0 ? b / *r : 0;
}

/* V_0 = b - A x normalised; its norm (before normalising). */
static double cycle_start(dsolve *c)
{
    const double *a[] = {c->r};
    double rr;
    adia__dsolve_residual(c, NULL);
    adia__dsolve_dots(c, 1, a, a, &rr);
    double beta = sqrt(rr);
    if (beta > 0) combine(c, 0, NULL, 0, NULL, beta, c->r);
    return beta;
}

/* How a step of a cycle ended: column j counts (GO_ON, READY: x is ready
 * to update) or not (SINGULAR: x updated from the columns before it;
 * NON_FINITE: x left as it is). */
enum { GO_ON, READY, SINGULAR, NON_FINITE };

/* Step j of a cycle: V_{j+1}, column j of H rotated, g updated. */
static int step(dsolve *c, const hess *q, int j)
{
    const int m = c->restart;
    const int64_t n = c->n;
    double *vj = c->r + (int64_t)j * n, *hj = q->H + (int64_t)j * (m + 1);
    double *z = c->w + (int64_t)m * n;
    if (c->inv_diag)
        adia__dsolve_cuda(c, adia__dist_diag_mul(n, c->inv_diag, vj, z, c->st),
                          "the Jacobi kernel");
    adia__dsolve_product(c, c->inv_diag ? z : vj, vj + n);
    double h1 = arnoldi(c, j, hj, q->c2), r;
    for (int i = 0; i < j; i++) {
        double a = hj[i], b = hj[i + 1];
        hj[i] = q->cs[i] * a + q->sn[i] * b;
        hj[i + 1] = -q->sn[i] * a + q->cs[i] * b;
    }
    if (!isfinite(h1) || !isfinite(hj[j])) {
        adia__dsolve_stop(c, "non-finite value in the Arnoldi step at iteration %d",
                          c->info->iterations);
        return NON_FINITE;
    }
    givens(hj[j], h1, &q->cs[j], &q->sn[j], &r);
    if (!(r > 0)) {
        adia__dsolve_stop(c, "breakdown: singular Hessenberg matrix at iteration %d",
                          c->info->iterations);
        return SINGULAR;
    }
    hj[j] = r;
    q->g[j + 1] = -q->sn[j] * q->g[j];
    q->g[j] *= q->cs[j];
    c->info->iterations++;
    return fabs(q->g[j + 1]) <= c->tol || h1 == 0 ? READY : GO_ON;
}

/* x += D V y, y = H \ g of the first k columns. */
static void update(dsolve *c, const hess *q, int k)
{
    const int m = c->restart;
    for (int i = k - 1; i >= 0; i--) {
        q->y[i] = q->g[i];
        for (int l = i + 1; l < k; l++) q->y[i] -= q->H[l * (m + 1) + i] * q->y[l];
        q->y[i] /= q->H[i * (m + 1) + i];
    }
    combine(c, k, q->y, 1, c->inv_diag, 1, c->x);
}

static void gmres_iterate(dsolve *c)
{
    const int m = c->restart;
    hess q = {.H = c->hw};
    q.cs = q.H + (size_t)(m + 1) * m;
    q.sn = q.cs + m + 1;
    q.g = q.sn + m + 1;
    q.y = q.g + m + 1;
    q.c2 = q.y + m + 1;
    for (;;) {
        double beta = cycle_start(c);
        if (adia__dsolve_check_residual(c, beta) || c->info->iterations >= c->max_iter) return;
        memset(q.g, 0, (size_t)(m + 1) * sizeof *q.g);
        q.g[0] = beta;
        int k = 0, s = GO_ON;
        for (int j = 0; j < m && s == GO_ON && c->info->iterations < c->max_iter; j++) {
            s = step(c, &q, j);
            if (s == GO_ON || s == READY) k = j + 1;
        }
        if (s == NON_FINITE) return;
        if (k) update(c, &q, k);
        if (k == 0 || s == SINGULAR) return;
    }
}

const dsolve_method adia__dsolve_gmres = {.need = gmres_need, .iterate = gmres_iterate};
