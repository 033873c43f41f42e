/* test_mg_setup.c -- the host logic of the multigrid's device set-up: the
 * grid search over a source that is not a CSR (what mg_device.c gives it:
 * offsets and a bad-row callback), the distinct offsets of a format's
 * list, the shared start vector, the host estimate it feeds (a bound from
 * below of lambda_max(D^-1 A) on the 1D Laplacian, whose value is known),
 * the finest level's from the checkerboard (certified by Gershgorin's
 * bound on the Laplacians, the hash's where not: lap3d27), the bounds'
 * error, and the fall-back of a plan the device reader cannot
 * take (a CPU build or a CPU plan: the host set-up, which explain names). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "precond/mg.h"
#include "formats/diag_core.h"

/* A fake source: rows on grid good[] has no bad row; every other grid's
 * first bad row is 7; the calls are counted. */
typedef struct fake {
    int32_t good[3];
    int calls, reports;
} fake;

static adia_status fake_bad_row(void *ctx, const int32_t n[3], int64_t *bad)
{
    fake *f = ctx;
    f->calls++;
    *bad = memcmp(n, f->good, sizeof f->good) == 0 ? (int64_t)n[0] * n[1] * n[2] : 7;
    return ADIA_OK;
}

static adia_status fake_report(void *ctx, const int32_t n[3], int64_t i)
{
    ((fake *)ctx)->reports++;
    return adia__mg_error_off_grid(n, i, i + 100, 2.5);
}

static void test_grid_find(void)
{
    /* 3D 7-point 13x11x9: offsets 1, 13, 143 */
    const int64_t list[] = {-143, -13, -1, 0, 1, 13, 143, 13, -1};
    int64_t off[MG_MAX_OFFSETS];
    const int k = adia__mg_distinct_offsets(list, 9, off);
    CHECK(k == 3 && off[0] == 1 && off[1] == 13 && off[2] == 143, "distinct: %d", k);
    fake f = {.good = {13, 11, 9}};
    mg_grid_source src = {.rows = 13 * 11 * 9, .off = off, .k = k, .bad_row = fake_bad_row,
                          .report = fake_report, .ctx = &f};
    int32_t n[3];
    const int none[3] = {0, 0, 0};
    CHECK_OK(adia__mg_grid_find(&src, none, n));
    CHECK(n[0] == 13 && n[1] == 11 && n[2] == 9 && f.calls == 1 && f.reports == 0,
          "found %dx%dx%d after %d checks", n[0], n[1], n[2], f.calls);
    /* a given grid: one check; wrong size: no check */
    f = (fake){.good = {13, 99, 1}};
    CHECK_ERR(adia__mg_grid_find(&src, (int[3]){13, 11, 9}, n), ADIA_ERR_INVALID_ARG,
              "not on a grid of 13x11x9: A(7,107) = 2.5");
    CHECK(f.calls == 1 && f.reports == 1, "given grid: %d checks, %d reports", f.calls, f.reports);
    CHECK_ERR(adia__mg_grid_find(&src, (int[3]){10, 10, 10}, n), ADIA_ERR_DIMENSION,
              "the grid 10x10x10 has 1000 points, the matrix 1287 rows");
    /* no candidate fits: the likeliest reported */
    f.calls = f.reports = 0;
    CHECK_ERR(adia__mg_grid_find(&src, none, n), ADIA_ERR_INVALID_ARG, "not on a grid of 13x11x9");
    CHECK(f.reports == 1 && f.calls >= 1, "%d checks, %d reports", f.calls, f.reports);
    src.k = -1;
    CHECK_ERR(adia__mg_grid_find(&src, none, n), ADIA_ERR_INVALID_ARG,
              "more than 32 distinct offsets");
    int64_t many[40];
    for (int e = 0; e < 40; e++) many[e] = e + 1;
    CHECK(adia__mg_distinct_offsets(many, 40, off) == -1, "40 offsets: -1");
}

static void test_start_vector(void)
{
    double sum = 0, lo = 1, hi = -1;
    int outside = 0;
    for (int64_t i = 0; i < 100000; i++) {
        const double v = mg_start_value(i);
        outside += !(v >= -1 && v < 1);
        sum += v, lo = fmin(lo, v), hi = fmax(hi, v);
    }
    CHECK(outside == 0, "%d start values outside [-1, 1)", outside);
    CHECK(fabs(sum / 100000) < 0.01 && lo < -0.99 && hi > 0.99, "mean %g, range %g %g",
          sum / 100000, lo, hi);
    CHECK(mg_start_value(12345) == mg_start_value(12345) &&
              mg_start_value(1) != mg_start_value(2), "deterministic, distinct");
}

