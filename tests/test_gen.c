/* test_gen.c -- generators: exact structure (nnz formulas, offsets, values,
 * symmetry), determinism by seed, type3 fill, malformed specs. */
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <string.h>

/* Per-offset nonzero counts of A, indexed by o + rows - 1 (caller frees). */
static int64_t *diag_counts(const adia_matrix *A)
{
    adia_csr_view v;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return NULL;
    int64_t *cnt = calloc((size_t)v.rows + v.cols, sizeof *cnt);
    for (int32_t i = 0; cnt && i < v.rows; i++)
        for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++) cnt[v.colind[p] - i + v.rows - 1]++;
    return cnt;
}

/* Does A have exactly the offsets off[0..n) (in any order), each full
 * when `full`? */
static int has_offsets(const adia_matrix *A, const int64_t *off, int n, int full)
{
    int32_t m = adia_matrix_rows(A), c = adia_matrix_cols(A);
    int64_t *cnt = diag_counts(A);
    if (!cnt) return 0;
    int ok = 1, found = 0;
    for (int64_t d = 0; d < (int64_t)m + c - 1; d++) {
        if (!cnt[d]) continue;
        int64_t o = d - (m - 1), len = (o < 0 ? (m + o < c ? m + o : c) : (c - o < m ? c - o : m));
        int listed = 0;
        for (int k = 0; k < n; k++) listed |= off[k] == o;
        ok &= listed && (!full || cnt[d] == len);
        found++;
    }
    free(cnt);
    return ok && found == n;
}

static int is_symmetric(const adia_matrix *A)
{
    adia_matrix *T = NULL;
    if (adia_matrix_transpose(A, &T) != ADIA_OK) return 0;
    int eq = adia_matrix_equal(A, T);
    adia_matrix_destroy(T);
    return eq;
}

/* Every row: diagonal entry == want_diag (or, want_diag < 0: == sum of
 * |off-diagonal| + 1), off-diagonals == -1 when want_diag >= 0. */
static int check_values(const adia_matrix *A, double want_diag)
{
    adia_csr_view v;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return 0;
    for (int32_t i = 0; i < v.rows; i++) {
        double diag = NAN, sum = 0;
        for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++) {
            if (v.colind[p] == i) diag = v.values[p];
            else if (want_diag >= 0 && v.values[p] != -1.0) return 0;
            else sum += fabs(v.values[p]);
        }
        double want = want_diag >= 0 ? want_diag : sum + 1;
        if (!(fabs(diag - want) <= 1e-12 * want)) return 0;
    }
    return 1;
}

static adia_matrix *gen(const char *spec)
{
    adia_matrix *A = test_generate(spec);
    if (A) CHECK(!strcmp(adia_matrix_name(A), spec), "name %s", adia_matrix_name(A));
    return A;
}

