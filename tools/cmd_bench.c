/* cmd_bench.c -- `adia bench`: every format's GPU SpMV on one matrix,
 * checked against the CPU reference, timed (median of >= 50 samples, each a
 * CUDA graph of back-to-back calls timed with events, per call), compared
 * with the memory floor and with cuSPARSE timed the same way.
 *
 * The floor is the time to move the fewest bytes any format must move:
 * each nonzero's value once, x once (cols entries), y written once (rows
 * entries) -- vs*(nnz + rows + cols) bytes, vs = 8 (double) or 4 (float);
 * for square matrices this is the (8*nnz + 16*n) of DESIGN.md -- divided by
 * B_read, a streaming-read bandwidth measured at the start of the run. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "progress.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const BENCH_USAGE =
    "usage: adia bench FILE.mtx | --gen SPEC [options]\n\n"
    "Benchmark the GPU SpMV y = A*x of each format (and cuSPARSE CSR ALG1/ALG2):\n"
    "check against the CPU reference, then the median per-call time of --runs\n"
    "samples (each a CUDA graph of back-to-back calls), GFLOPS, GB/s, time over\n"
    "the memory floor, speedup over cuSPARSE (timed the same way).\n"
    "Generated vs generic kernels of the diagonal formats (paper Tables 11-12);\n"
    "--threads-study: threads per block 64..1024 for the diagonal kernels.";

typedef struct bench_opts {
    const char *gen, *formats, *params, *json_file, *plot;
    bool use_float, json, threads_study, select, nondet;
    long runs, bread_mb;
} bench_opts;

/* One measured row of the table. */
typedef struct bench_row {
    char format[24], kernel[16];
    int threads;
    double build_ms, err, ms, gflops, gbps, over_floor, speedup;
    int64_t bytes, padded;
    const char *status;      /* "ok", "FAILED", "skipped: ..." */
    char note[160];
} bench_row;

typedef struct bench_ctx {
    const adia_matrix *A;
    bench_opts o;
    adia_value_type vt;
    adia_format_params params;
    double bread, floor_ms, cusparse_ms;
    double sp_ms[2], sp_err[2];
    bench_row *rows;
    int n_rows, cap_rows;
    struct { const char *chooser; char format[24]; double ms, loss; } sel[3];
    int n_sel;
} bench_ctx;

static bench_row *new_row(bench_ctx *c)
{
    if (c->n_rows == c->cap_rows) {
        int cap = c->cap_rows ? 2 * c->cap_rows : 32;
        bench_row *r = realloc(c->rows, (size_t)cap * sizeof *r);
        if (!r) return NULL;
        c->rows = r;
        c->cap_rows = cap;
    }
    bench_row *r = &c->rows[c->n_rows++];
    memset(r, 0, sizeof *r);
    r->err = r->ms = NAN;
    r->status = "ok";
    return r;
}

/* Check twice (beta = 0 with NaN-poisoned y, then general alpha/beta) and
 * keep the larger error; a NaN error fails. */
static bool check_format(bench_ctx *c, adia_format *F, bench_row *r)
{
    double e1 = NAN, e2 = NAN;
    adia_status s = adia_gpu_check_spmv(F, c->A, 1.0, 0.0, 11, &e1);
    if (s == ADIA_OK) s = adia_gpu_check_spmv(F, c->A, -1.5, 0.5, 12, &e2);
    if (s != ADIA_OK) {
        snprintf(r->note, sizeof r->note, "%s", adia_last_error());
        r->status = "FAILED";
        return false;
    }
    r->err = isnan(e1) || isnan(e2) ? NAN : fmax(e1, e2);
    double tol = c->vt == ADIA_FLOAT ? 1e-4 : 1e-10;
    if (!(r->err <= tol)) {
        snprintf(r->note, sizeof r->note, "relative error %.3g > %.0e", r->err, tol);
        r->status = "FAILED";
        return false;
    }
    return true;
}

