/* test_plan_update.c -- adia_plan_update_values on CPU plans of every
 * registered format (issue 28, item 6); ADIA_TEST_FORMAT=name runs one.
 *
 * For each format, awkward matrix (empty rows, one row, rectangular both
 * ways, diagonals leaving the matrix, explicit zeros and -0.0, a CRSD
 * scatter pattern, no entries) and value type:
 *  - a plan of A0 updated with A1 (same pattern, new values; A0's explicit
 *    zeros become nonzero, some nonzeros become 0.0 or -0.0) gives the
 *    same y, bitwise, as a new plan of A1, and its format gives A1 back
 *    (explicit zeros included, rounded to the value type);
 *  - a changed pattern -- one column moved, one entry added, the same nnz
 *    with another rowptr -- is refused with ADIA_ERR_INVALID_ARG naming the
 *    row, and the plan still gives A1's product; another shape is
 *    ADIA_ERR_DIMENSION;
 *  - a second update (the threaded hash's path) back to A0 is exact too. */
#include "update_cases.h"

static const char *only;   /* ADIA_TEST_FORMAT */

/* y = P x (beta 0) with host doubles in and out, in P's value type. */
static adia_status plan_y(adia_plan *P, const double *x, double *y)
{
    int32_t m = adia_plan_rows(P), n = adia_plan_cols(P);
    int fl = adia_plan_value_type(P) == ADIA_FLOAT;
    void *xt = calloc((size_t)n + 1, 8), *yt = calloc((size_t)m + 1, 8);
    adia_status s = ADIA_ERR_NO_MEMORY;
    if (xt && yt) {
        for (int32_t j = 0; j < n; j++)
            if (fl) ((float *)xt)[j] = (float)x[j]; else ((double *)xt)[j] = x[j];
        s = adia_spmv(P, 1.0, xt, 0.0, yt);
        for (int32_t i = 0; i < m; i++) y[i] = fl ? ((float *)yt)[i] : ((double *)yt)[i];
    }
    free(xt);
    free(yt);
    return s;
}

/* P's product equals a new plan's of A, bitwise, and P's format gives A
 * back (rounded to vt). */
static void check_equal(adia_plan *P, const adia_matrix *A, const char *fmt, adia_value_type vt,
                        const char *what)
{
    adia_plan_hints h = {.expected_calls = 100, .vtype = vt, .chooser = ADIA_CHOOSE_FIXED,
                         .format = fmt};
    adia_plan *Q = NULL;
    CHECK_OK(adia_plan_create(A, &h, &Q));
    int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    double *x = calloc((size_t)n + 1, 8), *y1 = calloc((size_t)m + 1, 8),
           *y2 = calloc((size_t)m + 1, 8);
    uint64_t st = 5;
    test_rand_vector(&st, x, n);
    if (Q) {
        CHECK_OK(plan_y(P, x, y1));
        CHECK_OK(plan_y(Q, x, y2));
        CHECK(!memcmp(y1, y2, (size_t)m * 8), "%s (%s) %s: updated plan's y differs from a new "
              "plan's", fmt, adia_value_type_name(vt), what);
    }
    adia_matrix *B = NULL, *R = test_rounded(A, vt);
    CHECK_OK(adia_format_to_matrix(adia_plan_format(P), &B));
    if (B && R)
        CHECK(test_rows_equal(R, 0, B), "%s (%s) %s: the format does not give A1 back", fmt,
              adia_value_type_name(vt), what);
    adia_matrix_destroy(B);
    adia_matrix_destroy(R);
    adia_plan_destroy(Q);
    free(x);
    free(y1);
    free(y2);
}

static void run_case(const char *fmt, const adia_matrix *A0, const char *what, adia_value_type vt)
{
    adia_plan_hints h = {.expected_calls = 100, .vtype = vt, .chooser = ADIA_CHOOSE_FIXED,
                         .format = fmt};
    adia_plan *P = NULL;
    adia_status s = adia_plan_create(A0, &h, &P);
    if (s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_DIMENSION || s == ADIA_ERR_INVALID_ARG) return;
    CHECK(s == ADIA_OK, "%s on %s: plan: %s", fmt, what, adia_last_error());
    if (!P) return;
    if (strcmp(adia_plan_format_name(P), fmt)) {   /* a format that fell back */
        adia_plan_destroy(P);
        return;
    }
    adia_matrix *A1 = update_new_values(A0, 11);
    CHECK_OK(adia_plan_update_values(P, A1));
    check_equal(P, A1, fmt, vt, what);
    update_check_refusals(P, A1, fmt, what);
    check_equal(P, A1, fmt, vt, "after the refusals");
    CHECK_OK(adia_plan_update_values(P, A0));   /* the threaded hash's path */
    check_equal(P, A0, fmt, vt, "second update");
    char text[4096];
    CHECK_OK(adia_plan_explain(P, text, sizeof text));
    CHECK(test_contains(text, "values updated: 2 times"), "%s on %s: explain: %s", fmt, what, text);
    adia_matrix_destroy(A1);
    adia_plan_destroy(P);
}

int main(void)
{
    TEST_BEGIN();
    only = getenv("ADIA_TEST_FORMAT");
    int nm = 0;
    update_case *cases = update_cases(&nm);
    for (int f = 0; f < adia_format_count(); f++) {
        const char *fmt = adia_format_name_at(f);
        if (only && strcmp(only, fmt)) continue;
        for (int c = 0; c < nm; c++)
            for (int t = 0; t < 2; t++)
                run_case(fmt, cases[c].A, cases[c].what, t ? ADIA_FLOAT : ADIA_DOUBLE);
    }
    update_cases_free(cases, nm);
    /* bad handles and arguments */
    adia_matrix *A = test_generate("lap2d5:8");
    CHECK_ERR(adia_plan_update_values(NULL, A), ADIA_ERR_INVALID_HANDLE, "plan is NULL");
    adia_plan *P = test_plan_fixed(A, "dia", ADIA_DOUBLE, 0);
    CHECK_ERR(adia_plan_update_values(P, NULL), ADIA_ERR_INVALID_HANDLE, "adia_plan_update_values");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    return TEST_END();
}
