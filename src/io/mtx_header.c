/* mtx_header.c -- the Matrix Market banner ("%%MatrixMarket matrix
 * coordinate real general"), the comment block and the size line. */
#include "mtx_header.h"
#include "numparse.h"

#include <inttypes.h>
#include <strings.h>

/* One line of the header: [b, e) without its CR LF / LF. */
typedef struct hline {
    const char *b, *e;
    int64_t no;
} hline;

static const char *skip_blanks(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* Next blank-separated word of the line into w (truncated, NUL-ended). */
static bool next_word(const char **p, const char *e, char *w, size_t size)
{
    const char *b = skip_blanks(*p, e), *q = b;
    while (q < e && *q != ' ' && *q != '\t') q++;
    if (q == b) return false;
    size_t n = (size_t)(q - b) < size - 1 ? (size_t)(q - b) : size - 1;
    for (size_t i = 0; i < n; i++)
        w[i] = b[i] >= 32 && b[i] < 127 ? b[i] : '?';
    w[n] = '\0';
    *p = q;
    return true;
}

/* Index of word in the list (case-insensitive), or -1. */
static int lookup(const char *word, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(word, list[i])) return i;
    return -1;
}

static adia_status parse_banner(const hline *l, const char *name, mtx_header *h)
{
    static const char *const formats[] = {"coordinate", "array"};
    static const char *const fields[] = {"real", "integer", "pattern", "double",
                                         "complex"};
    static const char *const syms[] = {"general", "symmetric", "skew-symmetric",
                                       "hermitian"};
    const char *p = l->b;
    char w[48];
    if (!next_word(&p, l->e, w, sizeof w) || strcasecmp(w, "%%MatrixMarket") != 0)
        return adia__error(ADIA_ERR_PARSE,
                          "%s:%" PRId64 ": missing %%%%MatrixMarket banner (%s)",
                          name, l->no, l->b < l->e ? w : "empty line");
    const char *what[4] = {"object", "format", "field", "symmetry"};
    char words[4][48];
    for (int i = 0; i < 4; i++)
        if (!next_word(&p, l->e, words[i], sizeof words[i]))
            return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": header lacks the %s "
                              "(expected \"%%%%MatrixMarket matrix coordinate real general\")",
                              name, l->no, what[i]);
    if (next_word(&p, l->e, w, sizeof w))
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": extra text in header (%s)",
                          name, l->no, w);
    if (strcasecmp(words[0], "matrix") != 0)
        return adia__error(!strcasecmp(words[0], "vector") ? ADIA_ERR_UNSUPPORTED : ADIA_ERR_PARSE,
                          "%s:%" PRId64 ": object must be \"matrix\" (%s)",
                          name, l->no, words[0]);
    int f = lookup(words[1], formats, 2), fd = lookup(words[2], fields, 5);
    int s = lookup(words[3], syms, 4);
    if (f < 0)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": unknown format (%s), "
                          "expected coordinate or array", name, l->no, words[1]);
    if (fd < 0)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": unknown field (%s), "
                          "expected real, integer, pattern or complex", name, l->no, words[2]);
    if (s < 0)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": unknown symmetry (%s), expected "
                          "general, symmetric or skew-symmetric", name, l->no, words[3]);
    if (fd == 4 || s == 3)
        return adia__error(ADIA_ERR_UNSUPPORTED, "%s:%" PRId64 ": complex matrices are "
                          "not supported (%s %s)", name, l->no, words[2], words[3]);
    h->format = f == 0 ? MTX_COORDINATE : MTX_ARRAY;
    h->field = fd == 3 ? MTX_REAL : (mtx_field)fd;
    h->symmetry = (mtx_symmetry)s;
    if (h->field == MTX_PATTERN && (h->format == MTX_ARRAY || h->symmetry == MTX_SKEW))
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": pattern is only allowed "
                          "with coordinate general/symmetric (%s %s)",
                          name, l->no, words[1], words[3]);
    return ADIA_OK;
}

/* One size number: a non-negative integer up to max. */
static adia_status size_number(const char **p, const hline *l, const char *name,
                               const char *what, int64_t max, int64_t *out)
{
    const char *b = skip_blanks(*p, l->e), *q = b;
    if (b == l->e)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": size line lacks %s",
                          name, l->no, what);
    adia_num_result r = adia_parse_i64(&q, l->e, out);
    int n = (int)(adia__token_end(b, l->e) - b);
    if (n > 40) n = 40;
    if (r == ADIA_NUM_BAD)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": %s is not an integer (%.*s)",
                          name, l->no, what, n, b);
    if (r == ADIA_NUM_RANGE || *out > max)
        return adia__error(ADIA_ERR_OVERFLOW, "%s:%" PRId64 ": %s too large, at most %"
                          PRId64 " (%.*s)", name, l->no, what, max, n, b);
    if (*out < 0)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": negative %s (%.*s)",
                          name, l->no, what, n, b);
    *p = q;
    return ADIA_OK;
}

/* Entries an array file holds: all, a triangle with or without diagonal. */
static int64_t array_entries(const mtx_header *h)
{
    int64_t r = h->rows, c = h->cols;   /* both fit int32: no overflow here */
    if (h->symmetry == MTX_GENERAL) return r * c;
    return h->symmetry == MTX_SYMMETRIC ? r * (r + 1) / 2 : r * (r - 1) / 2;
}

