/* plan_io.c -- a plan as text: adia_plan_explain (what was chosen and why)
 * and adia_plan_save / adia_plan_load (the choice, so that a second run
 * skips analysis and choosing).
 *
 * Plan file (text, one "key value" per line, any order after the first):
 *   adia-plan 2                    (1: the same keys, the structure's
 *                                   hash of adia_plan's first version)
 *   format dia
 *   vtype double
 *   device 0
 *   chooser model
 *   calls 1000
 *   shape ROWS COLS NNZ
 *   hash 0123456789abcdef          (structure of the matrix, hex)
 *   params B=256,hack=128          (only the parameters that were set)
 * Read strictly: every key exactly once, each value whole (blanks may end
 * it, nothing else), numbers in range (no 32-bit wrap of a shape).  A
 * loaded plan builds the file's format or fails: no fallback to CSR.
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_internal.h"
#include "io/outfile.h"
#ifdef ADIA_HAVE_CUDA
#include "cuda/codegen.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ explain */

typedef struct text {
    char *buf;
    size_t len, used;
} text;

static void put(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(text *t, const char *fmt, ...)
{
    if (t->used + 1 >= t->len) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
    va_end(ap);
    if (n > 0) t->used += (size_t)n < t->len - t->used ? (size_t)n : t->len - t->used - 1;
}

static const adia_plan_candidate *candidate(const adia_plan *P, const char *name, int *at)
{
    for (int i = 0; i < P->n_cand; i++)
        if (!strcmp(P->cand[i].format, name)) {
            if (at) *at = i;
            return &P->cand[i];
        }
    return NULL;
}

/* Why this chooser picked this format, in one line. */
static void explain_reason(const adia_plan *P, text *t)
{
    const char *name = adia_format_name(P->F);
    if (P->loaded) {
        put(t, "why: loaded from %s (no analysis, no choice)\n", P->loaded_from);
        return;
    }
    if (P->from_device) {
        if (P->chooser == ADIA_CHOOSE_MEASURE && !isnan(P->measured_ms))
            put(t, "why: fastest measured of the formats built on the GPU (SpMV + build / %lld "
                "calls): %s %.4f ms\n", (long long)P->calls, name, P->measured_ms);
        else if (P->chooser == ADIA_CHOOSE_FIXED)
            put(t, "why: the caller fixed the format (built on the GPU)\n");
        else
            put(t, "why: the GPU build's count of diagonals (see the notes)\n");
        return;
    }
    switch (P->chooser) {
    case ADIA_CHOOSE_FIXED: put(t, "why: the caller fixed the format\n"); break;
    case ADIA_CHOOSE_RULES:
        put(t, "why: search engine: type %s -> %s\n", adia_matrix_type_name(P->f.type),
            P->f.format);
        break;
    case ADIA_CHOOSE_MODEL:
        put(t, "why: least predicted time over %lld calls (conversion + calls x SpMV)\n",
            (long long)P->calls);
        break;
    case ADIA_CHOOSE_MEASURE:
        put(t, "why: fastest measured of the model's best %d and CSR%s (SpMV + predicted build / %lld "
            "calls): %s %.4f ms\n", ADIA_PLAN_MEASURE_TOP,
            P->device ? ", each with its fastest kernel" : "", (long long)P->calls, name,
            P->measured_ms);
        break;
    }
}

/* After how many calls the chosen format's extra conversion is paid back
 * by its faster SpMV, against CSR. */
static void explain_break_even(const adia_plan *P, text *t)
{
    const adia_plan_candidate *c = candidate(P, adia_format_name(P->F), NULL),
                              *csr = candidate(P, "csr", NULL);
    if (!c || !csr || c == csr) return;
    double gain = csr->spmv_ms - c->spmv_ms, cost = c->convert_ms - csr->convert_ms;
    if (gain <= 0)
        put(t, "break-even vs csr: never (predicted SpMV not faster)\n");
    else
        put(t, "break-even vs csr: %.0f calls (%.4f ms more conversion, %.5f ms less per SpMV)\n",
            cost > 0 ? ceil(cost / gain) : 0.0, cost, gain);
}

adia_status adia_plan_explain(const adia_plan *plan, char *buf, size_t len)
{
    if (!plan || plan->magic != ADIA_MAGIC_PLAN)
        return adia__error(ADIA_ERR_INVALID_HANDLE,
                          "adia_plan_explain: not a live plan handle (NULL, destroyed or uninitialised)");
    if (!buf || len == 0) return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_explain: no buffer");
    const adia_plan *P = plan;
    text t = {buf, len, 0};
    buf[0] = '\0';
    /* a matrix without a name (made from arrays) is said to be unnamed */
    put(&t, "plan: %s (%d x %d, %lld nonzeros): format %s, %s, %s, chooser %s\n",
        P->matrix_name[0] ? P->matrix_name : "unnamed matrix", (int)P->rows, (int)P->cols, (long long)P->nnz, adia_format_name(P->F),
        adia_value_type_name(P->vtype), P->device ? "gpu" : "cpu", adia_chooser_name(P->chooser));
    explain_reason(P, &t);
    if (P->have_features)
        put(&t, "features: type %s (search engine: %s), %lld diagonals, p_offset %.3g, "
            "p_zero %.3g, rows %d..%d entries; analysis %.3f ms\n",
            adia_matrix_type_name(P->f.type), P->f.format, (long long)P->f.n_diag,
            P->f.p_offset, P->f.p_zero, (int)P->f.row_min, (int)P->f.row_max, P->analyze_ms);
    if (P->n_cand > 0) {
        put(&t, "model: bandwidth %.1f GB/s (%s), %lld expected calls\n", P->bandwidth_gbs,
            !P->bandwidth_measured ? "from the hints" : P->bandwidth_from ? P->bandwidth_from
                                   : "measured", (long long)P->calls);
        put(&t, "  %-7s %12s %6s %11s %11s %12s %11s\n", "format", "bytes/SpMV", "eff",
            "SpMV ms", "convert ms", "total ms", "measured");
        for (int i = 0; i < P->n_cand; i++) {
            const adia_plan_candidate *c = &P->cand[i];
            char meas[32] = "-";
            if (!isnan(P->cand_measured_ms[i]))
                snprintf(meas, sizeof meas, "%.4f", P->cand_measured_ms[i]);
            put(&t, "  %-7s %12lld%s %5.2f %11.5f %11.4f %12.4f %11s%s\n", c->format,
                (long long)c->bytes, c->exact ? " " : "~", c->efficiency, c->spmv_ms,
                c->convert_ms, c->total_ms, meas,
                !strcmp(c->format, adia_format_name(P->F)) ? "  <- chosen" : "");
        }
        put(&t, "  (~ = estimated bytes; GPU efficiencies and latencies fitted on an H200, CPU ones\n"
            "   measured on this machine beyond the caches, else assumed: plan_cpu.c)\n");
        explain_break_even(P, &t);
    }
    put(&t, "build: %.3f ms (%lld bytes stored)\n", P->build_ms,
        (long long)adia_format_storage_bytes(P->F));
    if (P->from_device)   /* one line, key value pairs: bench/setup-e2e.py reads it */
        put(&t, "setup (ms): upload %.3f (%lld bytes, %s), analysis %.3f, build %.3f, measure "
            "%.3f, compile %.3f\n", P->upload_ms, (long long)P->upload_bytes,
            P->upload_bytes ? P->upload_how : "already on the device", P->analyze_ms,
            P->build_ms, P->measure_ms, P->compile_ms);
#ifdef ADIA_HAVE_CUDA
    /* now, not at planning: a background compile may have arrived since */
    const char *kernel = P->device ? adia__gpu_diag_codegen_state(P->F) : NULL;
    if (kernel) put(&t, "kernel: %s\n", kernel);
    else if (P->device) put(&t, "kernel: %s\n", adia_gpu_kernel_name(adia_format_kernel(P->F)));
#endif
    if (P->device) {
        adia_gpu_kernel k = adia_format_kernel(P->F);
        put(&t, "reproducible: %s\n", !adia_gpu_kernel_is_deterministic(k)
            ? "no: the kernel's sums end in atomics, y may differ in its last bits between runs"
            : P->nondeterministic ? "yes (non-deterministic kernels were allowed, none chosen)"
                                  : "yes (bitwise, the default)");
    }
    if (P->updates)   /* adia_plan_update_values */
        put(&t, "values updated: %lld times, the last in %.3f ms\n", (long long)P->updates,
            P->update_ms);
    if (P->notes[0]) put(&t, "warnings:\n%s", P->notes);
    return ADIA_OK;
}

/* --------------------------------------------------------- save / load */

/* Parameter keys as adia_format_params_parse reads them. */
static const struct { const char *key; size_t at; } param_keys[] = {
    {"B", offsetof(adia_format_params, block_rows)}, {"eta", offsetof(adia_format_params, eta)},
    {"hack", offsetof(adia_format_params, hack)}, {"seg", offsetof(adia_format_params, segment)},
    {"width", offsetof(adia_format_params, ell_width)}, {"C", offsetof(adia_format_params, sell_c)},
    {"sigma", offsetof(adia_format_params, sell_sigma)}, {"r", offsetof(adia_format_params, bcsr_r)},
    {"c", offsetof(adia_format_params, bcsr_c)}, {"group", offsetof(adia_format_params, row_group)},
    {"strip", offsetof(adia_format_params, strip)}, {"qt", offsetof(adia_format_params, qt_size)},
    {"streams", offsetof(adia_format_params, streams)}, {"pad", offsetof(adia_format_params, pad)},
};

/* "params k=v,..." with the parameters that were set (errors stick in out). */
static void write_params(adia_outfile *out, const adia_format_params *p)
{
    const char *sep = "";
    adia__outfile_printf(out, "params ");
    for (size_t i = 0; i < sizeof param_keys / sizeof *param_keys; i++) {
        int32_t v;
        memcpy(&v, (const char *)p + param_keys[i].at, sizeof v);
        if (v <= 0) continue;
        adia__outfile_printf(out, "%s%s=%" PRId32, sep, param_keys[i].key, v);
        sep = ",";
    }
    adia__outfile_printf(out, "\n");
}

/* The structure hash of the matrix F holds (exact: explicit zeros too),
 * for a plan made without a host matrix. */
static adia_status format_hash(adia_format *F, uint64_t *hash)
{
    adia_matrix *A = NULL;
    ADIA_TRY(adia_format_to_matrix(F, &A));
    *hash = adia__plan_structure_hash(&A->csr);
    adia_matrix_destroy(A);
    return ADIA_OK;
}

/* A plan replaces only a plan: an existing regular file that does not
 * start with "adia-plan " is someone's data -- Plan.save("A.mtx") with the
 * matrix the plan was made from -- and stays.  An empty file, a device
 * (/dev/null) or a pipe may be written. */
static adia_status check_replaceable(const char *path)
{
    static const char head[] = "adia-plan ";
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return ADIA_OK;
    char first[32] = "";
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(first, 1, sizeof first - 1, f) : 0;
    if (f) fclose(f);
    if (!f)
        return adia__error(ADIA_ERR_IO, "adia_plan_save: %s exists and cannot be read to check "
                          "that it is a plan file (%s); a plan replaces only a plan",
                          path, strerror(errno));
    if (n >= sizeof head - 1 && !memcmp(first, head, sizeof head - 1)) return ADIA_OK;
    for (size_t i = 0; i < n; i++)   /* printable in the message */
        if (first[i] < 32 || first[i] > 126) first[i] = i + 1 < n ? '?' : '\0';
    first[n < 24 ? n : 24] = '\0';
    return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_save: %s exists and is not an adia plan "
                      "file (it starts with '%s'): a plan replaces only a plan, never other "
                      "data such as the matrix; save it under another name", path, first);
}

