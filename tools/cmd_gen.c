/* cmd_gen.c -- `adia gen SPEC [-o OUT]`: build a matrix from a generator
 * spec, write it by the output's suffix, report its size. */
#include "cli.h"

#include <inttypes.h>

static const char usage[] =
    "usage: adia gen SPEC [-o OUT.mtx|OUT.mtx.gz|OUT.bin] [--json] [--list]\n"
    "Generate a matrix from SPEC (see --list), write it to OUT if given and\n"
    "print its rows, cols and nonzeros.";

static void print_generators(void)
{
    printf("generator specs (append \",seed=S\" to any):\n%s", adia_generator_help());
}

int cmd_gen(int argc, char **argv)
{
    const char *out = NULL;
    bool json = false, list = false, done;
    const cli_option opts[] = {
        {"o", CLI_STRING, &out, "output file: .mtx, .mtx.gz or .bin by suffix"},
        {"output", CLI_STRING, &out, "same as -o"},
        {"json", CLI_FLAG, &json, "print one JSON object {spec, rows, cols, nnz, output}"},
        {"list", CLI_FLAG, &list, "list the generator specs"},
        {0},
    };
    const char *pos[1];
    int npos, rc = cli_parse(argc, argv, usage, opts, pos, 1, &npos, &done);
    if (done) print_generators();
    if (rc || done) return rc;
    if (list) {
        print_generators();
        return 0;
    }
    if (npos < 1) return cli_usage_error(argv[0], "missing SPEC (see --list)");
    if (out && (rc = cli_check_output(argv[0], out))) return rc;

    adia_matrix *A;
    if ((rc = cli_open_matrix(argv[0], NULL, pos[0], &A))) return rc;
    if (out) rc = cli_write_matrix(argv[0], A, out);
    if (rc == 0 && json) {
        cli_json j;
        json_begin(&j, stdout);
        json_str(&j, "spec", pos[0]);
        json_int(&j, "rows", adia_matrix_rows(A));
        json_int(&j, "cols", adia_matrix_cols(A));
        json_int(&j, "nnz", adia_matrix_nnz(A));
        if (out) json_str(&j, "output", out);
        json_end(&j);
    } else if (rc == 0) {
        printf("%s: %d x %d, %" PRId64 " nonzeros%s%s\n", pos[0], (int)adia_matrix_rows(A),
               (int)adia_matrix_cols(A), adia_matrix_nnz(A), out ? " -> " : "", out ? out : "");
    }
    adia_matrix_destroy(A);
    return rc;
}