static void time_format(bench_ctx *c, adia_format *F, bench_row *r)
{
    adia_gpu_timing t;
    adia_status s = adia_gpu_time_spmv(F, (int)c->o.runs, &t);
    if (s != ADIA_OK) {
        snprintf(r->note, sizeof r->note, "%s", adia_last_error());
        r->status = "FAILED";
        return;
    }
    if (!t.graph) snprintf(r->note, sizeof r->note, "timed as plain launches (no graph)");
    double nnz = (double)adia_matrix_nnz(c->A);
    r->ms = t.median_ms;
    r->bytes = adia_format_bytes(F);
    r->padded = adia_format_padded_zeros(F);
    r->gflops = 2 * nnz / (r->ms * 1e-3) / 1e9;
    r->gbps = (double)r->bytes / (r->ms * 1e-3) / 1e9;
    r->over_floor = r->ms / c->floor_ms;
    r->speedup = c->cusparse_ms / r->ms;
}

/* Set kernel k (AUTO: the upload's choice) and threads, check, time. */
static void run_variant(bench_ctx *c, adia_format *F, const char *fmt, adia_gpu_kernel k,
                        int threads, double build_ms)
{
    bench_row *r = new_row(c);
    if (!r) return;
    snprintf(r->format, sizeof r->format, "%s", fmt);
    r->build_ms = build_ms;
    r->threads = threads ? threads : 256;  /* the library's default */
    adia_status s = adia_format_set_kernel(F, k);
    if (s == ADIA_OK) s = adia_format_set_threads(F, r->threads);
    snprintf(r->kernel, sizeof r->kernel, "%s", adia_gpu_kernel_name(k ? k : adia_format_kernel(F)));
    if (s == ADIA_ERR_UNSUPPORTED) {
        snprintf(r->note, sizeof r->note, "%s", adia_last_error());
        r->status = "skipped";
        return;
    }
    if (s != ADIA_OK) {
        snprintf(r->note, sizeof r->note, "%s", adia_last_error());
        r->status = "FAILED";
        return;
    }
    if (check_format(c, F, r)) time_format(c, F, r);
}

static void bench_format(bench_ctx *c, const char *fmt)
{
    double t0 = cli_now();
    adia_format *F = NULL;
    adia_status s = adia_format_build(c->A, fmt, &c->params, c->vt, &F);
    double build_ms = (cli_now() - t0) * 1e3;
    if (s == ADIA_OK) s = adia_format_upload(F);
    if (s != ADIA_OK) {
        bench_row *r = new_row(c);
        if (r) {
            snprintf(r->format, sizeof r->format, "%s", fmt);
            snprintf(r->note, sizeof r->note, "%s", adia_last_error());
            /* a format that cannot hold the matrix (padding of an
             * unstructured matrix: memory, 32-bit counts) or has no GPU
             * kernel is skipped, not a failure */
            r->status = s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_NO_MEMORY ||
                        s == ADIA_ERR_OVERFLOW ? "skipped" : "FAILED";
        }
        adia_format_destroy(F);
        return;
    }
    /* every kernel variant the format's table lists (csr: scalar, vector,
     * adaptive; the diagonal formats: generic, generated -- the per-row
     * form for HDI and CRSD pieces): the planner's MEASURE may pick any */
    unsigned kernels = adia_format_gpu_kernels(fmt);
    if (!kernels) run_variant(c, F, fmt, ADIA_KERNEL_AUTO, 0, build_ms);
    for (int k = 1; k < 32; k++)
        if (kernels & (1u << k)) run_variant(c, F, fmt, (adia_gpu_kernel)k, 0, build_ms);
    for (int th = 64; kernels && adia_format_is_diagonal(fmt) && c->o.threads_study && th <= 1024;
         th *= 2)
        for (int k = 1; k < 32; k++)
            if (kernels & (1u << k)) run_variant(c, F, fmt, (adia_gpu_kernel)k, th, build_ms);
    adia_format_destroy(F);
}

static adia_status bench_cusparse(bench_ctx *c)
{
    c->cusparse_ms = INFINITY;
    for (int a = 0; a < 2; a++) {
        adia_gpu_timing t;
        c->sp_ms[a] = c->sp_err[a] = NAN;
        adia_status s = adia_cusparse_time_spmv(c->A, c->vt, a + 1, (int)c->o.runs, &c->sp_err[a], &t);
        if (s != ADIA_OK) return s;
        c->sp_ms[a] = t.median_ms;
        if (t.median_ms < c->cusparse_ms) c->cusparse_ms = t.median_ms;
    }
    return ADIA_OK;
}

/* ------------------------------------------------------------- output */

