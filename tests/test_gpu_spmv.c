#define _POSIX_C_SOURCE 200809L
/* test_gpu_spmv.c -- every GPU kernel against the CPU reference
 * (adia_matrix_spmv in double): each csr variant (scalar, vector with
 * 2..32 threads per row, adaptive) and each diagonal format with the
 * generic AND the generated kernel, the row formats coo, ell, sell, hyb and
 * bcsr (when registered), in double and float, on matrices built
 * here (odd sizes, one row, empty rows, fewer rows than a block, wide and
 * tall, diagonals leaving the matrix, long zero sections, scatter points,
 * no nonzeros, one long row).  y is poisoned with NaN before every run;
 * beta = 0 must overwrite it; NaN in x must reach exactly the rows with a
 * nonzero in that column; two runs give the same bits.  Skips (77)
 * without a device.
 * The fused dot products (the GPU solvers' product, cuda/dot_gpu.cu) on
 * every square case: the same y as the plain product, the five sums
 * against the host's.
 * ADIA_TEST_QUICK=1 runs two small matrices only (for racecheck). */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

#include "cuda/gpu_common.h"

/* ---------------------------------------------------------- test matrices */

/* Nonzero random value (zeros would hide wrong indexing). */
static double nz(uint64_t *s)
{
    double v = test_rand(s);
    return v >= 0 ? v + 0.25 : v - 0.25;
}

/* Diagonals with the given offsets, each entry kept with probability
 * fill, rows in [skip0, skip1) left empty. */
static void add_diagonals(test_coo *m, uint64_t *s, const int32_t *off, int k, double fill,
                          int32_t skip0, int32_t skip1)
{
    for (int i = 0; i < k; i++)
        for (int32_t r = 0; r < m->rows; r++) {
            int64_t c = (int64_t)r + off[i];
            if (c < 0 || c >= m->cols || (r >= skip0 && r < skip1)) continue;
            if (fill >= 1 || (test_rand(s) + 1) / 2 < fill) test_coo_add(m, r, (int32_t)c, nz(s));
        }
}


enum { N_CASES = 10 };
static const char *case_name[N_CASES] = {
    "one row", "37x37 five diagonals", "1000 far diagonals, empty rows", "wide 300x1000",
    "tall 1000x300", "no nonzeros", "long zero sections + scatter", "5000 random diagonals",
    "one long row", "2x2 dense"};

static adia_matrix *make_case(int which)
{
    uint64_t s = 1000 + (uint64_t)which;
    test_coo m = {0};
    switch (which) {
    case 0: { m.rows = m.cols = 1; int32_t o[] = {0}; add_diagonals(&m, &s, o, 1, 1, 0, 0); break; }
    case 1: { m.rows = m.cols = 37; int32_t o[] = {-3, -1, 0, 1, 5}; add_diagonals(&m, &s, o, 5, 1, 0, 0); break; }
    case 2: { m.rows = m.cols = 1000; int32_t o[] = {-600, -1, 0, 1, 2, 600, 999};
              add_diagonals(&m, &s, o, 7, 0.9, 200, 230); break; }
    case 3: { m.rows = 300; m.cols = 1000; int32_t o[] = {-5, 0, 3, 400, 900};
              add_diagonals(&m, &s, o, 5, 1, 0, 0); break; }
    case 4: { m.rows = 1000; m.cols = 300; int32_t o[] = {-900, -400, 0, 2};
              add_diagonals(&m, &s, o, 4, 1, 0, 0); break; }
    case 5: m.rows = m.cols = 50; break;
    case 6: { m.rows = m.cols = 2000; int32_t o[] = {-1, 0, 1}; add_diagonals(&m, &s, o, 3, 1, 0, 0);
              for (int32_t r = 100; r < 300; r++) { test_coo_add(&m, r, r + 700, nz(&s)); test_coo_add(&m, r + 1300, r, nz(&s)); }
              for (int i = 0; i < 20; i++) {
                  int32_t r = (int32_t)((test_rand(&s) + 1) / 2 * 1999), c = (int32_t)((test_rand(&s) + 1) / 2 * 1999);
                  if (abs(r - c) > 1 && abs(c - r - 700) > 0 && abs(r - c - 1300) > 0) test_coo_add(&m, r, c, nz(&s));
              }
              break; }
    case 7: { m.rows = m.cols = 5000; int32_t o[25];
              for (int i = 0; i < 25; i++) o[i] = (int32_t)(test_rand(&s) * 4000);
              o[0] = 0;
              add_diagonals(&m, &s, o, 25, 0.6, 0, 0); break; }
    case 8: { m.rows = 700; m.cols = 4000; int32_t o[] = {0, 2}; add_diagonals(&m, &s, o, 2, 1, 0, 0);
              for (int32_t c = 0; c < 4000; c++) if (c != 350 && c != 352) test_coo_add(&m, 350, c, nz(&s));
              break; }
    case 9: { m.rows = m.cols = 2; int32_t o[] = {-1, 0, 1}; add_diagonals(&m, &s, o, 3, 1, 0, 0); break; }
    }
    return test_coo_matrix(&m);
}

