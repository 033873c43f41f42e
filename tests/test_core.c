/* test_core.c -- master matrix: creation, duplicates, validation, transpose,
 * reference SpMV, error reporting, the "csr" format and format registry,
 * the memory budget and the device-memory check. */
#include "testutil.h"
#include "internal.h"   /* adia__device_memory_check, adia__gpu_check_free */

#ifdef ADIA_HAVE_CUDA
#include "cuda/gpu_common.h"   /* adia__format_spmv_dot_gpu */
#endif

#include <math.h>
#include <string.h>

static void test_coo_duplicates_sorted(void)
{
    /* unsorted triplets with a duplicate (1,2) summed */
    int32_t r[] = {1, 0, 1, 2, 1};
    int32_t c[] = {2, 0, 0, 3, 2};
    double v[] = {1.5, 2.0, 3.0, 4.0, 0.25};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_coo(3, 4, 5, r, c, v, ADIA_DOUBLE, &A));
    adia_csr_view cv;
    CHECK_OK(adia_matrix_csr(A, &cv));
    CHECK(cv.nnz == 4, "nnz %lld", (long long)cv.nnz);
    int64_t rp[] = {0, 1, 3, 4};
    int32_t ci[] = {0, 0, 2, 3};
    double vv[] = {2.0, 3.0, 1.75, 4.0};
    CHECK(!memcmp(cv.rowptr, rp, sizeof rp), "rowptr");
    CHECK(!memcmp(cv.colind, ci, sizeof ci), "colind");
    CHECK(!memcmp(cv.values, vv, sizeof vv), "values");
    adia_matrix_destroy(A);
}

/* adia_matrix_create_csr's two routes give the same master CSR: a
 * canonical CSR (columns ascending, unique) copied as it is on threads, a
 * row out of order or with a duplicate through the COO path; float values
 * widened; a column out of range refused naming it either way. */
static void test_csr_routes(void)
{
    enum { N = 300000 };   /* above the threaded copy's slice and check block */
    int64_t *rp = malloc((N + 1) * sizeof *rp);
    int32_t *ci = malloc(3 * (size_t)N * sizeof *ci);
    double *v = malloc(3 * (size_t)N * sizeof *v);
    float *f = malloc(3 * (size_t)N * sizeof *f);
    int64_t k = 0;
    for (int32_t i = 0; i < N; i++) {   /* a tridiagonal band */
        rp[i] = k;
        for (int32_t j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < N) ci[k] = j, v[k] = i + 0.25 * (j - i), f[k] = (float)v[k], k++;
    }
    rp[N] = k;
    adia_matrix *A = NULL, *B = NULL, *F = NULL;
    CHECK_OK(adia_matrix_create_csr(N, N, k, rp, ci, v, ADIA_DOUBLE, &A));
    CHECK_OK(adia_matrix_create_csr(N, N, k, rp, ci, f, ADIA_FLOAT, &F));
    /* row 7 reversed, row 9's (9, 9) moved onto (9, 8): the COO path */
    int32_t t = ci[rp[7]];
    ci[rp[7]] = ci[rp[7] + 2], ci[rp[7] + 2] = t;
    double tv = v[rp[7]];
    v[rp[7]] = v[rp[7] + 2], v[rp[7] + 2] = tv;
    ci[rp[9] + 1] = 8;   /* (9, 8) = 8.75 + 9 summed, (9, 10) = 9.25 */
    CHECK_OK(adia_matrix_create_csr(N, N, k, rp, ci, v, ADIA_DOUBLE, &B));
    adia_csr_view a, b, fv;
    if (A && B && F && adia_matrix_csr(A, &a) == ADIA_OK && adia_matrix_csr(B, &b) == ADIA_OK &&
        adia_matrix_csr(F, &fv) == ADIA_OK) {
        CHECK(a.nnz == k && b.nnz == k - 1 && fv.nnz == k, "nnz %lld %lld %lld of %lld",
              (long long)a.nnz, (long long)b.nnz, (long long)fv.nnz, (long long)k);
        const double *av = a.values, *bv = b.values, *fw = fv.values;
        int same = !memcmp(a.rowptr, fv.rowptr, (N + 1) * sizeof(int64_t)) &&
                   !memcmp(a.colind, fv.colind, (size_t)k * sizeof(int32_t));
        for (int64_t q = 0; same && q < k; q++) same = fw[q] == (double)(float)av[q];
        CHECK(same, "float values widened into the same CSR");
        int64_t a7 = a.rowptr[7], b7 = b.rowptr[7], b9 = b.rowptr[9];
        CHECK(b.colind[b7] == 6 && b.colind[b7 + 2] == 8 && bv[b7] == av[a7] &&
                  bv[b7 + 2] == av[a7 + 2], "row 7 sorted with its values");
        CHECK(b.rowptr[10] - b9 == 2 && b.colind[b9] == 8 && bv[b9] == 8.75 + 9 &&
                  b.colind[b9 + 1] == 10 && bv[b9 + 1] == 9.25,
              "row 9's duplicate summed: %g", bv[b9]);
        CHECK(!memcmp(a.colind + a.rowptr[10], b.colind + b.rowptr[10],
                      (size_t)(k - a.rowptr[10]) * sizeof(int32_t)), "rows after 9 alike");
    }
    adia_matrix *C = NULL;
    ci[rp[5] + 1] = N;   /* out of range, in a row otherwise in order */
    CHECK_ERR(adia_matrix_create_csr(N, N, k, rp, ci, v, ADIA_DOUBLE, &C), ADIA_ERR_INVALID_MATRIX,
              "outside");
    CHECK(C == NULL, "no matrix on error");
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    adia_matrix_destroy(F);
    free(rp), free(ci), free(v), free(f);
}

