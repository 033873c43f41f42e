/* test_gpu_plan.c -- the planner on the GPU when the device is short of
 * memory (issue 6, "a GPU out of memory falls back to a smaller format or
 * to CSR with a warning, never a crash"): with all but a few MB of device
 * memory taken, adia_plan_create must either succeed with a format that
 * fits (the fallback noted in the explanation) and compute the right y, or
 * fail with ADIA_ERR_NO_MEMORY and a message -- no other status, no crash;
 * and once the memory is back, a plan must work again (no failure cached).
 * Skips (77) without a device. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

/* Take device memory until about `leave` bytes are free; returns the
 * blocks (NULL-terminated, caller frees with release). */
static void **hog(size_t leave)
{
    enum { MAX = 4096 };
    void **blocks = calloc(MAX + 1, sizeof *blocks);
    size_t chunk = (size_t)1 << 30;
    for (int k = 0; blocks && k < MAX && chunk >= ((size_t)1 << 20);) {
        size_t free_b = 0, total = 0;
        if (cudaMemGetInfo(&free_b, &total) != cudaSuccess || free_b <= leave) break;
        if (chunk > free_b - leave) chunk = free_b - leave;
        if (cudaMalloc(&blocks[k], chunk) == cudaSuccess) k++;
        else {
            blocks[k] = NULL;
            cudaGetLastError();
            chunk /= 2;
        }
    }
    return blocks;
}

static void release(void **blocks)
{
    for (int k = 0; blocks && blocks[k]; k++) cudaFree(blocks[k]);
    free(blocks);
}

