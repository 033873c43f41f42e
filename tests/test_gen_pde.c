/* test_gen_pde.c -- the generators of what users meet: the diffusion
 * operators on grids (aniso3d, jump3d, vardiff2d, vardiff3d: exact entries
 * of small cases, symmetry bit for bit, dominance, row sums, the Laplacian
 * as a special case, CG converges) and the band with random holes (bandr:
 * fill per diagonal, holes, determinism); malformed specs. */
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <string.h>

static int is_symmetric(const adia_matrix *A)
{
    adia_matrix *T = NULL;
    if (adia_matrix_transpose(A, &T) != ADIA_OK) return 0;
    int eq = adia_matrix_equal(A, T);
    adia_matrix_destroy(T);
    return eq;
}

/* A as a dense row-major array (small matrices; caller frees). */
static double *dense_of(const adia_matrix *A)
{
    adia_csr_view v;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return NULL;
    double *d = calloc((size_t)v.rows * (size_t)v.cols, sizeof *d);
    for (int32_t i = 0; d && i < v.rows; i++)
        for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++)
            d[(size_t)i * (size_t)v.cols + (size_t)v.colind[p]] = v.values[p];
    return d;
}

/* Every row: a positive diagonal, off-diagonals <= 0, diagonal >= the sum
 * of |off-diagonal| (a tolerance for round-off), and *interior / *boundary
 * rows whose row sum is 0 / positive. */
static int check_m_matrix(const adia_matrix *A, int64_t *interior, int64_t *boundary)
{
    adia_csr_view v;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return 0;
    *interior = *boundary = 0;
    for (int32_t i = 0; i < v.rows; i++) {
        double diag = 0, off = 0;
        for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++) {
            if (v.colind[p] == i) diag = v.values[p];
            else if (v.values[p] >= 0) return 0;
            else off -= v.values[p];
        }
        if (!(diag > 0) || diag - off < -1e-12 * diag) return 0;
        if (fabs(diag - off) <= 1e-12 * diag) ++*interior;
        else ++*boundary;
    }
    return 1;
}

/* The dense matrix of -div(k grad u) on an n^3 grid from the face
 * coefficient w(point, dim, side), written out the plain way. */
typedef double (*face_fn)(const int c[3], int d, int side, int n);

static void expected_matrix(int n, face_fn w, double *E)
{
    const int N = n * n * n, stride[3] = {1, n, n * n};
    memset(E, 0, (size_t)N * N * sizeof *E);
    for (int i = 0; i < N; i++) {
        int c[3] = {i % n, i / n % n, i / (n * n)};
        for (int d = 0; d < 3; d++)
            for (int side = -1; side <= 1; side += 2) {
                double f = w(c, d, side, n);
                E[(size_t)i * N + i] += f;
                if (c[d] + side >= 0 && c[d] + side < n) E[(size_t)i * N + i + side * stride[d]] = -f;
            }
    }
}

static double aniso_face(const int c[3], int d, int side, int n)
{
    (void)c, (void)side, (void)n;
    return d == 2 ? 0.01 : 1.0;
}

/* jump3d:3,1: cells with an odd coordinate sum have k = 1e4; faces take
 * the harmonic mean, the boundary faces the cell's own k. */
static double jump_face(const int c[3], int d, int side, int n)
{
    double a = (c[0] + c[1] + c[2]) % 2 ? 1e4 : 1.0;
    if (c[d] + side < 0 || c[d] + side >= n) return a;
    double b = a == 1.0 ? 1e4 : 1.0;   /* a neighbour flips the parity */
    return 2 * a * b / (a + b);
}

static int near_all(const double *a, const double *b, int64_t n, double tol, int64_t *where)
{
    for (int64_t k = 0; k < n; k++)
        if (fabs(a[k] - b[k]) > tol * (fabs(b[k]) > 1 ? fabs(b[k]) : 1)) {
            *where = k;
            return 0;
        }
    return 1;
}

