/* test_mg.c -- the geometric multigrid preconditioner (kind "mg") on CPU
 * plans: the grid found from the offsets (1D, 2D, 3D, box stencils, odd
 * sizes) or refused with a message naming it; the one-level fallback is
 * the exact inverse; the cycle is symmetric and positive for every
 * smoother and V / W; as a stationary iteration it reduces the residual by
 * 0.2 or better per cycle; a plain PCG loop written here converges to
 * 1e-8 in at most 12 iterations on lap3d7, growing by at most 2 with the
 * grid, and on a variable-coefficient operator.  The factors and counts
 * are printed: they are what the report quotes.  mg across processes
 * (adia_precond_options.slab): its refusals, and one process's slab (the
 * whole grid) equal to plain mg (many processes: tests/mpi/test_dist.c). */
#define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv */
#include "testutil.h"
#include "precond/mg.h"   /* the Galerkin product and transfers alone; alpha */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double stationary_factor(adia_plan *P, adia_precond *M, int cycles);
static adia_matrix *convdiff(int nx, int ny, double c);
static adia_matrix *varcoef(int nx, int ny, int nz, uint64_t seed);

static adia_plan *cpu_plan(const adia_matrix *A)
{
    adia_plan *P = NULL;
    adia_plan_hints h = {.device = 0, .expected_calls = 100};
    CHECK_OK(adia_plan_create(A, &h, &P));
    return P;
}

static adia_precond *make_mg(adia_plan *P, const char *smoother, char cycle)
{
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    o.smoother = smoother;
    o.cycle = cycle;
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

/* A 7-point operator on nx x ny x nz with face coefficients exp(2u), u
 * uniform in [-1, 1) (a contrast of up to 55 between neighbours), and
 * Dirichlet faces of weight 1 on the boundary: SPD, variable. */
static adia_matrix *varcoef(int nx, int ny, int nz, uint64_t seed)
{
    test_coo m = {.rows = nx * ny * nz, .cols = nx * ny * nz};
    const int n[3] = {nx, ny, nz};
    double *diag = calloc((size_t)m.rows, sizeof *diag);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const int c[3] = {x, y, z};
                const int64_t i = x + (int64_t)nx * (y + (int64_t)ny * z);
                for (int d = 0; d < 3; d++) {
                    if (c[d] + 1 == n[d]) diag[i] += 1;   /* boundary face */
                    if (c[d] == 0) diag[i] += 1;
                    if (c[d] + 1 >= n[d]) continue;
                    const int64_t j = i + (d == 0 ? 1 : d == 1 ? nx : (int64_t)nx * ny);
                    const double k = exp(2 * test_rand(&seed));
                    test_coo_add(&m, i, j, -k);
                    test_coo_add(&m, j, i, -k);
                    diag[i] += k;
                    diag[j] += k;
                }
            }
    for (int64_t i = 0; i < m.rows; i++) test_coo_add(&m, i, i, diag[i]);
    free(diag);
    return test_coo_matrix(&m);
}

/* A 2D 5-point convection-diffusion operator, upwind in x (c > 0): not
 * symmetric, an M-matrix. */
static adia_matrix *convdiff(int nx, int ny, double c)
{
    test_coo m = {.rows = nx * ny, .cols = nx * ny};
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            const int64_t i = x + (int64_t)nx * y;
            test_coo_add(&m, i, i, 4 + c);
            if (x > 0) test_coo_add(&m, i, i - 1, -1 - c);
            if (x + 1 < nx) test_coo_add(&m, i, i + 1, -1);
            if (y > 0) test_coo_add(&m, i, i - nx, -1);
            if (y + 1 < ny) test_coo_add(&m, i, i + nx, -1);
        }
    return test_coo_matrix(&m);
}

/* explain's measured cycle: the whole apply, then each level's own part
 * (a V-cycle's, which add up to the whole: from[l] - from[l + 1]
 * telescopes, a part below 0 printed as 0), one a level. */
static void check_times(const char *spec, const char *buf, int levels_at_least)
{
    const char *m = strstr(buf, "per cycle, measured (ms, the median of 5 run now");
    if (m) m = strstr(m, "): ");   /* on the device: "... now in a CUDA graph): " */
    CHECK(m != NULL, "%s: no measured cycle: %s", spec, buf);
    if (!m) return;
    char *end;
    const double whole = strtod(m + 2, &end);
    const char *own = strstr(end, "each level's own part: level ");
    CHECK(whole > 0 && own, "%s: cycle %g ms: %.200s", spec, whole, m);
    if (!own) return;
    const char *p = own + strlen("each level's own part: level ");
    double sum = 0;
    int count = 0, bad = 0;
    for (;;) {
        const long l = strtol(p, &end, 10);
        const double t = strtod(end, &end);
        bad |= l != count || !(t >= 0);
        sum += t, count++;
        if (*end != ',') break;
        p = end + 1;
    }
    CHECK(!bad && count >= levels_at_least && sum >= whole - 1e-4 * count && sum < 2 * whole,
          "%s: %d parts adding up to %g of a %g ms cycle: %.300s", spec, count, sum, whole, m);
}