/* ------------------------------------------------------------ running */

static const char *label;  /* what is being tested, for messages */

/* Compare y with the reference: same NaN pattern, relative error <= tol. */
static void compare(const double *y, const double *ref, int32_t m, double tol, const char *what)
{
    double num = 0, den = 0;
    int32_t nan_bad = -1;
    for (int32_t i = 0; i < m; i++) {
        /* NaN and Inf must match exactly and stay out of the error norm */
        bool same = (isnan(y[i]) && isnan(ref[i])) || y[i] == ref[i];
        if ((!isfinite(y[i]) || !isfinite(ref[i])) && !same) { if (nan_bad < 0) nan_bad = i; continue; }
        if (!isfinite(ref[i])) continue;
        num = fmax(num, fabs(y[i] - ref[i]));
        den = fmax(den, fabs(ref[i]));
    }
    double err = den > 0 ? num / den : num;
    CHECK(nan_bad < 0, "%s, %s: NaN/Inf pattern differs at row %d (gpu %g, ref %g)", label, what,
          nan_bad, nan_bad >= 0 ? y[nan_bad] : 0.0, nan_bad >= 0 ? ref[nan_bad] : 0.0);
    CHECK(err <= tol, "%s, %s: relative error %.3e > %.1e", label, what, err, tol);
}

/* alpha/beta pairs; y poisoned with NaN when beta == 0. */
static void check_values(adia_format *F, const adia_matrix *A, uint64_t seed)
{
    static const double ab[][2] = {{1, 0}, {-0.75, 1.5}, {2.5, 0}, {0, 1}};
    int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    double tol = adia_format_value_type(F) == ADIA_FLOAT ? 1e-4 : 1e-12;
    double *x = malloc((size_t)n * 8 + 8), *y = malloc((size_t)m * 8 + 8), *ref = malloc((size_t)m * 8 + 8);
    for (int t = 0; t < 4; t++) {
        test_rand_vector(&seed, x, n);
        test_rand_vector(&seed, ref, m);
        if (adia_format_value_type(F) == ADIA_FLOAT) {   /* both sides see the same inputs */
            for (int32_t i = 0; i < n; i++) x[i] = (float)x[i];
            for (int32_t i = 0; i < m; i++) ref[i] = (float)ref[i];
        }
        if (ab[t][1] == 0) for (int32_t i = 0; i < m; i++) ref[i] = NAN;
        memcpy(y, ref, (size_t)m * 8);
        char what[64];
        snprintf(what, sizeof what, "alpha %g beta %g", ab[t][0], ab[t][1]);
        adia_status s = test_gpu_format_spmv(F, ab[t][0], x, ab[t][1], y);
        CHECK(s == ADIA_OK, "%s, %s: %s", label, what, adia_last_error());
        CHECK_OK(adia_matrix_spmv(A, ab[t][0], x, ab[t][1], ref));
        if (s == ADIA_OK) compare(y, ref, m, tol, what);
    }
    /* Every kernel is deterministic (no atomics): two runs, same bits --
     * except cuSPARSE's ALG1, offered only under the nondeterministic
     * hint for that reason (issue 32) */
    if (adia_format_kernel(F) != ADIA_KERNEL_CSR_CUSPARSE_ALG1) {
        double *y2 = malloc((size_t)m * 8 + 8);
        test_rand_vector(&seed, x, n);
        for (int32_t i = 0; i < m; i++) y[i] = y2[i] = NAN;
        CHECK_OK(test_gpu_format_spmv(F, 1.0, x, 0.0, y));
        CHECK_OK(test_gpu_format_spmv(F, 1.0, x, 0.0, y2));
        CHECK(!memcmp(y, y2, (size_t)m * 8), "%s: two runs differ (a race?)", label);
        free(y2);
    }
    /* NaN in x at one column (and Inf at another): reaches the same rows. */
    if (n > 0) {
        test_rand_vector(&seed, x, n);
        x[n / 2] = NAN;
        x[n - 1] = INFINITY;
        for (int32_t i = 0; i < m; i++) y[i] = ref[i] = NAN;
        CHECK_OK(test_gpu_format_spmv(F, 1.0, x, 0.0, y));
        CHECK_OK(adia_matrix_spmv(A, 1.0, x, 0.0, ref));
        compare(y, ref, m, adia_format_value_type(F) == ADIA_FLOAT ? 1e-4 : 1e-12, "NaN/Inf in x");
    }
    free(x);
    free(y);
    free(ref);
}

