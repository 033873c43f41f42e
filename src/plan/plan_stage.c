/* plan_stage.c -- the host side of a CSR upload's staging (plan_upload.cu):
 * a chunk copied or converted into a staging buffer with the library's
 * threads.  A single thread copies at 5-10 GB/s, below the 25-50 GB/s a
 * PCIe 4/5 link takes from pinned memory, so one thread would make the
 * pinned pipeline CPU-bound (issue 28, item 1).  Plain C (OpenMP). */
#include "plan_internal.h"

#include <string.h>

/* Below this many bytes one thread: a region's start costs more. */
#define STAGE_PARALLEL_BYTES ((size_t)1 << 20)

void adia__plan_stage(void *dst, int out_kind, const void *src, int in_kind, int64_t n)
{
    const size_t out_size = out_kind == ADIA_STAGE_F32 || out_kind == ADIA_STAGE_I32 ? 4 : 8;
    const int threads = (size_t)n * out_size < STAGE_PARALLEL_BYTES ? 1 : adia__threads();
    if (in_kind == out_kind) {
        const int64_t per = (n + threads - 1) / threads;
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int t = 0; t < threads; t++) {
            const int64_t a = (int64_t)t * per, b = a + per < n ? a + per : n;
            if (a < b)
                memcpy((char *)dst + a * out_size, (const char *)src + a * out_size,
                       (size_t)(b - a) * out_size);
        }
        return;
    }
    if (in_kind == ADIA_STAGE_F64 && out_kind == ADIA_STAGE_F32) {
        const double *s = src;
        float *d = dst;
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t i = 0; i < n; i++) d[i] = (float)s[i];
    } else {   /* row pointers narrowed: the caller checked they fit */
        const int64_t *s = src;
        int32_t *d = dst;
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t i = 0; i < n; i++) d[i] = (int32_t)s[i];
    }
}
