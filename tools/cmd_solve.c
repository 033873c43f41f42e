/* cmd_solve.c -- `adia solve FILE.mtx | --gen SPEC`: solve A x = b with CG,
 * BiCGSTAB or GMRES on top of the planner, on the GPU when one is usable.
 * b from -b FILE, else b = A * ones so that the exact solution is known
 * (then the error against it is printed too); x0 from --x0 FILE, else 0;
 * -o writes x.  Report iterations, residual, time per iteration and, on
 * the GPU, bytes per iteration against the floor.  Exit 1 when it does not
 * converge (x is still written with -o: the last iterate, and the message
 * says so). */
#include "cli.h"
#include "progress.h"

#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: adia solve FILE.mtx | --gen SPEC [-b B.mtx] [--x0 X0.mtx] [-o X.mtx]\n"
    "                  [--method cg|bicgstab|gmres] [--restart M] [--rtol R]\n"
    "                  [--max-iter N] [--jacobi] [--device cpu|gpu] [--float]\n"
    "                  [--format NAME] [--json] [--dist] [--explain]\n"
    "                  [--nondeterministic]\n"
    "                  [--precond KIND [--grid NXxNYxNZ] [--cycle v|w|f]\n"
    "                   [--smoother NAME] [--sweeps N] [--degree N] [--float-levels WHICH]]\n"
    "Solve A x = b with every product through the planner's format (on the GPU\n"
    "when one is usable); b = A * ones unless -b is given, x0 = 0 unless --x0;\n"
    "exit 1 if it does not converge.  CG with neither --precond nor --jacobi\n"
    "takes --precond auto (one process); where the mg auto made stops short,\n"
    "the library solves again with jacobi; --precond none: no preconditioner.\n"
    "Under mpirun -np N (N > 1) it runs distributed, on the CPU unless --device\n"
    "gpu (then every method keeps its vectors on the GPUs): each process\n"
    "generates or reads its block of rows, rank 0 reads -b / --x0 and writes\n"
    "-o (and scatters / gathers the pieces); --json adds ranks, rows per rank,\n"
    "halo bytes per SpMV and the share of time in communication; --precond mg\n"
    "runs one multigrid across the processes where their rows are whole planes\n"
    "of the grid (else, and cheb or auto, on each process's own block: block\n"
    "Jacobi).  --dist runs that path in one process (the distributed baseline).";

typedef struct solve_opts {
    const char *gen, *method, *format, *device, *b_path, *x0_path, *x_path;
    const char *precond, *grid, *cycle, *smoother;   /* the preconditioner's */
    long sweeps, degree;
    double rtol;
    long max_iter, restart;
    bool jacobi, json, single, dist, explain;
    const char *float_levels; /* mg's levels in float: all, coarse or none  */
    bool nondet;              /* the planner may choose kernels that are not bitwise reproducible */
    double t0;                /* cli_now() at the start: the wall clock's origin */
    double precond_ms;        /* the preconditioner's set-up (NAN: none made) */
    const char *precond_made; /* the kind made (--precond auto: the one it chose) */
    bool precond_default;     /* no --precond, --jacobi: auto, chosen for CG (one process) */
    char fallback[320];       /* the default's mg stopped short: why ("" if not) */
    double read_ms, plan_ms;  /* the matrix read (or generated) and checked, the plan made */
    double cuda_wait_ms;      /* after the read, the wait for CUDA's start (begun before it) */
    long long read_bytes;     /* the file's size (-1: generated, or not a plain file) */
} solve_opts;

/* The floor of a GPU iteration: its least bytes at the read bandwidth. */
static double floor_ms(const adia_solve_info *in)
{
    double gbs = 0;
    if (in->floor_bytes_per_iter <= 0 || adia_gpu_read_bandwidth(0, 3, &gbs) != ADIA_OK || gbs <= 0)
        return NAN;
    return in->floor_bytes_per_iter / (gbs * 1e6);
}