/* The grid in explain's first level line. */
static void expect_grid(const char *spec, const char *grid, int levels_at_least)
{
    adia_matrix *A = test_generate(spec);
    if (!A) return;
    adia_plan *P = cpu_plan(A);
    adia_precond *M = P ? make_mg(P, NULL, 'v') : NULL;
    if (M) {
        char buf[4096], want[64], lev[32];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        snprintf(want, sizeof want, "level 0: grid %s,", grid);
        snprintf(lev, sizeof lev, "level %d:", levels_at_least - 1);
        CHECK(test_contains(buf, want) && test_contains(buf, lev), "%s: want %s, %d levels: %s",
              spec, grid, levels_at_least, buf);
        check_times(spec, buf, levels_at_least);
        const int32_t n = adia_matrix_rows(A);
        double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z);
        uint64_t seed = 3;
        test_rand_vector(&seed, r, n);
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        CHECK(dot(r, z, n) > 0, "%s: r'Mr > 0", spec);
        free(r);
        free(z);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

static void test_grid_found(void)
{
    expect_grid("lap2d5:2001x1", "2001x1x1", 2);    /* 1D: only +-1 */
    expect_grid("lap2d5:45x33", "45x33x1", 2);
    expect_grid("lap2d9:41x30", "41x30x1", 2);
    expect_grid("lap3d7:13x11x9", "13x11x9", 2);
    expect_grid("lap3d7:16x8x12", "16x8x12", 2);
    expect_grid("lap3d27:13x9x11", "13x9x11", 2);
    expect_grid("lap3d7:2x3x400", "2x3x400", 2);   /* thin: nx = 2 */
}

static void expect_create_error(const adia_matrix *A, const int grid[3], int max_levels,
                                adia_status code, const char *needle)
{
    adia_plan *P = cpu_plan(A);
    if (!P) return;
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    if (grid) memcpy(o.grid, grid, sizeof o.grid);
    o.max_levels = max_levels;
    adia_precond *M = NULL;
    CHECK_ERR(adia_precond_create(P, &o, &M), code, needle);
    CHECK(M == NULL, "no handle on error (%s)", needle);
    adia_plan_destroy(P);
}

static void test_grid_errors(void)
{
    adia_matrix *A = test_generate("lap3d7:9");
    if (A) {
        expect_create_error(A, (int[3]){10, 10, 10}, 0, ADIA_ERR_DIMENSION, "grid 10x10x10 "
                            "has 1000 points, the matrix 729 rows");
        expect_create_error(A, (int[3]){27, 27, 1}, 0, ADIA_ERR_INVALID_ARG,
                            "not on a grid of 27x27x1: A(");
        expect_create_error(A, (int[3]){9, 81, 0}, 0, ADIA_ERR_INVALID_ARG, "not on a grid of "
                            "9x81x1");
        adia_matrix_destroy(A);
    }
    A = test_generate("band:300,3");   /* offsets 1, 2, 3: no grid fits */
    if (A) {
        expect_create_error(A, NULL, 0, ADIA_ERR_INVALID_ARG, "not on a grid of");
        adia_matrix_destroy(A);
    }
    A = test_generate("random:500,6");
    if (A) {
        expect_create_error(A, NULL, 0, ADIA_ERR_INVALID_ARG, "mg preconditioner");
        adia_matrix_destroy(A);
    }
    A = test_generate("lap3d7:33");    /* one level of 35937 rows: too big to invert */
    if (A) {
        expect_create_error(A, NULL, 1, ADIA_ERR_INVALID_ARG, "above the 4096 rows");
        adia_matrix_destroy(A);
    }
    /* A zero diagonal entry, named with its grid point. */
    test_coo m = {.rows = 30, .cols = 30};
    for (int i = 0; i < 30; i++) {
        if (i != 17) test_coo_add(&m, i, i, 2);
        if (i > 0) test_coo_add(&m, i, i - 1, -1);
        if (i + 1 < 30) test_coo_add(&m, i, i + 1, -1);
    }
    A = test_coo_matrix(&m);
    if (A) {
        expect_create_error(A, NULL, 0, ADIA_ERR_INVALID_ARG, "A(17,17) (grid point (17,0,0)) "
                            "nonzero and finite, it is 0");
        adia_matrix_destroy(A);
    }
}

static void test_options(void)
{
    adia_matrix *A = test_generate("lap2d5:31");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    if (!P) return;
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    adia_precond *M = NULL;
    o.smoother = "gauss";
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "smoother \"gauss\"");
    o.smoother = "jacobi";
    o.degree = 3;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "degree 3 is the Chebyshev");
    o.smoother = "cheb";   /* degree 3 is fine there */
    CHECK_OK(adia_precond_create(P, &o, &M));
    char buf[1024];
    if (M) CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
    CHECK(M && test_contains(buf, "degree 3"), "explain: %s", M ? buf : "");
    adia_precond_destroy(M);
    M = NULL;
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* A grid too small to coarsen (<= MG_COARSE_ROWS, 128 rows; 3D: 64): one
 * level, M = A^-1. */
static void test_one_level(void)
{
    static const char *specs[] = {"lap2d5:1x1", "lap2d5:7x1", "lap2d5:11x11", "lap3d27:4x4x4",
                                  "lap3d27:1x5x24"};
    for (size_t c = 0; c < sizeof specs / sizeof *specs; c++) {
        adia_matrix *A = test_generate(specs[c]);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        adia_precond *M = P ? make_mg(P, NULL, 'v') : NULL;
        if (!M) goto next;
        const int32_t n = adia_matrix_rows(A);
        double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z), *az = malloc(n * sizeof *az);
        uint64_t seed = 11;
        test_rand_vector(&seed, r, n);
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        CHECK_OK(adia_spmv(P, 1.0, z, 0.0, az));
        CHECK(test_rel_err(az, r, n) < 1e-12, "%s: A M r = r, error %g", specs[c],
              test_rel_err(az, r, n));
        char buf[2048];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, "mg: 1 levels") && test_contains(buf, "Cholesky"), "%s: %s",
              specs[c], buf);
        free(r);
        free(z);
        free(az);
    next:
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

