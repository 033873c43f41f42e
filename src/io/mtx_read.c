/* mtx_read.c -- the data section of a Matrix Market file, parsed in
 * parallel: the text is cut into chunks at line boundaries, each OpenMP
 * thread parses its chunk into its own arrays (counting newlines, so error
 * lines stay exact once the chunks before are counted), then the chunks are joined, symmetric storage
 * expanded and the matrix built (duplicates summed). */
#include "io.h"
#include "mtx_header.h"
#include "numparse.h"
#include "triplets.h"

#include <inttypes.h>
#include <omp.h>

/* Below this many data bytes one thread parses everything. */
#define MTX_PARALLEL_MIN_BYTES (1u << 20)
#define MTX_CHUNKS_PER_THREAD 4

typedef struct mtx_chunk {
    const char *begin, *end;
    int64_t first_line;    /* 1-based line number of begin (set after parsing) */
    int64_t lines;         /* newlines in the chunk (when it parsed fully) */
    int64_t err_line;      /* line of the error, counted from begin (0-based) */
    int64_t cap, count;    /* entries allocated / parsed */
    int64_t limit;         /* most entries the chunk may hold (see alloc_chunk) */
    int32_t *row, *col;    /* 0-based; NULL for array files */
    double *val;           /* NULL for pattern files */
    adia_status status;    /* first error of this chunk */
    char msg[320];         /* the error without its "FILE:LINE: " */
} mtx_chunk;

static bool grow_chunk(mtx_chunk *c);

typedef struct mtx_ctx {
    const mtx_header *h;
    const char *name;
    int nidx, nval;        /* index and value tokens per line */
} mtx_ctx;

/* Record the chunk's error: what was wrong and the token (printable, at
 * most 40 characters) it was wrong about. */
static void chunk_fail(mtx_chunk *c, adia_status code, int64_t line,
                       const char *what, const char *tok, const char *end)
{
    const char *te = adia_token_end(tok, end);
    int n = (int)(te - tok > 40 ? 40 : te - tok);
    char shown[41];
    for (int i = 0; i < n; i++) shown[i] = tok[i] >= 32 && tok[i] < 127 ? tok[i] : '?';
    shown[n] = '\0';
    c->status = code;
    c->err_line = line;
    snprintf(c->msg, sizeof c->msg, "%s (%s)", what, n ? shown : "end of line");
}

static inline const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* One 1-based index token into a 0-based int32 below max. */
static bool parse_index(mtx_chunk *c, int64_t line, const char **p, const char *end, int32_t max,
                        const char *what, int32_t *out)
{
    const char *tok = skip_blanks(*p, end), *q = tok;
    int64_t v;
    adia_num_result r = adia_parse_i64(&q, end, &v);
    char msg[96];
    if (r == ADIA_NUM_BAD) {
        bool missing = tok == end || *tok == '\n' || *tok == '\r';
        snprintf(msg, sizeof msg, missing ? "missing %s index" : "%s index is not an integer",
                 what);
        chunk_fail(c, ADIA_ERR_PARSE, line, msg, tok, end);
        return false;
    }
    if (r != ADIA_NUM_OK || v < 1 || v > max) {
        snprintf(msg, sizeof msg, "%s index out of range 1..%" PRId32, what, max);
        chunk_fail(c, ADIA_ERR_PARSE, line, msg, tok, end);
        return false;
    }
    *out = (int32_t)(v - 1);
    *p = q;
    return true;
}

static bool parse_value(mtx_chunk *c, const mtx_ctx *x, int64_t line,
                        const char **p, const char *end, double *out)
{
    const char *tok = skip_blanks(*p, end), *q = tok;
    adia_num_result r;
    if (x->h->field == MTX_INTEGER) {
        int64_t v = 0;
        r = adia_parse_i64(&q, end, &v);
        *out = (double)v;
    } else {
        r = adia_parse_f64(&q, end, out);
    }
    if (r != ADIA_NUM_OK) {
        bool missing = tok == end || *tok == '\n' || *tok == '\r';
        chunk_fail(c, ADIA_ERR_PARSE, line,
                   missing ? "missing value"
                   : r == ADIA_NUM_RANGE ? "integer value out of range"
                   : x->h->field == MTX_INTEGER ? "value is not an integer"
                                                : "value is not a number",
                   tok, end);
        return false;
    }
    *p = q;
    return true;
}

