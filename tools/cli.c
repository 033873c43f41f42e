/* cli.c -- option parsing, error reporting and JSON output for `adia`. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "progress.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Options every command accepts besides its own. */
static const cli_option common_options[] = {
    {"memory", CLI_STRING, NULL, "memory budget, e.g. 12G, 500M (default: half of the "
                                 "memory available)"},
    {NULL, CLI_FLAG, NULL, NULL},
};

static void print_usage(const char *usage, const cli_option *opts)
{
    printf("%s\n", usage);
    printf("\nOptions:\n");
    for (const cli_option *o = opts; o && o->name; o++) {
        const char *arg = o->kind == CLI_FLAG ? "" : o->kind == CLI_STRING ? " TEXT"
                        : o->kind == CLI_INT ? " N" : " X";
        char left[64];
        /* one-letter names also work as short options: -o */
        if (o->name[1]) snprintf(left, sizeof left, "--%s%s", o->name, arg);
        else snprintf(left, sizeof left, "-%s, --%s%s", o->name, o->name, arg);
        printf("  %-24s %s\n", left, o->help);
    }
    printf("  %-24s %s\n", "--memory SIZE", common_options[0].help);
    printf("  %-24s %s\n", "--help", "show this help");
}

/* strtol / strtod must take the whole text: "12abc", "", "1e999" (ERANGE)
 * and, for numbers, "nan" and "inf" are usage errors, never a default. */
static int set_value(const char *cmd, const cli_option *o, const char *v)
{
    char *end;
    errno = 0;
    switch (o->kind) {
    case CLI_FLAG: *(bool *)o->target = true; return 0;
    case CLI_STRING: *(const char **)o->target = v; return 0;
    case CLI_INT: {
        long x = strtol(v, &end, 10);
        if (*v == '\0' || *end)
            return cli_usage_error(cmd, "--%s needs an integer, got '%s'", o->name, v);
        if (errno) return cli_usage_error(cmd, "--%s: '%s' is out of range", o->name, v);
        *(long *)o->target = x;
        return 0;
    }
    case CLI_DOUBLE: {
        double x = strtod(v, &end);
        if (*v == '\0' || *end || errno || !isfinite(x))
            return cli_usage_error(cmd, "--%s needs a finite number, got '%s'", o->name, v);
        *(double *)o->target = x;
        return 0;
    }
    }
    return 2;
}

bool cli_parse_size(const char *text, int64_t *bytes)
{
    static const struct { const char *suffix; double scale; } units[] = {
        {"", 1},        {"b", 1},       {"bytes", 1},   {"k", 1e3},     {"kb", 1e3},
        {"m", 1e6},     {"mb", 1e6},    {"g", 1e9},     {"gb", 1e9},    {"t", 1e12},
        {"tb", 1e12},   {"kib", 0x1p10}, {"mib", 0x1p20}, {"gib", 0x1p30}, {"tib", 0x1p40},
    };
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (end == text || errno || !isfinite(x) || !(x > 0)) return false;
    while (*end == ' ') end++;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (!strcasecmp(end, units[i].suffix)) {
            double b = x * units[i].scale;
            if (!(b >= 1 && b < 0x1p63)) return false;
            *bytes = (int64_t)b;
            return true;
        }
    return false;
}

/* OMP_NUM_THREADS: a list of positive counts, one per nesting level.  One
 * above the library's limit would be clamped silently (adia_thread_limit);
 * such a value is a mistake worth saying before any work. */
int cli_check_threads_env(const char *cmd)
{
    const char *v = getenv("OMP_NUM_THREADS"), *s = v;
    if (!v || !*v) return 0;
    int limit = adia_thread_limit();
    for (;;) {
        char *end;
        errno = 0;
        long n = strtol(s, &end, 10);
        if (end == s || errno || n < 1 || (*end && *end != ','))
            return cli_usage_error(cmd, "OMP_NUM_THREADS='%s' is not a positive thread count "
                                   "(or a comma-separated list of them)", v);
        if (n > limit)
            return cli_usage_error(cmd, "OMP_NUM_THREADS=%ld is more than the %d threads adia "
                                   "runs at most (%d per processor); set it to at most %d or "
                                   "unset it", n, limit, ADIA_THREADS_PER_PROC, limit);
        if (!*end) return 0;
        s = end + 1;
    }
}

/* --memory SIZE: the process's memory budget (adia_set_memory_budget). */
static int set_memory(const char *cmd, const char *v)
{
    int64_t bytes;
    if (!cli_parse_size(v, &bytes))
        return cli_usage_error(cmd, "--memory needs a size such as 12G, 500M, 1.5GB or 4096 "
                               "(bytes), got '%s'", v);
    adia_set_memory_budget(bytes);
    return 0;
}