/* ---- layer 1: the Galerkin product and the transfer kernels against an
 * explicit dense P (a formula of its own: weight 1 at f = 2c, 1/2 at
 * |f - 2c| = 1, per coarsened direction). */
static double weight1d(int coarsened, int64_t f, int64_t c)
{
    if (!coarsened) return f == c;
    return f == 2 * c ? 1.0 : llabs(f - 2 * c) == 1 ? 0.5 : 0.0;
}

static double *dense_p(const int32_t n[3], const int32_t nc[3], const int co[3])
{
    const int64_t rows = (int64_t)n[0] * n[1] * n[2], cols = (int64_t)nc[0] * nc[1] * nc[2];
    double *p = calloc((size_t)(rows * cols), sizeof *p);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t J = 0; J < cols; J++) {
            const int64_t f[3] = {i % n[0], i / n[0] % n[1], i / ((int64_t)n[0] * n[1])};
            const int64_t c[3] = {J % nc[0], J / nc[0] % nc[1], J / ((int64_t)nc[0] * nc[1])};
            p[i * cols + J] = weight1d(co[0], f[0], c[0]) * weight1d(co[1], f[1], c[1]) *
                              weight1d(co[2], f[2], c[2]);
        }
    return p;
}

static double *dense_of(const adia_matrix *A)
{
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    double *a = calloc((size_t)v.rows * v.rows, sizeof *a);
    for (int32_t i = 0; i < v.rows; i++)
        for (int64_t k = v.rowptr[i]; k < v.rowptr[i + 1]; k++)
            a[(int64_t)i * v.rows + v.colind[k]] = v.values[k];
    return a;
}

/* P^T A P, dense (A: n x n, P: n x m). */
static double *ptap(const double *a, const double *p, int64_t n, int64_t m)
{
    double *ap = calloc((size_t)(n * m), sizeof *ap), *c = calloc((size_t)(m * m), sizeof *c);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < n; k++)
            if (a[i * n + k] != 0)
                for (int64_t j = 0; j < m; j++) ap[i * m + j] += a[i * n + k] * p[k * m + j];
    for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < m; i++)
            if (p[k * m + i] != 0)
                for (int64_t j = 0; j < m; j++) c[i * m + j] += p[k * m + i] * ap[k * m + j];
    free(ap);
    return c;
}

static double max_diff(const double *a, const double *b, int64_t n)
{
    double d = 0, big = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), big = fmax(big, fabs(b[i]));
    return d / (big > 0 ? big : 1);
}

/* Two Galerkin levels of A against P^T A P dense, and R, P against P;
 * the directions coarsened by the rule (auto), or force's (semicoarsening
 * in given directions) when not NULL. */
static void check_galerkin(adia_matrix *A, const char *what, const int *force)
{
    if (!A) return;
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    const adia_csr c = {.rows = v.rows, .cols = v.cols, .nnz = v.nnz, .rowptr = (int64_t *)v.rowptr,
                        .colind = (int32_t *)v.colind, .values = (double *)v.values,
                        .vtype = ADIA_DOUBLE};
    int32_t n[3];
    const int nogrid[3] = {0, 0, 0};
    mg_stencil st[3] = {{.rows = 0}};
    CHECK_OK(adia__mg_grid(&c, nogrid, n));
    CHECK_OK(adia__mg_stencil_from_csr(&c, n, &st[0]));
    double *a = dense_of(A);
    int64_t rows = v.rows;
    for (int l = 0; l < 2 && a; l++) {
        int32_t nc[3];
        int co[3];
        uint64_t coupling[3];
        adia__mg_coupling(&st[l], coupling);
        adia__mg_coarse_grid(st[l].n, coupling, MG_COARSEN_AUTO, nc, co);
        for (int d = 0; force && d < 3; d++) {
            co[d] = force[d] && st[l].n[d] > 1;
            nc[d] = co[d] ? (st[l].n[d] + 1) / 2 : st[l].n[d];
        }
        const int64_t m = (int64_t)nc[0] * nc[1] * nc[2];
        double *p = dense_p(st[l].n, nc, co), *want = ptap(a, p, rows, m);
        CHECK_OK(adia__mg_galerkin(&st[l], nc, co, &st[l + 1]));
        adia_matrix *C = NULL;
        int points = 0;
        CHECK_OK(adia__mg_stencil_to_matrix(&st[l + 1], &C, &points));
        double *got = C ? dense_of(C) : NULL;
        CHECK(got && max_diff(got, want, m * m) < 1e-14, "%s level %d: R A P error %g", what,
              l + 1, got ? max_diff(got, want, m * m) : -1.0);
        /* the transfer kernels: Lc.b = P^T (b - 0), x += P xc */
        mg_state S = {.device = 0};
        mg_level L = {.rows = rows}, Lc = {.rows = m};
        memcpy(L.n, st[l].n, sizeof L.n);
        memcpy(Lc.n, nc, sizeof Lc.n);
        memcpy(Lc.coarsened, co, sizeof Lc.coarsened);
        double *b = malloc(rows * sizeof *b), *x = malloc(rows * sizeof *x);
        double *xw = malloc(rows * sizeof *xw), *bw = calloc(m, sizeof *bw);
        double *xc = malloc(m * sizeof *xc), *bc = malloc(m * sizeof *bc);
        L.t = calloc(rows, sizeof(double));
        Lc.b = bc, Lc.x = xc;
        uint64_t seed = 31;
        test_rand_vector(&seed, b, rows);
        test_rand_vector(&seed, x, rows);
        test_rand_vector(&seed, xc, m);
        memcpy(xw, x, rows * sizeof *xw);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t J = 0; J < m; J++) {
                bw[J] += p[i * m + J] * b[i];
                xw[i] += p[i * m + J] * xc[J];
            }
        CHECK_OK(adia__mg_cpu_kernels.restrict_residual(&S, &L, &Lc, 1.0, b, NULL));
        CHECK_OK(adia__mg_cpu_kernels.prolong(&S, &L, &Lc, x, NULL));
        CHECK(max_diff(bc, bw, m) < 1e-15 && max_diff(x, xw, rows) < 1e-15,
              "%s level %d: R error %g, P error %g", what, l, max_diff(bc, bw, m),
              max_diff(x, xw, rows));
        free(b), free(x), free(xw), free(bw), free(xc), free(bc), free(L.t);
        free(a);
        a = got;
        rows = m;
        free(p), free(want);
        adia_matrix_destroy(C);
    }
    free(a);
    for (int l = 0; l < 3; l++) adia__mg_stencil_free(&st[l]);
    adia_matrix_destroy(A);
}

