/* pending.c -- TEMPORARY stubs for entry points whose modules are being
 * written; each module's author deletes its stubs here when the real
 * definitions land.  This file goes away once empty. */
#include "internal.h"

#define PENDING(what) adia_error(ADIA_ERR_UNSUPPORTED, "%s is not implemented yet", what)

/* src/gen */
adia_status adia_matrix_generate(const char *spec, adia_matrix **out) { (void)spec; (void)out; return PENDING("generators"); }
const char *adia_generator_help(void) { return ""; }
/* src/analyze */
const char *adia_matrix_type_name(adia_matrix_type t) { (void)t; return "?"; }
adia_status adia_matrix_analyze(const adia_matrix *A, const adia_search_params *p, adia_features *f) { (void)A; (void)p; (void)f; return PENDING("analysis"); }