/* Parse one entry line starting at p (not blank); returns the position of
 * its line end (LF or end) or NULL after recording an error.  The line is
 * parsed into locals first: only a valid line counts against the capacity
 * (which the chunk's bytes bound, see alloc_chunk). */
static const char *parse_entry(mtx_chunk *c, const mtx_ctx *x, int64_t line,
                               const char *p, const char *end)
{
    const mtx_header *h = x->h;
    const char *start = p;
    int32_t i = 0, j = 0;
    double v = 1.0;
    if (x->nidx && (!parse_index(c, line, &p, end, h->rows, "row", &i) ||
                    !parse_index(c, line, &p, end, h->cols, "column", &j)))
        return NULL;
    if (x->nval && !parse_value(c, x, line, &p, end, &v)) return NULL;
    p = skip_blanks(p, end);
    if (p < end && *p == '\r') p++;
    if (p < end && *p != '\n') {
        chunk_fail(c, ADIA_ERR_PARSE, line, "extra text after the entry", p, end);
        return NULL;
    }
    if (x->nidx && h->symmetry == MTX_SKEW && i == j && v != 0.0) {
        c->status = ADIA_ERR_PARSE;
        c->err_line = line;
        snprintf(c->msg, sizeof c->msg, "nonzero diagonal entry in a skew-symmetric "
                 "matrix (%.17g at %" PRId32 ",%" PRId32 ")", v, i + 1, j + 1);
        return NULL;
    }
    int64_t k = c->count;
    if (k == c->cap && c->cap < c->limit && !grow_chunk(c)) {
        chunk_fail(c, ADIA_ERR_NO_MEMORY, line, "out of memory for the entries", start, end);
        return NULL;
    }
    if (k == c->cap) {   /* only when the chunk alone exceeds the declaration */
        char what[96];
        snprintf(what, sizeof what, "too many entries: the size line declares %" PRId64,
                 h->entries);
        chunk_fail(c, ADIA_ERR_PARSE, line, what, start, end);
        return NULL;
    }
    if (x->nidx) {
        c->row[k] = i;
        c->col[k] = j;
    }
    if (x->nval) c->val[k] = v;
    c->count = k + 1;
    return p;
}

/* Parse the chunk's lines; line numbers are counted from its start (the
 * chunk does not know how many lines come before it). */
static void parse_chunk(mtx_chunk *c, const mtx_ctx *x)
{
    const char *p = c->begin, *end = c->end;
    int64_t line = 0;
    while (p < end) {
        const char *q = skip_blanks(p, end);
        if (q < end && *q == '\r' && (q + 1 == end || q[1] == '\n')) q++;
        if (q < end && *q == '%') q = memchr(q, '\n', (size_t)(end - q));
        else if (q < end && *q != '\n') q = parse_entry(c, x, line, q, end);
        if (c->status != ADIA_OK) return;
        if (!q || q == end) break;
        p = q + 1;   /* past the LF */
        line++;
    }
    c->lines = line;
}

/* Cut [b, e) into n pieces at line starts. */
static void cut_chunks(mtx_chunk *ch, int n, const char *b, const char *e)
{
    const char *start = b;
    for (int i = 0; i < n; i++) {
        const char *stop = e;
        if (i + 1 < n) {
            stop = b + (size_t)(e - b) / (size_t)n * (size_t)(i + 1);
            if (stop < start) stop = start;
            const char *nl = memchr(stop, '\n', (size_t)(e - stop));
            stop = nl ? nl + 1 : e;
        }
        ch[i].begin = start;
        ch[i].end = stop;
        start = stop;
    }
}

static void free_chunks(mtx_chunk *ch, int n)
{
    for (int i = 0; ch && i < n; i++) {
        free(ch[i].row);
        free(ch[i].col);
        free(ch[i].val);
    }
    free(ch);
}

/* Resize a chunk's arrays to cap entries (realloc is thread-safe). */
static bool resize_chunk(mtx_chunk *c, int64_t cap)
{
    size_t n = (size_t)(cap > 0 ? cap : 1);
    if (c->row) {
        int32_t *r = realloc(c->row, n * sizeof *r);
        if (r) c->row = r;
        int32_t *q = realloc(c->col, n * sizeof *q);
        if (q) c->col = q;
        if (!r || !q) return false;
    }
    if (c->val) {
        double *v = realloc(c->val, n * sizeof *v);
        if (!v) return false;
        c->val = v;
    }
    c->cap = cap;
    return true;
}