static void test_galerkin(void)
{
    check_galerkin(varcoef(9, 8, 7, 2), "varcoef 9x8x7", NULL);
    check_galerkin(test_generate("lap3d27:6x7x5"), "lap3d27:6x7x5", NULL);
    check_galerkin(test_generate("lap2d5:14x1"), "lap2d5:14x1", NULL);
    check_galerkin(convdiff(11, 10, 0.7), "convdiff 11x10", NULL);
    /* semicoarsening: one or two directions halved (P linear along them) */
    check_galerkin(varcoef(9, 8, 7, 4), "varcoef 9x8x7 x only", (const int[3]){1, 0, 0});
    check_galerkin(varcoef(6, 7, 9, 5), "varcoef 6x7x9 z only", (const int[3]){0, 0, 1});
    check_galerkin(test_generate("lap3d27:7x6x5"), "lap3d27:7x6x5 xy", (const int[3]){1, 1, 0});
    check_galerkin(test_generate("aniso3d:7"), "aniso3d:7 (auto: xy)", NULL);
    /* 1D Poisson: R A P = (1/2) [-1 2 -1] inside (P^T, not 1/4 P^T) */
    test_coo m1 = {.rows = 33, .cols = 33};
    for (int i = 0; i < 33; i++) {
        test_coo_add(&m1, i, i, 2);
        if (i > 0) test_coo_add(&m1, i, i - 1, -1);
        if (i < 32) test_coo_add(&m1, i, i + 1, -1);
    }
    adia_matrix *A = test_coo_matrix(&m1);
    if (!A) return;
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    const adia_csr c = {.rows = v.rows, .cols = v.cols, .nnz = v.nnz, .rowptr = (int64_t *)v.rowptr,
                        .colind = (int32_t *)v.colind, .values = (double *)v.values};
    mg_stencil f = {.rows = 0}, g = {.rows = 0};
    const int32_t n[3] = {33, 1, 1}, nc[3] = {17, 1, 1};
    const int co[3] = {1, 0, 0};
    CHECK_OK(adia__mg_stencil_from_csr(&c, n, &f));
    CHECK_OK(adia__mg_galerkin(&f, nc, co, &g));
    if (g.coef[mg_point(0, 0, 0)] && g.coef[mg_point(-1, 0, 0)] && g.coef[mg_point(1, 0, 0)])
        CHECK(g.coef[mg_point(0, 0, 0)][8] == 1.0 && g.coef[mg_point(-1, 0, 0)][8] == -0.5 &&
              g.coef[mg_point(1, 0, 0)][8] == -0.5, "1D Galerkin row: %g %g %g",
              g.coef[mg_point(-1, 0, 0)][8], g.coef[mg_point(0, 0, 0)][8],
              g.coef[mg_point(1, 0, 0)][8]);
    else
        CHECK(0, "1D Galerkin: points missing");
    adia__mg_stencil_free(&f);
    adia__mg_stencil_free(&g);
    adia_matrix_destroy(A);
}

/* z = alpha M r (the solvers' scaling) is alpha times M r. */
static void test_alpha(void)
{
    adia_matrix *A = test_generate("lap3d7:19x18x17");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond *M = P ? make_mg(P, NULL, 'v') : NULL;
    if (M) {
        const int32_t n = adia_plan_rows(P);
        double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z), *za = malloc(n * sizeof *za);
        uint64_t seed = 8;
        test_rand_vector(&seed, r, n);
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        CHECK_OK(M->ops->apply(M, 0.25, r, za, NULL));
        for (int32_t i = 0; i < n; i++) z[i] *= 0.25;
        CHECK(test_rel_err(za, z, n) < 1e-14, "alpha 0.25: error %g", test_rel_err(za, z, n));
        free(r), free(z), free(za);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* Not symmetric: the coarsest level by LU; one level is A^-1, more
 * levels still a convergent stationary iteration. */
static void test_nonsymmetric(void)
{
    for (int k = 0; k < 2; k++) {
        adia_matrix *A = k ? convdiff(95, 63, 0.5) : convdiff(11, 9, 0.5);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        adia_precond *M = P ? make_mg(P, NULL, 'v') : NULL;
        if (!M) goto next;
        char buf[2048];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, "LU, not SPD"), "%s", buf);
        const int32_t n = adia_plan_rows(P);
        double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z), *az = malloc(n * sizeof *az);
        uint64_t seed = 12;
        test_rand_vector(&seed, r, n);
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        CHECK_OK(adia_spmv(P, 1.0, z, 0.0, az));
        if (k == 0) {
            CHECK(test_rel_err(az, r, n) < 1e-12, "one level: A M r = r, error %g",
                  test_rel_err(az, r, n));
        } else {
            const double f = stationary_factor(P, M, 8);
            printf("convergence factor convdiff 95x63 (not symmetric): %.3f\n", f);
            CHECK(f < 0.3, "convection-diffusion: factor %.3f", f);
        }
        free(r), free(z), free(az);
    next:
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