static void test_bad_input(void)
{
    adia_matrix *A = NULL;
    int32_t r[] = {0, 5}, c[] = {0, 0};
    double v[] = {1, 2};
    CHECK_ERR(adia_matrix_create_coo(3, 3, 2, r, c, v, ADIA_DOUBLE, &A),
              ADIA_ERR_INVALID_MATRIX, "entry 1 (5, 0)");
    CHECK(A == NULL, "no matrix on error");
    CHECK_ERR(adia_matrix_create_coo(-1, 3, 0, r, c, v, ADIA_DOUBLE, &A),
              ADIA_ERR_INVALID_ARG, "negative size");
    int64_t rp[] = {0, 2, 1};
    int32_t ci[] = {0, 1};
    CHECK_ERR(adia_matrix_create_csr(2, 2, 1, rp, ci, v, ADIA_DOUBLE, &A),
              ADIA_ERR_INVALID_MATRIX, "rowptr");
    CHECK_ERR(adia_matrix_spmv(NULL, 1, v, 0, v), ADIA_ERR_INVALID_HANDLE, "NULL");
    /* a value type that is neither double nor float: refused, not read as
     * doubles (a valid matrix otherwise) */
    int32_t r1[] = {0, 1};
    int64_t rp1[] = {0, 1, 2};
    const int bad_vt[] = {7, -1, 2};
    for (int k = 0; k < 3; k++) {
        CHECK_ERR(adia_matrix_create_coo(2, 2, 2, r1, c, v, (adia_value_type)bad_vt[k], &A),
                  ADIA_ERR_INVALID_ARG, "adia_matrix_create_coo: value type");
        CHECK(A == NULL, "no matrix for value type %d", bad_vt[k]);
        CHECK_ERR(adia_matrix_create_csr(2, 2, 2, rp1, ci, v, (adia_value_type)bad_vt[k], &A),
                  ADIA_ERR_INVALID_ARG, "adia_matrix_create_csr: value type");
        CHECK(A == NULL, "no matrix for value type %d", bad_vt[k]);
    }
    CHECK_ERR(adia_matrix_create_coo(2, 2, 2, r1, c, NULL, (adia_value_type)7, &A),
              ADIA_ERR_INVALID_ARG, "value type 7 is neither ADIA_DOUBLE (0) nor ADIA_FLOAT (1)");
    CHECK_OK(adia_matrix_create_coo(2, 2, 2, r1, c, v, ADIA_DOUBLE, &A));
    adia_matrix_destroy(A);
    A = NULL;
    CHECK(strlen(adia_status_string(ADIA_ERR_NO_MEMORY)) > 0, "status string");
    adia_clear_error();
    CHECK(adia_last_error()[0] == 0, "cleared");
}