static void test_laplacians(void)
{
    int64_t sizes[][3] = {{1, 1, 1}, {2, 2, 2}, {7, 7, 7}, {5, 3, 4}, {33, 2, 9}};
    for (int t = 0; t < 5; t++) {
        int64_t x = sizes[t][0], y = sizes[t][1], z = sizes[t][2];
        char spec[64];
        adia_matrix *A;
        snprintf(spec, sizeof spec, "lap2d5:%lldx%lld", (long long)x, (long long)y);
        if ((A = gen(spec))) {
            CHECK(adia_matrix_nnz(A) == 5 * x * y - 2 * x - 2 * y, "%s nnz %lld", spec,
                  (long long)adia_matrix_nnz(A));
            if (x > 1 && y > 1) {
                int64_t off[] = {0, 1, -1, x, -x};
                CHECK(has_offsets(A, off, 5, 0), "%s offsets", spec);
            }
            CHECK(is_symmetric(A) && check_values(A, 4), "%s symmetric, 4/-1", spec);
            adia_matrix_destroy(A);
        }
        snprintf(spec, sizeof spec, "lap2d9:%lldx%lld", (long long)x, (long long)y);
        if ((A = gen(spec))) {
            CHECK(adia_matrix_nnz(A) == (3 * x - 2) * (3 * y - 2), "%s nnz", spec);
            CHECK(is_symmetric(A) && check_values(A, 8), "%s symmetric, 8/-1", spec);
            adia_matrix_destroy(A);
        }
        snprintf(spec, sizeof spec, "lap3d7:%lldx%lldx%lld", (long long)x, (long long)y, (long long)z);
        if ((A = gen(spec))) {
            CHECK(adia_matrix_rows(A) == x * y * z, "%s rows", spec);
            CHECK(adia_matrix_nnz(A) == 7 * x * y * z - 2 * (y * z + x * z + x * y), "%s nnz", spec);
            if (x > 1 && y > 1 && z > 1) {
                int64_t off[] = {0, 1, -1, x, -x, x * y, -x * y};
                CHECK(has_offsets(A, off, 7, 0), "%s offsets", spec);
            }
            CHECK(is_symmetric(A) && check_values(A, 6), "%s symmetric, 6/-1", spec);
            adia_matrix_destroy(A);
        }
        snprintf(spec, sizeof spec, "lap3d27:%lldx%lldx%lld", (long long)x, (long long)y, (long long)z);
        if ((A = gen(spec))) {
            CHECK(adia_matrix_nnz(A) == (3 * x - 2) * (3 * y - 2) * (3 * z - 2), "%s nnz", spec);
            if (x > 2 && y > 2 && z > 2) {
                int64_t off[27];
                int n = 0;
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) off[n++] = dx + x * dy + x * y * dz;
                CHECK(has_offsets(A, off, 27, 0), "%s offsets", spec);
            }
            CHECK(is_symmetric(A) && check_values(A, 26), "%s symmetric, 26/-1", spec);
            adia_matrix_destroy(A);
        }
    }
    /* the single-size forms are the square / cube */
    adia_matrix *A = gen("lap2d5:100"), *B = gen("lap3d7:12");
    if (A) CHECK(adia_matrix_nnz(A) == 5 * 100 * 100 - 4 * 100, "lap2d5:100 nnz = 5n^2-4n");
    if (B) CHECK(adia_matrix_nnz(B) == 7 * 12 * 12 * 12 - 6 * 12 * 12, "lap3d7:12 nnz = 7n^3-6n^2");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
}

static void test_band_type2_randdiag(void)
{
    adia_matrix *A = gen("band:1000,7");
    if (A) {
        CHECK(adia_matrix_nnz(A) == 1000 * 15 - 7 * 8, "band nnz %lld", (long long)adia_matrix_nnz(A));
        int64_t off[15];
        for (int k = 0; k < 15; k++) off[k] = k - 7;
        CHECK(has_offsets(A, off, 15, 1), "band offsets -7..7, full");
        CHECK(check_values(A, -1), "band diagonal = sum|offdiag| + 1");
        adia_matrix_destroy(A);
    }
    /* type2: 5000 -> s = 50, 5000 rows; 4999 -> s = 49 */
    int64_t n[] = {5000, 4999, 2};
    for (int t = 0; t < 3; t++) {
        char spec[32];
        snprintf(spec, sizeof spec, "type2:%lld", (long long)n[t]);
        int64_t s = (int64_t)floor(sqrt(n[t] / 2.0));
        if (!(A = gen(spec))) continue;
        CHECK(adia_matrix_rows(A) == 2 * s * s, "%s rows %d", spec, adia_matrix_rows(A));
        CHECK(adia_matrix_nnz(A) == 12 * s * s - 6 * s, "%s nnz %lld", spec, (long long)adia_matrix_nnz(A));
        if (s > 1) {
            int64_t off[] = {0, 1, -1, s, -s, s * s, -s * s};
            CHECK(has_offsets(A, off, 7, 0), "%s offsets", spec);
        }
        CHECK(is_symmetric(A) && check_values(A, 5), "%s symmetric, 5/-1", spec);
        adia_matrix_destroy(A);
    }
    /* randdiag: K distinct offsets, |o| <= SPREAD, main included, full */
    if ((A = gen("randdiag:3000,12,40"))) {
        int64_t *cnt = diag_counts(A), k = 0, nnz = 0, far = 0;
        for (int64_t d = 0; cnt && d < 5999; d++)
            if (cnt[d]) {
                int64_t o = d - 2999;
                k++;
                nnz += 3000 - llabs(o);
                far += llabs(o) > 40;
            }
        CHECK(cnt && cnt[2999] == 3000, "main diagonal full");
        CHECK(k == 12 && far == 0, "12 offsets within 40 (%lld, %lld far)", (long long)k, (long long)far);
        CHECK(nnz == adia_matrix_nnz(A), "all diagonals full");
        CHECK(check_values(A, -1), "randdiag dominant diagonal");
        free(cnt);
        adia_matrix_destroy(A);
    }
    /* K = all possible diagonals */
    if ((A = gen("randdiag:50,9,4"))) {
        int64_t off[] = {-4, -3, -2, -1, 0, 1, 2, 3, 4};
        CHECK(has_offsets(A, off, 9, 1), "randdiag with every offset");
        adia_matrix_destroy(A);
    }
}