/* 1D Laplacian of n points: lambda_max(D^-1 A) = 1 + cos(pi / (n + 1)). */
static void test_estimate(void)
{
    const int n = 101;
    mg_stencil S = {.n = {n, 1, 1}, .rows = n};
    for (int p = 12; p <= 14; p++) S.coef[p] = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) S.coef[12][i] = S.coef[14][i] = -1, S.coef[13][i] = 2;
    mg_estimate e;
    CHECK_OK(adia__mg_estimate(&S, 0, &e));
    const double exact = 1 + cos(3.14159265358979323846 / (n + 1));
    printf("1D Laplacian of %d points: estimate %.6f, lambda_max %.6f\n", n, e.q, exact);
    CHECK(e.q <= exact * (1 + 1e-12) && e.q > 0.85 * exact && e.bound == 0 &&
              e.steps == MG_POWER_STEPS, "estimate %g of %g, bound %g, %d steps", e.q, exact,
          e.bound, e.steps);
    double lmax, lmin;
    CHECK_OK(adia__mg_bounds(&e, n, &lmax, &lmin));
    CHECK(fabs(lmax - 1.1 * e.q) < 1e-15 && fabs(lmin - lmax / 5) < 1e-15, "bounds");
    /* the finest level's: the checkerboard, certified by Gershgorin's 2 */
    CHECK_OK(adia__mg_estimate(&S, 1, &e));
    CHECK_OK(adia__mg_bounds(&e, n, &lmax, &lmin));
    printf("  from the checkerboard: %.6f after %d steps, bound %g: lmax %g\n", e.q, e.steps,
           e.bound, lmax);
    CHECK(e.bound == 2 && mg_certified(e.q, e.bound) && e.steps <= MG_CHECKER_STEPS &&
              lmax == 2 && e.q <= exact * (1 + 1e-12), "checkerboard: %g, bound %g, %d steps",
          e.q, e.bound, e.steps);
    e = (mg_estimate){-0.5, 0, 1};
    CHECK_ERR(adia__mg_bounds(&e, n, &lmax, &lmin), ADIA_ERR_INVALID_ARG,
              "Rayleigh quotient v'Av / v'Dv = -0.5: A is not positive definite");
    adia__mg_stencil_free(&S);
}

/* The finest level's estimate of a generated matrix: its stencil, the
 * estimate (fine or not), the bounds. */
static int finest_estimate(const char *spec, int fine, mg_estimate *e, double *lmax)
{
    adia_matrix *A = test_generate(spec);
    mg_stencil S = {0};
    int32_t n[3];
    const int zero[3] = {0, 0, 0};
    double lmin;
    adia_status s = A ? adia__mg_grid(&A->csr, zero, n) : ADIA_ERR_INVALID_ARG;
    if (s == ADIA_OK) s = adia__mg_stencil_from_csr(&A->csr, n, &S);
    if (s == ADIA_OK) s = adia__mg_estimate(&S, fine, e);
    if (s == ADIA_OK) s = adia__mg_bounds(e, S.rows, lmax, &lmin);
    CHECK(s == ADIA_OK, "%s: %s", spec, adia_last_error());
    adia__mg_stencil_free(&S);
    adia_matrix_destroy(A);
    return s == ADIA_OK;
}

/* lap3d7 (lambda_max(D^-1 A) = 1 + cos(pi / (n + 1))): certified within
 * the checkerboard's steps, lmax = G = 2 >= lambda_max.  lap3d27 (its top
 * mode alternates along one direction only, 1 + 10/26 cos-terms: about
 * 1.37 at 17 points, G = 2): never certified, so the hash's steps decide,
 * the coarse levels' estimate exactly, lmax = min(1.1 q, G). */
