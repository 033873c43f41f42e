/* measure.c -- what every checked, timed SpMV shares (`adia spmv`,
 * `adia bench`, the planner's MEASURE): the random x, the relative error,
 * the summary of timed samples and the CPU's timing loop. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

double adia_random_value(uint64_t seed, int64_t i)
{
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

double adia_rel_err(const double *y, const double *ref, int64_t n)
{
    double num = 0, den = 1e-300;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(y[i]) != isnan(ref[i])) return INFINITY;
        if (isnan(ref[i])) continue;
        if (y[i] != ref[i]) {   /* equal infinities match */
            double d = fabs(y[i] - ref[i]);
            if (!(d <= num)) num = d;
        }
        if (fabs(ref[i]) > den) den = fabs(ref[i]);
    }
    return num / den;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void adia__timing_summarize(double *ms, int n, adia_gpu_timing *t)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    t->runs = n;
    t->min_ms = ms[0];
    t->max_ms = ms[n - 1];
    t->median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

adia_status adia_cpu_time_spmv(adia_format *F, int runs, const void *x, void *y,
                               adia_gpu_timing *t)
{
    if (!F || !x || !y || !t || runs < 1)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_cpu_time_spmv: NULL argument or runs = %d",
                           runs);
    ADIA_TRY(adia_format_spmv(F, 1.0, x, 0.0, y));
    double *ms = adia__alloc((size_t)runs, sizeof *ms, "timing samples");
    if (!ms) return ADIA_ERR_NO_MEMORY;
    adia_status s = ADIA_OK;
    for (int k = 0; k < runs && s == ADIA_OK; k++) {
        double t0 = adia__now_ms();
        s = adia_format_spmv(F, 1.0, x, 0.0, y);
        ms[k] = adia__now_ms() - t0;
    }
    if (s == ADIA_OK) {
        adia__timing_summarize(ms, runs, t);
        t->batch = 1;
        t->graph = 0;
    }
    free(ms);
    return s;
}
