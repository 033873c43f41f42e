/* cli.h -- what every `adia` subcommand shares: the command table entry,
 * option parsing, error reporting, JSON output.
 *
 * Exit codes: 0 success, 1 the operation failed (bad matrix file, check
 * failed), 2 usage error (unknown option, missing file argument). */
#ifndef ADIA_CLI_H
#define ADIA_CLI_H

#include "adia.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct cli_command {
    const char *name;
    const char *summary;                 /* one line for `adia --help` */
    int (*run)(int argc, char **argv);   /* argv[0] is the subcommand name */
} cli_command;

/* Every subcommand (tools/cmd_<name>.c). */
int cmd_demo(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_spmv(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_codegen(int argc, char **argv);
int cmd_spmm(int argc, char **argv);
int cmd_spy(int argc, char **argv);

/* ------------------------------------------------------------ options */

/* A declarative option: --name [value].  kind: flag (bool*), string
 * (const char**), int (long*), double (double*). */
typedef enum { CLI_FLAG, CLI_STRING, CLI_INT, CLI_DOUBLE } cli_kind;
typedef struct cli_option {
    const char *name;       /* without the leading "--" */
    cli_kind kind;
    void *target;
    const char *help;       /* shown by --help */
} cli_option;

/* Parse argv[1..] against opts; positional arguments are collected into
 * pos (at most max_pos, count in *npos).  Handles --help (prints usage with
 * the option table and returns 0 with *done = true).  On an unknown option,
 * a missing or malformed value, or too many positionals: message on stderr,
 * returns 2.  "--name=value" and "--name value" both work. */
int cli_parse(int argc, char **argv, const char *usage, const cli_option *opts,
              const char **pos, int max_pos, int *npos, bool *done);

/* Report a failed library call: "adia <cmd>: <status>: <last error>" on
 * stderr; returns 1. */
int cli_fail(const char *cmd, adia_status s);
/* Report a usage error on stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...);

/* Load a matrix from a file (Matrix Market, .gz, or adia binary) or, when
 * gen is non-NULL, from a generator spec. */
adia_status cli_load_matrix(const char *path, const char *gen, adia_matrix **A);

/* ---------------------------------------------------------------- JSON */

/* A tiny streaming JSON writer for one object on stdout:
 *   json_begin(); json_str("format", "dia"); json_num("time_ms", 0.1);
 *   json_key("rows_list"); json_raw("[1,2]"); json_end();          */
typedef struct cli_json { FILE *out; int depth; bool first[16]; } cli_json;
void json_begin(cli_json *j, FILE *out);       /* { */
void json_end(cli_json *j);                     /* }\n */
void json_key(cli_json *j, const char *key);    /* "key": (then a value call) */
void json_str(cli_json *j, const char *key, const char *value);
void json_num(cli_json *j, const char *key, double value);  /* NaN/Inf -> null */
void json_int(cli_json *j, const char *key, long long value);
void json_bool(cli_json *j, const char *key, bool value);
void json_object_begin(cli_json *j, const char *key);  /* key may be NULL in arrays */
void json_object_end(cli_json *j);
void json_array_begin(cli_json *j, const char *key);
void json_array_end(cli_json *j);

/* Wall-clock seconds (monotonic). */
double cli_now(void);

#endif
