/* test_gpu_solve_precond.c -- the preconditioner stage of the GPU solvers
 * (adia_solve_options.precond on GPU plans), with the test-only kinds of
 * precond_kinds.h registered from here:
 * - "scaled2" (the stage, a power of two) gives CG, BiCGSTAB and GMRES the
 *   iteration count of no preconditioner on dia and csr plans, double and
 *   float (GMRES in float within 2 + 5%: M (V y) rounds V y to float once
 *   per cycle, which x += V y does not), whether the loop runs as a WHILE
 *   graph (graph 2), chunks of a plain graph (1) or launch by launch (0);
 * - adia_solve(NULL, P) on a plan from adia_plan_create_csr: adia_solve(A,
 *   Q)'s x and iterations (none, the Jacobi flag, mg);
 * - the jacobi kind takes the jacobi flag's fused path: the same
 *   iterations and x (double; float: D rounded to float first, close);
 *   "none" is no preconditioner;
 * - "neumann2" (not a diagonal) needs fewer CG iterations than Jacobi;
 *   every method converges with it, on host vectors (adia_solve: the
 *   scaled system, alpha = 1 / a_scale) and on device vectors
 *   (adia_plan_solve on a stream: alpha 1);
 * - "alternate" (varies): GMRES runs flexible and converges;
 * - one row and three rows;
 * - errors: a preconditioner of a CPU plan or of another GPU plan.
 * Every converged solve is checked by the test's own residual (double) or
 * the error against the known solution (float).  Skipped without CUDA or
 * without a device. */
#include "testutil.h"

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include "precond_kinds.h"

#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

/* scaled2 again at graph levels 1 and 0: the solver's other two drivers */
static const adia_precond_ops scaled2_g1 = {
    .name = "scaled2-g1", .setup = tk_setup, .apply = scaled2_apply, .graph = 1,
    .destroy = tk_destroy,
};
static const adia_precond_ops scaled2_g0 = {
    .name = "scaled2-g0", .setup = tk_setup, .apply = scaled2_apply, .graph = 0,
    .destroy = tk_destroy,
};

static double rtol_of(adia_value_type vt) { return vt == ADIA_FLOAT ? 1e-5 : 1e-10; }

static const struct { const char *spec; adia_solver m; } cases[] = {
    {"lap2d5:61", ADIA_SOLVE_CG},        {"lap2d5:61", ADIA_SOLVE_BICGSTAB},
    {"lap2d5:61", ADIA_SOLVE_GMRES},     {"band:3001,4", ADIA_SOLVE_BICGSTAB},
    {"band:3001,4", ADIA_SOLVE_GMRES},   {"lap3d7:41", ADIA_SOLVE_CG},   /* 68921 rows */
};
#define NCASES (sizeof cases / sizeof *cases)

static void free_all(outcome *o, int k)
{
    for (int i = 0; i < k; i++) free(o[i].x);
}

/* One case on one GPU plan: none, the kinds none / scaled2 (three graph
 * levels) against no preconditioner, the jacobi kind against the flag. */
