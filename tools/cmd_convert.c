/* cmd_convert.c -- `adia convert IN OUT`: read any supported input (Matrix
 * Market, .gz, adia binary: by content) and write OUT by its suffix; the
 * header comments of a Matrix Market input go into a Matrix Market OUT. */
#include "cli.h"

#include <inttypes.h>

static const char usage[] =
    "usage: adia convert IN OUT [--json]\n"
    "Convert a matrix: IN is Matrix Market (.mtx, .mtx.gz) or adia binary,\n"
    "recognised by content; OUT is written by suffix: .mtx, .mtx.gz or .bin.\n"
    "The comment lines of a Matrix Market header are kept in a Matrix Market\n"
    "OUT (the binary format has no place for them); IN and OUT may be the same.";

int cmd_convert(int argc, char **argv)
{
    bool json = false, done;
    const cli_option opts[] = {
        {"json", CLI_FLAG, &json, "print one JSON object {input, output, rows, cols, nnz}"},
        {0},
    };
    const char *pos[2];
    int npos, rc = cli_parse(argc, argv, usage, opts, pos, 2, &npos, &done);
    if (rc || done) return rc;
    if (npos < 2) return cli_usage_error(argv[0], "need IN and OUT (see --help)");
    if ((rc = cli_check_output(argv[0], pos[1]))) return rc;

    adia_matrix *A;
    if ((rc = cli_open_matrix(argv[0], pos[0], NULL, &A))) return rc;
    rc = cli_write_matrix(argv[0], A, pos[1]);
    if (rc == 0 && json) {
        cli_json j;
        json_begin(&j, stdout);
        json_str(&j, "input", pos[0]);
        json_str(&j, "output", pos[1]);
        json_int(&j, "rows", adia_matrix_rows(A));
        json_int(&j, "cols", adia_matrix_cols(A));
        json_int(&j, "nnz", adia_matrix_nnz(A));
        json_end(&j);
    } else if (rc == 0) {
        printf("%s -> %s: %d x %d, %" PRId64 " nonzero%s\n", pos[0], pos[1],
               (int)adia_matrix_rows(A), (int)adia_matrix_cols(A), adia_matrix_nnz(A),
               adia_matrix_nnz(A) == 1 ? "" : "s");
    }
    adia_matrix_destroy(A);
    return rc;
}