/* The transpose against one made independently (adia_matrix_create_coo
 * with rows and columns swapped), and twice is A, on larger matrices than
 * test_transpose_and_spmv's: bands as agg's P (n x n/2) and square, and
 * rows that reach everywhere. */
static void test_transpose_large(void)
{
    static const struct { int32_t m, n; int band; } cases[] = {
        {40000, 20000, 1}, {30011, 30011, 1}, {8000, 90000, 0}};
    for (int t = 0; t < 3; t++) {
        const int32_t m = cases[t].m, n = cases[t].n;
        int64_t cap = (int64_t)m * 5, nnz = 0;
        int32_t *ri = malloc(cap * sizeof *ri), *ci = malloc(cap * sizeof *ci);
        double *v = malloc(cap * sizeof *v);
        uint64_t st = 11 + t;
        for (int32_t i = 0; i < m; i++)
            for (int e = 0; e < (cases[t].band ? 4 : 5); e++) {
                int64_t c = cases[t].band ? (int64_t)i * n / m - 1 + e
                                          : (int64_t)((test_rand(&st) + 1) * 0.5 * n);
                if (c < 0 || c >= n) continue;
                ri[nnz] = i, ci[nnz] = (int32_t)c, v[nnz++] = test_rand(&st);
            }
        adia_matrix *A = NULL, *ref = NULL, *T = NULL, *TT = NULL;
        CHECK_OK(adia_matrix_create_coo(m, n, nnz, ri, ci, v, ADIA_DOUBLE, &A));
        CHECK_OK(adia_matrix_create_coo(n, m, nnz, ci, ri, v, ADIA_DOUBLE, &ref));
        CHECK_OK(adia_matrix_transpose(A, &T));
        CHECK(T && adia_matrix_equal(T, ref), "case %d (%d x %d): transpose equals the reference", t, m, n);
        CHECK_OK(adia_matrix_transpose(T, &TT));
        CHECK(TT && adia_matrix_equal(TT, A), "case %d: A^T^T == A", t);
        adia_matrix_destroy(A), adia_matrix_destroy(ref), adia_matrix_destroy(T), adia_matrix_destroy(TT);
        free(ri), free(ci), free(v);
    }
}

static void test_transpose_and_spmv(void)
{
    for (int t = 0; t < 4; t++) {
        int32_t m = 1 + t * 37, n = 3 + t * 53;
        adia_matrix *A = test_random_matrix(t, m, n, 0.1), *T = NULL, *TT = NULL;
        CHECK(A != NULL, "random matrix");
        CHECK_OK(adia_matrix_transpose(A, &T));
        CHECK_OK(adia_matrix_transpose(T, &TT));
        CHECK(adia_matrix_rows(T) == n && adia_matrix_cols(T) == m, "transpose shape");
        CHECK(adia_matrix_equal(A, TT), "A^T^T == A");
        /* y = A x against a dense computation */
        double *dense = calloc((size_t)m * n, sizeof *dense);
        adia_csr_view cv;
        adia_matrix_csr(A, &cv);
        for (int32_t i = 0; i < m; i++)
            for (int64_t k = cv.rowptr[i]; k < cv.rowptr[i + 1]; k++)
                dense[(int64_t)i * n + cv.colind[k]] = cv.values[k];
        double *x = malloc(n * sizeof *x), *y = malloc(m * sizeof *y), *ref = malloc(m * sizeof *ref);
        uint64_t st = 5 + t;
        test_rand_vector(&st, x, n);
        test_rand_vector(&st, y, m);
        for (int32_t i = 0; i < m; i++) {
            double s = 0;
            for (int32_t j = 0; j < n; j++) s += dense[(int64_t)i * n + j] * x[j];
            ref[i] = 2.0 * s - 0.5 * y[i];
        }
        CHECK_OK(adia_matrix_spmv(A, 2.0, x, -0.5, y));
        CHECK(test_rel_err(y, ref, m) < 1e-14, "spmv error %g", test_rel_err(y, ref, m));
        free(dense); free(x); free(y); free(ref);
        adia_matrix_destroy(A);
        adia_matrix_destroy(T);
        adia_matrix_destroy(TT);
    }
}

