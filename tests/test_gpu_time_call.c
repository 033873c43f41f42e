/* test_gpu_time_call.c -- adia_gpu_time_call, the timing a peer library
 * gets in the benchmarks (bench/bench_peer_hdia.cu): a capturable call is
 * timed as a CUDA graph of a batch, every call index reaches fn, a
 * failing call stops the timing with its status, NULL arguments are
 * refused.  Skips (77) without a device. */
#include "testutil.h"

#include <math.h>

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else
#include <cuda_runtime.h>

typedef struct call_ctx {
    void *buf;
    size_t bytes;
    int calls, max_i, fail_at;   /* fail_at < 0: never */
} call_ctx;

static adia_status memset_call(void *arg, int i, void *stream)
{
    call_ctx *c = arg;
    c->calls++;
    if (i > c->max_i) c->max_i = i;
    if (c->fail_at >= 0 && c->calls > c->fail_at) return ADIA_ERR_CUDA;
    return cudaMemsetAsync(c->buf, i & 0xff, c->bytes, (cudaStream_t)stream) == cudaSuccess
               ? ADIA_OK : ADIA_ERR_CUDA;
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    call_ctx c = {.bytes = (size_t)64 << 20, .fail_at = -1};
    CHECK(cudaMalloc(&c.buf, c.bytes) == cudaSuccess, "cudaMalloc");
    adia_gpu_timing t;
    CHECK_OK(adia_gpu_time_call(memset_call, &c, 60, &t));
    CHECK(t.runs == 60 && t.graph == 1 && t.batch >= 1, "runs %d graph %d batch %d", t.runs,
          t.graph, t.batch);
    CHECK(t.median_ms > 0 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms,
          "times %g <= %g <= %g", t.min_ms, t.median_ms, t.max_ms);
    CHECK(c.max_i == (t.batch > 4 ? t.batch : 4) - 1, "call indices 0..%d (batch %d)", c.max_i,
          t.batch);
    c.fail_at = 2;   /* the warm-up's third call fails */
    c.calls = 0;
    CHECK(adia_gpu_time_call(memset_call, &c, 60, &t) == ADIA_ERR_CUDA, "a failing call stops it");
    CHECK_ERR(adia_gpu_time_call(NULL, &c, 60, &t), ADIA_ERR_INVALID_ARG, "NULL");
    CHECK_ERR(adia_gpu_time_call(memset_call, &c, 60, NULL), ADIA_ERR_INVALID_ARG, "NULL");
    cudaFree(c.buf);
    return TEST_END();
}
#endif