/* M symmetric positive definite (test_precond_spd). */
static void check_symmetric(adia_plan *P, const char *what, const char *smoother, char cycle)
{
    adia_precond *M = make_mg(P, smoother, cycle);
    if (!M) return;
    char label[160];
    snprintf(label, sizeof label, "%s %s %c", what, smoother ? smoother : "default", cycle);
    test_precond_spd(M, adia_plan_rows(P), 0, 21, label);
    adia_precond_destroy(M);
}

static void test_symmetric(void)
{
    adia_matrix *mats[5] = {test_generate("lap3d7:17x15x13"), test_generate("lap2d5:65x62"),
                            varcoef(19, 16, 11, 7), test_generate("lap3d27:12x13x14"),
                            test_generate("lap2d5:200x190")};   /* 4 levels: W differs */
    static const char *names[5] = {"lap3d7:17x15x13", "lap2d5:65x62", "varcoef 19x16x11",
                                   "lap3d27:12x13x14", "lap2d5:200x190"};
    static const char *smoothers[3] = {NULL, "jacobi", "l1jacobi"};
    for (int k = 0; k < 5; k++) {
        adia_plan *P = mats[k] ? cpu_plan(mats[k]) : NULL;
        if (!P) continue;
        for (int s = 0; s < 3; s++) check_symmetric(P, names[k], smoothers[s], 'v');
        check_symmetric(P, names[k], NULL, 'w');
        adia_plan_destroy(P);
        adia_matrix_destroy(mats[k]);
    }
}

/* x += M (b - A x) from x = 0, b = A xstar: the residual's mean reduction
 * per cycle over `cycles` cycles (after the first, which also removes the
 * smooth start). */
static double stationary_factor(adia_plan *P, adia_precond *M, int cycles)
{
    const int32_t n = adia_plan_rows(P);
    double *xs = malloc(n * sizeof *xs), *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
    double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z);
    uint64_t seed = 5;
    test_rand_vector(&seed, xs, n);
    CHECK_OK(adia_spmv(P, 1.0, xs, 0.0, b));
    double r1 = 0, rk = 0;
    for (int k = 0; k <= cycles; k++) {
        memcpy(r, b, n * sizeof *r);
        CHECK_OK(adia_spmv(P, -1.0, x, 1.0, r));
        const double rn = sqrt(dot(r, r, n));
        if (k == 1) r1 = rn;
        rk = rn;
        if (k == cycles) break;
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        for (int32_t i = 0; i < n; i++) x[i] += z[i];
    }
    free(xs), free(b), free(x), free(r), free(z);
    return pow(rk / r1, 1.0 / (cycles - 1));
}

/* z = M r of a cycle kind on plan P (r fixed), into z (n doubles). */
static int apply_kind(adia_plan *P, char kind, const double *r, double *z)
{
    adia_precond *M = make_mg(P, NULL, kind);
    const int ok = M && adia_precond_apply(M, r, z, NULL) == ADIA_OK;
    adia_precond_destroy(M);
    return ok;
}

/* The F cycle: on the coarse level an F-cycle, then a V-cycle from its
 * answer.  With 3 levels both coarse cycles are the level's V (exact
 * below it): F gives W's bits; with more, F differs from V and W, and
 * cuts the residual at least as V does (stationary factor, lap2d5:200x190,
 * 5 levels). */