static void test_short_of_memory(const char *spec, adia_chooser chooser, size_t leave)
{
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_generate(spec, &A));
    if (!A) return;
    adia_plan_hints h = {.expected_calls = 1000, .vtype = ADIA_DOUBLE, .device = 1,
                         .chooser = chooser};
    adia_plan *P = NULL;
    void **blocks = hog(leave);
    adia_status s = adia_plan_create(A, &h, &P);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", adia_last_error());
    release(blocks);   /* before checking y: the check needs x and y */
    if (s == ADIA_OK) {
        double err = test_gpu_plan_error(P, A);
        CHECK(err <= 1e-12, "%s, %zu bytes left: plan %s runs with error %.3g", spec, leave,
              adia_plan_format_name(P), err);
    } else {
        CHECK(s == ADIA_ERR_NO_MEMORY, "%s, %zu bytes left: status %d (%s), not a clean out of "
              "memory", spec, leave, (int)s, msg);
        CHECK(strlen(msg) > 0, "%s: out of memory without a message", spec);
    }
    adia_plan_destroy(P);
    P = NULL;
    /* the memory is back: a plan works again */
    CHECK_OK(adia_plan_create(A, &h, &P));
    if (P) CHECK(test_gpu_plan_error(P, A) <= 1e-12, "%s: plan after the shortage", spec);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* A's CSR in device memory as a caller would hold it: 32- or 64-bit row
 * pointers, double or float values (float: A's values must be floats). */
typedef struct dev_csr { adia_device_csr d; void *mem[3]; } dev_csr;

static int to_device_csr(const adia_matrix *A, int bits, adia_value_type vt, dev_csr *out)
{
    memset(out, 0, sizeof *out);
    adia_csr_view v;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return 0;
    int64_t rows = v.rows, nnz = v.nnz;
    size_t rp = (size_t)(rows + 1) * (bits / 8), vs = adia_value_size(vt);
    void *h_rp = malloc(rp + 1), *h_val = malloc((size_t)nnz * vs + 1);
    for (int64_t i = 0; i <= rows; i++)
        if (bits == 32) ((int32_t *)h_rp)[i] = (int32_t)v.rowptr[i];
        else ((int64_t *)h_rp)[i] = v.rowptr[i];
    for (int64_t k = 0; k < nnz; k++)
        if (vt == ADIA_FLOAT) ((float *)h_val)[k] = (float)v.values[k];
        else ((double *)h_val)[k] = v.values[k];
    int ok = cudaMalloc(&out->mem[0], rp + 1) == cudaSuccess &&
             cudaMalloc(&out->mem[1], (size_t)nnz * 4 + 1) == cudaSuccess &&
             cudaMalloc(&out->mem[2], (size_t)nnz * vs + 1) == cudaSuccess &&
             cudaMemcpy(out->mem[0], h_rp, rp, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(out->mem[1], v.colind, (size_t)nnz * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(out->mem[2], h_val, (size_t)nnz * vs, cudaMemcpyHostToDevice) == cudaSuccess;
    free(h_rp);
    free(h_val);
    out->d = (adia_device_csr){v.rows, v.cols, nnz, out->mem[0], bits, out->mem[1], out->mem[2], vt};
    return ok;
}

static void free_device_csr(dev_csr *c)
{
    for (int i = 0; i < 3; i++) cudaFree(c->mem[i]);
}

/* adia_plan_create_device_csr: the format it should choose, the product
 * against the CPU, the explain text, a CG solve on device vectors for the
 * SPD ones; the input untouched (a second plan of it agrees). */
static void check_device_plan(const char *spec, const char *want, int bits, adia_value_type in_vt,
                              const char *fixed, int spd)
{
    adia_matrix *A = test_generate(spec);
    CHECK(A != NULL, "%s generated", spec);
    if (!A) return;
    if (in_vt == ADIA_FLOAT) {   /* values exactly representable as floats */
        adia_matrix *F = NULL;
        adia_format *t = NULL;
        CHECK_OK(adia_format_build(A, "csr", NULL, ADIA_FLOAT, &t));
        CHECK_OK(adia_format_to_matrix(t, &F));
        adia_format_destroy(t);
        adia_matrix_destroy(A);
        A = F;
    }
    dev_csr c;
    CHECK(to_device_csr(A, bits, in_vt, &c), "%s: device CSR", spec);
    adia_plan_hints h = {.expected_calls = 1000, .device = 1};
    if (fixed) {
        h.chooser = ADIA_CHOOSE_FIXED;
        h.format = fixed;
    }
    adia_plan *P = NULL;
    adia_status s = adia_plan_create_device_csr(&c.d, &h, &P);
    CHECK(s == ADIA_OK, "%s (%d-bit, %s): %s", spec, bits, adia_value_type_name(in_vt),
          adia_last_error());
    if (s == ADIA_OK) {
        const char *got = adia_plan_format_name(P);
        if (want)
            CHECK(!strcmp(got, want), "%s: format %s, expected %s", spec, got, want);
        else   /* not a diagonal matrix: a row format built on the device */
            CHECK(!adia_format_is_diagonal(got), "%s: format %s for a non-diagonal matrix", spec, got);
        CHECK(adia_plan_device(P) == 1, "%s: a GPU plan", spec);
        double err = test_gpu_plan_error(P, A);
        CHECK(err <= 1e-12, "%s: device plan's product, error %.3g", spec, err);
        char why[2048];
        CHECK_OK(adia_plan_explain(P, why, sizeof why));
        CHECK(test_contains(why, "device memory"), "%s: explain says where from:\n%s", spec, why);
    }
    if (s == ADIA_OK && spd) {   /* b = A * ones on the device, x0 = 0 */
        int32_t n = adia_matrix_rows(A);
        double *one = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
        for (int32_t i = 0; i < n; i++) one[i] = 1;
        CHECK_OK(adia_matrix_spmv(A, 1.0, one, 0.0, b));
        void *db = NULL, *dx = NULL;
        adia_solve_options o;
        adia_solve_options_default(&o);
        adia_solve_info info;
        CHECK(cudaMalloc(&db, (size_t)n * 8) == cudaSuccess && cudaMalloc(&dx, (size_t)n * 8) == cudaSuccess &&
              cudaMemcpy(db, b, (size_t)n * 8, cudaMemcpyHostToDevice) == cudaSuccess &&
              cudaMemset(dx, 0, (size_t)n * 8) == cudaSuccess, "%s: solve vectors", spec);
        CHECK_OK(adia_plan_solve(P, db, dx, &o, &info, NULL));
        CHECK(info.converged, "%s: device-plan CG: %s", spec, info.stop);
        CHECK(cudaMemcpy(x, dx, (size_t)n * 8, cudaMemcpyDeviceToHost) == cudaSuccess, "download x");
        double e = 0;
        for (int32_t i = 0; i < n; i++) e = fmax(e, fabs(x[i] - 1));
        CHECK(e < 1e-5, "%s: x = ones within %.3g", spec, e);
        cudaFree(db);
        cudaFree(dx);
        free(one);
        free(b);
        free(x);
    }
    adia_plan_destroy(P);
    free_device_csr(&c);
    adia_matrix_destroy(A);
}

static void device_plan_errors(void)
{
    adia_matrix *A = test_generate("lap2d5:8");
    dev_csr c;
    CHECK(A && to_device_csr(A, 64, ADIA_DOUBLE, &c), "lap2d5:8 on the device");
    adia_plan *P = NULL;
    adia_device_csr bad = c.d;
    bad.rowptr_bits = 16;
    CHECK_ERR(adia_plan_create_device_csr(&bad, NULL, &P), ADIA_ERR_INVALID_ARG, "32 or 64 bits");
    CHECK(P == NULL, "no plan on failure");
    adia_plan_hints cpu = {.device = 0};   /* not read: the matrix is on the device */
    CHECK_OK(adia_plan_create_device_csr(&c.d, &cpu, &P));
    CHECK(P && adia_plan_device(P) == 1, "a device CSR's plan is a GPU plan");
    adia_plan_destroy(P);
    P = NULL;
    CHECK_ERR(adia_plan_create_device_csr(NULL, NULL, &P), ADIA_ERR_INVALID_ARG, "NULL");
    CHECK_ERR(adia_plan_create_device_csr(&c.d, NULL, NULL), ADIA_ERR_INVALID_ARG, "NULL");
    adia_plan_hints fx = {.device = 1, .chooser = ADIA_CHOOSE_FIXED, .format = "coo"};
    CHECK_ERR(adia_plan_create_device_csr(&c.d, &fx, &P), ADIA_ERR_UNSUPPORTED,
              "cannot be built on the GPU");
    bad = c.d;
    bad.cols = 3;   /* columns outside the matrix */
    CHECK_ERR(adia_plan_create_device_csr(&bad, NULL, &P), ADIA_ERR_INVALID_MATRIX, "column");
    free_device_csr(&c);
    adia_matrix_destroy(A);
}

/* adia_plan_device_dia of P (a dia plan of A, offsets off[nd]): its
 * diagonals lent as they are, a plan made from them (copied) is A again;
 * one slot too few for the offsets is refused. */
static void check_lent_dia(const adia_plan *P, const adia_matrix *A, const int64_t *off, int nd)
{
    int64_t lo[ADIA_STENCIL_MAX_DIAGONALS];
    adia_device_dia v;
    CHECK_OK(adia_plan_device_dia(P, lo, ADIA_STENCIL_MAX_DIAGONALS, &v));
    int same = v.ndiag == nd && v.offsets == lo && !v.adopt &&
               v.rows == adia_matrix_rows(A) && v.cols == adia_matrix_cols(A);
    for (int k = 0; same && k < nd; k++) same = lo[k] == off[k];
    CHECK(same, "lent dia: %d diagonals (%d), %d x %d, adopt %d", v.ndiag, nd, (int)v.rows,
          (int)v.cols, v.adopt);
    adia_plan_hints h = {.device = 1, .vtype = v.values_type};
    adia_plan *Q = NULL;
    adia_matrix *back = NULL;
    CHECK_OK(adia_plan_create_device_dia(&v, &h, &Q));
    if (Q) CHECK_OK(adia_format_to_matrix(adia_plan_format(Q), &back));
    CHECK(back && adia_matrix_equal(back, A), "a plan of the lent diagonals is the matrix again");
    adia_matrix_destroy(back);
    adia_plan_destroy(Q);
    if (nd > 0)
        CHECK_ERR(adia_plan_device_dia(P, lo, nd - 1, &v), ADIA_ERR_INVALID_ARG, "room for");
}

/* Rows [first, first + count) of a Laplacian filled on the device
 * (adia_stencil_fill_device) and planned from its diagonals
 * (adia_plan_create_device_dia, copied or adopted, double or float):
 * the product and the nonzeros against adia_matrix_generate_rows' CSR. */
static void check_stencil_dia(const char *spec, int64_t first, int64_t count, adia_value_type vt,
                              int adopt)
{
    int64_t n = 0, off[ADIA_STENCIL_MAX_DIAGONALS];
    int nd = 0;
    CHECK_OK(adia_stencil_diagonals(spec, &n, &nd, off));
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_generate_rows(spec, first, count, NULL, NULL, &A));
    size_t vs = adia_value_size(vt);
    void *values = NULL;
    CHECK(cudaMalloc(&values, (size_t)(nd * count) * vs + 1) == cudaSuccess, "%s: values", spec);
    CHECK_OK(adia_stencil_fill_device(spec, first, count, values, vt, NULL));
    /* the block's diagonals: local offset first + o; those with no slot in
     * the block (the extreme ones) must be all zero, and are left out */
    int k0 = 0, k1 = nd;
    while (k0 < k1 && first + off[k0] <= -count) k0++;
    while (k1 > k0 && first + off[k1 - 1] >= n) k1--;
    int64_t local[ADIA_STENCIL_MAX_DIAGONALS];
    for (int k = k0; k < k1; k++) local[k - k0] = first + off[k];
    char *h = malloc((size_t)(nd * count) * vs + 1);
    CHECK(cudaMemcpy(h, values, (size_t)(nd * count) * vs, cudaMemcpyDeviceToHost) == cudaSuccess,
          "%s: values back", spec);
    int outside_zero = 1;
    for (int64_t t = 0; t < nd * count; t++)
        if (t < k0 * count || t >= k1 * count)
            outside_zero &= vt == ADIA_DOUBLE ? ((double *)h)[t] == 0 : ((float *)h)[t] == 0;
    CHECK(outside_zero, "%s: diagonals leaving the block hold zeros", spec);
    free(h);
    adia_device_dia d = {(int32_t)count, (int32_t)n, k1 - k0, local, (char *)values + k0 * count * vs,
                         vt, adopt && k0 == 0};
    adia_plan_hints hints = {.expected_calls = 1000, .device = 1, .vtype = vt};
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create_device_dia(&d, &hints, &P));
    if (P) {
        CHECK(!strcmp(adia_plan_format_name(P), "dia"), "%s: format %s", spec,
              adia_plan_format_name(P));
        CHECK(adia_format_nnz(adia_plan_format(P)) == adia_matrix_nnz(A),
              "%s rows %lld+%lld: %lld nonzeros counted, CSR has %lld", spec, (long long)first,
              (long long)count, (long long)adia_format_nnz(adia_plan_format(P)),
              (long long)adia_matrix_nnz(A));
        /* the plan's kernel, then each the format offers (the planner's
         * timing may pick either: both must be the matrix's product) */
        const adia_gpu_kernel kernels[] = {ADIA_KERNEL_AUTO, ADIA_KERNEL_GENERIC,
                                           ADIA_KERNEL_GENERATED};
        for (int k = 0; k < 3; k++) {
            if (k > 0 && !(adia_format_gpu_kernels("dia") & (1u << kernels[k]))) continue;
            if (k > 0) CHECK_OK(adia_format_set_kernel(adia_plan_format(P), kernels[k]));
            double err = test_gpu_plan_error(P, A);
            CHECK(err <= (vt == ADIA_DOUBLE ? 1e-14 : 1e-5), "%s rows %lld+%lld (%s kernel): "
                  "product error %.3g", spec, (long long)first, (long long)count,
                  adia_gpu_kernel_name(adia_format_kernel(adia_plan_format(P))), err);
        }
        adia_matrix *back = NULL;   /* the format to the host: the same matrix */
        CHECK_OK(adia_format_to_matrix(adia_plan_format(P), &back));
        CHECK(back && adia_matrix_equal(back, A), "%s: the device dia's matrix equals the CSR", spec);
        adia_matrix_destroy(back);
        check_lent_dia(P, A, local, k1 - k0);
    }
    adia_plan_destroy(P);
    if (!d.adopt) cudaFree(values);
    adia_matrix_destroy(A);
}

/* A grid past 2^31 points: rows near its end filled on the device, each
 * row's entries checked against the grid (centre 6, -1 per neighbour
 * inside). */
static void check_large_stencil(void)
{
    const char *spec = "lap3d7:2000";
    int64_t n = 0, off[ADIA_STENCIL_MAX_DIAGONALS];
    int nd = 0;
    CHECK_OK(adia_stencil_diagonals(spec, &n, &nd, off));
    CHECK(n == 8000000000LL && nd == 7, "%s: %lld rows, %d diagonals", spec, (long long)n, nd);
    const int64_t first = n - 4000000 - 17, count = 4000000;
    double *values = NULL, *h = malloc((size_t)(nd * count) * 8);
    CHECK(h && cudaMalloc((void **)&values, (size_t)(nd * count) * 8) == cudaSuccess, "values");
    CHECK_OK(adia_stencil_fill_device(spec, first, count, values, ADIA_DOUBLE, NULL));
    CHECK(cudaMemcpy(h, values, (size_t)(nd * count) * 8, cudaMemcpyDeviceToHost) == cudaSuccess,
          "values back");
    int64_t bad = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t r = first + i, c[3] = {r % 2000, r / 2000 % 2000, r / 4000000};
        for (int k = 0; k < nd; k++) {
            int64_t o = off[k], d = o == 0 ? -1 : labs(o) == 1 ? 0 : labs(o) == 2000 ? 1 : 2;
            int64_t q = d < 0 ? 0 : c[d] + (o > 0 ? 1 : -1);
            double want = d < 0 ? 6 : q >= 0 && q < 2000 ? -1 : 0;
            bad += h[k * count + i] != want;
        }
    }
    CHECK(bad == 0, "%s rows %lld+%lld: %lld wrong entries", spec, (long long)first,
          (long long)count, (long long)bad);
    CHECK_ERR(adia_stencil_fill_device(spec, n - 10, 11, values, ADIA_DOUBLE, NULL),
              ADIA_ERR_DIMENSION, "rows");
    cudaFree(values);
    free(h);
}