static void same_as_before(const adia_matrix *A, adia_plan *P, adia_solver m, const char *tag)
{
    static const char *kinds[] = {"none", "scaled2", "scaled2-g1", "scaled2-g0"};
    const double rtol = rtol_of(adia_plan_value_type(P));
    const int n = adia_matrix_rows(A), restart = 10;
    const int slack = adia_plan_value_type(P) == ADIA_FLOAT && m == ADIA_SOLVE_GMRES;
    outcome o[6];
    o[0] = solve_on(A, P, m, NULL, 0, restart, rtol);
    CHECK(solved(&o[0], rtol), "%s: no preconditioner: %s", tag, o[0].info.stop);
    for (int k = 0; k < 4; k++) {
        adia_precond *M = test_precond(P, kinds[k]);
        o[k + 1] = solve_on(A, P, m, M, 0, restart, rtol);
        adia_precond_destroy(M);
        const int d = abs(o[k + 1].info.iterations - o[0].info.iterations);
        CHECK(solved(&o[k + 1], rtol) && d <= (slack ? 2 + o[0].info.iterations / 20 : 0),
              "%s + %s: %s, %d iterations (none: %d), residual %.3g, error %.3g", tag, kinds[k],
              o[k + 1].info.stop, o[k + 1].info.iterations, o[0].info.iterations,
              o[k + 1].info.residual, o[k + 1].err);
    }
    free_all(o, 5);
    adia_precond *J = test_precond(P, "jacobi");
    o[0] = solve_on(A, P, m, NULL, 1, restart, rtol);
    o[1] = solve_on(A, P, m, J, 0, restart, rtol);
    adia_precond_destroy(J);
    /* a float plan: the kind reads D from the float format, the flag from
     * A in double -- the same only where D is exact in float */
    const int fl = adia_plan_value_type(P) == ADIA_FLOAT;
    const int dj = abs(o[0].info.iterations - o[1].info.iterations);
    CHECK(solved(&o[0], rtol) && solved(&o[1], rtol) &&
          (fl ? dj <= 2 + o[0].info.iterations / 20
              : dj == 0 && memcmp(o[0].x, o[1].x, (size_t)n * sizeof *o[0].x) == 0),
          "%s: jacobi flag %s (%d iterations), kind %s (%d), x differs by %.3g", tag,
          o[0].info.stop, o[0].info.iterations, o[1].info.stop, o[1].info.iterations,
          test_rel_err(o[1].x, o[0].x, n));
    free_all(o, 2);
}

static void test_same_as_before(void)
{
    static const char *formats[] = {"dia", "csr"};
    for (size_t c = 0; c < NCASES; c++) {
        adia_matrix *A = test_generate(cases[c].spec);
        for (int f = 0; A && f < 2; f++)
            for (int t = 0; t < 2; t++) {
                adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
                adia_plan *P = test_plan_fixed(A, formats[f], vt, 1);
                if (!P) continue;
                char tag[96];
                snprintf(tag, sizeof tag, "%s %s on %s/%s", cases[c].spec,
                         adia_solver_name(cases[c].m), formats[f], adia_value_type_name(vt));
                same_as_before(A, P, cases[c].m, tag);
                adia_plan_destroy(P);
            }
        adia_matrix_destroy(A);
    }
}

/* The same solve with neumann2 on a CPU plan: the reference. */
static outcome cpu_reference(const adia_matrix *A, adia_solver m, double rtol)
{
    adia_plan *C = test_plan_fixed(A, "dia", ADIA_DOUBLE, 0);
    adia_precond *M = C ? test_precond(C, "neumann2") : NULL;
    outcome o = {.status = ADIA_ERR_INVALID_ARG};
    if (M) o = solve_on(A, C, m, M, 0, 20, rtol);
    adia_precond_destroy(M);
    adia_plan_destroy(C);
    return o;
}

/* neumann2 (host vectors): fewer CG iterations than Jacobi, every method
 * converges in about the CPU's iterations; alternate: FGMRES converges
 * over several cycles. */