static void test_csr_format(void)
{
    adia_matrix *A = test_random_matrix(9, 101, 77, 0.05), *B = NULL;
    for (int vt = 0; vt < 2; vt++) {
        adia_format *F = NULL;
        CHECK_OK(adia_format_build(A, "csr", NULL, (adia_value_type)vt, &F));
        CHECK(adia_format_padded_zeros(F) == 0, "no padding");
        CHECK(adia_format_bytes(F) > adia_format_storage_bytes(F), "bytes include vectors");
        double e = test_format_spmv_error(F, A, 3, 1.5, 0.5);
        CHECK(e < (vt ? 1e-6 : 1e-14), "csr %s spmv err %g", vt ? "float" : "double", e);
        if (vt == 0) {
            CHECK_OK(adia_format_to_matrix(F, &B));
            CHECK(adia_matrix_equal(A, B), "csr round trip");
            adia_matrix_destroy(B);
        }
        adia_format_destroy(F);
    }
    adia_format *F = NULL;
    CHECK_ERR(adia_format_build(A, "nosuch", NULL, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG, "nosuch");
    adia_format_params p;
    adia_format_params_default(&p);
    CHECK_OK(adia_format_params_parse(&p, "B=128,C=32,sigma=256"));
    CHECK(p.block_rows == 128 && p.sell_c == 32 && p.sell_sigma == 256, "params parsed");
    CHECK_ERR(adia_format_params_parse(&p, "C=0"), ADIA_ERR_INVALID_ARG, "C=0");
    CHECK_ERR(adia_format_params_parse(&p, "bogus=3"), ADIA_ERR_INVALID_ARG, "bogus");
    CHECK_OK(adia_format_params_parse(&p, "stage=off"));
    CHECK(p.stage == 1, "stage=off parsed: %d", (int)p.stage);
    CHECK_OK(adia_format_params_parse(&p, "stage=force,interleave=off"));
    CHECK(p.stage == 2 && p.interleave == 1, "stage=force parsed: %d", (int)p.stage);
    p.stage = 3;
    CHECK_ERR(adia_format_params_check(&p, 10, 10), ADIA_ERR_INVALID_ARG,
              "stage=3 must be 1 (off) or 2 (force)");
    CHECK_ERR(adia_format_params_parse(&p, "stage=fast"), ADIA_ERR_INVALID_ARG, "stage=fast");
    adia_format_params_default(&p);
    CHECK(adia_format_exists("csr") && !adia_format_exists("xyz"), "registry");
    adia_matrix_destroy(A);
}

/* Format parameters are bounded by twice the matrix (or 1024, the floor that
 * keeps defaults working on small matrices): every format, one check, a
 * message naming format, parameter, value and bound; values at the bound
 * still build. */
static void test_params_bounded(void)
{
    adia_matrix *A = test_generate("band:3000,2");
    if (!A) return;
    static const struct { const char *fmt, *params, *needle; } bad[] = {
        {"ell", "width=2000000000", "ell: width=2000000000 too large: the width must be at most "
                                    "max(2 x columns, 1024) = 6000 for this 3000 x 3000 matrix"},
        {"dia", "B=6001", "dia: B=6001 too large"},
        {"brcsd1", "eta=100000", "brcsd1: eta=100000 too large"},
        {"hdi", "hack=6016", "hdi: hack=6016 too large"},
        {"sell", "C=7000", "sell: C=7000 too large"},
        {"sell", "sigma=1000000", "sell: sigma=1000000 too large"},
        {"bcsr", "r=6001", "bcsr: r=6001 too large"},
        {"rgcsr", "group=70000", "rgcsr: group=70000 too large"},
        {"cmrs", "strip=99999", "cmrs: strip=99999 too large"},
        {"scsr", "streams=123456", "scsr: streams=123456 too large"},
        {"pcsr", "pad=1000000", "pcsr: pad=1000000 too large"},
        {"qcsr", "qt=40000", "qcsr: qt=40000 too large"},
        {"csr", "B=2000000000", "csr: B=2000000000 too large"},   /* unused, still absurd */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        adia_format_params p;
        adia_format_params_default(&p);
        CHECK_OK(adia_format_params_parse(&p, bad[i].params));
        adia_format *F = NULL;
        CHECK_ERR(adia_format_build(A, bad[i].fmt, &p, ADIA_DOUBLE, &F), ADIA_ERR_INVALID_ARG,
                  bad[i].needle);
        CHECK(F == NULL, "%s %s: no format", bad[i].fmt, bad[i].params);
    }
    /* the same bound without a build, and for a plan's hints: the caller's
     * error (it was "out of memory: no format fits") */
    adia_format_params q;
    adia_format_params_default(&q);
    CHECK_OK(adia_format_params_parse(&q, "B=6001"));
    CHECK_ERR(adia_format_params_check(&q, 3000, 3000), ADIA_ERR_INVALID_ARG,
              "format parameters: B=6001 too large: the row block must be at most max(2 x rows, "
              "1024) = 6000 for this 3000 x 3000 matrix");
    adia_plan *P = NULL;
    adia_plan_hints h = {.params = &q};
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "B=6001 too large");
    CHECK(P == NULL, "no plan");
    q.block_rows = 6000;
    CHECK_OK(adia_format_params_check(&q, 3000, 3000));
    q.tpr = 3;
    CHECK_ERR(adia_format_params_check(&q, 3000, 3000), ADIA_ERR_INVALID_ARG, "tpr=3");
    static const struct { const char *fmt, *params; } good[] = {
        {"ell", "width=3000"}, {"dia", "B=1024"}, {"scsr", "streams=3000"}, {"sell", "C=64"},
        {"brcsd2", "B=3005"},   /* one piece a little taller than the matrix */
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        adia_format_params p;
        adia_format_params_default(&p);
        CHECK_OK(adia_format_params_parse(&p, good[i].params));
        adia_format *F = NULL;
        CHECK(adia_format_build(A, good[i].fmt, &p, ADIA_DOUBLE, &F) == ADIA_OK, "%s %s: %s",
              good[i].fmt, good[i].params, adia_last_error());
        adia_format_destroy(F);
    }
    adia_matrix_destroy(A);
}

