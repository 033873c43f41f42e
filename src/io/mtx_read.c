/* mtx_read.c -- the data section of a Matrix Market file, read chunk by
 * chunk as adia_lines hands it out (the file is never held whole): each
 * chunk is cut into blocks at line starts, each OpenMP thread parses its
 * blocks into their own arrays (counting newlines, so error lines stay
 * exact once the blocks before are counted) while one thread reads the
 * next chunk, then errors are checked in file order.  A general file that
 * comes row by row goes into its CSR matrix block by block (mtx_csr.h),
 * the blocks' arrays reused every other chunk; otherwise the blocks are
 * kept and joined at the end: symmetric storage expanded and the matrix
 * built (duplicates summed). */
#include "io.h"
#include "mtx_read.h"
#include "numparse.h"
#include "triplets.h"

#include <inttypes.h>
#include <math.h>
#include <omp.h>

/* Below this many bytes a chunk is one block parsed by one thread. */
#define MTX_PARALLEL_MIN_BYTES (1u << 20)
#define MTX_BLOCKS_PER_THREAD 4

typedef struct mtx_ctx {
    const mtx_header *h;
    const char *name;
    int nidx, nval;        /* index and value tokens per line */
    int64_t remaining;     /* entries the declaration still allows */
    double density;        /* entries kept per byte so far (0: none seen yet) */
    int32_t lo, hi;        /* rows kept: [lo, hi) */
    bool mirrored;         /* symmetric storage: (i, j) also stands for (j, i) */
    bool scan;             /* the matrix is being built: blocks are scanned (mtx_csr.h) */
} mtx_ctx;

static bool grow_block(mtx_block *c);
static bool skip_line(mtx_block *c, int64_t line);

/* Is entry (i, j) of a kept row, or (symmetric storage) is its mirror? */
static inline bool keeps(const mtx_ctx *x, int32_t i, int32_t j)
{
    return (i >= x->lo && i < x->hi) || (x->mirrored && j >= x->lo && j < x->hi);
}

/* Record the block's error: what was wrong and the token (printable, at
 * most 40 characters) it was wrong about. */
