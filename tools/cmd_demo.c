/* cmd_demo.c -- `adia demo` (not written yet). */
#include "cli.h"

int cmd_demo(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
