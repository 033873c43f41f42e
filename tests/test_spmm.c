/* test_spmm.c -- diagonal products against an independent CSR product
 * (row-by-row dense accumulator, written here) on banded, structured random,
 * rectangular, empty, single-diagonal and 1x1 inputs; every op combination
 * (transposes checked against explicit adia_matrix_transpose), both CPU
 * algorithms, accumulate, structure report, determinism, errors; the
 * refusal of products whose diagonals would be mostly zeros (max_fill),
 * over the memory budget, or of absurd thread counts, before the pair list
 * is built; pairs and multiplications against a walk over every pair. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ inputs */

/* n x n band of half-width bw (test_diag_matrix: values in [-1, 1), no
 * exact zeros). */
static adia_matrix *banded(uint64_t seed, int32_t n, int32_t bw)
{
    int32_t off[64];
    for (int32_t o = -bw; o <= bw; o++) off[o + bw] = o;
    return test_diag_matrix(seed, n, n, 2 * bw + 1, off, 1.0, 0.0, NULL);
}

/* K distinct random offsets inside (-m, n) and within +-spread. */
static adia_matrix *random_diags(uint64_t seed, int32_t m, int32_t n, int K,
                                 int32_t spread, double fill)
{
    int32_t off[256];
    uint64_t st = seed + 11;
    int k = 0;
    while (k < K) {
        int32_t o = (int32_t)lround(test_rand(&st) * spread);
        if (o <= -m || o >= n) continue;
        int dup = 0;
        for (int j = 0; j < k; j++) dup |= off[j] == o;
        if (!dup) off[k++] = o;
    }
    return test_diag_matrix(seed, m, n, K, off, fill, 0.0, NULL);
}

/* --------------------------------------------------- reference product */

/* C = A B, row by row with a dense accumulator (Gustavson). */
static adia_matrix *ref_product(const adia_matrix *A, const adia_matrix *B)
{
    adia_csr_view a, b;
    adia_matrix_csr(A, &a);
    adia_matrix_csr(B, &b);
    double *acc = calloc((size_t)b.cols + 1, sizeof *acc);
    char *used = calloc((size_t)b.cols + 1, 1);
    int64_t cap = 16, k = 0;
    int32_t *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    for (int32_t i = 0; i < a.rows; i++) {
        for (int64_t p = a.rowptr[i]; p < a.rowptr[i + 1]; p++)
            for (int64_t q = b.rowptr[a.colind[p]]; q < b.rowptr[a.colind[p] + 1]; q++) {
                acc[b.colind[q]] += a.values[p] * b.values[q];
                used[b.colind[q]] = 1;
            }
        for (int32_t j = 0; j < b.cols; j++) {
            if (!used[j]) continue;
            if (k == cap) {
                cap *= 2;
                r = realloc(r, cap * sizeof *r);
                c = realloc(c, cap * sizeof *c);
                v = realloc(v, cap * sizeof *v);
            }
            r[k] = i;
            c[k] = j;
            v[k++] = acc[j];
            acc[j] = 0;
            used[j] = 0;
        }
    }
    adia_matrix *C = NULL;
    adia_matrix_create_coo(a.rows, b.cols, k, r, c, v, ADIA_DOUBLE, &C);
    free(acc); free(used); free(r); free(c); free(v);
    return C;
}

/* X + Y through COO (duplicates summed). */
static adia_matrix *add(const adia_matrix *X, const adia_matrix *Y)
{
    int32_t *r1, *c1, *r2, *c2;
    double *v1, *v2;
    adia_matrix_to_coo(X, &r1, &c1, &v1);
    adia_matrix_to_coo(Y, &r2, &c2, &v2);
    int64_t n1 = adia_matrix_nnz(X), n2 = adia_matrix_nnz(Y);
    int32_t *r = malloc((n1 + n2 + 1) * sizeof *r), *c = malloc((n1 + n2 + 1) * sizeof *c);
    double *v = malloc((n1 + n2 + 1) * sizeof *v);
    memcpy(r, r1, n1 * sizeof *r); memcpy(r + n1, r2, n2 * sizeof *r);
    memcpy(c, c1, n1 * sizeof *c); memcpy(c + n1, c2, n2 * sizeof *c);
    memcpy(v, v1, n1 * sizeof *v); memcpy(v + n1, v2, n2 * sizeof *v);
    adia_matrix *S = NULL;
    adia_matrix_create_coo(adia_matrix_rows(X), adia_matrix_cols(X), n1 + n2, r, c, v,
                           ADIA_DOUBLE, &S);
    free(r1); free(c1); free(v1); free(r2); free(c2); free(v2); free(r); free(c); free(v);
    return S;
}

