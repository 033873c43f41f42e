/* cli.h -- what every `adia` subcommand shares: the command table entry,
 * option parsing, error reporting, JSON output.
 *
 * Exit codes: 0 success, 1 the operation failed (an input file missing,
 * unreadable or malformed, a check failed), 2 usage error (unknown option,
 * bad option value, missing file argument). */
#ifndef ADIA_CLI_H
#define ADIA_CLI_H

#include "adia.h"
#include "adia_bench.h"   /* timings, adia_random_value, adia_rel_err: not the API */

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
int cmd_spgemm(int argc, char **argv);
int cmd_spy(int argc, char **argv);
int cmd_solve(int argc, char **argv);

/* ------------------------------------------------------------ options */

/* A declarative option: --name [value].  kind: flag (bool*), string
 * (const char**), int (long*), double (double*).  A number must be the
 * whole value, finite and representable in its type, else a usage error;
 * its range is the command's to check (cli_check_range). */
typedef enum { CLI_FLAG, CLI_STRING, CLI_INT, CLI_DOUBLE } cli_kind;
typedef struct cli_option {
    const char *name;       /* without the leading "--" */
    cli_kind kind;
    void *target;
    const char *help;       /* shown by --help */
} cli_option;

/* Parse argv[1..] against opts; positional arguments are collected into
 * pos (at most max_pos, count in *npos).  Handles --help (prints usage with
 * the option table and returns 0 with *done = true) and, for every
 * command, --memory SIZE (adia_set_memory_budget).  On an unknown option,
 * a missing or malformed value, or too many positionals: message on stderr,
 * returns 2.  "--name=value" and "--name value" both work. */
int cli_parse(int argc, char **argv, const char *usage, const cli_option *opts,
              const char **pos, int max_pos, int *npos, bool *done);

/* Report a failed library call: "adia <cmd>: <status>: <last error>" on
 * stderr; returns 1. */
int cli_fail(const char *cmd, adia_status s);
/* "12G", "500M", "1.5GB", "2GiB", "4096", "4096 bytes" as bytes (K, M, G,
 * T: powers of 1000; KiB, MiB, GiB, TiB: of 1024); false when malformed,
 * not positive or beyond int64. */
bool cli_parse_size(const char *text, int64_t *bytes);
/* 0, or a usage error (2) when OMP_NUM_THREADS asks for more threads
 * than the library runs (adia_thread_limit) or is no thread count. */
int cli_check_threads_env(const char *cmd);
/* 0 when min <= value <= max, else a usage error (2) naming the option,
 * the range and the value: for every number option whose meaningful range
 * is narrower than its type (negative counts, thread counts, ...); max
 * INFINITY: no upper bound. */
int cli_check_range(const char *cmd, const char *option, double value, double min, double max);
/* The same for an open lower end: above < value <= max (--Z, --alpha). */
int cli_check_range_above(const char *cmd, const char *option, double value, double above,
                          double max);
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

/* ------------------------------------------------- a solve's outcome */

/* ms per iteration of a solve (NaN when none ran). */
double cli_solve_ms_per_iter(const adia_solve_info *in);
/* The fields every solve report has, serial or distributed: converged,
 * iterations, residual, error (err: |x - x*| / |x*| or NaN), solve_setup_ms
 * (the solve's setup_ms), time_ms (its iterations), ms_per_iter
 * (time_ms / iterations). */
void cli_json_solve(cli_json *j, const adia_solve_info *in, double err);
/* "set-up S ms, N iterations in T ms (P ms per iteration); wall W s", no
 * newline: the solve's set-up (setup_ms), its iterations (time_ms) and the
 * command's wall clock (wall_ms: reading, planning, the solve). */
void cli_print_solve_times(const adia_solve_info *in, double wall_ms);
/* "STOP after N iterations: residual R (rtol T)[, |x - x*| / |x*| = E]" */
void cli_print_solve(const adia_solve_info *in, double rtol, double err);

/* ------------------------------------------- shared subcommand helpers */

/* Load the matrix of a subcommand: from the generator spec gen, else from
 * path.  No source (or both): usage error (2); a path that does not exist
 * or a file the library cannot read: 1, the message naming the path.
 * Returns 0 with *A set on success. */
int cli_open_matrix(const char *cmd, const char *path, const char *gen, adia_matrix **A);
/* The size of the regular file at path in bytes; -1 for anything else
 * (standard input "-", a pipe, a missing file). */
long long cli_file_bytes(const char *path);
/* Check an output path's suffix (.mtx, .mtx.gz, .bin): 0, or a usage
 * error (2).  Call before doing the work. */
int cli_check_output(const char *cmd, const char *path);
/* The same for a picture (option: its name in the message, "-o"): .png. */
int cli_check_png_output(const char *cmd, const char *option, const char *path);
/* One file argument of a command: what names it in messages ("FILE", "-x",
 * "-o") and its path (NULL: not given; "-": standard input). */
typedef struct cli_file { const char *role, *path; } cli_file;
/* Before any work: standard input named by at most one input, and no
 * output that is one of the inputs or another output -- the same file by
 * device and inode (stat), so "./A.mtx", a symbolic or a hard link count
 * too; only regular files (a terminal or /dev/null may be both).  0, or a
 * usage error (2) naming both arguments: nothing is read or written. */
