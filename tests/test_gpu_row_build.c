/* test_gpu_row_build.c -- the row formats csr, ell and sell built on the
 * GPU from a device CSR (adia__format_build_device: issue 28, item 1)
 * against the host builds of the same format and parameters: every array
 * equal (row pointers, columns, padding, permutation, slice pointers and
 * widths, values bitwise), the host copy coming down at its first use, the
 * product on the device equal to the host's.  The device row statistics
 * equal the host's (longest row, SELL's slots).  Matrices: unstructured
 * (random, power-law), a stencil, hand-made ones (empty rows, one row, a
 * wide and a tall one, no nonzeros, explicit zeros); sell with default,
 * sigma=1 and small C and sigma; ell with a given width and one too small
 * (refused, naming the longest row); double and float; an invalid device
 * CSR (a column out of the matrix) refused naming its row.  The planner
 * then plans a non-diagonal matrix on the device (MODEL and MEASURE, from
 * a host matrix and from a device CSR) instead of on the host.  Skips (77)
 * without a device. */
#include "testutil.h"
#include "plan/plan_internal.h"
#include "formats/row_formats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include "cuda/row_build.h"

#include <cuda_runtime.h>

#define SAME_N(field) \
    CHECK(G->field == H->field, "%s: " #field " %lld (device) vs %lld (host)", label, \
          (long long)G->field, (long long)H->field)

static void same_csr(const char *label, const adia_csr *G, const adia_csr *H)
{
    SAME_N(rows);
    SAME_N(cols);
    SAME_N(nnz);
    SAME_N(vtype);
    if (G->rows != H->rows || G->nnz != H->nnz || G->vtype != H->vtype) return;
    test_same_bytes(label, "rowptr", G->rowptr, H->rowptr, (int64_t)H->rows + 1, 8);
    test_same_bytes(label, "colind", G->colind, H->colind, H->nnz, 4);
    test_same_bytes(label, "values", G->values, H->values, H->nnz, adia_value_size(H->vtype));
}

static void same_ell(const char *label, const adia_ell *G, const adia_ell *H)
{
    SAME_N(rows);
    SAME_N(cols);
    SAME_N(width);
    SAME_N(nnz);
    SAME_N(vtype);
    if (G->rows != H->rows || G->width != H->width || G->vtype != H->vtype) return;
    const int64_t n = (int64_t)H->width * H->rows;
    test_same_bytes(label, "colind", G->colind, H->colind, n, 4);
    test_same_bytes(label, "values", G->values, H->values, n, adia_value_size(H->vtype));
}

static void same_sell(const char *label, const adia_sell *G, const adia_sell *H)
{
    SAME_N(rows);
    SAME_N(cols);
    SAME_N(C);
    SAME_N(sigma);
    SAME_N(nslices);
    SAME_N(nnz);
    SAME_N(vtype);
    if (G->rows != H->rows || G->nslices != H->nslices || G->vtype != H->vtype) return;
    test_same_bytes(label, "slice_ptr", G->slice_ptr, H->slice_ptr, (int64_t)H->nslices + 1, 8);
    if (G->slice_ptr[G->nslices] != H->slice_ptr[H->nslices]) return;
    test_same_bytes(label, "slice_width", G->slice_width, H->slice_width, H->nslices, 4);
    test_same_bytes(label, "perm", G->perm, H->perm, H->rows, 4);
    const int64_t n = H->slice_ptr[H->nslices];
    test_same_bytes(label, "colind", G->colind, H->colind, n, 4);
    test_same_bytes(label, "values", G->values, H->values, n, adia_value_size(H->vtype));
}

/* The device build of fmt with params against the host build: arrays,
 * sizes in bytes, the product on the device. */