static void block_fail(mtx_block *c, adia_status code, int64_t line,
                       const char *what, const char *tok, const char *end)
{
    const char *te = adia__token_end(tok, end);
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

/* One 1-based index token into a 0-based int32 below max.  Indices of up
 * to seven digits (rows and columns below ten million) are read eight
 * characters at once; the others, and every error, take the general
 * integer parser. */
static inline bool parse_index(mtx_block *c, int64_t line, const char **p, const char *end,
                               int32_t max, const char *what, int32_t *out)
{
    const char *tok = skip_blanks(*p, end), *q = tok;
    if (end - tok >= 8) {
        uint64_t x;
        memcpy(&x, tok, 8);
        int n = adia_swar_digits(x);
        if (n > 0 && n < 8 && adia_num_delim(tok[n])) {
            uint64_t v = adia_swar_prefix_value(x, n);
            if (v >= 1 && v <= (uint64_t)max) {
                *out = (int32_t)(v - 1);
                *p = tok + n;
                return true;
            }
        }
    }
    int64_t v;
    adia_num_result r = adia_parse_i64(&q, end, &v);
    char msg[96];
    if (r == ADIA_NUM_BAD) {
        bool missing = tok == end || *tok == '\n' || *tok == '\r';
        snprintf(msg, sizeof msg, missing ? "missing %s index" : "%s index is not an integer",
                 what);
        block_fail(c, ADIA_ERR_PARSE, line, msg, tok, end);
        return false;
    }
    if (r != ADIA_NUM_OK || v < 1 || v > max) {
        snprintf(msg, sizeof msg, "%s index out of range 1..%" PRId32, what, max);
        block_fail(c, ADIA_ERR_PARSE, line, msg, tok, end);
        return false;
    }
    *out = (int32_t)(v - 1);
    *p = q;
    return true;
}

static bool parse_value(mtx_block *c, const mtx_ctx *x, int64_t line,
                        const char **p, const char *end, double *out)
{
    const char *tok = skip_blanks(*p, end), *q = tok;
    adia_num_result r;
    if (x->h->field == MTX_INTEGER) {
        int64_t v = 0;
        r = adia_parse_i64(&q, end, &v);
        *out = (double)v;
    } else {
        r = adia__parse_f64(&q, end, out);
    }
    if (r != ADIA_NUM_OK) {
        bool missing = tok == end || *tok == '\n' || *tok == '\r';
        block_fail(c, ADIA_ERR_PARSE, line,
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

/* What follows an entry's last token must be its line end (a CR before
 * the LF is allowed; a CR alone means CR-only line ends). */
static const char *entry_end(mtx_block *c, int64_t line, const char *p, const char *end)
{
    p = skip_blanks(p, end);
    bool cr = p < end && *p == '\r';
    if (cr) p++;
    if (p == end || *p == '\n') return p;
    block_fail(c, ADIA_ERR_PARSE, line, cr ? ADIA_IO_CR_ONLY : "extra text after the entry",
               p, end);
    return NULL;
}

/* Parse one entry line starting at p (not blank); returns the position of
 * its line end (LF or end) or NULL after recording an error.  The line is
 * parsed into locals first: only a valid line counts against the capacity
 * (which the block's bytes bound, see alloc_block). */
static const char *parse_entry(mtx_block *c, const mtx_ctx *x, int64_t line,
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
    if (!(p = entry_end(c, line, p, end))) return NULL;
    if (x->nidx && h->symmetry == MTX_SKEW && i == j) {
        c->status = ADIA_ERR_PARSE;
        c->err_line = line;
        snprintf(c->msg, sizeof c->msg, "diagonal entry in a skew-symmetric matrix (%.17g at "
                 "%" PRId32 ",%" PRId32 "): its diagonal is zero and not stored", v, i + 1, j + 1);
        return NULL;
    }
    if (c->seen == c->limit) {   /* only when the block alone exceeds the declaration */
        char what[96];
        snprintf(what, sizeof what, "too many entries: the size line declares %" PRId64,
                 h->entries);
        block_fail(c, ADIA_ERR_PARSE, line, what, start, end);
        return NULL;
    }
    c->seen++;
    if (x->nidx && !keeps(x, i, j)) return skip_line(c, line) ? p : NULL;   /* array: all kept */
    int64_t k = c->count;   /* < seen <= limit: room to grow */
    if (k == c->cap && !grow_block(c)) {
        block_fail(c, ADIA_ERR_NO_MEMORY, line, "out of memory for the entries", start, end);
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

/* A line without an entry: counted in the skip runs (rare: not the hot
 * path), so that entries map back to their lines. */
static bool skip_line(mtx_block *c, int64_t line)
{
    if (c->nskip && c->skip[c->nskip - 1].entry == (int32_t)c->count) {
        c->skip[c->nskip - 1].lines++;
        return true;
    }
    if (c->nskip == c->skip_cap) {
        int32_t cap = c->skip_cap ? 2 * c->skip_cap : 16;
        skip_run *s = realloc(c->skip, (size_t)cap * sizeof *s);
        if (!s) {
            c->status = ADIA_ERR_NO_MEMORY;
            c->err_line = line;
            snprintf(c->msg, sizeof c->msg, "out of memory for the line map");
            return false;
        }
        c->skip = s;
        c->skip_cap = cap;
    }
    c->skip[c->nskip++] = (skip_run){(int32_t)c->count, 1};
    return true;
}

/* Parse the block's lines; line numbers are counted from its start (the
 * block does not know how many lines come before it). */
static void parse_block(mtx_block *c, const mtx_ctx *x)
{
    const char *p = c->begin, *end = c->end;
    int64_t line = 0;
    while (p < end) {
        const char *q = skip_blanks(p, end);
        if (q < end && *q == '\r' && (q + 1 == end || q[1] == '\n')) q++;
        if (q < end && *q != '\n' && *q != '%') {
            q = parse_entry(c, x, line, q, end);
        } else {
            if (!skip_line(c, line)) return;
            if (q < end && *q == '%') q = memchr(q, '\n', (size_t)(end - q));
        }
        if (c->status != ADIA_OK) return;
        if (!q || q == end) break;
        p = q + 1;   /* past the LF */
        line++;
    }
    c->lines = line;
    if (x->scan && c->count) adia__mtx_csr_scan(c->row, c->col, c->count, &c->span);
}

int64_t adia__mtx_entry_line(const mtx_block *b, int64_t k)
{
    int64_t line = b->first_line + k;
    for (int32_t r = 0; r < b->nskip && b->skip[r].entry <= k; r++) line += b->skip[r].lines;
    return line;
}

/* Cut [b, e) into n pieces at line starts. */
static void cut_blocks(mtx_block *ch, int n, const char *b, const char *e)
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

static void free_block(mtx_block *c)
{
    free(c->row);
    free(c->col);
    free(c->val);
    free(c->skip);
    memset(c, 0, sizeof *c);
}

void adia__mtx_data_free(mtx_data *d)
{
    for (int i = 0; d->blk && i < d->nblk; i++) free_block(&d->blk[i]);
    free(d->blk);
    d->blk = NULL;
    d->nblk = d->blk_cap = 0;
    adia__mtx_csr_free(&d->csr);
    adia__mtx_header_free(&d->h);
}

/* Ready for the next chunk: the parse state cleared, the arrays kept. */
static void reset_block(mtx_block *c)
{
    *c = (mtx_block){.row = c->row, .col = c->col, .val = c->val, .cap = c->cap,
                     .skip = c->skip, .skip_cap = c->skip_cap, .at = -1};
}

/* Resize a block's arrays to cap entries (realloc is thread-safe). */
static bool resize_block(mtx_block *c, int64_t cap)
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
static bool grow_block(mtx_block *c)
{
    int64_t cap = c->cap + c->cap / 2 + 1024;
    return resize_block(c, cap < c->limit ? cap : c->limit);
}

/* Allocate a block's arrays.  The limit is what its bytes can hold (each
 * token takes a character and a separator) or what the declaration still
 * allows if less: a header that declares absurd counts cannot make us
 * allocate absurd memory, and arrays grow only as entries arrive.  The
 * first allocation is what the density seen so far predicts, plus a
 * margin; parse_entry grows it up to the limit if needed.  Arrays left
 * from the previous chunk are reused (their pages are already mapped). */
static adia_status alloc_block(mtx_block *c, const mtx_ctx *x)
{
    int64_t bytes = (int64_t)(c->end - c->begin);
    int64_t bound = (bytes + 1) / (2 * (x->nidx + x->nval));
    c->limit = bound < x->remaining ? bound : x->remaining;
    double guess = x->density > 0 ? x->density * (double)bytes * 1.05 + 1024 : (double)c->limit;
    int64_t cap = guess < (double)c->limit ? (int64_t)guess : c->limit;
    if (c->row || c->val) {
        if (cap <= c->cap || resize_block(c, cap)) return ADIA_OK;
        return adia__error(ADIA_ERR_NO_MEMORY, "out of memory for %" PRId64 " entries", cap);
    }
    c->cap = cap;
    size_t n = (size_t)c->cap;
    if (x->nidx) {
        c->row = adia__alloc(n, sizeof *c->row, "Matrix Market rows");
        c->col = adia__alloc(n, sizeof *c->col, "Matrix Market columns");
        if (!c->row || !c->col) return ADIA_ERR_NO_MEMORY;
    }
    if (x->nval) {
        c->val = adia__alloc(n, sizeof *c->val, "Matrix Market values");
        if (!c->val) return ADIA_ERR_NO_MEMORY;
    }
    return ADIA_OK;
}

/* Room for n blocks in *blk (of *cap), new ones zeroed. */
static adia_status reserve_blocks(mtx_block **blk, int *cap, int n)
{
    if (n <= *cap) return ADIA_OK;
    int want = 2 * *cap > n ? 2 * *cap : n;
    mtx_block *b = realloc(*blk, (size_t)want * sizeof *b);
    if (!b) return adia__error(ADIA_ERR_NO_MEMORY, "out of memory for %d parse blocks", want);
    memset(b + *cap, 0, (size_t)(want - *cap) * sizeof *b);
    *blk = b;
    *cap = want;
    return ADIA_OK;
}

/* The blocks the threads parse a chunk into, reused every other chunk
 * (those of the chunk before are filled into the matrix meanwhile). */
typedef struct mtx_work {
    mtx_block *blk;
    int cap, n;        /* n: blocks of the chunk last parsed into it */
} mtx_work;

static void free_work(mtx_work *w)
{
    for (int i = 0; i < w->cap; i++) free_block(&w->blk[i]);
    free(w->blk);
}

/* The matrix stops being built in order: what it holds becomes the first
 * block (without a line map: only symmetric files' errors look entries
 * up, and those are never built in order). */
static adia_status stop_building(mtx_data *d)
{
    ADIA_TRY(reserve_blocks(&d->blk, &d->blk_cap, 1));
    mtx_block *b = &d->blk[0];   /* nothing was kept in blocks while building */
    *b = (mtx_block){0};
    ADIA_TRY(adia__mtx_csr_to_triplets(&d->csr, &b->row, &b->col, &b->val, &b->count));
    b->cap = b->seen = b->count;
    if (b->count) d->nblk = 1;
    else free_block(b);
    return ADIA_OK;
}

/* Fill in block c if it was placed in the matrix being built. */
static void fill_block(mtx_csr *m, mtx_block *c)
{
    if (c->at < 0) return;
    adia__mtx_csr_fill(m, c->at, c->after, c->row, c->col, c->val, c->count);
    c->at = -1;
}

/* Fill in the placed blocks of ch[0..n). */
static void fill_placed(mtx_csr *m, mtx_block *ch, int n, int threads)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int i = 0; i < n; i++) fill_block(m, &ch[i]);
}

/* Keep the entries of parsed block ch[i]: placed in the matrix being
 * built (filled in after the chunk's last), or (moving its arrays) as a
 * block of d. */
static adia_status keep_entries(mtx_data *d, mtx_block *ch, int i)
{
    mtx_block *c = &ch[i];
    if (d->csr.on) {
        bool ordered;
        ADIA_TRY(adia__mtx_csr_place(&d->csr, &c->span, c->count, &ordered, &c->at, &c->after));
        if (ordered) return ADIA_OK;
        fill_placed(&d->csr, ch, i, 1);
        ADIA_TRY(stop_building(d));
    }
    ADIA_TRY(reserve_blocks(&d->blk, &d->blk_cap, d->nblk + 1));
    if (c->cap > c->count + c->count / 8 + 1024) resize_block(c, c->count);  /* a hint */
    d->blk[d->nblk++] = *c;
    *c = (mtx_block){.at = -1};   /* its arrays are the kept block's now */
    return ADIA_OK;
}

/* Check parsed block ch[i] in file order and keep its entries.  *line is
 * the line number of its start. */
static adia_status keep_block(mtx_data *d, mtx_block *ch, int i, const mtx_ctx *x,
                              int64_t *line)
{
    mtx_block *c = &ch[i];
    c->first_line = *line;
    if (c->status != ADIA_OK)
        return adia__error(c->status, "%s:%" PRId64 ": %s", x->name, *line + c->err_line, c->msg);
    if (d->total + c->seen > d->h.entries)   /* entries not kept have no line map: the block's end */
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": too many entries: the size line "
                          "declares %" PRId64, x->name, c->seen == c->count
                          ? adia__mtx_entry_line(c, d->h.entries - d->total) : *line + c->lines,
                          d->h.entries);
    d->total += c->seen;
    d->kept += c->count;
    *line += c->lines;
    return c->count ? keep_entries(d, ch, i) : ADIA_OK;
}

/* The chunk after the one being parsed, read by one of the threads (its
 * error message is that thread's: kept here for the caller's). */
typedef struct mtx_next {
    adia_lines *l;
    const char *b, *e;
    adia_status status;
    char msg[400];
} mtx_next;

static void read_next(mtx_next *n)
{
    n->status = adia__lines_next(n->l, &n->b, &n->e);
    if (n->status != ADIA_OK) snprintf(n->msg, sizeof n->msg, "%s", adia_last_error());
}

/* Parse one chunk [b, e) of whole lines into the blocks of w, then keep
 * the entries in d, errors in file order.  The same parallel loop reads
 * the next chunk into *next (a thread reads or inflates while the others
 * parse) and fills the blocks of the chunk before, in prev, into the
 * matrix: one wait of the threads for each other per chunk. */
static adia_status parse_chunk(mtx_data *d, mtx_ctx *x, mtx_work *w, mtx_work *prev,
                               const char *b, const char *e, int64_t *line, mtx_next *next)
{
    size_t bytes = (size_t)(e - b);
    /* A few blocks per thread, handed out dynamically: a thread that gets
     * less CPU (a busy machine) does not hold the others up. */
    int threads = bytes < MTX_PARALLEL_MIN_BYTES ? 1 : adia__threads();
    int n = threads == 1 ? 1 : threads * MTX_BLOCKS_PER_THREAD;
    ADIA_TRY(reserve_blocks(&w->blk, &w->cap, n));
    mtx_block *ch = w->blk;
    for (int i = 0; i < n; i++) reset_block(&ch[i]);
    cut_blocks(ch, n, b, e);
    x->remaining = d->h.entries - d->total;
    x->scan = d->csr.on;
    adia_status s = ADIA_OK;
    for (int i = 0; i < n && s == ADIA_OK; i++) s = alloc_block(&ch[i], x);
    if (s != ADIA_OK) return s;
    w->n = n;
    int np = prev->n;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int i = -1 - np; i < n; i++) {   /* the read first: the longest task */
        if (i >= 0) parse_block(&ch[i], x);
        else if (i == -1 - np) read_next(next);
        else fill_block(&d->csr, &prev->blk[i + np]);
    }
    int64_t before = d->kept;
    for (int i = 0; i < n && s == ADIA_OK; i++) s = keep_block(d, ch, i, x, line);
    if (s != ADIA_OK) return s;
    if (bytes > 0) x->density = (double)(d->kept - before) / (double)bytes;
    return next->status == ADIA_OK ? ADIA_OK : adia__error(next->status, "%s", next->msg);
}

/* Feed the header the lines of [*b, e); *b moves past those it took. */
static adia_status header_lines(mtx_header *h, const char **b, const char *e, const char *name)
{
    const char *p = *b;
    while (p < e && !h->done) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        ADIA_TRY(adia__mtx_header_line(h, p, nl ? nl : e, name));
        p = nl ? nl + 1 : e;
    }
    *b = p;
    return ADIA_OK;
}

/* The read's peak memory, known once the header is: the entries as parsed,
 * what plan says the result needs, the buffers.  Where the data's length
 * is known, entries beyond what its bytes can hold are not counted: a
 * short file's declaration is not believed (it fails as truncated).  A
 * read of some rows of a coordinate file counts their share of the
 * entries (a file not sorted by row spreads them evenly, one sorted keeps
 * a block together). */
static adia_status check_budget(const mtx_ctx *x, mtx_plan_fn plan, int64_t size,
                                int64_t buffers, int64_t *peak_out)
{
    mtx_header h = *x->h;
    int64_t most = (size + 1) / (2 * (x->nidx + x->nval));
    if (size >= 0 && h.entries > most) h.entries = most;
    if (x->nidx && h.rows > 0 && x->hi - x->lo < h.rows) {
        h.entries = (int64_t)ceil((double)h.entries * (x->hi - x->lo) / h.rows);
        h.rows = x->hi - x->lo;
    }
    int64_t result = 0, parsed, peak;
    char what[256];
    ADIA_TRY(plan(&h, x->name, &result, what, sizeof what));
    if (!adia_mul_i64(h.entries, 4 * x->nidx + 8 * x->nval, &parsed) ||
        !adia_add_i64(parsed, result, &peak) || !adia_add_i64(peak, buffers, &peak) ||
        result < 0)
        peak = -1;
    char full[400], part[80] = "";
    if (x->hi - x->lo < x->h->rows)
        snprintf(part, sizeof part, " rows %" PRId32 "..%" PRId32 " of", x->lo, x->hi - 1);
    snprintf(full, sizeof full, "%s:%" PRId64 ": reading%s %" PRId32 " x %" PRId32 " with %"
             PRId64 " entries declared (%s)", x->name, h.lines, part, x->h->rows, x->h->cols,
             x->h->entries, what);
    *peak_out = peak;
    return adia__budget_check(peak, full);
}

/* Feed the header the first chunks of l; on return [*b, *e) is the rest of
 * the chunk the header ended in, *chunk its start. */
static adia_status read_header(adia_lines *l, mtx_header *h, const char **b, const char **e,
                               const char **chunk, bool *last_lf)
{
    const char *name = l->src->name;
    do {
        ADIA_TRY(adia__lines_next(l, b, e));
        if (*b == *e) return adia__mtx_header_end(h, name);
        *last_lf = (*e)[-1] == '\n';
        *chunk = *b;
        ADIA_TRY(header_lines(h, b, *e, name));
    } while (!h->done);
    return ADIA_OK;
}

/* The rows kept, [x->lo, x->hi): keep's (inside the matrix) or all. */
static adia_status kept_rows(mtx_ctx *x, const mtx_rows *keep)
{
    x->lo = 0;
    x->hi = x->h->rows;
    x->mirrored = x->h->symmetry != MTX_GENERAL;
    if (!keep) return ADIA_OK;
    if (keep->first < 0 || keep->count < 0 || keep->count > x->h->rows ||
        keep->first > x->h->rows - keep->count)
        return adia__error(ADIA_ERR_DIMENSION, "%s: rows %" PRId64 "..%" PRId64 " asked for, the "
                          "matrix has rows 0..%" PRId32, x->name, keep->first,
                          keep->first + keep->count - 1, x->h->rows - 1);
    x->lo = (int32_t)keep->first;
    x->hi = (int32_t)(keep->first + keep->count);
    return ADIA_OK;
}

/* With build, a general coordinate file starts being built as a matrix,
 * with room for what its declaration and its bytes allow. */
static adia_status start_building(mtx_data *d, const mtx_ctx *x, int64_t left)
{
    const mtx_header *h = &d->h;
    if (h->format != MTX_COORDINATE || h->symmetry != MTX_GENERAL) return ADIA_OK;
    int64_t room = 0;   /* unknown length (gzip, pipes): grow as entries come */
    if (left >= 0 && x->hi - x->lo == h->rows) {
        room = (left + 1) / (2 * (x->nidx + x->nval));
        if (room > h->entries) room = h->entries;
    }
    return adia__mtx_csr_init(&d->csr, x->lo, x->hi - x->lo, h->cols, x->nval == 0, room,
                              h->entries);
}

/* The entries, chunk after chunk, parsed into w[0] and w[1] in turn. */
static adia_status read_entries(adia_lines *l, mtx_data *d, mtx_ctx *x, mtx_work w[2],
                                const char *b, const char *e, bool last_lf)
{
    int64_t line = d->h.lines + 1;
    for (int k = 0;; k = !k) {
        mtx_next next = {.l = l};
        ADIA_TRY(parse_chunk(d, x, &w[k], &w[!k], b, e, &line, &next));
        if (next.b == next.e) {
            if (d->csr.on) fill_placed(&d->csr, w[k].blk, w[k].n, w[k].n > 1 ? adia__threads() : 1);
            break;
        }
        b = next.b;
        e = next.e;
        last_lf = e[-1] == '\n';
    }
    if (d->total < d->h.entries) {
        int64_t last = line - (last_lf ? 1 : 0);
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": file ends after %" PRId64
                          " of %" PRId64 " entries (truncated?)", x->name,
                          last < 1 ? 1 : last, d->total, d->h.entries);
    }
    return ADIA_OK;
}