/* The plan's format and device are named from the plan itself: a solve
 * that needs no iteration (b = 0) fills no format into its info. */
static void print_result(const adia_matrix *A, const adia_plan *P, const solve_opts *o,
                         const adia_solve_info *in, double err)
{
    const char *device = adia_plan_device(P) == 1 ? "gpu" : "cpu";
    const char *format = adia_plan_format_name(P);
    /* before the floor's bandwidth probe: the wall is what the user waited for */
    double wall_ms = (cli_now() - o->t0) * 1e3;   /* reading, planning, the solve */
    double per_it = cli_solve_ms_per_iter(in), fl = floor_ms(in);
    if (o->json) {
        cli_json j;
        json_begin(&j, stdout);
        json_str(&j, "matrix", adia_matrix_name(A));
        json_int(&j, "rows", adia_matrix_rows(A));
        json_int(&j, "nnz", adia_matrix_nnz(A));
        json_str(&j, "method", o->method);
        json_bool(&j, "jacobi", o->jacobi);
        json_str(&j, "precond", o->precond_made ? o->precond_made
                                : o->jacobi ? "jacobi" : "none");
        json_num(&j, "precond_setup_ms", o->precond_ms);
        json_bool(&j, "precond_default", o->precond_default);
        if (o->fallback[0]) json_str(&j, "precond_fallback", o->fallback);
        json_str(&j, "device", device);
        json_str(&j, "precision", o->single ? "float" : "double");
        json_str(&j, "format", format);
        cli_json_solve(&j, in, err);
        json_num(&j, "bytes_per_iter", in->bytes_per_iter > 0 ? in->bytes_per_iter : NAN);
        json_num(&j, "floor_ms_per_iter", fl);
        json_num(&j, "spmv_ms", in->spmv_ms);
        json_int(&j, "spmvs", in->spmvs);
        json_str(&j, "stop", in->stop);
        json_num(&j, "wall_ms", wall_ms);
        json_num(&j, "read_ms", o->read_ms);
        json_num(&j, "cuda_wait_ms", o->cuda_wait_ms);
        if (o->read_bytes >= 0) json_int(&j, "read_bytes", o->read_bytes);
        json_num(&j, "plan_ms", o->plan_ms);
        /* the plan's setup parts (upload, analysis, build, compile), as
         * adia_plan_explain words them: bench/setup-e2e.py reads them */
        static char why[8192];
        const char *setup = "";
        if (adia_plan_explain(P, why, sizeof why) == ADIA_OK && (setup = strstr(why, "setup (ms)"))) {
            char *end = strchr(why + (setup - why), '\n');
            if (end) *end = '\0';
        }
        json_str(&j, "plan_setup", setup ? setup : "");
        json_end(&j);
        return;
    }
    printf("%s: %d x %d, %lld nonzero%s, %s%s, format %s (%s, %s)\n", adia_matrix_name(A),
           adia_matrix_rows(A), adia_matrix_cols(A), (long long)adia_matrix_nnz(A),
           adia_matrix_nnz(A) == 1 ? "" : "s", o->method,
           o->jacobi ? " + Jacobi" : "", format, device, o->single ? "float" : "double");
    if (o->fallback[0])
        printf("  %s: solved again with jacobi\n", o->fallback);
    else if (o->precond_made)
        printf("  preconditioner %s%s, set up in %.3f ms\n", o->precond_made,
               o->precond_default ? " (the default: --precond auto)" : "", o->precond_ms);
    printf("  ");
    cli_print_solve(in, o->rtol, err);
    printf("\n  ");
    cli_print_solve_times(in, wall_ms);
    if (in->iterations == 0) {   /* no per-iteration figures to give */
        printf("\n");
        return;
    }
    if (isfinite(fl))
        printf("\n  %.0f bytes per row per iteration, floor %.4f ms: %.2fx",
               in->bytes_per_iter / adia_matrix_rows(A), fl, per_it / fl);
    else if (isfinite(in->spmv_ms))
        printf("\n  of the iterations %.3f ms in %d SpMV%s", in->spmv_ms, in->spmvs,
               in->spmvs == 1 ? "" : "s");
    printf("\n");
}

