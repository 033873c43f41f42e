/*
 * adia_bench.h -- the helpers of adia's benchmarks, tool and tests: SpMV
 * timings (GPU, CPU, cuSPARSE), the checked product, the shared random
 * vector, the relative error every checked SpMV reports, the bar chart of
 * the benchmark plots.  Not part of the API: this header is not installed
 * (CMakeLists.txt installs adia.h and adia_mpi.h only) and libadia.so does
 * not export these functions (they keep the library's hidden visibility);
 * the static libadia.a, which the tool, tests and benchmarks link, has them.
 * Include it after adia.h.
 */
#ifndef ADIA_BENCH_H
#define ADIA_BENCH_H

#include "adia.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------- SpMV timing (src/cuda) */

/* Per-call times (median, min, max in ms) of `runs` samples; each sample
 * times `batch` calls issued back to back (captured in a CUDA graph when
 * `graph`), as a solver issues them, so host launch latency is hidden.
 * adia_cpu_time_spmv fills it too. */
typedef struct adia_gpu_timing {
    double median_ms, min_ms, max_ms;
    int runs, batch;
    int graph;          /* 1: the batch ran as a CUDA graph */
} adia_gpu_timing;

/* Check F's GPU SpMV (current kernel) against adia_matrix_spmv on A in
 * double: random x (adia_random_value), NaN-poisoned y when beta == 0;
 * *rel_err = adia_rel_err of the two.  The caller decides the tolerance. */
adia_status adia_gpu_check_spmv(adia_format *F, const adia_matrix *A,
                                double alpha, double beta, uint64_t seed,
                                double *rel_err);
/* Time y = A*x (alpha 1, beta 0) with F's current kernel: warm-up, then
 * `runs` samples with CUDA events (see adia_gpu_timing), rotating over a
 * few x vectors. */
adia_status adia_gpu_time_spmv(adia_format *F, int runs, adia_gpu_timing *t);
/* The same with the caller's x (x_host: cols values of F's type in host
 * memory); y_host (rows values of F's type, or NULL) receives F*x. */
adia_status adia_gpu_time_spmv_x(adia_format *F, int runs, const void *x_host,
                                 void *y_host, adia_gpu_timing *t);
/* Time any queued GPU call as adia_gpu_time_spmv times a format, for a
 * peer library timed beside adia's kernels (bench/bench_peer_hdia.cu):
 * fn(ctx, i, stream) queues call i (i cycles over 0..batch-1: rotate the
 * inputs on it) on `stream` (a cudaStream_t) and returns ADIA_OK, or an
 * error that stops the timing.  Warm-up, then `runs` samples of a batch
 * of calls (a CUDA graph of them where fn's work can be captured, else
 * plain launches: t->graph says which). */
typedef adia_status (*adia_gpu_call)(void *ctx, int i, void *stream);
adia_status adia_gpu_time_call(adia_gpu_call fn, void *ctx, int runs, adia_gpu_timing *t);
/* The CPU's timing of y = F*x (alpha 1, beta 0; x, y host arrays of F's
 * type): one warm-up call (y = F*x), then `runs` calls timed one by one
 * with the wall clock (t->batch 1, t->graph 0). */
adia_status adia_cpu_time_spmv(adia_format *F, int runs, const void *x, void *y,
                               adia_gpu_timing *t);
/* The i-th value of adia's random vector for seed: uniform in [-1, 1), a
 * function of (seed, i) alone (splitmix64), so every process of a
 * distributed run and every tool draws the same x. */
double adia_random_value(uint64_t seed, int64_t i);
/* max|y - ref| / max|ref| over n values, what every checked SpMV reports
 * (max|ref| at least 1e-300); equal infinities match, a NaN on one side
 * only gives INFINITY, so that `err > tolerance` catches it. */
double adia_rel_err(const double *y, const double *ref, int64_t n);
/* The same for cusparseSpMV on A (CSR) in precision vt with algorithm alg
 * (1: CUSPARSE_SPMV_CSR_ALG1, 2: CUSPARSE_SPMV_CSR_ALG2); the result is
 * checked against the CPU reference first (*rel_err). */
adia_status adia_cusparse_time_spmv(const adia_matrix *A, adia_value_type vt,
                                    int alg, int runs, double *rel_err,
                                    adia_gpu_timing *t);

/* ------------------------------------------- benchmark plots (src/picture) */

/* Horizontal bar chart (benchmark plots): one bar per label with its value
 * and unit printed, and n_refs reference values (e.g. cuSPARSE time, the
 * bandwidth floor) as dashed vertical lines with their labels.  A value that
 * is NaN or infinite is shown as "n/a"; negative values are refused.  At most
 * 250 bars and 16 reference lines. */
adia_status adia_bar_chart_png(const char *path, const char *title, int n,
                               const char *const *labels, const double *values,
                               const char *unit, int n_refs,
                               const char *const *ref_labels,
                               const double *ref_values);

#ifdef __cplusplus
}
#endif
#endif /* ADIA_BENCH_H */