/* max |C - R| / max |R| over the union of both patterns (missing = 0). */
static double rel_diff(const adia_matrix *C, const adia_matrix *R)
{
    adia_csr_view c, r;
    if (adia_matrix_csr(C, &c) || adia_matrix_csr(R, &r)) return INFINITY;
    if (c.rows != r.rows || c.cols != r.cols) return INFINITY;
    double num = 0, den = 1e-300;
    for (int32_t i = 0; i < c.rows; i++) {
        int64_t p = c.rowptr[i], q = r.rowptr[i];
        while (p < c.rowptr[i + 1] || q < r.rowptr[i + 1]) {
            int32_t jc = p < c.rowptr[i + 1] ? c.colind[p] : INT32_MAX;
            int32_t jr = q < r.rowptr[i + 1] ? r.colind[q] : INT32_MAX;
            double x = jc <= jr ? c.values[p++] : 0, y = jr <= jc ? r.values[q++] : 0;
            if (isnan(x)) return INFINITY;
            if (fabs(x - y) > num) num = fabs(x - y);
            if (fabs(y) > den) den = fabs(y);
        }
    }
    return num / den;
}

/* ------------------------------------------------------------ checks */

static adia_matrix *op_matrix(adia_op op, const adia_matrix *X)
{
    adia_matrix *T = NULL;
    if (op == ADIA_OP_N) adia_matrix_copy(X, &T);
    else adia_matrix_transpose(X, &T);
    return T;
}

/* Ascending distinct offsets of X (malloc'd) and their count. */
static int32_t *offsets_of(const adia_matrix *X, int32_t *count)
{
    adia_csr_view v;
    adia_matrix_csr(X, &v);
    int64_t span = (int64_t)v.rows + v.cols;
    char *seen = calloc((size_t)span + 1, 1);
    int32_t *off = malloc(((size_t)span + 1) * sizeof *off);
    *count = 0;
    for (int32_t i = 0; i < v.rows; i++)
        for (int64_t q = v.rowptr[i]; q < v.rowptr[i + 1]; q++) seen[v.colind[q] - i + v.rows] = 1;
    for (int64_t s = 0; s <= span; s++)
        if (seen[s]) off[(*count)++] = (int32_t)(s - v.rows);
    free(seen);
    return off;
}

/* Pairs (oa, ob) with oa + ob a diagonal of the m x n C, and the rows
 * they reach summed: the structure report's n_pairs and flops / 2, by
 * walking every pair. */
static void walk_pairs(const adia_matrix *At, const adia_matrix *Bt, int64_t *pairs,
                       int64_t *mults)
{
    int64_t m = adia_matrix_rows(At), k = adia_matrix_cols(At), n = adia_matrix_cols(Bt);
    int32_t da, db, *oa = offsets_of(At, &da), *ob = offsets_of(Bt, &db);
    *pairs = *mults = 0;
    for (int32_t a = 0; a < da; a++)
        for (int32_t b = 0; b < db; b++) {
            int64_t oc = (int64_t)oa[a] + ob[b];
            if (oc <= -m || oc >= n) continue;
            int64_t lo = 0, hi = m;
            if (-oa[a] > lo) lo = -oa[a];
            if (-oc > lo) lo = -oc;
            if (k - oa[a] < hi) hi = k - oa[a];
            if (n - oc < hi) hi = n - oc;
            ++*pairs;
            *mults += hi > lo ? hi - lo : 0;
        }
    free(oa);
    free(ob);
}

/* Every algorithm and thread count against the reference; structure report
 * against the result; bitwise determinism across thread counts. */
