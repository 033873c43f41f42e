/* cmd_spmv.c -- `adia spmv`: build one format, run y = A*x on the CPU or the
 * GPU, check it against the double-precision reference, report the median
 * time, GFLOPS and bandwidth. */
#include "cli.h"

#include <string.h>

static const char usage[] =
    "usage: adia spmv FILE|--gen SPEC [--format NAME] [--device cpu|gpu] [--float]\n"
    "                 [--runs N] [--seed N] [--params k=v,...] [--json]\n"
    "Run y = A*x on random x in one format (default: the format the analysis\n"
    "chooses) and check it against adia_matrix_spmv in double: exit 1 if the\n"
    "max relative error exceeds 1e-12 (double) or 1e-5 (--float).";

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

static void report(bool json, const adia_matrix *A, const adia_format *F,
                   const cli_spmv_result *r, int runs)
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
    printf("  median time %.4f ms over %d runs, %.2f GFLOPS", r->time_ms, runs, r->gflops);
    if (r->bytes >= 0) printf(", %.1f GB/s (%lld bytes)", r->gbytes_per_s, (long long)r->bytes);
    printf("\n  max relative error %.3g (tolerance %.0e): %s\n", r->max_rel_err, r->tolerance,
           pass ? "ok" : "FAILED");
}

/* The analysis' choice of format for A. */
static int chosen_format(const char *cmd, const adia_matrix *A, char *name, size_t size)
{
    adia_features f;
    adia_status s = adia_matrix_analyze(A, NULL, &f);
    if (s != ADIA_OK) return cli_fail(cmd, s);
    snprintf(name, size, "%s", f.format);
    return 0;
}

int cmd_spmv(int argc, char **argv)
{
    const char *gen = NULL, *format = NULL, *device = NULL, *params = NULL;
    bool json = false, single = false, done;
    long runs = 20, seed = 42;
    const cli_option opts[] = {
        {"gen", CLI_STRING, &gen, "generate the matrix from a spec instead of reading FILE"},
        {"format", CLI_STRING, &format, "storage format (default: the analysis' choice)"},
        {"device", CLI_STRING, &device, "cpu or gpu (default: gpu when usable, else cpu)"},
        {"float", CLI_FLAG, &single, "single precision (default double)"},
        {"runs", CLI_INT, &runs, "timed runs after the checked one (default 20)"},
        {"seed", CLI_INT, &seed, "seed of the random x (default 42)"},
        {"params", CLI_STRING, &params, "format parameters key=value,... (B eta hack seg width C ...)"},
        {"json", CLI_FLAG, &json, "print one JSON object (format, device, time_ms, max_rel_err, ...)"},
        {0},
    };
    const char *pos[1] = {NULL};
    int npos, rc = cli_parse(argc, argv, usage, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    if (format && (rc = cli_check_format(argv[0], format))) return rc;
    if (device && strcmp(device, "cpu") && strcmp(device, "gpu"))
        return cli_usage_error(argv[0], "--device must be cpu or gpu, got '%s'", device);
    if (runs < 1 || runs > 1000000) return cli_usage_error(argv[0], "--runs must be 1..1000000");
    adia_format_params p;
    if ((rc = cli_parse_params(argv[0], params, &p))) return rc;

    adia_matrix *A;
    if ((rc = cli_open_matrix(argv[0], pos[0], gen, &A))) return rc;
    char name[32];
    adia_format *F = NULL;
    adia_status s;
    bool gpu = false;
    cli_spmv_result r;
    if (!format && (rc = chosen_format(argv[0], A, name, sizeof name))) goto out;
    if ((s = adia_format_build(A, format ? format : name, &p,
                               single ? ADIA_FLOAT : ADIA_DOUBLE, &F)) != ADIA_OK) {
        rc = cli_fail(argv[0], s);
        goto out;
    }
    if ((rc = pick_device(argv[0], device, F, &gpu))) goto out;
    if ((rc = cli_spmv_run(argv[0], A, F, gpu, (int)runs, (uint64_t)seed, &r))) goto out;
    report(json, A, F, &r, (int)runs);
    if (!(r.max_rel_err <= r.tolerance)) {
        fprintf(stderr, "adia %s: check failed: max relative error %.3g > %.0e\n", argv[0],
                r.max_rel_err, r.tolerance);
        rc = 1;
    }
out:
    adia_format_destroy(F);
    adia_matrix_destroy(A);
    return rc;
}