static void utc_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void print_table(const bench_ctx *c, const adia_gpu_info *g, const char *date)
{
    const adia_matrix *A = c->A;
    printf("# adia bench %s -- %s (sm_%d%d, %d SMs, L2 %.0f MB), driver %d, runtime %d\n",
           date, g->name, g->cc_major, g->cc_minor, g->sm_count, g->l2_bytes / 1048576.0,
           g->driver_version, g->runtime_version);
    printf("# matrix %s: %d x %d, nnz %lld, %s, runs %ld (median per-call time; each run times "
           "a CUDA graph of back-to-back calls)\n", adia_matrix_name(A),
           adia_matrix_rows(A), adia_matrix_cols(A), (long long)adia_matrix_nnz(A),
           adia_value_type_name(c->vt), c->o.runs);
    printf("# B_read %.1f GB/s; floor %.4f ms; cuSPARSE CSR ALG1 %.4f ms (err %.1e), ALG2 %.4f ms (err %.1e)\n",
           c->bread, c->floor_ms, c->sp_ms[0], c->sp_err[0], c->sp_ms[1], c->sp_err[1]);
    printf("%-8s %-9s %5s %9s %8s %9s %8s %8s %7s %7s %10s  %s\n", "format", "kernel", "thr",
           "build_ms", "rel_err", "time_ms", "GFLOPS", "GB/s", "t/floor", "vs_cusp", "padded", "status");
    for (int i = 0; i < c->n_rows; i++) {
        const bench_row *r = &c->rows[i];
        if (strcmp(r->status, "ok")) {
            printf("%-8s %-9s %5d %9s %8s %9s %8s %8s %7s %7s %10s  %s: %s\n", r->format, r->kernel,
                   r->threads, "-", "-", "-", "-", "-", "-", "-", "-", r->status, r->note);
            continue;
        }
        printf("%-8s %-9s %5d %9.1f %8.1e %9.4f %8.1f %8.1f %7.2f %7.2f %10lld  ok\n", r->format,
               r->kernel, r->threads, r->build_ms, r->err, r->ms, r->gflops, r->gbps,
               r->over_floor, r->speedup, (long long)r->padded);
    }
}

/* Generated vs generic at 256 threads (paper Tables 11-12). */
static void print_generated(const bench_ctx *c)
{
    bool header = false;
    for (int i = 0; i < c->n_rows; i++) {
        const bench_row *g = &c->rows[i];
        if (strcmp(g->kernel, "generated") || g->threads != 256 || isnan(g->ms)) continue;
        for (int j = 0; j < c->n_rows; j++) {
            const bench_row *n = &c->rows[j];
            if (strcmp(n->format, g->format) || strcmp(n->kernel, "generic") || n->threads != 256 ||
                isnan(n->ms))
                continue;
            if (!header) printf("# generic (NLP) vs generated: format generic_ms generated_ms ratio\n");
            header = true;
            printf("#   %-8s %9.4f %9.4f %6.3f\n", g->format, n->ms, g->ms, n->ms / g->ms);
            break;
        }
    }
}

