/* cmd_spmv.c -- `adia spmv`: build one format (--format, or the planner's
 * choice), run y = A*x on the CPU or the GPU, check it against the
 * double-precision reference, report the median time, GFLOPS and bandwidth. */
#include "cli.h"
#include "progress.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: adia spmv FILE|--gen SPEC [-x X.mtx] [-o Y.mtx] [--format NAME]\n"
    "                 [--device cpu|gpu] [--float] [--runs N] [--seed N]\n"
    "                 [--params k=v,...] [--json] [--calls N]\n"
    "                 [--chooser model|rules|measure] [--explain] [--dist]\n"
    "                 [--nondeterministic]\n"
    "Run y = A*x in one format (default: the planner's choice for --calls\n"
    "products, by default runs + 1; the chooser is measure from 1000 calls,\n"
    "else model) on x from -x (a dense vector file) or random x, and check it\n"
    "against adia_matrix_spmv in double: exit 1 if the max relative error\n"
    "exceeds 1e-12 (double) or 1e-5 (--float).  -o writes y (.mtx, .mtx.gz).\n"
    "With -x the default is one timed run.\n"
    "Under mpirun -np N (N > 1) it runs distributed, on the CPU unless --device\n"
    "gpu (then timed on device vectors, each timed run products back to back\n"
    "for about 0.5 ms): each process generates or reads its\n"
    "block of rows, rank 0 reads -x and writes -o (and\n"
    "scatters / gathers the pieces), y is checked against each block's CSR\n"
    "(a filled Laplacian's: against the stencil's rule, no CSR).\n"
    "--dist runs that path in one process (the distributed baseline).\n"
    "--nondeterministic lets the planner choose GPU kernels whose y may differ\n"
    "in its last bits between runs (cuSPARSE CSR ALG1: atomics), when faster.";

/* The device to run on: "cpu", "gpu", or NULL = the GPU when one can run F. */
static int pick_device(const char *cmd, const char *device, adia_format *F, bool *gpu)
{
    adia_status s = ADIA_OK;
    if (device && !strcmp(device, "cpu")) {
        *gpu = false;
        return 0;
    }
    *gpu = cli_gpu_usable(F, &s);
    if (s != ADIA_OK) return cli_fail(cmd, s);
    if (!device || *gpu) return 0;
    int n = 0;
    adia_gpu_device_count(&n);
    if (n == 0) fprintf(stderr, "adia %s: --device gpu: no CUDA device available%s\n", cmd,
#ifdef ADIA_HAVE_CUDA
                        ""
#else
                        " (adia was built without CUDA)"
#endif
    );
    else fprintf(stderr, "adia %s: --device gpu: format %s has no GPU kernel\n", cmd,
                 adia_format_name(F));
    return 1;
}

/* How the format was chosen: chooser name, one-line reason, full text. */
typedef struct choice {
    const char *chooser;
    char why[256];
    char *explain;           /* NULL unless --explain */
} choice;

static void report(bool json, const adia_matrix *A, const adia_format *F,
                   const cli_spmv_result *r, int runs, const choice *c)
{
    const char *prec = adia_value_type_name(adia_format_value_type(F));
    bool pass = r->max_rel_err <= r->tolerance;
    if (json) {
        cli_json j;
        json_begin(&j, stdout);
        json_str(&j, "matrix", adia_matrix_name(A));
        json_int(&j, "rows", adia_matrix_rows(A));
        json_int(&j, "cols", adia_matrix_cols(A));
        json_int(&j, "nnz", adia_matrix_nnz(A));
        json_str(&j, "format", adia_format_name(F));
        json_str(&j, "chooser", c->chooser);
        json_str(&j, "why", c->why);
        if (c->explain) json_str(&j, "explain", c->explain);
        json_str(&j, "precision", prec);
        json_str(&j, "device", r->device);
        json_int(&j, "runs", runs);
        json_num(&j, "time_ms", r->time_ms);
        json_num(&j, "gflops", r->gflops);
        json_int(&j, "bytes", r->bytes);
        json_num(&j, "gbytes_per_s", r->gbytes_per_s);
        json_num(&j, "max_rel_err", r->max_rel_err);
        json_num(&j, "tolerance", r->tolerance);
        json_bool(&j, "pass", pass);
        json_end(&j);
        return;
    }
    printf("%s: %d x %d, %lld nonzeros, format %s (%s) on %s\n", adia_matrix_name(A),
           (int)adia_matrix_rows(A), (int)adia_matrix_cols(A), (long long)adia_matrix_nnz(A),
           adia_format_name(F), prec, r->device);
    printf("  chosen by %s: %s\n", c->chooser, c->why);
    if (c->explain) printf("%s", c->explain);
    printf("  median time %.4f ms over %d run%s, %.2f GFLOPS", r->time_ms, runs,
           runs == 1 ? "" : "s", r->gflops);
    if (r->bytes >= 0) printf(", %.1f GB/s (%lld bytes)", r->gbytes_per_s, (long long)r->bytes);
    printf("\n  max relative error %.3g (tolerance %.0e): %s\n", r->max_rel_err, r->tolerance,
           pass ? "ok" : "FAILED");
}