/* DIA fill of A computed here: nnz / sum of occupied diagonal lengths. */
static double fill_of(const adia_matrix *A, int64_t *ndiag, int64_t *singles)
{
    int32_t m = adia_matrix_rows(A);
    int64_t *cnt = diag_counts(A), len = 0;
    *ndiag = *singles = 0;
    for (int64_t d = 0; cnt && d < 2 * (int64_t)m - 1; d++)
        if (cnt[d]) {
            len += m - llabs(d - (m - 1));
            ++*ndiag;
            *singles += cnt[d] == 1;
        }
    free(cnt);
    return (double)adia_matrix_nnz(A) / (double)len;
}

static void test_type3(void)
{
    double fills[] = {0.2, 0.5, 0.8};
    for (int t = 0; t < 3; t++) {
        char spec[64];
        snprintf(spec, sizeof spec, "type3:200000,9,%g,seed=%d", fills[t], t + 5);
        adia_matrix *A = gen(spec);
        if (!A) continue;
        int64_t nd, singles;
        double f = fill_of(A, &nd, &singles);
        CHECK(fabs(f - fills[t]) < 0.03, "%s: fill %.4f", spec, f);
        CHECK(nd == 9 + 3 && singles == 3, "%s: %lld diagonals, %lld single", spec, (long long)nd,
              (long long)singles);
        int64_t *cnt = diag_counts(A);
        CHECK(cnt && cnt[199999] == 200000, "%s: main diagonal full", spec);
        free(cnt);
        CHECK(check_values(A, -1), "%s: dominant diagonal", spec);
        adia_matrix_destroy(A);
    }
}

/* Runs of nonzeros along diagonal o of A (positions min(i, j)). */
static int64_t diagonal_runs(const adia_matrix *A, int64_t o)
{
    adia_csr_view v;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return -1;
    int64_t runs = 0, prev = -2;
    for (int32_t i = 0; i < v.rows; i++)
        for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++)
            if (v.colind[p] - i == o) {
                int64_t pos = o < 0 ? v.colind[p] : i;
                runs += pos != prev + 1;
                prev = pos;
            }
    return runs;
}

/* type3 with long zero runs (ZRUN): every far or near diagonal comes in a
 * few long segments, so row blocks keep short, different offset lists. */
static void test_type3_segments(void)
{
    const char *spec = "type3:400000,9,0.34,50000";
    adia_matrix *A = gen(spec);
    if (!A) return;
    int64_t nd, singles;
    double f = fill_of(A, &nd, &singles);
    CHECK(fabs(f - 0.34) < 0.03 && nd == 12 && singles == 3, "%s: fill %.3f, %lld diagonals",
          spec, f, (long long)nd);
    int64_t *cnt = diag_counts(A);
    int32_t m = adia_matrix_rows(A);
    for (int64_t d = 0; cnt && d < 2 * (int64_t)m - 1; d++) {
        int64_t o = d - (m - 1);
        if (!cnt[d] || o == 0 || cnt[d] == 1) continue;
        /* period = ZRUN + nonzero run >= 50000: at most len / 50000 + 2 runs */
        int64_t runs = diagonal_runs(A, o), len = m - llabs(o);
        CHECK(runs >= 1 && runs <= len / 50000 + 2, "%s: offset %lld in %lld runs", spec,
              (long long)o, (long long)runs);
    }
    free(cnt);
    adia_features fa;
    CHECK_OK(adia_matrix_analyze(A, NULL, &fa));
    CHECK(fa.type == ADIA_TYPE_III, "%s: type III", spec);
    adia_matrix_destroy(A);
}

/* bandh: the band's off-diagonals half present in runs of HOLE rows, SCAT
 * single entries at N/4 <= |o| <= N/2. */
