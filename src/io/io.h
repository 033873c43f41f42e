/* io.h -- what the files of src/io share. */
#ifndef ADIA_IO_IO_H
#define ADIA_IO_IO_H

#include "internal.h"
#include "source.h"

/* The readers, from a source opened by the caller: a Matrix Market matrix
 * (named after the source) and an adia binary matrix. */
adia_status adia__mtx_read_matrix(adia_source *src, adia_matrix **out);
adia_status adia__bin_read_source(adia_source *src, adia_matrix **out);
/* The first n (>= 8) bytes h of name are not the binary magic ADIABIN1: an
 * error saying what they are instead -- "ADIABIN" and another character
 * (another version of the format, or damage), else the 8 bytes as text and
 * hex; what_else (may be "") is appended (adia_matrix_load: nor Matrix
 * Market).  ADIA_ERR_PARSE. */
adia_status adia__bin_bad_magic(const char *name, const unsigned char *h, const char *what_else);
/* File name without folder and without a .gz, then .mtx / .bin suffix. */
void adia__io_basename(const char *path, char *out, size_t size);
/* Does path end in suffix? */
bool adia__io_has_suffix(const char *path, const char *suffix);

#endif
