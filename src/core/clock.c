#define _POSIX_C_SOURCE 200809L
/* clock.c -- the one monotonic wall clock of the library (planner, products,
 * solvers time their phases with it). */
#include "internal.h"

#include <time.h>

double adia__now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}
