/* test_gpu_spmm.c -- the GPU product equals the CPU HM product (to 1e-14
 * relative; the kernel sums in the CPU's order without FMA, so bitwise
 * equality is expected and reported) for every op combination, accumulate,
 * rectangular and larger-than-a-block inputs.  Skipped without a device. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static adia_matrix *diag_matrix(uint64_t seed, int32_t m, int32_t n, int nd,
                                const int32_t *off)
{
    int64_t cap = 1;
    for (int d = 0; d < nd; d++) cap += (m < n ? m : n);
    int32_t *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    uint64_t st = seed * 31 + 1;
    int64_t k = 0;
    for (int d = 0; d < nd; d++)
        for (int32_t i = off[d] < 0 ? -off[d] : 0; i < m && i + off[d] < n; i++) {
            r[k] = i;
            c[k] = i + off[d];
            v[k++] = test_rand(&st) + 2.0;
        }
    adia_matrix *A = NULL;
    adia_matrix_create_coo(m, n, k, r, c, v, ADIA_DOUBLE, &A);
    free(r); free(c); free(v);
    return A;
}

static double diff(const adia_matrix *C, const adia_matrix *R)
{
    adia_csr_view c, r;
    if (!C || !R || adia_matrix_csr(C, &c) || adia_matrix_csr(R, &r) || c.nnz != r.nnz ||
        memcmp(c.colind, r.colind, (size_t)c.nnz * 4) ||
        memcmp(c.rowptr, r.rowptr, ((size_t)c.rows + 1) * 8))
        return INFINITY;
    return test_rel_err(c.values, r.values, c.nnz);
}

static void compare(const char *what, adia_op oa, const adia_matrix *A, adia_op ob,
                    const adia_matrix *B, int accumulate, const adia_matrix *C0)
{
    adia_matrix *Cc = NULL, *Cg = NULL;
    adia_spmm_options opt;
    adia_spmm_info info;
    adia_spmm_options_default(&opt);
    opt.algorithm = ADIA_SPMM_HM;
    opt.accumulate = accumulate;
    if (accumulate) {
        adia_matrix_copy(C0, &Cc);
        adia_matrix_copy(C0, &Cg);
    }
    CHECK_OK(adia_spmm(oa, A, ob, B, &Cc, &opt));
    opt.device = ADIA_DEVICE_GPU;
    opt.info = &info;
    CHECK_OK(adia_spmm(oa, A, ob, B, &Cg, &opt));
    double e = diff(Cg, Cc);
    CHECK(e <= 1e-14, "%s: GPU vs CPU relative error %g", what, e);
    printf("%-28s nnz %10lld  kernel %8.3f ms  %s\n", what, (long long)adia_matrix_nnz(Cg),
           info.time_ms, adia_matrix_equal(Cg, Cc) ? "bitwise equal" : "NOT bitwise equal");
    adia_matrix_destroy(Cc);
    adia_matrix_destroy(Cg);
}

int main(void)
{
    TEST_BEGIN();
    int ndev = 0;
    CHECK_OK(adia_gpu_device_count(&ndev));
    if (ndev == 0) TEST_SKIP("no CUDA device");

    int32_t band[41];
    for (int i = 0; i < 41; i++) band[i] = i - 20;
    int32_t rnd[] = {-4500, -3001, -977, -5, 0, 3, 64, 1200, 2999, 4096};
    adia_matrix *A = diag_matrix(1, 10000, 10000, 41, band);
    adia_matrix *B = diag_matrix(2, 10000, 10000, 10, rnd);
    adia_matrix *R1 = diag_matrix(3, 700, 1300, 6, rnd + 2);   /* 700 x 1300 */
    adia_matrix *R2 = diag_matrix(4, 1300, 500, 5, rnd + 3);   /* 1300 x 500 */
    adia_matrix *C0 = diag_matrix(5, 10000, 10000, 3, rnd + 4);
    for (int oa = 0; oa < 2; oa++)
        for (int ob = 0; ob < 2; ob++) {
            char name[64];
            snprintf(name, sizeof name, "banded x random %s/%s", oa ? "T" : "N", ob ? "T" : "N");
            compare(name, (adia_op)oa, A, (adia_op)ob, B, 0, NULL);
        }
    compare("banded x banded", ADIA_OP_N, A, ADIA_OP_N, A, 0, NULL);
    compare("accumulate", ADIA_OP_T, B, ADIA_OP_N, A, 1, C0);
    compare("rectangular N/T", ADIA_OP_N, R1, ADIA_OP_T, R1, 0, NULL);
    compare("rectangular T/T", ADIA_OP_T, R2, ADIA_OP_T, R1, 0, NULL);
    adia_matrix *E = NULL;
    adia_matrix_create_coo(300, 300, 0, NULL, NULL, NULL, ADIA_DOUBLE, &E);
    compare("empty", ADIA_OP_N, E, ADIA_OP_N, E, 0, NULL);
    adia_matrix_destroy(E);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    adia_matrix_destroy(R1);
    adia_matrix_destroy(R2);
    adia_matrix_destroy(C0);
    return TEST_END();
}