/* The planner's choice: a plan for the device asked (NULL: auto); its
 * format is used as if given with --format. */
/* Build the format, with a progress line if that takes over a second. */
static adia_status build_format(const adia_matrix *A, const char *format,
                                const adia_format_params *p, adia_value_type vt,
                                adia_format **F)
{
    progress_begin("converting");
    adia_status s = adia_format_build(A, format, p, vt, F);
    progress_end();
    return s;
}

static int plan_format(const char *cmd, const adia_matrix *A, const char *device,
                       adia_value_type vt, long calls, const char *chooser, bool nondet,
                       const adia_format_params *p, adia_plan **P, choice *c)
{
    adia_plan_hints h = {.expected_calls = calls, .vtype = vt, .params = p,
                         .device = !device ? -1 : !strcmp(device, "gpu"),
                         .nondeterministic = nondet};
    h.chooser = calls >= ADIA_PLAN_MEASURE_CALLS ? ADIA_CHOOSE_MEASURE : ADIA_CHOOSE_MODEL;
    if (chooser) h.chooser = !strcmp(chooser, "rules")     ? ADIA_CHOOSE_RULES
                             : !strcmp(chooser, "measure") ? ADIA_CHOOSE_MEASURE
                                                           : ADIA_CHOOSE_MODEL;
    progress_begin("planning and converting");
    adia_status s = adia_plan_create(A, &h, P);
    progress_end();
    if (s != ADIA_OK) return cli_fail(cmd, s);
    c->chooser = adia_chooser_name(h.chooser);
    static char text[8192];
    if ((s = adia_plan_explain(*P, text, sizeof text)) != ADIA_OK) return cli_fail(cmd, s);
    const char *why = strstr(text, "why: ");
    snprintf(c->why, sizeof c->why, "%.*s", why ? (int)strcspn(why + 5, "\n") : 0,
             why ? why + 5 : "");
    if (c->explain) c->explain = text;
    return 0;
}

