/* test_cheb.c -- the Chebyshev polynomial preconditioner (kind "cheb") on
 * CPU plans:
 * - the polynomial against a reference of its own: r - A z = q(A D^-1) r
 *   with q(t) = T_k((theta - t) / delta) / T_k(theta / delta), evaluated by
 *   the Chebyshev three-term recurrence (not Saad's, which the kind runs),
 *   on a 1D Laplacian whose interval is known exactly ([2/30, 2]: the
 *   Gershgorin bound 2 is below 1.1 x the estimate); degree 1 is Jacobi
 *   scaled by 1 / theta;
 * - symmetric (x'My = y'Mx) and positive (y'My > 0) for degrees 1-8 on
 *   Laplacians, banded SPD and variable-coefficient matrices; alpha;
 * - CG through adia_solve with opt.precond: fewer iterations than Jacobi
 *   on lap3d7:32 and a banded SPD matrix, every solve checked by the
 *   test's own residual; BiCGSTAB and GMRES converge with it;
 * - errors: a zero or negative diagonal entry (named), an Inf off the
 *   diagonal (its row), mg's options, a degree above 100; an indefinite
 *   A with a positive diagonal: CG stops, not converged. */
#include "testutil.h"
#include "precond_kinds.h"   /* solve_on, solved */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static adia_plan *cpu_plan(const adia_matrix *A)
{
    adia_plan *P = NULL;
    adia_plan_hints h = {.device = 0, .expected_calls = 100};
    CHECK_OK(adia_plan_create(A, &h, &P));
    return P;
}

static adia_precond *make_cheb(adia_plan *P, int degree)
{
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "cheb";
    o.degree = degree;
    adia_precond *M = NULL;
    CHECK_OK(adia_precond_create(P, &o, &M));
    return M;
}

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* The 1D Laplacian [-1 2 -1] on n points. */
static adia_matrix *lap1d(int n)
{
    test_coo m = {.rows = n, .cols = n};
    for (int i = 0; i < n; i++) {
        test_coo_add(&m, i, i, 2);
        if (i > 0) test_coo_add(&m, i, i - 1, -1);
        if (i + 1 < n) test_coo_add(&m, i, i + 1, -1);
    }
    return test_coo_matrix(&m);
}

/* q(A D^-1) r on [lmin, lmax]: X = (theta I - A D^-1) / delta, v_0 = r,
 * v_1 = X r, v_j+1 = 2 X v_j - v_j-1; q r = v_k / T_k(sigma). */
static void residual_poly(const adia_matrix *A, const double *diag, int k, double lmin,
                          double lmax, const double *r, double *out)
{
    const int32_t n = adia_matrix_rows(A);
    const double theta = (lmax + lmin) / 2, delta = (lmax - lmin) / 2, sigma = theta / delta;
    double *v0 = malloc(n * sizeof *v0), *v1 = malloc(n * sizeof *v1);
    double *w = malloc(n * sizeof *w), *aw = malloc(n * sizeof *aw);
    double t0 = 1, t1 = sigma;   /* T_j(sigma) */
    memcpy(v0, r, n * sizeof *v0);
    for (int32_t i = 0; i < n; i++) w[i] = r[i] / diag[i];
    CHECK_OK(adia_matrix_spmv(A, 1.0, w, 0.0, aw));
    for (int32_t i = 0; i < n; i++) v1[i] = (theta * r[i] - aw[i]) / delta;
    for (int j = 1; j < k; j++) {
        for (int32_t i = 0; i < n; i++) w[i] = v1[i] / diag[i];
        CHECK_OK(adia_matrix_spmv(A, 1.0, w, 0.0, aw));
        for (int32_t i = 0; i < n; i++) {
            const double next = 2 * (theta * v1[i] - aw[i]) / delta - v0[i];
            v0[i] = v1[i], v1[i] = next;
        }
        const double t2 = 2 * sigma * t1 - t0;
        t0 = t1, t1 = t2;
    }
    for (int32_t i = 0; i < n; i++) out[i] = (k == 0 ? v0[i] : v1[i]) / (k == 0 ? t0 : t1);
    free(v0), free(v1), free(w), free(aw);
}

