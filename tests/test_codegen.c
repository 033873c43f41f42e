/* test_codegen.c -- the code generator's source side on a hand-built
 * diagonal structure (no device needed); with CUDA, the generated source
 * and a broken one go through NVRTC (which needs no device either). */
#include "testutil.h"
#include "cuda/codegen.h"

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

int main(void)
{
    TEST_BEGIN();
    double data[26] = {0};
    adia_diag D = make_diag(data);
    char *src = NULL;
    CHECK_OK(adia_codegen_diag_source(&D, ADIA_DOUBLE, 0, &src));
    CHECK(src && strstr(src, "#define ADIA_VALUE double"), "value type in the prelude");
    CHECK(src && strstr(src, "case 0: ADIA_ACC(0, -1); ADIA_ACC(1, 0); ADIA_ACC(2, 2); break;"),
          "group 0 unrolled with literal offsets:\n%s", src ? src : "");
    CHECK(src && strstr(src, "case 1: ADIA_ACC(0, 0); ADIA_ACC(1, 7); break;"), "group 1");
    CHECK(src && strstr(src, "adia_diag_generic"), "template embedded");
    CHECK(src && strstr(src, ADIA_CODEGEN_KERNEL), "kernel name");
    char *fsrc = NULL;
    CHECK_OK(adia_codegen_diag_source(&D, ADIA_FLOAT, 0, &fsrc));
    CHECK(fsrc && strstr(fsrc, "#define ADIA_VALUE float"), "float prelude");

    /* Too many offsets: refused with a message naming the limit. */
    int32_t big_start[] = {0, ADIA_CODEGEN_MAX_TERMS + 1};
    int32_t *big = calloc(ADIA_CODEGEN_MAX_TERMS + 1, sizeof *big);
    adia_diag B = D;
    B.n_groups = 1;
    B.group_start = big_start;
    B.offsets = big;
    char *bsrc = NULL;
    CHECK_ERR(adia_codegen_diag_source(&B, ADIA_DOUBLE, 0, &bsrc), ADIA_ERR_UNSUPPORTED, "exceed the limit");
    CHECK(bsrc == NULL, "no source on failure");
    free(big);

    /* The public entry refuses a non-diagonal format. */
    adia_matrix *A = test_random_matrix(3, 20, 20, 0.2);
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "csr", NULL, ADIA_DOUBLE, &F));
    char *csrc = NULL;
    CHECK_ERR(adia_codegen_source(F, &csrc), ADIA_ERR_UNSUPPORTED, "not a diagonal format");
    adia_format_destroy(F);
    adia_matrix_destroy(A);

#ifdef ADIA_HAVE_CUDA
    void *cubin = NULL;
    size_t size = 0;
    for (int t = 0; t < 2; t++) {
        CHECK_OK(adia_codegen_nvrtc(t ? fsrc : src, 90, &cubin, &size));
        CHECK(cubin && size > 0, "a CUBIN came back");
        free(cubin);
        cubin = NULL;
    }
    CHECK_ERR(adia_codegen_nvrtc("extern \"C\" __global__ void k() { undeclared(); }", 90, &cubin, &size),
              ADIA_ERR_NVRTC, "undeclared");
    CHECK(strstr(adia_codegen_log(), "undeclared") != NULL, "log kept: %s", adia_codegen_log());
#endif
    free(src);
    free(fsrc);
    return TEST_END();
}