static void test_bandh(void)
{
    const char *spec = "bandh:20000,50,100,5";
    adia_matrix *A = gen(spec);
    if (!A) return;
    int64_t *cnt = diag_counts(A);
    int32_t m = adia_matrix_rows(A);
    int64_t far = 0, band_nnz = 0;
    for (int64_t d = 0; cnt && d < 2 * (int64_t)m - 1; d++) {
        int64_t o = d - (m - 1);
        if (!cnt[d]) continue;
        if (llabs(o) > 50) {
            CHECK(cnt[d] == 1 && llabs(o) >= m / 4 && llabs(o) <= m / 2, "%s: far offset %lld "
                  "holds %lld", spec, (long long)o, (long long)cnt[d]);
            far++;
            continue;
        }
        band_nnz += cnt[d];
        if (o == 0) continue;
        int64_t runs = diagonal_runs(A, o), len = m - llabs(o);
        CHECK(llabs(cnt[d] - len / 2) <= 100 && runs >= len / 200 - 1 && runs <= len / 200 + 2,
              "%s: offset %lld: %lld of %lld present in %lld runs", spec, (long long)o,
              (long long)cnt[d], (long long)len, (long long)runs);
    }
    CHECK(far == 5, "%s: %lld scatter points", spec, (long long)far);
    free(cnt);
    CHECK(check_values(A, -1), "%s: dominant diagonal", spec);
    adia_matrix_destroy(A);
}

/* Rows of an unstructured matrix: lengths in [lo, hi], columns strictly
 * increasing and in range, the diagonal present, dominant diagonal. */
static int check_rows(const adia_matrix *A, int64_t lo, int64_t hi, double *mean, int64_t *longest)
{
    adia_csr_view v;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return 0;
    *longest = 0;
    for (int32_t i = 0; i < v.rows; i++) {
        int64_t len = v.rowptr[i + 1] - v.rowptr[i], diag = 0;
        if (len < lo || len > hi) return 0;
        if (len > *longest) *longest = len;
        for (int64_t p = v.rowptr[i]; p < v.rowptr[i + 1]; p++) {
            if (v.colind[p] < 0 || v.colind[p] >= v.cols) return 0;
            if (p > v.rowptr[i] && v.colind[p] <= v.colind[p - 1]) return 0;
            diag += v.colind[p] == i;
        }
        if (diag != 1) return 0;
    }
    *mean = (double)v.nnz / v.rows;
    return check_values(A, -1);
}

static void test_random_powerlaw(void)
{
    double mean = 0;
    int64_t longest = 0;
    adia_matrix *A = gen("random:20000,8");
    CHECK(A && check_rows(A, 1, 15, &mean, &longest), "random: rows in 1..15, sorted, diagonal");
    CHECK(A && fabs(mean - 8) < 0.1, "random: mean row length %.3f ~ 8", mean);
    CHECK(A && longest == 15, "random: longest row %lld reaches 2*AVG-1", (long long)longest);
    int64_t *cnt = A ? diag_counts(A) : NULL;
    int64_t diagonals = 0;
    for (int64_t d = 0; cnt && d < 2 * 20000 - 1; d++) diagonals += cnt[d] > 0;
    CHECK(diagonals > 20000, "random: unstructured, more diagonals than rows (%lld distinct diagonals)", (long long)diagonals);
    free(cnt);
    adia_matrix_destroy(A);
    /* P(len > L) = MIN/L: with MIN 2, about 2% of rows are longer than 100 */
    A = gen("powerlaw:50000,2,3000");
    CHECK(A && check_rows(A, 2, 3000, &mean, &longest), "powerlaw: rows in 2..3000, sorted, diagonal");
    adia_csr_view v;
    int64_t over100 = 0;
    if (A && adia_matrix_csr(A, &v) == ADIA_OK)
        for (int32_t i = 0; i < v.rows; i++) over100 += v.rowptr[i + 1] - v.rowptr[i] > 100;
    CHECK(over100 > 800 && over100 < 1200, "powerlaw: %lld rows longer than 100 (expect ~1000)",
          (long long)over100);
    CHECK(longest == 3000, "powerlaw: capped at MAX (%lld)", (long long)longest);
    adia_matrix_destroy(A);
    A = gen("random:3,50");   /* rows longer than N are cut to N */
    CHECK(A && check_rows(A, 1, 3, &mean, &longest), "random: rows cut to N columns");
    adia_matrix_destroy(A);
}

