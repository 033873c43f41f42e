/* test_gpu_solve.c -- the device-resident solvers against the CPU solver:
 * the same problems (b = A * xstar, x0 = 0) on GPU plans of several
 * formats, both value types, CG and BiCGSTAB with and without Jacobi;
 * converged only with a true residual below rtol, the solution close to
 * xstar, the iteration count close to the CPU's; stop reasons (limit,
 * breakdown, non-finite values) never reported as success; b at the ends
 * of the range of double (16 x 1e308, 16 x 1e-320) on host and device
 * vectors; the set-up (setup_ms) reported apart from the iterations. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else

typedef struct outcome {
    adia_status status;
    adia_solve_info info;
    double err;               /* ||x - xstar|| / ||xstar|| */
} outcome;

static outcome solve_known(const adia_matrix *A, adia_plan *P, const adia_solve_options *o)
{
    outcome r;
    r.err = test_solve_known(A, P, NULL, o, 5, &r.info, &r.status);
    return r;
}

static adia_plan *gpu_plan(const adia_matrix *A, const char *format, adia_value_type vt)
{
    return test_plan_fixed(A, format, vt, 1);
}

static void test_against_cpu(void)
{
    static const struct { const char *spec; adia_solver m; int jacobi; } cases[] = {
        {"lap2d5:61", ADIA_SOLVE_CG, 0},          {"lap2d5:61", ADIA_SOLVE_CG, 1},
        {"lap3d7:15", ADIA_SOLVE_CG, 0},          {"type2:5000", ADIA_SOLVE_CG, 1},
        {"lap2d5:61", ADIA_SOLVE_BICGSTAB, 0},    {"band:3001,4", ADIA_SOLVE_BICGSTAB, 0},
        {"band:3001,4", ADIA_SOLVE_BICGSTAB, 1},  {"type3:20000,9,0.4", ADIA_SOLVE_BICGSTAB, 1},
        {"lap3d7:40", ADIA_SOLVE_CG, 0},  /* 64000 rows: many grid blocks */
        {"lap2d5:61", ADIA_SOLVE_GMRES, 0},       {"band:3001,4", ADIA_SOLVE_GMRES, 1},
        {"type3:20000,9,0.4", ADIA_SOLVE_GMRES, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        adia_matrix *A = test_generate(cases[c].spec);
        if (!A) continue;
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = cases[c].m;
        o.jacobi = cases[c].jacobi;
        o.max_iter = 5000;
        outcome cpu = solve_known(A, NULL, &o);
        CHECK(cpu.status == ADIA_OK && cpu.info.converged, "%s: CPU reference", cases[c].spec);
        for (int f = 0; f < adia_format_count(); f++)   /* every format with a GPU side */
            for (int t = 0; t < 2 && adia_format_has_gpu(adia_format_name_at(f)); t++) {
                const char *fmt = adia_format_name_at(f);
                adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
                adia_plan *P = gpu_plan(A, fmt, vt);
                if (!P) continue;
                o.rtol = vt == ADIA_FLOAT ? 1e-5 : 1e-8;
                outcome g = solve_known(A, P, &o);
                const char *tag = adia_solver_name(o.method);
                CHECK(g.status == ADIA_OK && g.info.converged && g.info.residual <= o.rtol,
                      "%s %s%s on %s/%s: status %d, %s, residual %.3g", cases[c].spec, tag,
                      o.jacobi ? "+jacobi" : "", fmt, adia_value_type_name(vt),
                      (int)g.status, g.info.stop, g.info.residual);
                CHECK(g.err < (vt == ADIA_FLOAT ? 1e-2 : 1e-5), "%s %s on %s/%s: error %.3g",
                      cases[c].spec, tag, fmt, adia_value_type_name(vt), g.err);
                /* the set-up (workspace, uploads, graph capture) apart from
                 * the iterations */
                CHECK(isfinite(g.info.setup_ms) && g.info.setup_ms > 0 && g.info.time_ms > 0,
                      "%s %s on %s/%s: set-up %g ms, iterations %g ms", cases[c].spec, tag, fmt,
                      adia_value_type_name(vt), g.info.setup_ms, g.info.time_ms);
                /* same rtol: the same iterations up to round-off -- CG's within 2%;
                 * BiCGSTAB's residual history is erratic, so the sums' order
                 * (blocks here, threads there) moves it further: 10% */
                int d = g.info.iterations - cpu.info.iterations;
                int slack = 2 + cpu.info.iterations / (o.method == ADIA_SOLVE_CG ? 50 : 10);
                /* (GMRES: CGS with selective reorthogonalisation here, MGS there) */
                if (vt == ADIA_DOUBLE)
                    CHECK(abs(d) <= slack,
                          "%s %s on %s: %d iterations, CPU %d", cases[c].spec, tag, fmt,
                          g.info.iterations, cpu.info.iterations);
                adia_plan_destroy(P);
            }
        adia_matrix_destroy(A);
    }
}

/* One row; b = 0 (x = 0 exactly); the iteration limit; CG on a negative
 * definite matrix (breakdown); a NaN inside A (non-finite, not success). */
static void test_stop_reasons(void)
{
    int32_t r1[1] = {0}, c1[1] = {0};
    double v1[1] = {4};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_coo(1, 1, 1, r1, c1, v1, ADIA_DOUBLE, &A));
    adia_plan *P = gpu_plan(A, "csr", ADIA_DOUBLE);
    double b1[1] = {2}, x1[1] = {0};
    adia_solve_info in;
    if (P) {
        CHECK_OK(adia_solve(A, P, b1, x1, NULL, &in));
        CHECK(in.converged && fabs(x1[0] - 0.5) < 1e-15, "1 x 1: x = %g, %s", x1[0], in.stop);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);

    A = test_generate("lap2d5:40");
    P = A ? gpu_plan(A, "dia", ADIA_DOUBLE) : NULL;
    if (P) {
        int32_t n = adia_matrix_rows(A);
        double *b = calloc((size_t)n, sizeof *b), *x = calloc((size_t)n, sizeof *x);
        for (int32_t i = 0; i < n; i++) x[i] = 1;
        CHECK_OK(adia_solve(A, P, b, x, NULL, &in));
        CHECK(in.converged && x[0] == 0 && x[n - 1] == 0, "b = 0: %s", in.stop);
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.max_iter = 5;
        for (int32_t i = 0; i < n; i++) b[i] = 1;
        CHECK_OK(adia_solve(A, P, b, x, &o, &in));
        CHECK(!in.converged && in.iterations == 5 && strstr(in.stop, "limit"),
              "limit: %d iterations, %s", in.iterations, in.stop);
        free(b);
        free(x);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);

    enum { N = 100 };
    int32_t ri[N], ci[N];
    double vi[N], b[N], x[N];
    for (int i = 0; i < N; i++) {
        ri[i] = ci[i] = i;
        vi[i] = -1.0 - i;
        b[i] = 1;
        x[i] = 0;
    }
    CHECK_OK(adia_matrix_create_coo(N, N, N, ri, ci, vi, ADIA_DOUBLE, &A));
    P = gpu_plan(A, "dia", ADIA_DOUBLE);
    if (P) {
        CHECK_OK(adia_solve(A, P, b, x, NULL, &in));
        CHECK(!in.converged && strstr(in.stop, "breakdown"), "negative definite: %s", in.stop);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);

    for (int i = 0; i < N; i++) {
        vi[i] = i == 37 ? NAN : 2.0;
        x[i] = 0;
    }
    CHECK_OK(adia_matrix_create_coo(N, N, N, ri, ci, vi, ADIA_DOUBLE, &A));
    P = gpu_plan(A, "csr", ADIA_DOUBLE);
    if (P) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        for (int m = 0; m < 2; m++) {
            o.method = m ? ADIA_SOLVE_BICGSTAB : ADIA_SOLVE_CG;
            memset(x, 0, sizeof x);
            CHECK_OK(adia_solve(A, P, b, x, &o, &in));
            CHECK(!in.converged, "NaN in A (%s): must not converge: %s, residual %g",
                  adia_solver_name(o.method), in.stop, in.residual);
        }
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    /* x0 = Inf where A's row and column 5 are empty (b - A x would stay
     * finite and small, x not): refused on device vectors, as on host ones
     * (one rule: x0 is scaled and checked first) */
    int32_t rr[N], cc[N];
    double vv[N], h[N];
    for (int i = 0, k = 0; i < N; i++)
        if (i != 5) {
            rr[k] = cc[k] = i;
            vv[k++] = 2;
        }
    CHECK_OK(adia_matrix_create_coo(N, N, N - 1, rr, cc, vv, ADIA_DOUBLE, &A));
    P = gpu_plan(A, "csr", ADIA_DOUBLE);
    double *db = NULL, *dx = NULL;
    cudaMalloc((void **)&db, sizeof h);
    cudaMalloc((void **)&dx, sizeof h);
    for (int i = 0; i < N; i++) h[i] = i == 5 ? 0 : 1;
    cudaMemcpy(db, h, sizeof h, cudaMemcpyHostToDevice);
    h[5] = INFINITY;
    for (int m = 0; P && m < 3; m++) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = (adia_solver)m;
        cudaMemcpy(dx, h, sizeof h, cudaMemcpyHostToDevice);
        CHECK_ERR(adia_plan_solve(P, db, dx, &o, &in, NULL), ADIA_ERR_INVALID_ARG,
                  "initial guess");
        double back[N];
        cudaMemcpy(back, dx, sizeof back, cudaMemcpyDeviceToHost);
        CHECK(isinf(back[5]) && back[0] == 1, "Inf in x (%s): x0 left as it was",
              adia_solver_name(o.method));
    }
    cudaFree(db);
    cudaFree(dx);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* Device vectors through adia_plan_solve on a stream, both value types,
 * each method with Jacobi: x = ones recovered, nothing through the host. */