static void check_product(const char *what, adia_op opA, const adia_matrix *A, adia_op opB,
                          const adia_matrix *B)
{
    adia_matrix *At = op_matrix(opA, A), *Bt = op_matrix(opB, B);
    adia_matrix *R = ref_product(At, Bt);
    int square = adia_matrix_rows(At) == adia_matrix_cols(At) &&
                 adia_matrix_rows(Bt) == adia_matrix_cols(Bt);
    adia_spgemm_info si;
    int32_t *offs = NULL;
    CHECK_OK(adia_spgemm_structure(opA, A, opB, B, NULL, &si, &offs));
    int64_t pairs, mults;
    walk_pairs(At, Bt, &pairs, &mults);
    CHECK(si.n_pairs == pairs && si.flops == 2 * mults, "%s: %lld pairs, %lld flops; walking "
          "every pair: %lld, %lld", what, (long long)si.n_pairs, (long long)si.flops,
          (long long)pairs, (long long)(2 * mults));
    adia_matrix *first = NULL;
    for (int algo = ADIA_SPGEMM_AUTO; algo <= ADIA_SPGEMM_CDM; algo++) {
        if (algo == ADIA_SPGEMM_CDM && !square) continue;
        for (int th = 1; th <= 2; th++) {
            adia_spgemm_options opt;
            adia_spgemm_info info;
            adia_spgemm_options_default(&opt);
            opt.algorithm = (adia_spgemm_algo)algo;
            opt.threads = th;
            opt.info = &info;
            adia_matrix *C = NULL;
            CHECK_OK(adia_spgemm(opA, A, opB, B, &C, &opt));
            if (!C) continue;
            double e = rel_diff(C, R);
            CHECK(e < 1e-14, "%s algo %d threads %d: error %g", what, algo, th, e);
            CHECK(adia_matrix_nnz(C) == si.nnz && info.nnz == si.nnz,
                  "%s: nnz %lld, structure said %lld", what, (long long)adia_matrix_nnz(C),
                  (long long)si.nnz);
            CHECK(si.rows == adia_matrix_rows(C) && si.cols == adia_matrix_cols(C), "shape");
            /* C's diagonals are exactly the reported offsets */
            adia_csr_view cv;
            adia_matrix_csr(C, &cv);
            int ok = 1;
            for (int32_t i = 0; i < cv.rows; i++)
                for (int64_t q = cv.rowptr[i]; q < cv.rowptr[i + 1]; q++) {
                    int32_t o = cv.colind[q] - i, lo = 0, hi = (int32_t)si.n_diag;
                    while (lo < hi) { int32_t mid = (lo + hi) / 2; if (offs[mid] < o) lo = mid + 1; else hi = mid; }
                    ok &= lo < si.n_diag && offs[lo] == o;
                }
            CHECK(ok, "%s: entries off the reported diagonals", what);
            /* same algorithm, any thread count, twice: bitwise equal */
            if (th == 1) {
                adia_matrix_destroy(first);
                first = C;
            } else {
                CHECK(adia_matrix_equal(first, C), "%s algo %d: threads 1 vs 2 differ", what, algo);
                adia_matrix *again = NULL;
                CHECK_OK(adia_spgemm(opA, A, opB, B, &again, &opt));
                CHECK(adia_matrix_equal(again, C), "%s algo %d: two runs differ", what, algo);
                adia_matrix_destroy(again);
                adia_matrix_destroy(C);
            }
        }
    }
    /* accumulate: C0 + op(A) op(B) for a C0 with its own diagonals */
    adia_matrix *C0 = si.rows == 0 || si.cols == 0
                          ? test_dense_matrix(si.rows, si.cols, NULL)
                          : random_diags(99, si.rows, si.cols, si.rows > 3 ? 3 : 1,
                                         si.rows > 2 ? si.rows / 2 : 1, 0.7);
    adia_matrix *C = NULL, *S = C0 ? add(R, C0) : NULL;
    for (int algo = ADIA_SPGEMM_HM; C0 && algo <= ADIA_SPGEMM_CDM; algo++) {
        if (algo == ADIA_SPGEMM_CDM && !square) continue;
        adia_matrix_copy(C0, &C);
        adia_spgemm_options opt;
        adia_spgemm_options_default(&opt);
        opt.accumulate = 1;
        opt.algorithm = (adia_spgemm_algo)algo;
        CHECK_OK(adia_spgemm(opA, A, opB, B, &C, &opt));
        double e = rel_diff(C, S);
        CHECK(e < 1e-14, "%s accumulate algo %d: error %g", what, algo, e);
        adia_matrix_destroy(C);
    }
    adia_matrix_destroy(S);
    adia_matrix_destroy(C0);
    adia_matrix_destroy(first);
    free(offs);
    adia_matrix_destroy(R);
    adia_matrix_destroy(At);
    adia_matrix_destroy(Bt);
}

