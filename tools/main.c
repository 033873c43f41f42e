/* main.c -- `adia`: the command-line tool.  One file per subcommand
 * (tools/cmd_<name>.c); this table lists them. */
#define _XOPEN_SOURCE 700   /* sigaction, SIGXFSZ */
#include "cli.h"

#include <signal.h>
#include <string.h>

static const cli_command commands[] = {
    {"demo", "the main job: analyse, pick a format and run SpMV on sample matrices", cmd_demo},
    {"gen", "generate a matrix (stencils, banded, type I/II/III, random diagonals, unstructured)", cmd_gen},
    {"info", "features, type, chosen format and per-format storage of a matrix", cmd_info},
    {"convert", "convert between Matrix Market (.mtx, .mtx.gz) and adia binary", cmd_convert},
    {"spmv", "run y = A*x in a chosen format on the CPU or GPU and check it", cmd_spmv},
    {"bench", "benchmark every format on the GPU against cuSPARSE and the floor", cmd_bench},
    {"codegen", "print the kernel generated for a matrix", cmd_codegen},
    {"spgemm", "sparse x sparse product in diagonal storage (alias: spmm)", cmd_spgemm},
    {"solve", "solve A x = b with CG, BiCGSTAB or GMRES(m) on the planner's format", cmd_solve},
    {"spy", "draw the sparsity picture of a matrix as PNG", cmd_spy},
};
enum { N_COMMANDS = sizeof commands / sizeof *commands };

/* Older names of commands, still accepted: the help lists the new name and
 * says which old one it takes. */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"spmm", "spgemm"},   /* the sparse x sparse product (spmm: sparse x dense) */
};

static const char *command_name(const char *typed)
{
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (!strcmp(typed, aliases[i].alias)) return aliases[i].name;
    return typed;
}

static void usage(FILE *out)
{
    fprintf(out, "adia %s -- sparse kernels for diagonal sparse matrices\n\n"
                 "usage: adia COMMAND [options] (adia COMMAND --help for each)\n\n"
                 "commands:\n", ADIA_VERSION_STRING);
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
}

/* Killed while writing: remove the half-written temporaries, then die of
 * the same signal (the default action, restored by SA_RESETHAND), so the
 * parent sees "killed by signal" and not an exit status.  Async-signal-safe:
 * adia_remove_temporary_files only calls unlink(). */
static void on_fatal_signal(int sig)
{
    adia_remove_temporary_files();
    raise(sig);
}

/* A signal ignored at start (nohup, a background job's SIGINT) stays
 * ignored, as the caller asked. */
static void catch_signal(int sig)
{
    struct sigaction sa, old;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN) return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;   /* the re-raise is not blocked */
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* Under mpirun -np N (N > 1) only these run distributed; the others would
 * run N times over the same files. */
static int distributed(const char *name)
{
    return !strcmp(name, "spmv") || !strcmp(name, "solve");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("adia %s\n", ADIA_VERSION_STRING);
        return 0;
    }
    const char *name = command_name(argv[1]);
    for (int i = 0; i < N_COMMANDS; i++) {
        if (strcmp(name, commands[i].name)) continue;
        if (cli_dist_ranks() > 1 && !distributed(argv[1])) {
            fprintf(stderr, "adia %s: runs in one process; under mpirun -np %d only spmv and "
                    "solve run distributed\n", argv[1], cli_dist_ranks());
            return 2;
        }
        int rc = cli_check_threads_env(argv[1]);
        return rc ? rc : commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "adia: unknown command '%s' (see adia --help)\n", argv[1]);
    return 2;
}

/* Every signal whose default action ends the process and that may come
 * while an output is written: interrupted (INT), terminated (TERM), the
 * terminal gone (HUP), quit with a core (QUIT), a reader gone (PIPE), the
 * file-size limit reached (XFSZ, `ulimit -f`: raised by the write itself). */
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};

int main(int argc, char **argv)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        catch_signal(fatal_signals[i]);
    cli_dist_init(&argc, &argv);   /* MPI only under a launcher with N > 1 */
    int rc = dispatch(argc, argv);
    cli_dist_finalize();
    return rc;
}