/* A request beyond the memory available is refused before malloc, which
 * Linux would grant and then kill the process for: DIA of an unstructured
 * matrix (about 1.4 million diagonals x 10^6 rows, some 11 TB). */
static void test_refused_allocation(void)
{
    adia_matrix *A = NULL;
    adia_format *F = (adia_format *)&A;   /* must be reset to NULL */
    CHECK_OK(adia_matrix_generate("random:1000000,4", &A));
    CHECK_ERR(adia_format_build(A, "dia", NULL, ADIA_DOUBLE, &F), ADIA_ERR_NO_MEMORY,
              "TB, budget");
    CHECK(F == NULL, "no format after a refused allocation");
    CHECK(test_contains(adia_last_error(), "diagonal data"), "names what: %s", adia_last_error());
    adia_matrix_destroy(A);
}

/* The process budget: set, reported, applied to large requests with both
 * figures in the message, and back to the default (half of MemAvailable). */
static void test_memory_budget(void)
{
    int64_t dflt = adia_memory_budget();
    CHECK(dflt > 0 && dflt <= adia_memory_available(), "default budget %lld of %lld available",
          (long long)dflt, (long long)adia_memory_available());
    adia_matrix *A = NULL;
    adia_format *F = NULL;
    CHECK_OK(adia_matrix_generate("random:1000000,4", &A));
    CHECK_OK(adia_set_memory_budget(300000000));
    CHECK(adia_memory_budget() == 300000000, "budget set");
    CHECK_ERR(adia_format_build(A, "dia", NULL, ADIA_DOUBLE, &F), ADIA_ERR_NO_MEMORY,
              "budget 300.0 MB (set by adia_set_memory_budget");
    CHECK(F == NULL, "no format after the refusal");
    /* a huge count is refused before the arrays are read or copied */
    int32_t r[1] = {0}, c[1] = {0};
    double v[1] = {1};
    adia_matrix *B = NULL;
    CHECK_ERR(adia_matrix_create_coo(10, 10, (int64_t)1 << 40, r, c, v, ADIA_DOUBLE, &B),
              ADIA_ERR_NO_MEMORY, "adia_matrix_create_coo needs 30.8 TB");
    CHECK(B == NULL, "no matrix after the refusal");
    CHECK_OK(adia_set_memory_budget(0));
    CHECK(adia_memory_budget() <= dflt * 2 && adia_memory_budget() > 0, "default again");
    adia_matrix_destroy(A);
}