static adia_status read_all(adia_lines *l, mtx_plan_fn plan, const mtx_rows *keep, bool build,
                            mtx_data *d)
{
    const char *name = l->src->name, *b, *e, *chunk;
    mtx_header *h = &d->h;
    bool last_lf;   /* the data read so far ends in LF */
    ADIA_TRY(read_header(l, h, &b, &e, &chunk, &last_lf));
    mtx_ctx x = {h, name, h->format == MTX_COORDINATE ? 2 : 0, h->field == MTX_PATTERN ? 0 : 1,
                 0, 0.0, 0, 0, false, false};
    ADIA_TRY(kept_rows(&x, keep));
    int64_t left = l->src->size < 0 ? -1 : l->src->size - (l->offset + (b - chunk));
    /* the budget with the first chunk's buffers; larger chunks where it
     * leaves room (64 MB buffers of 16 threads made a budget of 200 MB
     * refuse a read that fits it) */
    int64_t peak = 0, first = adia__lines_buffer_bytes(l);
    ADIA_TRY(check_budget(&x, plan, left, first, &peak));
    adia__lines_fit(l, adia_memory_budget() - (peak - first));
    if (build) ADIA_TRY(start_building(d, &x, left));
    mtx_work w[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
    adia_status s = read_entries(l, d, &x, w, b, e, last_lf);
    free_work(&w[0]);
    free_work(&w[1]);
    return s;
}

adia_status adia__mtx_read_data(adia_source *src, mtx_plan_fn plan, const mtx_rows *keep,
                               bool build, mtx_data *d)
{
    memset(d, 0, sizeof *d);
    adia_lines l;
    ADIA_TRY(adia__lines_init(&l, src));
    adia_status s = read_all(&l, plan, keep, build, d);
    adia__lines_free(&l);
    if (s != ADIA_OK) adia__mtx_data_free(d);
    return s;
}

/* The matrix's share of the peak: CSR row pointers and entries (symmetric
 * storage: up to twice the entries), for array files also the triplets
 * made of the values. */
static adia_status matrix_plan(const mtx_header *h, const char *name, int64_t *bytes,
                               char *what, size_t size)
{
    (void)name;
    int64_t n = h->entries, ptr, ent, trip = 0;
    bool ok = (h->symmetry == MTX_GENERAL || adia_mul_i64(n, 2, &n)) &&
              adia_mul_i64((int64_t)h->rows + 1, 8, &ptr) && adia_mul_i64(n, 12, &ent) &&
              (h->format == MTX_COORDINATE || adia_mul_i64(h->entries, 16, &trip));
    *bytes = ok && adia_add_i64(ptr, ent, bytes) && adia_add_i64(*bytes, trip, bytes) ? *bytes : -1;
    snprintf(what, size, "row pointers %" PRId64 " bytes", ((int64_t)h->rows + 1) * 8);
    return ADIA_OK;
}

/* Array files: column-major values, for symmetric storage the lower
 * triangle (skew: without the diagonal); zeros are not stored.  Turned into
 * one triplet block. */
static adia_status array_triplets(const mtx_data *d, int32_t **r, int32_t **c, double **v,
                                  adia_triplets *t)
{
    const mtx_header *h = &d->h;
    *r = adia__alloc((size_t)d->total, sizeof **r, "array rows");
    *c = adia__alloc((size_t)d->total, sizeof **c, "array columns");
    *v = adia__alloc((size_t)d->total, sizeof **v, "array values");
    if (!*r || !*c || !*v) return ADIA_ERR_NO_MEMORY;
    int32_t i = h->symmetry == MTX_SKEW ? 1 : 0, j = 0;
    int64_t w = 0;
    for (int b = 0; b < d->nblk; b++)
        for (int64_t k = 0; k < d->blk[b].count; k++) {
            double x = d->blk[b].val[k];
            if (x != 0.0) {
                (*r)[w] = i;
                (*c)[w] = j;
                (*v)[w++] = x;
            }
            if (++i == h->rows) {
                j++;
                i = h->symmetry == MTX_GENERAL ? 0 : h->symmetry == MTX_SYMMETRIC ? j : j + 1;
            }
        }
    *t = (adia_triplets){w, *r, *c, *v};
    return ADIA_OK;
}

/* A pair given in both triangles, with the lines of both. */
static adia_status both_triangles(const mtx_data *d, const adia_triplet_ref both[2],
                                  const char *name)
{
    const mtx_block *a = &d->blk[both[0].blk], *b = &d->blk[both[1].blk];
    return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": entry (%" PRId32 ",%" PRId32 ") is "
                      "also given as (%" PRId32 ",%" PRId32 ") on line %" PRId64 ": a "
                      "symmetric file stores each off-diagonal entry once, in either triangle",
                      name, adia__mtx_entry_line(b, both[1].k), b->row[both[1].k] + 1,
                      b->col[both[1].k] + 1, a->row[both[0].k] + 1, a->col[both[0].k] + 1,
                      adia__mtx_entry_line(a, both[0].k));
}

