/* test_gpu_plan_update.c -- adia_plan_update_values and
 * adia_plan_update_values_device_csr on GPU plans (issue 28, item 6).
 *
 * For every format with a GPU side (ADIA_TEST_FORMAT=name: one), the
 * awkward matrices of update_cases.h, double and float:
 *  - a GPU plan of A0 updated from host A1 gives the same y, bitwise, as a
 *    new GPU plan of A1 (the generic kernel, and for the diagonal formats
 *    the generated one too), and its format gives A1 back;
 *  - updated from a CSR in device memory (32- and 64-bit row pointers,
 *    double and float values): values without zeros (a format whose GPU
 *    table refills -- diagonal, csr -- then refills on the device: its host
 *    copy is left stale), then back
 *    to A0, each the same against a new plan;
 *  - changed patterns refused, from the host and from the device;
 *  - plans built on the device (adia_plan_create_device_csr: dia, hdi,
 *    brcsd2; the host copy never downloaded) updated from device arrays.
 * Skips (77) without a device. */
#include "update_cases.h"
#include "formats/diag_core.h"

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

/* y = P x (beta 0) on the device, host doubles in and out. */
static adia_status gpu_y(adia_plan *P, const double *x, double *y)
{
    int fl = adia_plan_value_type(P) == ADIA_FLOAT;
    int32_t m = adia_plan_rows(P), n = adia_plan_cols(P);
    void *dx = test_gpu_upload(x, n, fl), *dy = test_gpu_upload(y, m, fl);
    adia_status s = dx && dy ? adia_spmv(P, 1.0, dx, 0.0, dy) : ADIA_ERR_CUDA;
    if (s == ADIA_OK && cudaDeviceSynchronize() != cudaSuccess) s = ADIA_ERR_CUDA;
    if (s == ADIA_OK && test_gpu_download(y, dy, m, fl)) s = ADIA_ERR_CUDA;
    cudaFree(dx);
    cudaFree(dy);
    return s;
}

/* P's y equals Q's bitwise, with kernel k on both where given. */
static void same_y(adia_plan *P, adia_plan *Q, adia_gpu_kernel k, const char *label)
{
    if (k != ADIA_KERNEL_AUTO) {
        adia_status a = adia_format_set_kernel(adia_plan_format(P), k);
        adia_status b = adia_format_set_kernel(adia_plan_format(Q), k);
        if (a == ADIA_ERR_NVRTC || b == ADIA_ERR_NVRTC || a == ADIA_ERR_UNSUPPORTED ||
            b == ADIA_ERR_UNSUPPORTED)
            return;   /* no generator here, or too many groups for one */
        CHECK(a == ADIA_OK && b == ADIA_OK, "%s: kernel %d: %s", label, (int)k, adia_last_error());
    }
    int32_t m = adia_plan_rows(P), n = adia_plan_cols(P);
    double *x = calloc((size_t)n + 1, 8), *y1 = calloc((size_t)m + 1, 8),
           *y2 = calloc((size_t)m + 1, 8);
    uint64_t st = 17;
    test_rand_vector(&st, x, n);
    CHECK_OK(gpu_y(P, x, y1));
    CHECK_OK(gpu_y(Q, x, y2));
    CHECK(!memcmp(y1, y2, (size_t)m * 8), "%s: updated plan's y differs from a new plan's", label);
    free(x);
    free(y1);
    free(y2);
}

/* P against a new plan of A (format and value type of P; made on the
 * device when dev), and P's format gives A back. */
static adia_plan *new_plan(const adia_matrix *A, const char *fmt, adia_value_type vt, int dev);
static void check_equal(adia_plan *P, const adia_matrix *A, int dev, const char *label)
{
    const char *fmt = adia_plan_format_name(P);
    adia_value_type vt = adia_plan_value_type(P);
    adia_plan *Q = new_plan(A, fmt, vt, dev);
    CHECK(Q != NULL, "%s: a new plan: %s", label, adia_last_error());
    if (Q) {
        same_y(P, Q, ADIA_KERNEL_AUTO, label);
        if (adia_plan_format(P)->ops->diag.policy) same_y(P, Q, ADIA_KERNEL_GENERATED, label);
    }
    adia_plan_destroy(Q);
    adia_matrix *B = NULL, *R = test_rounded(A, vt);
    CHECK_OK(adia_format_to_matrix(adia_plan_format(P), &B));
    if (B && R) CHECK(test_rows_equal(R, 0, B), "%s: the format does not give A back", label);
    adia_matrix_destroy(B);
    adia_matrix_destroy(R);
}