adia_status adia_plan_save(const adia_plan *plan, const char *path)
{
    if (!plan || plan->magic != ADIA_MAGIC_PLAN)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "adia_plan_save: not a live plan handle");
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_save: path is NULL");
    ADIA_TRY(check_replaceable(path));
    uint64_t hash = plan->hash;
    if (!hash) ADIA_TRY(format_hash(plan->F, &hash));   /* a device CSR's plan */
    adia_outfile out;
    ADIA_TRY(adia__outfile_open(&out, path, false));
    adia__outfile_printf(&out, "adia-plan 2\nformat %s\nvtype %s\ndevice %d\nchooser %s\n"
                        "calls %lld\nshape %d %d %lld\nhash %016" PRIx64 "\n",
                        adia_format_name(plan->F), adia_value_type_name(plan->vtype),
                        plan->device, adia_chooser_name(plan->chooser), (long long)plan->calls,
                        (int)plan->rows, (int)plan->cols, (long long)plan->nnz, hash);
    write_params(&out, &plan->params);
    return adia__outfile_commit(&out);
}

/* What a plan file says. */
typedef struct plan_file {
    char format[32], vtype[16], chooser[16], params[256];
    int version;             /* 1 or 2: which structure hash */
    int device;
    long long calls, rows, cols, nnz;
    uint64_t hash;
    unsigned seen;           /* bit per key */
} plan_file;