static void test_determinism(void)
{
    const char *specs[][3] = {
        {"band:500,3", "band:500,3,seed=1", "band:500,3,seed=2"},
        {"randdiag:800,9,300", "randdiag:800,9,300,seed=1", "randdiag:800,9,300,seed=77"},
        {"type3:10000,5,0.4", "type3:10000,5,0.4,seed=1", "type3:10000,5,0.4,seed=3"},
        {"random:3000,6", "random:3000,6,seed=1", "random:3000,6,seed=5"},
        {"powerlaw:3000,2,400", "powerlaw:3000,2,400,seed=1", "powerlaw:3000,2,400,seed=9"},
    };
    for (int t = 0; t < 5; t++) {
        adia_matrix *A = gen(specs[t][0]), *B = gen(specs[t][0]), *C = gen(specs[t][1]),
                    *D = gen(specs[t][2]);
        CHECK(A && B && adia_matrix_equal(A, B), "%s twice: same matrix", specs[t][0]);
        CHECK(A && C && adia_matrix_equal(A, C), "default seed is 1: %s", specs[t][1]);
        CHECK(A && D && !adia_matrix_equal(A, D), "%s differs from seed 1", specs[t][2]);
        adia_matrix_destroy(A);
        adia_matrix_destroy(B);
        adia_matrix_destroy(C);
        adia_matrix_destroy(D);
    }
}

/* Rows draw from their own random streams: the thread count cannot matter. */
static void test_threads_agree(void)
{
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    adia_matrix *A = gen("randdiag:20000,7,500,seed=11"), *C = gen("type3:20000,7,0.3");
    omp_set_num_threads(3);
    adia_matrix *B = gen("randdiag:20000,7,500,seed=11"), *D = gen("type3:20000,7,0.3");
    omp_set_num_threads(saved);
    CHECK(A && B && adia_matrix_equal(A, B), "randdiag: 1 thread == 3 threads");
    CHECK(C && D && adia_matrix_equal(C, D), "type3: 1 thread == 3 threads");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    adia_matrix_destroy(C);
    adia_matrix_destroy(D);
}

