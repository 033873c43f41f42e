/* test_gpu_nondet.c -- plans that may use kernels which are not bitwise
 * reproducible (issue 32, item 4): by default the planner never chooses
 * csr's cusparse-alg1 (cuSPARSE CSR ALG1, sums ending in atomics), under
 * MEASURE it is not even timed; with adia_plan_hints.nondeterministic = 1
 * MEASURE times it on a power-law matrix (the explanation lists its time)
 * and the model rates csr at its efficiency and runs it; every plan's y
 * matches the CPU reference.  The csr upload's AUTO never takes it.
 * Skips (77) without a device. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

static const char *const POWERLAW = "powerlaw:30000,2,3000";

static adia_plan *make_plan(const adia_matrix *A, adia_chooser c, int nondet, char *text,
                            size_t len)
{
    adia_plan_hints h = {.expected_calls = 100000, .vtype = ADIA_DOUBLE, .device = 1,
                         .chooser = c, .nondeterministic = nondet};
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create(A, &h, &P));
    text[0] = '\0';
    if (P) CHECK_OK(adia_plan_explain(P, text, len));
    return P;
}

/* The default: ALG1 neither timed nor chosen, by any chooser. */
static void check_default(const adia_matrix *A)
{
    static char text[16384];
    const adia_chooser choosers[] = {ADIA_CHOOSE_MODEL, ADIA_CHOOSE_MEASURE};
    for (int i = 0; i < 2; i++) {
        adia_plan *P = make_plan(A, choosers[i], 0, text, sizeof text);
        if (!P) continue;
        adia_gpu_kernel k = adia_format_kernel(adia_plan_format(P));
        CHECK(adia_gpu_kernel_is_deterministic(k), "default %s plan chose kernel %s",
              adia_chooser_name(choosers[i]), adia_gpu_kernel_name(k));
        CHECK(!strstr(text, "cusparse-alg1") && strstr(text, "reproducible: yes (bitwise"),
              "default %s plan: no cusparse-alg1 in the explanation:\n%s",
              adia_chooser_name(choosers[i]), text);
        CHECK(test_gpu_plan_error(P, A) < 1e-12, "default %s plan: y", adia_chooser_name(choosers[i]));
        adia_plan_destroy(P);
    }
}

/* nondeterministic = 1: MEASURE times ALG1 (listed), MODEL runs csr on it
 * where csr is chosen; y right either way, the explanation honest. */
static void check_allowed(const adia_matrix *A)
{
    static char text[16384];
    adia_plan *P = make_plan(A, ADIA_CHOOSE_MEASURE, 1, text, sizeof text);
    if (P) {
        CHECK(strstr(text, "csr cusparse-alg1 kernel (not bitwise reproducible"),
              "MEASURE with nondeterministic = 1 times ALG1:\n%s", text);
        adia_gpu_kernel k = adia_format_kernel(adia_plan_format(P));
        CHECK(strstr(text, adia_gpu_kernel_is_deterministic(k) ? "reproducible: yes"
                                                               : "reproducible: no"),
              "explanation says whether kernel %s is reproducible:\n%s",
              adia_gpu_kernel_name(k), text);
        CHECK(test_gpu_plan_error(P, A) < 1e-12, "MEASURE nondeterministic plan: y");
        adia_plan_destroy(P);
    }
    P = make_plan(A, ADIA_CHOOSE_MODEL, 1, text, sizeof text);
    if (P) {
        int csr = !strcmp(adia_plan_format_name(P), "csr");
        adia_gpu_kernel k = adia_format_kernel(adia_plan_format(P));
        CHECK(!csr || k == ADIA_KERNEL_CSR_CUSPARSE_ALG1,
              "MODEL with nondeterministic = 1 runs csr on cusparse-alg1, not %s:\n%s",
              adia_gpu_kernel_name(k), text);
        CHECK(test_gpu_plan_error(P, A) < 1e-12, "MODEL nondeterministic plan: y");
        adia_plan_destroy(P);
    }
}

/* The upload's AUTO never picks ALG1; asked for, it runs and is right. */
static void check_format(const adia_matrix *A)
{
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "csr", NULL, ADIA_DOUBLE, &F));
    if (!F) return;
    CHECK_OK(adia_format_upload(F));
    CHECK(adia_format_kernel(F) != ADIA_KERNEL_CSR_CUSPARSE_ALG1, "csr AUTO is not ALG1");
    CHECK_OK(adia_format_set_kernel(F, ADIA_KERNEL_CSR_CUSPARSE_ALG1));
    double err = INFINITY;
    CHECK_OK(adia_gpu_check_spmv(F, A, -1.5, 0.5, 3, &err));
    CHECK(err < 1e-12, "csr cusparse-alg1: relative error %.3g", err);
    CHECK_OK(adia_format_set_kernel(F, ADIA_KERNEL_CSR_CUSPARSE));   /* back to ALG2: same workspace */
    CHECK_OK(adia_gpu_check_spmv(F, A, 1.0, 0.0, 4, &err));
    CHECK(err < 1e-12, "csr cusparse after alg1: relative error %.3g", err);
    adia_format_destroy(F);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    adia_matrix *A = test_generate(POWERLAW);
    check_format(A);
    check_default(A);
    check_allowed(A);
    adia_matrix_destroy(A);
    return TEST_END();
}
#endif