static const char *const file_keys[] = {"format", "vtype", "device", "chooser", "calls",
                                        "shape", "hash", "params"};
/* What each key's value must be, for the messages. */
static const char *const file_values[] = {
    "a format name", "double or float", "0 (CPU) or 1 (GPU)", "a chooser name",
    "a whole number of expected calls, at least 1",
    "ROWS COLS NNZ: rows and columns 0..2147483647, nnz at most rows x cols",
    "1 to 16 hexadecimal digits", "k=v,... without blanks, or nothing"};
#define N_FILE_KEYS 8

/* The value parsers take the whole value: blanks may end it, nothing else
 * (sscanf took "1000junk" as 1000 and "4294967696" as 400). */
static const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* One word, shorter than size, and nothing after it. */
static bool parse_word(const char *v, char *out, size_t size)
{
    size_t n = strcspn(v, " \t");
    if (n == 0 || n >= size || *skip_blanks(v + n)) return false;
    memcpy(out, v, n);
    out[n] = '\0';
    return true;
}

/* A decimal integer in [lo, hi] (digits only, no sign, no blanks before);
 * *end: after it. */
static bool parse_int(const char *v, long long lo, long long hi, long long *out, const char **end)
{
    if (*v < '0' || *v > '9') return false;
    char *e;
    errno = 0;
    long long x = strtoll(v, &e, 10);
    if (errno || x < lo || x > hi) return false;
    *out = x;
    *end = e;
    return true;
}

