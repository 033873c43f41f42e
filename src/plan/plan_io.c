/* plan_io.c -- a plan as text: adia_plan_explain (what was chosen and why)
 * and adia_plan_save / adia_plan_load (the choice, so that a second run
 * skips analysis and choosing).
 *
 * Plan file (text, one "key value" per line, any order after the first):
 *   adia-plan 1
 *   format dia
 *   vtype double
 *   device 0
 *   chooser model
 *   calls 1000
 *   shape ROWS COLS NNZ
 *   hash 0123456789abcdef          (structure of the matrix, hex)
 *   params B=256,hack=128          (only the parameters that were set)
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_internal.h"
#include "io/outfile.h"

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
        put(t, "why: fastest measured of the model's best %d and CSR%s (SpMV + build / %lld "
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
    put(&t, "plan: %s (%d x %d, %lld nonzeros): format %s, %s, %s, chooser %s\n",
        P->matrix_name, (int)P->rows, (int)P->cols, (long long)P->nnz, adia_format_name(P->F),
        adia_value_type_name(P->vtype), P->device ? "gpu" : "cpu", adia_chooser_name(P->chooser));
    explain_reason(P, &t);
    if (P->have_features)
        put(&t, "features: type %s (search engine: %s), %lld diagonals, p_offset %.3g, "
            "p_zero %.3g, rows %d..%d entries; analysis %.3f ms\n",
            adia_matrix_type_name(P->f.type), P->f.format, (long long)P->f.n_diag,
            P->f.p_offset, P->f.p_zero, (int)P->f.row_min, (int)P->f.row_max, P->analyze_ms);
    if (P->n_cand > 0) {
        put(&t, "model: bandwidth %.1f GB/s (%s), %lld expected calls\n", P->bandwidth_gbs,
            P->bandwidth_measured ? "measured" : "from the hints", (long long)P->calls);
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
    adia__outfile_printf(&out, "adia-plan 1\nformat %s\nvtype %s\ndevice %d\nchooser %s\n"
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
    int device;
    long long calls, nnz;
    int rows, cols;
    uint64_t hash;
    unsigned seen;           /* bit per key */
} plan_file;

static const char *const file_keys[] = {"format", "vtype", "device", "chooser", "calls",
                                        "shape", "hash", "params"};
#define N_FILE_KEYS 8

/* One "key value" line into pf; returns the key's bit, 0 if not understood. */
static unsigned parse_line(const char *line, plan_file *pf)
{
    char key[16];
    int at = 0;
    if (sscanf(line, "%15s %n", key, &at) != 1) return 0;
    const char *v = line + at;
    int k = 0;
    while (k < N_FILE_KEYS && strcmp(key, file_keys[k])) k++;
    int ok = 0;
    switch (k) {
    case 0: ok = sscanf(v, "%31s", pf->format) == 1; break;
    case 1: ok = sscanf(v, "%15s", pf->vtype) == 1; break;
    case 2: ok = sscanf(v, "%d", &pf->device) == 1 && (pf->device == 0 || pf->device == 1); break;
    case 3: ok = sscanf(v, "%15s", pf->chooser) == 1; break;
    case 4: ok = sscanf(v, "%lld", &pf->calls) == 1; break;
    case 5: ok = sscanf(v, "%d %d %lld", &pf->rows, &pf->cols, &pf->nnz) == 3; break;
    case 6: ok = sscanf(v, "%" SCNx64, &pf->hash) == 1; break;
    case 7: ok = sscanf(v, "%255s", pf->params) <= 1; break;   /* may be empty */
    default: return 0;
    }
    return ok ? 1u << k : 0;
}

static adia_status read_plan_file(const char *path, plan_file *pf)
{
    memset(pf, 0, sizeof *pf);
    FILE *f = fopen(path, "r");
    if (!f) return adia__error(ADIA_ERR_IO, "%s: cannot open the plan: %s", path, strerror(errno));
    char line[512];
    int lineno = 0;
    adia_status s = ADIA_OK;
    while (s == ADIA_OK && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (lineno == 1) {
            if (strcmp(line, "adia-plan 1"))
                s = adia__error(ADIA_ERR_PARSE, "%s:1: not an adia plan file (expected "
                               "'adia-plan 1', got '%.40s')", path, line);
            continue;
        }
        unsigned bit = parse_line(line, pf);
        if (!bit) s = adia__error(ADIA_ERR_PARSE, "%s:%d: bad plan line '%.60s'", path, lineno, line);
        pf->seen |= bit;
    }
    if (s == ADIA_OK && lineno == 0)
        s = adia__error(ADIA_ERR_PARSE, "%s: empty plan file", path);
    for (int k = 0; s == ADIA_OK && k < N_FILE_KEYS; k++)
        if (!(pf->seen & (1u << k)))
            s = adia__error(ADIA_ERR_PARSE, "%s: plan file lacks the '%s' line", path, file_keys[k]);
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
    h->calls = pf->calls > 0 ? pf->calls : 1;
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
    if (pf.rows != A->csr.rows || pf.cols != A->csr.cols || pf.nnz != A->csr.nnz ||
        pf.hash != adia__plan_structure_hash(&A->csr))
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "%s: the plan was made for another matrix (%d x %d, %lld nonzeros, "
                          "structure hash %016" PRIx64 "; this one is %d x %d, %lld nonzeros%s)",
                          path, pf.rows, pf.cols, pf.nnz, pf.hash, (int)A->csr.rows,
                          (int)A->csr.cols, (long long)A->csr.nnz,
                          pf.rows == A->csr.rows && pf.cols == A->csr.cols && pf.nnz == A->csr.nnz
                              ? ", another structure" : "");
    ADIA_TRY(adia__plan_build(A, &h, 0, plan));
    (*plan)->chooser = chooser;
    (*plan)->loaded = 1;
    snprintf((*plan)->loaded_from, sizeof (*plan)->loaded_from, "%s", path);
    return ADIA_OK;
}