static adia_status parse_size(const hline *l, const char *name, mtx_header *h)
{
    const char *p = l->b;
    int64_t rows, cols, nnz = 0;
    ADIA_TRY(size_number(&p, l, name, "row count", INT32_MAX, &rows));
    ADIA_TRY(size_number(&p, l, name, "column count", INT32_MAX, &cols));
    if (h->format == MTX_COORDINATE)
        ADIA_TRY(size_number(&p, l, name, "entry count", INT64_MAX, &nnz));
    p = skip_blanks(p, l->e);
    if (p < l->e)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": extra text after the size "
                          "line's numbers (%.*s)", name, l->no,
                          (int)(adia__token_end(p, l->e) - p > 40 ? 40 : adia__token_end(p, l->e) - p), p);
    h->rows = (int32_t)rows;
    h->cols = (int32_t)cols;
    if (h->symmetry != MTX_GENERAL && rows != cols)
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": a symmetric or skew-symmetric "
                          "matrix must be square (%" PRId64 " x %" PRId64 ")",
                          name, l->no, rows, cols);
    int64_t cells;
    if (!adia_mul_i64(rows, cols, &cells))
        return adia__error(ADIA_ERR_OVERFLOW, "%s:%" PRId64 ": rows*cols overflows",
                          name, l->no);
    if (h->format == MTX_ARRAY) {
        h->entries = array_entries(h);
    } else {
        if (nnz > cells)
            return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": %" PRId64 " entries declared "
                              "but a %" PRId64 " x %" PRId64 " matrix has only %" PRId64
                              " cells", name, l->no, nnz, rows, cols, cells);
        h->entries = nnz;
    }
    return ADIA_OK;
}

static bool blank_line(const hline *l) { return skip_blanks(l->b, l->e) == l->e; }

/* Append [b, e) and a LF to h's comments (the caller checked the room). */
static adia_status append_comment(mtx_header *h, const char *b, const char *e, const char *name)
{
    size_t n = (size_t)(e - b), need = h->comments_len + n + 2;
    char *c = realloc(h->comments, need);
    if (!c)
        return adia__error(ADIA_ERR_NO_MEMORY, "%s: no memory for %zu bytes of header comments",
                          name, need);
    for (size_t i = 0; i < n; i++) c[h->comments_len + i] = b[i] ? b[i] : ' ';   /* no NUL inside */
    h->comments_len += n;
    c[h->comments_len++] = '\n';
    c[h->comments_len] = '\0';
    h->comments = c;
    return ADIA_OK;
}

/* Keep a comment line [b, e) (b at its '%') for a writer to copy. */
static adia_status keep_comment(mtx_header *h, const char *b, const char *e, const char *name)
{
    static const char ours[] = "% written by adia ", cut[] = "% (further header comments "
                                                               "of the input left out)";
    if ((size_t)(e - b) >= sizeof ours - 1 && !memcmp(b, ours, sizeof ours - 1)) return ADIA_OK;
    if (h->comments_cut) return ADIA_OK;
    if (h->comments_len + (size_t)(e - b) + 1 + sizeof cut + 1 > MTX_COMMENTS_MAX) {
        h->comments_cut = true;
        return append_comment(h, cut, cut + sizeof cut - 1, name);
    }
    return append_comment(h, b, e, name);
}

void adia__mtx_header_free(mtx_header *h)
{
    free(h->comments);
    h->comments = NULL;
    h->comments_len = 0;
}

/* Causes that make the first line look like no banner at all. */
static adia_status check_first_line(const hline *l, const char *name)
{
    if (l->e - l->b >= 3 && !memcmp(l->b, "\xEF\xBB\xBF", 3))
        return adia__error(ADIA_ERR_PARSE, "%s:1: starts with a UTF-8 byte-order mark "
                          "(EF BB BF): remove it, e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' FILE",
                          name);
    const char *cr = memchr(l->b, '\r', (size_t)(l->e - l->b));
    if (cr && cr + 1 < l->e)
        return adia__error(ADIA_ERR_PARSE, "%s:1: %s", name, ADIA_IO_CR_ONLY);
    return ADIA_OK;
}

adia_status adia__mtx_header_line(mtx_header *h, const char *b, const char *e, const char *name)
{
    if (e > b && e[-1] == '\r') e--;
    hline l = {b, e, ++h->lines};
    if (l.no == 1) {
        ADIA_TRY(check_first_line(&l, name));
        return parse_banner(&l, name, h);
    }
    if (blank_line(&l)) return ADIA_OK;
    const char *first = skip_blanks(l.b, l.e);
    if (*first == '%') return keep_comment(h, first, l.e, name);
    ADIA_TRY(parse_size(&l, name, h));
    h->done = true;
    return ADIA_OK;
}

adia_status adia__mtx_header_end(const mtx_header *h, const char *name)
{
    if (h->lines == 0) return adia__error(ADIA_ERR_PARSE, "%s:1: empty file", name);
    return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": file ends before the size line", name,
                      h->lines);
}