static void print_json(const bench_ctx *c, const adia_gpu_info *g, const char *date, FILE *out)
{
    cli_json j;
    json_begin(&j, out);
    json_str(&j, "date", date);
    json_str(&j, "device", g->name);
    json_int(&j, "driver_version", g->driver_version);
    json_int(&j, "runtime_version", g->runtime_version);
    json_str(&j, "matrix", adia_matrix_name(c->A));
    json_int(&j, "rows", adia_matrix_rows(c->A));
    json_int(&j, "cols", adia_matrix_cols(c->A));
    json_int(&j, "nnz", adia_matrix_nnz(c->A));
    json_str(&j, "precision", adia_value_type_name(c->vt));
    json_int(&j, "runs", c->o.runs);
    json_str(&j, "timing", "per-call median, CUDA-graph batches of back-to-back calls");
    json_num(&j, "bread_gbps", c->bread);
    json_num(&j, "floor_ms", c->floor_ms);
    json_num(&j, "cusparse_alg1_ms", c->sp_ms[0]);
    json_num(&j, "cusparse_alg2_ms", c->sp_ms[1]);
    json_num(&j, "cusparse_alg1_err", c->sp_err[0]);
    json_num(&j, "cusparse_alg2_err", c->sp_err[1]);
    json_array_begin(&j, "results");
    for (int i = 0; i < c->n_rows; i++) {
        const bench_row *r = &c->rows[i];
        json_object_begin(&j, NULL);
        json_str(&j, "format", r->format);
        json_str(&j, "kernel", r->kernel);
        json_int(&j, "threads", r->threads);
        json_str(&j, "status", r->status);
        if (r->note[0]) json_str(&j, "note", r->note);
        json_num(&j, "build_ms", r->build_ms);
        json_num(&j, "rel_err", r->err);
        json_num(&j, "time_ms", r->ms);
        json_num(&j, "gflops", r->gflops);
        json_num(&j, "gbps", r->gbps);
        json_int(&j, "bytes", r->bytes);
        json_int(&j, "padded_zeros", r->padded);
        json_num(&j, "time_over_floor", r->over_floor);
        json_num(&j, "speedup_vs_cusparse", r->speedup);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_array_begin(&j, "select");
    for (int i = 0; i < c->n_sel; i++) {
        json_object_begin(&j, NULL);
        json_str(&j, "chooser", c->sel[i].chooser);
        json_str(&j, "format", c->sel[i].format);
        json_num(&j, "time_ms", c->sel[i].ms);
        json_num(&j, "loss", c->sel[i].loss);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_end(&j);
}

/* May --select's planner choose row r's kernel: a kernel that is not
 * bitwise reproducible only with --nondeterministic. */
static bool choosable(const bench_ctx *c, const bench_row *r)
{
    adia_gpu_kernel k;
    if (c->o.nondet || adia_gpu_kernel_parse(r->kernel, &k) != ADIA_OK) {
        adia_clear_error();
        return true;
    }
    return adia_gpu_kernel_is_deterministic(k);
}

/* Fastest checked time of format fmt (any kernel the planner may choose),
 * or of any format. */
static double best_ms(const bench_ctx *c, const char *fmt)
{
    double best = INFINITY;
    for (int i = 0; i < c->n_rows; i++)
        if (!strcmp(c->rows[i].status, "ok") && (!fmt || !strcmp(c->rows[i].format, fmt)) &&
            choosable(c, &c->rows[i]) && c->rows[i].ms < best)
            best = c->rows[i].ms;
    return best;
}

/* --select: what each planner chooser picks on the GPU for many expected
 * calls, and its loss against the exhaustively measured best of this run:
 * loss = (fastest time of the chosen format) / (fastest time of any) - 1. */
static void run_select(bench_ctx *c)
{
    static const adia_chooser choosers[] = {ADIA_CHOOSE_RULES, ADIA_CHOOSE_MODEL, ADIA_CHOOSE_MEASURE};
    double best = best_ms(c, NULL);
    for (int i = 0; i < 3; i++) {
        adia_plan_hints h = {.expected_calls = 100000, .vtype = c->vt, .device = 1,
                             .chooser = choosers[i], .params = &c->params,
                             .nondeterministic = c->o.nondet};
        adia_plan *P = NULL;
        if (adia_plan_create(c->A, &h, &P) != ADIA_OK) {
            fprintf(stderr, "adia bench --select %s: %s\n", adia_chooser_name(choosers[i]),
                    adia_last_error());
            continue;
        }
        c->sel[c->n_sel].chooser = adia_chooser_name(choosers[i]);
        snprintf(c->sel[c->n_sel].format, sizeof c->sel[0].format, "%s", adia_plan_format_name(P));
        c->sel[c->n_sel].ms = best_ms(c, c->sel[c->n_sel].format);
        c->sel[c->n_sel].loss = c->sel[c->n_sel].ms / best - 1.0;   /* inf: not measured */
        c->n_sel++;
        adia_plan_destroy(P);
    }
}

static void print_select(const bench_ctx *c)
{
    for (int i = 0; i < c->n_sel; i++)
        printf("# select %-8s -> %-8s %9.4f ms  best %9.4f ms  loss %6.1f%%\n", c->sel[i].chooser,
               c->sel[i].format, c->sel[i].ms, best_ms(c, NULL),
               100.0 * (isfinite(c->sel[i].loss) ? c->sel[i].loss : 9.999)); /* 999.9%: not measured */
}

/* Bar chart of the fastest checked kernel of each format, with cuSPARSE
 * CSR and the memory floor as reference lines. */
static adia_status plot_rows(const bench_ctx *c, const char *path)
{
    enum { MAX_BARS = 250 };
    const char *labels[MAX_BARS], *fmt[MAX_BARS];
    char names[MAX_BARS][48];
    double values[MAX_BARS];
    int n = 0;
    for (int i = 0; i < c->n_rows; i++) {
        const bench_row *r = &c->rows[i];
        if (strcmp(r->status, "ok")) continue;
        int j = 0;
        while (j < n && strcmp(fmt[j], r->format)) j++;
        if (j == n) {                 /* first row of this format */
            if (n == MAX_BARS) break;
            fmt[n] = r->format;
            labels[n] = names[n];
            values[n++] = INFINITY;
        }
        if (r->ms < values[j]) {      /* keep its fastest kernel */
            snprintf(names[j], sizeof names[j], "%s/%s", r->format, r->kernel);
            values[j] = r->ms;
        }
    }
    char title[200];
    snprintf(title, sizeof title, "%s (%s): SpMV time per format", adia_matrix_name(c->A),
             adia_value_type_name(c->vt));
    const char *ref_labels[] = {"cuSPARSE CSR", "memory floor"};
    double refs[] = {c->cusparse_ms, c->floor_ms};
    return adia_bar_chart_png(path, title, n, labels, values, "ms", 2, ref_labels, refs);
}

/* ---------------------------------------------------------------- main */

static int run_formats(bench_ctx *c)
{
    if (c->o.formats) {
        char *list = strdup(c->o.formats);
        if (!list) return cli_usage_error("bench", "out of memory");
        for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save))
            if (!adia_format_exists(f)) {
                free(list);
                return cli_usage_error("bench", "unknown format '%s'", f);
            }
        strcpy(list, c->o.formats);
        int n = 1, i = 0;
        for (const char *q = list; *q; q++) n += *q == ',';
        progress_begin("benchmarking");
        for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
            bench_format(c, f);
            progress_update((double)++i / n);
        }
        progress_end();
        free(list);
    } else {
        progress_begin("benchmarking");
        for (int i = 0; i < adia_format_count(); i++) {
            bench_format(c, adia_format_name_at(i));
            progress_update((double)(i + 1) / adia_format_count());
        }
        progress_end();
    }
    return 0;
}