static void stencil_dia_errors(void)
{
    int nd = 0;
    CHECK_ERR(adia_stencil_diagonals("band:100,3", NULL, &nd, NULL), ADIA_ERR_UNSUPPORTED,
              "not a stencil");
    CHECK_ERR(adia_stencil_diagonals("lap3d7:0", NULL, &nd, NULL), ADIA_ERR_INVALID_ARG, "positive");
    double *v = NULL;
    CHECK(cudaMalloc((void **)&v, 3 * 10 * 8) == cudaSuccess, "values");
    int64_t off[3] = {-1, 0, 1}, bad_order[3] = {0, -1, 1}, outside[3] = {-1, 0, 10};
    adia_device_dia d = {10, 10, 3, off, v, ADIA_DOUBLE, 0};
    adia_plan *P = NULL;
    adia_device_dia b = d;
    b.offsets = bad_order;
    CHECK_ERR(adia_plan_create_device_dia(&b, NULL, &P), ADIA_ERR_INVALID_ARG, "ascending");
    b.offsets = outside;
    CHECK_ERR(adia_plan_create_device_dia(&b, NULL, &P), ADIA_ERR_INVALID_ARG, "offset 10");
    CHECK(P == NULL, "no plan on failure");
    adia_plan_hints fx = {.device = 1, .chooser = ADIA_CHOOSE_FIXED, .format = "csr"};
    CHECK_ERR(adia_plan_create_device_dia(&d, &fx, &P), ADIA_ERR_INVALID_ARG, "dia");
    b = d;
    b.adopt = 1;   /* a float plan cannot adopt doubles: refused, and freed as promised */
    adia_plan_hints fl = {.device = 1, .vtype = ADIA_FLOAT};
    CHECK_ERR(adia_plan_create_device_dia(&b, &fl, &P), ADIA_ERR_INVALID_ARG, "adopt");
    struct cudaPointerAttributes at;
    CHECK(cudaPointerGetAttributes(&at, v) != cudaSuccess || at.type != cudaMemoryTypeDevice,
          "an adopted array is freed when the call fails");
    (void)cudaGetLastError();
    /* adia_plan_device_dia: plans that do not keep dia's diagonals on the
     * device say why */
    adia_matrix *A = NULL;
    int64_t lo[8];
    adia_device_dia lent;
    CHECK_OK(adia_matrix_generate("lap2d5:12", &A));
    adia_plan_hints cpu = {.device = 0, .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
    adia_plan_hints hdi = {.device = 1, .chooser = ADIA_CHOOSE_FIXED, .format = "hdi"};
    CHECK_OK(adia_plan_create(A, &cpu, &P));
    CHECK_ERR(adia_plan_device_dia(P, lo, 8, &lent), ADIA_ERR_UNSUPPORTED, "not on the device");
    adia_plan_destroy(P);
    CHECK_OK(adia_plan_create(A, &fx, &P));
    CHECK_ERR(adia_plan_device_dia(P, lo, 8, &lent), ADIA_ERR_UNSUPPORTED, "not a diagonal one");
    adia_plan_destroy(P);
    CHECK_OK(adia_plan_create(A, &hdi, &P));
    CHECK_ERR(adia_plan_device_dia(P, lo, 8, &lent), ADIA_ERR_UNSUPPORTED, "not stored as dia");
    adia_plan_destroy(P);
    CHECK_ERR(adia_plan_device_dia(NULL, lo, 8, &lent), ADIA_ERR_INVALID_ARG, "NULL");
    adia_matrix_destroy(A);
}

/* A plan is complete when its constructor returns: a product queued at
 * once on a non-blocking stream (a solver's, a caller's) reads the
 * structure the plan uploaded.  cudaMemcpy from pageable memory returns
 * before its DMA lands, and a non-blocking stream does not wait for the
 * legacy stream: with the copy engine busy (a large transfer in flight),
 * a dia plan's offsets had not arrived and its product was wrong
 * (test_dist_gpu, H200, 2026-11-27).  Host and device-filled plans. */
static void check_ready_on_any_stream(void)
{
    const size_t big = (size_t)256 << 20;
    void *h_big = NULL, *d_big = NULL;
    cudaStream_t busy = NULL, st = NULL;
    if (cudaHostAlloc(&h_big, big, cudaHostAllocDefault) != cudaSuccess ||
        cudaMalloc(&d_big, big) != cudaSuccess ||
        cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) {
        CHECK(0, "ready on any stream: set-up failed");
        goto out;
    }
    memset(h_big, 0, big);
    const char *specs[] = {"lap3d7:9x8x40", "lap2d5:70x50", "type3:20000,21,0.34,sym"};
    for (int rep = 0; rep < 2; rep++)
        for (int k = 0; k < 3; k++)
            for (int filled = 0; filled < (k < 2 ? 2 : 1); filled++) {
                adia_matrix *A = NULL;
                CHECK_OK(adia_matrix_generate(specs[k], &A));
                if (!A) continue;
                const int32_t n = adia_matrix_rows(A);
                double *x = malloc((size_t)n * 8), *y = malloc((size_t)n * 8),
                       *ref = malloc((size_t)n * 8), *dx = NULL, *dy = NULL, *vals = NULL;
                for (int32_t i = 0; i < n; i++) x[i] = 1 + (i % 7) * 0.25;
                CHECK(cudaMalloc((void **)&dx, (size_t)n * 8) == cudaSuccess &&
                          cudaMalloc((void **)&dy, (size_t)n * 8) == cudaSuccess &&
                          cudaMemcpy(dx, x, (size_t)n * 8, cudaMemcpyHostToDevice) == cudaSuccess &&
                          cudaDeviceSynchronize() == cudaSuccess,
                      "%s: vectors", specs[k]);
                /* the copy engine busy while the plan uploads */
                CHECK(cudaMemcpyAsync(d_big, h_big, big, cudaMemcpyHostToDevice, busy) ==
                          cudaSuccess, "the busy transfer");
                adia_plan *P = NULL;
                adia_plan_hints h = {.device = 1};
                if (filled) {
                    int64_t off[ADIA_STENCIL_MAX_DIAGONALS];
                    int nd = 0;
                    CHECK_OK(adia_stencil_diagonals(specs[k], NULL, &nd, off));
                    CHECK(cudaMalloc((void **)&vals, (size_t)nd * n * 8) == cudaSuccess, "values");
                    CHECK_OK(adia_stencil_fill_device(specs[k], 0, n, vals, ADIA_DOUBLE, NULL));
                    adia_device_dia d = {n, n, nd, off, vals, ADIA_DOUBLE, 1};
                    CHECK_OK(adia_plan_create_device_dia(&d, &h, &P));
                } else {
                    CHECK_OK(adia_plan_create(A, &h, &P));
                }
                if (P) {
                    CHECK_OK(adia_spmv_async(P, 1.0, dx, 0.0, dy, st));
                    CHECK(cudaMemcpyAsync(y, dy, (size_t)n * 8, cudaMemcpyDeviceToHost, st) ==
                              cudaSuccess && cudaStreamSynchronize(st) == cudaSuccess,
                          "%s: y back", specs[k]);
                    CHECK_OK(adia_matrix_spmv(A, 1.0, x, 0.0, ref));
                    const double e = test_rel_err(y, ref, n);
                    CHECK(e <= 1e-14, "%s (%s plan, %s): a product queued at once on a "
                          "non-blocking stream: error %g", specs[k], filled ? "device-filled" :
                          "host", adia_plan_format_name(P), e);
                }
                cudaStreamSynchronize(busy);
                adia_plan_destroy(P);
                cudaFree(dx);
                cudaFree(dy);
                free(x), free(y), free(ref);
                adia_matrix_destroy(A);
            }
out:
    if (busy) cudaStreamDestroy(busy);
    if (st) cudaStreamDestroy(st);
    cudaFreeHost(h_big);
    cudaFree(d_big);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    check_device_plan("lap3d7:20", "dia", 64, ADIA_DOUBLE, NULL, 1);
    check_device_plan("lap3d7:20", "dia", 32, ADIA_FLOAT, NULL, 1);
    check_device_plan("type3:20000,21,0.34,sym", "brcsd2", 32, ADIA_DOUBLE, NULL, 1);
    check_device_plan("lap2d5:61", "hdi", 64, ADIA_DOUBLE, "hdi", 1);
    check_device_plan("random:3000,8", NULL, 32, ADIA_DOUBLE, NULL, 0);
    check_device_plan("random:3000,8", "ell", 32, ADIA_FLOAT, "ell", 0);
    check_device_plan("powerlaw:5000,2,400", "sell", 64, ADIA_DOUBLE, "sell", 0);
    device_plan_errors();
    check_stencil_dia("lap3d7:13x11x9", 0, 13 * 11 * 9, ADIA_DOUBLE, 1);
    check_stencil_dia("lap3d7:9x8x40", 0, 9 * 8 * 40, ADIA_DOUBLE, 1);
    check_stencil_dia("lap3d27:9x8x7", 0, 9 * 8 * 7, ADIA_DOUBLE, 0);
    check_stencil_dia("lap2d9:2x7", 0, 14, ADIA_DOUBLE, 1);        /* a side of 2 */
    check_stencil_dia("lap3d7:5x1x4", 0, 20, ADIA_DOUBLE, 1);      /* a side of 1 */
    check_stencil_dia("lap2d5:1x1", 0, 1, ADIA_DOUBLE, 1);         /* one row */
    check_stencil_dia("lap3d7:13x11x9", 200, 517, ADIA_DOUBLE, 1); /* a block */
    check_stencil_dia("lap3d27:9x8x7", 100, 301, ADIA_FLOAT, 0);
    check_stencil_dia("lap2d5:31x29", 400, 499, ADIA_FLOAT, 1);
    check_large_stencil();
    stencil_dia_errors();
    check_ready_on_any_stream();
    /* 4e6-row stencil: DIA 168 MB, CSR 285 MB; left: 64 MB (nothing fits
     * beside the vectors) and 220 MB (DIA fits, CSR does not) */
    static const size_t left[] = {(size_t)64 << 20, (size_t)220 << 20};
    for (int i = 0; i < 2; i++) {
        test_short_of_memory("lap2d5:2000", ADIA_CHOOSE_MODEL, left[i]);
        test_short_of_memory("lap2d5:2000", ADIA_CHOOSE_MEASURE, left[i]);
    }
    return TEST_END();
}
#endif
