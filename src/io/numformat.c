/* numformat.c -- integers with a table of digit pairs; doubles with Ryu
 * (Adams, "Ryu: fast float-to-string conversion", PLDI 2018): the shortest
 * decimal inside the interval of reals that round to the double, the
 * nearest to it where several are shortest.  Exact by construction with
 * 125-bit powers of five (src/io/ryu_table.h), no big numbers and no
 * locale, several times faster than snprintf("%.17g"), and the files are
 * smaller.  This is the reference implementation's d2d, restated. */
#include "numformat.h"

#include <stdbool.h>
#include <string.h>

#include "ryu_table.h"

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static int decimal_length(uint64_t v)   /* v < 10^17: Ryu's outputs */
{
    int n = 1;
    for (uint64_t p = 10; n < 17 && v >= p; p *= 10) n++;
    return n;
}

/* The n decimal digits of v (n its length) at p, two at a time. */
static void put_digits(char *p, uint64_t v, int n)
{
    p += n;
    while (v >= 100) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) memcpy(p - 2, digit_pairs + 2 * v, 2);
    else p[-1] = (char)('0' + v);
}

char *adia__format_u32(char *p, uint32_t v)
{
    int n = decimal_length(v);
    put_digits(p, v, n);
    return p + n;
}

/* ---------------------------------------------------------------- Ryu */

/* ceil(log2(5^e)) (1 for e = 0), 0 <= e <= 3528 */
static inline int32_t pow5bits(int32_t e) { return (int32_t)(((uint32_t)e * 1217359) >> 19) + 1; }
/* floor(log10(2^e)), 0 <= e <= 1650 */
static inline uint32_t log10_pow2(int32_t e) { return ((uint32_t)e * 78913) >> 18; }
/* floor(log10(5^e)), 0 <= e <= 2620 */
static inline uint32_t log10_pow5(int32_t e) { return ((uint32_t)e * 732923) >> 20; }

static inline bool multiple_of_pow5(uint64_t v, uint32_t p)
{
    uint32_t count = 0;
    while (v % 5 == 0) {   /* v > 0 here */
        v /= 5;
        count++;
    }
    return count >= p;
}

static inline bool multiple_of_pow2(uint64_t v, uint32_t p) { return (v & ((UINT64_C(1) << p) - 1)) == 0; }