/* 3x3x3: every entry of aniso3d:3,0.01 and jump3d:3,1 against the plain
 * construction; the jump's centre and corner rows by hand too. */
static void test_exact_3x3x3(void)
{
    const char *specs[] = {"aniso3d:3,0.01", "jump3d:3,1"};
    face_fn faces[] = {aniso_face, jump_face};
    double E[27 * 27];
    for (int t = 0; t < 2; t++) {
        adia_matrix *A = test_generate(specs[t]);
        double *D = A ? dense_of(A) : NULL;
        if (!D) continue;
        CHECK(adia_matrix_nnz(A) == 135, "%s: nnz %lld", specs[t], (long long)adia_matrix_nnz(A));
        expected_matrix(3, faces[t], E);
        int64_t at = -1;
        CHECK(near_all(D, E, 27 * 27, 1e-14, &at), "%s: entry (%lld, %lld) is %.17g, want %.17g",
              specs[t], (long long)(at / 27), (long long)(at % 27), at >= 0 ? D[at] : 0,
              at >= 0 ? E[at] : 0);
        if (t == 1) {
            const double h = 20000.0 / 10001.0;   /* harmonic mean of 1 and 1e4 */
            CHECK(fabs(D[13 * 27 + 13] - 6 * h) < 1e-12 && D[13 * 27 + 12] == -h &&
                      D[13 * 27 + 4] == -h,
                  "jump3d:3,1 centre row: %.17g, %.17g", D[13 * 27 + 13], D[13 * 27 + 12]);
            CHECK(fabs(D[0] - (3 + 3 * h)) < 1e-12 && D[1] == -h, "jump3d:3,1 corner row %.17g",
                  D[0]);
        } else {
            CHECK(D[13 * 27 + 4] == -0.01 && D[13 * 27 + 12] == -1 &&
                      fabs(D[13 * 27 + 13] - 4.02) < 1e-15,
                  "aniso3d centre row: z %g, x %g, diag %.17g", D[13 * 27 + 4], D[13 * 27 + 12],
                  D[13 * 27 + 13]);
            /* row sums: the corner keeps its 3 boundary faces, 1 + 1 + 0.01 */
            double sum0 = 0;
            for (int j = 0; j < 27; j++) sum0 += D[j];
            CHECK(fabs(sum0 - 2.01) < 1e-14, "aniso3d corner row sum %.17g", sum0);
        }
        free(D);
        adia_matrix_destroy(A);
    }
    /* the default EPS is 1e-3, in z */
    adia_matrix *A = test_generate("aniso3d:3");
    double *D = A ? dense_of(A) : NULL;
    CHECK(D && D[13 * 27 + 4] == -1e-3 && D[13 * 27 + 10] == -1 && D[13 * 27 + 12] == -1,
          "aniso3d default: z coupling %g", D ? D[13 * 27 + 4] : 0);
    free(D);
    adia_matrix_destroy(A);
}

/* With a coefficient 1 everywhere the operators are the Laplacians,
 * entry for entry; their nonzeros are the Laplacians' too. */
static void test_laplacian_special_case(void)
{
    const char *pairs[][2] = {{"aniso3d:6,1", "lap3d7:6"},
                              {"jump3d:7,2,1", "lap3d7:7"},
                              {"jump3d:5,9", "lap3d7:5"}};   /* one block: k = 1 */
    for (int t = 0; t < 3; t++) {
        adia_matrix *A = test_generate(pairs[t][0]), *L = test_generate(pairs[t][1]);
        CHECK(A && L && adia_matrix_equal(A, L), "%s == %s", pairs[t][0], pairs[t][1]);
        adia_matrix_destroy(A);
        adia_matrix_destroy(L);
    }
    const char *grids[][2] = {{"vardiff3d:9", "lap3d7:9"}, {"vardiff2d:13", "lap2d5:13"},
                              {"jump3d:12", "lap3d7:12"}, {"aniso3d:10,5", "lap3d7:10"}};
    for (int t = 0; t < 4; t++) {
        adia_matrix *A = test_generate(grids[t][0]), *L = test_generate(grids[t][1]);
        CHECK(A && L && adia_matrix_nnz(A) == adia_matrix_nnz(L) &&
                  adia_matrix_rows(A) == adia_matrix_rows(L),
              "%s has the shape of %s", grids[t][0], grids[t][1]);
        adia_matrix_destroy(A);
        adia_matrix_destroy(L);
    }
}

