/* cmd_codegen.c -- `adia codegen` (not written yet). */
#include "cli.h"

int cmd_codegen(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
