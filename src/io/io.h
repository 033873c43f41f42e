/* io.h -- what the files of src/io share. */
#ifndef ADIA_IO_IO_H
#define ADIA_IO_IO_H

#include "internal.h"
#include "source.h"

/* The readers, from a source opened by the caller: a Matrix Market matrix
 * (named after the source) and an adia binary matrix. */
adia_status adia__mtx_read_matrix(adia_source *src, adia_matrix **out);
adia_status adia__bin_read_source(adia_source *src, adia_matrix **out);
/* File name without folder and without a .gz, then .mtx / .bin suffix. */
void adia__io_basename(const char *path, char *out, size_t size);
/* Does path end in suffix? */
bool adia__io_has_suffix(const char *path, const char *suffix);

#endif