static void test_finest_estimate(void)
{
    mg_estimate e, h;
    double lmax, lh;
    if (finest_estimate("lap3d7:17", 1, &e, &lmax)) {
        const double exact = 1 + cos(3.14159265358979323846 / 18);
        printf("lap3d7:17 from the checkerboard: %.6f after %d steps, bound %g, lambda_max "
               "%.6f\n", e.q, e.steps, e.bound, exact);
        CHECK(mg_certified(e.q, e.bound) && e.steps <= MG_CHECKER_STEPS && lmax == e.bound &&
                  e.bound == 2 && e.q <= exact * (1 + 1e-12) && exact <= lmax,
              "lap3d7:17: %g after %d steps, bound %g, lmax %g", e.q, e.steps, e.bound, lmax);
    }
    if (finest_estimate("lap3d27:17", 1, &e, &lmax) && finest_estimate("lap3d27:17", 0, &h, &lh)) {
        printf("lap3d27:17 from the checkerboard: %.6f after %d steps, bound %g (the hash's "
               "alone: %.6f), lmax %g\n", e.q, e.steps, e.bound, h.q, lmax);
        CHECK(!mg_certified(e.q, e.bound) && e.steps == MG_CHECKER_STEPS + MG_POWER_STEPS &&
                  e.q == h.q && e.bound == 2 && lmax == fmin(1.1 * h.q, 2.0) && lmax > 1.3,
              "lap3d27:17: %g after %d steps (hash alone %g), bound %g, lmax %g", e.q, e.steps,
              h.q, e.bound, lmax);
    }
}

/* The DIA layout of a full 27-point stencil: 27 ascending offsets on a
 * grid at least 3 wide; on grids 2 wide points share offsets, and every
 * row has at most one point of a diagonal inside the grid (so the
 * device's to_dia writes each slot from one coefficient). */
static void test_dia_layout(void)
{
    static const int32_t grids[][3] = {{5, 4, 3}, {2, 3, 4}, {2, 2, 2}, {7, 2, 1}, {9, 1, 1}};
    for (size_t g = 0; g < sizeof grids / sizeof *grids; g++) {
        mg_stencil S = {.n = {grids[g][0], grids[g][1], grids[g][2]}};
        S.rows = (int64_t)S.n[0] * S.n[1] * S.n[2];
        static double dummy;
        int possible = 0;
        for (int p = 0; p < MG_POINTS; p++) {   /* the points the grid allows */
            int ok = 1;
            for (int d = 0; d < 3; d++) ok &= mg_dx(p, d) == 0 || S.n[d] > 1;
            if (ok) S.coef[p] = &dummy, possible++;
        }
        int64_t off[MG_POINTS];
        mg_dia_map m;
        adia__mg_dia_layout(&S, off, &m);
        int ascending = 1, shared = 0, clash = 0;
        for (int k = 1; k < m.ndiag; k++) ascending &= off[k] > off[k - 1];
        for (int k = 0; k < m.ndiag; k++) {
            shared += m.first[k + 1] - m.first[k] - 1;
            for (int64_t i = 0; i < S.rows; i++) {
                const int64_t c[3] = {i % S.n[0], i / S.n[0] % S.n[1], i / (S.n[0] * S.n[1])};
                int inside = 0;
                for (int e = m.first[k]; e < m.first[k + 1]; e++) {
                    int in = 1;
                    for (int d = 0; d < 3; d++) {
                        const int64_t x = c[d] + mg_dx(m.pt[e], d);
                        in &= x >= 0 && x < S.n[d];
                    }
                    inside += in;
                }
                clash += inside > 1;
            }
        }
        /* a direction 2 wide below another that is not flat: its +1 meets the next one's -1 */
        const int share = (S.n[0] == 2 && (S.n[1] > 1 || S.n[2] > 1)) ||
                          (S.n[1] == 2 && S.n[2] > 1);
        CHECK(ascending && m.first[m.ndiag] == possible && clash == 0 &&
                  (share ? shared > 0 : m.ndiag == possible && shared == 0),
              "grid %dx%dx%d: %d diagonals for %d points, %d shared, %d rows with two points "
              "inside one diagonal", S.n[0], S.n[1], S.n[2], m.ndiag, possible, shared, clash);
    }
}

