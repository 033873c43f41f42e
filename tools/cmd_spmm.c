/* cmd_spmm.c -- `adia spmm` (not written yet). */
#include "cli.h"

int cmd_spmm(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
