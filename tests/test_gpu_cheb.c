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
#include "precond_kinds.h"   /* solve_on, solved; precond.h (M->ops->apply: alpha) */
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

/* z = alpha M r on the device with host doubles in and out. */
static int gpu_apply(adia_precond *M, double alpha, const double *r, double *z, int64_t n,
                     int fl)
{
    void *dr = test_gpu_upload(r, n, fl), *dz = test_gpu_upload(r, n, fl);
    int ok = dr && dz;
    if (ok) {
        adia_status s = M->ops->apply(M, alpha, dr, dz, NULL);
        CHECK(s == ADIA_OK, "GPU apply: %s", adia_last_error());
        ok = s == ADIA_OK && cudaDeviceSynchronize() == cudaSuccess &&
             test_gpu_download(z, dz, n, fl) == 0;
    }
    cudaFree(dr);
    cudaFree(dz);
    return ok;
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
        const int32_t n = adia_matrix_rows(A);
        const int fl = vt == ADIA_FLOAT;
        double *r = malloc(n * sizeof *r), *zc = malloc(n * sizeof *zc);
        double *zg = malloc(n * sizeof *zg);
        uint64_t seed = 17;
        test_rand_vector(&seed, r, n);
        const double alpha = fl ? 1.0 : 0.5;
        CHECK_OK(Mc->ops->apply(Mc, alpha, r, zc, NULL));
        if (gpu_apply(Mg, alpha, r, zg, n, fl)) {
            const double err = test_rel_err(zg, zc, n), tol = fl ? 1e-4 : 1e-12;
            CHECK(err < tol, "%s degree %d %s: GPU vs CPU error %g", spec, degree,
                  fl ? "float" : "double", err);
        }
        /* the same interval: the bounds come from the same host matrix */
        char bc[1024], bg[1024];
        CHECK_OK(adia_precond_explain(Mc, bc, sizeof bc));
        CHECK_OK(adia_precond_explain(Mg, bg, sizeof bg));
        const char *ic = strstr(bc, "interval"), *ig = strstr(bg, "interval");
        const char *ec = ic ? strstr(ic, "; bounds") : NULL;
        CHECK(ic && ig && ec && strncmp(ic, ig, (size_t)(ec - ic)) == 0, "%s: bounds\n%s%s",
              spec, bc, bg);
        free(r), free(zc), free(zg);
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
    if (!M) goto done;
    const int32_t n = adia_matrix_rows(A);
    double *r = malloc(n * sizeof *r), *z1 = malloc(n * sizeof *z1), *z2 = malloc(n * sizeof *z2);
    uint64_t seed = 23;
    test_rand_vector(&seed, r, n);
    CHECK(gpu_apply(M, 1.0, r, z1, n, 0), "direct apply");
    void *dr = test_gpu_upload(r, n, 0), *dz = test_gpu_upload(r, n, 0);
    cudaStream_t st = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "stream");
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture");
    CHECK_OK(adia_precond_apply(M, dr, dz, st));
    CHECK(cudaStreamEndCapture(st, &g) == cudaSuccess, "end capture: %s",
          cudaGetErrorString(cudaGetLastError()));
    CHECK(g && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess, "instantiate");
    for (int rep = 0; rep < 2 && ge; rep++) {
        cudaMemsetAsync(dz, 0xff, (size_t)n * sizeof(double), st);   /* NaN: z is written */
        CHECK(cudaGraphLaunch(ge, st) == cudaSuccess, "launch");
        CHECK(cudaStreamSynchronize(st) == cudaSuccess, "sync");
        CHECK(test_gpu_download(z2, dz, n, 0) == 0, "download");
        CHECK(test_rel_err(z2, z1, n) < 1e-14, "graph replay %d: error %g", rep,
              test_rel_err(z2, z1, n));
    }
    size_t nodes = 0;
    if (g) cudaGraphGetNodes(g, NULL, &nodes);
    char buf[1024];
    CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
    printf("graph of one cheb apply: %zu nodes\n%s", nodes, buf);
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    if (st) cudaStreamDestroy(st);
    cudaFree(dr);
    cudaFree(dz);
    free(r), free(z1), free(z2);
done:
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* On the device too: x'My = y'Mx within 1e-12, y'My > 0 (double). */
static void test_symmetric(void)
{
    adia_matrix *A = test_generate("lap2d5:200x190");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    for (int d = 2; d <= 6 && P; d += 2) {
        adia_precond *M = make_cheb(P, d);
        if (!M) continue;
        const int32_t n = adia_matrix_rows(A);
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        double *mx = malloc(n * sizeof *mx), *my = malloc(n * sizeof *my);
        uint64_t seed = 41;
        test_rand_vector(&seed, x, n);
        test_rand_vector(&seed, y, n);
        if (gpu_apply(M, 1.0, x, mx, n, 0) && gpu_apply(M, 1.0, y, my, n, 0)) {
            const double a = dot(x, my, n), b = dot(y, mx, n);
            CHECK(fabs(a - b) <= 1e-12 * sqrt(dot(x, mx, n) * dot(y, my, n)),
                  "degree %d on the GPU: x'My %.17g, y'Mx %.17g", d, a, b);
            CHECK(dot(y, my, n) > 0 && dot(x, mx, n) > 0, "degree %d: y'My %g", d,
                  dot(y, my, n));
        }
        free(x), free(y), free(mx), free(my);
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
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) TEST_SKIP("no CUDA device");
    test_against_cpu();
    test_graph_capture();
    test_symmetric();
    test_solve();
    return TEST_END();
}
#endif