static void check_all_ops(const char *what, const adia_matrix *A, const adia_matrix *B)
{
    /* op(A) op(B) for the ops whose shapes fit */
    for (int oa = 0; oa < 2; oa++)
        for (int ob = 0; ob < 2; ob++) {
            int32_t k1 = oa ? adia_matrix_rows(A) : adia_matrix_cols(A);
            int32_t k2 = ob ? adia_matrix_cols(B) : adia_matrix_rows(B);
            if (k1 != k2) continue;
            char name[96];
            snprintf(name, sizeof name, "%s %s/%s", what, oa ? "T" : "N", ob ? "T" : "N");
            check_product(name, (adia_op)oa, A, (adia_op)ob, B);
        }
}

static void test_products(void)
{
    adia_matrix *A = banded(1, 150, 3), *B = banded(2, 150, 5);
    check_all_ops("banded", A, B);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);

    A = random_diags(3, 300, 300, 12, 299, 1.0);
    B = random_diags(4, 300, 300, 9, 299, 0.6);
    check_all_ops("random diagonals", A, B);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);

    A = random_diags(5, 50, 80, 7, 60, 0.9);          /* 50 x 80 */
    B = random_diags(6, 80, 30, 6, 40, 0.9);          /* 80 x 30 */
    adia_matrix *Bt = NULL, *At = NULL;
    adia_matrix_transpose(B, &Bt);
    adia_matrix_transpose(A, &At);
    check_product("rect N/N", ADIA_OP_N, A, ADIA_OP_N, B);
    check_product("rect T/N", ADIA_OP_T, At, ADIA_OP_N, B);
    check_product("rect N/T", ADIA_OP_N, A, ADIA_OP_T, Bt);
    check_product("rect T/T", ADIA_OP_T, At, ADIA_OP_T, Bt);
    adia_matrix_destroy(At);
    adia_matrix_destroy(Bt);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);

    int32_t o7 = 7, om3 = -3, o0 = 0;
    A = test_diag_matrix(7, 40, 40, 1, &o7, 1.0, 0.0, NULL);
    B = test_diag_matrix(8, 40, 40, 1, &om3, 1.0, 0.0, NULL);
    check_all_ops("single diagonal", A, B);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);

    A = test_diag_matrix(9, 1, 1, 1, &o0, 1.0, 0.0, NULL);
    B = test_diag_matrix(10, 1, 1, 1, &o0, 1.0, 0.0, NULL);
    check_all_ops("1x1", A, B);
    adia_matrix_destroy(B);
    B = test_dense_matrix(1, 1, (double[1]){0});      /* 1x1 without entries */
    check_all_ops("1x1 empty", A, B);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);

    A = test_dense_matrix(5, 5, (double[25]){0});
    B = banded(11, 5, 1);
    check_all_ops("empty x banded", A, B);
    adia_matrix_destroy(B);
    B = test_dense_matrix(0, 0, NULL);
    adia_matrix *Z = test_dense_matrix(0, 0, NULL);
    check_all_ops("0x0", B, Z);
    adia_matrix_destroy(Z);
    adia_matrix_destroy(B);
    adia_matrix_destroy(A);

    /* dense 4x4: the seed's C_0, C_1 worked examples are the full product */
    double d[16];
    for (int i = 0; i < 16; i++) d[i] = 1 + i * 0.25;
    A = test_dense_matrix(4, 4, d);
    for (int i = 0; i < 16; i++) d[i] = 2 - i * 0.125;
    B = test_dense_matrix(4, 4, d);
    check_all_ops("dense 4x4", A, B);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
}

