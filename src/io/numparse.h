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

/* Eight characters at once (SWAR), loaded little-endian: the first one in
 * the lowest byte.  How many of them, from the first, are digits (8: all).
 * Per byte, digit = high nibble 3 and high nibble still 3 after adding 6;
 * a carry out of a byte >= 0xFA reaches only bytes after a non-digit. */
static inline int adia_swar_digits(uint64_t x)
{
    uint64_t t = ((x & UINT64_C(0xF0F0F0F0F0F0F0F0)) ^ UINT64_C(0x3030303030303030)) |
                 (((x + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) ^
                  UINT64_C(0x3030303030303030));
    return t ? __builtin_ctzll(t) >> 3 : 8;
}

/* The number written by the eight digits of x (first digit most
 * significant): pairs, then quads, then the eight, by multiply-shifts. */
static inline uint64_t adia_swar_value(uint64_t x)
{
    x = ((x & UINT64_C(0x0F0F0F0F0F0F0F0F)) * 2561) >> 8;           /* 10*2^8 + 1 */
    x = ((x & UINT64_C(0x00FF00FF00FF00FF)) * 6553601) >> 16;       /* 100*2^16 + 1 */
    return ((x & UINT64_C(0x0000FFFF0000FFFF)) * UINT64_C(42949672960001)) >> 32;
}

/* The number written by the first n (1..8) characters of x, all digits:
 * shifted to the top, the bytes below read as leading zeros. */
static inline uint64_t adia_swar_prefix_value(uint64_t x, int n)
{
    return adia_swar_value((x & UINT64_C(0x0F0F0F0F0F0F0F0F)) << (8 * (8 - n)));
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