/* CG (with Jacobi where jacobi) on A x = ones from x = 0 converges within
 * max_iter iterations: A is symmetric positive definite as far as CG tells. */
static void cg_converges(const adia_matrix *A, const char *spec, int max_iter, int jacobi)
{
    const int32_t n = adia_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    for (int32_t r = 0; r < n; r++) b[r] = 1;
    adia_solve_info info;
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.max_iter = max_iter;
    o.jacobi = jacobi;
    CHECK_OK(adia_solve(A, NULL, b, x, &o, &info));
    CHECK(info.converged, "%s: CG%s converges: %s", spec, jacobi ? " + Jacobi" : "", info.stop);
    free(b);
    free(x);
}

/* A = A^T bit for bit, an M-matrix with zero row sums inside and positive
 * ones on the boundary (the interior points of an n^d grid: (n-2)^d),
 * and CG converges on it (symmetric positive definite). */
static void test_spd(void)
{
    static const struct { const char *spec; int64_t interior; } cases[] = {
        {"aniso3d:9", 7 * 7 * 7},        {"aniso3d:8,40", 6 * 6 * 6},
        {"jump3d:12", 10 * 10 * 10},     {"jump3d:11,3,250", 9 * 9 * 9},
        {"vardiff2d:30", 28 * 28},       {"vardiff3d:10", 8 * 8 * 8},
    };
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        adia_matrix *A = test_generate(cases[t].spec);
        if (!A) continue;
        CHECK(is_symmetric(A), "%s: A = A^T", cases[t].spec);
        int64_t in = 0, bd = 0;
        CHECK(check_m_matrix(A, &in, &bd), "%s: positive dominant diagonal, off-diagonals < 0",
              cases[t].spec);
        CHECK(in == cases[t].interior && in + bd == adia_matrix_rows(A),
              "%s: %lld rows of zero sum, %lld positive (want %lld zero)", cases[t].spec,
              (long long)in, (long long)bd, (long long)cases[t].interior);
        cg_converges(A, cases[t].spec, 20000, 0);
        adia_matrix_destroy(A);
    }
}

/* vardiff: an off-diagonal is -k at the face midpoint, k in [0.1, 1.9]:
 * vardiff2d:4 (h = 1/5), point (0, 1) (row 4) to (1, 1) (row 5): the face
 * at x = 1.5 h, y = 2 h, where k = 1 + 0.9 sin(0.6 pi) sin(0.8 pi) = 1.503. */
static void test_vardiff_values(void)
{
    adia_matrix *A = test_generate("vardiff2d:4");
    double *D = A ? dense_of(A) : NULL;
    if (D) {
        const double pi2 = 6.283185307179586, h = 0.2;
        double want = -(1 + 0.9 * sin(pi2 * 1.5 * h) * sin(pi2 * 2 * h));
        CHECK(fabs(D[4 * 16 + 5] - want) < 1e-15 && D[5 * 16 + 4] == D[4 * 16 + 5] &&
                  fabs(want + 1.503) < 1e-3,
              "vardiff2d:4 A(4,5) %.17g, want %.17g", D[4 * 16 + 5], want);
        double lo = 0, hi = -2;
        for (int k = 0; k < 256; k++)
            if (D[k] < 0) {
                lo = D[k] < lo ? D[k] : lo;
                hi = D[k] > hi ? D[k] : hi;
            }
        CHECK(lo >= -1.9 && hi <= -0.1, "vardiff2d:4 off-diagonals in [-1.9, -0.1]: %g..%g", lo,
              hi);
    }
    free(D);
    adia_matrix_destroy(A);
}