static void test_f_cycle(void)
{
    static const char *specs[2] = {"lap3d7:17x15x13", "lap2d5:200x190"};
    for (int k = 0; k < 2; k++) {
        adia_matrix *A = test_generate(specs[k]);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        if (!P) continue;
        const int32_t n = adia_plan_rows(P);
        double *r = malloc(n * sizeof *r), *z[3];
        uint64_t seed = 11;
        test_rand_vector(&seed, r, n);
        int ok = 1;
        const char kinds[3] = {'v', 'w', 'f'};
        for (int c = 0; c < 3; c++) {
            z[c] = malloc(n * sizeof *z[c]);
            ok = ok && apply_kind(P, kinds[c], r, z[c]);
        }
        adia_precond *M = make_mg(P, NULL, 'f');
        char buf[2048] = "";
        if (M) CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        const int levels = test_contains(buf, "level 3:") ? 4 : 3;
        CHECK(M && test_contains(buf, "f-cycle") && test_contains(buf, "from each level down"),
              "%s: F explain: %s", specs[k], buf);
        const int fw = ok && !memcmp(z[2], z[1], n * sizeof(double));
        const int fv = ok && !memcmp(z[2], z[0], n * sizeof(double));
        CHECK(ok && (levels == 3 ? fw : !fw && !fv), "%s (%d+ levels): F %s W's bits, %s V's",
              specs[k], levels, fw ? "has" : "lacks", fv ? "has" : "lacks");
        {   /* not symmetric: CG refuses it, BiCGSTAB solves with it */
            double *x = calloc(n, sizeof *x);
            adia_solve_options so;
            adia_solve_options_default(&so);
            so.precond = M;
            adia_solve_info info;
            CHECK_ERR(adia_solve(A, P, r, x, &so, &info), ADIA_ERR_UNSUPPORTED, "not symmetric");
            so.method = ADIA_SOLVE_BICGSTAB;
            CHECK_OK(adia_solve(A, P, r, x, &so, &info));
            CHECK(info.converged && info.iterations <= 12, "%s: BiCGSTAB + F: %d iterations, %s",
                  specs[k], info.iterations, info.stop);
            free(x);
        }
        if (levels > 3) {
            adia_precond *V = make_mg(P, NULL, 'v');
            const double ff = M ? stationary_factor(P, M, 8) : 1;
            const double fv2 = V ? stationary_factor(P, V, 8) : 0;
            printf("%s: stationary factor F %.3f, V %.3f\n", specs[k], ff, fv2);
            CHECK(ff <= fv2 * 1.001, "%s: F-cycle factor %.3f above the V-cycle's %.3f", specs[k],
                  ff, fv2);
            adia_precond_destroy(V);
        }
        adia_precond_destroy(M);
        for (int c = 0; c < 3; c++) free(z[c]);
        free(r);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

static void test_convergence_factor(void)
{
    static const struct { const char *spec; const char *smoother; char cycle; double max; } c[] = {
        {"lap3d7:33", NULL, 'v', 0.2},        {"lap3d7:33", "jacobi", 'v', 0.2},
        {"lap3d7:33", "l1jacobi", 'v', 0.4}, {"lap3d7:33", NULL, 'w', 0.2},
        {"lap2d5:129", NULL, 'v', 0.2},       {"lap2d5:129x100", "jacobi", 'v', 0.2},
        {"lap3d27:25", NULL, 'v', 0.2},       {"lap3d7:31x20x17", NULL, 'v', 0.2},
        {"lap3d7:65", NULL, 'w', 0.2},        {"lap3d7:65", "jacobi", 'w', 0.2},
        {"lap3d7:65", NULL, 'f', 0.2},        {"lap2d5:200x190", NULL, 'f', 0.2},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        adia_matrix *A = test_generate(c[k].spec);
        adia_plan *P = A ? cpu_plan(A) : NULL;
        adia_precond *M = P ? make_mg(P, c[k].smoother, c[k].cycle) : NULL;
        if (M) {
            const double f = stationary_factor(P, M, 8);
            printf("convergence factor %-16s %-9s %c-cycle: %.3f\n", c[k].spec,
                   c[k].smoother ? c[k].smoother : "cheb", c[k].cycle, f);
            CHECK(f <= c[k].max, "%s %s %c: factor %.3f above %.2f", c[k].spec,
                  c[k].smoother ? c[k].smoother : "cheb", c[k].cycle, f, c[k].max);
        }
        adia_precond_destroy(M);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

/* Preconditioned CG written out (adia_spmv, adia_precond_apply): the
 * iterations to ||r|| <= rtol ||b|| from x = 0, b = A xstar; -1 if not
 * within max_iter.  The solution is checked against xstar. */
static int pcg(adia_plan *P, adia_precond *M, double rtol, int max_iter)
{
    const int32_t n = adia_plan_rows(P);
    double *xs = malloc(n * sizeof *xs), *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
    double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z), *p = malloc(n * sizeof *p);
    double *q = malloc(n * sizeof *q);
    uint64_t seed = 9;
    test_rand_vector(&seed, xs, n);
    CHECK_OK(adia_spmv(P, 1.0, xs, 0.0, b));
    memcpy(r, b, n * sizeof *r);
    const double bn = sqrt(dot(b, b, n));
    CHECK_OK(adia_precond_apply(M, r, z, NULL));
    memcpy(p, z, n * sizeof *p);
    double rz = dot(r, z, n);
    int it = -1;
    for (int k = 1; k <= max_iter; k++) {
        CHECK_OK(adia_spmv(P, 1.0, p, 0.0, q));
        const double a = rz / dot(p, q, n);
        for (int32_t i = 0; i < n; i++) x[i] += a * p[i], r[i] -= a * q[i];
        if (sqrt(dot(r, r, n)) <= rtol * bn) {
            it = k;
            break;
        }
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        const double rz1 = dot(r, z, n), beta = rz1 / rz;
        rz = rz1;
        for (int32_t i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    if (it > 0) {   /* the true residual too */
        CHECK_OK(adia_spmv(P, -1.0, x, 1.0, b));
        CHECK(sqrt(dot(b, b, n)) <= 2 * rtol * bn, "true residual %g",
              sqrt(dot(b, b, n)) / bn);
    }
    free(xs), free(b), free(x), free(r), free(z), free(p), free(q);
    return it;
}

static int pcg_on(adia_matrix *A, const char *what, const char *smoother)
{
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond *M = P ? make_mg(P, smoother, 'v') : NULL;
    int it = -1;
    if (M) {
        const double t0 = test_seconds();
        it = pcg(P, M, 1e-8, 100);
        char buf[4096];
        CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, "operator complexity") && test_contains(buf, "per cycle:") &&
              test_contains(buf, "finest-level products") && test_contains(buf, "setup ms:"),
              "explain: %s", buf);
        printf("PCG + mg (%s) %-18s %3d iterations to 1e-8 (%.2f s)\n%s", smoother ? smoother :
               "cheb", what, it, test_seconds() - t0, buf);
    }
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    return it;
}

static void test_pcg(void)
{
    static const char *specs[] = {"lap3d7:17", "lap3d7:33", "lap3d7:65"};
    int its[3];
    for (int k = 0; k < 3; k++) {
        adia_matrix *A = test_generate(specs[k]);
        its[k] = pcg_on(A, specs[k], NULL);
        adia_matrix_destroy(A);
        CHECK(its[k] > 0 && its[k] <= 12, "%s: %d PCG iterations", specs[k], its[k]);
    }
    CHECK(its[2] - its[0] <= 2, "iterations grow from %d to %d", its[0], its[2]);
    adia_matrix *A = test_generate("lap3d7:33");
    const int jac = pcg_on(A, "lap3d7:33", "jacobi");
    CHECK(jac > 0 && jac <= 12, "jacobi smoother: %d PCG iterations", jac);
    adia_matrix_destroy(A);
    A = varcoef(33, 29, 31, 3);
    const int var = pcg_on(A, "varcoef 33x29x31", NULL);
    CHECK(var > 0 && var <= 15, "variable coefficients: %d PCG iterations", var);
    adia_matrix_destroy(A);
}

/* adia_slab_comm's callbacks for the refusals below (never called). */
static void no_sum(void *ctx, double *v, int count) { (void)ctx, (void)v, (void)count; }
static void no_sum_u64(void *ctx, uint64_t *v, int count) { (void)ctx, (void)v, (void)count; }
static void no_max(void *ctx, double *v, int count) { (void)ctx, (void)v, (void)count; }
static adia_status no_agree(void *ctx, adia_status s) { (void)ctx; return s; }
static adia_status no_layout(void *ctx, int level, int64_t plane, int64_t nz, int64_t z0,
                             int64_t z1, int64_t zs, int64_t ze)
{
    (void)ctx, (void)level, (void)plane, (void)nz, (void)z0, (void)z1, (void)zs, (void)ze;
    return ADIA_OK;
}
static adia_status no_exchange(void *ctx, int level, double *v, int device, void *stream)
{
    (void)ctx, (void)level, (void)v, (void)device, (void)stream;
    return ADIA_OK;
}
static adia_status no_gather(void *ctx, int level, const double *v, double *all, int device,
                             void *stream)
{
    (void)ctx, (void)level, (void)v, (void)all, (void)device, (void)stream;
    return ADIA_OK;
}

/* adia_precond_options.slab (mg across processes, adia_mpi's) refused
 * before any set-up: another kind, a NULL callback, ghost planes outside
 * 2..8, own planes outside the grid's. */
static void test_slab_refused(void)
{
    adia_matrix *A = test_generate("lap3d7:8");
    adia_plan *P = A ? cpu_plan(A) : NULL;
    if (!P) return;
    adia_slab_comm c = {.nz = 8, .z0 = 0, .z1 = 8, .zs = 0, .ghosts = 3, .sum = no_sum,
                        .sum_u64 = no_sum_u64, .max = no_max, .agree = no_agree,
                        .layout = no_layout, .exchange = no_exchange, .gather = no_gather};
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.slab = &c;
    adia_precond *M = NULL;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "slab is mg's (kind \"jacobi\")");
    o.kind = "mg";
    c.gather = NULL;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "a slab callback is NULL");
    c.gather = no_gather;
    c.max = NULL;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "a slab callback is NULL");
    c.max = no_max;
    c.ghosts = 1;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "slab ghosts 1: 2 to 8");
    c.ghosts = 3;
    c.z0 = 4, c.z1 = 4;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "own [4, 4) of 8");
    c.z0 = 0, c.z1 = 9;
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_INVALID_ARG, "not 0 <= zs <= z0 < z1 <= nz");
    c.z1 = 8;
    o.float_levels = 1;   /* float levels are one process's */
    CHECK_ERR(adia_precond_create(P, &o, &M), ADIA_ERR_UNSUPPORTED, "this one spans processes");
    CHECK(M == NULL, "nothing made");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* One process's slab comm: the whole grid, no ghost planes; a level's
 * gather copies its planes (the layouts kept). */