static bool parse_whole_int(const char *v, long long lo, long long hi, long long *out)
{
    const char *e;
    return parse_int(v, lo, hi, out, &e) && !*skip_blanks(e);
}

static bool parse_shape(const char *v, plan_file *pf)
{
    const char *e;
    long long cells;
    if (!parse_int(v, 0, INT32_MAX, &pf->rows, &e) || (*e != ' ' && *e != '\t') ||
        !parse_int(skip_blanks(e), 0, INT32_MAX, &pf->cols, &e) || (*e != ' ' && *e != '\t') ||
        !parse_int(skip_blanks(e), 0, INT64_MAX, &pf->nnz, &e) || *skip_blanks(e))
        return false;
    cells = pf->rows * pf->cols;   /* < 2^62 */
    return pf->nnz <= cells;
}

static bool parse_hash(const char *v, uint64_t *hash)
{
    size_t n = strspn(v, "0123456789abcdefABCDEF");
    if (n == 0 || n > 16 || *skip_blanks(v + n)) return false;
    *hash = strtoull(v, NULL, 16);
    return true;
}

/* One "key value" line into pf: ADIA_OK, or ADIA_ERR_PARSE naming the
 * line, the key and what its value must be. */
static adia_status parse_line(const char *path, int lineno, const char *line, plan_file *pf)
{
    size_t klen = strcspn(line, " \t");
    int k = 0;
    while (k < N_FILE_KEYS && (strlen(file_keys[k]) != klen || strncmp(line, file_keys[k], klen)))
        k++;
    if (k == N_FILE_KEYS)
        return adia__error(ADIA_ERR_PARSE, "%s:%d: bad plan line '%.60s' (keys: format vtype "
                          "device chooser calls shape hash params)", path, lineno, line);
    if (pf->seen & (1u << k))
        return adia__error(ADIA_ERR_PARSE, "%s:%d: a second '%s' line", path, lineno,
                          file_keys[k]);
    const char *v = skip_blanks(line + klen);
    long long device = 0;
    bool ok = false;
    switch (k) {
    case 0: ok = parse_word(v, pf->format, sizeof pf->format); break;
    case 1: ok = parse_word(v, pf->vtype, sizeof pf->vtype); break;
    case 2: ok = parse_whole_int(v, 0, 1, &device); pf->device = (int)device; break;
    case 3: ok = parse_word(v, pf->chooser, sizeof pf->chooser); break;
    case 4: ok = parse_whole_int(v, 1, INT64_MAX, &pf->calls); break;
    case 5: ok = parse_shape(v, pf); break;
    case 6: ok = parse_hash(v, &pf->hash); break;
    case 7: ok = !*v || parse_word(v, pf->params, sizeof pf->params); break;   /* may be empty */
    }
    if (!ok)
        return adia__error(ADIA_ERR_PARSE, "%s:%d: bad %s '%.60s': expected %s", path, lineno,
                          file_keys[k], v, file_values[k]);
    pf->seen |= 1u << k;
    return ADIA_OK;
}