/* The device-memory check before an upload: the decision and its
 * message (the free figure comes from cudaMemGetInfo on a GPU). */
static void test_device_memory_check(void)
{
    CHECK_OK(adia__device_memory_check(1000, 1000, "upload"));
    CHECK_ERR(adia__device_memory_check(2100000000, 1300000000, "adia_format_upload: dia"),
              ADIA_ERR_NO_MEMORY, "adia_format_upload: dia needs 2.1 GB of device memory, "
              "1.3 GB free on the device");
    CHECK_ERR(adia__device_memory_check(-1, 1300000000, "x"), ADIA_ERR_NO_MEMORY,
              "more than 9.2 EB");
}

/* Built without CUDA: the device-CSR conversion says so, and leaves no handle. */
static void test_device_build_without_cuda(void)
{
#ifndef ADIA_HAVE_CUDA
    adia_format *F = (adia_format *)&F;   /* must be reset to NULL */
    CHECK_ERR(adia_format_build_brcsd2_device(4, 4, 0, NULL, NULL, NULL, NULL, ADIA_DOUBLE, &F),
              ADIA_ERR_NO_DEVICE, "built without CUDA");
    CHECK(F == NULL, "no format from a build without CUDA");
    CHECK_ERR(adia__gpu_check_free(1, "upload"), ADIA_ERR_NO_DEVICE, "built without CUDA");
#endif
}

/* The device-CSR plan's argument errors come before any device work (so
 * they hold on a machine without a GPU); without CUDA the call says so.
 * The fused-dot product refuses a matrix that is not square. */
