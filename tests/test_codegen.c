/* test_codegen.c -- the code generator's source side on a hand-built
 * diagonal structure (no device needed); with CUDA, the generated source
 * and a broken one go through NVRTC (which needs no device either). */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "cuda/codegen.h"

#include <stdlib.h>
#include <string.h>

/* 10 x 12 matrix, pieces [0,4) [4,8) [8,10); groups {-1,0,2} and {0,7}. */
static int32_t piece_start[] = {0, 4, 8, 10};
static int32_t piece_group[] = {0, 1, 0};
static int64_t piece_data[] = {0, 12, 20, 26};
static int32_t group_start[] = {0, 3, 5};
static int32_t offsets[] = {-1, 0, 2, 0, 7};

static adia_diag make_diag(double *data)
{
    adia_diag D;
    memset(&D, 0, sizeof D);
    D.rows = 10;
    D.cols = 12;
    D.vtype = ADIA_DOUBLE;
    D.n_pieces = 3;
    D.piece_start = piece_start;
    D.piece_group = piece_group;
    D.piece_data = piece_data;
    D.n_groups = 2;
    D.group_start = group_start;
    D.offsets = offsets;
    D.data = data;
    return D;
}

/* ADIA_CODEGEN (issue 28, item 4): sync by default, background, off;
 * anything else refused with the value named. */
static void codegen_mode(void)
{
    static const struct { const char *v; adia_codegen_mode m; } ok[] = {
        {NULL, ADIA_CODEGEN_SYNC}, {"", ADIA_CODEGEN_SYNC},
        {"background", ADIA_CODEGEN_BACKGROUND}, {"sync", ADIA_CODEGEN_SYNC},
        {"off", ADIA_CODEGEN_OFF}, {"always", ADIA_CODEGEN_ALWAYS}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        if (ok[i].v) setenv("ADIA_CODEGEN", ok[i].v, 1);
        else unsetenv("ADIA_CODEGEN");
        adia_codegen_mode m = (adia_codegen_mode)-1;
        CHECK_OK(adia__codegen_mode(&m));
        CHECK(m == ok[i].m, "ADIA_CODEGEN=%s: mode %s", ok[i].v ? ok[i].v : "(unset)",
              adia__codegen_mode_name(m));
    }
    setenv("ADIA_CODEGEN", "later", 1);
    adia_codegen_mode m;
    CHECK_ERR(adia__codegen_mode(&m), ADIA_ERR_INVALID_ARG, "ADIA_CODEGEN=later");
    unsetenv("ADIA_CODEGEN");
}

