/* threads.c -- how many threads an OpenMP region of the library starts.
 * Every region says num_threads(adia__threads()): OpenMP tries to start as
 * many threads as OMP_NUM_THREADS asks for, and libgomp sets a team's
 * start data up on the caller's stack, so OMP_NUM_THREADS=100000 was a
 * segfault inside GOMP_parallel.  A few threads per processor already go
 * past any speedup (they only help a region whose threads wait on I/O).
 *
 * Cores that other processes keep busy are left to them: a statically
 * scheduled region whose thread shares a core with a busy process waits
 * for the scheduler to hand that core back, so on 2 cores with one busy
 * every 2-thread product took whole 4 ms scheduler slices (8.000, 16.000
 * ms: issue 20) where one thread alone took 2.5-7 ms.  The load is read
 * from /proc (Linux) at most every LOAD_PERIOD_MS; docs/threads.md. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>

/* Sampling period of the load: a /proc read costs tens of microseconds,
 * and its clock ticks (10 ms) make shorter windows too coarse. */
#define LOAD_PERIOD_MS 100.0

int adia_thread_limit(void)
{
    int procs = omp_get_num_procs();
    return ADIA_THREADS_PER_PROC * (procs > 0 ? procs : 1);
}

int adia__busy_cores(int64_t busy, int64_t self, int64_t total, int procs)
{
    if (total <= 0 || busy <= self) return 0;
    double cores = (double)(busy - self) / (double)total * procs;
    int n = (int)(cores + 0.5);
    return n < procs ? n : procs;
}

/* Busy and total clock ticks of all CPUs (/proc/stat's first line: user
 * nice system idle iowait irq softirq steal; guest time is inside user)
 * and this process's user + system ticks; false where /proc is missing. */
static bool read_ticks(int64_t *busy, int64_t *total, int64_t *self)
{
    long long v[8] = {0}, ut = 0, st = 0;
    char line[1024];
    FILE *f = fopen("/proc/stat", "r");
    bool ok = f && fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2],
                          &v[3], &v[4], &v[5], &v[6], &v[7]) == 8;
    if (f) fclose(f);
    f = ok ? fopen("/proc/self/stat", "r") : NULL;
    /* fields after the command name (which may hold spaces and ')'):
     * state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    char *close = f && fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
    ok = close && sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld",
                         &ut, &st) == 2;
    if (f) fclose(f);
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    *total = *busy + v[3] + v[4];
    *self = ut + st;
    return ok;
}

/* Cores other processes kept busy over the last sampling window (0 before
 * the second sample, or without /proc).  Samples are taken by whichever
 * caller first finds the period over; others read the last figure. */
static int busy_cores(void)
{
    static _Atomic int busy;
    static _Atomic double next_ms;
    double now = adia__now_ms();
    if (now < atomic_load_explicit(&next_ms, memory_order_relaxed))
        return atomic_load_explicit(&busy, memory_order_relaxed);
#pragma omp critical(adia__threads_load)
    if (now >= atomic_load(&next_ms)) {
        static int64_t last[3];
        static bool have_last;
        int64_t t[3];
        bool ok = read_ticks(&t[0], &t[1], &t[2]);
        if (ok && have_last)
            atomic_store(&busy, adia__busy_cores(t[0] - last[0], t[2] - last[2], t[1] - last[1],
                                                omp_get_num_procs()));
        memcpy(last, t, sizeof last);
        have_last = ok;
        atomic_store(&next_ms, now + LOAD_PERIOD_MS);
    }
    return atomic_load(&busy);
}

int adia__threads(void)
{
    int want = omp_get_max_threads(), limit = adia_thread_limit();
    int n = want < 1 ? 1 : want < limit ? want : limit;
    int busy = busy_cores(), free = omp_get_num_procs() - busy;
    return busy == 0 || n <= free ? n : free > 1 ? free : 1;
}

int adia_threads(void) { return adia__threads(); }
