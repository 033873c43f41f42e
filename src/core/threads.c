/* threads.c -- how many threads an OpenMP region of the library starts.
 * Every region says num_threads(adia__threads()): OpenMP tries to start as
 * many threads as OMP_NUM_THREADS asks for, and libgomp sets a team's
 * start data up on the caller's stack, so OMP_NUM_THREADS=100000 was a
 * segfault inside GOMP_parallel.  A few threads per processor already go
 * past any speedup (they only help a region whose threads wait on I/O). */
#include "internal.h"

#include <omp.h>

int adia_thread_limit(void)
{
    int procs = omp_get_num_procs();
    return ADIA_THREADS_PER_PROC * (procs > 0 ? procs : 1);
}

int adia__threads(void)
{
    int want = omp_get_max_threads(), limit = adia_thread_limit();
    return want < 1 ? 1 : want < limit ? want : limit;
}