/* Rows in blocks are the whole matrix's rows. */
static void test_row_blocks(void)
{
    const char *specs[] = {"aniso3d:5,0.2", "jump3d:6,2,30", "vardiff2d:9", "vardiff3d:4",
                           "bandr:300,6,0.5", "bandr:200,4,0.7,sym"};
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        adia_matrix *A = test_generate(specs[t]);
        int64_t n = A ? adia_matrix_rows(A) : 0;
        for (int p = 0; A && p < 3; p++) {
            int64_t first = n * p / 3, count = n * (p + 1) / 3 - first;
            adia_matrix *P = NULL;
            CHECK_OK(adia_matrix_generate_rows(specs[t], first, count, NULL, NULL, &P));
            CHECK(P && test_rows_equal(A, first, P), "%s: rows %lld + %lld", specs[t],
                  (long long)first, (long long)count);
            adia_matrix_destroy(P);
        }
        adia_matrix_destroy(A);
    }
}

/* Per diagonal o of A: entries, and runs of absent positions (holes). */
static void diagonal_profile(const adia_matrix *A, int64_t o, int64_t *count, int64_t *holes)
{
    adia_csr_view v;
    *count = *holes = 0;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return;
    int64_t len = v.rows - llabs(o), prev = -1;   /* last position present */
    for (int32_t i = 0; i < v.rows; i++)
        for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++)
            if (v.colind[p] - i == o) {
                int64_t pos = o < 0 ? v.colind[p] : i;
                *holes += pos > prev + 1;
                prev = pos;
                ++*count;
            }
    *holes += prev < len - 1;
}

/* bandr: 2K+1 diagonals, the main full, each other keeping round(FILL
 * len) entries in 1..8 holes; dominant diagonal; seeds; ,sym. */
static void test_bandr(void)
{
    const double fills[] = {0.3, 0.6, 0.9, 1.0};
    for (int t = 0; t < 4; t++) {
        char spec[64];
        snprintf(spec, sizeof spec, "bandr:30000,12,%g", fills[t]);
        adia_matrix *A = test_generate(spec);
        if (!A) continue;
        int64_t kept = 0, total = 0, bad = 0, nholes = 0;
        for (int64_t o = -12; o <= 12; o++) {
            int64_t c, h, len = 30000 - llabs(o);
            diagonal_profile(A, o, &c, &h);
            if (o == 0) {
                CHECK(c == len && h == 0, "%s: main diagonal %lld of %lld", spec, (long long)c,
                      (long long)len);
                continue;
            }
            bad += llabs(c - llround(fills[t] * (double)len)) > 0 ||
                   (fills[t] < 1 ? h < 1 || h > 8 : h != 0);
            kept += c;
            total += len;
            nholes += h;
        }
        CHECK(bad == 0, "%s: %lld diagonals off their fill or with 0 or > 8 holes", spec,
              (long long)bad);
        CHECK(fabs((double)kept / (double)total - fills[t]) < 1e-4, "%s: fill %.5f", spec,
              (double)kept / (double)total);
        CHECK(fills[t] == 1 || nholes > 24, "%s: %lld holes in 24 diagonals: random counts", spec,
              (long long)nholes);
        CHECK(adia_matrix_nnz(A) == 30000 + kept, "%s: nothing beyond the band", spec);
        adia_csr_view v;
        int dominant = adia_matrix_csr(A, &v) == ADIA_OK;
        for (int32_t i = 0; dominant && i < v.rows; i++) {
            double diag = 0, off = 0;
            for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++)
                if (v.colind[p] == i) diag = v.values[p];
                else off += fabs(v.values[p]);
            dominant = fabs(diag - (off + 1)) <= 1e-12 * diag;
        }
        CHECK(dominant, "%s: diagonal = sum|offdiag| + 1", spec);
        adia_matrix_destroy(A);
    }
    adia_matrix *A = test_generate("bandr:5000,8,0.5"), *B = test_generate("bandr:5000,8,0.5"),
                *C = test_generate("bandr:5000,8,0.5,seed=2"),
                *S = test_generate("bandr:5000,8,0.5,sym");
    CHECK(A && B && adia_matrix_equal(A, B), "bandr twice: same matrix");
    CHECK(A && C && !adia_matrix_equal(A, C), "bandr seed 2 differs");
    CHECK(S && is_symmetric(S), "bandr ,sym: A = A^T");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    adia_matrix_destroy(C);
    adia_matrix_destroy(S);
}

