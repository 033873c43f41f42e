/* test_gpu_plan_upload.c -- a GPU plan of a host matrix made on the device
 * (issue 28, item 1): adia_plan_create uploads the CSR once and analyses
 * and builds on the GPU.  The format it builds must equal the host build
 * of the same format array for array (pieces, groups, offsets, data
 * bitwise, explicit zeros) and compute A*x; MEASURE picks among formats
 * built on the device; the routes that stay on the host say why (a
 * fixed format the GPU does not build, rules, ADIA_GPU_SETUP=host; the
 * row formats built on the device: test_gpu_row_build.c);
 * the staging switch ADIA_UPLOAD gives the same arrays and refuses a bad
 * value.  Matrices of odd sizes, one row, empty rows, no nonzeros, double
 * and float.  Skips (77) without a device. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "plan/plan_internal.h"
#include "formats/diag_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

#define SAME_N(label, field) \
    CHECK(G->field == H->field, "%s: " #field " %lld (device) vs %lld (host)", label, \
          (long long)G->field, (long long)H->field)

/* The plan's format (built on the device) against the host build of the
 * same format with the same parameters: every array. */
static void same_as_host(const char *label, const adia_matrix *A, adia_plan *P)
{
    adia_format *F = adia_plan_format(P);
    adia_format *HF = NULL;
    CHECK_OK(adia__format_host(F));   /* the device data down, as a host operation would */
    CHECK_OK(adia_format_build(A, adia_format_name(F), &F->params, adia_plan_value_type(P), &HF));
    const adia_diag *G = adia__format_diag(F), *H = HF ? adia__format_diag(HF) : NULL;
    CHECK(G && H, "%s: diagonal storage on both sides", label);
    if (G && H) {
        int before = test_failed;
        SAME_N(label, rows);
        SAME_N(label, cols);
        SAME_N(label, nnz);
        SAME_N(label, n_pieces);
        SAME_N(label, n_groups);
        SAME_N(label, n_zero);
        SAME_N(label, offsets_per_piece);
        if (test_failed == before) {
            int64_t np = H->n_pieces, ng = H->n_groups, stored = H->piece_data[np];
            test_same_bytes(label, "piece_start", G->piece_start, H->piece_start, np + 1, 4);
            test_same_bytes(label, "piece_group", G->piece_group, H->piece_group, np, 4);
            test_same_bytes(label, "piece_data", G->piece_data, H->piece_data, np + 1, 8);
            test_same_bytes(label, "group_start", G->group_start, H->group_start, ng + 1, 4);
            test_same_bytes(label, "offsets", G->offsets, H->offsets, H->group_start[ng], 4);
            test_same_bytes(label, "data", G->data, H->data, stored, adia_value_size(H->vtype));
            test_same_bytes(label, "zero_row", G->zero_row, H->zero_row, H->n_zero, 4);
            test_same_bytes(label, "zero_col", G->zero_col, H->zero_col, H->n_zero, 4);
        }
    }
    adia_format_destroy(HF);
}

static adia_plan *plan_of(const adia_matrix *A, adia_chooser chooser, const char *fixed,
                          adia_value_type vt, int64_t calls)
{
    adia_plan_hints h = {.expected_calls = calls, .vtype = vt, .device = 1, .chooser = chooser,
                         .format = fixed};
    adia_plan *P = NULL;
    adia_status s = adia_plan_create(A, &h, &P);
    CHECK(s == ADIA_OK, "plan (%s, %s): %s", adia_chooser_name(chooser), fixed ? fixed : "-",
          adia_last_error());
    return P;
}

/* A diagonal matrix planned for the GPU from the host: the device path,
 * format `want` (NULL: any diagonal one), equal to the host build. */