/* (m * mul) >> j for the 125-bit mul = {low, high}, j >= 64 */
static inline uint64_t mul_shift(uint64_t m, const uint64_t *mul, int32_t j)
{
    unsigned __int128 b0 = (unsigned __int128)m * mul[0];
    unsigned __int128 b2 = (unsigned __int128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

typedef struct { uint64_t mantissa; int32_t exponent; } decimal;

/* The shortest decimal of the finite, non-zero double with fields
 * (mantissa, exponent): Ryu's d2d. */
static decimal shortest(uint64_t ieee_mantissa, uint32_t ieee_exponent)
{
    /* m2 * 2^e2, with two more bits for the interval's bounds */
    int32_t e2 = (ieee_exponent ? (int32_t)ieee_exponent : 1) - 1023 - 52 - 2;
    uint64_t m2 = ieee_exponent ? UINT64_C(1) << 52 | ieee_mantissa : ieee_mantissa;
    const bool accept_bounds = (m2 & 1) == 0;   /* ties to even read back to us */
    const uint64_t mv = 4 * m2;
    /* the lower neighbour is nearer where the exponent just stepped */
    const uint32_t mm_shift = ieee_mantissa != 0 || ieee_exponent <= 1;

    /* The interval [mm, mp] around mv, times 10^-e10, as vm, vr, vp. */
    uint64_t vr, vp, vm;
    int32_t e10;
    bool vm_trailing_zeros = false, vr_trailing_zeros = false;
    if (e2 >= 0) {
        const uint32_t q = log10_pow2(e2) - (e2 > 3);
        e10 = (int32_t)q;
        const int32_t k = ADIA_RYU_INV_BITS + pow5bits((int32_t)q) - 1;
        const int32_t i = -e2 + (int32_t)q + k;
        vr = mul_shift(4 * m2, adia_ryu_pow5_inv[q], i);
        vp = mul_shift(4 * m2 + 2, adia_ryu_pow5_inv[q], i);
        vm = mul_shift(4 * m2 - 1 - mm_shift, adia_ryu_pow5_inv[q], i);
        if (q <= 21) {
            /* Exact division is possible: which of mm, mv, mp are
             * multiples of 5^q (at most one of them is a multiple of 5). */
            if (mv % 5 == 0) vr_trailing_zeros = multiple_of_pow5(mv, q);
            else if (accept_bounds) vm_trailing_zeros = multiple_of_pow5(mv - 1 - mm_shift, q);
            else vp -= multiple_of_pow5(mv + 2, q);
        }
    } else {
        const uint32_t q = log10_pow5(-e2) - (-e2 > 1);
        e10 = (int32_t)q + e2;
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = pow5bits(i) - ADIA_RYU_POW_BITS;
        const int32_t j = (int32_t)q - k;
        vr = mul_shift(4 * m2, adia_ryu_pow5[i], j);
        vp = mul_shift(4 * m2 + 2, adia_ryu_pow5[i], j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, adia_ryu_pow5[i], j);
        if (q <= 1) {
            /* mv = 4 m2 has two trailing zero bits; mm has one iff mm_shift */
            vr_trailing_zeros = true;
            if (accept_bounds) vm_trailing_zeros = mm_shift == 1;
            else --vp;   /* mp = mv + 2 is even: exclude it */
        } else if (q < 63) {
            vr_trailing_zeros = multiple_of_pow2(mv, q);
        }
    }

    /* Drop digits while the interval still holds a shorter decimal. */
    int32_t removed = 0;
    uint64_t output;
    if (vm_trailing_zeros || vr_trailing_zeros) {
        /* rare (~0.7%): the bounds or the value may be exact */
        uint32_t last = 0;
        while (vp / 10 > vm / 10) {
            vm_trailing_zeros &= vm % 10 == 0;
            vr_trailing_zeros &= last == 0;
            last = (uint32_t)(vr % 10);
            vr /= 10, vp /= 10, vm /= 10;
            removed++;
        }
        if (vm_trailing_zeros) {
            while (vm % 10 == 0) {
                vr_trailing_zeros &= last == 0;
                last = (uint32_t)(vr % 10);
                vr /= 10, vp /= 10, vm /= 10;
                removed++;
            }
        }
        if (vr_trailing_zeros && last == 5 && vr % 2 == 0) last = 4;   /* exact tie: to even */
        output = vr + ((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last >= 5);
    } else {
        bool round_up = false;
        if (vp / 100 > vm / 100) {   /* two digits at once, the usual case */
            round_up = vr % 100 >= 50;
            vr /= 100, vp /= 100, vm /= 100;
            removed += 2;
        }
        while (vp / 10 > vm / 10) {
            round_up = vr % 10 >= 5;
            vr /= 10, vp /= 10, vm /= 10;
            removed++;
        }
        output = vr + (vr == vm || round_up);   /* vm itself may lie outside */
    }
    return (decimal){output, e10 + removed};
}

/* An integer in [1, 2^53) is its own shortest decimal (the doubles around
 * it are at most 1 apart, a decimal of fewer digits at least 1 away), and
 * matrices are full of them (stencils' 26 and -1): its digits, without
 * Ryu's digit-by-digit search.  Trailing zeros may stay in the mantissa:
 * below 10^16 layout writes them the same either way.  false if
 * (mantissa, exponent) is not such an integer. */
static bool small_integer(uint64_t ieee_mantissa, uint32_t ieee_exponent, decimal *d)
{
    const int32_t e2 = (int32_t)ieee_exponent - 1023 - 52;   /* value = m2 * 2^e2 */
    if (ieee_exponent == 0 || e2 > 0 || e2 < -52) return false;
    const uint64_t m2 = UINT64_C(1) << 52 | ieee_mantissa;
    if (m2 & ((UINT64_C(1) << -e2) - 1)) return false;       /* a fraction */
    d->mantissa = m2 >> -e2;
    d->exponent = 0;
    return true;
}

/* ------------------------------------------------------------- layout */

/* n digits d (value d * 10^e) at p, as %g lays them out; returns the end. */
static char *layout(char *p, uint64_t d, int n, int32_t e)
{
    const int32_t x = e + n - 1;   /* the exponent of scientific notation */
    if (x < -4 || x > 16) {
        put_digits(p + 1, d, n);   /* d.ddd, then e+XX */
        p[0] = p[1];
        if (n > 1) p[1] = '.', p += n + 1;
        else p += 1;
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        uint32_t ax = (uint32_t)(x < 0 ? -x : x);
        if (ax >= 100) *p++ = (char)('0' + ax / 100), ax %= 100;
        memcpy(p, digit_pairs + 2 * ax, 2);
        return p + 2;
    }
    if (x < 0) {                   /* 0.000ddd */
        memcpy(p, "0.0000", (size_t)(1 - x));
        put_digits(p + 1 - x, d, n);
        return p + 1 - x + n;
    }
    if (x >= n - 1) {              /* ddd000 */
        put_digits(p, d, n);
        memset(p + n, '0', (size_t)(x - n + 1));
        return p + x + 1;
    }
    put_digits(p + 1, d, n);       /* dd.ddd */
    memmove(p, p + 1, (size_t)x + 1);
    p[x + 1] = '.';
    return p + n + 1;
}

char *adia__format_double(char *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const uint64_t mantissa = bits & ((UINT64_C(1) << 52) - 1);
    const uint32_t exponent = (uint32_t)(bits >> 52) & 0x7ff;
    if (bits >> 63) *p++ = '-';
    if (exponent == 0x7ff) {   /* glibc's %g spelling, which strtod reads */
        memcpy(p, mantissa ? "nan" : "inf", 3);
        return p + 3;
    }
    if (exponent == 0 && mantissa == 0) {
        *p = '0';
        return p + 1;
    }
    decimal d;
    if (!small_integer(mantissa, exponent, &d)) d = shortest(mantissa, exponent);
    return layout(p, d.mantissa, decimal_length(d.mantissa), d.exponent);
}
