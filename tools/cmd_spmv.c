/* cmd_spmv.c -- `adia spmv` (not written yet). */
#include "cli.h"

int cmd_spmv(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
