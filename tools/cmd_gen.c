/* cmd_gen.c -- `adia gen` (not written yet). */
#include "cli.h"

int cmd_gen(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
