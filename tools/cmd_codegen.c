/* cmd_codegen.c -- `adia codegen`: print the CUDA source of the kernel the
 * code generator makes for a matrix in a diagonal format.  Generating the
 * source needs no GPU (and works in a CPU-only build). */
#include "cli.h"

#include <stdlib.h>

static const char *const CODEGEN_USAGE =
    "usage: adia codegen FILE.mtx | --gen SPEC [--format FORMAT]\n\n"
    "Print the CUDA kernel generated for the matrix: each offset group's\n"
    "offsets as literal constants, the diagonal loop unrolled (paper Fig. 11).\n"
    "FORMAT: a diagonal format (adia info lists them), default brcsd2.";

int cmd_codegen(int argc, char **argv)
{
    const char *gen = NULL, *format = "brcsd2", *params = NULL;
    bool use_float = false;
    const cli_option opts[] = {
        {"gen", CLI_STRING, &gen, "generate the matrix from SPEC instead of reading FILE"},
        {"format", CLI_STRING, &format, "diagonal format (default brcsd2)"},
        {"params", CLI_STRING, &params, "format parameters key=value,... (e.g. B=128)"},
        {"float", CLI_FLAG, &use_float, "single-precision kernel (default double)"},
        {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    bool done;
    int rc = cli_parse(argc, argv, CODEGEN_USAGE, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    if ((npos == 1) == (gen != NULL))
        return cli_usage_error(argv[0], "give exactly one of FILE or --gen SPEC");
    if ((rc = cli_check_diagonal_format(argv[0], "format", format))) return rc;
    adia_format_params p;
    if ((rc = cli_parse_params(argv[0], params, &p))) return rc;
    adia_matrix *A = NULL;
    adia_status s = cli_load_matrix(npos ? pos[0] : NULL, gen, &A);
    if (s != ADIA_OK) return cli_fail(argv[0], s);
    if ((rc = cli_check_params(argv[0], &p, A))) {
        adia_matrix_destroy(A);
        return rc;
    }
    adia_format *F = NULL;
    char *src = NULL;
    s = adia_format_build(A, format, &p, use_float ? ADIA_FLOAT : ADIA_DOUBLE, &F);
    if (s != ADIA_OK) rc = cli_fail_params(argv[0], params, s);
    else if ((s = adia_codegen_source(F, &src)) != ADIA_OK) rc = cli_fail(argv[0], s);
    else fputs(src, stdout);
    free(src);
    adia_format_destroy(F);
    adia_matrix_destroy(A);
    return rc;
}
