/* vector_read.c -- a dense vector from a Matrix Market file, through the
 * same source, header and data parser as matrices: array real|integer
 * general n x 1 or 1 x n (every value, in order), or coordinate
 * real|integer|pattern general n x 1 (entries not given are 0; duplicates
 * as for matrices: summed, in pattern files kept once as 1). */
#include "io.h"
#include "mtx_read.h"

#include <inttypes.h>

static int32_t vector_length(const mtx_header *h)
{
    return h->format == MTX_ARRAY && h->rows == 1 ? h->cols : h->rows;
}

static adia_status vector_plan(const mtx_header *h, const char *name, int64_t *bytes,
                               char *what, size_t size)
{
    static const char *const sym[] = {"general", "symmetric", "skew-symmetric"};
    if (h->symmetry != MTX_GENERAL)
        return adia__error(ADIA_ERR_PARSE, "%s:1: a vector file must be general (%s given)",
                          name, sym[h->symmetry]);
    bool array = h->format == MTX_ARRAY;
    if (h->cols != 1 && !(array && h->rows == 1))
        return adia__error(ADIA_ERR_PARSE, "%s:%" PRId64 ": a vector file must have one column%s "
                          "(%" PRId32 " x %" PRId32 " given)", name, h->lines,
                          array ? " or one row" : "", h->rows, h->cols);
    *bytes = (int64_t)vector_length(h) * 8;
    snprintf(what, size, "the vector %" PRId64 " bytes", *bytes);
    return ADIA_OK;
}

/* The parsed entries into a zero-filled vector. */
static adia_status fill(const mtx_data *d, int32_t *n, double **x)
{
    const mtx_header *h = &d->h;
    int32_t len = vector_length(h);
    double *v = adia__calloc((size_t)len, sizeof *v, "vector");
    if (!v) return ADIA_ERR_NO_MEMORY;
    int64_t at = 0;
    for (int b = 0; b < d->nblk; b++) {
        const mtx_block *c = &d->blk[b];
        for (int64_t k = 0; k < c->count; k++) {
            if (h->format == MTX_ARRAY) v[at++] = c->val[k];
            else if (!c->val) v[c->row[k]] = 1.0;
            else v[c->row[k]] += c->val[k];
        }
    }
    *n = len;
    *x = v;
    return ADIA_OK;
}

adia_status adia_vector_read_mtx(const char *path, int32_t *n, double **x)
{
    if (!n || !x) return adia__error(ADIA_ERR_INVALID_ARG, "adia_vector_read_mtx: n or x is NULL");
    *n = 0;
    *x = NULL;
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_vector_read_mtx: path is NULL");
    adia_source src;
    ADIA_TRY(adia__source_open(&src, path));
    mtx_data d;
    adia_status s = adia__mtx_read_data(&src, vector_plan, NULL, false, &d);
    if (s == ADIA_OK) s = fill(&d, n, x);
    adia__mtx_data_free(&d);
    adia__source_close(&src);
    return s;
}
