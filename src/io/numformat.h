/* numformat.h -- fast, exact number formatting for the text writers. */
#ifndef ADIA_IO_NUMFORMAT_H
#define ADIA_IO_NUMFORMAT_H

#include <stdint.h>

/* Longest output of adia__format_double: "-1.2345678901234567e-308". */
#define ADIA_DOUBLE_CHARS 24

/* The decimal digits of v at p; returns the end. */
char *adia__format_u32(char *p, uint32_t v);

/* v at p as the shortest decimal that reads back as exactly v (strtod,
 * adia's readers), laid out as printf's %g would lay out those digits:
 * fixed point for decimal exponents -4..16 ("26", "0.1", "1e-05",
 * "1.2345678901234567e+17"); "-0" for negative zero; NaN and infinities as
 * %.17g writes them ("nan", "-inf").  Returns the end; writes at most
 * ADIA_DOUBLE_CHARS bytes, no NUL. */
char *adia__format_double(char *p, double v);

#endif
