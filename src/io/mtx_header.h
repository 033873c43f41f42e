/* mtx_header.h -- the Matrix Market banner and size line, parsed. */
#ifndef ADIA_IO_MTX_HEADER_H
#define ADIA_IO_MTX_HEADER_H

#include "source.h"

typedef enum { MTX_COORDINATE, MTX_ARRAY } mtx_format;
typedef enum { MTX_REAL, MTX_INTEGER, MTX_PATTERN } mtx_field;
typedef enum { MTX_GENERAL, MTX_SYMMETRIC, MTX_SKEW } mtx_symmetry;

typedef struct mtx_header {
    mtx_format format;
    mtx_field field;
    mtx_symmetry symmetry;
    int32_t rows, cols;
    int64_t entries;       /* data entries the file declares */
    int64_t lines;         /* header lines seen so far */
    bool done;             /* the size line is parsed: data follows */
    /* The comment lines after the banner, as written (from their '%', each
     * ended by LF, NUL-terminated; lines "% written by adia ..." left out,
     * the writer adds its own), at most MTX_COMMENTS_MAX bytes: further
     * lines are replaced by one saying so.  NULL when there are none;
     * malloc'd: adia__mtx_header_free, or taken over by the matrix. */
    char *comments;
    size_t comments_len;
    bool comments_cut;
} mtx_header;

#define MTX_COMMENTS_MAX (64 * 1024)

/* Feed the header's next line [b, e) (without its LF; a CR before it is
 * ignored): the banner, comments and blank lines, the size line (which
 * sets done).  Fields of h start zeroed. */
adia_status adia__mtx_header_line(mtx_header *h, const char *b, const char *e, const char *name);
/* The error for data that ends before the header is done. */
adia_status adia__mtx_header_end(const mtx_header *h, const char *name);
/* Free what h holds (its comments); h stays usable. */
void adia__mtx_header_free(mtx_header *h);

#endif