/* The option named name[0..len), or NULL. */
static const cli_option *find_option(const cli_option *opts, const char *name, size_t len)
{
    for (const cli_option *o = opts; o && o->name; o++)
        if (strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
    return NULL;
}

int cli_parse(int argc, char **argv, const char *usage, const cli_option *opts,
              const char **pos, int max_pos, int *npos, bool *done)
{
    const char *cmd = argv[0];
    *npos = 0;
    *done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_usage(usage, opts);
            *done = true;
            return 0;
        }
        bool is_short = a[0] == '-' && a[1] != '-' && a[1] != '\0' && a[2] == '\0';
        if ((a[0] == '-' && a[1] == '-') || is_short) {
            const char *name = a + (is_short ? 1 : 2), *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const cli_option *o = find_option(opts, name, len);
            if (!o) o = find_option(common_options, name, len);
            if (!o) return cli_usage_error(cmd, "unknown option '%s' (see --help)", a);
            const char *v = NULL;
            if (o->kind != CLI_FLAG) {
                if (eq) v = eq + 1;
                else if (i + 1 < argc) v = argv[++i];
                else return cli_usage_error(cmd, "option --%s needs a value", o->name);
            } else if (eq) {
                return cli_usage_error(cmd, "option --%s takes no value", o->name);
            }
            int rc = o == &common_options[0] ? set_memory(cmd, v) : set_value(cmd, o, v);
            if (rc) return rc;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_usage_error(cmd, "unknown option '%s' (see --help)", a);
        } else {
            if (*npos >= max_pos) return cli_usage_error(cmd, "unexpected argument '%s'", a);
            pos[(*npos)++] = a;
        }
    }
    return 0;
}

int cli_fail(const char *cmd, adia_status s)
{
    fprintf(stderr, "adia %s: %s: %s\n", cmd, adia_status_string(s), adia_last_error());
    return 1;
}

int cli_check_range(const char *cmd, const char *option, double value, double min, double max)
{
    if (value >= min && value <= max) return 0;
    if (isinf(max)) return cli_usage_error(cmd, "--%s must be >= %.15g, got %.15g", option, min, value);
    return cli_usage_error(cmd, "--%s must be in %.15g..%.15g, got %.15g", option, min, max, value);
}

int cli_check_range_above(const char *cmd, const char *option, double value, double above,
                          double max)
{
    if (value > above && value <= max) return 0;
    return cli_usage_error(cmd, "--%s must be > %.15g and <= %.15g, got %.15g", option, above,
                           max, value);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "adia %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 2;
}

adia_status cli_load_matrix(const char *path, const char *gen, adia_matrix **A)
{
    progress_begin(gen ? "generating" : "reading");
    adia_status s = gen ? adia_matrix_generate(gen, A) : adia_matrix_load(path, A);
    progress_end();
    return s;
}

