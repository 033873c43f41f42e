/* cmd_spgemm.c -- `adia spgemm` (alias `adia spmm`): C = op(A) * op(B) in
 * diagonal storage (HM or CDM, seed 004) on the CPU or GPU, with the output
 * structure reported before the numeric work. */
#include "cli.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *algo_name(adia_spgemm_algo a)
{
    return a == ADIA_SPGEMM_CDM ? "cdm" : a == ADIA_SPGEMM_HM ? "hm" : "auto";
}

static int parse_choice(const char *cmd, const char *opt, const char *v,
                        const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return 0;
        }
    return cli_usage_error(cmd, "--%s: unknown value '%s'", opt, v);
}

static void report(const adia_spgemm_info *s, const adia_spgemm_info *r, double wall_ms,
                   const char *out, bool json)
{
    if (json) {
        cli_json j;
        json_begin(&j, stdout);
        json_int(&j, "rows", s->rows);
        json_int(&j, "cols", s->cols);
        json_int(&j, "diagonals", s->n_diag);
        json_int(&j, "nnz", s->nnz);
        json_int(&j, "nnz_bound", s->nnz_bound);
        json_int(&j, "pairs", s->n_pairs);
        json_int(&j, "flops", s->flops);
        json_int(&j, "peak_bytes", s->peak_bytes);
        json_int(&j, "device_bytes", s->device_bytes);
        json_str(&j, "algorithm", algo_name(r->algorithm));
        json_num(&j, "numeric_ms", r->time_ms);
        json_num(&j, "total_ms", wall_ms);
        json_num(&j, "gflops", r->time_ms > 0 ? (double)s->flops / (r->time_ms * 1e6) : 0.0);
        if (out) json_str(&j, "output", out);
        json_end(&j);
        return;
    }
    printf("C: %d x %d, %lld diagonals, %lld entries (at most %lld nonzeros), %lld pairs, "
           "%.3g flops\n", s->rows, s->cols, (long long)s->n_diag, (long long)s->nnz,
           (long long)s->nnz_bound, (long long)s->n_pairs, (double)s->flops);
    printf("algorithm %s: numeric %.3f ms (%.2f GFLOP/s), total %.3f ms, peak memory %.1f MB\n",
           algo_name(r->algorithm), r->time_ms,
           r->time_ms > 0 ? (double)s->flops / (r->time_ms * 1e6) : 0.0, wall_ms,
           (double)s->peak_bytes / 1e6);
    if (out) printf("wrote %s\n", out);
}

int cmd_spgemm(int argc, char **argv)
{
    const char *cmd = argv[0], *out = NULL, *device = "cpu", *algo = "auto";
    const char *gen_a = NULL, *gen_b = NULL;
    bool ta = false, tb = false, json = false, allow_fill = false;
    long threads = LONG_MIN;   /* not given: all (0 for the library) */
    const cli_option opts[] = {
        {"output", CLI_STRING, &out, "write C to this file (also -o FILE): .mtx, .mtx.gz or "
                                     ".bin by suffix"},
        {"transpose-a", CLI_FLAG, &ta, "use A^T (no transpose is formed)"},
        {"transpose-b", CLI_FLAG, &tb, "use B^T"},
        {"device", CLI_STRING, &device, "cpu (default) or gpu"},
        {"algorithm", CLI_STRING, &algo, "auto (default), hm or cdm (CPU, square)"},
        {"threads", CLI_INT, &threads, "CPU threads, 1..4 x processors (default: all)"},
        {"gen-a", CLI_STRING, &gen_a, "generate A from a spec instead of a file"},
        {"gen-b", CLI_STRING, &gen_b, "generate B from a spec instead of a file"},
        {"allow-fill", CLI_FLAG, &allow_fill, "run even when C's diagonals would be mostly "
                                              "zeros (refused by default: C stored > 4 x its "
                                              "nonzeros)"},
        {"json", CLI_FLAG, &json, "print one JSON object"},
        {NULL, CLI_FLAG, NULL, NULL},
    };
    /* -o is the one short option: rewrite it to --output */
    char **args = malloc(((size_t)argc + 1) * sizeof *args);
    if (!args) return cli_usage_error(cmd, "out of memory");
    for (int i = 0; i < argc; i++) args[i] = strcmp(argv[i], "-o") ? argv[i] : (char *)"--output";
    args[argc] = NULL;
    const char *pos[2];
    int npos = 0;
    bool done = false;
    int rc = cli_parse(argc, args, "usage: adia spgemm A.mtx B.mtx [-o C.mtx] [--transpose-a|"
                       "--transpose-b] [--device cpu|gpu] [--allow-fill] [--json]",
                       opts, pos, 2, &npos, &done);
    free(args);
    if (rc || done) return rc;
    if (threads != LONG_MIN &&
        (rc = cli_check_range(cmd, "threads", (double)threads, 1, (double)adia_thread_limit())))
        return rc;
    int need = (gen_a ? 0 : 1) + (gen_b ? 0 : 1);
    if (npos != need)
        return cli_usage_error(cmd, "expected %d matrix file(s), got %d (see --help)", need, npos);
    const char *path_a = gen_a ? NULL : pos[0], *path_b = gen_b ? NULL : pos[gen_a ? 0 : 1];
    if (out && (rc = cli_check_output(cmd, out))) return rc;
    const cli_file in[] = {{"A", path_a}, {"B", path_b}}, outs[] = {{"-o", out}};
    if ((rc = cli_check_files(cmd, in, 2, outs, 1))) return rc;
    adia_spgemm_options opt;
    adia_spgemm_options_default(&opt);
    static const char *const devices[] = {"cpu", "gpu"}, *const algos[] = {"auto", "hm", "cdm"};
    int dv = 0, al = 0;
    if ((rc = parse_choice(cmd, "device", device, devices, 2, &dv))) return rc;
    if ((rc = parse_choice(cmd, "algorithm", algo, algos, 3, &al))) return rc;
    opt.device = (adia_device)dv;
    opt.algorithm = (adia_spgemm_algo)al;
    opt.threads = threads == LONG_MIN ? 0 : (int)threads;
    if (allow_fill) opt.max_fill = INFINITY;

    adia_matrix *A = NULL, *B = NULL, *C = NULL;
    if ((rc = cli_open_matrix(cmd, path_a, gen_a, &A))) return rc;
    if ((rc = cli_open_matrix(cmd, path_b, gen_b, &B))) {
        adia_matrix_destroy(A);
        return rc;
    }
    adia_status s = ADIA_OK;
    adia_op oa = ta ? ADIA_OP_T : ADIA_OP_N, ob = tb ? ADIA_OP_T : ADIA_OP_N;
    adia_spgemm_info structure, result;
    if (s == ADIA_OK) s = adia_spgemm_structure(oa, A, ob, B, &opt, &structure, NULL);
    double t0 = cli_now();
    opt.info = &result;
    if (s == ADIA_OK) s = adia_spgemm(oa, A, ob, B, &C, &opt);
    double wall_ms = (cli_now() - t0) * 1e3;
    rc = s == ADIA_OK ? 0 : cli_fail(cmd, s);
    if (rc == 0 && out) rc = cli_write_matrix(cmd, C, out);   /* by suffix, as gen and convert */
    if (rc == 0) report(&structure, &result, wall_ms, out, json);
    adia_matrix_destroy(A);
    adia_matrix_destroy(B);
    adia_matrix_destroy(C);
    return rc;
}