typedef struct one_slab {
    int64_t plane[32], z0[32], z1[32], zs[32];
} one_slab;

static adia_status one_layout(void *ctx, int level, int64_t plane, int64_t nz, int64_t z0,
                              int64_t z1, int64_t zs, int64_t ze)
{
    one_slab *o = ctx;
    (void)nz, (void)ze;
    o->plane[level] = plane, o->z0[level] = z0, o->z1[level] = z1, o->zs[level] = zs;
    return ADIA_OK;
}

static adia_status one_gather(void *ctx, int level, const double *v, double *all, int device,
                              void *stream)
{
    const one_slab *o = ctx;
    (void)device, (void)stream;
    const int64_t p = o->plane[level];
    memcpy(all + o->z0[level] * p, v + (o->z0[level] - o->zs[level]) * p,
           (size_t)((o->z1[level] - o->z0[level]) * p) * sizeof *all);
    return ADIA_OK;
}

/* The finest level's estimate through the slab callbacks (its own, or its
 * gathered mg's where level 0 went whole to it) is plain mg's, bit for bit:
 * the same start, sums, bound and steps. */
static void same_finest_bound(const adia_precond *M, const adia_precond *S, const char *spec)
{
    const mg_state *m = M->impl, *s = S->impl;
    if (s->nlev == 1) s = s->inner->impl;
    const mg_level *a = &m->lev[0], *b = &s->lev[0];
    CHECK(a->lmax == b->lmax && a->est.q == b->est.q && a->est.bound == b->est.bound &&
              a->est.steps == b->est.steps && a->est.bound > 0,
          "%s: level 0 lmax %.17g (q %.17g, bound %g, %d steps), through the slab callbacks "
          "%.17g (q %.17g, bound %g, %d steps)", spec, a->lmax, a->est.q, a->est.bound,
          a->est.steps, b->lmax, b->est.q, b->est.bound, b->est.steps);
}