/* b from the file or A * ones (known solution: *known set). */
static int make_rhs(const char *cmd, const adia_matrix *A, const solve_opts *o, double **b,
                    bool *known)
{
    int32_t n = adia_matrix_rows(A);
    *known = !o->b_path;
    if (o->b_path) return cli_read_vector(cmd, o->b_path, n, "b", b);
    double *one = malloc(((size_t)n + 1) * sizeof *one);
    *b = malloc(((size_t)n + 1) * sizeof **b);
    if (!one || !*b) {
        free(one);
        fprintf(stderr, "adia %s: out of memory for %d-entry vectors\n", cmd, n);
        return 1;
    }
    for (int32_t i = 0; i < n; i++) one[i] = 1;
    adia_status s = adia_matrix_spmv(A, 1.0, one, 0.0, *b);
    free(one);
    return s == ADIA_OK ? 0 : cli_fail(cmd, s);
}

/* "NX", "NXxNY" or "NXxNYxNZ" into g[3] (unused dimensions 1). */
static int parse_grid(const char *cmd, const char *text, int g[3])
{
    long v[3] = {1, 1, 1};
    const char *s = text;
    for (int d = 0; d < 3; d++) {
        char *end;
        v[d] = strtol(s, &end, 10);
        if (end == s || v[d] < 1 || v[d] > 2147483647L || (*end && *end != 'x') ||
            (*end == 'x' && d == 2))
            return cli_usage_error(cmd, "--grid '%s': NX, NXxNY or NXxNYxNZ, each a positive "
                                   "integer", text);
        g[d] = (int)v[d];
        if (!*end) {
            for (int e = d + 1; e < 3; e++) g[e] = 1;
            return 0;
        }
        s = end + 1;
    }
    return 0;
}

/* --float-levels' value: all, coarse or none (NULL: the default; -1: none
 * of those). */
static int float_levels_of(const char *v)
{
    return !v                     ? ADIA_FLOAT_LEVELS_DEFAULT
           : !strcmp(v, "all")    ? ADIA_FLOAT_LEVELS_ALL
           : !strcmp(v, "coarse") ? ADIA_FLOAT_LEVELS_COARSE
           : !strcmp(v, "none")   ? ADIA_FLOAT_LEVELS_NONE
                                  : -1;
}

/* The options of --precond and its companions (2: a usage error). */
static int precond_options(const char *cmd, const solve_opts *o, adia_precond_options *po)
{
    adia_precond_options_default(po);
    po->kind = o->precond;
    po->smoother = o->smoother;
    po->sweeps = (int)o->sweeps;
    po->degree = (int)o->degree;
    po->float_levels = float_levels_of(o->float_levels);
    if (o->cycle) po->cycle = o->cycle[0];   /* checked: v, w or f */
    if (o->grid && parse_grid(cmd, o->grid, po->grid)) return 2;
    return 0;
}

/* The preconditioner of --precond on the plan (*M NULL without one). */
static int make_precond(const char *cmd, adia_plan *P, solve_opts *o, adia_precond **M)
{
    *M = NULL;
    o->precond_ms = NAN;
    if (!o->precond) return 0;
    adia_precond_options po;
    if (precond_options(cmd, o, &po)) return 2;
    const double t0 = cli_now();
    progress_begin("setting up the preconditioner");
    adia_status s = adia_precond_create(P, &po, M);
    progress_end();
    o->precond_ms = (cli_now() - t0) * 1e3;
    if (s != ADIA_OK) return cli_fail(cmd, s);
    o->precond_made = adia_precond_kind(*M);
    if (o->explain && !o->json) {
        static char text[16384];
        if (adia_precond_explain(*M, text, sizeof text) == ADIA_OK) printf("%s", text);
    }
    return 0;
}