static void check_device_route(const char *label, adia_matrix *A, adia_chooser chooser,
                               const char *fixed, adia_value_type vt, const char *want)
{
    if (!A) return;
    adia_plan *P = plan_of(A, chooser, fixed, vt, 1);
    if (!P) return;
    char why[4096], lab[256];
    snprintf(lab, sizeof lab, "%s %s %s", label, adia_chooser_name(chooser),
             adia_value_type_name(vt));
    CHECK_OK(adia_plan_explain(P, why, sizeof why));
    CHECK(test_contains(why, "uploaded once") && test_contains(why, "setup (ms): upload"),
          "%s: the device path and its setup in explain:\n%s", lab, why);
    const char *got = adia_plan_format_name(P);
    CHECK(adia_format_is_diagonal(got), "%s: format %s", lab, got);
    if (want) CHECK(!strcmp(got, want), "%s: format %s, expected %s", lab, got, want);
    double tol = vt == ADIA_FLOAT ? 1e-5 : 1e-12, err = test_gpu_plan_error(P, A);
    CHECK(err <= tol, "%s: product error %.3g", lab, err);
    same_as_host(lab, A, P);
    adia_plan_destroy(P);
}

/* A plan that must stay on the host, its explain saying `because`. */
static void check_host_route(const char *label, const adia_matrix *A, adia_chooser chooser,
                             const char *fixed, const char *because)
{
    adia_plan *P = plan_of(A, chooser, fixed, ADIA_DOUBLE, 1);
    if (!P) return;
    char why[4096];
    CHECK_OK(adia_plan_explain(P, why, sizeof why));
    CHECK(test_contains(why, because) && !test_contains(why, "uploaded once"),
          "%s: host route (%s) in explain:\n%s", label, because, why);
    CHECK(test_gpu_plan_error(P, A) <= 1e-12, "%s: product", label);
    adia_plan_destroy(P);
}

/* 5 rows, rows 1 and 3 empty, an explicit zero on the diagonal. */
static adia_matrix *empty_rows(void)
{
    int64_t rp[] = {0, 2, 2, 4, 4, 6};
    int32_t ci[] = {0, 1, 1, 2, 3, 4};
    double v[] = {2, -1, 0, 3, 4, 5};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_csr(5, 5, 6, rp, ci, v, ADIA_DOUBLE, &A));
    return A;
}

static adia_matrix *no_nonzeros(void)
{
    int64_t rp[] = {0, 0, 0, 0};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_csr(3, 3, 0, rp, NULL, NULL, ADIA_DOUBLE, &A));
    return A;
}

/* MEASURE on the device measures only where it can repay itself: not a
 * stencil whose dia has (almost) no padding, yes a band with holes whose
 * dia would pad (the formats then differ by more than measuring costs). */
