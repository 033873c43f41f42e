#define _POSIX_C_SOURCE 200809L
/* clock.c -- the one monotonic wall clock of the library (planner, products,
 * solvers time their phases with it). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double adia__now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ADIA_PHASES set: each mark prints what ended and the time since the
 * mark before (the first: since the process's first mark), on stderr --
 * a developer's view of where a call's wall clock goes (docs/solvers.md). */
void adia__phase(const char *what)
{
    static int on = -1;
    static double last = 0;
    if (on < 0) on = getenv("ADIA_PHASES") != NULL;
    if (!on) return;
    const double now = adia__now_ms();
    fprintf(stderr, "adia phase %-32s %9.3f ms\n", what, last > 0 ? now - last : 0.0);
    last = now;
}
