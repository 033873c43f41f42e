/* testutil.h -- the small test harness every tests/test_*.c uses.
 *
 *   int main(void) { TEST_BEGIN(); ... CHECK(cond, "fmt", ...); ... return TEST_END(); }
 *
 * Each CHECK counts one assertion; TEST_END prints "N passed, N failed" and
 * returns 0 or 1.  TEST_SKIP(why) exits with 77 (ctest: skipped). */
#ifndef ADIA_TESTUTIL_H
#define ADIA_TESTUTIL_H

#include "adia.h"
#include "adia_bench.h"   /* timings, adia_random_value, adia_rel_err: not the API */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern int test_passed, test_failed;

#define TEST_BEGIN() (test_passed = test_failed = 0)
#define TEST_END() test_end(__FILE__)
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            test_passed++;                                                     \
        } else {                                                               \
            test_failed++;                                                     \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
        }                                                                      \
    } while (0)
/* An adia call that must succeed; prints the library's message otherwise. */
#define CHECK_OK(expr)                                                         \
    do {                                                                       \
        adia_status s_ = (expr);                                               \
        CHECK(s_ == ADIA_OK, "%s -> %s: %s", #expr, adia_status_string(s_),    \
              adia_last_error());                                              \
    } while (0)
/* An adia call that must fail with code and a message containing needle. */
#define CHECK_ERR(expr, code, needle)                                          \
    do {                                                                       \
        adia_status s_ = (expr);                                               \
        CHECK(s_ == (code) && test_contains(adia_last_error(), (needle)),      \
              "%s -> %s (%s), expected %s with \"%s\"", #expr,                 \
              adia_status_string(s_), adia_last_error(),                       \
              adia_status_string(code), (needle));                             \
    } while (0)
#define TEST_SKIP(...)                                                         \
    do {                                                                       \
        printf("SKIPPED: ");                                                   \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
        exit(77);                                                              \
    } while (0)
/* A GPU test's first line after TEST_BEGIN: skipped (77) where no CUDA
 * device is usable; adia_gpu_device_count failing is a failed check. */
#define TEST_NEED_DEVICE()                                                     \
    do {                                                                       \
        int ndev_ = 0;                                                         \
        CHECK_OK(adia_gpu_device_count(&ndev_));                               \
        if (ndev_ == 0) TEST_SKIP("no CUDA device");                           \
    } while (0)

int test_end(const char *file);
/* Monotonic wall clock in seconds. */
double test_seconds(void);
int test_contains(const char *haystack, const char *needle);

/* Deterministic random numbers (xorshift64*), uniform in [-1, 1). */
double test_rand(uint64_t *state);
void test_rand_vector(uint64_t *state, double *v, int64_t n);

/* max_i |a_i - b_i| / max(max_i |b_i|, tiny): relative error against a
 * reference b; NaN if any a_i is NaN where b_i is not. */
double test_rel_err(const double *a, const double *b, int64_t n);
/* Arrays of n elements of sz bytes equal bytewise: a CHECK naming the
 * first index that differs. */
void test_same_bytes(const char *label, const char *what, const void *a, const void *b,
                     int64_t n, size_t sz);

/* Random sparse matrix rows x cols with about density*rows*cols entries,
 * some empty rows; values in [-1, 1). */
adia_matrix *test_random_matrix(uint64_t seed, int32_t rows, int32_t cols,
                                double density);
/* adia_matrix_generate(spec), checked (one assertion); NULL on failure. */
adia_matrix *test_generate(const char *spec);
/* A plan of A in format on device (0 CPU, 1 GPU) with value type vt,
 * chosen as given (ADIA_CHOOSE_FIXED, 100 expected calls), checked (one
 * assertion); NULL on failure. */
adia_plan *test_plan_fixed(const adia_matrix *A, const char *format, adia_value_type vt,
                           int device);
/* Solve A x = A xstar from x0 = 0, xstar random from seed: by adia_solve
 * on plan P (NULL: a plan of its own), or by adia_solve_operator on op
 * when op is given.  *status, *info as the solve's; returns ||x - xstar|| /
 * ||xstar|| (INFINITY when the solve failed). */
double test_solve_known(const adia_matrix *A, adia_plan *P, const adia_operator *op,
                        const adia_solve_options *o, uint64_t seed, adia_solve_info *info,
                        adia_status *status);
/* ||b - A x|| / ||b|| with b and x scaled by 2^-e first (exact: a power
 * of two), so that a b of 1e308 or 1e-320 and its x are checked without
 * overflow or underflow: a test's own true residual (CSR product). */
