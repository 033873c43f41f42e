/* test_gpu_operator.c -- what a distributed GPU solver is built from,
 * checked on one GPU:
 *  - adia_spmv_sums_async: the five sums against the host's, on square
 *    plans (fused in dia's epilogue, a pass of their own in csr's) and on
 *    a block of rows of a larger matrix (xd), added not stored; its errors;
 *  - adia_solve_operator with opt->device 1 on an operator that wraps a
 *    GPU plan: every way the iterations can run (one WHILE graph, chunks
 *    of a plain graph, launched one by one from the host), the fused and
 *    the separate sums, and split reductions (sum_device / max_device set,
 *    as with several processes: here each sums one process's values)
 *    agree with adia_solve on the same plan -- the fused runs to the
 *    iteration, the separate sums within round-off -- for CG, BiCGSTAB
 *    and GMRES, with and without Jacobi; its argument errors;
 *  - adia_solve_operator_device (b and x on the device) against
 *    adia_plan_solve on the same plan: the same iterations and x. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else

static adia_plan *gpu_plan(const adia_matrix *A, const char *format, adia_value_type vt)
{
    return test_plan_fixed(A, format, vt, 1);
}

/* Rows [r0, r1) of A, all its columns. */
static adia_matrix *row_block(const adia_matrix *A, int32_t r0, int32_t r1)
{
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    int64_t base = v.rowptr[r0], nnz = v.rowptr[r1] - base;
    int64_t *rp = malloc(((size_t)(r1 - r0) + 1) * sizeof *rp);
    for (int32_t i = r0; i <= r1; i++) rp[i - r0] = v.rowptr[i] - base;
    adia_matrix *B = NULL;
    CHECK_OK(adia_matrix_create_csr(r1 - r0, v.cols, nnz, rp, v.colind + base, v.values + base,
                                    ADIA_DOUBLE, &B));
    free(rp);
    return B;
}

/* Device copy of n values of h in type vt. */
static void *to_device(const double *h, int64_t n, adia_value_type vt)
{
    void *d = NULL;
    size_t vs = vt == ADIA_FLOAT ? 4 : 8;
    CHECK(cudaMalloc(&d, (size_t)n * vs + 8) == cudaSuccess, "cudaMalloc");
    if (vt == ADIA_DOUBLE) {
        cudaMemcpy(d, h, (size_t)n * 8, cudaMemcpyHostToDevice);
    } else {
        float *f = malloc((size_t)n * sizeof *f + 4);
        for (int64_t i = 0; i < n; i++) f[i] = (float)h[i];
        cudaMemcpy(d, f, (size_t)n * 4, cudaMemcpyHostToDevice);
        free(f);
    }
    return d;
}

/* The sums of a plan of rows [r0, r0 + rows) of A (the whole of A when
 * the block is A) against the host's, twice into one out: added. */