static void test_bad_specs(void)
{
    static const struct { const char *spec, *needle; } bad[] = {
        {"lap4d:10", "unknown kind \"lap4d\""},
        {"", "unknown kind"},
        {"lap2d5", "missing ':'"},
        {"lap2d5:", "missing number"},
        {"lap2d5:10x", "missing number"},
        {"lap2d5:10x10x10", "too many numbers"},
        {"lap3d7:10x10", "one size or 3 sizes"},
        {"lap2d5:-4", "\"-4\" is not a positive integer"},
        {"lap2d5:0", "must be positive"},
        {"lap2d5:ten", "\"ten\" is not a positive integer"},
        {"lap2d5:10,10", "joined by 'x'"},
        {"lap2d5:99999999999", "larger than 2147483647"},
        {"lap2d5:50000x50000", "more than 2147483647 rows"},
        {"lap3d27:2000", "more than 2147483647 rows"},
        {"band:100", "band takes 2 numbers, got 1"},
        {"band:100,2,3", "too many numbers"},
        {"band:100,100", "BW = 100 must be less than N = 100"},
        {"band:100,0", "must be positive"},
        {"band:100,5,seed=x", "seed \"x\""},
        {"band:100,5,seed=-1", "seed \"-1\""},
        {"band:100,seed=3,5", "seed \"3,5\""},
        {"randdiag:100,12,5", "K = 12 is more than the 11 diagonals"},
        {"randdiag:10,30,100", "K = 30 is more than the 19 diagonals"},
        {"type3:100000,5,1.5", "FILL = 1.5 must be in (0, 1]"},
        {"type3:100000,5,0", "FILL = 0 must be in (0, 1]"},
        {"type3:100000,5,abc", "\"abc\" is not a number"},
        {"type3:1000,5,0.5", "N >= 8192"},
        {"type3:10000,1000,0.5", "do not fit"},
        {"type3:100000,9,0.00001", "fill of the full main diagonal alone"},
        {"type2:1", "N >= 2"},
        {"type3:10000,2,0.5", "K >= 3"},
        {"type3:100000,9,0.3,20000", "N >= 160000"},
        {"type3:100000,9,0.3,200,5", "too many numbers"},
        {"bandh:1000,300,10,2", "BW < N/4"},
        {"bandh:1000,10,10", "bandh takes 4 numbers, got 3"},
        {"bandh:1000,10,10,300", "SCAT <= N/4"},
        {"band:2000000000,1000000000", "more than the 2^36"},
        {"randdiag:2000000000,100000,2000000", "more than the 2^36"},
        {"random:100", "random takes 2 numbers, got 1"},
        {"powerlaw:100,5", "powerlaw takes 3 numbers, got 2"},
        {"powerlaw:100,9,3", "MIN = 9 is larger than MAX = 3"},
        {"powerlaw:2000000000,1,2000000000", "exceeds the 2^36"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        adia_matrix *A = (adia_matrix *)&bad;  /* must be reset to NULL */
        CHECK_ERR(adia_matrix_generate(bad[i].spec, &A), ADIA_ERR_INVALID_ARG, bad[i].needle);
        CHECK(A == NULL, "%s: no matrix", bad[i].spec);
        CHECK(test_contains(adia_last_error(), bad[i].spec), "message names \"%s\": %s",
              bad[i].spec, adia_last_error());
    }
    CHECK_ERR(adia_matrix_generate(NULL, NULL), ADIA_ERR_INVALID_ARG, "out is NULL");
    const char *help = adia_generator_help();
    const char *kinds[] = {"lap2d5:", "lap2d9:", "lap3d7:", "lap3d27:", "band:", "type2:",
                           "type3:", "randdiag:", "random:", "powerlaw:", "bandh:", "seed="};
    for (int k = 0; k < 12; k++) CHECK(strstr(help, kinds[k]), "help mentions %s", kinds[k]);
}

/* ",sym": A = A^T exactly (transpose equal bit for bit), every offset
 * mirrored, CG converges (SPD); kinds without the variant refuse it. */
static void test_symmetric(void)
{
    static const char *specs[] = {"band:3001,4,sym", "randdiag:4000,9,300,sym,seed=7",
                                  "type3:20000,11,0.35,sym", "type3:80000,7,0.3,10000,sym",
                                  "bandh:20000,20,64,4,sym"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        adia_matrix *A = test_generate(specs[i]), *T = NULL;
        if (!A) continue;
        CHECK_OK(adia_matrix_transpose(A, &T));
        CHECK(T && adia_matrix_equal(A, T), "%s: A = A^T", specs[i]);
        adia_features f;
        CHECK_OK(adia_matrix_analyze(A, NULL, &f));
        CHECK(f.lower_bandwidth == f.upper_bandwidth, "%s: bandwidths %d / %d", specs[i],
              f.lower_bandwidth, f.upper_bandwidth);
        int32_t n = adia_matrix_rows(A);
        double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
        for (int32_t r = 0; r < n; r++) b[r] = 1;
        adia_solve_info in;
        CHECK_OK(adia_solve(A, NULL, b, x, NULL, &in));
        CHECK(in.converged, "%s: CG converges on the SPD variant: %s", specs[i], in.stop);
        free(b);
        free(x);
        adia_matrix_destroy(T);
        adia_matrix_destroy(A);
    }
    adia_matrix *A = NULL;
    CHECK_ERR(adia_matrix_generate("lap3d7:8,sym", &A), ADIA_ERR_INVALID_ARG, "no ,sym variant");
    CHECK_ERR(adia_matrix_generate("random:100,3,sym", &A), ADIA_ERR_INVALID_ARG, "no ,sym");
    CHECK_ERR(adia_matrix_generate("band:100,2,seed=3,sym", &A), ADIA_ERR_INVALID_ARG, "seed");
}

/* The whole generation is checked against the memory budget before the
 * arrays are allocated: the row arrays before counting, the CSR after. */
static void test_budget(void)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_set_memory_budget(50000000));
    CHECK_ERR(adia_matrix_generate("lap2d5:1000", &A), ADIA_ERR_NO_MEMORY,
              "generating lap2d5:1000 (1000000 x 1000000, 4996000 nonzeros) needs 76.0 MB, "
              "budget 50.0 MB");
    CHECK(A == NULL, "no matrix after the refusal");
    CHECK_ERR(adia_matrix_generate("band:2000000000,1", &A), ADIA_ERR_NO_MEMORY,
              "(2000000000 x 2000000000, 5999999998 nonzeros) needs 104.0 GB");
    CHECK_OK(adia_set_memory_budget(0));
    CHECK_OK(adia_matrix_generate("lap2d5:1000", &A));
    adia_matrix_destroy(A);
}

/* What a spec builds is known before any row is visited: its nonzeros
 * exactly (the diagonal kinds, the Laplacians, type2: closed forms, which
 * the builder compares with its counting pass -- an internal error if
 * they differ) or at least (random row lengths).  A matrix that cannot fit
 * is refused at once: type3 of 10^8 rows counted its rows for 5.8 s and
 * took 848 MB before "needs 16.3 GB". */
