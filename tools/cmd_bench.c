/* cmd_bench.c -- `adia bench` (not written yet). */
#include "cli.h"

int cmd_bench(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
