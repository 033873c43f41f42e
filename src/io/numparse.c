/* numparse.c -- fast exact parsing of integers and doubles.
 *
 * Doubles: a decimal with at most 19 significant digits and a mantissa
 * below 2^53 times a power of ten in 10^-22..10^22 is computed with one
 * correctly rounded multiply or divide (both operands are exact doubles, so
 * the IEEE operation rounds the exact product once -- the same result as
 * strtod).  Everything else (more digits, larger exponents, nan, inf, hex)
 * goes to strtod on a NUL-terminated copy of the token. */
#include "numparse.h"

#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#if FLT_EVAL_METHOD != 0
#error "the fast double path needs FLT_EVAL_METHOD == 0 (no excess precision)"
#endif

static const double pow10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

const char *adia_token_end(const char *p, const char *end)
{
    while (p < end && !adia_num_delim(*p)) p++;
    return p;
}

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

adia_num_result adia_parse_i64(const char **pp, const char *end, int64_t *out)
{
    const char *p = *pp;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
    const char *digits = p;
    uint64_t m = 0;
    bool range = false;
    while (p < end && is_digit(*p)) {
        unsigned d = (unsigned)(*p++ - '0');
        if (m > (UINT64_MAX - d) / 10) range = true;
        else m = m * 10 + d;
    }
    if (p == digits || (p < end && !adia_num_delim(*p))) return ADIA_NUM_BAD;
    if (range || m > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) return ADIA_NUM_RANGE;
    *out = neg ? (int64_t)(0 - m) : (int64_t)m;
    *pp = p;
    return ADIA_NUM_OK;
}

/* strtod on a copy of the token; the whole token must be consumed. */
static adia_num_result parse_slow(const char **pp, const char *end, double *out)
{
    const char *tok = *pp, *tend = adia_token_end(tok, end);
    size_t len = (size_t)(tend - tok);
    char small[64];
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf || len == 0) return ADIA_NUM_BAD;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    char *stop;
    int saved = errno;
    double v = strtod(buf, &stop);
    errno = saved;  /* ERANGE (overflow to inf, underflow) is accepted */
    bool whole = stop == buf + len;
    if (buf != small) free(buf);
    if (!whole) return ADIA_NUM_BAD;
    *out = v;
    *pp = tend;
    return ADIA_NUM_OK;
}

adia_num_result adia_parse_f64(const char **pp, const char *end, double *out)
{
    const char *p = *pp;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
    uint64_t m = 0;
    int nd = 0, exp10 = 0, ndigits = 0;
    bool slow = false;
    for (; p < end && is_digit(*p); p++, ndigits++) {
        if (m == 0 && *p == '0') continue;       /* leading zero */
        if (nd == 19) { slow = true; continue; }
        m = m * 10 + (uint64_t)(*p - '0');
        nd++;
    }
    if (p < end && *p == '.') {
        for (p++; p < end && is_digit(*p); p++, ndigits++) {
            if (m == 0 && *p == '0') { exp10--; continue; }
            if (nd == 19) { slow = true; continue; }
            m = m * 10 + (uint64_t)(*p - '0');
            nd++;
            exp10--;
        }
    }
    if (ndigits == 0) return parse_slow(pp, end, out);   /* nan, inf, junk */
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '-' || *p == '+')) eneg = *p++ == '-';
        if (p == end || !is_digit(*p)) return parse_slow(pp, end, out);
        int e = 0;
        for (; p < end && is_digit(*p); p++)
            if (e < 100000) e = e * 10 + (*p - '0');
        exp10 += eneg ? -e : e;
    }
    if (slow || (p < end && !adia_num_delim(*p)) || m > (UINT64_C(1) << 53) ||
        (m != 0 && (exp10 < -22 || exp10 > 22)))
        return parse_slow(pp, end, out);
    double v = (double)m;
    if (m != 0) v = exp10 < 0 ? v / pow10_exact[-exp10] : v * pow10_exact[exp10];
    *out = neg ? -v : v;
    *pp = p;
    return ADIA_NUM_OK;
}