static void test_errors(void)
{
    adia_matrix *A = random_diags(20, 50, 80, 4, 40, 1.0), *C = NULL;
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, NULL), ADIA_ERR_DIMENSION,
              "A is 50 x 80 and B is 50 x 80");
    CHECK(C == NULL, "no C on error");
    adia_spgemm_info info;
    CHECK_ERR(adia_spgemm_structure(ADIA_OP_T, A, ADIA_OP_T, A, NULL, &info, NULL),
              ADIA_ERR_DIMENSION, "A^T is 80 x 50 and B^T is 80 x 50");
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    opt.algorithm = ADIA_SPGEMM_CDM;
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_T, A, &C, &opt), ADIA_ERR_DIMENSION, "square");
    adia_spgemm_options_default(&opt);
    opt.max_bytes = 1000;
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_T, A, &C, &opt), ADIA_ERR_NO_MEMORY,
              "budget 1.0 kB (adia_spgemm_options.max_bytes)");
    /* accumulate into a C of the wrong shape */
    adia_matrix *W = random_diags(21, 50, 49, 2, 10, 1.0);
    adia_spgemm_options_default(&opt);
    opt.accumulate = 1;
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_T, A, &W, &opt), ADIA_ERR_DIMENSION, "50 x 49");
    opt.accumulate = 0;
    opt.device = ADIA_DEVICE_GPU;
    int ndev = 0;
    adia_gpu_device_count(&ndev);
    if (ndev == 0)
        CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_T, A, &C, &opt), ADIA_ERR_NO_DEVICE, "CUDA");
    CHECK_ERR(adia_spgemm(ADIA_OP_N, NULL, ADIA_OP_N, A, &C, NULL), ADIA_ERR_INVALID_HANDLE,
              "NULL");
    CHECK_ERR(adia_spgemm((adia_op)5, A, ADIA_OP_N, A, &C, NULL), ADIA_ERR_INVALID_ARG, "op");
    adia_matrix_destroy(W);
    adia_matrix_destroy(A);
}

static void test_huge_structure(void)
{
    /* 1000 scattered entries on distinct diagonals of a 10^6 matrix: the
     * product's diagonals hold far more than 2^31 entries -- reported in
     * 64 bits, refused before any numeric work */
    const int32_t n = 1000000, K = 1000;
    int32_t *r = malloc(K * sizeof *r), *c = malloc(K * sizeof *c);
    double *v = malloc(K * sizeof *v);
    uint64_t st = 5;
    for (int k = 0; k < K; k++) {
        r[k] = k;
        c[k] = (int32_t)((test_rand(&st) + 1) / 2 * (n - 1));
        v[k] = 1.0;
    }
    adia_matrix *A = NULL, *C = NULL;
    CHECK_OK(adia_matrix_create_coo(n, n, K, r, c, v, ADIA_DOUBLE, &A));
    adia_spgemm_info info;
    CHECK_OK(adia_spgemm_structure(ADIA_OP_N, A, ADIA_OP_T, A, NULL, &info, NULL));
    CHECK(info.nnz > INT32_MAX && info.n_diag > K, "nnz %lld diagonals %lld",
          (long long)info.nnz, (long long)info.n_diag);
    CHECK(info.peak_bytes > info.nnz * 8, "peak %lld", (long long)info.peak_bytes);
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_T, A, &C, NULL), ADIA_ERR_UNSUPPORTED,
              "the product is not diagonal");
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    opt.max_fill = INFINITY;   /* then the budget refuses it */
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_T, A, &C, &opt), ADIA_ERR_NO_MEMORY,
              "TB, budget");
    CHECK(C == NULL, "no C");
    free(r); free(c); free(v);
    adia_matrix_destroy(A);
}

/* Unstructured operands: C's diagonals would be mostly zeros -- refused
 * before any numeric work with the figures, unless max_fill allows it. */
