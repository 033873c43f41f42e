/* test_threads.c -- an absurd OMP_NUM_THREADS never reaches OpenMP: the
 * ctest entry runs this program with OMP_NUM_THREADS=100000, which crashed
 * inside GOMP_parallel before every region asked for adia__threads().  The
 * matrix is large enough that the size-guarded regions (if (n > 65536)
 * and the like) run in parallel: analysis, planning and its bandwidth
 * probe, every format's build and SpMV, a solve, a product, writing and
 * reading Matrix Market text. */
#define _POSIX_C_SOURCE 200809L   /* mkstemp */
#include "testutil.h"

#include <string.h>
#include <unistd.h>

static void every_format(const adia_matrix *A)
{
    for (int i = 0; i < adia_format_count(); i++) {
        const char *name = adia_format_name_at(i);
        adia_format *F = NULL;
        adia_status s = adia_format_build(A, name, NULL, ADIA_DOUBLE, &F);
        if (s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_NO_MEMORY || s == ADIA_ERR_DIMENSION)
            continue;   /* not for this matrix; the threads are what is tested */
        CHECK(s == ADIA_OK, "build %s: %s", name, adia_last_error());
        if (s == ADIA_OK) {
            double err = test_format_spmv_error(F, A, 7, 1.5, 0.5);
            CHECK(err < 1e-12, "%s SpMV with the threads clamped: error %g", name, err);
        }
        adia_format_destroy(F);
    }
}

static void solve_and_product(const adia_matrix *A)
{
    int32_t n = adia_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    CHECK(b && x, "vectors");
    if (!b || !x) goto out;
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + i % 3;
    adia_plan *P = NULL;
    adia_plan_hints h = {.expected_calls = 100};
    CHECK_OK(adia_plan_create(A, &h, &P));
    adia_solve_options o;
    adia_solve_options_default(&o);
    adia_solve_info in;
    CHECK_OK(adia_solve(A, P, b, x, &o, &in));
    CHECK(in.converged, "CG converged: %s", in.stop);
    adia_plan_destroy(P);
    adia_matrix *C = NULL;
    CHECK_OK(adia_spgemm(ADIA_OP_N, A, ADIA_OP_N, A, &C, NULL));
    CHECK(C && adia_matrix_nnz(C) > adia_matrix_nnz(A), "A*A has more entries than A");
    adia_matrix_destroy(C);
out:
    free(b);
    free(x);
}

static void text_round_trip(const adia_matrix *A)
{
    char path[] = "/tmp/adia_test_threads_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temporary file");
    if (fd < 0) return;
    close(fd);
    adia_matrix *B = NULL;
    CHECK_OK(adia_matrix_write_mtx(A, path));
    CHECK_OK(adia_matrix_read_mtx(path, &B));
    CHECK(B && adia_matrix_nnz(B) == adia_matrix_nnz(A), "read back");
    adia_matrix_destroy(B);
    unlink(path);
}

int main(void)
{
    TEST_BEGIN();
    const char *env = getenv("OMP_NUM_THREADS");
    if (!env || atol(env) <= adia_thread_limit())
        TEST_SKIP("needs OMP_NUM_THREADS above %d (ctest sets 100000)", adia_thread_limit());
    CHECK(adia_thread_limit() >= ADIA_THREADS_PER_PROC && adia_thread_limit() < 100000,
          "limit %d", adia_thread_limit());
    adia_matrix *A = test_generate("lap2d5:400");   /* 160000 rows, 798400 entries */
    if (!A) return TEST_END();
    adia_features f;
    CHECK_OK(adia_matrix_analyze(A, NULL, &f));
    every_format(A);
    solve_and_product(A);
    text_round_trip(A);
    adia_matrix_destroy(A);
    return TEST_END();
}