static void test_reference(void)
{
    adia_matrix *A = lap1d(200);
    adia_plan *P = A ? cpu_plan(A) : NULL;
    if (!P) return;
    const int32_t n = 200;
    double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z), *got = malloc(n * sizeof *got);
    double *want = malloc(n * sizeof *want), diag[200];
    for (int32_t i = 0; i < n; i++) diag[i] = 2;
    uint64_t seed = 4;
    test_rand_vector(&seed, r, n);
    for (int k = 1; k <= 8; k++) {
        adia_precond *M = make_cheb(P, k);
        if (!M) continue;
        char buf[512];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, "interval [0.06667, 2]"), "lap1d: %s", buf);
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        CHECK_OK(adia_matrix_spmv(A, -1.0, z, 0.0, got));
        for (int32_t i = 0; i < n; i++) got[i] += r[i];   /* r - A z */
        residual_poly(A, diag, k, 2.0 / 30, 2.0, r, want);
        CHECK(test_rel_err(got, want, n) < 1e-12, "degree %d: r - A z against q(A D^-1) r: "
              "error %g", k, test_rel_err(got, want, n));
        if (k == 1) {   /* Jacobi / theta */
            double err = 0;
            for (int32_t i = 0; i < n; i++)
                err = fmax(err, fabs(z[i] - r[i] / 2 / ((2 + 2.0 / 30) / 2)));
            CHECK(err < 1e-15, "degree 1: z = D^-1 r / theta, error %g", err);
        }
        adia_precond_destroy(M);
    }
    free(r), free(z), free(got), free(want);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* x'My = y'Mx within 1e-12, x'Mx > 0, and z = alpha M r. */
static void check_spd(adia_plan *P, const char *what, int degree)
{
    adia_precond *M = make_cheb(P, degree);
    if (!M) return;
    const int32_t n = adia_plan_rows(P);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *mx = malloc(n * sizeof *mx), *my = malloc(n * sizeof *my);
    uint64_t seed = 21 + degree;
    for (int trial = 0; trial < 3; trial++) {
        test_rand_vector(&seed, x, n);
        test_rand_vector(&seed, y, n);
        if (trial == 2)   /* a smooth vector: the low end of the spectrum */
            for (int32_t i = 0; i < n; i++) x[i] = 1;
        CHECK_OK(adia_precond_apply(M, x, mx, NULL));
        CHECK_OK(adia_precond_apply(M, y, my, NULL));
        const double a = dot(x, my, n), b = dot(y, mx, n);
        const double scale = sqrt(dot(x, mx, n) * dot(y, my, n));
        CHECK(fabs(a - b) <= 1e-12 * scale, "%s degree %d: x'My %.17g, y'Mx %.17g", what, degree,
              a, b);
        CHECK(dot(x, mx, n) > 0 && dot(y, my, n) > 0, "%s degree %d: x'Mx %g, y'My %g", what,
              degree, dot(x, mx, n), dot(y, my, n));
    }
    CHECK_OK(M->ops->apply(M, -0.375, x, my, NULL));
    for (int32_t i = 0; i < n; i++) mx[i] *= -0.375;
    CHECK(test_rel_err(my, mx, n) < 1e-14, "%s degree %d: alpha -0.375, error %g", what, degree,
          test_rel_err(my, mx, n));
    free(x), free(y), free(mx), free(my);
    adia_precond_destroy(M);
}

