/* cmd_spy.c -- `adia spy` (not written yet). */
#include "cli.h"

int cmd_spy(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