static void test_device_vectors(void)
{
    adia_matrix *A = test_generate("band:5001,3,sym");   /* SPD: every method applies */
    if (!A) return;
    int32_t n = adia_matrix_rows(A);
    double *one = malloc((size_t)n * sizeof *one), *b = malloc((size_t)n * sizeof *b);
    for (int32_t i = 0; i < n; i++) one[i] = 1;
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "stream");
    for (int t = 0; t < 2; t++)
        for (int m = 0; m < 3; m++) {
            adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
            size_t vs = adia_value_size(vt);
            adia_plan *P = gpu_plan(A, "dia", vt);
            if (!P) continue;
            char *hb = malloc((size_t)n * vs), *hx = malloc((size_t)n * vs);
            for (int32_t i = 0; i < n; i++) {
                if (t) ((float *)hb)[i] = (float)b[i];
                else ((double *)hb)[i] = b[i];
            }
            void *db = NULL, *dx = NULL;
            CHECK(cudaMalloc(&db, (size_t)n * vs) == cudaSuccess &&
                  cudaMalloc(&dx, (size_t)n * vs) == cudaSuccess, "device vectors");
            cudaMemcpyAsync(db, hb, (size_t)n * vs, cudaMemcpyHostToDevice, st);
            cudaMemsetAsync(dx, 0, (size_t)n * vs, st);   /* queued: the solve must wait */
            adia_solve_options o;
            adia_solve_options_default(&o);
            o.method = (adia_solver)m;
            o.jacobi = 1;
            o.rtol = t ? 1e-5 : 1e-10;
            adia_solve_info in;
            double t0 = test_seconds();
            CHECK_OK(adia_plan_solve(P, db, dx, &o, &in, st));
            double wall_ms = (test_seconds() - t0) * 1e3;
            /* set-up (workspace, capture) and iterations apart, within the
             * call's wall clock */
            CHECK(isfinite(in.setup_ms) && in.setup_ms > 0 && in.time_ms > 0 &&
                  in.setup_ms + in.time_ms <= wall_ms * (1 + 1e-9),
                  "device vectors %s %s: set-up %g + iterations %g ms, wall %g ms",
                  adia_solver_name(o.method), adia_value_type_name(vt), in.setup_ms, in.time_ms,
                  wall_ms);
            cudaMemcpy(hx, dx, (size_t)n * vs, cudaMemcpyDeviceToHost);
            double err = 0;
            for (int32_t i = 0; i < n; i++)
                err = fmax(err, fabs((t ? ((float *)hx)[i] : ((double *)hx)[i]) - 1));
            CHECK(in.converged && err < (t ? 1e-3 : 1e-7), "device vectors %s %s: %s, error %.3g",
                  adia_solver_name(o.method), adia_value_type_name(vt), in.stop, err);
            cudaFree(db);
            cudaFree(dx);
            free(hb);
            free(hx);
            adia_plan_destroy(P);
        }
    cudaStreamDestroy(st);
    free(one);
    free(b);
    adia_matrix_destroy(A);
}