/* The product with fused sums (square F): y equal to the plain product's
 * bit for bit, each sum within round-off of the host's, with and without
 * a companion z, and twice the same bits. */
static void check_fused_dots(adia_format *F, uint64_t seed)
{
    int32_t n = adia_format_rows(F);
    int fl = adia_format_value_type(F) == ADIA_FLOAT;
    double *x = malloc((size_t)n * 8 + 8), *z = malloc((size_t)n * 8 + 8),
           *y = malloc((size_t)n * 8 + 8), *yref = malloc((size_t)n * 8 + 8);
    test_rand_vector(&seed, x, n);
    test_rand_vector(&seed, z, n);
    for (int32_t i = 0; i < n; i++) {
        if (fl) { x[i] = (float)x[i]; z[i] = (float)z[i]; }
        yref[i] = NAN;
    }
    CHECK_OK(test_gpu_format_spmv(F, 1.5, x, 0.0, yref));
    void *dx = test_gpu_upload(x, n, fl), *dz = test_gpu_upload(z, n, fl), *dy = test_gpu_upload(yref, n, fl),
         *mem = NULL;
    adia_dot_work dw;
    CHECK_OK(adia__gpu_dot_work_alloc(n, &dw, &mem, NULL));
    double sums[2][ADIA_NDOT];
    for (int t = 0; t < 3 && dx && dz && dy; t++) {
        dw.z = t == 1 ? dz : NULL;
        adia_status s = adia__format_spmv_dot_gpu(F, 1.5, dx, 0.0, dy, &dw, NULL);
        CHECK(s == ADIA_OK, "%s, fused dots: %s", label, adia_last_error());
        double got[ADIA_NDOT];
        CHECK(cudaMemcpy(got, dw.out, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess, "sums");
        CHECK(!test_gpu_download(y, dy, n, fl), "download");
        CHECK(!memcmp(y, yref, (size_t)n * 8), "%s, fused dots: y differs from the product's", label);
        const double *zz = t == 1 ? z : x;
        double want[ADIA_NDOT] = {0}, mag[ADIA_NDOT] = {0};
        for (int32_t i = 0; i < n; i++) {
            double terms[ADIA_NDOT] = {x[i] * yref[i], zz[i] * x[i], zz[i] * zz[i],
                                       yref[i] * yref[i], zz[i] * yref[i]};
            for (int j = 0; j < ADIA_NDOT; j++) {
                want[j] += terms[j];
                mag[j] += fabs(terms[j]);
            }
        }
        for (int j = 0; j < ADIA_NDOT; j++)
            CHECK(fabs(got[j] - want[j]) <= 1e-12 * mag[j] + 1e-300, "%s, fused sum %d (z %s): "
                  "%.17g, host %.17g", label, j, t == 1 ? "given" : "= x", got[j], want[j]);
        if (t != 1) memcpy(sums[t / 2], got, sizeof got);
    }
    CHECK(!memcmp(sums[0], sums[1], sizeof sums[0]), "%s: fused sums differ between runs", label);
    cudaFree(dx);
    cudaFree(dz);
    cudaFree(dy);
    cudaFree(mem);
    free(x);
    free(z);
    free(y);
    free(yref);
}

/* Parameters interleave and stage of every build (check_interleaved and
 * check_staged force them). */
static int interleave, stage;

/* One format, one precision, one kernel variant (tpr > 0: csr vector width;
 * AUTO: the upload's only kernel). */
static void check_variant(const adia_matrix *A, const char *fmt, adia_value_type vt,
                          adia_gpu_kernel k, int tpr, int threads, const char *cname)
{
    char buf[256];
    snprintf(buf, sizeof buf, "[%s] %s/%s/%s%s%.0d threads %d", cname, fmt, adia_value_type_name(vt),
             adia_gpu_kernel_name(k), tpr ? " tpr " : "", tpr, threads);
    label = buf;
    adia_format_params p;
    adia_format_params_default(&p);
    p.tpr = tpr;
    p.interleave = interleave;
    p.stage = stage;
    adia_format *F = NULL;
    adia_status s = adia_format_build(A, fmt, &p, vt, &F);
    CHECK(s == ADIA_OK, "%s: build: %s", label, adia_last_error());
    if (s == ADIA_OK) {
        s = adia_format_set_kernel(F, k);
        CHECK(s == ADIA_OK, "%s: set_kernel: %s\n%s", label, adia_last_error(), adia_codegen_log());
        if (s == ADIA_OK && k != ADIA_KERNEL_AUTO)
            CHECK(adia_format_kernel(F) == k, "%s: kernel in use %s", label,
                  adia_gpu_kernel_name(adia_format_kernel(F)));
        if (s == ADIA_OK && threads) CHECK_OK(adia_format_set_threads(F, threads));
        if (s == ADIA_OK) check_values(F, A, 99);
        if (s == ADIA_OK && adia_format_rows(F) == adia_format_cols(F)) check_fused_dots(F, 7);
    }
    adia_format_destroy(F);
}

/* Every format with a GPU side (the registry's), each kernel variant its
 * table lists (csr's vector kernel at every width; the diagonal kernels
 * also at 64 threads); diag_only: the diagonal core's formats alone. */
static void check_formats(const adia_matrix *A, adia_value_type vt, const char *cname,
                          int diag_only)
{
    for (int f = 0; f < adia_format_count(); f++) {
        const char *fmt = adia_format_name_at(f);
        if (!adia_format_has_gpu(fmt) || (diag_only && !adia_format_is_diagonal(fmt))) continue;
        unsigned kernels = adia_format_gpu_kernels(fmt);
        if (!kernels) check_variant(A, fmt, vt, ADIA_KERNEL_AUTO, 0, 0, cname);
        for (int k = 1; k < 32; k++) {
            if (!(kernels & (1u << k))) continue;
            check_variant(A, fmt, vt, (adia_gpu_kernel)k, 0, 0, cname);
            for (int tpr = 2; k == ADIA_KERNEL_CSR_VECTOR && tpr <= 32; tpr *= 2)
                check_variant(A, fmt, vt, (adia_gpu_kernel)k, tpr, 0, cname);
            if (k == ADIA_KERNEL_CSR_VECTOR) check_variant(A, fmt, vt, (adia_gpu_kernel)k, 0, 96, cname);
            if (k == ADIA_KERNEL_GENERIC) check_variant(A, fmt, vt, (adia_gpu_kernel)k, 0, 64, cname);
        }
    }
}

static void check_matrix(const adia_matrix *A, const char *cname)
{
    for (int v = 0; v < 2; v++) check_formats(A, v ? ADIA_FLOAT : ADIA_DOUBLE, cname, 0);
}

/* The diagonal kernels with the interleaved chunk order (far diagonals,
 * diag_gpu.cu): ADIA_DIAG_INTERLEAVE=force takes L2 as 4 KB, so these small
 * matrices with far diagonals get it; every row must still be computed
 * exactly once. */
static void check_interleaved(void)
{
    interleave = 2;   /* interleave=force: L2 taken as 4 KB */
    static const int cases[] = {2, 3, 4, 6, 7};
    for (int i = 0; i < 5; i++) {
        adia_matrix *A = make_case(cases[i]);
        char name[96];
        snprintf(name, sizeof name, "interleaved %s", case_name[cases[i]]);
        for (int v = 0; v < 2 && A; v++) check_formats(A, v ? ADIA_FLOAT : ADIA_DOUBLE, name, 1);
        adia_matrix_destroy(A);
    }
    adia_matrix *T = test_generate("type2:20011");   /* coupled fields, +-n/2 */
    CHECK(T != NULL, "type2:20011 generated");
    for (int v = 0; v < 2 && T; v++)
        check_formats(T, v ? ADIA_FLOAT : ADIA_DOUBLE, "interleaved type2:20011", 1);
    adia_matrix_destroy(T);
    interleave = 0;
}

/* The staged kernel (diag_stage.cuh), forced where the pieces start at
 * multiples of its tile (dia, hdi; on a grid of a third of the tiles, so
 * each block walks several and the buffers wrap): every case -- odd
 * sizes, empty rows, one row, rectangular, diagonals leaving the matrix,
 * a last tile not whole -- and tall bands with holes whose tiles hold
 * 1-31 diagonals, stages of every length.  Results equal the reference as
 * the other kernels do (check_values), and the warp kernels' bit for bit
 * (check_staged_bits: same arithmetic, same order). */
/* The staged kernel against the warp kernels (stage=off) on A: the same
 * bits, three runs of each, for dia and hdi in both precisions -- the
 * check of its copies and barriers that racecheck cannot make (it does not
 * see an mbarrier's complete_tx as ordering, diag_stage.cuh). */
static void check_staged_bits(const adia_matrix *A, const char *cname)
{
    static const char *const fmts[] = {"dia", "hdi"};
    int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    double *x = malloc((size_t)n * 8 + 8), *y0 = malloc((size_t)m * 8 + 8),
           *want = malloc((size_t)m * 8 + 8), *got = malloc((size_t)m * 8 + 8);
    uint64_t seed = 5;
    test_rand_vector(&seed, x, n);
    test_rand_vector(&seed, y0, m);
    if (n > 2) { x[n / 3] = NAN; x[n - 2] = INFINITY; }
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 2; v++) {
            adia_format *F[2] = {NULL, NULL};   /* warp kernels, staged */
            for (int st = 0; st < 2; st++) {
                adia_format_params p;
                adia_format_params_default(&p);
                p.stage = st ? 2 : 1;
                CHECK_OK(adia_format_build(A, fmts[f], &p, v ? ADIA_FLOAT : ADIA_DOUBLE, &F[st]));
                if (F[st]) CHECK_OK(adia_format_set_kernel(F[st], ADIA_KERNEL_GENERIC));
            }
            if (F[0] && F[1]) {
                memcpy(want, y0, (size_t)m * 8);
                CHECK_OK(test_gpu_format_spmv(F[0], 1.25, x, 0.5, want));
                for (int run = 0; run < 3; run++) {
                    memcpy(got, y0, (size_t)m * 8);
                    CHECK_OK(test_gpu_format_spmv(F[1], 1.25, x, 0.5, got));
                    CHECK(!memcmp(got, want, (size_t)m * 8), "[%s] %s/%s: staged run %d differs "
                          "from the warp kernel's bits", cname, fmts[f], v ? "float" : "double", run);
                }
            }
            adia_format_destroy(F[0]);
            adia_format_destroy(F[1]);
        }
    free(x);
    free(y0);
    free(want);
    free(got);
}