static adia_status read_lines(const char *path, FILE *f, plan_file *pf)
{
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strcspn(line, "\r\n");
        if (!line[n] && !feof(f))
            return adia__error(ADIA_ERR_PARSE, "%s:%d: line longer than %zu characters", path,
                              lineno, sizeof line - 2);
        line[n] = '\0';
        if (lineno == 1) {
            pf->version = !strcmp(line, "adia-plan 1") ? 1 : !strcmp(line, "adia-plan 2") ? 2 : 0;
            if (!pf->version)
                return adia__error(ADIA_ERR_PARSE, "%s:1: not an adia plan file (expected "
                                  "'adia-plan 1' or 'adia-plan 2', got '%.40s')", path, line);
            continue;
        }
        ADIA_TRY(parse_line(path, lineno, line, pf));
    }
    if (ferror(f)) return adia__error(ADIA_ERR_IO, "%s: reading the plan: %s", path, strerror(errno));
    if (lineno == 0) return adia__error(ADIA_ERR_PARSE, "%s: empty plan file", path);
    for (int k = 0; k < N_FILE_KEYS; k++)
        if (!(pf->seen & (1u << k)))
            return adia__error(ADIA_ERR_PARSE, "%s: plan file lacks the '%s' line", path,
                              file_keys[k]);
    return ADIA_OK;
}

static adia_status read_plan_file(const char *path, plan_file *pf)
{
    memset(pf, 0, sizeof *pf);
    FILE *f = fopen(path, "r");
    if (!f) return adia__error(ADIA_ERR_IO, "%s: cannot open the plan: %s", path, strerror(errno));
    struct stat st;
    adia_status s = ADIA_OK;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))   /* fopen takes a folder */
        s = adia__error(ADIA_ERR_IO, "%s: is a directory, not a plan file", path);
    if (s == ADIA_OK) s = read_lines(path, f, pf);
    fclose(f);
    return s;
}