static void test_device_csr_plan_arguments(void)
{
    int32_t rp[2] = {0, 0};
    adia_device_csr A = {1, 1, 0, rp, 16, NULL, NULL, ADIA_DOUBLE};
    adia_plan *P = (adia_plan *)&P;   /* must be reset to NULL */
#ifdef ADIA_HAVE_CUDA
    CHECK_ERR(adia_plan_create_device_csr(&A, NULL, &P), ADIA_ERR_INVALID_ARG, "32 or 64 bits");
    CHECK(P == NULL, "no plan on failure");
    A.rowptr_bits = 32;
    A.values_type = (adia_value_type)9;
    CHECK_ERR(adia_plan_create_device_csr(&A, NULL, &P), ADIA_ERR_INVALID_ARG, "double or float");
    A.values_type = ADIA_DOUBLE;
    A.rows = -1;
    CHECK_ERR(adia_plan_create_device_csr(&A, NULL, &P), ADIA_ERR_INVALID_ARG, "negative size");
    A.rows = 1;
    A.nnz = 3;   /* nonzeros but no columns or values */
    CHECK_ERR(adia_plan_create_device_csr(&A, NULL, &P), ADIA_ERR_INVALID_ARG, "NULL device array");
    CHECK_ERR(adia_plan_create_device_csr(NULL, NULL, &P), ADIA_ERR_INVALID_ARG, "NULL");
    adia_matrix *R = test_random_matrix(5, 3, 7, 0.5);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(R, "csr", NULL, ADIA_DOUBLE, &F));
    adia_dot_work dw = {0};
    CHECK_ERR(adia__format_spmv_dot_gpu(F, 1.0, NULL, 0.0, NULL, &dw, NULL), ADIA_ERR_INVALID_ARG,
              "square matrix (3 x 7)");
    adia_format_destroy(F);
    adia_matrix_destroy(R);
#else
    CHECK_ERR(adia_plan_create_device_csr(&A, NULL, &P), ADIA_ERR_NO_DEVICE, "without CUDA");
    CHECK(P == NULL, "no plan from a build without CUDA");
#endif
}

/* The device-DIA plan's and the stencil fill's argument errors come
 * before any device work too; without CUDA both say so. */
static void test_device_dia_arguments(void)
{
    int64_t off[3] = {-1, 0, 1}, unordered[3] = {0, -1, 1};
    double dummy = 0;
    adia_device_dia A = {4, 4, 3, off, &dummy, ADIA_DOUBLE, 0};
    adia_plan *P = (adia_plan *)&P;   /* must be reset to NULL */
#ifdef ADIA_HAVE_CUDA
    adia_device_dia bad = A;
    bad.rows = -1;
    CHECK_ERR(adia_plan_create_device_dia(&bad, NULL, &P), ADIA_ERR_INVALID_ARG, "negative size");
    CHECK(P == NULL, "no plan on failure");
    bad = A;
    bad.values_type = (adia_value_type)9;
    CHECK_ERR(adia_plan_create_device_dia(&bad, NULL, &P), ADIA_ERR_INVALID_ARG, "double or float");
    bad = A;
    bad.values = NULL;
    CHECK_ERR(adia_plan_create_device_dia(&bad, NULL, &P), ADIA_ERR_INVALID_ARG, "NULL array");
    bad = A;
    bad.offsets = unordered;
    CHECK_ERR(adia_plan_create_device_dia(&bad, NULL, &P), ADIA_ERR_INVALID_ARG, "not ascending");
    bad = A;
    bad.rows = 1;   /* offset -1 of a 1 x 4 matrix: no entry */
    CHECK_ERR(adia_plan_create_device_dia(&bad, NULL, &P), ADIA_ERR_INVALID_ARG, "offset -1");
    CHECK_ERR(adia_plan_create_device_dia(NULL, NULL, &P), ADIA_ERR_INVALID_ARG, "NULL");
    CHECK_ERR(adia_plan_create_device_dia(&A, NULL, NULL), ADIA_ERR_INVALID_ARG, "plan is NULL");
    CHECK_ERR(adia_stencil_fill_device("lap2d5:4", 0, 16, NULL, ADIA_DOUBLE, NULL),
              ADIA_ERR_INVALID_ARG, "values is NULL");
    CHECK_ERR(adia_stencil_fill_device("lap2d5:4", 0, 16, &dummy, (adia_value_type)9, NULL),
              ADIA_ERR_INVALID_ARG, "value type 9");
    CHECK_ERR(adia_stencil_fill_device("lap2d5:4", 10, 7, &dummy, ADIA_DOUBLE, NULL),
              ADIA_ERR_DIMENSION, "rows 10 + 7");
    CHECK_ERR(adia_stencil_fill_device("lap2d5:4", -1, 1, &dummy, ADIA_DOUBLE, NULL),
              ADIA_ERR_DIMENSION, "rows -1");
    CHECK_ERR(adia_stencil_fill_device("band:100,3", 0, 1, &dummy, ADIA_DOUBLE, NULL),
              ADIA_ERR_UNSUPPORTED, "not a stencil");
#else
    (void)unordered;
    CHECK_ERR(adia_plan_create_device_dia(&A, NULL, &P), ADIA_ERR_NO_DEVICE, "without CUDA");
    CHECK(P == NULL, "no plan from a build without CUDA");
    CHECK_ERR(adia_stencil_fill_device("lap2d5:4", 0, 16, &dummy, ADIA_DOUBLE, NULL),
              ADIA_ERR_NO_DEVICE, "without CUDA");
#endif
}