static void test_budget_first(void)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_set_memory_budget(1000000000));
    double t0 = test_seconds();
    CHECK_ERR(adia_matrix_generate("type3:100000000,41,0.35", &A), ADIA_ERR_NO_MEMORY,
              "generating type3:100000000,41,0.35 (100000000 x 100000000, 1224116611 nonzeros) "
              "needs 16.3 GB, budget 1.0 GB");
    CHECK_ERR(adia_matrix_generate_rows("type3:100000000,41,0.35", 0, 50000000, NULL, NULL, &A),
              ADIA_ERR_NO_MEMORY, "(50000000 x 100000000, ");
    CHECK_ERR(adia_matrix_generate("lap3d7:460", &A), ADIA_ERR_NO_MEMORY,
              "(97336000 x 97336000, 680082400 nonzeros)");
    CHECK_ERR(adia_matrix_generate("type2:100000000", &A), ADIA_ERR_NO_MEMORY, "nonzeros) needs");
    CHECK_ERR(adia_matrix_generate("random:100000000,50", &A), ADIA_ERR_NO_MEMORY,
              "(100000000 x 100000000, at least 100000000 nonzeros) needs 2.8 GB");
    CHECK_ERR(adia_matrix_generate("powerlaw:50000000,10,1000", &A), ADIA_ERR_NO_MEMORY,
              "at least 500000000 nonzeros");
    double t = test_seconds() - t0;
    CHECK(t < 1.0, "six refusals took %.2f s: not before the work", t);
    CHECK(A == NULL, "no matrix after a refusal");
    CHECK_OK(adia_set_memory_budget(0));
    /* the closed forms agree with the rows, whole and in blocks (the
     * builder checks; test_row_blocks covers the other kinds) */
    const char *specs[] = {"bandh:5000,6,40,7", "bandh:5000,6,40,7,sym", "type3:24000,7,0.4,3000",
                           "type3:20000,12,0.15", "type3:9000,5,1", "type3:9000,6,0.5,sym",
                           "randdiag:100,5,20,sym", "band:10,9", "lap3d27:1x1x9", "lap2d9:1x7",
                           "lap3d7:2", "type2:8", "powerlaw:300,2,50"};
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        A = test_generate(specs[t]);
        int64_t n = A ? adia_matrix_rows(A) : 0;
        for (int p = 0; A && p < 3; p++) {
            adia_matrix *P = NULL;
            CHECK_OK(adia_matrix_generate_rows(specs[t], n * p / 3, n * (p + 1) / 3 - n * p / 3,
                                               NULL, NULL, &P));
            adia_matrix_destroy(P);
        }
        adia_matrix_destroy(A);
    }
}

/* Rows of the matrix in blocks (adia_matrix_generate_rows): each block is
 * the same rows of the whole matrix, the shape comes without building. */
static void test_row_blocks(void)
{
    const char *specs[] = {"lap2d5:7x5", "lap2d9:6", "lap3d7:4x3x5", "lap3d27:4", "band:50,3",
                           "band:40,5,sym", "type2:200", "type3:9000,7,0.4",
                           "type3:9000,9,0.3,sym", "randdiag:100,5,20", "random:60,4"};
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        adia_matrix *A = test_generate(specs[t]);
        if (!A) continue;
        int64_t n = adia_matrix_rows(A), rows = -1, cols = -1;
        CHECK_OK(adia_matrix_generate_rows(specs[t], 0, 0, &rows, &cols, NULL));
        CHECK(rows == n && cols == adia_matrix_cols(A), "%s: shape %lld x %lld", specs[t],
              (long long)rows, (long long)cols);
        for (int parts = 1; parts <= 4; parts += 3)
            for (int p = 0; p < parts; p++) {
                int64_t first = n * p / parts, count = n * (p + 1) / parts - first;
                adia_matrix *P = NULL;
                CHECK_OK(adia_matrix_generate_rows(specs[t], first, count, NULL, NULL, &P));
                CHECK(P && adia_matrix_rows(P) == count && test_rows_equal(A, first, P),
                      "%s: rows %lld + %lld differ", specs[t], (long long)first, (long long)count);
                adia_matrix_destroy(P);
            }
        adia_matrix *P = NULL;
        CHECK_ERR(adia_matrix_generate_rows(specs[t], n - 1, 2, NULL, NULL, &P),
                  ADIA_ERR_DIMENSION, "the matrix has rows 0..");
        adia_matrix_destroy(A);
    }
}

