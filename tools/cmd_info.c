/* cmd_info.c -- `adia info` (not written yet). */
#include "cli.h"

int cmd_info(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
