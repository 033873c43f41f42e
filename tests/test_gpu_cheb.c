/* test_gpu_cheb.c -- the Chebyshev polynomial preconditioner (kind
 * "cheb") on GPU plans against the same on CPU plans: z = alpha M r equal
 * within round-off (double) or float's precision for degrees 1-7 on
 * Laplacians, banded and variable-coefficient SPD matrices, the interval
 * found on the device (diagonal storage) within 1e-5 of the host's, on
 * the host for a csr plan; the host's errors found on the device; the apply
 * captured into a CUDA graph and replayed gives the direct apply's z (it
 * queues only kernels and products on the stream); symmetric and positive
 * on the device; CG through adia_solve on a GPU plan with opt.precond
 * converges in fewer iterations than with Jacobi, within 2 of the CPU's
 * count (double), and in float to float's rtol. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#include "precond_gpu.h"     /* pg_apply, pg_graph_replay */
#include "precond_kinds.h"   /* solve_on, solved */
#endif

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else

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

/* The interval [lmin, lmax] explain prints. */
static void interval(const adia_precond *M, double iv[2])
{
    char buf[1024];
    iv[0] = iv[1] = NAN;
    CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
    const char *p = strstr(buf, "interval [");
    CHECK(p && sscanf(p, "interval [%lf, %lf]", &iv[0], &iv[1]) == 2, "explain: %s", buf);
}

/* 1: explain says the bounds were found on `where` (host or device). */
static int on(const adia_precond *M, const char *where)
{
    char buf[1024], want[64];
    snprintf(want, sizeof want, "(on the %s)", where);
    return adia_precond_explain(M, buf, sizeof buf) == ADIA_OK && strstr(buf, want) != NULL;
}

static void compare(const char *spec, int degree, adia_value_type vt)
{
    adia_matrix *A = test_generate(spec);
    if (!A) return;
    adia_plan *Pc = test_plan_fixed(A, "dia", ADIA_DOUBLE, 0);
    adia_plan *Pg = test_plan_fixed(A, "dia", vt, 1);
    adia_precond *Mc = Pc ? make_cheb(Pc, degree) : NULL;
    adia_precond *Mg = Pg ? make_cheb(Pg, degree) : NULL;
    if (Mc && Mg) {
        char label[128];
        snprintf(label, sizeof label, "%s degree %d", spec, degree);
        /* the same interval (double: to its 4 digits; float: the device's
         * power steps run in float, the host's in double) */
        const int fl = vt == ADIA_FLOAT;
        pg_same_as_cpu(Mc, Mg, adia_matrix_rows(A), fl, fl ? 1e-4 : 1e-12,
                       fl ? "cheb: degree" : "interval", fl ? " interval" : "; bounds", label);
        double ic[2], ig[2];
        interval(Mc, ic), interval(Mg, ig);
        for (int e = 0; e < 2; e++)
            CHECK(fabs(ig[e] - ic[e]) <= 1e-5 * ic[e], "%s %s: GPU interval [%.9g, %.9g], CPU "
                  "[%.9g, %.9g]", label, fl ? "float" : "double", ig[0], ig[1], ic[0], ic[1]);
        CHECK(on(Mg, "device"), "%s: the bounds found on the device", label);
    }
    adia_precond_destroy(Mc);
    adia_precond_destroy(Mg);
    adia_plan_destroy(Pc);
    adia_plan_destroy(Pg);
    adia_matrix_destroy(A);
}

static void test_against_cpu(void)
{
    static const char *specs[] = {"lap3d7:33", "lap3d7:31x20x17", "lap2d5:129x100",
                                  "band:20000,5,sym", "jump3d:24", "lap3d27:20", "lap2d5:1x1"};
    static const int degrees[] = {1, 2, 4, 7};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        for (int d = 0; d < 4; d++) compare(specs[k], degrees[d], ADIA_DOUBLE);
    compare("lap3d7:33", 0, ADIA_FLOAT);
    compare("band:20000,5,sym", 3, ADIA_FLOAT);
}

/* The apply captured into a CUDA graph on a stream of our own: replayed
 * twice, each replay gives the direct apply's z. */