static void test_symmetric_positive(void)
{
    static const char *specs[] = {"lap3d7:17x15x13", "lap2d5:61", "band:3000,5,sym",
                                  "bandr:2000,6,0.6,sym", "jump3d:16", "vardiff2d:40",
                                  "lap3d27:11", "lap2d5:1x1"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        adia_matrix *A = test_generate(specs[s]);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        for (int d = 1; d <= 8 && P; d++) check_spd(P, specs[s], d);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

/* CG + cheb against CG + Jacobi through adia_solve: fewer iterations,
 * both solved (the test's own residual).  The counts are printed. */
static void compare_cg(const char *spec, int degree)
{
    adia_matrix *A = test_generate(spec);
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond *M = P ? make_cheb(P, degree) : NULL;
    if (M) {
        outcome jac = solve_on(A, P, ADIA_SOLVE_CG, NULL, 1, 30, 1e-8);
        outcome ch = solve_on(A, P, ADIA_SOLVE_CG, M, 0, 30, 1e-8);
        CHECK(solved(&jac, 1e-8) && solved(&ch, 1e-8), "%s: jacobi %s, cheb %s (residual %.3g)",
              spec, jac.info.stop, ch.info.stop, ch.res);
        printf("CG to 1e-8 on %-18s jacobi %4d iterations, cheb degree %d %4d (%d products)\n",
               spec, jac.info.iterations, degree > 0 ? degree : 4, ch.info.iterations,
               ch.info.iterations * (degree > 0 ? degree : 4));
        CHECK(ch.info.iterations < jac.info.iterations, "%s: cheb %d CG iterations, jacobi %d",
              spec, ch.info.iterations, jac.info.iterations);
        free(jac.x);
        free(ch.x);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

static void test_cg(void)
{
    compare_cg("lap3d7:32", 0);
    compare_cg("lap3d7:32", 2);
    compare_cg("lap3d7:32", 3);
    compare_cg("lap3d7:32", 6);
    compare_cg("band:20000,5,sym", 0);
    compare_cg("bandr:20000,8,0.7,sym", 0);
    compare_cg("jump3d:24", 0);
    /* the other methods take it as any preconditioner */
    adia_matrix *A = test_generate("band:5000,4,sym");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond *M = P ? make_cheb(P, 3) : NULL;
    for (int m = 1; m < 3 && M; m++) {
        outcome o = solve_on(A, P, (adia_solver)m, M, 0, 20, 1e-10);
        CHECK(solved(&o, 1e-10), "band %s + cheb: %s, residual %.3g",
              adia_solver_name((adia_solver)m), o.info.stop, o.res);
        free(o.x);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

static void expect_error(const adia_matrix *A, adia_precond_options *o, adia_status code,
                         const char *needle)
{
    adia_plan *P = A ? cpu_plan(A) : NULL;
    if (!P) return;
    adia_precond *M = NULL;
    o->kind = "cheb";
    CHECK_ERR(adia_precond_create(P, o, &M), code, needle);
    CHECK(M == NULL, "no handle on error (%s)", needle);
    adia_plan_destroy(P);
}

static void test_errors(void)
{
    adia_precond_options o;
    test_coo m = {.rows = 40, .cols = 40};
    for (int i = 0; i < 40; i++) {
        if (i != 23) test_coo_add(&m, i, i, i == 31 ? -2 : 2);
        if (i > 0) test_coo_add(&m, i, i - 1, -1);
        if (i + 1 < 40) test_coo_add(&m, i, i + 1, -1);
    }
    adia_matrix *A = test_coo_matrix(&m);
    adia_precond_options_default(&o);
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "needs A(23,23) > 0 and finite (A symmetric "
                 "positive definite), it is 0");
    adia_matrix_destroy(A);
    m.rows = m.cols = 40;   /* test_coo_matrix emptied m */
    for (int i = 0; i < 40; i++) test_coo_add(&m, i, i, i == 31 ? -2 : 2);
    A = test_coo_matrix(&m);
    adia_precond_options_default(&o);
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "needs A(31,31) > 0");
    adia_matrix_destroy(A);
    /* positive diagonal, D^-1 A with eigenvalues 4 and -2 */
    m.rows = m.cols = 40;
    for (int i = 0; i < 40; i++) {
        test_coo_add(&m, i, i, 1);
        if (i % 2 == 0) test_coo_add(&m, i, i + 1, -3), test_coo_add(&m, i + 1, i, -3);
    }
    A = test_coo_matrix(&m);
    adia_precond_options_default(&o);
    adia_plan *P = A ? cpu_plan(A) : NULL;
    if (P) {   /* accepted (the estimate finds 4), but no SPD M: CG stops, never converged */
        adia_precond *M = make_cheb(P, 3);
        outcome c = solve_on(A, P, ADIA_SOLVE_CG, M, 0, 30, 1e-8);
        CHECK(c.status == ADIA_OK && !c.info.converged, "indefinite A: CG + cheb %s",
              c.info.stop);
        free(c.x);
        adia_precond_destroy(M);
        adia_plan_destroy(P);
    }
    adia_matrix_destroy(A);
    m.rows = m.cols = 40;   /* an Inf off the diagonal, row 7 */
    for (int i = 0; i < 40; i++) {
        test_coo_add(&m, i, i, 2);
        if (i > 0) test_coo_add(&m, i, i - 1, i == 7 ? INFINITY : -1);
    }
    A = test_coo_matrix(&m);
    adia_precond_options_default(&o);
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "row 7 of A has a non-finite entry");
    adia_matrix_destroy(A);
    A = test_generate("lap2d5:20");
    adia_precond_options_default(&o);
    o.smoother = "jacobi";
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "are mg's options (cheb takes degree)");
    adia_precond_options_default(&o);
    o.sweeps = 2;
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "are mg's options");
    adia_precond_options_default(&o);
    o.grid[0] = 20;
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "are mg's options");
    adia_precond_options_default(&o);
    o.cycle = 'w';
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "are mg's options");
    adia_precond_options_default(&o);
    o.degree = 101;
    expect_error(A, &o, ADIA_ERR_INVALID_ARG, "degree 101");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    (void)test_register_kinds, (void)test_precond;   /* precond_kinds.h's, unused here */
    test_reference();
    test_symmetric_positive();
    test_cg();
    test_errors();
    return TEST_END();
}