/* Half as much again, at most the limit. */
static bool grow_chunk(mtx_chunk *c)
{
    int64_t cap = c->cap + c->cap / 2 + 1024;
    return resize_chunk(c, cap < c->limit ? cap : c->limit);
}

/* Allocate a chunk's arrays.  The limit is what its bytes can hold (each
 * token takes a character and a separator) or the declared count if less,
 * so a header that declares absurd counts cannot make us allocate absurd
 * memory.  The first allocation is the chunk's share of the declared
 * entries plus a margin; parse_entry grows it up to the limit if needed. */
static adia_status alloc_chunk(mtx_chunk *c, const mtx_ctx *x, double share)
{
    int64_t bytes = (int64_t)(c->end - c->begin);
    int64_t bound = (bytes + 1) / (2 * (x->nidx + x->nval));
    c->limit = bound < x->h->entries ? bound : x->h->entries;
    double guess = share * (double)x->h->entries * 1.05 + 1024;
    c->cap = guess < (double)c->limit ? (int64_t)guess : c->limit;
    size_t n = (size_t)c->cap;
    if (x->nidx) {
        c->row = adia_alloc(n, sizeof *c->row, "Matrix Market rows");
        c->col = adia_alloc(n, sizeof *c->col, "Matrix Market columns");
        if (!c->row || !c->col) return ADIA_ERR_NO_MEMORY;
    }
    if (x->nval) {
        c->val = adia_alloc(n, sizeof *c->val, "Matrix Market values");
        if (!c->val) return ADIA_ERR_NO_MEMORY;
    }
    return ADIA_OK;
}

/* Line number of the entry with index k (0-based) inside chunk c. */
static int64_t entry_line(const mtx_chunk *c, int64_t k)
{
    const char *p = c->begin, *end = c->end;
    int64_t line = c->first_line;
    while (p < end) {
        const char *q = skip_blanks(p, end);
        if (q < end && *q == '\r') q++;
        if (q < end && *q != '\n' && *q != '%' && k-- == 0) return line;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        p = nl + 1;
        line++;
    }
    return line;
}

/* Parse all chunks in parallel, then check errors in file order (each
 * chunk's first line is known once the chunks before it are counted) and
 * the entry count against the declaration. */
static adia_status parse_all(mtx_chunk *ch, int n, int threads, const mtx_ctx *x,
                             const char *text, size_t len, int64_t *total)
{
    const mtx_header *h = x->h;
    cut_chunks(ch, n, text + h->data, text + len);
    double all = (double)(len - h->data);
    for (int i = 0; i < n; i++)
        ADIA_TRY(alloc_chunk(&ch[i], x, all > 0 ? (double)(ch[i].end - ch[i].begin) / all : 1.0));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int i = 0; i < n; i++) parse_chunk(&ch[i], x);
    int64_t line = h->data_line;
    *total = 0;
    for (int i = 0; i < n; i++) {
        ch[i].first_line = line;
        if (ch[i].status != ADIA_OK)
            return adia_error(ch[i].status, "%s:%" PRId64 ": %s", x->name,
                              line + ch[i].err_line, ch[i].msg);
        if (*total + ch[i].count > h->entries)
            return adia_error(ADIA_ERR_PARSE, "%s:%" PRId64 ": too many entries: the "
                              "size line declares %" PRId64, x->name,
                              entry_line(&ch[i], h->entries - *total), h->entries);
        *total += ch[i].count;
        line += ch[i].lines;
    }
    if (*total < h->entries) {
        int64_t last = line - (len > 0 && text[len - 1] == '\n' ? 1 : 0);
        return adia_error(ADIA_ERR_PARSE, "%s:%" PRId64 ": file ends after %" PRId64
                          " of %" PRId64 " entries (truncated?)", x->name,
                          last < 1 ? 1 : last, *total, h->entries);
    }
    return ADIA_OK;
}

/* Array files: column-major values, for symmetric storage the lower
 * triangle (skew: without the diagonal); zeros are not stored.  Turned into
 * one triplet block. */
