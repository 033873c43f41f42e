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

#endif