/* Join the blocks and build the matrix, or its rows keep (symmetric
 * storage expanded). */
static adia_status assemble(mtx_data *d, const mtx_rows *keep, const char *name,
                            adia_matrix **out)
{
    int32_t first = keep ? (int32_t)keep->first : 0;
    int32_t rows = keep ? (int32_t)keep->count : d->h.rows;
    const mtx_header *h = &d->h;
    int mirror = h->symmetry == MTX_GENERAL ? 0 : h->symmetry == MTX_SYMMETRIC ? 1 : -1;
    adia_triplet_ref both[2];
    if (d->csr.on) return adia__mtx_csr_finish(&d->csr, out);
    if (h->format == MTX_ARRAY) {   /* one triangle by construction: no pairs */
        int32_t *r = NULL, *c = NULL;
        double *v = NULL;
        adia_triplets t;
        adia_status s = array_triplets(d, &r, &c, &v, &t);
        if (s == ADIA_OK) s = adia__io_build_csr(first, rows, h->cols, &t, 1, mirror, both, out);
        free(r);
        free(c);
        free(v);
        return s;
    }
    adia_triplets *t = adia__alloc((size_t)d->nblk, sizeof *t, "triplet blocks");
    if (!t) return ADIA_ERR_NO_MEMORY;
    for (int b = 0; b < d->nblk; b++)
        t[b] = (adia_triplets){d->blk[b].count, d->blk[b].row, d->blk[b].col, d->blk[b].val};
    adia_status s = adia__io_build_csr(first, rows, h->cols, t, d->nblk, mirror, both, out);
    free(t);
    return s == ADIA_ERR_PARSE ? both_triangles(d, both, name) : s;
}