/* A CPU plan: the host set-up, explain says so and gives no reason. */
static void test_host_setup(void)
{
    adia_matrix *A = test_generate("lap3d7:17");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 0) : NULL;
    mg_dview v;
    char why[160] = "";
    if (P) {
        CHECK(adia__mg_gpu_view(P, &v, why, sizeof why) == ADIA_ERR_UNSUPPORTED && why[0],
              "a CPU plan has no device view");
        adia_precond_options o;
        adia_precond_options_default(&o);
        o.kind = "mg";
        adia_precond *M = NULL;
        CHECK_OK(adia_precond_create(P, &o, &M));
        char buf[4096] = "";
        if (M) CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, "(on the host)") && !test_contains(buf, "device setup"), "%s",
              buf);
        adia_precond_destroy(M);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* The finest stencil read in place from a CPU plan's diagonal storage
 * (every diagonal format; CRSD's scatter points go the CSR way) is the
 * CSR path's: the same grid, the same bits; and so are its errors: a
 * matrix off the grid (wrap-around entries of lap2d5 read as 3D), a zero
 * diagonal entry. */
static void test_from_diag(void)
{
    static const char *specs[] = {"lap3d7:13x11x9", "lap2d9:41x30", "lap3d27:9x10x11",
                                  "vardiff3d:15", "lap2d5:2001x1", "aniso3d:12"};
    static const char *fmts[] = {"dia", "brcsd1", "brcsd2", "hdi"};
    const int zero[3] = {0, 0, 0};
    for (size_t c = 0; c < sizeof specs / sizeof *specs; c++) {
        adia_matrix *A = test_generate(specs[c]);
        if (!A) continue;
        int32_t n[3], nd[3];
        mg_stencil S = {0};
        CHECK_OK(adia__mg_grid(&A->csr, zero, n));
        CHECK_OK(adia__mg_stencil_from_csr(&A->csr, n, &S));
        for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
            adia_format *F = NULL;
            CHECK_OK(adia_format_build(A, fmts[f], NULL, ADIA_DOUBLE, &F));
            const adia_diag *D = F ? adia__format_diag_structure(F) : NULL;
            CHECK(D && adia__mg_diag_readable(D), "%s %s: readable", specs[c], fmts[f]);
            mg_stencil T = {0};
            if (D && adia__mg_diag_readable(D)) {
                CHECK_OK(adia__mg_grid_diag(D, zero, nd));
                CHECK(!memcmp(n, nd, sizeof n), "%s %s: grid %dx%dx%d, the CSR's %dx%dx%d",
                      specs[c], fmts[f], nd[0], nd[1], nd[2], n[0], n[1], n[2]);
                CHECK_OK(adia__mg_stencil_from_diag(D, n, &T));
                int same = 1;
                for (int p = 0; p < MG_POINTS; p++) {
                    same &= !S.coef[p] == !T.coef[p];
                    if (S.coef[p] && T.coef[p])
                        same &= !memcmp(S.coef[p], T.coef[p], (size_t)S.rows * sizeof(double));
                }
                CHECK(same, "%s %s: the stencil from the diagonals is not the CSR's", specs[c],
                      fmts[f]);
                /* the grid given wrong: the same first bad row, the same message */
                const int wrong[3] = {n[0] * n[1], n[2], 1};
                char want[512];
                int32_t m[3];
                if (n[2] > 1) {
                    adia_status e1 = adia__mg_grid(&A->csr, wrong, m);
                    snprintf(want, sizeof want, "%s", adia_last_error());
                    adia_status e2 = adia__mg_grid_diag(D, wrong, m);
                    CHECK(e1 == ADIA_ERR_INVALID_ARG && e2 == e1 &&
                              !strcmp(want, adia_last_error()),
                          "%s %s: off grid: %s / %s", specs[c], fmts[f], want, adia_last_error());
                }
            }
            adia__mg_stencil_free(&T);
            adia_format_destroy(F);
        }
        adia__mg_stencil_free(&S);
        adia_matrix_destroy(A);
    }
    /* a zero diagonal entry: the same error both ways */
    adia_matrix *A = test_generate("lap2d5:20x20");
    if (!A) return;
    for (int64_t k = A->csr.rowptr[57]; k < A->csr.rowptr[58]; k++)
        if (A->csr.colind[k] == 57) ((double *)A->csr.values)[k] = 0;
    int32_t n[3];
    mg_stencil S = {0};
    CHECK_OK(adia__mg_grid(&A->csr, zero, n));
    CHECK_ERR(adia__mg_stencil_from_csr(&A->csr, n, &S), ADIA_ERR_INVALID_ARG, "A(57,57)");
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "dia", NULL, ADIA_DOUBLE, &F));
    const adia_diag *D = F ? adia__format_diag_structure(F) : NULL;
    if (D) {
        CHECK_OK(adia__mg_grid_diag(D, zero, n));
        CHECK_ERR(adia__mg_stencil_from_diag(D, n, &S), ADIA_ERR_INVALID_ARG, "A(57,57)");
    }
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* A host level's DIA plan straight from its stencil (adia__mg_host_dia,
 * adia__plan_create_host_dia) is the plan through a CSR: the same nonzero
 * count, the same product bits -- on finest stencils and on a Galerkin
 * level (27 points, some offsets shared on a grid 2 points wide). */