static void check_sums(const adia_matrix *A, const adia_matrix *block, int32_t r0,
                       const char *fmt, adia_value_type vt, int with_z)
{
    const int32_t n = adia_matrix_cols(A), rows = adia_matrix_rows(block);
    const int square = rows == n;
    adia_plan *P = gpu_plan(block, fmt, vt);
    if (!P) return;
    double *x = malloc((size_t)n * sizeof *x), *z = malloc((size_t)n * sizeof *z),
           *y = malloc((size_t)rows * sizeof *y);
    uint64_t seed = 11;
    test_rand_vector(&seed, x, n);
    test_rand_vector(&seed, z, n);
    if (vt == ADIA_FLOAT)   /* the host sums what the device reads */
        for (int32_t i = 0; i < n; i++) {
            x[i] = (float)x[i];
            z[i] = (float)z[i];
        }
    CHECK_OK(adia_matrix_spmv(block, 1.0, x, 0.0, y));
    double ref[ADIA_SPMV_SUMS] = {0}, got[ADIA_SPMV_SUMS];
    for (int32_t i = 0; i < rows; i++) {
        double xd = x[r0 + i], zi = with_z ? z[r0 + i] : xd, yi = y[i];
        ref[0] += xd * yi;
        ref[1] += zi * xd;
        ref[2] += zi * zi;
        ref[3] += yi * yi;
        ref[4] += zi * yi;
    }
    void *dx = to_device(x, n, vt), *dz = to_device(z, n, vt), *dy = NULL, *work = NULL;
    double *out = NULL;
    size_t wb = adia_spmv_sums_work_bytes(P);
    CHECK(wb > 0, "work bytes of a GPU plan: %zu", wb);
    cudaMalloc(&dy, (size_t)rows * 8 + 8);
    cudaMalloc(&work, wb);
    cudaMemset(work, 0, wb);
    cudaMalloc((void **)&out, sizeof got);
    cudaMemset(out, 0, sizeof got);
    size_t vs = vt == ADIA_FLOAT ? 4 : 8;
    const void *xd = square ? NULL : (const char *)dx + (size_t)r0 * vs;
    const void *zz = with_z ? (const char *)dz + (size_t)r0 * vs : NULL;
    for (int k = 0; k < 2; k++)
        CHECK_OK(adia_spmv_sums_async(P, 1.0, dx, dy, xd, zz, out, work, NULL));
    cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
    const double tol = vt == ADIA_FLOAT ? 1e-4 : 1e-11;
    for (int j = 0; j < ADIA_SPMV_SUMS; j++) {
        double scale = fabs(ref[j]) + (j == 0 || j == 4 ? sqrt(ref[3] * ref[2]) : 0) + 1e-300;
        CHECK(fabs(got[j] - 2 * ref[j]) <= tol * 2 * scale,
              "%s %s rows %d..%d%s: sum %d is %.17g, host twice %.17g", fmt,
              adia_value_type_name(vt), (int)r0, (int)(r0 + rows), with_z ? " z" : "", j, got[j],
              2 * ref[j]);
    }
    cudaFree(dx);
    cudaFree(dz);
    cudaFree(dy);
    cudaFree(work);
    cudaFree(out);
    free(x);
    free(z);
    free(y);
    adia_plan_destroy(P);
}