double test_scaled_residual(const adia_matrix *A, const double *b, const double *x, int e);
/* CG on plan P (o: the caller's options: precond, jacobi, max_iter) of
 * A x = A ones from x0 = 0: its iterations where it says converged, else
 * -1.  A converged answer is checked by the test's own true residual
 * (at most tol, a failed CHECK otherwise); *ms (may be NULL): its time. */
int test_cg_ones(const adia_matrix *A, adia_plan *P, adia_solve_options o, double tol, double *ms);
/* An m x n matrix of the diagonals off[0..nd) (their entries inside the
 * matrix), each entry kept with probability fill (>= 1: all), value a
 * random nonzero in [-1, 1) plus shift -- or special(i, j) where that
 * returns a value other than 0 (Inf, NaN placement; special may be NULL).
 * Deterministic in seed; NULL (with a message) if it cannot be built. */
adia_matrix *test_diag_matrix(uint64_t seed, int32_t m, int32_t n, int nd, const int32_t *off,
                              double fill, double shift, double (*special)(int32_t, int32_t));
/* Entries of a hand-made rows x cols matrix, collected one at a time. */
typedef struct test_coo {
    int32_t rows, cols;
    int64_t n, cap;
    int32_t *r, *c;
    double *v;
} test_coo;
void test_coo_add(test_coo *m, int64_t r, int64_t c, double v);   /* exits when out of memory */
/* The matrix of m's entries (one assertion that it builds; NULL if not);
 * m's arrays are freed and m emptied. */
adia_matrix *test_coo_matrix(test_coo *m);
#ifdef ADIA_HAVE_CUDA
/* n host doubles to a new device array of doubles (fl 0) or floats (fl 1),
 * NULL if an allocation or the copy fails; and back into host doubles
 * (0, or -1 if the copy fails). */
void *test_gpu_upload(const double *h, int64_t n, int fl);
int test_gpu_download(double *h, const void *d, int64_t n, int fl);
/* bytes of host memory in a new device array (bytes 0: one byte), NULL
 * after a failed assertion naming the CUDA error. */
void *test_gpu_copy(const void *h, size_t bytes);
/* A's CSR on the device in the GPU builds' layout (struct adia_gpu_csr of
 * cuda/diag_build.h: int64 row pointers, double values): 1, or 0 after a
 * failed assertion; g is set either way, its arrays device memory or NULL
 * for test_gpu_csr_free. */
struct adia_gpu_csr;
int test_gpu_csr_upload(const adia_matrix *A, struct adia_gpu_csr *g);
void test_gpu_csr_free(struct adia_gpu_csr *g);
/* max |y - ref| / max |ref| of a GPU plan's y = A x (x random, rounded to
 * the plan's value type) against A's own product on the host; Inf when
 * the product fails, 0 for no rows. */
double test_gpu_plan_error(adia_plan *P, const adia_matrix *A);
/* y = alpha*F*x + beta*y through adia_format_spmv_gpu with host doubles in
 * and out (rounded to float for a float format); ADIA_ERR_CUDA if a copy
 * fails. */
adia_status test_gpu_format_spmv(adia_format *F, double alpha, const double *x, double beta,
                                 double *y);
#endif
/* Do rows [first, first + rows of P) of A equal the rows of P (columns
 * and values, bitwise)?  1 when they do, else 0 after a message naming the
 * first row that differs. */
int test_rows_equal(const adia_matrix *A, int64_t first, const adia_matrix *P);
/* A matrix built from a dense row-major array (zeros skipped). */
adia_matrix *test_dense_matrix(int32_t rows, int32_t cols, const double *a);
/* A copy of A with its values rounded to vt: what a format of that value
 * type holds and gives back (NULL after a message on failure). */
adia_matrix *test_rounded(const adia_matrix *A, adia_value_type vt);
/* A preconditioner of n rows (device 1: a double GPU one, host vectors
 * copied through) is symmetric positive definite as far as three random
 * pairs tell: x'My = y'Mx within 1e-12 relative, x'Mx > 0 and y'My > 0
 * (failures name label). */
void test_precond_spd(adia_precond *M, int32_t n, int device, uint64_t seed, const char *label);

/* Path of ../shared/matrices/<name> if that folder exists, else NULL
 * (static buffer).  test_shared_dir() returns the folder or NULL. */
const char *test_shared_dir(void);
const char *test_shared_path(const char *name);

/* Check F's CPU SpMV against the reference on random x, y with alpha, beta;
 * returns the relative error (double) computed in double. */
double test_format_spmv_error(const adia_format *F, const adia_matrix *A,
                              uint64_t seed, double alpha, double beta);

#endif
