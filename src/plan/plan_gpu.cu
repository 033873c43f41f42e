/* plan_gpu.cu -- the planner's device measurements: streaming-read
 * bandwidth (once per process, for the cost model) and the time of an
 * uploaded format's SpMV (for the MEASURE chooser). */
#include "plan_internal.h"
#include "../cuda/cuda_util.h"

#include <stdio.h>

struct probe_result {
    adia_status status;
    double gbs;
    char message[256];
};

static probe_result run_probe()
{
    probe_result r = {ADIA_OK, 0, ""};
    /* the GPU module's streaming-read probe, 256 MiB (well past L2), 5 runs */
    r.status = adia_gpu_read_bandwidth((size_t)256 << 20, 5, &r.gbs);
    if (r.status != ADIA_OK) snprintf(r.message, sizeof r.message, "%s", adia_last_error());
    return r;
}

extern "C" adia_status adia_plan_gpu_bandwidth(double *gbs)
{
    static const probe_result once = run_probe();   /* C++11: initialised once, thread-safe */
    *gbs = once.gbs;
    if (once.status == ADIA_OK) return ADIA_OK;
    return adia_error(once.status, "GPU bandwidth probe: %s", once.message);
}

/* Median per-call time (the GPU module's batched timing) with the
 * caller's x: real values, not zeros, which can run faster than real data. */
extern "C" adia_status adia_plan_gpu_time(adia_format *F, int runs, const void *x, double *ms)
{
    adia_gpu_timing t;
    ADIA_TRY(adia_gpu_time_spmv_x(F, runs, x, &t));
    *ms = t.median_ms;
    return ADIA_OK;
}
