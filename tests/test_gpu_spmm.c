/* test_gpu_spmm.c -- the GPU product equals the CPU HM product bitwise
 * (same pair order, no FMA; NaN where the CPU has NaN) with each GPU kernel
 * forced in turn (options.gpu_kernel: tiled, streaming): banded odd sizes
 * (n = 1, n below a tile, n not a multiple of it), a stencil whose offsets
 * make several staged B segments, rectangular shapes, every op combination,
 * accumulate, a single diagonal, empty matrices and Inf/NaN on the band
 * edge; and the automatic choice (tiled for bands, streaming for scattered
 * offsets).  Skipped without a device. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static adia_matrix *banded(uint64_t seed, int32_t m, int32_t n, int32_t bw,
                           double (*special)(int32_t, int32_t))
{
    int32_t off[2 * 32 + 1];
    for (int32_t o = -bw; o <= bw; o++) off[o + bw] = o;
    return test_diag_matrix(seed, m, n, 2 * bw + 1, off, 1.0, 2.0, special);
}

/* Same pattern and every value bitwise equal or both NaN. */
static int same(const adia_matrix *C, const adia_matrix *R)
{
    adia_csr_view c, r;
    if (!C || !R || adia_matrix_csr(C, &c) || adia_matrix_csr(R, &r) || c.nnz != r.nnz ||
        c.rows != r.rows || memcmp(c.colind, r.colind, (size_t)c.nnz * 4) ||
        memcmp(c.rowptr, r.rowptr, ((size_t)c.rows + 1) * 8))
        return 0;
    for (int64_t i = 0; i < c.nnz; i++)
        if (!(isnan(c.values[i]) && isnan(r.values[i])) &&
            memcmp(&c.values[i], &r.values[i], 8) != 0)
            return 0;
    return 1;
}

/* kernel: "tiled", "stream" or NULL (automatic choice).  want_tiled: the
 * tile rows info must report (> 0), not (0), or -1 anything. */
static void compare(const char *what, const char *kernel, adia_op oa, const adia_matrix *A,
                    adia_op ob, const adia_matrix *B, const adia_matrix *C0, int want_tiled)
{
    adia_matrix *Cc = NULL, *Cg = NULL;
    adia_spgemm_options opt;
    adia_spgemm_info info;
    adia_spgemm_options_default(&opt);
    int gpu_kernel = !kernel ? 0 : !strcmp(kernel, "tiled") ? 1 : 2;
    opt.algorithm = ADIA_SPGEMM_HM;
    opt.accumulate = C0 != NULL;
    if (C0) {
        CHECK_OK(adia_matrix_copy(C0, &Cc));
        CHECK_OK(adia_matrix_copy(C0, &Cg));
    }
    CHECK_OK(adia_spgemm(oa, A, ob, B, &Cc, &opt));
    opt.device = ADIA_DEVICE_GPU;
    opt.gpu_kernel = gpu_kernel;
    opt.info = &info;
    memset(&info, 0, sizeof info);
    info.gpu_tile_rows = -1;
    CHECK_OK(adia_spgemm(oa, A, ob, B, &Cg, &opt));
    int eq = same(Cg, Cc);
    CHECK(eq, "%s [%s]: GPU differs from the CPU HM product", what, kernel ? kernel : "auto");
    if (want_tiled >= 0)
        CHECK((info.gpu_tile_rows > 0) == want_tiled, "%s [%s]: tile rows %d, wanted the %s "
              "kernel", what, kernel ? kernel : "auto", (int)info.gpu_tile_rows,
              want_tiled ? "tiled" : "streaming");
    CHECK(info.device_ms >= info.time_ms && info.transfer_ms >= 0,
          "%s: device %g ms < kernel %g ms", what, info.device_ms, info.time_ms);
    printf("%-30s %-6s nnz %9lld  T %3d  kernel %7.3f  device %7.3f  transfer %7.3f ms\n",
           what, kernel ? kernel : "auto", (long long)adia_matrix_nnz(Cg),
           (int)info.gpu_tile_rows, info.time_ms, info.device_ms, info.transfer_ms);
    adia_matrix_destroy(Cc);
    adia_matrix_destroy(Cg);
}

/* Both kernels forced, both must agree with the CPU. */
static void both(const char *what, adia_op oa, const adia_matrix *A, adia_op ob,
                 const adia_matrix *B, const adia_matrix *C0)
{
    compare(what, "tiled", oa, A, ob, B, C0, 1);
    compare(what, "stream", oa, A, ob, B, C0, 0);
}