/* adia_spmv_sums_async wants a GPU plan: a CPU plan is refused, with no
 * work size, in every build; adia_solve_operator on the device wants the
 * device callbacks. */
static void test_device_operator_arguments(void)
{
    adia_matrix *A = test_generate("lap2d5:4");
    adia_plan *P = NULL;
    adia_plan_hints h = {.vtype = ADIA_DOUBLE, .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
    CHECK_OK(adia_plan_create(A, &h, &P));
    double v[64] = {0};
    CHECK(adia_spmv_sums_work_bytes(P) == 0, "no work for a CPU plan");
    CHECK_ERR(adia_spmv_sums_async(P, 1.0, v, v + 16, NULL, NULL, v + 32, v + 40, NULL),
              ADIA_ERR_UNSUPPORTED, "a GPU plan is needed");
    adia_operator op = {.n = 16, .max_abs = 4};
    adia_solve_options o;
    adia_solve_options_default(&o);
    o.device = 1;
    CHECK_ERR(adia_solve_operator(&op, v, v + 16, &o, NULL), ADIA_ERR_INVALID_ARG,
              "op->apply_device");
    o.device = -1;   /* no device callbacks: the CPU, which wants apply */
    CHECK_ERR(adia_solve_operator(&op, v, v + 16, &o, NULL), ADIA_ERR_INVALID_ARG, "op->apply");
    CHECK_ERR(adia_solve_operator_device(&op, v, v + 16, &o, NULL, NULL), ADIA_ERR_INVALID_ARG,
              "op->apply_device");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* Cores other processes keep busy, from a window's clock ticks: their
 * share of the machine (busy minus this process) times the processors. */
static void test_busy_cores(void)
{
    CHECK(adia__busy_cores(200, 100, 200, 2) == 1, "one of two cores busy elsewhere");
    CHECK(adia__busy_cores(130, 100, 200, 2) == 0, "0.3 of a core rounds to none");
    CHECK(adia__busy_cores(200, 0, 200, 2) == 2, "both busy elsewhere");
    CHECK(adia__busy_cores(100, 120, 200, 2) == 0, "own ticks above the machine's: none");
    CHECK(adia__busy_cores(50, 0, 0, 2) == 0, "empty window: none");
    CHECK(adia__busy_cores(6400, 0, 6400, 4) == 4, "a whole host busy: at most procs");
    int t = adia_threads();
    CHECK(t >= 1 && t <= adia_thread_limit(), "adia_threads() = %d within [1, %d]", t,
          adia_thread_limit());
}

int main(void)
{
    TEST_BEGIN();
    test_busy_cores();
    test_coo_duplicates_sorted();
    test_csr_routes();
    test_bad_input();
    test_transpose_and_spmv();
    test_transpose_large();
    test_csr_format();
    test_params_bounded();
    test_refused_allocation();
    test_memory_budget();
    test_device_memory_check();
    test_device_build_without_cuda();
    test_device_csr_plan_arguments();
    test_device_dia_arguments();
    test_device_operator_arguments();
    return TEST_END();
}
