/* cmd_spy.c -- `adia spy`: draw the sparsity picture of a matrix as PNG,
 * optionally with the row pieces of a diagonal format over it. */
#include "cli.h"
#include "progress.h"

#include <stdio.h>

static const char *const usage =
    "usage: adia spy FILE.mtx|--gen SPEC -o FILE.png [--size PIXELS] [--overlay FORMAT]\n"
    "                [--params k=v,...]\n\n"
    "Writes the sparsity picture (nonzeros per pixel, log colour scale) as PNG.\n"
    "--overlay draws the row pieces of a diagonal format (adia info lists\n"
    "them): red lines where the offset group changes, orange lines at\n"
    "other piece boundaries, a band left of the plot coloured by group.";

int cmd_spy(int argc, char **argv)
{
    const char *cmd = argv[0], *gen = NULL, *out = NULL, *overlay = NULL, *params = NULL;
    long size = 800;
    const cli_option opts[] = {
        {"gen", CLI_STRING, &gen, "generate the matrix from SPEC instead of reading FILE"},
        {"o", CLI_STRING, &out, "output PNG file (required, .png)"},
        {"output", CLI_STRING, &out, "same as -o"},
        {"size", CLI_INT, &size, "longest image side in pixels, 8..8192 (default 800)"},
        {"overlay", CLI_STRING, &overlay, "diagonal format whose pieces to draw"},
        {"params", CLI_STRING, &params, "format parameters for --overlay, e.g. B=256,eta=64"},
        {NULL, CLI_FLAG, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    bool done;
    int rc = cli_parse(argc, argv, usage, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    if ((npos == 1) == (gen != NULL))
        return cli_usage_error(cmd, "give either a matrix FILE or --gen SPEC (see --help)");
    if (!out) return cli_usage_error(cmd, "missing -o FILE.png");
    if ((rc = cli_check_png_output(cmd, "-o", out))) return rc;
    const cli_file in[] = {{"FILE", npos ? pos[0] : NULL}}, outs[] = {{"-o", out}};
    if ((rc = cli_check_files(cmd, in, 1, outs, 1))) return rc;
    if ((rc = cli_check_range(cmd, "size", (double)size, 8, 8192))) return rc;
    if (overlay && (rc = cli_check_diagonal_format(cmd, "overlay", overlay))) return rc;
    if (params && !overlay) return cli_usage_error(cmd, "--params needs --overlay");
    adia_format_params fp;
    if ((rc = cli_parse_params(cmd, params, &fp))) return rc;
    adia_matrix *A = NULL;
    if ((rc = cli_open_matrix(cmd, npos ? pos[0] : NULL, gen, &A))) return rc;
    if ((rc = cli_check_params(cmd, &fp, A))) {
        adia_matrix_destroy(A);
        return rc;
    }
    adia_spy_options o = {.size = (int)size, .overlay = overlay, .params = &fp,
                          .progress = progress_callback};
    progress_begin("drawing");
    adia_status s = adia_matrix_spy_png(A, out, &o);
    progress_end();
    adia_matrix_destroy(A);
    return s == ADIA_OK ? 0 : cli_fail_params(cmd, params, s);
}