static int solve(const char *cmd, const adia_matrix *A, adia_plan *P, solve_opts *o,
                 adia_solver method)
{
    int32_t n = adia_matrix_rows(A);
    double *b = NULL, *x = NULL;
    bool known;
    int rc = make_rhs(cmd, A, o, &b, &known);
    if (!rc && o->x0_path) rc = cli_read_vector(cmd, o->x0_path, n, "x0", &x);
    if (!rc && !x && !(x = calloc((size_t)n + 1, sizeof *x))) {
        fprintf(stderr, "adia %s: out of memory for %d-entry vectors\n", cmd, n);
        rc = 1;
    }
    adia_precond *M = NULL;
    if (!rc) rc = make_precond(cmd, P, o, &M);
    if (rc) goto done;
    adia_solve_options so = {.method = method, .max_iter = (int)o->max_iter, .rtol = o->rtol,
                             .jacobi = o->jacobi, .restart = (int)o->restart, .precond = M};
    adia_solve_info in;
    /* the line on a terminal: method and limit (the library reports no
     * iteration count while it runs: the bar moves, the seconds count) */
    static char what[96];
    snprintf(what, sizeof what, "solving (%s%s%s, at most %ld iteration%s)", o->method,
             o->jacobi ? " + " : M ? " + " : "", o->jacobi ? "jacobi" : M ? o->precond_made : "",
             o->max_iter, o->max_iter == 1 ? "" : "s");
    progress_begin(what);
    adia_status s = adia_solve(A, P, b, x, &so, &in);
    progress_end();
    if (s == ADIA_OK && in.fallback[0]) {   /* auto's mg stopped short: solved with jacobi */
        snprintf(o->fallback, sizeof o->fallback, "%s", in.fallback);
        o->jacobi = true;
        o->precond_made = NULL;
    }
    if (s != ADIA_OK) {
        rc = cli_fail(cmd, s);
        goto done;
    }
    double e = 0;
    for (int32_t i = 0; known && i < n; i++) e += (x[i] - 1) * (x[i] - 1);
    print_result(A, P, o, &in, known ? (n ? sqrt(e / n) : 0) : NAN);
    rc = in.converged ? 0 : 1;
    if (rc) fprintf(stderr, "adia %s: did not converge: %s (residual %.3g, rtol %.3g)%s\n", cmd,
                    in.stop, in.residual, o->rtol, o->x_path ? "; the last iterate is written" : "");
    if (o->x_path) {
        int wrc = cli_write_vector(cmd, o->x_path, n, x);
        if (wrc) rc = wrc;
    }
done:
    adia_precond_destroy(M);
    free(b);
    free(x);
    return rc;
}

/* The plan: a fixed --format, or the planner's choice for max_iter
 * iterations' products (a generated kernel repays over a long solve),
 * its candidates measured only where the solve is likely to be that long
 * (adia_solve_expected_calls: not with mg, whose few iterations never
 * repay the measuring); on the GPU when asked or (no --device) when one
 * is usable. */
static int make_plan(const char *cmd, const adia_matrix *A, const solve_opts *o,
                     adia_solver method, adia_plan **P)
{
    const int64_t calls = o->max_iter * (method == ADIA_SOLVE_BICGSTAB ? 2 : 1) + 2;
    int64_t likely;
    adia_status e = adia_solve_expected_calls(A, method, (int)o->max_iter,
                                              o->jacobi ? "jacobi" : o->precond, &likely);
    if (e != ADIA_OK) return cli_fail(cmd, e);
    adia_plan_hints h = {.expected_calls = calls, .vtype = o->single ? ADIA_FLOAT : ADIA_DOUBLE,
                         .device = !o->device ? -1 : !strcmp(o->device, "gpu"),
                         .chooser = likely >= ADIA_PLAN_MEASURE_CALLS ? ADIA_CHOOSE_MEASURE
                                                                      : ADIA_CHOOSE_MODEL,
                         .nondeterministic = o->nondet};
    if (o->format) {
        h.chooser = ADIA_CHOOSE_FIXED;
        h.format = o->format;
    }
    progress_begin("planning");
    adia_status s = adia_plan_create(A, &h, P);
    progress_end();
    if (s == ADIA_OK && o->single && adia_plan_device(*P) == 0) {
        adia_plan_destroy(*P);
        *P = NULL;
        fprintf(stderr, "adia %s: --float needs the GPU (the CPU solvers run in double)\n", cmd);
        return 2;
    }
    return s == ADIA_OK ? 0 : cli_fail(cmd, s);
}

