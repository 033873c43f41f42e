/* progress.c -- see progress.h.  A ticker thread draws the line, so a step
 * that never reports a fraction (reading a file) still shows that it is
 * alive; progress_update only records the fraction. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"
#include "cli.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static struct {
    const char *what;
    double start;
    _Atomic double fraction;         /* < 0: unknown */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int running, stop, width;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static void draw(double now)
{
    double f = atomic_load(&P.fraction);
    enum { BAR = 30 };
    char bar[BAR + 1];
    if (f >= 0) {
        int full = (int)(f * BAR + 0.5);
        for (int i = 0; i < BAR; i++) bar[i] = i < full ? '#' : '.';
    } else {                         /* unknown: a moving block */
        int at = (int)((now - P.start) * 10) % BAR;
        for (int i = 0; i < BAR; i++) bar[i] = (i >= at && i < at + 4) ? '#' : '.';
    }
    bar[BAR] = '\0';
    int n = f >= 0 ? fprintf(stderr, "\r%s [%s] %3.0f%% %.0fs ", P.what, bar, 100 * f, now - P.start)
                   : fprintf(stderr, "\r%s [%s] %.0fs ", P.what, bar, now - P.start);
    if (n > P.width) P.width = n;
    fflush(stderr);
}

static void *ticker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&P.lock);
    while (!P.stop) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100000000L;     /* 0.1 s */
        if (t.tv_nsec >= 1000000000L) { t.tv_sec++; t.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&P.wake, &P.lock, &t);
        double now = cli_now();
        if (!P.stop && now - P.start >= 1.0) draw(now);
    }
    pthread_mutex_unlock(&P.lock);
    return NULL;
}

void progress_begin(const char *what)
{
    progress_end();
    P.what = what ? what : "";
    P.start = cli_now();
    atomic_store(&P.fraction, -1.0);
    P.stop = 0;
    P.width = 0;
    /* No terminal, no line; a failed thread start only loses the display. */
    P.running = isatty(2) && pthread_create(&P.thread, NULL, ticker, NULL) == 0;
}

void progress_update(double fraction)
{
    atomic_store(&P.fraction, fraction < 0 ? 0 : fraction > 1 ? 1 : fraction);
}

void progress_end(void)
{
    if (!P.running) return;
    pthread_mutex_lock(&P.lock);
    P.stop = 1;
    pthread_cond_signal(&P.wake);
    pthread_mutex_unlock(&P.lock);
    pthread_join(P.thread, NULL);
    P.running = 0;
    if (P.width > 0) {
        fprintf(stderr, "\r%*s\r", P.width, "");   /* erase the line */
        fflush(stderr);
    }
}

void progress_callback(double fraction, void *user)
{
    (void)user;
    progress_update(fraction);
}