static adia_status array_triplets(const mtx_chunk *ch, int n, const mtx_header *h,
                                  int64_t total, int32_t **r, int32_t **c, double **v,
                                  adia_triplets *t)
{
    *r = adia_alloc((size_t)total, sizeof **r, "array rows");
    *c = adia_alloc((size_t)total, sizeof **c, "array columns");
    *v = adia_alloc((size_t)total, sizeof **v, "array values");
    if (!*r || !*c || !*v) return ADIA_ERR_NO_MEMORY;
    int32_t i = h->symmetry == MTX_SKEW ? 1 : 0, j = 0;
    int64_t w = 0;
    for (int b = 0; b < n; b++)
        for (int64_t k = 0; k < ch[b].count; k++) {
            if (ch[b].val[k] != 0.0) {
                (*r)[w] = i;
                (*c)[w] = j;
                (*v)[w++] = ch[b].val[k];
            }
            if (++i == h->rows) {
                j++;
                i = h->symmetry == MTX_GENERAL ? 0 : h->symmetry == MTX_SYMMETRIC ? j : j + 1;
            }
        }
    *t = (adia_triplets){w, *r, *c, *v};
    return ADIA_OK;
}

/* Join the chunks and build the matrix (symmetric storage expanded). */
static adia_status assemble(const mtx_chunk *ch, int n, const mtx_header *h,
                            int64_t total, adia_matrix **out)
{
    int mirror = h->symmetry == MTX_GENERAL ? 0 : h->symmetry == MTX_SYMMETRIC ? 1 : -1;
    if (h->format == MTX_ARRAY) {
        int32_t *r = NULL, *c = NULL;
        double *v = NULL;
        adia_triplets t;
        adia_status s = array_triplets(ch, n, h, total, &r, &c, &v, &t);
        if (s == ADIA_OK) s = adia_io_build_csr(h->rows, h->cols, &t, 1, mirror, out);
        free(r);
        free(c);
        free(v);
        return s;
    }
    adia_triplets *t = adia_alloc((size_t)n, sizeof *t, "triplet blocks");
    if (!t) return ADIA_ERR_NO_MEMORY;
    for (int b = 0; b < n; b++) t[b] = (adia_triplets){ch[b].count, ch[b].row, ch[b].col, ch[b].val};
    adia_status s = adia_io_build_csr(h->rows, h->cols, t, n, mirror, out);
    free(t);
    return s;
}

static adia_status parse_text(const char *text, size_t len, const char *name,
                              adia_matrix **out)
{
    mtx_header h;
    ADIA_TRY(adia_mtx_parse_header(text, len, name, &h));
    mtx_ctx x = {&h, name, h.format == MTX_COORDINATE ? 2 : 0,
                 h.field == MTX_PATTERN ? 0 : 1};
    size_t bytes = len - h.data;
    /* A few chunks per thread, handed out dynamically: a thread that gets
     * less CPU (a busy machine) does not hold the others up. */
    int threads = bytes < MTX_PARALLEL_MIN_BYTES ? 1 : omp_get_max_threads();
    if (threads < 1) threads = 1;
    int n = threads == 1 ? 1 : threads * MTX_CHUNKS_PER_THREAD;
    mtx_chunk *ch = adia_calloc((size_t)n, sizeof *ch, "parse chunks");
    if (!ch) return ADIA_ERR_NO_MEMORY;
    int64_t total = 0;
    adia_status s = parse_all(ch, n, threads, &x, text, len, &total);
    if (s == ADIA_OK) s = assemble(ch, n, &h, total, out);
    free_chunks(ch, n);
    return s;
}

adia_status adia_matrix_parse_mtx(const char *text, size_t len, const char *name,
                                  adia_matrix **out)
{
    if (!out) return adia_error(ADIA_ERR_INVALID_ARG, "adia_matrix_parse_mtx: out is NULL");
    *out = NULL;
    if (!text && len > 0)
        return adia_error(ADIA_ERR_INVALID_ARG, "adia_matrix_parse_mtx: text is NULL");
    if (!name) name = "<memory>";
    ADIA_TRY(parse_text(text ? text : "", len, name, out));
    char base[128];
    adia_io_basename(name, base, sizeof base);
    return adia_matrix_set_name(*out, base);
}