/* The saved choice as hints for adia__plan_build (no analysis). */
static adia_status file_hints(const char *path, const plan_file *pf, plan_hints *h,
                              adia_chooser *chooser)
{
    memset(h, 0, sizeof *h);
    if (!adia_format_exists(pf->format))
        return adia__error(ADIA_ERR_PARSE, "%s: unknown format '%s'", path, pf->format);
    h->format = pf->format;
    h->chooser = ADIA_CHOOSE_FIXED;
    if (!strcmp(pf->vtype, "double")) h->vtype = ADIA_DOUBLE;
    else if (!strcmp(pf->vtype, "float")) h->vtype = ADIA_FLOAT;
    else return adia__error(ADIA_ERR_PARSE, "%s: unknown value type '%s'", path, pf->vtype);
    *chooser = (adia_chooser)-1;
    for (int c = ADIA_CHOOSE_MODEL; c <= ADIA_CHOOSE_FIXED; c++)
        if (!strcmp(pf->chooser, adia_chooser_name((adia_chooser)c))) *chooser = (adia_chooser)c;
    if ((int)*chooser < 0)
        return adia__error(ADIA_ERR_PARSE, "%s: unknown chooser '%s'", path, pf->chooser);
    h->calls = pf->calls;   /* >= 1: parse_line */
    h->strict = 1;          /* the file's format or an error, never a fallback */
    h->budget = adia_memory_budget();   /* as adia_plan_create: storage within the budget */
    if (pf->params[0] && adia_format_params_parse(&h->params, pf->params) != ADIA_OK)
        return adia__error(ADIA_ERR_PARSE, "%s: bad params '%s': %s", path, pf->params,
                          adia_last_error());
    int n = 0;
    ADIA_TRY(adia_gpu_device_count(&n));
    if (pf->device == 1 && n == 0)
        return adia__error(ADIA_ERR_NO_DEVICE, "%s: the plan is for a GPU, and no CUDA device "
                          "is available here", path);
    h->device = pf->device;
    return ADIA_OK;
}

adia_status adia_plan_load(const adia_matrix *A, const char *path, adia_plan **plan)
{
    if (!plan || !path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_load: NULL argument");
    *plan = NULL;
    ADIA_TRY(adia__matrix_check_handle(A, "adia_plan_load"));
    plan_file pf;
    plan_hints h;
    adia_chooser chooser = ADIA_CHOOSE_FIXED;
    ADIA_TRY(read_plan_file(path, &pf));
    ADIA_TRY(file_hints(path, &pf, &h, &chooser));
    bool same_shape = pf.rows == A->csr.rows && pf.cols == A->csr.cols && pf.nnz == A->csr.nnz;
    if (!same_shape || pf.hash != (pf.version == 1 ? adia__plan_structure_hash_v1(&A->csr)
                                                   : adia__plan_structure_hash(&A->csr)))
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "%s: the plan was made for another matrix (%lld x %lld, %lld nonzeros, "
                          "structure hash %016" PRIx64 "; this one is %d x %d, %lld nonzeros%s)",
                          path, pf.rows, pf.cols, pf.nnz, pf.hash, (int)A->csr.rows,
                          (int)A->csr.cols, (long long)A->csr.nnz,
                          same_shape ? ", another structure" : "");
    adia_status s = adia__plan_build(A, &h, 0, plan);
    if (s != ADIA_OK) {   /* no fallback: the file named this format */
        char why[640];
        snprintf(why, sizeof why, "%s", adia_last_error());
        return adia__error(s, "%s: the plan's format %s cannot be used for this matrix: %s", path,
                          pf.format, why);
    }
    (*plan)->chooser = chooser;
    (*plan)->loaded = 1;
    snprintf((*plan)->loaded_from, sizeof (*plan)->loaded_from, "%s", path);
    return ADIA_OK;
}
