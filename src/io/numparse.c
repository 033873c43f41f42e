/* numparse.c -- fast exact parsing of integers and doubles.
 *
 * Doubles: a decimal with at most 19 significant digits m and a power of
 * ten 10^e is computed with one correctly rounded multiply or divide:
 *  - m < 2^53 and |e| <= 22: in double (both operands exact, so the IEEE
 *    operation rounds the exact value once -- what strtod gives);
 *  - otherwise, where long double is x87 extended (64-bit mantissa) and
 *    |e| <= 27: in long double (m < 2^64 and 10^27 = 2^27 * 5^27 with
 *    5^27 < 2^64 are exact), then rounded to double.  That double rounding
 *    is wrong only when the long double result lies exactly on a midpoint
 *    between two doubles (a nearer 64-bit value would otherwise exist), so
 *    that case goes to strtod.
 * Everything else (more digits, larger exponents, nan, inf, hex) goes to
 * strtod on a NUL-terminated copy of the token. */
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

const char *adia__token_end(const char *p, const char *end)
{
    while (p < end && !adia_num_delim(*p)) p++;
    return p;
}

#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#define HAVE_X87_LONG_DOUBLE 1
static const long double pow10_ld[28] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

/* m * 10^e through x87 extended precision; false if the result is a
 * double midpoint (then only strtod knows which way to round). */
static bool scale_extended(uint64_t m, int e, double *out)
{
    long double r = e < 0 ? (long double)m / pow10_ld[-e] : (long double)m * pow10_ld[e];
    uint64_t mant;
    memcpy(&mant, &r, sizeof mant);   /* x87 layout: 64-bit mantissa first */
    if ((mant & 0x7ff) == 0x400) return false;
    *out = (double)r;
    return true;
}
#endif

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* ------------------------------------------------- Eisel-Lemire */
/* w * 10^q (w != 0, at most 19 digits) correctly rounded to the nearest
 * double, ties to even, with one or two 64 x 64 -> 128-bit products by a
 * 128-bit approximation of 5^q (Lemire 2021; Mushtak and Lemire 2023 prove
 * two products always suffice).  false: out of the normal range (zero,
 * subnormal or overflow), left to the caller's slower paths. */
#include "pow5_table.h"

static inline void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    *hi = (uint64_t)(r >> 64);
    *lo = (uint64_t)r;
}

static bool eisel_lemire(uint64_t w, int q, double *out)
{
    if (w == 0 || q < ADIA_POW5_MIN || q > ADIA_POW5_MAX) return false;
    const int lz = __builtin_clzll(w);
    w <<= lz;
    const uint64_t *t = adia_pow5_128 + 2 * (q - ADIA_POW5_MIN);
    uint64_t hi, lo;
    mul_64x64(w, t[0], &hi, &lo);
    const uint64_t mask = UINT64_MAX >> 55;   /* 53 + 2 bits of precision asked */
    if ((hi & mask) == mask) {                /* the low half may carry into them */
        uint64_t hi2, lo2;
        mul_64x64(w, t[1], &hi2, &lo2);
        lo += hi2;
        hi += lo < hi2;
    }
    const int upper = (int)(hi >> 63), shift = upper + 9;
    uint64_t mant = hi >> shift;
    int32_t pow2 = (int32_t)((((152170 + 65536) * q) >> 16) + 63) + upper - lz + 1023;
    if (pow2 <= 0) return false;              /* subnormal or zero */
    /* exactly halfway: round to even (only q in [-4, 23] can land there) */
    if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1 && (mant << shift) == hi)
        mant &= ~UINT64_C(1);
    mant += mant & 1;
    mant >>= 1;
    if (mant >= UINT64_C(1) << 53) {          /* rounding carried into a new bit */
        mant = UINT64_C(1) << 52;
        pow2++;
    }
    mant &= ~(UINT64_C(1) << 52);
    if (pow2 >= 0x7ff) return false;          /* overflow */
    const uint64_t bits = mant | (uint64_t)pow2 << 52;
    memcpy(out, &bits, sizeof *out);
    return true;
}

/* strtod on a copy of the token; the whole token must be consumed. */
static adia_num_result parse_slow(const char **pp, const char *end, double *out)
{
    const char *tok = *pp, *tend = adia__token_end(tok, end);
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

static const uint64_t pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                      100000000};

/* Accumulate a run of digits into *m, eight characters at a time where
 * eight are left (the run's last, partial group too); returns the number
 * of digits (the caller treats more than 19 as "too long", *m is then
 * meaningless). */
static inline int digit_run(const char **pp, const char *end, uint64_t *m)
{
    const char *p = *pp, *start = p;
    uint64_t v = *m;
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        int n = adia_swar_digits(x);
        if (n == 0) break;
        v = v * pow10_u64[n] + adia_swar_prefix_value(x, n);
        p += n;
        if (n < 8) break;
    }
    while (p < end && is_digit(*p)) v = v * 10 + (uint64_t)(*p++ - '0');
    *m = v;
    *pp = p;
    return (int)(p - start);
}

adia_num_result adia__parse_f64(const char **pp, const char *end, double *out)
{
    const char *p = *pp;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
    uint64_t m = 0;
    int exp10 = 0, ndigits = 0;
    const char *zeros = p;
    while (p < end && *p == '0') p++;               /* leading zeros */
    ndigits = p > zeros;
    int nd = digit_run(&p, end, &m);
    ndigits += nd;
    if (p < end && *p == '.') {
        zeros = ++p;
        if (m == 0)
            while (p < end && *p == '0') p++;       /* 0.000ddd: only scale */
        if (p - zeros > 100000) return parse_slow(pp, end, out);   /* absurd: strtod */
        int lz = (int)(p - zeros), fd = digit_run(&p, end, &m);
        nd += fd;
        exp10 -= lz + fd;
        ndigits += lz + fd;
    }
    bool slow = nd > 19;
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
    if (slow || (p < end && !adia_num_delim(*p))) return parse_slow(pp, end, out);
    double v = 0.0;
    if (m != 0 && m <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22) {
        v = exp10 < 0 ? (double)m / pow10_exact[-exp10] : (double)m * pow10_exact[exp10];
    } else if (m != 0 && !eisel_lemire(m, exp10, &v)) {
#ifdef HAVE_X87_LONG_DOUBLE
        if (exp10 < -27 || exp10 > 27 || !scale_extended(m, exp10, &v))
            return parse_slow(pp, end, out);
#else
        return parse_slow(pp, end, out);
#endif
    }
    *out = neg ? -v : v;
    *pp = p;
    return ADIA_NUM_OK;
}