static void test_kinds(void)
{
    adia_matrix *L = test_generate("lap2d5:61"), *B = test_generate("band:3001,4");
    for (int t = 0; L && B && t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        const double rtol = rtol_of(vt);
        const char *vn = adia_value_type_name(vt);
        adia_plan *P = test_plan_fixed(L, "dia", vt, 1), *Q = test_plan_fixed(B, "dia", vt, 1);
        adia_precond *M = P ? test_precond(P, "neumann2") : NULL;
        adia_precond *V = Q ? test_precond(Q, "alternate") : NULL;
        if (M) {
            outcome o[2] = {solve_on(L, P, ADIA_SOLVE_CG, NULL, 1, 30, rtol),
                            solve_on(L, P, ADIA_SOLVE_CG, M, 0, 30, rtol)};
            /* float's rtol (1e-5) leaves less to gain: 70 vs 85 on an H100 */
            const double gain = vt == ADIA_FLOAT ? 0.9 : 0.75;
            CHECK(solved(&o[0], rtol) && solved(&o[1], rtol) &&
                  o[1].info.iterations < gain * o[0].info.iterations,
                  "lap2d5:61 CG %s: jacobi %s in %d, neumann2 %s in %d", vn, o[0].info.stop,
                  o[0].info.iterations, o[1].info.stop, o[1].info.iterations);
            free_all(o, 2);
            for (int m = 0; m < 3; m++) {
                outcome g = solve_on(L, P, (adia_solver)m, M, 0, 20, rtol);
                outcome c = cpu_reference(L, (adia_solver)m, rtol);
                const int d = abs(g.info.iterations - c.info.iterations);
                CHECK(solved(&g, rtol) && solved(&c, rtol) && d <= 2 + c.info.iterations / 10,
                      "lap2d5:61 %s + neumann2 %s: %s in %d iterations (CPU: %s in %d), error "
                      "%.3g", adia_solver_name((adia_solver)m), vn, g.info.stop,
                      g.info.iterations, c.info.stop, c.info.iterations, g.err);
                free(g.x);
                free(c.x);
            }
        }
        for (int restart = 5; V && restart <= 40; restart *= 8) {
            outcome g = solve_on(B, Q, ADIA_SOLVE_GMRES, V, 0, restart, rtol);
            CHECK(solved(&g, rtol), "band FGMRES(%d) + alternate %s: %s, error %.3g", restart, vn,
                  g.info.stop, g.err);
            free(g.x);
        }
        adia_precond_destroy(M);
        adia_precond_destroy(V);
        adia_plan_destroy(P);
        adia_plan_destroy(Q);
    }
    adia_matrix_destroy(L);
    adia_matrix_destroy(B);
}

/* Device vectors (adia_plan_solve on a stream, not scaled): neumann2 with
 * every method, alternate with GMRES; x = ones recovered. */
static void test_device_vectors(void)
{
    adia_matrix *A = test_generate("band:5001,3,sym");   /* SPD: every method applies */
    if (!A) return;
    const int32_t n = adia_matrix_rows(A);
    double *one = malloc((size_t)n * sizeof *one), *b = malloc((size_t)n * sizeof *b),
           *x = malloc((size_t)n * sizeof *x);
    for (int32_t i = 0; i < n; i++) one[i] = 1;
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
    void *stream = NULL;
    CHECK(cudaStreamCreate((cudaStream_t *)&stream) == cudaSuccess, "stream");
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        adia_plan *P = test_plan_fixed(A, "dia", vt, 1);
        adia_precond *M[2] = {P ? test_precond(P, "neumann2") : NULL,
                              P ? test_precond(P, "alternate") : NULL};
        for (int k = 0; M[0] && M[1] && k < 4; k++) {
            const adia_solver m = k < 3 ? (adia_solver)k : ADIA_SOLVE_GMRES;
            void *db = test_gpu_upload(b, n, t), *dx = NULL;
            for (int32_t i = 0; i < n; i++) x[i] = 0;
            dx = test_gpu_upload(x, n, t);
            adia_solve_options o;
            adia_solve_options_default(&o);
            o.method = m;
            o.rtol = rtol_of(vt);
            o.precond = M[k == 3];
            adia_solve_info in;
            CHECK_OK(adia_plan_solve(P, db, dx, &o, &in, stream));
            CHECK(test_gpu_download(x, dx, n, t) == 0, "download");
            double err = test_rel_err(x, one, n);
            CHECK(in.converged && in.residual <= o.rtol && err < (t ? 1e-2 : 1e-7),
                  "device vectors %s + %s %s: %s, residual %.3g, error %.3g",
                  adia_solver_name(m), adia_precond_kind(o.precond), adia_value_type_name(vt),
                  in.stop, in.residual, err);
            cudaFree(db);
            cudaFree(dx);
        }
        adia_precond_destroy(M[0]);
        adia_precond_destroy(M[1]);
        adia_plan_destroy(P);
    }
    cudaStreamDestroy((cudaStream_t)stream);
    free(one);
    free(b);
    free(x);
    adia_matrix_destroy(A);
}