static void test_graph_capture(void)
{
    adia_matrix *A = test_generate("lap3d7:40x33x35");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    adia_precond *M = P ? make_cheb(P, 0) : NULL;
    if (M) pg_graph_replay(M, adia_matrix_rows(A), "one cheb apply");
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* On the device too: symmetric positive definite (double). */
static void test_symmetric(void)
{
    adia_matrix *A = test_generate("lap2d5:200x190");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    for (int d = 2; d <= 6 && P; d += 2) {
        adia_precond *M = make_cheb(P, d);
        char label[64];
        snprintf(label, sizeof label, "degree %d on the GPU", d);
        if (M) test_precond_spd(M, adia_matrix_rows(A), 1, 41, label);
        adia_precond_destroy(M);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* adia_solve on a GPU plan with opt.precond = cheb: fewer CG iterations
 * than Jacobi there, the CPU's count within 2 (double). */
static void solve_case(const char *spec, adia_value_type vt)
{
    adia_matrix *A = test_generate(spec);
    adia_plan *Pc = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 0) : NULL;
    adia_plan *Pg = A ? test_plan_fixed(A, "dia", vt, 1) : NULL;
    adia_precond *Mc = Pc ? make_cheb(Pc, 0) : NULL, *Mg = Pg ? make_cheb(Pg, 0) : NULL;
    const int fl = vt == ADIA_FLOAT;
    const double rtol = fl ? 1e-5 : 1e-8;
    if (Mc && Mg) {
        outcome jac = solve_on(A, Pg, ADIA_SOLVE_CG, NULL, 1, 30, rtol);
        outcome gc = solve_on(A, Pg, ADIA_SOLVE_CG, Mg, 0, 30, rtol);
        outcome cc = solve_on(A, Pc, ADIA_SOLVE_CG, Mc, 0, 30, rtol);
        CHECK(solved(&jac, rtol) && solved(&gc, rtol) && solved(&cc, rtol),
              "%s %s: GPU jacobi %s, GPU cheb %s (residual %.3g), CPU cheb %s", spec,
              fl ? "float" : "double", jac.info.stop, gc.info.stop, gc.res, cc.info.stop);
        printf("GPU CG to %g on %-18s %s: jacobi %d iterations (%.3f ms), cheb %d (%.3f ms); "
               "CPU cheb %d\n", rtol, spec, fl ? "float" : "double", jac.info.iterations,
               jac.info.time_ms, gc.info.iterations, gc.info.time_ms, cc.info.iterations);
        CHECK(gc.info.iterations < jac.info.iterations, "%s: cheb %d, jacobi %d", spec,
              gc.info.iterations, jac.info.iterations);
        if (!fl)
            CHECK(abs(gc.info.iterations - cc.info.iterations) <= 2, "%s: GPU %d, CPU %d "
                  "iterations", spec, gc.info.iterations, cc.info.iterations);
        free(jac.x), free(gc.x), free(cc.x);
    }
    adia_precond_destroy(Mc);
    adia_precond_destroy(Mg);
    adia_plan_destroy(Pc);
    adia_plan_destroy(Pg);
    adia_matrix_destroy(A);
}

/* A GPU plan whose storage is not diagonal (csr): the host's bounds, the
 * CPU's interval. */
static void test_host_path(void)
{
    adia_matrix *A = test_generate("band:3000,4,sym");
    adia_plan *Pc = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 0) : NULL;
    adia_plan *Pg = A ? test_plan_fixed(A, "csr", ADIA_DOUBLE, 1) : NULL;
    adia_precond *Mc = Pc ? make_cheb(Pc, 3) : NULL, *Mg = Pg ? make_cheb(Pg, 3) : NULL;
    if (Mc && Mg) {
        pg_same_as_cpu(Mc, Mg, adia_matrix_rows(A), 0, 1e-12, "interval", "; bounds",
                       "band:3000,4,sym csr");
        CHECK(on(Mg, "host"), "a csr GPU plan: the bounds found on the host");
    }
    adia_precond_destroy(Mc);
    adia_precond_destroy(Mg);
    adia_plan_destroy(Pc);
    adia_plan_destroy(Pg);
    adia_matrix_destroy(A);
}

/* The host's errors, found on the device: a zero and a negative diagonal
 * entry, an Inf off the diagonal, each in float and double DIA and in
 * brcsd2 (pieces). */
static void gpu_error(test_coo *m, const char *needle)
{
    adia_matrix *A = test_coo_matrix(m);
    static const char *fmts[] = {"dia", "brcsd2"};
    for (int f = 0; f < 2 && A; f++)
        for (int t = 0; t < 2; t++) {
            adia_plan *P = test_plan_fixed(A, fmts[f], t ? ADIA_FLOAT : ADIA_DOUBLE, 1);
            if (!P) continue;
            adia_precond_options o;
            adia_precond_options_default(&o);
            o.kind = "cheb";
            adia_precond *M = NULL;
            CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, needle);
            CHECK(M == NULL, "no handle on error (%s, %s)", needle, fmts[f]);
            adia_plan_destroy(P);
        }
    adia_matrix_destroy(A);
}

static void test_errors(void)
{
    test_coo m = {.rows = 40, .cols = 40};
    for (int i = 0; i < 40; i++) {
        if (i != 23) test_coo_add(&m, i, i, i == 31 ? -2 : 2);
        if (i > 0) test_coo_add(&m, i, i - 1, -1);
        if (i + 1 < 40) test_coo_add(&m, i, i + 1, -1);
    }
    gpu_error(&m, "needs A(23,23) > 0 and finite (A symmetric positive definite), it is 0");
    m.rows = m.cols = 40;   /* test_coo_matrix emptied m */
    for (int i = 0; i < 40; i++) {
        test_coo_add(&m, i, i, i == 31 ? -2 : 2);
        if (i > 0) test_coo_add(&m, i, i - 1, -1);
    }
    gpu_error(&m, "needs A(31,31) > 0");
    m.rows = m.cols = 40;   /* an Inf off the diagonal, row 7 */
    for (int i = 0; i < 40; i++) {
        test_coo_add(&m, i, i, 2);
        if (i > 0) test_coo_add(&m, i, i - 1, i == 7 ? INFINITY : -1);
    }
    gpu_error(&m, "row 7 of A has a non-finite entry");
}

static void test_solve(void)
{
    solve_case("lap3d7:32", ADIA_DOUBLE);
    solve_case("band:20000,5,sym", ADIA_DOUBLE);
    solve_case("jump3d:32", ADIA_DOUBLE);
    solve_case("lap3d7:32", ADIA_FLOAT);
}

int main(void)
{
    TEST_BEGIN();
    (void)test_register_kinds, (void)test_precond;   /* precond_kinds.h's, unused here */
    TEST_NEED_DEVICE();
    test_against_cpu();
    test_graph_capture();
    test_symmetric();
    test_host_path();
    test_errors();
    test_solve();
    return TEST_END();
}
#endif