int main(void)
{
    TEST_BEGIN();
    codegen_mode();
    double data[26] = {0};
    adia_diag D = make_diag(data);
    char *src = NULL;
    CHECK_OK(adia__codegen_diag_source(&D, ADIA_DOUBLE, 0, 0, &src));
    CHECK(src && strstr(src, "#define ADIA_VALUE double"), "value type in the prelude");
    CHECK(src && strstr(src, "case 0: ADIA_ACC(0, -1); ADIA_ACC(1, 0); ADIA_ACC(2, 2); break;"),
          "group 0 unrolled with literal offsets:\n%s", src ? src : "");
    CHECK(src && strstr(src, "case 1: ADIA_ACC(0, 0); ADIA_ACC(1, 7); break;"), "group 1");
    CHECK(src && strstr(src, "adia_diag_generic"), "template embedded");
    CHECK(src && strstr(src, ADIA_CODEGEN_KERNEL), "kernel name");
    char *fsrc = NULL;
    CHECK_OK(adia__codegen_diag_source(&D, ADIA_FLOAT, 0, 0, &fsrc));
    CHECK(fsrc && strstr(fsrc, "#define ADIA_VALUE float"), "float prelude");

    /* The public entry refuses a non-diagonal format. */
    adia_matrix *A = test_random_matrix(3, 20, 20, 0.2);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "csr", NULL, ADIA_DOUBLE, &F));
    char *csrc = NULL;
    CHECK_ERR(adia_codegen_source(F, &csrc), ADIA_ERR_UNSUPPORTED, "not a diagonal format");
    adia_format_destroy(F);
    adia_matrix_destroy(A);

    /* The fused-dot variant, in the per-row form (D: unaligned pieces) and
     * the warp form (one piece from row 0). */
    adia_diag W = D;
    int32_t one_piece[] = {0, 10}, one_group[] = {0};
    int64_t one_data[] = {0, 30};
    W.n_pieces = 1;
    W.piece_start = one_piece;
    W.piece_group = one_group;
    W.piece_data = one_data;
    W.n_groups = 1;
    CHECK(adia__codegen_rows_per_thread(&D, ADIA_DOUBLE, 0) == 0 &&
          adia__codegen_rows_per_thread(&W, ADIA_DOUBLE, 0) > 0, "one form of each");
    char *dsrc[2] = {NULL, NULL};
    CHECK_OK(adia__codegen_diag_source(&D, ADIA_DOUBLE, 0, 1, &dsrc[0]));
    CHECK_OK(adia__codegen_diag_source(&W, ADIA_FLOAT, 0, 1, &dsrc[1]));
    for (int t = 0; t < 2; t++)
        CHECK(dsrc[t] && strstr(dsrc[t], "#define ADIA_DOT true") &&
              strstr(dsrc[t], "adia_dot_finish(dots, dw)"), "dot variant %d", t);
    CHECK(!strstr(src, "#define ADIA_DOT true"), "the plain kernel has no epilogue sums");

    /* More offsets than the literal form takes: the shape form (a case per
     * group size; a group wider than ADIA_CODEGEN_SHAPE_K loops) in the
     * per-row layout (B: D's unaligned pieces), the loop form in the warp
     * layout (BW: one piece from row 0). */
    enum { BIG = ADIA_CODEGEN_MAX_TERMS + 1 };
    /* two groups of 12 diagonals (one case), one of BIG (the loop) */
    int32_t big_start[] = {0, 12, 24, 24 + BIG};
    int32_t *big = calloc(24 + BIG, sizeof *big);
    for (int k = 0; k < 24 + BIG; k++) big[k] = k < 24 ? k % 12 - (k < 12 ? 6 : 5) : k - 24 - BIG / 2;
    adia_diag B = D;
    B.n_groups = 3;
    B.group_start = big_start;
    B.offsets = big;
    int32_t bg[] = {0, 1, 2};
    B.piece_group = bg;
    adia_diag BW = W;
    BW.n_groups = 1;
    BW.group_start = big_start + 2;   /* one group of BIG offsets, from 24 */
    char *bsrc[2] = {NULL, NULL};
    CHECK_OK(adia__codegen_diag_source(&B, ADIA_DOUBLE, 0, 0, &bsrc[0]));
    CHECK_OK(adia__codegen_diag_source(&BW, ADIA_FLOAT, 0, 1, &bsrc[1]));
    CHECK(bsrc[0] && strstr(bsrc[0], "(shape form)") && strstr(bsrc[0], "switch (ADIA_K)") &&
          strstr(bsrc[0], "default:"), "shape form:\n%.2000s", bsrc[0] ? bsrc[0] : "");
    CHECK(bsrc[1] && strstr(bsrc[1], "(loop form)") && !strstr(bsrc[1], "switch (ADIA_K)") &&
          strstr(bsrc[1], "__shfl_sync(0xffffffffu, mine, j)"), "loop form (warp layout):\n%.2000s",
          bsrc[1] ? bsrc[1] : "");
    CHECK(bsrc[0] && strstr(bsrc[0], "case 12:") && !strstr(bsrc[0], "case 513:"),
          "one case for the two groups of 12, a loop for the group of 513");
    CHECK(!strstr(src, "(shape form)"), "a small matrix keeps the literal form");

#ifdef ADIA_HAVE_CUDA
    void *cubin = NULL;
    size_t size = 0;
    const char *sources[] = {src, fsrc, dsrc[0], dsrc[1], bsrc[0], bsrc[1]};
    for (int t = 0; t < 6; t++) {
        CHECK_OK(adia__codegen_nvrtc(sources[t], 90, &cubin, &size));
        CHECK(cubin && size > 0, "a CUBIN came back (source %d)", t);
        free(cubin);
        cubin = NULL;
    }
    CHECK_ERR(adia__codegen_nvrtc("extern \"C\" __global__ void k() { undeclared(); }", 90, &cubin, &size),
              ADIA_ERR_NVRTC, "undeclared");
    CHECK(strstr(adia_codegen_log(), "undeclared") != NULL, "log kept: %s", adia_codegen_log());
#endif
    free(src);
    free(fsrc);
    free(dsrc[0]);
    free(dsrc[1]);
    free(bsrc[0]);
    free(bsrc[1]);
    free(big);
    return TEST_END();
}