static void measure_rule(void)
{
    static const struct { const char *spec; int measured; } cases[] = {
        {"lap3d7:20", 0},                /* 1.04 slots per nonzero: 4% of 1000 calls < 100 */
        {"bandr:9001,8,0.7", 1},   /* holes: dia would store 1.39 slots per nonzero */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        adia_matrix *A = test_generate(cases[i].spec);
        adia_plan *P = A ? plan_of(A, ADIA_CHOOSE_MEASURE, NULL, ADIA_DOUBLE, 1000) : NULL;
        char why[4096] = "";
        if (P) CHECK_OK(adia_plan_explain(P, why, sizeof why));
        if (P && cases[i].measured)
            CHECK(test_contains(why, "measure (built on the GPU") &&
                      !isnan(adia_plan_measured_ms(P)),
                  "%s: measured:\n%s", cases[i].spec, why);
        else if (P)
            CHECK(test_contains(why, "not measured: dia stores") &&
                      !strcmp(adia_plan_format_name(P), "dia") &&
                      isnan(adia_plan_measured_ms(P)),
                  "%s: dia without measuring:\n%s", cases[i].spec, why);
        if (P) CHECK(test_gpu_plan_error(P, A) <= 1e-12, "%s: product", cases[i].spec);
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
}

static void device_routes(void)
{
    static const char *const specs[] = {"lap3d7:9", "lap2d5:33x17", "lap2d5:1x1",
                                        "type3:9001,21,0.34,sym", "lap3d27:7x5x3"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        adia_matrix *A = test_generate(specs[i]);
        CHECK(A != NULL, "%s generated", specs[i]);
        check_device_route(specs[i], A, ADIA_CHOOSE_MODEL, NULL, ADIA_DOUBLE, NULL);
        check_device_route(specs[i], A, ADIA_CHOOSE_MODEL, NULL, ADIA_FLOAT, NULL);
        check_device_route(specs[i], A, ADIA_CHOOSE_MEASURE, NULL, ADIA_DOUBLE, NULL);
        check_device_route(specs[i], A, ADIA_CHOOSE_FIXED, "hdi", ADIA_DOUBLE, "hdi");
        check_device_route(specs[i], A, ADIA_CHOOSE_FIXED, "brcsd2", ADIA_FLOAT, "brcsd2");
        adia_matrix_destroy(A);
    }
    /* dia by its fill: 7 x 8000 slots for 53600 nonzeros, 1.04 <= 1.1 */
    adia_matrix *A = test_generate("lap3d7:20");
    check_device_route("lap3d7:20", A, ADIA_CHOOSE_MODEL, NULL, ADIA_DOUBLE, "dia");
    adia_matrix_destroy(A);
    A = empty_rows();
    check_device_route("empty rows", A, ADIA_CHOOSE_MODEL, NULL, ADIA_DOUBLE, NULL);
    check_device_route("empty rows", A, ADIA_CHOOSE_FIXED, "dia", ADIA_FLOAT, "dia");
    adia_matrix_destroy(A);
    A = no_nonzeros();
    check_device_route("no nonzeros", A, ADIA_CHOOSE_MODEL, NULL, ADIA_DOUBLE, NULL);
    adia_matrix_destroy(A);
}

static void host_routes(void)
{
    adia_matrix *A = test_generate("lap2d5:31");
    check_host_route("fixed coo", A, ADIA_CHOOSE_FIXED, "coo", "fixed format is built on the host");
    check_host_route("rules", A, ADIA_CHOOSE_RULES, NULL, "chooser rules");
    setenv("ADIA_GPU_SETUP", "host", 1);
    check_host_route("forced", A, ADIA_CHOOSE_MODEL, NULL, "ADIA_GPU_SETUP=host");
    unsetenv("ADIA_GPU_SETUP");
    adia_matrix_destroy(A);
}

static void staging(void)
{
    adia_matrix *A = test_generate("lap3d7:21x19x17");   /* dia: fill 1.05 */
    setenv("ADIA_UPLOAD", "pinned", 1);
    check_device_route("pinned", A, ADIA_CHOOSE_MODEL, NULL, ADIA_DOUBLE, "dia");
    check_device_route("pinned", A, ADIA_CHOOSE_MODEL, NULL, ADIA_FLOAT, "dia");
    /* chunks of 4 KiB: both pinned buffers in turn, many times over */
    setenv("ADIA_UPLOAD_CHUNK", "4096", 1);
    check_device_route("pinned 4 KiB", A, ADIA_CHOOSE_MODEL, NULL, ADIA_DOUBLE, "dia");
    check_device_route("pinned 4 KiB", A, ADIA_CHOOSE_MODEL, NULL, ADIA_FLOAT, "dia");
    setenv("ADIA_UPLOAD", "pageable", 1);
    check_device_route("pageable 4 KiB", A, ADIA_CHOOSE_MODEL, NULL, ADIA_FLOAT, "dia");
    setenv("ADIA_UPLOAD_CHUNK", "4095", 1);
    adia_plan_hints h1 = {.device = 1};
    adia_plan *Q = NULL;
    CHECK_ERR(adia_plan_create(A, &h1, &Q), ADIA_ERR_INVALID_ARG, "ADIA_UPLOAD_CHUNK=4095");
    unsetenv("ADIA_UPLOAD_CHUNK");
    setenv("ADIA_UPLOAD", "pinned", 1);
    adia_plan *P = plan_of(A, ADIA_CHOOSE_MODEL, NULL, ADIA_DOUBLE, 1);
    char why[4096] = "";
    if (P) CHECK_OK(adia_plan_explain(P, why, sizeof why));
    CHECK(test_contains(why, "pinned"), "ADIA_UPLOAD=pinned said in explain:\n%s", why);
    adia_plan_destroy(P);
    P = NULL;
    setenv("ADIA_UPLOAD", "fast", 1);
    adia_plan_hints h = {.device = 1};
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "ADIA_UPLOAD=fast");
    CHECK(P == NULL, "no plan on a bad ADIA_UPLOAD");
    unsetenv("ADIA_UPLOAD");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    device_routes();
    measure_rule();
    host_routes();
    staging();
    return TEST_END();
}
#endif