/* The thread that starts CUDA (its error, if any, is the plan's to meet). */
/* --explain's first line: what the read took, at what rate. */
static void explain_read(const solve_opts *o, const char *what)
{
    printf("read: %s, ", what);
    if (o->read_bytes >= 0)
        printf("%.1f MB read and checked in %.1f ms (%.2f GB/s)", o->read_bytes / 1e6, o->read_ms,
               o->read_ms > 0 ? o->read_bytes / (o->read_ms * 1e6) : 0.0);
    else
        printf("%s in %.1f ms", o->gen ? "generated" : "read and checked", o->read_ms);
    if (o->cuda_wait_ms >= 0.05) printf("; then %.1f ms waiting for CUDA's start", o->cuda_wait_ms);
    printf("\n");
}

static void *start_gpu(void *arg)
{
    (void)arg;
    if (adia_gpu_init() != ADIA_OK) adia_clear_error();
    return NULL;
}

int cmd_solve(int argc, char **argv)
{
    /* rtol NaN: not given (a given value is never NaN: cli_parse refuses it);
     * the library's defaults otherwise */
    adia_solve_options lib;
    adia_solve_options_default(&lib);
    solve_opts o = {.method = "cg", .rtol = NAN, .max_iter = lib.max_iter,
                    .restart = lib.restart, .t0 = cli_now()};
    bool done;
    const cli_option opts[] = {
        {"gen", CLI_STRING, &o.gen, "generate the matrix from SPEC (adia gen --list)"},
        {"b", CLI_STRING, &o.b_path, "right-hand side from this dense vector file (default A * ones)"},
        {"x0", CLI_STRING, &o.x0_path, "initial guess from this dense vector file (default 0)"},
        {"o", CLI_STRING, &o.x_path, "write the solution to this file (.mtx or .mtx.gz)"},
        {"method", CLI_STRING, &o.method, "cg (symmetric positive definite A), bicgstab or gmres"},
        {"restart", CLI_INT, &o.restart, "GMRES: basis vectors per cycle (default 30)"},
        {"rtol", CLI_DOUBLE, &o.rtol, "stop at ||b - A x|| <= rtol ||b|| (default 1e-8; 1e-5 "
                                      "with --float)"},
        {"max-iter", CLI_INT, &o.max_iter, "iteration limit (default 1000)"},
        {"jacobi", CLI_FLAG, &o.jacobi, "diagonal (Jacobi) preconditioner"},
        {"precond", CLI_STRING, &o.precond, "preconditioner: none, jacobi (as --jacobi), cheb "
                                            "(Chebyshev polynomial in D^-1 A), mg (multigrid on "
                                            "the matrix's grid), agg (multigrid by smoothed "
                                            "aggregation of consecutive rows: SPD matrices no "
                                            "grid suits), auto (mg on a grid of 128 or more "
                                            "points along an edge -- agg on a strip 2 points "
                                            "wide --, else jacobi, else none; CG's "
                                            "default in one process)"},
        {"grid", CLI_STRING, &o.grid, "mg: the grid NXxNYxNZ (default: found from the offsets)"},
        {"cycle", CLI_STRING, &o.cycle, "mg: v, w or f (default v; f is not symmetric: GMRES or BiCGSTAB, not CG)"},
        {"smoother", CLI_STRING, &o.smoother, "mg: jacobi, l1jacobi or cheb"},
        {"sweeps", CLI_INT, &o.sweeps, "mg: smoothing steps before and after (default 1 with "
                                       "cheb, 2 with jacobi or l1jacobi)"},
        {"degree", CLI_INT, &o.degree, "cheb, and mg's cheb smoother: the Chebyshev degree "
                                       "(default 4 for cheb, 2 for mg)"},
        {"float-levels", CLI_STRING, &o.float_levels, "mg on a GPU in double: the levels "
                                                      "stored in float -- coarse (default: the "
                                                      "finest stays the plan), all or none (a "
                                                      "float level moves half the bytes; the "
                                                      "solve stays in double)"},
        {"device", CLI_STRING, &o.device, "cpu or gpu (default: gpu when usable, else cpu)"},
        {"float", CLI_FLAG, &o.single, "the operator and vectors in single precision (GPU)"},
        {"format", CLI_STRING, &o.format, "use this format instead of the planner's choice"},
        {"json", CLI_FLAG, &o.json, "print one JSON object"},
        {"dist", CLI_FLAG, &o.dist, "run through adia_mpi in this one process, as under mpirun"},
        {"explain", CLI_FLAG, &o.explain, "print the plan's choice and the preconditioner (levels, "
                                          "set-up phases) before solving"},
        {"nondeterministic", CLI_FLAG, &o.nondet, "the planner may choose GPU kernels that are not "
                                                  "bitwise reproducible (cuSPARSE CSR ALG1; the "
                                                  "iteration count may then vary between runs)"},
        {0},
    };
    const char *pos[1];
    int npos, rc = cli_parse(argc, argv, usage, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    adia_solver method = !strcmp(o.method, "cg")         ? ADIA_SOLVE_CG
                         : !strcmp(o.method, "bicgstab") ? ADIA_SOLVE_BICGSTAB
                                                         : ADIA_SOLVE_GMRES;
    if (strcmp(o.method, "cg") && strcmp(o.method, "bicgstab") && strcmp(o.method, "gmres"))
        return cli_usage_error(argv[0], "--method must be cg, bicgstab or gmres, not '%s'",
                               o.method);
    if (o.device && strcmp(o.device, "cpu") && strcmp(o.device, "gpu"))
        return cli_usage_error(argv[0], "--device must be cpu or gpu, got '%s'", o.device);
    if (isnan(o.rtol)) o.rtol = o.single ? 1e-5 : lib.rtol;   /* --rtol 0 is refused below */
    if ((rc = cli_check_range(argv[0], "rtol", o.rtol, 1e-300, 0.9)) ||
        (rc = cli_check_range(argv[0], "max-iter", (double)o.max_iter, 1, 1e8)) ||
        (rc = cli_check_range(argv[0], "restart", (double)o.restart, 1, 1000)))
        return rc;
    if (o.format && (rc = cli_check_format(argv[0], o.format))) return rc;
    if (o.format && o.nondet)
        return cli_usage_error(argv[0], "--nondeterministic lets the planner choose: not with "
                               "--format");
    if (o.precond && o.jacobi)
        return cli_usage_error(argv[0], "--jacobi and --precond %s: choose one", o.precond);
    if (!o.precond && (o.grid || o.cycle || o.smoother || o.sweeps || o.degree))
        return cli_usage_error(argv[0], "--grid, --cycle, --smoother, --sweeps and --degree "
                               "need --precond");
    if (o.float_levels && (!o.precond || (strcmp(o.precond, "mg") && strcmp(o.precond, "auto"))))
        return cli_usage_error(argv[0], "--float-levels: mg's (--precond mg or auto)");
    if (float_levels_of(o.float_levels) < 0)
        return cli_usage_error(argv[0], "--float-levels must be all, coarse or none, not '%s'",
                               o.float_levels);
    if (o.degree && strcmp(o.precond, "cheb") && strcmp(o.precond, "mg") && strcmp(o.precond, "auto"))
        return cli_usage_error(argv[0], "--degree: cheb's and mg's, not --precond %s's",
                               o.precond);
    if ((rc = cli_check_range(argv[0], "sweeps", (double)o.sweeps, 0, 100)) ||
        (rc = cli_check_range(argv[0], "degree", (double)o.degree, 0, 100)))
        return rc;
    if (o.cycle && strcmp(o.cycle, "v") && strcmp(o.cycle, "w") && strcmp(o.cycle, "f"))
        return cli_usage_error(argv[0], "--cycle must be v, w or f, not '%s'", o.cycle);
    if (o.x_path && (rc = cli_check_vector_output(argv[0], o.x_path))) return rc;
    const cli_file in[] = {{"FILE", npos ? pos[0] : NULL}, {"-b", o.b_path}, {"--x0", o.x0_path}},
                   out[] = {{"-o", o.x_path}};
    if ((rc = cli_check_files(argv[0], in, 3, out, 1))) return rc;
    const bool one_process = !(cli_dist_ranks() > 1 || o.dist);
    if (!o.precond && !o.jacobi && method == ADIA_SOLVE_CG && one_process) {
        o.precond = "auto";   /* mg on a large grid, else jacobi, else none */
        o.precond_default = true;
    }
    if (!one_process) {
        if ((rc = cli_dist_start(argv[0]))) return rc;
        /* other kinds: adia_dist_precond_create (mg across the processes, or
         * each process's own block) */
        adia_precond_options po;
        const bool block = o.precond && strcmp(o.precond, "none") && strcmp(o.precond, "jacobi");
        if (block && o.grid && strcmp(o.precond, "mg"))
            return cli_usage_error(argv[0], "--grid under mpirun: mg's (the whole matrix's grid, "
                                   "for mg across the processes)");
        if (block && (rc = precond_options(argv[0], &o, &po))) return rc;
        if (o.precond && !strcmp(o.precond, "jacobi")) o.jacobi = true;
        if (o.single || o.nondet)
            return cli_usage_error(argv[0], "--float and --nondeterministic: not under mpirun "
                                   "(distributed runs are double, planned by the model)");
        cli_dist_args d = {.path = npos ? pos[0] : NULL, .gen = o.gen, .format = o.format,
                           .x_path = o.x_path, .b_path = o.b_path, .x0_path = o.x0_path,
                           .json = o.json, .gpu = o.device && !strcmp(o.device, "gpu"),
                           .precond = block ? &po : NULL, .explain = o.explain,
                           .solve = {.method = method, .max_iter = (int)o.max_iter, .rtol = o.rtol,
                                     .jacobi = o.jacobi, .restart = (int)o.restart}};
        return cli_dist_solve(argv[0], &d);
    }
    adia_matrix *A;
    /* CUDA starts (0.2-0.4 s) while the matrix is read or generated */
    pthread_t gpu_start;
    const bool starting = (!o.device || strcmp(o.device, "cpu")) &&
                          pthread_create(&gpu_start, NULL, start_gpu, NULL) == 0;
    rc = cli_open_matrix(argv[0], npos ? pos[0] : NULL, o.gen, &A);
    o.read_ms = (cli_now() - o.t0) * 1e3;
    if (starting) pthread_join(gpu_start, NULL);
    if (rc) return rc;
    o.cuda_wait_ms = (cli_now() - o.t0) * 1e3 - o.read_ms;
    o.read_bytes = npos ? cli_file_bytes(pos[0]) : -1;
    adia_plan *P = NULL;
    rc = make_plan(argv[0], A, &o, method, &P);
    o.plan_ms = (cli_now() - o.t0) * 1e3 - o.read_ms - o.cuda_wait_ms;
    if (rc == 0 && o.explain && !o.json) explain_read(&o, npos ? pos[0] : o.gen);
    if (rc == 0 && o.explain && !o.json) {
        static char text[16384];
        if (adia_plan_explain(P, text, sizeof text) == ADIA_OK) printf("%s", text);
    }
    if (rc == 0) rc = solve(argv[0], A, P, &o, method);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    return rc;
}
