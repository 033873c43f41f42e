/* test_gpu_mg.c -- the multigrid preconditioner (kind "mg") on GPU plans
 * against the same on CPU plans: z = M r equal within round-off (double)
 * or float's precision, for each smoother and V / W, odd and even grids,
 * box stencils, the one-level fallback and alpha scaling; the apply
 * captured into a CUDA graph and replayed gives the same z (the cycle
 * queues only kernels on the stream); the V-cycle as a stationary
 * iteration on the device converges as on the host, is symmetric and
 * positive there, and PCG with it takes the host's iterations. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#include "precond_gpu.h"   /* pg_apply, pg_graph_replay */
#endif

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else

static adia_precond *make_mg(adia_plan *P, const char *smoother, char cycle)
{
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    o.smoother = smoother;
    o.cycle = cycle;
    o.float_levels = ADIA_FLOAT_LEVELS_NONE;   /* the CPU's numbers (float: test_float_levels) */
    adia_precond *M = NULL;
    CHECK_OK(adia_precond_create(P, &o, &M));
    return M;
}

static void compare(const char *spec, const char *smoother, char cycle, adia_value_type vt)
{
    adia_matrix *A = test_generate(spec);
    if (!A) return;
    adia_plan *Pc = test_plan_fixed(A, "dia", ADIA_DOUBLE, 0);
    adia_plan *Pg = test_plan_fixed(A, "dia", vt, 1);
    adia_precond *Mc = Pc ? make_mg(Pc, smoother, cycle) : NULL;
    adia_precond *Mg = Pg ? make_mg(Pg, smoother, cycle) : NULL;
    if (Mc && Mg) {
        char label[128];
        snprintf(label, sizeof label, "%s %s %c", spec, smoother ? smoother : "cheb", cycle);
        /* the same hierarchy: the level lines agree (timings apart) */
        pg_same_as_cpu(Mc, Mg, adia_matrix_rows(A), vt == ADIA_FLOAT,
                       vt == ADIA_FLOAT ? 1e-4 : 1e-11, "level 0", "operator complexity", label);
    }
    adia_precond_destroy(Mc);
    adia_precond_destroy(Mg);
    adia_plan_destroy(Pc);
    adia_plan_destroy(Pg);
    adia_matrix_destroy(A);
}