long long cli_file_bytes(const char *path)
{
    struct stat st;
    if (!path || !strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return (long long)st.st_size;
}

int cli_open_matrix(const char *cmd, const char *path, const char *gen, adia_matrix **A)
{
    *A = NULL;
    if (path && gen) return cli_usage_error(cmd, "give a FILE or --gen SPEC, not both");
    if (!path && !gen) return cli_usage_error(cmd, "no matrix: give a FILE or --gen SPEC (see --help)");
    struct stat st;
    if (path && strcmp(path, "-") != 0 && stat(path, &st) != 0) {   /* "-": standard input */
        /* a file that cannot be opened is a failed operation (1), as a
         * malformed one is: only wrong arguments are usage errors (2) */
        fprintf(stderr, "adia %s: cannot open '%s': %s\n", cmd, path, strerror(errno));
        return 1;
    }
    adia_status s = cli_load_matrix(path, gen, A);
    return s == ADIA_OK ? 0 : cli_fail(cmd, s);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

int cli_check_output(const char *cmd, const char *path)
{
    if (ends_with(path, ".mtx") || ends_with(path, ".mtx.gz") || ends_with(path, ".bin")) return 0;
    return cli_usage_error(cmd, "output '%s': name must end in .mtx, .mtx.gz or .bin", path);
}

int cli_check_png_output(const char *cmd, const char *option, const char *path)
{
    if (ends_with(path, ".png")) return 0;
    return cli_usage_error(cmd, "%s '%s': a picture's name must end in .png", option, path);
}

/* Do a and b name the same regular file (device and inode)? */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-")) return false;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0 || !S_ISREG(sa.st_mode)) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_check_files(const char *cmd, const cli_file *in, int nin, const cli_file *out, int nout)
{
    const cli_file *from_stdin = NULL;
    for (int i = 0; i < nin; i++) {
        if (!in[i].path || strcmp(in[i].path, "-")) continue;
        if (from_stdin)
            return cli_usage_error(cmd, "standard input ('-') is given for both %s and %s: it "
                                   "can be read only once; save one of them to a file",
                                   from_stdin->role, in[i].role);
        from_stdin = &in[i];
    }
    for (int o = 0; o < nout; o++) {
        for (int i = 0; i < nin; i++)
            if (same_file(out[o].path, in[i].path))
                return cli_usage_error(cmd, "output %s '%s' is the input %s '%s' (the same "
                                       "file): an input is never overwritten; write the output "
                                       "to another file", out[o].role, out[o].path, in[i].role,
                                       in[i].path);
        for (int p = 0; p < o; p++)
            if (out[p].path && out[o].path &&
                (!strcmp(out[p].path, out[o].path) || same_file(out[p].path, out[o].path)))
                return cli_usage_error(cmd, "outputs %s and %s are the same file '%s'",
                                       out[p].role, out[o].role, out[o].path);
    }
    return 0;
}

int cli_write_matrix(const char *cmd, const adia_matrix *A, const char *path)
{
    int rc = cli_check_output(cmd, path);
    if (rc) return rc;
    progress_begin("writing");
    adia_status s = ends_with(path, ".bin") ? adia_matrix_write_bin(A, path)
                                             : adia_matrix_write_mtx(A, path);
    progress_end();
    return s == ADIA_OK ? 0 : cli_fail(cmd, s);
}

/* A vector's length from its header alone (n x 1, or 1 x n for an
 * array), or -1: only for a regular file, which can be opened twice (a
 * pipe's header would be gone). */
static int64_t vector_length_ahead(const char *path)
{
    struct stat st;
    int64_t rows = -1, cols = -1;
    if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        adia_matrix_read_mtx_rows(path, 0, 0, &rows, &cols, NULL) != ADIA_OK) {
        adia_clear_error();   /* the real read says what is wrong */
        return -1;
    }
    return cols == 1 ? rows : rows == 1 ? cols : -1;
}

int cli_read_vector(const char *cmd, const char *path, int32_t n, const char *what, double **x)
{
    int32_t len = 0;
    *x = NULL;
    /* a length that cannot fit is known from the header: said before the
     * whole file is read */
    const int64_t ahead = vector_length_ahead(path);
    const int read = ahead < 0 || ahead == n;
    if (read) {
        adia_status s = adia_vector_read_mtx(path, &len, x);
        if (s != ADIA_OK) return cli_fail(cmd, s);
        if (len == n) return 0;
    }
    const int64_t have = read ? len : ahead;
    fprintf(stderr, "adia %s: %s '%s' has %lld entr%s, the matrix needs %d\n", cmd, what, path,
            (long long)have, have == 1 ? "y" : "ies", (int)n);
    free(*x);
    *x = NULL;
    return 1;
}

int cli_check_vector_output(const char *cmd, const char *path)
{
    if (ends_with(path, ".mtx") || ends_with(path, ".mtx.gz")) return 0;
    return cli_usage_error(cmd, "vector output '%s': name must end in .mtx or .mtx.gz", path);
}

int cli_write_vector(const char *cmd, const char *path, int32_t n, const double *x)
{
    progress_begin("writing");
    adia_status s = adia_vector_write_mtx(path, n, x);
    progress_end();
    return s == ADIA_OK ? 0 : cli_fail(cmd, s);
}

int cli_check_params(const char *cmd, const adia_format_params *p, const adia_matrix *A)
{
    adia_status s = adia_format_params_check(p, adia_matrix_rows(A), adia_matrix_cols(A));
    return s == ADIA_OK ? 0 : cli_usage_error(cmd, "--params: %s", adia_last_error());
}

int cli_fail_params(const char *cmd, const char *params, adia_status s)
{
    if (s != ADIA_ERR_INVALID_ARG || !params) return cli_fail(cmd, s);
    return cli_usage_error(cmd, "--params %s: %s", params, adia_last_error());
}

int cli_parse_params(const char *cmd, const char *text, adia_format_params *p)
{
    adia_format_params_default(p);
    if (!text) return 0;
    adia_status s = adia_format_params_parse(p, text);
    return s == ADIA_OK ? 0 : cli_usage_error(cmd, "--params: %s", adia_last_error());
}

int cli_check_format(const char *cmd, const char *name)
{
    if (adia_format_exists(name)) return 0;
    fprintf(stderr, "adia %s: unknown format '%s'; registered formats:", cmd, name);
    for (int i = 0; i < adia_format_count(); i++) fprintf(stderr, " %s", adia_format_name_at(i));
    fprintf(stderr, "\n");
    return 2;
}

int cli_check_diagonal_format(const char *cmd, const char *option, const char *name)
{
    if (adia_format_is_diagonal(name)) return 0;
    fprintf(stderr, "adia %s: --%s %s: %s; the diagonal formats are:", cmd, option, name,
            adia_format_exists(name) ? "not a diagonal format" : "unknown format");
    for (int i = 0; i < adia_format_count(); i++)
        if (adia_format_is_diagonal(adia_format_name_at(i)))
            fprintf(stderr, " %s", adia_format_name_at(i));
    fprintf(stderr, "\n");
    return 2;
}

const char *cli_bytes_text(int64_t bytes, char *buf, size_t size)
{
    if (bytes < 0) snprintf(buf, size, "-");
    else snprintf(buf, size, "%" PRId64, bytes);
    return buf;
}

double cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---------------------------------------------------------------- JSON */

static void json_sep(cli_json *j)
{
    if (!j->first[j->depth]) fputc(',', j->out);
    j->first[j->depth] = false;
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

void json_key(cli_json *j, const char *key)
{
    json_sep(j);
    if (key) {
        json_string(j->out, key);
        fputc(':', j->out);
    }
}

static void open_level(cli_json *j, char c)
{
    fputc(c, j->out);
    if (j->depth < 15) j->depth++;
    j->first[j->depth] = true;
}

void json_begin(cli_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    open_level(j, '{');
}
void json_end(cli_json *j) { json_object_end(j); fputc('\n', j->out); }
void json_str(cli_json *j, const char *key, const char *v) { json_key(j, key); json_string(j->out, v); }
void json_num(cli_json *j, const char *key, double v)
{
    json_key(j, key);
    if (isfinite(v)) fprintf(j->out, "%.17g", v);
    else fputs("null", j->out);
}
void json_int(cli_json *j, const char *key, long long v) { json_key(j, key); fprintf(j->out, "%lld", v); }
void json_bool(cli_json *j, const char *key, bool v) { json_key(j, key); fputs(v ? "true" : "false", j->out); }
void json_object_begin(cli_json *j, const char *key) { json_key(j, key); open_level(j, '{'); }
void json_object_end(cli_json *j) { fputc('}', j->out); if (j->depth > 0) j->depth--; }
void json_array_begin(cli_json *j, const char *key) { json_key(j, key); open_level(j, '['); }
void json_array_end(cli_json *j) { fputc(']', j->out); if (j->depth > 0) j->depth--; }

double cli_solve_ms_per_iter(const adia_solve_info *in)
{
    return in->iterations ? in->time_ms / in->iterations : NAN;
}

void cli_json_solve(cli_json *j, const adia_solve_info *in, double err)
{
    json_bool(j, "converged", in->converged);
    json_int(j, "iterations", in->iterations);
    json_num(j, "residual", in->residual);
    json_num(j, "error", err);
    json_num(j, "solve_setup_ms", in->setup_ms);
    json_num(j, "time_ms", in->time_ms);
    json_num(j, "ms_per_iter", cli_solve_ms_per_iter(in));
}

void cli_print_solve_times(const adia_solve_info *in, double wall_ms)
{
    if (in->iterations == 0)   /* converged at x0, or stopped before a step (a breakdown) */
        printf("set-up %.3f ms, %s", in->setup_ms,
               in->converged ? "no iterations needed" : "no iteration completed");
    else
        printf("set-up %.3f ms, %d iteration%s in %.3f ms (%.4f ms per iteration)", in->setup_ms,
               in->iterations, in->iterations == 1 ? "" : "s", in->time_ms,
               cli_solve_ms_per_iter(in));
    printf("; wall %.3f s", wall_ms / 1e3);
}

void cli_print_solve(const adia_solve_info *in, double rtol, double err)
{
    printf("%s after %d iteration%s: residual %.3g (rtol %.3g)", in->stop, in->iterations,
           in->iterations == 1 ? "" : "s",
           in->residual, rtol);
    if (!isnan(err)) printf(", |x - x*| / |x*| = %.3g", err);
}
