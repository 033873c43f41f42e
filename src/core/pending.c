/* pending.c -- TEMPORARY stubs for entry points whose modules are being
 * written; each module's author deletes its stubs here when the real
 * definitions land.  This file goes away once empty. */
#include "internal.h"

#define PENDING(what) adia_error(ADIA_ERR_UNSUPPORTED, "%s is not implemented yet", what)

/* src/io */
adia_status adia_matrix_read_mtx(const char *path, adia_matrix **out) { (void)path; (void)out; return PENDING("Matrix Market input"); }
adia_status adia_matrix_parse_mtx(const char *text, size_t len, const char *name, adia_matrix **out) { (void)text; (void)len; (void)name; (void)out; return PENDING("Matrix Market input"); }
adia_status adia_matrix_write_mtx(const adia_matrix *A, const char *path) { (void)A; (void)path; return PENDING("Matrix Market output"); }
adia_status adia_matrix_write_bin(const adia_matrix *A, const char *path) { (void)A; (void)path; return PENDING("binary output"); }
adia_status adia_matrix_read_bin(const char *path, adia_matrix **out) { (void)path; (void)out; return PENDING("binary input"); }
adia_status adia_matrix_load(const char *path, adia_matrix **out) { (void)path; (void)out; return PENDING("matrix loading"); }