/* Append the JSON line to path so that a failure (disk full, a kill)
 * never leaves it half-written: the old content and the new line go to a
 * temporary file beside it, flushed and synced, then renamed over it. */
static int append_json(const bench_ctx *c, const adia_gpu_info *g, const char *date,
                       const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
        fprintf(stderr, "adia bench: --json-append path too long\n");
        return 2;
    }
    int fd = mkstemp(tmp);
    struct stat st;
    mode_t mask = umask(0);   /* the tool is single-threaded here */
    umask(mask);
    if (fd >= 0) fchmod(fd, stat(path, &st) == 0 ? st.st_mode & 07777 : 0666 & ~mask);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL, *old = fopen(path, "r");
    int ok = out != NULL;
    char buf[1 << 16];
    for (size_t n; ok && old && (n = fread(buf, 1, sizeof buf, old)) > 0;)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && (!old || !ferror(old));
    if (ok) print_json(c, g, date, out);
    ok = ok && fflush(out) == 0 && fsync(fileno(out)) == 0;
    int err = errno;
    if (old) fclose(old);
    ok = out && fclose(out) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (ok) return 0;
    if (fd >= 0) unlink(tmp);
    fprintf(stderr, "adia bench: appending to %s: %s\n", path, strerror(err ? err : errno));
    return 1;
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o = {.runs = 100, .bread_mb = 2048};
    const cli_option opts[] = {
        {"gen", CLI_STRING, &o.gen, "generate the matrix from SPEC instead of reading FILE"},
        {"formats", CLI_STRING, &o.formats, "comma-separated formats (default: all)"},
        {"float", CLI_FLAG, &o.use_float, "single precision (default double)"},
        {"runs", CLI_INT, &o.runs, "timed samples per kernel, >= 50 (default 100)"},
        {"params", CLI_STRING, &o.params, "format parameters key=value,... (e.g. B=256)"},
        {"json", CLI_FLAG, &o.json, "print one JSON object instead of the table"},
        {"json-append", CLI_STRING, &o.json_file, "also append the JSON object (one line) to FILE"},
        {"threads-study", CLI_FLAG, &o.threads_study, "diagonal kernels at 64..1024 threads per block"},
        {"select", CLI_FLAG, &o.select, "also report the planner's choices (rules, model, measure) and their loss"},
        {"nondeterministic", CLI_FLAG, &o.nondet, "--select: the planner may choose kernels that "
                                                  "are not bitwise reproducible (cuSPARSE CSR ALG1)"},
        {"plot", CLI_STRING, &o.plot, "also draw a bar chart of the times to FILE.png"},
        {"bread-mb", CLI_INT, &o.bread_mb, "buffer of the read-bandwidth kernel in MiB (default 2048)"},
        {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    bool done;
    int rc = cli_parse(argc, argv, BENCH_USAGE, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    if ((npos == 1) == (o.gen != NULL))
        return cli_usage_error(argv[0], "give exactly one of FILE or --gen SPEC");
    if ((rc = cli_check_range(argv[0], "runs", (double)o.runs, 50, 100000)) ||
        (rc = cli_check_range(argv[0], "bread-mb", (double)o.bread_mb, 64, 1 << 20)))
        return rc;
    if (o.plot && (rc = cli_check_png_output(argv[0], "--plot", o.plot))) return rc;
    if (o.nondet && !o.select)
        return cli_usage_error(argv[0], "--nondeterministic is a hint of the planner: give it "
                               "with --select (every kernel is timed anyway)");
    const cli_file in[] = {{"FILE", npos ? pos[0] : NULL}},
                   out[] = {{"--plot", o.plot}, {"--json-append", o.json_file}};
    if ((rc = cli_check_files(argv[0], in, 1, out, 2))) return rc;
    bench_ctx c = {.o = o, .vt = o.use_float ? ADIA_FLOAT : ADIA_DOUBLE};
    if ((rc = cli_parse_params(argv[0], o.params, &c.params))) return rc;
    adia_status s;
    int ndev = 0;
    if ((s = adia_gpu_device_count(&ndev)) != ADIA_OK) return cli_fail(argv[0], s);
    if (ndev == 0) {
        fprintf(stderr, "adia bench: no CUDA device (or built without CUDA)\n");
        return 1;
    }
    adia_gpu_info g;
    if ((s = adia_gpu_get_info(&g)) != ADIA_OK) return cli_fail(argv[0], s);
    adia_matrix *A = NULL;
    if ((s = cli_load_matrix(npos ? pos[0] : NULL, o.gen, &A)) != ADIA_OK) return cli_fail(argv[0], s);
    if ((rc = cli_check_params(argv[0], &c.params, A))) {
        adia_matrix_destroy(A);
        return rc;
    }
    c.A = A;
    if ((s = adia_gpu_read_bandwidth((size_t)o.bread_mb << 20, 20, &c.bread)) != ADIA_OK) {
        adia_matrix_destroy(A);
        return cli_fail(argv[0], s);
    }
    if (bench_cusparse(&c) != ADIA_OK) {  /* no reference: speedups stay NaN */
        fprintf(stderr, "adia bench: cuSPARSE reference failed: %s\n", adia_last_error());
        c.cusparse_ms = NAN;
    }
    double vs = (double)adia_value_size(c.vt);
    c.floor_ms = vs * ((double)adia_matrix_nnz(A) + adia_matrix_rows(A) + adia_matrix_cols(A)) /
                 (c.bread * 1e9) * 1e3;
    rc = run_formats(&c);
    if (!rc && o.select) run_select(&c);
    char date[64];
    utc_now(date, sizeof date);
    if (!rc) {
        if (o.json) print_json(&c, &g, date, stdout);
        else {
            print_table(&c, &g, date);
            print_generated(&c);
            print_select(&c);
        }
        if (o.plot && (s = plot_rows(&c, o.plot)) != ADIA_OK) rc = cli_fail(argv[0], s);
        if (o.json_file && !rc) rc = append_json(&c, &g, date, o.json_file);
    }
    int failed = 0;
    for (int i = 0; i < c.n_rows; i++) failed += !strcmp(c.rows[i].status, "FAILED");
    free(c.rows);
    adia_matrix_destroy(A);
    return rc ? rc : failed ? 1 : 0;
}