/* b at the ends of the range of double (issue 27) on the GPU.  Host
 * vectors (adia_solve with a GPU plan: the system is scaled on the host):
 * b = 16 x 1e308, whose norm overflows, solved by every method with and
 * without Jacobi, x checked here by a scaled residual; 16 x 1e-320, whose
 * x is subnormal, converged only where x meets rtol, else "x underflows"
 * (both said converged with x = 0 on the CPU path).  Device vectors
 * (adia_plan_solve, scaled on the device by the same rule): the same
 * outcomes, and 16 x 1e100 from x0 = ones. */
static void test_extreme_b(void)
{
    enum { N = 16 };
    adia_matrix *A = test_generate("lap2d5:4");   /* A^-1 1 in [0.83, 1.67] */
    if (!A) return;
    static const char *fmts[] = {"dia", "csr"};
    double b[N], x[N];
    for (int f = 0; f < 2; f++) {
        adia_plan *P = gpu_plan(A, fmts[f], ADIA_DOUBLE);
        if (!P) continue;
        for (int big = 0; big < 2; big++)
            for (int m = 0; m < 3; m++)
                for (int jacobi = 0; jacobi < 2; jacobi++) {
                    for (int i = 0; i < N; i++) {
                        b[i] = big ? 1e308 : 1e-320;
                        x[i] = 0;
                    }
                    adia_solve_options o;
                    adia_solve_options_default(&o);
                    o.method = (adia_solver)m;
                    o.jacobi = jacobi;
                    adia_solve_info in;
                    adia_status s = adia_solve(A, P, b, x, &o, &in);
                    int finite = 1, nonzero = 0;
                    for (int i = 0; i < N; i++) {
                        finite &= isfinite(x[i]);
                        nonzero |= x[i] != 0;
                    }
                    double res = finite ? test_scaled_residual(A, b, x, big ? 1024 : -1070)
                                        : INFINITY;
                    CHECK(s == ADIA_OK, "GPU %s, b = %g: %s", fmts[f], b[0], adia_last_error());
                    CHECK(!in.converged || (finite && nonzero && res <= o.rtol),
                          "GPU %s %s%s, b = %g: converged (%s) but the true residual is %.3g",
                          fmts[f], adia_solver_name(o.method), jacobi ? "+jacobi" : "", b[0],
                          in.stop, res);
                    if (big)
                        CHECK(in.converged, "GPU %s %s%s, b = 1e308: %s", fmts[f],
                              adia_solver_name(o.method), jacobi ? "+jacobi" : "", in.stop);
                    else if (!in.converged)
                        CHECK(test_contains(in.stop, "x underflows"), "GPU %s %s%s, b = 1e-320: %s",
                              fmts[f], adia_solver_name(o.method), jacobi ? "+jacobi" : "",
                              in.stop);
                }
        /* device vectors: the same rule (scaled on the device), so the same
         * outcomes; Jacobi too, and an x0 of ones scaled in and out */
        double *db = NULL, *dx = NULL;
        CHECK(cudaMalloc((void **)&db, N * sizeof *db) == cudaSuccess &&
              cudaMalloc((void **)&dx, N * sizeof *dx) == cudaSuccess, "device vectors");
        static const double values[] = {1e308, 1e-320, 1e100};
        for (int v = 0; v < 3 && db && dx; v++)
            for (int m = 0; m < 3; m++)
                for (int jacobi = 0; jacobi < 2; jacobi++) {
                    for (int i = 0; i < N; i++) b[i] = values[v], x[i] = v == 2 ? 1 : 0;
                    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
                    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
                    adia_solve_options o;
                    adia_solve_options_default(&o);
                    o.method = (adia_solver)m;
                    o.jacobi = jacobi;
                    adia_solve_info in;
                    adia_status s = adia_plan_solve(P, db, dx, &o, &in, NULL);
                    cudaMemcpy(x, dx, sizeof x, cudaMemcpyDeviceToHost);
                    int finite = 1, nonzero = 0;
                    for (int i = 0; i < N; i++) {
                        finite &= isfinite(x[i]);
                        nonzero |= x[i] != 0;
                    }
                    const int e = v == 0 ? 1024 : v == 1 ? -1070 : 0;
                    double res = finite ? test_scaled_residual(A, b, x, e) : INFINITY;
                    CHECK(s == ADIA_OK, "device vectors %s, b = %g: %s", fmts[f], b[0],
                          adia_last_error());
                    CHECK(!in.converged || (finite && nonzero && res <= o.rtol),
                          "device vectors %s %s%s, b = %g: converged (%s) but the true "
                          "residual is %.3g", fmts[f], adia_solver_name(o.method),
                          jacobi ? "+jacobi" : "", b[0], in.stop, res);
                    if (v != 1)
                        CHECK(in.converged, "device vectors %s %s%s, b = %g: %s", fmts[f],
                              adia_solver_name(o.method), jacobi ? "+jacobi" : "", b[0], in.stop);
                    else if (!in.converged)
                        CHECK(test_contains(in.stop, "x underflows"), "device vectors %s %s%s, b "
                              "= 1e-320: %s", fmts[f], adia_solver_name(o.method),
                              jacobi ? "+jacobi" : "", in.stop);
                }
        /* an x0 out of scale with b and A is refused, as on host vectors,
         * and left as it was */
        for (int i = 0; db && dx && i < N; i++) b[i] = 1e-300, x[i] = 1e10;
        if (db && dx) {
            cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
            cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
            adia_solve_info in;
            CHECK_ERR(adia_plan_solve(P, db, dx, NULL, &in, NULL), ADIA_ERR_INVALID_ARG,
                      "initial guess is out of scale");
            cudaMemcpy(x, dx, sizeof x, cudaMemcpyDeviceToHost);
            CHECK(x[0] == 1e10, "device vectors %s: a refused x0 left as it was (%g)", fmts[f],
                  x[0]);
        }
        cudaFree(db);
        cudaFree(dx);
        adia_plan_destroy(P);
    }
    adia_matrix_destroy(A);
}