static void check_staged(void)
{
    stage = 2;   /* stage=force */
    for (int c = 0; c < N_CASES; c++) {
        adia_matrix *A = make_case(c);
        char name[96];
        snprintf(name, sizeof name, "staged %s", case_name[c]);
        for (int v = 0; v < 2 && A; v++) check_formats(A, v ? ADIA_FLOAT : ADIA_DOUBLE, name, 1);
        if (A) check_staged_bits(A, name);
        adia_matrix_destroy(A);
    }
    static const char *const specs[] = {"bandr:20000,15,0.5", "bandr:3001,4,0.3", "lap3d27:23"};
    for (int i = 0; i < 3; i++) {
        adia_matrix *B = test_generate(specs[i]);
        CHECK(B != NULL, "%s generated", specs[i]);
        char name[96];
        snprintf(name, sizeof name, "staged %s", specs[i]);
        for (int v = 0; v < 2 && B; v++) check_formats(B, v ? ADIA_FLOAT : ADIA_DOUBLE, name, 1);
        if (B) check_staged_bits(B, name);
        adia_matrix_destroy(B);
    }
    stage = 0;
}

/* API errors: a kernel the format lacks, bad thread counts. */
static void check_errors(void)
{
    adia_matrix *A = make_case(1);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "csr", NULL, ADIA_DOUBLE, &F));
    CHECK_ERR(adia_format_set_kernel(F, ADIA_KERNEL_GENERATED), ADIA_ERR_UNSUPPORTED, "no GPU kernel 'generated'");
    CHECK_ERR(adia_format_set_threads(F, 100), ADIA_ERR_INVALID_ARG, "100 threads");
    CHECK_OK(adia_format_set_kernel(F, ADIA_KERNEL_AUTO));
    CHECK(adia_format_kernel(F) != ADIA_KERNEL_AUTO, "AUTO resolved after upload");
    adia_gpu_kernel k;
    CHECK_ERR(adia_gpu_kernel_parse("fast", &k), ADIA_ERR_INVALID_ARG, "'fast'");
    CHECK_OK(adia_gpu_kernel_parse("adaptive", &k));
    CHECK(k == ADIA_KERNEL_CSR_ADAPTIVE, "parse adaptive");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    check_errors();
    int quick = getenv("ADIA_TEST_QUICK") && atoi(getenv("ADIA_TEST_QUICK"));
    static const int quick_cases[] = {1, 6};
    int n = quick ? 2 : N_CASES;
    for (int i = 0; i < n; i++) {
        int c = quick ? quick_cases[i] : i;
        adia_matrix *A = make_case(c);
        CHECK(A != NULL, "case %s built", case_name[c]);
        if (A) check_matrix(A, case_name[c]);
        adia_matrix_destroy(A);
    }
    check_interleaved();
    check_staged();
    /* Too many offset groups for literal offsets: the generator's shape
     * form (a case per group size), warp and per-row layouts. */
    adia_matrix *S = test_generate("type3:30011,41,0.34");
    CHECK(S != NULL, "type3:30011,41,0.34 generated");
    for (int v = 0; v < 2 && S && !quick; v++)
        check_formats(S, v ? ADIA_FLOAT : ADIA_DOUBLE, "type3:30011 (shape form)", 1);
    adia_matrix_destroy(S);
    /* Enough blocks for the fused sums' second level (groups of 64 blocks). */
    adia_matrix *L = test_generate("lap2d5:400");
    CHECK(L != NULL, "lap2d5:400 generated");
    for (int v = 0; v < 2 && L && !quick; v++)
        check_formats(L, v ? ADIA_FLOAT : ADIA_DOUBLE, "lap2d5:400", 1);
    adia_matrix_destroy(L);
    return TEST_END();
}
#endif