static void compare(const char *name, const adia_matrix *A, const adia_gpu_csr *g,
                    const char *fmt, const char *params, adia_value_type vt)
{
    char label[256];
    snprintf(label, sizeof label, "%s %s [%s] %s", name, fmt, params, adia_value_type_name(vt));
    adia_format_params p;
    adia_format_params_default(&p);
    CHECK_OK(adia_format_params_parse(&p, params));
    adia_format *H = NULL, *G = NULL;
    CHECK_OK(adia_format_build(A, fmt, &p, vt, &H));
    adia_status s = adia__format_build_device(fmt, g, &p, vt, 0, &G, NULL);
    CHECK(s == ADIA_OK, "%s: device build: %s", label, adia_last_error());
    if (!H || !G) goto done;
    CHECK(G->dev && G->host_stale, "%s: built on the device, host copy left for later", label);
    CHECK(adia_format_storage_bytes(G) == adia_format_storage_bytes(H),
          "%s: storage %lld bytes (device) vs %lld (host)", label,
          (long long)adia_format_storage_bytes(G), (long long)adia_format_storage_bytes(H));
    {   /* the product on the device first, before any host copy exists */
        const int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
        double *x = malloc((size_t)n * 8 + 8), *y = calloc((size_t)m + 1, 8),
               *ref = calloc((size_t)m + 1, 8);
        uint64_t seed = 5;
        for (int32_t j = 0; j < n; j++)
            x[j] = vt == ADIA_FLOAT ? (float)test_rand(&seed) : test_rand(&seed);
        CHECK_OK(test_gpu_format_spmv(G, 1.0, x, 0.0, y));
        adia_matrix *R = test_rounded(A, vt);   /* the values the format holds, in double */
        if (R) CHECK_OK(adia_matrix_spmv(R, 1.0, x, 0.0, ref));
        adia_matrix_destroy(R);
        double err = m > 0 ? test_rel_err(y, ref, m) : 0;
        CHECK(err <= (vt == ADIA_FLOAT ? 1e-5 : 1e-13), "%s: product error %.3g", label, err);
        free(x), free(y), free(ref);
    }
    if (!strcmp(fmt, "csr")) {   /* the same kernel from the device's statistics as from the host's */
        CHECK_OK(adia_format_upload(H));
        CHECK(adia_format_kernel(G) == adia_format_kernel(H), "%s: kernel %s (device) vs %s (host)",
              label, adia_gpu_kernel_name(adia_format_kernel(G)),
              adia_gpu_kernel_name(adia_format_kernel(H)));
    }
    CHECK_OK(adia__format_host(G));
    if (!strcmp(fmt, "csr")) same_csr(label, G->impl, H->impl);
    else if (!strcmp(fmt, "ell")) same_ell(label, G->impl, H->impl);
    else same_sell(label, G->impl, H->impl);
    {   /* the host copy round-trips to the matrix */
        adia_matrix *B = NULL;
        CHECK_OK(adia_format_to_matrix(G, &B));
        adia_matrix *R = test_rounded(A, vt);
        if (B && R) CHECK(test_rows_equal(R, 0, B), "%s: back to the matrix", label);
        adia_matrix_destroy(B);
        adia_matrix_destroy(R);
    }
done:
    adia_format_destroy(G);
    adia_format_destroy(H);
}

/* The device row statistics against the host's counts. */
static void stats(const char *name, const adia_matrix *A, const adia_gpu_csr *g,
                  const char *params)
{
    adia_format_params p;
    adia_format_params_default(&p);
    CHECK_OK(adia_format_params_parse(&p, params));
    adia_gpu_row_stats st;
    CHECK_OK(adia__gpu_row_stats(g, &p, &st));
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    int64_t mx = 0;
    uint64_t sq = 0;
    for (int32_t r = 0; r < v.rows; r++) {
        int64_t l = v.rowptr[r + 1] - v.rowptr[r];
        mx = l > mx ? l : mx;
        sq += (uint64_t)(l * l);
    }
    CHECK(st.row_max == mx && st.len_sq == sq, "%s: longest row %lld / %lld, sum of squares "
          "%llu / %llu (device / host)", name, (long long)st.row_max, (long long)mx,
          (unsigned long long)st.len_sq, (unsigned long long)sq);
    adia_format *S = NULL;
    CHECK_OK(adia_format_build(A, "sell", &p, ADIA_DOUBLE, &S));
    if (S) {
        const adia_sell *H = S->impl;
        CHECK(st.sell_slots == H->slice_ptr[H->nslices] && st.sell_slices == H->nslices,
              "%s [%s]: sell slots %lld / %lld, slices %lld / %d", name, params,
              (long long)st.sell_slots, (long long)H->slice_ptr[H->nslices],
              (long long)st.sell_slices, (int)H->nslices);
    }
    adia_format_destroy(S);
}

static void check_matrix(const char *name, adia_matrix *A)
{
    CHECK(A != NULL, "%s generated", name);
    if (!A) return;
    adia_gpu_csr g;
    CHECK(test_gpu_csr_upload(A, &g), "%s: device CSR", name);
    static const char *const sell_params[] = {"", "sigma=1", "C=8,sigma=1", "C=4,sigma=16"};
    for (int f = 0; f < 2; f++) {
        adia_value_type vt = f ? ADIA_FLOAT : ADIA_DOUBLE;
        compare(name, A, &g, "csr", "", vt);
        compare(name, A, &g, "ell", "", vt);
        for (size_t i = 0; i < sizeof sell_params / sizeof *sell_params; i++)
            compare(name, A, &g, "sell", sell_params[i], vt);
    }
    for (size_t i = 0; i < sizeof sell_params / sizeof *sell_params; i++)
        stats(name, A, &g, sell_params[i]);
    test_gpu_csr_free(&g);
    adia_matrix_destroy(A);
}