int cmd_spmv(int argc, char **argv)
{
    const char *gen = NULL, *format = NULL, *device = NULL, *params = NULL, *chooser = NULL,
               *x_path = NULL, *y_path = NULL;
    bool json = false, single = false, explain = false, dist = false, nondet = false, done;
    long runs = LONG_MIN, seed = 42, calls = LONG_MIN;   /* LONG_MIN: not given */
    const cli_option opts[] = {
        {"gen", CLI_STRING, &gen, "generate the matrix from a spec instead of reading FILE"},
        {"x", CLI_STRING, &x_path, "x from this dense vector file (\"-\": standard input)"},
        {"o", CLI_STRING, &y_path, "write y to this file (.mtx or .mtx.gz)"},
        {"format", CLI_STRING, &format, "storage format (default: the analysis' choice)"},
        {"device", CLI_STRING, &device, "cpu or gpu (default: gpu when usable, else cpu)"},
        {"float", CLI_FLAG, &single, "single precision (default double)"},
        {"runs", CLI_INT, &runs, "timed runs after the checked one (default 20; 1 with -x)"},
        {"seed", CLI_INT, &seed, "seed of the random x (default 42)"},
        {"params", CLI_STRING, &params, "format parameters key=value,... (B eta hack seg width C ...)"},
        {"json", CLI_FLAG, &json, "print one JSON object (format, device, time_ms, max_rel_err, "
                                  "chooser, why, ...)"},
        {"calls", CLI_INT, &calls, "expected products, the planner's hint (default runs + 1)"},
        {"chooser", CLI_STRING, &chooser, "model, rules or measure (default: measure from 1000 "
                                          "calls, else model)"},
        {"explain", CLI_FLAG, &explain, "print what the planner chose and why"},
        {"dist", CLI_FLAG, &dist, "run through adia_mpi in this one process, as under mpirun"},
        {"nondeterministic", CLI_FLAG, &nondet, "the planner may choose GPU kernels that are not "
                                                "bitwise reproducible (cuSPARSE CSR ALG1)"},
        {0},
    };
    const char *pos[1] = {NULL};
    int npos, rc = cli_parse(argc, argv, usage, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    if (runs == LONG_MIN) runs = x_path ? 1 : 20;
    bool calls_given = calls != LONG_MIN;
    if (format && (rc = cli_check_format(argv[0], format))) return rc;
    if (y_path && (rc = cli_check_vector_output(argv[0], y_path))) return rc;
    const cli_file in[] = {{"FILE", pos[0]}, {"-x", x_path}}, out[] = {{"-o", y_path}};
    if ((rc = cli_check_files(argv[0], in, 2, out, 1))) return rc;
    if (device && strcmp(device, "cpu") && strcmp(device, "gpu"))
        return cli_usage_error(argv[0], "--device must be cpu or gpu, got '%s'", device);
    if ((rc = cli_check_range(argv[0], "runs", (double)runs, 1, 1e6)) ||
        (rc = cli_check_range(argv[0], "seed", (double)seed, 0, INFINITY)) ||
        (calls_given && (rc = cli_check_range(argv[0], "calls", (double)calls, 1, INFINITY))))
        return rc;
    if (!calls_given) calls = runs + 1;
    if (chooser && strcmp(chooser, "model") && strcmp(chooser, "rules") && strcmp(chooser, "measure"))
        return cli_usage_error(argv[0], "--chooser must be model, rules or measure, got '%s'", chooser);
    if (format && (chooser || explain || calls_given || nondet))
        return cli_usage_error(argv[0], "--calls, --chooser, --explain and --nondeterministic "
                               "choose a format: not with --format");
    adia_format_params p;
    if ((rc = cli_parse_params(argv[0], params, &p))) return rc;
    if (cli_dist_ranks() > 1 || dist) {
        if ((rc = cli_dist_start(argv[0]))) return rc;
        if (single || params || chooser || explain || nondet)
            return cli_usage_error(argv[0], "--float, --params, --chooser, --explain and "
                                   "--nondeterministic: not "
                                   "under mpirun (distributed runs are double, planned by the "
                                   "model)");
        cli_dist_args d = {.path = pos[0], .gen = gen, .format = format, .x_path = x_path,
                           .y_path = y_path, .runs = runs, .calls = calls,
                           .seed = (uint64_t)seed, .json = json,
                           .gpu = device && !strcmp(device, "gpu")};
        return cli_dist_spmv(argv[0], &d);
    }

    adia_matrix *A;
    if ((rc = cli_open_matrix(argv[0], pos[0], gen, &A))) return rc;
    if ((rc = cli_check_params(argv[0], &p, A))) {
        adia_matrix_destroy(A);
        return rc;
    }
    double *x = NULL, *y = NULL;
    if (x_path && (rc = cli_read_vector(argv[0], x_path, adia_matrix_cols(A), "x", &x))) {
        adia_matrix_destroy(A);
        return rc;
    }
    adia_format *F = NULL;
    adia_plan *P = NULL;
    adia_status s;
    bool gpu = false;
    cli_spmv_result r;
    choice c = {.chooser = "fixed", .why = "--format", .explain = explain ? "" : NULL};
    adia_value_type vt = single ? ADIA_FLOAT : ADIA_DOUBLE;
    if (!format) {
        if ((rc = plan_format(argv[0], A, device, vt, calls, chooser, nondet, &p, &P, &c)))
            goto out;
        F = adia_plan_format(P);
        gpu = adia_plan_device(P) == 1;
    } else if ((s = build_format(A, format, &p, vt, &F)) != ADIA_OK) {
        rc = cli_fail_params(argv[0], params, s);
        goto out;
    } else if ((rc = pick_device(argv[0], device, F, &gpu))) {
        goto out;
    }
    if (y_path && !(y = malloc(((size_t)adia_matrix_rows(A) + 1) * sizeof *y))) {
        fprintf(stderr, "adia %s: out of memory for y\n", argv[0]);
        rc = 1;
        goto out;
    }
    if ((rc = cli_spmv_run(argv[0], A, F, gpu, (int)runs, (uint64_t)seed, x, y, &r))) goto out;
    report(json, A, F, &r, (int)runs, &c);
    if (!(r.max_rel_err <= r.tolerance)) {
        fprintf(stderr, "adia %s: check failed: max relative error %.3g > %.0e\n", argv[0],
                r.max_rel_err, r.tolerance);
        rc = 1;
    } else if (y_path) {   /* only a checked y is written */
        rc = cli_write_vector(argv[0], y_path, adia_matrix_rows(A), y);
    }
out:
    free(x);
    free(y);
    if (P) adia_plan_destroy(P);   /* owns F */
    else adia_format_destroy(F);
    adia_matrix_destroy(A);
    return rc;
}