/* One row and three rows, every method through the stage. */
static void test_small(void)
{
    static const double one[] = {3};
    static const double three[] = {4, -1, 0, -1, 4, -1, 0, -1, 4};
    adia_matrix *As[] = {test_dense_matrix(1, 1, one), test_dense_matrix(3, 3, three)};
    for (int a = 0; a < 2; a++) {
        adia_plan *P = As[a] ? test_plan_fixed(As[a], "csr", ADIA_DOUBLE, 1) : NULL;
        adia_precond *M = P ? test_precond(P, "neumann2") : NULL;
        for (int m = 0; M && m < 3; m++) {
            outcome o = solve_on(As[a], P, (adia_solver)m, M, 0, 30, 1e-10);
            CHECK(solved(&o, 1e-10), "%d rows, %s + neumann2: %s", adia_matrix_rows(As[a]),
                  adia_solver_name((adia_solver)m), o.info.stop);
            free(o.x);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(As[a]);
    }
}

/* A GPU plan made by adia_plan_create_csr from A's arrays, solved with
 * adia_solve(NULL, P): the x and iterations of adia_solve(A, Q) on a plan
 * of A, with no preconditioner, the Jacobi flag and mg. */
static void test_without_matrix(void)
{
    adia_matrix *A = test_generate("lap3d7:33");
    if (!A) return;
    const int32_t n = adia_matrix_rows(A);
    adia_csr_view c;
    CHECK_OK(adia_matrix_csr(A, &c));
    adia_plan_hints h = {.expected_calls = 100, .vtype = ADIA_DOUBLE, .device = 1};
    adia_plan *P = NULL, *Q = NULL;
    CHECK_OK(adia_plan_create_csr(n, n, c.nnz, c.rowptr, c.colind, c.values, ADIA_DOUBLE, "a",
                                  &h, &P));
    CHECK_OK(adia_plan_create(A, &h, &Q));
    double *b = malloc((size_t)n * sizeof *b), *x1 = malloc((size_t)n * sizeof *x1);
    double *x2 = malloc((size_t)n * sizeof *x2);
    for (int32_t i = 0; i < n; i++) x1[i] = 1;
    CHECK_OK(adia_matrix_spmv(A, 1.0, x1, 0.0, b));
    for (int k = 0; P && Q && k < 3; k++) {
        adia_precond *MP = k == 2 ? test_precond(P, "mg") : NULL;
        adia_precond *MQ = k == 2 ? test_precond(Q, "mg") : NULL;
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.jacobi = k == 1;
        adia_solve_info i1, i2;
        memset(x1, 0, (size_t)n * sizeof *x1), memset(x2, 0, (size_t)n * sizeof *x2);
        o.precond = MQ;
        CHECK_OK(adia_solve(A, Q, b, x1, &o, &i1));
        o.precond = MP;
        CHECK_OK(adia_solve(NULL, P, b, x2, &o, &i2));
        CHECK(i1.converged && i2.converged && i1.iterations == i2.iterations &&
                  test_rel_err(x2, x1, n) < 1e-14,
              "case %d: with A %s in %d, without %s in %d (x differs by %g)", k, i1.stop,
              i1.iterations, i2.stop, i2.iterations, test_rel_err(x2, x1, n));
        adia_precond_destroy(MP), adia_precond_destroy(MQ);
    }
    adia_plan_destroy(P), adia_plan_destroy(Q);
    free(b), free(x1), free(x2);
    adia_matrix_destroy(A);
}

/* The default's fall-back on device vectors: auto's mg on band:300,1 (not
 * SPD) stops short, adia_plan_solve solves again from x0 (kept on the
 * device) with Jacobi: the Jacobi flag's iterations and x. */
static void test_fallback_device(void)
{
    adia_matrix *A = test_generate("band:300,1");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    adia_precond *M = P ? test_precond(P, "auto") : NULL;
    const int32_t n = A ? adia_matrix_rows(A) : 0;
    double *b = malloc((size_t)n * sizeof *b + 8), *x0 = malloc((size_t)n * sizeof *x0 + 8);
    double *x1 = malloc((size_t)n * sizeof *x1 + 8), *x2 = malloc((size_t)n * sizeof *x2 + 8);
    for (int32_t i = 0; i < n; i++) x0[i] = 1;
    if (A) CHECK_OK(adia_matrix_spmv(A, 1.0, x0, 0.0, b));
    for (int32_t i = 0; i < n; i++) x0[i] = 0.5;
    void *db = M ? test_gpu_upload(b, n, 0) : NULL, *dx1 = M ? test_gpu_upload(x0, n, 0) : NULL;
    void *dx2 = M ? test_gpu_upload(x0, n, 0) : NULL;
    if (db && dx1 && dx2) {
        CHECK(!strcmp(adia_precond_kind(M), "mg"), "band:300,1 on the GPU: auto made %s",
              adia_precond_kind(M));
        adia_solve_options o;
        adia_solve_options_default(&o);
        adia_solve_info i1, i2;
        o.precond = M;
        CHECK_OK(adia_plan_solve(P, db, dx1, &o, &i1, NULL));
        o.precond = NULL;
        o.jacobi = 1;
        CHECK_OK(adia_plan_solve(P, db, dx2, &o, &i2, NULL));
        CHECK(test_gpu_download(x1, dx1, n, 0) == 0 && test_gpu_download(x2, dx2, n, 0) == 0,
              "download x");
        CHECK(test_contains(i1.fallback, "mg, stopped short after") &&
                  i1.iterations == i2.iterations && !memcmp(x1, x2, (size_t)n * sizeof *x1),
              "device fall-back: \"%s\", %d iterations (Jacobi's %d)", i1.fallback,
              i1.iterations, i2.iterations);
    }
    cudaFree(db), cudaFree(dx1), cudaFree(dx2);
    free(b), free(x0), free(x1), free(x2);
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* A preconditioner of a CPU plan, or of another GPU plan of the same A. */
static void test_errors(void)
{
    adia_matrix *A = test_generate("lap2d5:9");
    if (!A) return;
    adia_plan *C = test_plan_fixed(A, "dia", ADIA_DOUBLE, 0);
    adia_plan *G = test_plan_fixed(A, "dia", ADIA_DOUBLE, 1);
    adia_plan *H = test_plan_fixed(A, "dia", ADIA_DOUBLE, 1);
    const int32_t n = adia_matrix_rows(A);
    double *b = calloc((size_t)n, sizeof *b), *x = calloc((size_t)n, sizeof *x);
    b[0] = 1;
    adia_precond *MC = C ? test_precond(C, "scaled2") : NULL;
    adia_precond *MH = H ? test_precond(H, "scaled2") : NULL;
    adia_solve_options o;
    adia_solve_options_default(&o);
    adia_solve_info in;
    void *db = test_gpu_upload(b, n, 0), *dx = test_gpu_upload(x, n, 0);
    if (G && MC && MH) {
        o.precond = MC;
        CHECK_ERR(adia_solve(A, G, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "a CPU plan");
        CHECK_ERR(adia_plan_solve(G, db, dx, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "another plan");
        o.precond = MH;
        CHECK_ERR(adia_solve(A, G, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "another plan");
        o.jacobi = 1;
        CHECK_ERR(adia_plan_solve(H, db, dx, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "jacobi");
    }
    cudaFree(db);
    cudaFree(dx);
    adia_precond_destroy(MC);
    adia_precond_destroy(MH);
    adia_plan_destroy(C);
    adia_plan_destroy(G);
    adia_plan_destroy(H);
    free(b);
    free(x);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    test_register_kinds();
    CHECK_OK(adia__precond_register(&scaled2_g1));
    CHECK_OK(adia__precond_register(&scaled2_g0));
    test_same_as_before();
    test_kinds();
    test_device_vectors();
    test_small();
    test_without_matrix();
    test_fallback_device();
    test_errors();
    return TEST_END();
}
#endif