static void test_against_cpu(void)
{
    static const char *specs[] = {"lap3d7:33", "lap3d7:31x20x17", "lap3d7:16x8x12",
                                  "lap2d5:129x100", "lap3d27:25", "lap2d5:2001x1", "lap2d5:23x19",
                                  "lap3d7:80"};
    static const char *smoothers[] = {NULL, "jacobi", "l1jacobi"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        for (int s = 0; s < 3; s++) compare(specs[k], smoothers[s], 'v', ADIA_DOUBLE);
    compare("lap3d7:65", NULL, 'w', ADIA_DOUBLE);
    compare("lap3d7:65", NULL, 'f', ADIA_DOUBLE);
    compare("lap3d7:33", NULL, 'v', ADIA_FLOAT);
    compare("lap3d27:25", "jacobi", 'w', ADIA_FLOAT);
}

/* The apply captured into a CUDA graph on a stream of our own: replayed
 * twice, each replay gives the direct apply's z. */
static void test_graph_capture(void)
{
    adia_matrix *A = test_generate("lap3d7:40x33x35");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    adia_precond *M = P ? make_mg(P, NULL, 'v') : NULL;
    if (M) pg_graph_replay(M, adia_matrix_rows(A), "one V-cycle");
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* x += M (b - A x) with M on the device (residual on the host): the mean
 * factor over cycles 2..9 at most 0.2 on lap3d7:65. */
static void test_stationary(void)
{
    adia_matrix *A = test_generate("lap3d7:65");
    adia_plan *Pc = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 0) : NULL;
    adia_plan *Pg = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    adia_precond *M = Pg ? make_mg(Pg, NULL, 'v') : NULL;
    if (M && Pc) {
        const int32_t n = adia_matrix_rows(A);
        double *xs = malloc(n * sizeof *xs), *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
        double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z);
        uint64_t seed = 5;
        test_rand_vector(&seed, xs, n);
        CHECK_OK(adia_spmv(Pc, 1.0, xs, 0.0, b));
        double r1 = 0, rk = 0;
        for (int k = 0; k <= 9; k++) {
            memcpy(r, b, n * sizeof *r);
            CHECK_OK(adia_spmv(Pc, -1.0, x, 1.0, r));
            double rn = 0;
            for (int32_t i = 0; i < n; i++) rn += r[i] * r[i];
            rk = sqrt(rn);
            if (k == 1) r1 = rk;
            if (k == 9 || !pg_apply(M, 1.0, r, z, n, 0)) break;
            for (int32_t i = 0; i < n; i++) x[i] += z[i];
        }
        const double f = pow(rk / r1, 1.0 / 8);
        printf("GPU V-cycle convergence factor lap3d7:65: %.3f\n", f);
        CHECK(f <= 0.2, "factor %.3f", f);
        free(xs), free(b), free(x), free(r), free(z);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(Pc);
    adia_plan_destroy(Pg);
    adia_matrix_destroy(A);
}

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* On the device too: symmetric positive definite (double; V and W on 4
 * levels). */
static void test_symmetric(void)
{
    adia_matrix *A = test_generate("lap2d5:200x190");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    for (int c = 0; c < 2 && P; c++) {
        adia_precond *M = make_mg(P, NULL, c ? 'w' : 'v');
        if (M) test_precond_spd(M, adia_matrix_rows(A), 1, 41, c ? "w-cycle on the GPU"
                                                                 : "v-cycle on the GPU");
        adia_precond_destroy(M);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* PCG written out, the product on the host plan, z = M r on the device:
 * the iterations to 1e-8 (-1: none within 50). */
static int pcg_gpu(adia_plan *Pc, adia_precond *M)
{
    const int32_t n = adia_plan_rows(Pc);
    double *xs = malloc(n * sizeof *xs), *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
    double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z), *p = malloc(n * sizeof *p);
    double *q = malloc(n * sizeof *q);
    uint64_t seed = 9;
    test_rand_vector(&seed, xs, n);
    CHECK_OK(adia_spmv(Pc, 1.0, xs, 0.0, b));
    memcpy(r, b, n * sizeof *r);
    const double bn = sqrt(dot(b, b, n));
    int it = -1;
    if (pg_apply(M, 1.0, r, z, n, 0)) {
        memcpy(p, z, n * sizeof *p);
        double rz = dot(r, z, n);
        for (int k = 1; k <= 50; k++) {
            CHECK_OK(adia_spmv(Pc, 1.0, p, 0.0, q));
            const double a = rz / dot(p, q, n);
            for (int32_t i = 0; i < n; i++) x[i] += a * p[i], r[i] -= a * q[i];
            if (sqrt(dot(r, r, n)) <= 1e-8 * bn) {
                it = k;
                break;
            }
            if (!pg_apply(M, 1.0, r, z, n, 0)) break;
            const double rz1 = dot(r, z, n), beta = rz1 / rz;
            rz = rz1;
            for (int32_t i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
        }
    }
    free(xs), free(b), free(x), free(r), free(z), free(p), free(q);
    return it;
}

static void test_pcg(void)
{
    static const char *specs[] = {"lap3d7:33", "lap3d7:64", "lap3d7:100"};
    for (int k = 0; k < 3; k++) {
        adia_matrix *A = test_generate(specs[k]);
        adia_plan *Pc = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 0) : NULL;
        adia_plan *Pg = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
        adia_precond *M = Pg ? make_mg(Pg, NULL, 'v') : NULL;
        if (M && Pc) {
            const int it = pcg_gpu(Pc, M);
            printf("PCG with mg on the GPU, %s: %d iterations to 1e-8\n", specs[k], it);
            CHECK(it > 0 && it <= 8, "%s: %d iterations (6 on the CPU)", specs[k], it);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(Pc);
        adia_plan_destroy(Pg);
        adia_matrix_destroy(A);
    }
}

/* float_levels on a double plan, every level (ALL) or the coarse ones
 * (COARSE) in float: explain says so, M r within float's rounding of the
 * double hierarchy's, the graph replays it, and PCG through the solver to
 * 1e-8 takes the double hierarchy's iterations (+1). */
static void float_levels_case(const char *spec, int which)
{
    adia_matrix *A = test_generate(spec);
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    adia_precond *Md = P ? make_mg(P, NULL, 'v') : NULL, *Mf = NULL;
    const char *what = which == ADIA_FLOAT_LEVELS_ALL ? "all" : "coarse";
    if (Md) {
        adia_precond_options o;
        adia_precond_options_default(&o);
        o.kind = "mg";
        o.float_levels = which;
        CHECK_OK(adia_precond_create(P, &o, &Mf));
    }
    if (Md && Mf) {
        char buf[4096];
        CHECK_OK(adia_precond_explain(Mf, buf, sizeof buf));
        CHECK(test_contains(buf, which == ADIA_FLOAT_LEVELS_ALL ? "levels in float (float_levels), "
                                                                 "the plan in double"
                                                               : "coarse levels in float"),
              "%s %s: explain: %s", spec, what, buf);
        const int32_t n = adia_matrix_rows(A);
        double *r = malloc(n * sizeof *r), *zd = malloc(n * sizeof *zd), *zf = malloc(n * sizeof *zf);
        uint64_t seed = 3;
        test_rand_vector(&seed, r, n);
        if (pg_apply(Md, 1.0, r, zd, n, 0) && pg_apply(Mf, 1.0, r, zf, n, 0)) {
            const double err = test_rel_err(zf, zd, n);
            CHECK(err > 0 && err < 1e-4, "%s, %s levels in float: M r differs from the double "
                  "hierarchy's by %g (relative)", spec, what, err);
        }
        free(r), free(zd), free(zf);
        char label[96];
        snprintf(label, sizeof label, "%s, %s levels in float: one V-cycle", spec, what);
        pg_graph_replay(Mf, n, label);
        adia_solve_options so;
        adia_solve_options_default(&so);
        adia_solve_info id, inf;
        adia_status sd, sf;
        so.precond = Md;
        const double ed = test_solve_known(A, P, NULL, &so, 7, &id, &sd);
        so.precond = Mf;
        const double ef = test_solve_known(A, P, NULL, &so, 7, &inf, &sf);
        CHECK(sd == ADIA_OK && sf == ADIA_OK && id.converged && inf.converged &&
                  inf.residual <= 1e-8 && inf.iterations <= id.iterations + 1,
              "%s, PCG, %s levels in float: %d iterations, residual %g, error %g (double "
              "levels: %d, %g)", spec, what, inf.iterations, inf.residual, ef, id.iterations, ed);
    }
    adia_precond_destroy(Mf);
    adia_precond_destroy(Md);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* "auto" (CG's default) makes mg on a GPU plan only where the device
 * reads its storage: a csr plan of a 130 x 130 grid gets jacobi, saying
 * why; the same grid in dia gets mg. */
static void test_auto_storage(void)
{
    adia_matrix *A = test_generate("lap2d5:130");
    static const char *const formats[] = {"csr", "dia"}, *const kinds[] = {"jacobi", "mg"};
    for (int f = 0; A && f < 2; f++) {
        adia_plan *P = test_plan_fixed(A, formats[f], ADIA_DOUBLE, 1);
        adia_precond_options o;
        adia_precond_options_default(&o);
        o.kind = "auto";
        adia_precond *M = NULL;
        if (P) CHECK_OK(adia_precond_create(P, &o, &M));
        if (M) {
            char buf[4096];
            CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
            CHECK(!strcmp(adia_precond_kind(M), kinds[f]) &&
                      (f || test_contains(buf, "not read on the device")),
                  "auto on a %s GPU plan: %s (%s)", formats[f], adia_precond_kind(M), buf);
            /* the device's cycle timed as a solve runs it */
            CHECK(!f || test_contains(buf, "run now in a CUDA graph): "),
                  "auto on a dia GPU plan: no cycle timed in a graph: %s", buf);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(P);
    }
    adia_matrix_destroy(A);
}

static void test_float_levels(void)
{
    static const char *const specs[] = {"lap3d7:40", "jump3d:24", "aniso3d:32"};
    for (int k = 0; k < 3; k++) {
        float_levels_case(specs[k], ADIA_FLOAT_LEVELS_ALL);
        float_levels_case(specs[k], ADIA_FLOAT_LEVELS_COARSE);
    }
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    test_against_cpu();
    test_graph_capture();
    test_stationary();
    test_symmetric();
    test_pcg();
    test_float_levels();
    test_auto_storage();
    return TEST_END();
}
#endif