/* Rows are computed from their index alone: 1 thread and 3 agree. */
static void test_threads_agree(void)
{
    const char *specs[] = {"bandr:40000,9,0.45,seed=4", "jump3d:30,4,77", "vardiff3d:25"};
    int saved = omp_get_max_threads();
    for (int t = 0; t < 3; t++) {
        omp_set_num_threads(1);
        adia_matrix *A = test_generate(specs[t]);
        omp_set_num_threads(3);
        adia_matrix *B = test_generate(specs[t]);
        CHECK(A && B && adia_matrix_equal(A, B), "%s: 1 thread == 3 threads", specs[t]);
        adia_matrix_destroy(A);
        adia_matrix_destroy(B);
    }
    omp_set_num_threads(saved);
}

/* biharm1d: the rows (1 -4 6 -4 1), 7 on the first and last diagonal,
 * 5N - 6 nonzeros, A = A^T; SPD (CG converges, slowly: condition ~N^4;
 * cheb's set-up, which checks a positive diagonal and Rayleigh quotient,
 * takes it). */
static void test_biharm1d(void)
{
    adia_matrix *A = test_generate("biharm1d:9");
    double *D = A ? dense_of(A) : NULL;
    if (D) {
        int bad = 0;
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 9; j++) {
                const int o = j - i;
                const double want = o == 0 ? (i == 0 || i == 8 ? 7 : 6)
                                  : o == 1 || o == -1 ? -4
                                  : o == 2 || o == -2 ? 1 : 0;
                bad += D[i * 9 + j] != want;
            }
        CHECK(!bad && adia_matrix_nnz(A) == 5 * 9 - 6, "biharm1d:9: %d entries wrong, %lld "
              "nonzeros (want 39)", bad, (long long)adia_matrix_nnz(A));
    }
    free(D);
    adia_matrix_destroy(A);
    static const int64_t sizes[] = {1, 2, 3, 200};
    for (int k = 0; k < 4; k++) {
        char spec[32];
        snprintf(spec, sizeof spec, "biharm1d:%lld", (long long)sizes[k]);
        A = test_generate(spec);
        if (!A) continue;
        const int32_t n = adia_matrix_rows(A);
        int64_t want = 0;
        for (int o = -2; o <= 2; o++) want += n > abs(o) ? n - abs(o) : 0;
        CHECK(is_symmetric(A) && adia_matrix_nnz(A) == want, "%s: symmetric, %lld nonzeros "
              "(want %lld)", spec, (long long)adia_matrix_nnz(A), (long long)want);
        cg_converges(A, spec, 100000, 1);
        if (n == 200) {
            adia_plan *P = NULL;
            adia_plan_hints h = {.device = 0, .expected_calls = 100};
            CHECK_OK(adia_plan_create(A, &h, &P));
            adia_precond_options po;
            adia_precond_options_default(&po);
            po.kind = "cheb";
            adia_precond *M = NULL;
            CHECK_OK(adia_precond_create(P, &po, &M));
            adia_precond_destroy(M);
            adia_plan_destroy(P);
        }
        adia_matrix_destroy(A);
    }
}

