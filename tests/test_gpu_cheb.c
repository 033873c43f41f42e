/* test_gpu_cheb.c -- the Chebyshev polynomial preconditioner (kind
 * "cheb") on GPU plans against the same on CPU plans: z = alpha M r equal
 * within round-off (double) or float's precision for degrees 1-7 on
 * Laplacians, banded and variable-coefficient SPD matrices; the apply
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
        /* the same interval: the bounds come from the same host matrix */
        pg_same_as_cpu(Mc, Mg, adia_matrix_rows(A), vt == ADIA_FLOAT,
                       vt == ADIA_FLOAT ? 1e-4 : 1e-12, "interval", "; bounds", label);
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
    test_solve();
    return TEST_END();
}
#endif
