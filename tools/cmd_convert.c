/* cmd_convert.c -- `adia convert` (not written yet). */
#include "cli.h"

int cmd_convert(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
