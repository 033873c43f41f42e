/* mtx_header.h -- the Matrix Market banner and size line, parsed. */
#ifndef ADIA_IO_MTX_HEADER_H
#define ADIA_IO_MTX_HEADER_H

#include "internal.h"

typedef enum { MTX_COORDINATE, MTX_ARRAY } mtx_format;
typedef enum { MTX_REAL, MTX_INTEGER, MTX_PATTERN } mtx_field;
typedef enum { MTX_GENERAL, MTX_SYMMETRIC, MTX_SKEW } mtx_symmetry;

typedef struct mtx_header {
    mtx_format format;
    mtx_field field;
    mtx_symmetry symmetry;
    int32_t rows, cols;
    int64_t entries;       /* data entries the file declares */
    size_t data;           /* offset of the first byte after the size line */
    int64_t data_line;     /* 1-based line number at that offset */
} mtx_header;

/* Parse the banner, comments and size line of text[0..len). */
adia_status adia_mtx_parse_header(const char *text, size_t len, const char *name,
                                  mtx_header *h);

#endif