/* Inf and NaN on the first and last entries of the outermost diagonals. */
static double edge_special(int32_t i, int32_t j)
{
    if (i == 0 && j == 3) return INFINITY;
    if (i == 3 && j == 0) return NAN;
    if (i == 600 && j == 597) return -INFINITY;
    if (i == 996 && j == 999) return NAN;
    return 0;
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();

    /* banded, odd sizes: n = 1, below one tile, not a multiple of it */
    const int32_t sizes[] = {1, 37, 1000, 5003};
    for (int s = 0; s < 4; s++) {
        char name[64];
        adia_matrix *A = banded(1, sizes[s], sizes[s], 20, NULL);
        adia_matrix *B = banded(2, sizes[s], sizes[s], 5, NULL);
        snprintf(name, sizeof name, "band n=%d bw 20 x 5", (int)sizes[s]);
        both(name, ADIA_OP_N, A, ADIA_OP_N, B, NULL);
        adia_matrix_destroy(A);
        adia_matrix_destroy(B);
    }
    /* every op combination, rectangular: A 300 x 517, B 517 x 260 */
    adia_matrix *R1 = banded(3, 300, 517, 7, NULL), *R2 = banded(4, 517, 260, 3, NULL);
    adia_matrix *R1t = banded(5, 517, 300, 4, NULL), *R2t = banded(6, 260, 517, 9, NULL);
    both("rect N/N", ADIA_OP_N, R1, ADIA_OP_N, R2, NULL);
    both("rect T/N", ADIA_OP_T, R1t, ADIA_OP_N, R2, NULL);
    both("rect N/T", ADIA_OP_N, R1, ADIA_OP_T, R2t, NULL);
    both("rect T/T", ADIA_OP_T, R1t, ADIA_OP_T, R2t, NULL);
    /* a stencil whose B windows form three segments */
    int32_t st[] = {-1000, -30, -1, 0, 1, 30, 1000};
    adia_matrix *S = test_diag_matrix(7, 4099, 4099, 7, st, 1.0, 2.0, NULL);
    both("stencil 7 offsets squared", ADIA_OP_N, S, ADIA_OP_N, S, NULL);
    both("stencil T x N", ADIA_OP_T, S, ADIA_OP_N, S, NULL);
    /* accumulate into a C with diagonals of its own */
    int32_t c0off[] = {-2000, -1, 4, 57};
    adia_matrix *C0 = test_diag_matrix(8, 4099, 4099, 4, c0off, 1.0, 2.0, NULL);
    both("accumulate", ADIA_OP_N, S, ADIA_OP_T, S, C0);
    /* single diagonals */
    int32_t o3 = 3, om2 = -2;
    adia_matrix *D1 = test_diag_matrix(9, 800, 800, 1, &o3, 1.0, 2.0, NULL);
    adia_matrix *D2 = test_diag_matrix(10, 800, 800, 1, &om2, 1.0, 2.0, NULL);
    both("single diagonal", ADIA_OP_N, D1, ADIA_OP_N, D2, NULL);
    /* empty operands */
    adia_matrix *E = NULL;
    CHECK_OK(adia_matrix_create_coo(300, 300, 0, NULL, NULL, NULL, ADIA_DOUBLE, &E));
    both("empty", ADIA_OP_N, E, ADIA_OP_N, E, NULL);
    both("empty x rect", ADIA_OP_N, E, ADIA_OP_N, R1, NULL);
    /* Inf/NaN on the band edge: NaN exactly where the CPU has it */
    adia_matrix *I = banded(11, 1000, 1000, 3, edge_special);
    adia_matrix *J = banded(12, 1000, 1000, 2, NULL);
    both("Inf/NaN at band edge, A", ADIA_OP_N, I, ADIA_OP_N, J, NULL);
    both("Inf/NaN at band edge, B", ADIA_OP_N, J, ADIA_OP_N, I, NULL);
    both("Inf/NaN at band edge, T", ADIA_OP_T, I, ADIA_OP_T, I, NULL);
    /* the automatic choice: tiled for a band, streaming for scattered offsets */
    int32_t rnd[40];
    for (int d = 0; d < 40; d++) rnd[d] = -5000 + 250 * d + (37 * d) % 97;  /* distinct */
    adia_matrix *Rn = test_diag_matrix(13, 12000, 12000, 40, rnd, 1.0, 2.0, NULL);
    compare("auto: band", NULL, ADIA_OP_N, I, ADIA_OP_N, J, NULL, 1);
    compare("auto: 40 offsets in +-5000", NULL, ADIA_OP_N, Rn, ADIA_OP_N, Rn, NULL, 0);
    adia_matrix *X = NULL;
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    opt.device = ADIA_DEVICE_GPU;
    opt.gpu_kernel = 1;   /* tiled */
    CHECK_ERR(adia_spgemm(ADIA_OP_N, Rn, ADIA_OP_N, Rn, &X, &opt), ADIA_ERR_UNSUPPORTED,
              "does not fit");
    adia_matrix *mats[] = {R1, R2, R1t, R2t, S, C0, D1, D2, E, I, J, Rn};
    for (size_t i = 0; i < sizeof mats / sizeof *mats; i++) adia_matrix_destroy(mats[i]);
    return TEST_END();
}
