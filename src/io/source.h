/* source.h -- where the readers' bytes come from: a file, standard input,
 * a pipe or FIFO, or text in memory; gzip-compressed data (recognised by
 * its magic bytes, not its name) is inflated and verified on the way.
 *
 * A source is read once, front to back, through a bounded buffer: nothing
 * is reopened or rewound, so pipes work, and adia__source_peek lets a
 * caller look at the first decoded bytes (format detection) without
 * consuming them.
 *
 * adia_lines, on top of a source, hands out chunks of whole lines: the
 * split into chunks is kept apart from what a line means (the parsers). */
#ifndef ADIA_IO_SOURCE_H
#define ADIA_IO_SOURCE_H

#include "internal.h"

#include <zlib.h>

typedef struct adia_source {
    const char *name;            /* for messages: the path, or "<stdin>" */
    int fd;                      /* -1: text in memory */
    bool close_fd;
    unsigned char *buf;          /* owned raw buffer (files) */
    const unsigned char *raw;    /* raw bytes: buf, or the text in memory */
    size_t raw_len, raw_pos;     /* raw[raw_pos..raw_len) not consumed yet */
    bool raw_eof;                /* nothing more to read from fd */
    int64_t raw_total;           /* raw bytes read from fd so far */
    int64_t size;                /* decoded bytes in all, -1 if not known */
    bool gz;                     /* inflating */
    bool member_end;             /* a gzip member ended: another or the end? */
    z_stream z;
    unsigned char ahead[16];     /* decoded by peek, not read yet */
    size_t ahead_len, ahead_pos;
} adia_source;

/* Open path; "-" is standard input.  Errors: "FILE: No such file or
 * directory" (strerror), "FILE: is a directory". */
adia_status adia__source_open(adia_source *s, const char *path);
/* A source over len bytes of text in memory (not copied, not freed). */
adia_status adia__source_memory(adia_source *s, const char *name, const void *text,
                               size_t len);
/* Read up to cap decoded bytes; fewer only at the end of the data. */
adia_status adia__source_read(adia_source *s, void *dst, size_t cap, size_t *got);
/* The first n (<= 16) decoded bytes without consuming them; *got < n
 * only if the data is shorter. */
adia_status adia__source_peek(adia_source *s, void *dst, size_t n, size_t *got);
void adia__source_close(adia_source *s);

/* The hint for text whose lines end in CR alone. */
#define ADIA_IO_CR_ONLY "line ends are CR only (old Mac): convert with tr '\\r' '\\n'"

/* Chunks of whole lines from a source, read into two buffers in turn: a
 * chunk stays valid while the next one is read (by another thread). */
typedef struct adia_lines {
    adia_source *src;
    char *buf[2];
    size_t cap[2];
    int cur;                     /* the buffer of the chunk handed out last */
    size_t len, used;            /* buf[cur][0..used) handed out, then the carry */
    size_t chunk, chunk_max;     /* target chunk size, growing to chunk_max */
    int64_t offset;              /* byte offset (decoded) of buf[cur][0] */
    bool eof, zero_copy;         /* zero_copy: chunks point into the text */
} adia_lines;

adia_status adia__lines_init(adia_lines *l, adia_source *src);
/* The next chunk [*b, *e): whole lines (ending in LF), except that the
 * last line of the data may lack its LF; *b == *e at the end.  The chunk
 * stays valid until the call after next: one thread may read the next
 * chunk while others parse this one. */
adia_status adia__lines_next(adia_lines *l, const char **b, const char **e);
/* Bytes of the two buffers at the first chunk's size (0 for text in
 * memory): what a read needs at least. */
int64_t adia__lines_buffer_bytes(const adia_lines *l);
/* Chunks grow only as far as room bytes hold both buffers (never below
 * the first chunk): the larger chunks of many threads are a speed-up the
 * memory budget may not leave room for. */
void adia__lines_fit(adia_lines *l, int64_t room);
void adia__lines_free(adia_lines *l);
/* Tests: the chunk size in bytes (0: the default, a few MB per thread). */
void adia__lines_set_chunk(size_t bytes);

#endif
