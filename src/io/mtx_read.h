/* mtx_read.h -- the Matrix Market data section, read from a source into
 * blocks of entries: shared by the matrix and the vector reader. */
#ifndef ADIA_IO_MTX_READ_H
#define ADIA_IO_MTX_READ_H

#include "mtx_csr.h"
#include "mtx_header.h"
#include "source.h"

/* Lines without an entry (blank, comment) just before entry `entry` of a
 * block: what maps an entry back to its line number. */
typedef struct skip_run {
    int32_t entry, lines;
} skip_run;

/* One piece of a chunk, parsed by one thread: its entries in file order. */
typedef struct mtx_block {
    const char *begin, *end;   /* the text (valid only while parsing it) */
    int64_t first_line;        /* 1-based line number of begin */
    int64_t lines;             /* newlines in the piece */
    int64_t err_line;          /* line of the error, counted from begin */
    int64_t cap, count;        /* entries allocated / kept */
    int64_t seen;              /* entries parsed (kept or not: mtx_rows) */
    int64_t limit;             /* most entries the piece may hold */
    int32_t *row, *col;        /* 0-based; NULL for array files */
    double *val;               /* NULL for pattern files */
    skip_run *skip;
    int32_t nskip, skip_cap;
    mtx_span span;             /* the order of its entries, when scanned */
    int64_t at;                /* placed at this entry of the matrix being built; -1: not */
    int32_t after;             /* the row placed before it */
    adia_status status;        /* first error of this piece */
    char msg[320];             /* the error without its "FILE:LINE: " */
} mtx_block;

typedef struct mtx_data {
    mtx_header h;
    mtx_csr csr;               /* csr.on: the entries are all in it, blk is empty */
    mtx_block *blk;            /* in file order, none empty */
    int nblk, blk_cap;
    int64_t total;             /* entries read (the declaration counts them) */
    int64_t kept;              /* entries in all blocks */
} mtx_data;

/* Rows [first, first + count) of the matrix: a coordinate file's entries
 * of other rows are not kept (except, with symmetric storage, those whose
 * mirror lands in the range); they count as lines without an entry. */
typedef struct mtx_rows {
    int64_t first, count;
} mtx_rows;

/* What a reader checks once the header is known (shape, field), the bytes
 * its result will need besides the parsed entries (-1: beyond int64) and
 * what the result is, for the budget's message. */
typedef adia_status (*mtx_plan_fn)(const mtx_header *h, const char *name, int64_t *bytes,
                                   char *what, size_t size);

/* Header and all entries of src (exactly the declared count; keep NULL:
 * every row, else the entries of those rows), the budget checked with
 * plan's bytes before the data is read.  With build, a general coordinate
 * file's entries go into d->csr while they come row by row (mtx_csr.h),
 * into blocks otherwise.  On failure d holds nothing. */
adia_status adia__mtx_read_data(adia_source *src, mtx_plan_fn plan, const mtx_rows *keep,
                               bool build, mtx_data *d);
void adia__mtx_data_free(mtx_data *d);
/* The matrix of src, or its rows keep (keep NULL: all), and the shape its
 * header declares (rows, cols may be NULL): adia_matrix_read_mtx_rows. */
adia_status adia__mtx_read_rows(adia_source *src, const mtx_rows *keep, int64_t *rows,
                                int64_t *cols, adia_matrix **out);
/* The shape the header of src declares; the data is not read. */
adia_status adia__mtx_read_shape(adia_source *src, int64_t *rows, int64_t *cols);
/* Line number of entry k of block b. */
int64_t adia__mtx_entry_line(const mtx_block *b, int64_t k);

#endif