static adia_matrix *from_rows(int32_t rows, int32_t cols, int64_t nnz, const int64_t *rp,
                              const int32_t *ci, const double *v)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_csr(rows, cols, nnz, rp, ci, v, ADIA_DOUBLE, &A));
    return A;
}

/* rows x cols, row r keeping column c where a hash of (r, c) is 0 modulo
 * 1 + r % spread: row lengths from all columns down to a few. */
static adia_matrix *rect(int32_t rows, int32_t cols, int spread)
{
    test_coo m = {.rows = rows, .cols = cols};
    for (int32_t r = 0; r < rows; r++)
        for (int32_t c = 0; c < cols; c++) {
            uint64_t z = ((uint64_t)r * 2654435761u) ^ ((uint64_t)c * 40503u + 977);
            if ((z >> 3) % (uint64_t)(1 + r % spread) == 0) test_coo_add(&m, r, c, 1.0 + (z % 97) / 8.0);
        }
    return test_coo_matrix(&m);
}

static void hand_made(void)
{
    /* rows 1 and 3 empty, an explicit zero, a value zero only in float */
    int64_t rp[] = {0, 2, 2, 5, 5, 7};
    int32_t ci[] = {0, 4, 1, 2, 3, 3, 4};
    double v[] = {2, -1, 0, 1e-50, 4, 5, 6};
    check_matrix("empty rows", from_rows(5, 5, 7, rp, ci, v));
    int64_t rp1[] = {0, 4};
    int32_t ci1[] = {0, 3, 5, 6};
    double v1[] = {1, 2, 3, 4};
    check_matrix("one row", from_rows(1, 7, 4, rp1, ci1, v1));
    int64_t rp0[] = {0, 0, 0, 0};
    check_matrix("no nonzeros", from_rows(3, 4, 0, rp0, NULL, NULL));
    check_matrix("wide", rect(37, 911, 40));
    check_matrix("tall", rect(1001, 67, 23));
}

/* csr's AUTO kernel: scalar for short rows on diagonals (coalesced x) and
 * for very short rows, adaptive for scattered rows of 4-9 entries. */
