/* numparse.h -- fast, exact number parsing for the text readers.
 *
 * Both parsers read one token starting at *p (no leading blanks), require
 * that it ends at a delimiter (blank, tab, CR, LF or end of input) and
 * advance *p past it.  They never read at or beyond end. */
#ifndef ADIA_IO_NUMPARSE_H
#define ADIA_IO_NUMPARSE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum adia_num_result {
    ADIA_NUM_OK = 0,
    ADIA_NUM_BAD = 1,       /* not a number (or junk glued to it) */
    ADIA_NUM_RANGE = 2      /* integer does not fit int64 */
} adia_num_result;

static inline bool adia_num_delim(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Optional sign, then decimal digits.  Inline: indices are the most
 * frequent tokens. */
static inline adia_num_result adia_parse_i64(const char **pp, const char *end,
                                             int64_t *out)
{
    const char *p = *pp;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
    const char *digits = p;
    while (p < end && *p == '0') p++;               /* leading zeros */
    /* 19 digits cannot overflow 64 bits: no check inside the loop */
    const char *first = p;
    uint64_t m = 0;
    while (p < end && p - first < 19 && (unsigned)(*p - '0') <= 9) m = m * 10 + (unsigned)(*p++ - '0');
    bool range = p < end && (unsigned)(*p - '0') <= 9;   /* a 20th significant digit */
    while (p < end && (unsigned)(*p - '0') <= 9) p++;
    if (p == digits || (p < end && !adia_num_delim(*p))) return ADIA_NUM_BAD;
    if (range || m > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) return ADIA_NUM_RANGE;
    *out = neg ? (int64_t)(0 - m) : (int64_t)m;
    *pp = p;
    return ADIA_NUM_OK;
}

/* Whatever strtod accepts as a whole token (decimal, exponent, nan, inf),
 * with the result strtod would give: a fast exact path for short decimals,
 * strtod itself for the rest. */
adia_num_result adia__parse_f64(const char **p, const char *end, double *out);
/* Pointer to the end of the token starting at p (first delimiter or end). */
const char *adia__token_end(const char *p, const char *end);

#endif
