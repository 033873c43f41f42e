/* plan_gpu.cu -- the planner's device measurements: streaming-read
 * bandwidth (kept once measured, for the cost model) and the time of an
 * uploaded format's SpMV (for the MEASURE chooser). */
#include "plan_internal.h"
#include "../cuda/cuda_util.h"

#include <mutex>

/* The first successful probe is kept for the process; a failed one (the
 * device short of memory for its 256 MiB buffer at that moment) is not, so
 * a transient shortage does not poison every later plan. */
extern "C" adia_status adia__plan_gpu_bandwidth(double *gbs)
{
    static std::mutex lock;
    static double cached = 0;
    std::lock_guard<std::mutex> hold(lock);
    if (cached <= 0) {
        /* the GPU module's streaming-read probe, 256 MiB (well past L2), 5 runs */
        adia_status s = adia_gpu_read_bandwidth((size_t)256 << 20, 5, &cached);
        if (s != ADIA_OK) {
            cached = 0;
            return adia__error(s, "GPU bandwidth probe: %s", adia_last_error());
        }
    }
    *gbs = cached;
    return ADIA_OK;
}

/* Median per-call time (the GPU module's batched timing) with the
 * caller's x: real values, not zeros, which can run faster than real data. */
extern "C" adia_status adia__plan_gpu_time(adia_format *F, int runs, const void *x, double *ms)
{
    adia_gpu_timing t;
    ADIA_TRY(adia_gpu_time_spmv_x(F, runs, x, NULL, &t));
    *ms = t.median_ms;
    return ADIA_OK;
}