int cli_check_files(const char *cmd, const cli_file *in, int nin, const cli_file *out, int nout);
/* Write A to path, by suffix; 0, or cli_fail (1). */
int cli_write_matrix(const char *cmd, const adia_matrix *A, const char *path);
/* Dense vectors (Matrix Market array or coordinate n x 1; "-" = stdin):
 * read one of exactly n entries (*x malloc'd; 1 after a message naming the
 * file and both lengths -- for a regular file from its header, before the
 * data is read), check an output name (.mtx or .mtx.gz; usage error 2
 * otherwise -- call before the work), write one (0 or cli_fail). */
int cli_read_vector(const char *cmd, const char *path, int32_t n, const char *what, double **x);
int cli_check_vector_output(const char *cmd, const char *path);
int cli_write_vector(const char *cmd, const char *path, int32_t n, const double *x);
/* Parse --params text (NULL: defaults) into p; 0 or usage error (2). */
int cli_parse_params(const char *cmd, const char *text, adia_format_params *p);
/* 0, or a usage error (2) when a value of p is out of range for A
 * (adia_format_params_check): call once the matrix is loaded. */
int cli_check_params(const char *cmd, const adia_format_params *p, const adia_matrix *A);
/* A failed format build or plan that took the user's --params (params:
 * their text, NULL when none were given): ADIA_ERR_INVALID_ARG is a value
 * the format refuses (sigma not a multiple of C, ...), a usage error (2);
 * anything else cli_fail (1). */
int cli_fail_params(const char *cmd, const char *params, adia_status s);
/* Is name a registered format?  0, or a usage error (2) listing them. */
int cli_check_format(const char *cmd, const char *name);
/* 0 if name is a format stored in the diagonal core (codegen, overlay),
 * else a usage error naming option and listing those formats: 2. */
int cli_check_diagonal_format(const char *cmd, const char *option, const char *name);
/* A byte or element count as text; "-" when unknown (negative). */
const char *cli_bytes_text(int64_t bytes, char *buf, size_t size);

/* --------------------------------------- checked, timed SpMV (cli_spmv.c) */

typedef struct cli_spmv_result {
    const char *device;      /* "cpu" or "gpu" */
    double time_ms;          /* median over the timed runs */
    double max_rel_err;      /* max_i |y_i - ref_i| / max_i |ref_i| */
    double tolerance;        /* 1e-12 (double) or 1e-5 (float) */
    int64_t bytes;           /* adia_format_bytes, -1 if unknown */
    double gflops;           /* 2 nnz / time */
    double gbytes_per_s;     /* bytes / time, NaN if bytes unknown */
} cli_spmv_result;

/* Run y = F*x on x_in (cols doubles) or, when x_in is NULL, on random x
 * (deterministic for seed) once on the CPU or the GPU, compare with
 * adia_matrix_spmv on A (in double, x rounded to the format's precision),
 * copy that y to y_out (rows doubles) unless it is NULL, then time `runs`
 * more products with the library's timing (adia_cpu_time_spmv,
 * adia_gpu_time_spmv_x: what `adia bench` uses) and fill r.  Returns 0,
 * or 1 after a message on stderr when a call fails (the check itself is judged by the caller:
 * r->max_rel_err > r->tolerance). */
int cli_spmv_run(const char *cmd, const adia_matrix *A, adia_format *F, bool gpu,
                 int runs, uint64_t seed, const double *x_in, double *y_out,
                 cli_spmv_result *r);
/* Can F run on a GPU here?  true when a device exists and F uploads; false
 * (quietly) when there is no device or the format has no GPU side.  Other
 * upload failures are reported through *status. */
bool cli_gpu_usable(adia_format *F, adia_status *status);


/* ------------------------------ distributed runs under mpirun (cli_dist.c) */

/* Under an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, ...
 * seen before MPI_Init) with more than one process: MPI_Init, and the
 * number of processes (the output of ranks > 0 then goes to /dev/null);
 * else 1 and MPI stays untouched.  cli_dist_finalize at the end. */
int cli_dist_init(int *argc, char ***argv);
void cli_dist_finalize(void);
int cli_dist_ranks(void);   /* what cli_dist_init returned */
/* --dist in one process: MPI initialised now (a singleton), so that spmv
 * and solve run through adia_mpi as under mpirun (the distributed path's
 * own one-process baseline); 0, or 1 after a message (no MPI build). */
int cli_dist_start(const char *cmd);
/* What `adia spmv` / `adia solve` hand to their distributed runs. */
typedef struct cli_dist_args {
    const char *path, *gen, *format;
    const char *x_path, *y_path;               /* spmv: -x, -o */
    const char *b_path, *x0_path;              /* solve: -b, --x0 (-o: x_path) */
    long runs, calls;
    uint64_t seed;
    bool json;
    bool gpu;                                  /* --device gpu: each block on a GPU */
    bool explain;                              /* solve: the preconditioner's levels */
    const adia_precond_options *precond;       /* solve: block Jacobi of this kind, or NULL */
    adia_solve_options solve;
} cli_dist_args;
int cli_dist_spmv(const char *cmd, const cli_dist_args *a);
int cli_dist_solve(const char *cmd, const cli_dist_args *a);

#endif