/* adia_plan_solve's errors on the device path: NaN in b, a zero diagonal
 * with Jacobi (named), a rectangular plan, NULL vectors. */
static void test_device_errors(void)
{
    enum { N = 64 };
    int32_t r[N], c[N];
    double v[N], hb[N];
    for (int i = 0; i < N; i++) {
        r[i] = c[i] = i;
        v[i] = i == 9 ? 0.0 : 2.0;   /* an explicit zero on the diagonal */
        hb[i] = i == 5 ? NAN : 1.0;
    }
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_coo(N, N, N, r, c, v, ADIA_DOUBLE, &A));
    adia_plan *P = gpu_plan(A, "csr", ADIA_DOUBLE);
    double *db = NULL, *dx = NULL;
    cudaMalloc((void **)&db, N * sizeof *db);
    cudaMalloc((void **)&dx, N * sizeof *dx);
    cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
    cudaMemset(dx, 0, N * sizeof *dx);
    adia_solve_options o;
    adia_solve_options_default(&o);
    adia_solve_info in;
    if (P) {
        CHECK_ERR(adia_plan_solve(P, db, dx, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "non-finite");
        hb[5] = 1;
        cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
        o.jacobi = 1;
        CHECK_ERR(adia_plan_solve(P, db, dx, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "A(9,9)");
        CHECK_ERR(adia_plan_solve(P, NULL, dx, &o, &in, NULL), ADIA_ERR_INVALID_ARG, "NULL");
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    CHECK_OK(adia_matrix_create_coo(N, N / 2, 0, r, c, v, ADIA_DOUBLE, &A));
    P = gpu_plan(A, "csr", ADIA_DOUBLE);
    if (P) CHECK_ERR(adia_plan_solve(P, db, dx, &o, &in, NULL), ADIA_ERR_DIMENSION, "not square");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    cudaFree(db);
    cudaFree(dx);
}

/* The iterations run as one WHILE graph where the driver has conditional
 * nodes (CUDA 12.4): no product past the stop.  Until 2026-11-27 every
 * solve fell back to chunks of 8 or 32 iterations (the WHILE body was
 * instantiated alone: cudaErrorNotSupported), and a solve of 6 iterations
 * paid for 8 -- 40.5 ms for mg-PCG's 6 on lap3d7:256 where they take 27.
 * Products: one (CG) or two (BiCGSTAB) an iteration, and a few around
 * them (r0, the true residual); a chunk would run 32 iterations' worth. */
static void test_one_graph(void)
{
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver < 12040) return;
    adia_matrix *A = test_generate("lap2d5:61");
    adia_plan *P = A ? gpu_plan(A, "dia", ADIA_DOUBLE) : NULL;
    for (int m = 0; P && m < 2; m++) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = m ? ADIA_SOLVE_BICGSTAB : ADIA_SOLVE_CG;
        o.rtol = 1e-30;
        o.max_iter = 3;
        outcome g = solve_known(A, P, &o);
        int per = m ? 2 : 1;
        CHECK(g.status == ADIA_OK && g.info.iterations == 3 && !g.info.converged &&
                  g.info.spmvs <= 4 + per * g.info.iterations,
              "%s, 3 iterations as one WHILE graph: status %d, %d iterations, %d products "
              "(at most %d)", adia_solver_name(o.method), (int)g.status, g.info.iterations,
              g.info.spmvs, 4 + per * g.info.iterations);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* A plan's next solve reuses the memory its last one left with it (the
 * parked workspace): CG, then GMRES and BiCGSTAB with Jacobi on the same
 * plan, then CG again -- each converged, and the second CG the first one's
 * iterations and x to the bit (the reused sums' work zeroed again, the
 * graph made anew).  Host vectors through the plan too (adia_solve). */
static void test_parked_workspace(void)
{
    adia_matrix *A = test_generate("lap3d7:23x19x17");
    adia_plan *P = A ? gpu_plan(A, "dia", ADIA_DOUBLE) : NULL;
    if (!P) {
        adia_matrix_destroy(A);
        return;
    }
    const int32_t n = adia_matrix_rows(A);
    double *one = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *x[2] = {
        malloc((size_t)n * 8), malloc((size_t)n * 8)};
    for (int32_t i = 0; i < n; i++) one[i] = 1 + (i % 5) * 0.125;
    CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
    double *db = NULL, *dx = NULL;
    CHECK(cudaMalloc((void **)&db, (size_t)n * 8) == cudaSuccess &&
          cudaMalloc((void **)&dx, (size_t)n * 8) == cudaSuccess &&
          cudaMemcpy(db, b, (size_t)n * 8, cudaMemcpyHostToDevice) == cudaSuccess,
          "device vectors");
    const struct { adia_solver m; int jacobi; } runs[] = {
        {ADIA_SOLVE_CG, 0}, {ADIA_SOLVE_GMRES, 1}, {ADIA_SOLVE_BICGSTAB, 1}, {ADIA_SOLVE_CG, 0}};
    int its[2] = {-1, -2};
    for (int r = 0; r < 4 && db && dx; r++) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = runs[r].m;
        o.jacobi = runs[r].jacobi;
        o.rtol = 1e-10;
        adia_solve_info in;
        CHECK(cudaMemset(dx, 0, (size_t)n * 8) == cudaSuccess, "x0");
        CHECK_OK(adia_plan_solve(P, db, dx, &o, &in, NULL));
        CHECK(in.converged, "solve %d on one plan (%s): %s", r, adia_solver_name(o.method),
              in.stop);
        if (r == 0 || r == 3) {
            const int k = r == 3;
            its[k] = in.iterations;
            CHECK(cudaMemcpy(x[k], dx, (size_t)n * 8, cudaMemcpyDeviceToHost) == cudaSuccess,
                  "x back");
        }
    }
    CHECK(its[0] == its[1], "CG again on the same plan: %d and %d iterations", its[0], its[1]);
    test_same_bytes("CG again on the same plan", "x", x[0], x[1], n, 8);
    for (int r = 0; r < 2; r++) {   /* host vectors: the same plan, its memory */
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.rtol = 1e-10;
        adia_solve_info in;
        memset(x[r], 0, (size_t)n * 8);
        CHECK_OK(adia_solve(A, P, b, x[r], &o, &in));
        CHECK(in.converged, "host vectors, solve %d: %s", r, in.stop);
    }
    test_same_bytes("host vectors, solved twice on one plan", "x", x[0], x[1], n, 8);
    cudaFree(db);
    cudaFree(dx);
    free(one), free(b), free(x[0]), free(x[1]);
    adia_plan_destroy(P);   /* frees what the last solve left */
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    test_against_cpu();
    test_device_vectors();
    test_device_errors();
    test_extreme_b();
    test_stop_reasons();
    test_one_graph();
    test_parked_workspace();
    return TEST_END();
}
#endif