/* adia_stencil_fill on the host: a block of rows by its diagonals, each
 * entry adia_matrix_generate's (0 where the neighbour leaves the grid);
 * its errors. */
static void test_stencil_fill(void)
{
    static const char *specs[] = {"lap2d5:7x5", "lap2d9:6x4", "lap3d7:4x3x5", "lap3d27:3x4x2",
                                  "lap3d7:1x1x9"};
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        adia_matrix *A = NULL;
        CHECK_OK(adia_matrix_generate(specs[t], &A));
        adia_csr_view v;
        CHECK_OK(adia_matrix_csr(A, &v));
        int64_t n = 0, off[ADIA_STENCIL_MAX_DIAGONALS];
        int nd = 0;
        CHECK_OK(adia_stencil_diagonals(specs[t], &n, &nd, off));
        const int64_t first = n / 3, count = n - first - 1;   /* a block inside */
        double *val = malloc((size_t)(nd * count + 1) * sizeof *val);
        CHECK_OK(adia_stencil_fill(specs[t], first, count, val));
        int bad = 0;
        for (int64_t i = 0; i < count; i++)
            for (int k = 0; k < nd; k++) {
                const int64_t r = first + i, c = r + off[k];
                double want = 0;
                for (int64_t q = v.rowptr[r]; q < v.rowptr[r + 1]; q++)
                    if (v.colind[q] == c) want = v.values[q];
                bad += val[k * count + i] != want;
            }
        CHECK(bad == 0, "%s: %d entries of the host fill differ from the CSR", specs[t], bad);
        free(val);
        adia_matrix_destroy(A);
    }
    double one = 0;
    CHECK_ERR(adia_stencil_fill("lap2d5:4", 10, 7, &one), ADIA_ERR_DIMENSION, "rows 10 + 7");
    CHECK_ERR(adia_stencil_fill("lap2d5:4", 0, 3, NULL), ADIA_ERR_INVALID_ARG, "values is NULL");
    CHECK_ERR(adia_stencil_fill("band:100,3", 0, 1, &one), ADIA_ERR_UNSUPPORTED, "");
}

/* adia_matrix_generate_plane: one plane of a grid's slowest dimension;
 * refused for kinds without a grid and for a grid of one line. */
static void test_plane(void)
{
    static const struct { const char *spec; int64_t plane; } grids[] = {
        {"lap3d7:4x5x6", 20}, {"lap3d27:3", 9}, {"lap3d7:4x5x1", 4}, {"lap2d5:7x9", 7},
        {"lap2d9:6", 6},      {"aniso3d:8", 64}, {"jump3d:8,2", 64},  {"vardiff3d:5", 25},
        {"vardiff2d:10", 10},
    };
    for (size_t k = 0; k < sizeof grids / sizeof *grids; k++) {
        int64_t p = -1;
        CHECK_OK(adia_matrix_generate_plane(grids[k].spec, &p));
        CHECK(p == grids[k].plane, "%s: plane of %lld rows, not %lld", grids[k].spec,
              (long long)p, (long long)grids[k].plane);
    }
    int64_t p = 0;
    const char *none[] = {"band:100,3", "type3:9000,7,0.4", "lap2d5:7x1", "random:100,3"};
    for (size_t k = 0; k < sizeof none / sizeof *none; k++)
        CHECK_ERR(adia_matrix_generate_plane(none[k], &p), ADIA_ERR_UNSUPPORTED, "not a grid");
    CHECK_ERR(adia_matrix_generate_plane("nosuch:3", &p), ADIA_ERR_INVALID_ARG, "nosuch");
    CHECK_ERR(adia_matrix_generate_plane(NULL, &p), ADIA_ERR_INVALID_ARG, "NULL");
}

int main(void)
{
    TEST_BEGIN();
    test_plane();
    test_laplacians();
    test_band_type2_randdiag();
    test_type3();
    test_type3_segments();
    test_bandh();
    test_random_powerlaw();
    test_determinism();
    test_threads_agree();
    test_bad_specs();
    test_budget();
    test_budget_first();
    test_symmetric();
    test_row_blocks();
    test_stencil_fill();
    return TEST_END();
}