static void test_host_dia_plan(void)
{
    static const char *specs[] = {"lap3d27:9x10x11", "lap2d9:41x30", "lap2d5:2001x1",
                                  "lap3d7:13x11x9", "lap3d7:5x2x7"};
    const int zero[3] = {0, 0, 0};
    for (size_t c = 0; c < sizeof specs / sizeof *specs; c++) {
        adia_matrix *A = test_generate(specs[c]);
        if (!A) continue;
        int32_t n[3];
        mg_stencil st[2];
        memset(st, 0, sizeof st);
        CHECK_OK(adia__mg_grid(&A->csr, zero, n));
        CHECK_OK(adia__mg_stencil_from_csr(&A->csr, n, &st[0]));
        mg_level L = {.rows = st[0].rows};
        memcpy(L.n, n, sizeof L.n);
        int levels = 1;
        if (adia__mg_coarsen_more(&L)) {   /* and its Galerkin level */
            uint64_t cp[3];
            int32_t nc[3];
            int co[3];
            adia__mg_coupling(&st[0], cp);
            adia__mg_coarse_grid(n, cp, MG_COARSEN_AUTO, nc, co);
            CHECK_OK(adia__mg_galerkin(&st[0], nc, co, &st[1]));
            levels = 2;
        }
        for (int l = 0; l < levels; l++) {
            const mg_stencil *S = &st[l];
            adia_plan_hints h = {.expected_calls = 100, .vtype = ADIA_DOUBLE, .device = 0,
                                 .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
            adia_matrix *B = NULL;
            adia_plan *P = NULL, *Q = NULL;
            int points;
            CHECK_OK(adia__mg_stencil_to_matrix(S, &B, &points));
            if (B) CHECK_OK(adia_plan_create(B, &h, &P));
            int64_t off[MG_POINTS], nnz = -1;
            int ndiag = 0;
            double *v = NULL;
            CHECK_OK(adia__mg_host_dia(S, off, &ndiag, &v, &nnz));
            if (v) CHECK_OK(adia__plan_create_host_dia((int32_t)S->rows, ndiag, off, v, nnz, &h,
                                                       "test", &Q));
            if (P && Q) {
                CHECK(nnz == adia_matrix_nnz(B) && !strcmp(adia_plan_format_name(Q), "dia"),
                      "%s level %d: %lld nonzeros, the CSR's %lld", specs[c], l, (long long)nnz,
                      (long long)adia_matrix_nnz(B));
                const int64_t m = S->rows;
                double *x = malloc(m * sizeof *x), *y = malloc(m * sizeof *y),
                       *z = malloc(m * sizeof *z);
                uint64_t seed = 7 + c;
                test_rand_vector(&seed, x, m);
                CHECK_OK(adia_spmv(P, 1.0, x, 0.0, y));
                CHECK_OK(adia_spmv(Q, 1.0, x, 0.0, z));
                CHECK(!memcmp(y, z, (size_t)m * sizeof *y), "%s level %d: the products differ",
                      specs[c], l);
                free(x), free(y), free(z);
            }
            adia_plan_destroy(P);
            adia_plan_destroy(Q);
            adia_matrix_destroy(B);
        }
        if (c == 0) {   /* refused: offsets out of order or outside, a GPU or float plan */
            const int64_t bad[4][2] = {{1, -1}, {0, 0}, {0, st[0].rows}, {-st[0].rows, 0}};
            for (int b = 0; b < 4; b++) {
                adia_plan_hints h = {.vtype = ADIA_DOUBLE, .chooser = ADIA_CHOOSE_FIXED,
                                     .format = "dia"};
                adia_plan *R = NULL;
                double *v = calloc((size_t)st[0].rows * 2, sizeof *v);   /* taken either way */
                CHECK_ERR(adia__plan_create_host_dia((int32_t)st[0].rows, 2, bad[b], v, 0, &h,
                                                     "test", &R),
                          ADIA_ERR_INTERNAL, "a host DIA plan: offset");
                CHECK(R == NULL, "a refused host DIA plan is NULL");
            }
            adia_plan_hints f = {.vtype = ADIA_FLOAT, .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
            adia_plan *R = NULL;
            const int64_t one[1] = {0};
            CHECK_ERR(adia__plan_create_host_dia((int32_t)st[0].rows, 1, one,
                                                 calloc((size_t)st[0].rows, sizeof(double)), 0,
                                                 &f, "test", &R),
                      ADIA_ERR_INTERNAL, "CPU and double only");
        }
        adia__mg_stencil_free(&st[0]);
        adia__mg_stencil_free(&st[1]);
        adia_matrix_destroy(A);
    }
}

int main(void)
{
    TEST_BEGIN();
    test_grid_find();
    test_start_vector();
    test_estimate();
    test_finest_estimate();
    test_dia_layout();
    test_host_setup();
    test_from_diag();
    test_host_dia_plan();
    return TEST_END();
}