static void test_bad_specs(void)
{
    static const struct { const char *spec, *needle; } bad[] = {
        {"aniso3d:0", "must be positive"},
        {"aniso3d:-4", "\"-4\" is not a positive integer"},
        {"aniso3d:4,0", "EPS = 0 must be positive"},
        {"aniso3d:4,-0.5", "EPS = -0.5 must be positive"},
        {"aniso3d:4,x", "\"x\" is not a number"},
        {"aniso3d:4x4x4", "\"4x4x4\" is not a positive integer"},
        {"aniso3d:4,0.1,3", "too many numbers"},
        {"aniso3d:4,sym", "no ,sym variant"},
        {"jump3d:8,0", "must be positive"},
        {"jump3d:8,2,0", "CONTRAST = 0 must be positive"},
        {"jump3d:8,2,-10", "CONTRAST = -10 must be positive"},
        {"jump3d:8,2,1e4,5", "too many numbers"},
        {"vardiff2d:0", "must be positive"},
        {"vardiff2d:5,5", "too many numbers"},
        {"biharm1d:0", "must be positive"},
        {"biharm1d:5,5", "too many numbers"},
        {"biharm1d:5,sym", "no ,sym variant"},
        {"vardiff3d:2000", "has more than 2147483647 points"},
        {"vardiff2d:50000", "has more than 2147483647 points"},
        {"bandr:1000,5", "bandr takes 3 numbers, got 2"},
        {"bandr:1000,5,0", "FILL = 0 must be in (0, 1]"},
        {"bandr:1000,5,-0.3", "FILL = -0.3 must be in (0, 1]"},
        {"bandr:1000,5,1.5", "FILL = 1.5 must be in (0, 1]"},
        {"bandr:1000,1000,0.5", "K = 1000 must be less than N = 1000"},
        {"bandr:1000,-2,0.5", "\"-2\" is not a positive integer"},
        {"bandr:2000000000,1000000000,0.5", "more than the 2^36"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        adia_matrix *A = (adia_matrix *)&bad;   /* must be reset to NULL */
        CHECK_ERR(adia_matrix_generate(bad[i].spec, &A), ADIA_ERR_INVALID_ARG, bad[i].needle);
        CHECK(A == NULL, "%s: no matrix", bad[i].spec);
        CHECK(test_contains(adia_last_error(), bad[i].spec), "message names \"%s\": %s",
              bad[i].spec, adia_last_error());
    }
    const char *help = adia_generator_help();
    const char *kinds[] = {"aniso3d:N[,EPS]", "jump3d:N[,BLOCK[,C]]", "vardiff2d:N",
                           "vardiff3d:N", "bandr:N,K,FILL", "default 1e-3", "BLOCK = N/4",
                           "biharm1d:N"};
    for (int k = 0; k < 8; k++) CHECK(strstr(help, kinds[k]), "help mentions %s", kinds[k]);
    /* the budget is checked before any row is built */
    adia_matrix *A = NULL;
    CHECK_OK(adia_set_memory_budget(100000000));
    CHECK_ERR(adia_matrix_generate("jump3d:400", &A), ADIA_ERR_NO_MEMORY,
              "generating jump3d:400 (64000000 x 64000000, 447040000 nonzeros) needs");
    CHECK_ERR(adia_matrix_generate("bandr:20000000,30,0.5", &A), ADIA_ERR_NO_MEMORY, "needs");
    CHECK_OK(adia_set_memory_budget(0));
    CHECK(A == NULL, "no matrix after the refusal");
}

int main(void)
{
    TEST_BEGIN();
    test_exact_3x3x3();
    test_laplacian_special_case();
    test_spd();
    test_vardiff_values();
    test_row_blocks();
    test_bandr();
    test_biharm1d();
    test_threads_agree();
    test_bad_specs();
    return TEST_END();
}