/* A's CSR in device memory: rowptr of `bits`, values float when fl. */
static int to_device(const adia_matrix *A, int bits, int fl, adia_device_csr *d, void *buf[3])
{
    const adia_csr *c = &A->csr;
    size_t rp = (size_t)c->rows + 1, nnz = (size_t)c->nnz;
    memset(d, 0, sizeof *d);
    buf[0] = buf[1] = buf[2] = NULL;
    int32_t *r32 = malloc(rp * 4);
    for (size_t i = 0; i < rp; i++) r32[i] = (int32_t)c->rowptr[i];
    int ok = cudaMalloc(&buf[0], rp * (bits / 8)) == cudaSuccess &&
             cudaMalloc(&buf[1], nnz * 4 + 4) == cudaSuccess &&
             cudaMemcpy(buf[0], bits == 32 ? (void *)r32 : (void *)c->rowptr, rp * (bits / 8),
                        cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(buf[1], c->colind, nnz * 4, cudaMemcpyHostToDevice) == cudaSuccess;
    free(r32);
    buf[2] = ok ? test_gpu_upload(c->values, (int64_t)nnz, fl) : NULL;
    *d = (adia_device_csr){.rows = c->rows, .cols = c->cols, .nnz = c->nnz, .rowptr = buf[0],
                           .rowptr_bits = bits, .colind = buf[1], .values = buf[2],
                           .values_type = fl ? ADIA_FLOAT : ADIA_DOUBLE};
    CHECK(ok && buf[2], "device copy of a %d x %d CSR", (int)c->rows, (int)c->cols);
    return ok && buf[2];
}
static void free_device(void *buf[3])
{
    for (int i = 0; i < 3; i++) cudaFree(buf[i]);
}

static adia_plan *new_plan(const adia_matrix *A, const char *fmt, adia_value_type vt, int dev)
{
    adia_plan_hints h = {.expected_calls = 100, .vtype = vt, .device = 1,
                         .chooser = ADIA_CHOOSE_FIXED, .format = fmt};
    adia_plan *P = NULL;
    if (!dev) return adia_plan_create(A, &h, &P) == ADIA_OK ? P : NULL;
    void *buf[3];
    adia_device_csr d;
    if (to_device(A, 64, 0, &d, buf) && adia_plan_create_device_csr(&d, &h, &P) != ADIA_OK) P = NULL;
    free_device(buf);
    return P;
}

/* Update from device arrays: ok, or refused naming row (row >= 0). */
static void device_update(adia_plan *P, const adia_matrix *A, int bits, int fl, int32_t row,
                          const char *label)
{
    void *buf[3];
    adia_device_csr d;
    if (!to_device(A, bits, fl, &d, buf)) return;
    adia_status s = adia_plan_update_values_device_csr(P, &d);
    if (row < 0) {
        CHECK(s == ADIA_OK, "%s: device update (%d-bit rowptr, %s): %s", label, bits,
              fl ? "float" : "double", adia_last_error());
    } else {
        char needle[48];
        snprintf(needle, sizeof needle, "at row %d ", (int)row);
        CHECK(s == ADIA_ERR_INVALID_ARG && test_contains(adia_last_error(), needle),
              "%s: device update of another pattern: %s (%s)", label, adia_status_string(s),
              adia_last_error());
    }
    free_device(buf);
}

static void run_case(const char *fmt, const adia_matrix *A0, const char *what, adia_value_type vt,
                     int dev)
{
    char label[160];
    snprintf(label, sizeof label, "%s (%s) on %s%s", fmt, adia_value_type_name(vt), what,
             dev ? ", built on the device" : "");
    adia_plan *P = new_plan(A0, fmt, vt, dev);
    if (!P || strcmp(adia_plan_format_name(P), fmt)) {   /* refused or fell back */
        adia_plan_destroy(P);
        return;
    }
    adia_matrix *A1 = update_new_values(A0, 23);
    if (dev) device_update(P, A1, 32, vt == ADIA_FLOAT, -1, label);
    else CHECK_OK(adia_plan_update_values(P, A1));
    check_equal(P, A1, dev, label);
    update_check_refusals(P, A1, fmt, label);
    /* an entry added in the last row, from the device */
    const adia_csr *c = &A1->csr;
    int32_t r = c->rows - 1, col = update_free_col(c, r, 0);
    if (col >= 0) {
        adia_matrix *B = update_variant(c, -1, r, col);
        device_update(P, B, 64, 0, r, label);
        adia_matrix_destroy(B);
    }
    /* a column moved (the same nnz: the device hash refuses it) */
    for (int32_t q = 0; q < c->rows; q++) {
        int32_t to = c->rowptr[q + 1] > c->rowptr[q] ? update_free_col(c, q, c->colind[c->rowptr[q]] + 1) : -1;
        if (to < 0) continue;
        adia_matrix *B = update_variant(c, c->rowptr[q], q, to);
        device_update(P, B, 32, 0, q, label);
        adia_matrix_destroy(B);
        break;
    }
    /* values without zeros: a format with a refill slot refills on the device */
    adia_matrix *A2 = update_new_values(A0, 31);
    double *v2 = A2 ? (double *)A2->csr.values : NULL;
    for (int64_t k = 0; A2 && k < A2->csr.nnz; k++) v2[k] = v2[k] == 0.0 ? 5.5 : v2[k];
    if (A2) {
        device_update(P, A2, 32, vt == ADIA_FLOAT, -1, label);
        adia_format *F = adia_plan_format(P);
        const adia_diag *D = F->ops->diag.policy ? (const adia_diag *)F->impl : NULL;
        if (F->ops->gpu->refill && !(D && D->n_scatter > 0))
            CHECK(F->host_stale == 1, "%s: the device refill was not taken", label);
        check_equal(P, A2, dev, label);
    }
    adia_matrix_destroy(A2);
    device_update(P, A0, 64, 0, -1, label);
    device_update(P, A0, 32, vt == ADIA_FLOAT, -1, label);
    check_equal(P, A0, dev, label);
    adia_matrix_destroy(A1);
    adia_plan_destroy(P);
}

/* A description refused before any device array is read: 32-bit row
 * pointers cannot count past 2^31 - 1 nonzeros (the check the update now
 * shares with adia_plan_create_device_csr), nor can a NULL matrix be read. */
static void refused_descriptions(void)
{
    adia_matrix *A = test_generate("lap2d5:8");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    if (!P) goto done;
    static int32_t fake[1];
    adia_device_csr d = {.rows = 64, .cols = 64, .nnz = (int64_t)INT32_MAX + 1, .rowptr = fake,
                         .rowptr_bits = 32, .colind = fake, .values = fake,
                         .values_type = ADIA_DOUBLE};
    CHECK_ERR(adia_plan_update_values_device_csr(P, &d), ADIA_ERR_INVALID_ARG,
              "do not fit 32-bit row pointers");
    CHECK_ERR(adia_plan_update_values_device_csr(P, NULL), ADIA_ERR_INVALID_ARG,
              "adia_plan_update_values_device_csr: the matrix is NULL");
done:
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    const char *only = getenv("ADIA_TEST_FORMAT");
    int nm = 0;
    update_case *cases = update_cases(&nm);
    for (int f = 0; f < adia_format_count(); f++) {
        const char *fmt = adia_format_name_at(f);
        const adia_format_ops *ops = adia__format_ops_find(fmt);
        if ((only && strcmp(only, fmt)) || !ops->gpu) continue;
        int on_device = ops->gpu->build_device != NULL;
        for (int c = 0; c < nm; c++)
            for (int t = 0; t < 2; t++)
                for (int dev = 0; dev <= on_device; dev++)
                    run_case(fmt, cases[c].A, cases[c].what, t ? ADIA_FLOAT : ADIA_DOUBLE, dev);
    }
    update_cases_free(cases, nm);
    refused_descriptions();
    return TEST_END();
}
#endif
