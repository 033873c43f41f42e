/* io.h -- what the files of src/io share. */
#ifndef ADIA_IO_IO_H
#define ADIA_IO_IO_H

#include "internal.h"

/* Read a whole file into memory (gunzipped if it starts with the gzip magic
 * bytes); *buf is malloc'ed, NUL-terminated, freed by the caller. */
adia_status adia_io_read_file(const char *path, char **buf, size_t *len);
/* File name without folder and without a .gz, then .mtx / .bin suffix. */
void adia_io_basename(const char *path, char *out, size_t size);
/* Does path end in suffix? */
bool adia_io_has_suffix(const char *path, const char *suffix);



/* An output file: plain, or gzip when the name ends in .gz. */
typedef struct adia_sink {
    const char *path;
    FILE *f;
    void *gz;          /* gzFile */
} adia_sink;

adia_status adia_sink_open(adia_sink *s, const char *path);
adia_status adia_sink_write(adia_sink *s, const void *data, size_t n);
/* Close, reporting a late write error; after a failure the file is removed. */
adia_status adia_sink_close(adia_sink *s, adia_status so_far);
#endif