/* mg given a slab comm on one process (its slab the whole grid nx x ny x
 * nz): z = M r equals plain mg's, the levels above gather rows built slab
 * by slab (ADIA_MG_GATHER_ROWS), the rest by the gathered level's mg. */
static void test_slab_one_process(const char *spec, const int grid[3], const char *gather)
{
    setenv("ADIA_MG_GATHER_ROWS", gather, 1);
    adia_matrix *A = test_generate(spec);
    adia_plan *P = A ? cpu_plan(A) : NULL;
    adia_precond *M = NULL, *S = NULL;
    one_slab ctx;
    memset(&ctx, 0, sizeof ctx);
    adia_slab_comm c = {.nz = grid[2], .z0 = 0, .z1 = grid[2], .zs = 0, .ghosts = 3,
                        .ctx = &ctx, .sum = no_sum, .sum_u64 = no_sum_u64, .max = no_max,
                        .agree = no_agree, .layout = one_layout, .exchange = no_exchange,
                        .gather = one_gather};
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    if (P) CHECK_OK(adia_precond_create(P, &o, &M));
    o.slab = &c;
    memcpy(o.grid, grid, sizeof o.grid);
    if (P) CHECK_OK(adia_precond_create(P, &o, &S));
    const int64_t n = P ? adia_plan_rows(P) : 0;
    double *r = malloc((size_t)n * 8 + 8), *z = calloc((size_t)n + 1, 8),
           *zs = calloc((size_t)n + 1, 8);
    char text[4096] = "";
    if (M && S) {
        for (int64_t i = 0; i < n; i++) r[i] = sin(0.37 * (double)i) + 0.5;
        CHECK_OK(adia_precond_apply(M, r, z, NULL));
        CHECK_OK(adia_precond_apply(S, r, zs, NULL));
        adia_precond_explain(S, text, sizeof text);
        double e = 0, m = 0;
        for (int64_t i = 0; i < n; i++) {
            e = fmax(e, fabs(z[i] - zs[i]));
            m = fmax(m, fabs(z[i]));
        }
        CHECK(e <= 1e-13 * m && test_contains(text, "gathered onto every process"),
              "%s, one process's slab (gather at %s rows): M r differs by %g of %g\n%s", spec,
              gather, e, m, text);
        same_finest_bound(M, S, spec);
    }
    free(r), free(z), free(zs);
    adia_precond_destroy(S);
    adia_precond_destroy(M);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    unsetenv("ADIA_MG_GATHER_ROWS");
}

/* adia_grid_candidates, mg's search before any plan (adia_mpi splits the
 * grid with it): the likeliest grid first, any offsets' sign and order;
 * none for offsets that fit no grid, or bad arguments. */
static void test_grid_candidates(void)
{
    int32_t g[8][3];
    const int64_t box[] = {-64, 8, 1, -1, 64, -8, 8, 0};
    int c = adia_grid_candidates(448, box, 8, g, 8);
    CHECK(c >= 1 && g[0][0] == 8 && g[0][1] == 8 && g[0][2] == 7, "lap3d7:8x8x7: %d grids, %dx%dx%d",
          c, c ? g[0][0] : 0, c ? g[0][1] : 0, c ? g[0][2] : 0);
    const int64_t flat[] = {1, 40, -1, -40};
    c = adia_grid_candidates(40 * 37, flat, 4, g, 8);
    CHECK(c >= 1 && g[0][0] == 40 && g[0][1] == 37 && g[0][2] == 1, "lap2d5:40x37: %d grids", c);
    const int64_t odd[] = {1, 7};
    CHECK(adia_grid_candidates(100, odd, 2, g, 8) == 0, "offsets 1, 7 on 100 rows: no grid");
    CHECK(adia_grid_candidates(448, box, 8, g, 0) == 0 && adia_grid_candidates(0, box, 8, g, 8) == 0 &&
          adia_grid_candidates(448, NULL, 8, g, 8) == 0, "bad arguments: none");
}

int main(void)
{
    TEST_BEGIN();
    test_grid_candidates();
    test_slab_refused();
    test_slab_one_process("lap3d7:20x18x29", (int[3]){20, 18, 29}, "128");
    test_slab_one_process("vardiff3d:17", (int[3]){17, 17, 17}, "4913");   /* gathered whole */
    test_slab_one_process("aniso3d:16", (int[3]){16, 16, 16}, "64");
    test_grid_found();
    test_grid_errors();
    test_options();
    test_one_level();
    test_galerkin();
    test_alpha();
    test_nonsymmetric();
    test_symmetric();
    test_f_cycle();
    test_convergence_factor();
    test_pcg();
    return TEST_END();
}