adia_status adia__mtx_read_rows(adia_source *src, const mtx_rows *keep, int64_t *rows,
                                int64_t *cols, adia_matrix **out)
{
    mtx_data d;
    ADIA_TRY(adia__mtx_read_data(src, matrix_plan, keep, true, &d));
    if (rows) *rows = d.h.rows;
    if (cols) *cols = d.h.cols;
    adia_status s = assemble(&d, keep, src->name, out);
    if (s == ADIA_OK) {   /* the matrix keeps the header's comments (convert F G) */
        (*out)->comments = d.h.comments;
        d.h.comments = NULL;
    }
    adia__mtx_data_free(&d);
    char base[128];
    adia__io_basename(src->name, base, sizeof base);
    if (s == ADIA_OK && (s = adia_matrix_set_name(*out, base)) != ADIA_OK) {
        adia_matrix_destroy(*out);
        *out = NULL;
    }
    return s;
}

adia_status adia__mtx_read_matrix(adia_source *src, adia_matrix **out)
{
    return adia__mtx_read_rows(src, NULL, NULL, NULL, out);
}

adia_status adia__mtx_read_shape(adia_source *src, int64_t *rows, int64_t *cols)
{
    adia_lines l;
    ADIA_TRY(adia__lines_init(&l, src));
    mtx_header h;
    memset(&h, 0, sizeof h);
    const char *b, *e, *chunk;
    bool last_lf;
    adia_status s = read_header(&l, &h, &b, &e, &chunk, &last_lf);
    adia__lines_free(&l);
    adia__mtx_header_free(&h);
    if (s == ADIA_OK && rows) *rows = h.rows;
    if (s == ADIA_OK && cols) *cols = h.cols;
    return s;
}

adia_status adia_matrix_parse_mtx(const char *text, size_t len, const char *name,
                                  adia_matrix **out)
{
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_parse_mtx: out is NULL");
    *out = NULL;
    if (!text && len > 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_parse_mtx: text is NULL");
    adia_source src;
    ADIA_TRY(adia__source_memory(&src, name ? name : "<memory>", text ? text : "", len));
    adia_status s = adia__mtx_read_matrix(&src, out);
    adia__source_close(&src);
    return s;
}