static void csr_kernels(void)
{
    static const struct { const char *spec; adia_gpu_kernel want; } cases[] = {
        {"lap2d5:150", ADIA_KERNEL_CSR_SCALAR},
        {"randdiag:20000,9,300", ADIA_KERNEL_CSR_SCALAR},
        {"random:20000,3", ADIA_KERNEL_CSR_SCALAR},
        {"random:20000,7", ADIA_KERNEL_CSR_ADAPTIVE},
        {"lap3d27:30", ADIA_KERNEL_CSR_ADAPTIVE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        adia_matrix *A = test_generate(cases[i].spec);
        adia_gpu_csr g;
        CHECK(test_gpu_csr_upload(A, &g), "%s on the device", cases[i].spec);
        adia_format *F = NULL;
        CHECK_OK(adia__format_build_device("csr", &g, NULL, ADIA_DOUBLE, 0, &F, NULL));
        if (F)
            CHECK(adia_format_kernel(F) == cases[i].want, "%s: csr kernel %s, expected %s",
                  cases[i].spec, adia_gpu_kernel_name(adia_format_kernel(F)),
                  adia_gpu_kernel_name(cases[i].want));
        adia_format_destroy(F);
        test_gpu_csr_free(&g);
        adia_matrix_destroy(A);
    }
}

/* ell with a given width: wider pads, narrower is refused naming the
 * longest row; an invalid device CSR is refused naming its row. */
static void refusals(void)
{
    adia_matrix *A = test_generate("random:500,6");
    adia_gpu_csr g;
    CHECK(test_gpu_csr_upload(A, &g), "random:500,6 on the device");
    adia_csr_view v;
    CHECK_OK(adia_matrix_csr(A, &v));
    int64_t mx = 0;
    for (int32_t r = 0; r < v.rows; r++)
        mx = v.rowptr[r + 1] - v.rowptr[r] > mx ? v.rowptr[r + 1] - v.rowptr[r] : mx;
    char wide[32], narrow[32], msg[64];
    snprintf(wide, sizeof wide, "width=%lld", (long long)mx + 3);
    snprintf(narrow, sizeof narrow, "width=%lld", (long long)mx - 1);
    compare("random:500,6", A, &g, "ell", wide, ADIA_DOUBLE);
    adia_format_params p;
    adia_format_params_default(&p);
    CHECK_OK(adia_format_params_parse(&p, narrow));
    adia_format *F = NULL;
    snprintf(msg, sizeof msg, "a row has %lld entries", (long long)mx);
    CHECK_ERR(adia__format_build_device("ell", &g, &p, ADIA_DOUBLE, 0, &F, NULL),
              ADIA_ERR_INVALID_ARG, msg);
    CHECK(F == NULL, "no format on a refusal");
    /* column 500 in row 7 (the matrix has 500 columns) */
    int32_t *ci = malloc((size_t)v.nnz * 4);
    memcpy(ci, v.colind, (size_t)v.nnz * 4);
    ci[v.rowptr[8] - 1] = 500;
    adia_gpu_csr bad = g;
    bad.colind = test_gpu_copy(ci, (size_t)v.nnz * 4);
    static const char *const fmts[] = {"csr", "ell", "sell"};
    for (int i = 0; i < 3; i++)
        CHECK_ERR(adia__format_build_device(fmts[i], &bad, NULL, ADIA_DOUBLE, 0, &F, NULL),
                  ADIA_ERR_INVALID_MATRIX, "row 7");
    cudaFree((void *)bad.colind);
    free(ci);
    test_gpu_csr_free(&g);
    adia_matrix_destroy(A);
}

/* A non-diagonal matrix planned for the GPU: on the device now (the CSR
 * uploaded once, a row format built there), MODEL and MEASURE, double and
 * float; its explain says so; its product is right; a second plan chooses
 * the same. */
static void planner(void)
{
    static const char *const specs[] = {"random:3000,8", "powerlaw:4000,1,200", "77 x 301"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        adia_matrix *A = i < 2 ? test_generate(specs[i]) : rect(77, 301, 9);
        CHECK(A != NULL, "%s", specs[i]);
        for (int k = 0; A && k < 4; k++) {
            adia_plan_hints h = {.expected_calls = 1000, .device = 1,
                                 .vtype = k & 1 ? ADIA_FLOAT : ADIA_DOUBLE,
                                 .chooser = k & 2 ? ADIA_CHOOSE_MEASURE : ADIA_CHOOSE_MODEL};
            adia_plan *P = NULL, *Q = NULL;
            CHECK_OK(adia_plan_create(A, &h, &P));
            CHECK_OK(adia_plan_create(A, &h, &Q));
            if (!P || !Q) {
                adia_plan_destroy(P);
                adia_plan_destroy(Q);
                continue;
            }
            char why[8192];
            CHECK_OK(adia_plan_explain(P, why, sizeof why));
            const char *got = adia_plan_format_name(P);
            CHECK(!strcmp(got, "csr") || !strcmp(got, "ell") || !strcmp(got, "sell"),
                  "%s: row format, got %s", specs[i], got);
            CHECK(test_contains(why, "uploaded once") && test_contains(why, "not a diagonal matrix")
                      && test_contains(why, "row formats built on the GPU"),
                  "%s %s: planned on the device:\n%s", specs[i],
                  adia_chooser_name(h.chooser), why);
            if (h.chooser == ADIA_CHOOSE_MODEL)
                CHECK(!strcmp(got, adia_plan_format_name(Q)), "%s: chosen twice alike (%s, %s)",
                      specs[i], got, adia_plan_format_name(Q));
            double err = test_gpu_plan_error(P, A);
            CHECK(err <= (k & 1 ? 1e-5 : 1e-12), "%s %s: product error %.3g", specs[i], got, err);
            adia_plan_destroy(P);
            adia_plan_destroy(Q);
        }
        /* fixed row formats are built on the device too */
        static const char *const fixed[] = {"csr", "ell", "sell"};
        for (int f = 0; A && f < 3; f++) {
            adia_plan_hints h = {.device = 1, .chooser = ADIA_CHOOSE_FIXED, .format = fixed[f]};
            adia_plan *P = NULL;
            CHECK_OK(adia_plan_create(A, &h, &P));
            char why[8192] = "";
            if (P) CHECK_OK(adia_plan_explain(P, why, sizeof why));
            CHECK(P && !strcmp(adia_plan_format_name(P), fixed[f]) &&
                      test_contains(why, "uploaded once") && test_contains(why, "as asked"),
                  "%s fixed %s on the device:\n%s", specs[i], fixed[f], why);
            if (P) CHECK(test_gpu_plan_error(P, A) <= 1e-12, "%s fixed %s: product", specs[i],
                         fixed[f]);
            adia_plan_destroy(P);
        }
        adia_matrix_destroy(A);
    }
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    check_matrix("random:2001,7", test_generate("random:2001,7"));
    check_matrix("powerlaw:3001,1,300", test_generate("powerlaw:3001,1,300"));
    check_matrix("lap2d5:33x17", test_generate("lap2d5:33x17"));
    hand_made();
    csr_kernels();
    refusals();
    planner();
    return TEST_END();
}
#endif