static void test_sums(void)
{
    adia_matrix *A = test_generate("lap2d5:97");   /* 9409 rows */
    if (!A) return;
    const int32_t n = adia_matrix_rows(A);
    adia_matrix *B = row_block(A, 1000, 5003);
    for (int t = 0; t < 2; t++) {
        adia_value_type vt = t ? ADIA_FLOAT : ADIA_DOUBLE;
        for (int with_z = 0; with_z < 2; with_z++) {
            check_sums(A, A, 0, "dia", vt, with_z);
            check_sums(A, A, 0, "csr", vt, with_z);
            check_sums(A, B, 1000, "dia", vt, with_z);
            check_sums(A, B, 1000, "csr", vt, with_z);
        }
    }
    /* errors */
    double *d = NULL;
    cudaMalloc((void **)&d, (size_t)3 * n * sizeof *d);
    adia_plan *cpu = NULL, *P = gpu_plan(A, "dia", ADIA_DOUBLE), *PB = gpu_plan(B, "dia",
                                                                               ADIA_DOUBLE);
    adia_plan_hints h = {.vtype = ADIA_DOUBLE, .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
    CHECK_OK(adia_plan_create(A, &h, &cpu));
    CHECK(adia_spmv_sums_work_bytes(cpu) == 0 && adia_spmv_sums_work_bytes(NULL) == 0,
          "work bytes of a CPU plan and of NULL: 0");
    CHECK_ERR(adia_spmv_sums_async(cpu, 1, d, d + n, NULL, NULL, d, d, NULL),
              ADIA_ERR_UNSUPPORTED, "GPU plan");
    CHECK_ERR(adia_spmv_sums_async(NULL, 1, d, d + n, NULL, NULL, d, d, NULL),
              ADIA_ERR_INVALID_HANDLE, "");
    if (P) {
        CHECK_ERR(adia_spmv_sums_async(P, 1, d, d + n, NULL, NULL, NULL, d + 2 * n, NULL),
                  ADIA_ERR_INVALID_ARG, "out");
        CHECK_ERR(adia_spmv_sums_async(P, 1, d, d + 1, NULL, NULL, d + 2 * n, d + 2 * n, NULL),
                  ADIA_ERR_INVALID_ARG, "overlap");
    }
    if (PB)
        CHECK_ERR(adia_spmv_sums_async(PB, 1, d, d + n, NULL, NULL, d + 2 * n, d + 2 * n, NULL),
                  ADIA_ERR_DIMENSION, "xd");
    if (P)
        CHECK_ERR(adia_spmv_sums_async(P, 1, d, d + n, NULL, NULL, d + 2 * n, NULL, NULL),
                  ADIA_ERR_INVALID_ARG, "work");
    adia_matrix *T = test_random_matrix(9, 50, 20, 0.3);   /* more rows than columns */
    adia_plan *PT = T ? gpu_plan(T, "csr", ADIA_DOUBLE) : NULL;
    if (PT)
        CHECK_ERR(adia_spmv_sums_async(PT, 1, d, d + n, d, NULL, d + 2 * n, d + 2 * n, NULL),
                  ADIA_ERR_DIMENSION, "rows <= cols");
    adia_plan_destroy(PT);
    adia_matrix_destroy(T);
    adia_plan_destroy(cpu);
    adia_plan_destroy(P);
    adia_plan_destroy(PB);
    cudaFree(d);
    adia_matrix_destroy(B);
    adia_matrix_destroy(A);
}

/* ------------------------------------------------ the operator's solve */

typedef struct plan_op {
    adia_plan *P;
    void *work;
    int applies, sums_called;
} plan_op;

static adia_status host_apply(void *ctx, double alpha, const double *x, double *y)
{
    (void)ctx, (void)alpha, (void)x, (void)y;
    return adia_set_error(ADIA_ERR_INTERNAL, "the host apply of a device solve");
}

static adia_status dev_apply(void *ctx, double alpha, const double *x, double *y, void *stream)
{
    plan_op *o = ctx;
    o->applies++;
    return adia_spmv_async(o->P, alpha, x, 0.0, y, stream);
}

static adia_status dev_apply_sums(void *ctx, double alpha, const double *x, double *y,
                                  const double *z, double *out, void *stream)
{
    plan_op *o = ctx;
    o->applies++;
    return adia_spmv_sums_async(o->P, alpha, x, y, NULL, z, out, o->work, stream);
}

/* One process's sum and max: the values as they are (the split path). */
static void dev_sum(void *ctx, double *v, int count, void *stream)
{
    (void)v, (void)count, (void)stream;
    ((plan_op *)ctx)->sums_called++;
}

typedef struct run {
    adia_status status;
    adia_solve_info info;
    double err;
} run;

static run solve_with(const adia_matrix *A, const adia_operator *op, adia_plan *P,
                      const adia_solve_options *o)
{
    run r;
    r.err = test_solve_known(A, P, op, o, 5, &r.info, &r.status);
    return r;
}

/* The diagonal of A (Jacobi). */
static double *diagonal(const adia_matrix *A)
{
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    double *d = calloc((size_t)v.rows + 1, sizeof *d);
    for (int32_t i = 0; i < v.rows; i++)
        for (int64_t k = v.rowptr[i]; k < v.rowptr[i + 1]; k++)
            if (v.colind[k] == i) d[i] = v.values[k];
    return d;
}

static void test_operator_solve(void)
{
    static const struct { const char *spec; adia_solver m; int jacobi; } cases[] = {
        {"lap3d7:30", ADIA_SOLVE_CG, 0},         {"lap2d5:61", ADIA_SOLVE_CG, 1},
        {"band:3001,4", ADIA_SOLVE_BICGSTAB, 0}, {"type3:20000,9,0.4", ADIA_SOLVE_BICGSTAB, 1},
        {"lap2d5:61", ADIA_SOLVE_GMRES, 0},      {"band:3001,4", ADIA_SOLVE_GMRES, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        adia_matrix *A = test_generate(cases[c].spec);
        if (!A) continue;
        adia_plan *P = gpu_plan(A, "dia", ADIA_DOUBLE);
        if (!P) {
            adia_matrix_destroy(A);
            continue;
        }
        const int32_t n = adia_matrix_rows(A);
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.method = cases[c].m;
        o.jacobi = cases[c].jacobi;
        o.max_iter = 5000;
        run ref = solve_with(A, NULL, P, &o);
        CHECK(ref.status == ADIA_OK && ref.info.converged, "%s: adia_solve on the GPU plan: %s",
              cases[c].spec, ref.info.stop);
        plan_op ctx = {.P = P};
        size_t wb = adia_spmv_sums_work_bytes(P);
        cudaMalloc(&ctx.work, wb);
        cudaMemset(ctx.work, 0, wb);
        double *diag = diagonal(A);
        adia_csr_view v;
        CHECK_OK(adia_matrix_csr(A, &v));
        double big = 0;
        for (int64_t k = 0; k < v.nnz; k++) big = fmax(big, fabs(v.values[k]));
        o.device = 1;
        for (int graph = 0; graph <= 2; graph++)
            for (int fused = 0; fused < 2; fused++)
                for (int split = 0; split < 2; split++) {
                    adia_operator op = {.n = n, .apply = host_apply, .diag = diag,
                                        .max_abs = big, .ctx = &ctx,
                                        .apply_device = dev_apply,
                                        .apply_sums_device = fused ? dev_apply_sums : NULL,
                                        .sum_device = split ? dev_sum : NULL,
                                        .max_device = split ? dev_sum : NULL,
                                        .device_graph = graph};
                    ctx.applies = ctx.sums_called = 0;
                    run r = solve_with(A, &op, NULL, &o);
                    const char *tag = adia_solver_name(o.method);
                    CHECK(r.status == ADIA_OK && r.info.converged &&
                              r.info.residual <= o.rtol && r.err < 1e-5,
                          "%s %s graph %d fused %d split %d: status %d (%s), %s, residual %.3g, "
                          "error %.3g", cases[c].spec, tag, graph, fused, split, (int)r.status,
                          adia_last_error(), r.info.stop, r.info.residual, r.err);
                    int d = r.info.iterations - ref.info.iterations;
                    int slack = fused ? 0 : 2 + ref.info.iterations / 50;
                    CHECK(abs(d) <= slack, "%s %s graph %d fused %d split %d: %d iterations, "
                          "the plan's %d", cases[c].spec, tag, graph, fused, split,
                          r.info.iterations, ref.info.iterations);
                    CHECK(split ? ctx.sums_called > 0 : ctx.sums_called == 0,
                          "%s split %d: sum_device called %d times", cases[c].spec, split,
                          ctx.sums_called);
                    CHECK(ctx.applies > 0 && r.info.spmvs >= r.info.iterations,
                          "%s: %d applies, %d products counted", cases[c].spec, ctx.applies,
                          r.info.spmvs);
                }
        /* errors: no apply_device; sum_device without max_device */
        adia_operator bad = {.n = n, .apply = host_apply, .max_abs = big, .ctx = &ctx};
        double *b = calloc((size_t)n, sizeof *b), *x = calloc((size_t)n, sizeof *x);
        adia_solve_info in;
        CHECK_ERR(adia_solve_operator(&bad, b, x, &o, &in), ADIA_ERR_INVALID_ARG,
                  "apply_device");
        bad.apply_device = dev_apply;
        bad.sum_device = dev_sum;
        CHECK_ERR(adia_solve_operator(&bad, b, x, &o, &in), ADIA_ERR_INVALID_ARG, "max_device");
        free(b);
        free(x);
        free(diag);
        cudaFree(ctx.work);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

/* adia_solve_operator_device against adia_plan_solve on the same plan
 * (both unscaled, device vectors on a stream): the same iterations, the
 * same x, with and without split reductions; its argument errors. */
static void test_operator_device_vectors(void)
{
    adia_matrix *A = test_generate("lap2d5:61");
    adia_plan *P = A ? gpu_plan(A, "dia", ADIA_DOUBLE) : NULL;
    if (!P) {
        adia_matrix_destroy(A);
        return;
    }
    const int32_t n = adia_matrix_rows(A);
    double *xs = malloc((size_t)n * sizeof *xs), *b = malloc((size_t)n * sizeof *b),
           *x1 = malloc((size_t)n * sizeof *x1), *x2 = malloc((size_t)n * sizeof *x2);
    uint64_t seed = 3;
    test_rand_vector(&seed, xs, n);
    CHECK_OK(adia_matrix_spmv(A, 1.0, xs, 0.0, b));
    double *db = NULL, *dx = NULL, *diag = diagonal(A);
    cudaStream_t st = NULL;
    cudaStreamCreate(&st);
    cudaMalloc((void **)&db, (size_t)n * sizeof *db);
    cudaMalloc((void **)&dx, (size_t)n * sizeof *dx);
    cudaMemcpy(db, b, (size_t)n * sizeof *b, cudaMemcpyHostToDevice);
    plan_op ctx = {.P = P};
    size_t wb = adia_spmv_sums_work_bytes(P);
    cudaMalloc(&ctx.work, wb);
    cudaMemset(ctx.work, 0, wb);
    /* the three methods (BiCGSTAB with Jacobi), then CG with opt->precond
     * made on a GPU plan of the operator's rows (mg): the plan solve's
     * iterations and x, with the reductions split or not */
    adia_precond *M = NULL;
    adia_precond_options po = {.kind = "mg"};
    CHECK_OK(adia_precond_create(P, &po, &M));
    for (int m = 0; m < (M ? 4 : 3); m++)
        for (int split = 0; split < 2; split++) {
            adia_solve_options o;
            adia_solve_options_default(&o);
            o.method = m == 3 ? ADIA_SOLVE_CG : (adia_solver)m;
            o.jacobi = m == 1;
            o.precond = m == 3 ? M : NULL;
            o.max_iter = 3000;
            adia_solve_info ip, io;
            cudaMemset(dx, 0, (size_t)n * sizeof *dx);
            CHECK_OK(adia_plan_solve(P, db, dx, &o, &ip, st));
            cudaMemcpy(x1, dx, (size_t)n * sizeof *x1, cudaMemcpyDeviceToHost);
            adia_operator op = {.n = n, .diag = diag, .ctx = &ctx, .apply_device = dev_apply,
                                .apply_sums_device = dev_apply_sums,
                                .sum_device = split ? dev_sum : NULL,
                                .max_device = split ? dev_sum : NULL, .device_graph = 2};
            cudaMemsetAsync(dx, 0, (size_t)n * sizeof *dx, st);
            CHECK_OK(adia_solve_operator_device(&op, db, dx, &o, &io, st));
            cudaMemcpy(x2, dx, (size_t)n * sizeof *x2, cudaMemcpyDeviceToHost);
            double d = 0;
            for (int32_t i = 0; i < n; i++) d = fmax(d, fabs(x1[i] - x2[i]));
            CHECK(ip.converged && io.converged && io.iterations == ip.iterations &&
                      (!o.precond || io.iterations <= 15) && d <= 1e-12,
                  "%s%s split %d device vectors: plan %d its (%s), operator %d its (%s), x "
                  "differs by %g", adia_solver_name(o.method), o.precond ? " + mg" : "", split,
                  ip.iterations, ip.stop, io.iterations, io.stop, d);
        }
    adia_precond_destroy(M);
    /* M of a float plan: the operator's vectors are double */
    adia_plan *F = gpu_plan(A, "dia", ADIA_FLOAT);
    adia_precond *MF = NULL;
    adia_precond_options pj = {.kind = "jacobi"};
    if (F) CHECK_OK(adia_precond_create(F, &pj, &MF));
    if (MF) {
        adia_solve_options o;
        adia_solve_options_default(&o);
        o.precond = MF;
        adia_operator op = {.n = n, .ctx = &ctx, .apply_device = dev_apply};
        CHECK_ERR(adia_solve_operator_device(&op, db, dx, &o, NULL, st), ADIA_ERR_INVALID_ARG,
                  "float");
    }
    adia_precond_destroy(MF);
    adia_plan_destroy(F);
    adia_operator none = {.n = n, .ctx = &ctx};
    CHECK_ERR(adia_solve_operator_device(&none, db, dx, NULL, NULL, NULL), ADIA_ERR_INVALID_ARG,
              "apply_device");
    none.apply_device = dev_apply;
    CHECK_ERR(adia_solve_operator_device(&none, NULL, dx, NULL, NULL, NULL),
              ADIA_ERR_INVALID_ARG, "b or x is NULL");
    double nan = NAN;
    cudaMemcpy(db + 7, &nan, sizeof nan, cudaMemcpyHostToDevice);
    CHECK_ERR(adia_solve_operator_device(&none, db, dx, NULL, NULL, NULL),
              ADIA_ERR_INVALID_ARG, "non-finite");
    cudaFree(ctx.work);
    cudaFree(db);
    cudaFree(dx);
    cudaStreamDestroy(st);
    free(diag);
    free(xs);
    free(b);
    free(x1);
    free(x2);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    test_sums();
    test_operator_solve();
    test_operator_device_vectors();
    return TEST_END();
}
#endif