static void test_fill_refused(void)
{
    adia_matrix *A = test_generate("random:400,3"), *C = NULL;
    if (!A) return;
    adia_spgemm_info si;
    CHECK_OK(adia_spgemm_structure(ADIA_OP_N, A, ADIA_OP_N, A, NULL, &si, NULL));
    CHECK(si.nnz_bound > 0 && si.nnz > 4 * si.nnz_bound + 400, "random: %lld entries stored, "
          "bound %lld", (long long)si.nnz, (long long)si.nnz_bound);
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, NULL), ADIA_ERR_UNSUPPORTED,
              "would store");
    CHECK(strstr(adia_last_error(), "max_fill = 4") != NULL, "message names the limit: %s",
          adia_last_error());
    CHECK(C == NULL, "no C when refused");
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    opt.max_fill = INFINITY;
    CHECK_OK(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, &opt));
    adia_matrix *R = ref_product(A, A);
    CHECK(C && R && adia_matrix_nnz(R) <= si.nnz_bound, "bound %lld holds (true nnz %lld)",
          (long long)si.nnz_bound, R ? (long long)adia_matrix_nnz(R) : -1LL);
    adia_matrix_destroy(R);
    adia_matrix_destroy(C);
    C = NULL;
    /* a larger finite max_fill: accepted when nnz fits under it */
    opt.max_fill = (double)si.nnz / (double)si.nnz_bound + 1;
    CHECK_OK(adia_spgemm(ADIA_OP_N, A, ADIA_OP_T, A, &C, &opt));
    adia_matrix_destroy(C);
    adia_matrix_destroy(A);
    /* banded operands: bound above storage, never refused */
    A = banded(30, 500, 4);
    CHECK_OK(adia_spgemm_structure(ADIA_OP_N, A, ADIA_OP_T, A, NULL, &si, NULL));
    CHECK(si.nnz <= si.nnz_bound, "banded: %lld stored, bound %lld", (long long)si.nnz,
          (long long)si.nnz_bound);
    adia_matrix_destroy(A);
}

/* The process budget holds for products (it used to be physical memory):
 * refused before any work with both figures; max_bytes narrows it and
 * never widens it. */
static void test_budget(void)
{
    adia_matrix *A = banded(32, 20000, 10), *C = NULL;
    adia_spgemm_info si;
    CHECK_OK(adia_spgemm_structure(ADIA_OP_N, A, ADIA_OP_N, A, NULL, &si, NULL));
    CHECK(si.peak_bytes > 5000000, "peak %lld", (long long)si.peak_bytes);
    CHECK_OK(adia_set_memory_budget(1000000));
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, NULL), ADIA_ERR_NO_MEMORY,
              "budget 1.0 MB (set by adia_set_memory_budget");
    CHECK(test_contains(adia_last_error(), "20000 x 20000, 41 diagonals"), "names C: %s",
          adia_last_error());
    CHECK(C == NULL, "no C");
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    opt.max_bytes = (int64_t)1 << 40;
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, &opt), ADIA_ERR_NO_MEMORY,
              "budget 1.0 MB (set by adia_set_memory_budget");
    CHECK_OK(adia_set_memory_budget(0));
    CHECK_OK(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, NULL));
    adia_matrix_destroy(C);
    adia_matrix_destroy(A);
}

/* An unstructured product with 10^8 and more pairs: refused by the fill
 * check without listing them (8 bytes a pair: the list took 34 s and 4.3
 * GB for this one before); the structure report comes as fast and counts
 * the pair list in the peak. */
static void test_many_pairs_refused_fast(void)
{
    adia_matrix *A = test_generate("powerlaw:20000,2,500"), *C = NULL;
    if (!A) return;
    double t0 = test_seconds();
    adia_spgemm_info si;
    CHECK_OK(adia_spgemm_structure(ADIA_OP_N, A, ADIA_OP_N, A, NULL, &si, NULL));
    CHECK(si.n_pairs > 100000000 && si.peak_bytes > 8 * si.n_pairs, "%lld pairs, peak %lld",
          (long long)si.n_pairs, (long long)si.peak_bytes);
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, NULL), ADIA_ERR_UNSUPPORTED,
              "not diagonal");
    CHECK_ERR(adia_spgemm(ADIA_OP_T, A, ADIA_OP_N, A, &C, NULL), ADIA_ERR_UNSUPPORTED,
              "not diagonal");
    double sec = test_seconds() - t0;
    CHECK(sec < 3, "structure and two refusals took %.2f s", sec);
    CHECK(C == NULL, "no C");
    adia_matrix_destroy(A);
}

/* Thread counts beyond 4 x the processors are refused (OpenMP crashed). */
static void test_threads_bounded(void)
{
    adia_matrix *A = banded(31, 50, 1), *C = NULL;
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    opt.threads = 100000;
    CHECK_ERR(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, &opt), ADIA_ERR_INVALID_ARG,
              "threads = 100000");
    opt.threads = adia_thread_limit();
    CHECK_OK(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, &opt));
    adia_matrix_destroy(C);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_products();
    test_errors();
    test_huge_structure();
    test_fill_refused();
    test_threads_bounded();
    test_budget();
    test_many_pairs_refused_fast();
    return TEST_END();
}
