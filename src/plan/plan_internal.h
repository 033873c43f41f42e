/* plan_internal.h -- what the planner's files share: the plan struct, the
 * resolved hints, the cost model and the device timing helpers. */
#ifndef ADIA_PLAN_INTERNAL_H
#define ADIA_PLAN_INTERNAL_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADIA_MAGIC_PLAN 0x504c414eu /* "PLAN" */

/* At most this many candidates (formats with a model slot; registry order). */
#define ADIA_PLAN_MAX_CANDIDATES 32
/* MEASURE builds and times this many of the model's best (and CSR). */
#define ADIA_PLAN_MEASURE_TOP 4

/* Hints after defaults and checks: device is 0 or 1 here. */
typedef struct plan_hints {
    int64_t calls;
    adia_value_type vtype;
    int device;
    int device_auto;           /* the hints said -1 */
    int64_t budget;
    adia_chooser chooser;
    const char *format;
    adia_format_params params;
    double bandwidth_gbs;      /* device bandwidth used by the model */
    int bandwidth_measured;    /* 1 measured here, 0 from the hints */
    const char *bandwidth_from; /* how a CPU figure was had (static), or NULL */
    int strict;                /* FIXED: that format or an error, no fallback
                                  to CSR (a loaded plan file said it) */
    int nondeterministic;      /* 1: kernels that are not bitwise
                                  reproducible may be chosen (GPU) */
} plan_hints;

struct adia_plan {
    uint32_t magic;
    adia_format *F;            /* the chosen format, owned */
    adia__solve_parked *parked; /* a GPU solve's memory for the next, owned */
    int device;                /* 0 CPU, 1 GPU */
    adia_value_type vtype;
    adia_chooser chooser;
    int nondeterministic;      /* the hints allowed such kernels */
    int32_t rows, cols;
    int64_t nnz;
    int64_t calls;
    uint64_t hash;             /* structure of the source matrix */
    adia_format_params params;
    char matrix_name[128];
    int loaded;                /* made by adia_plan_load: no analysis */
    int from_device;           /* made from a device CSR: the GPU build chose */
    char loaded_from[256];
    int have_features;
    adia_features f;
    double bandwidth_gbs;
    int bandwidth_measured;
    const char *bandwidth_from;  /* plan_hints' */
    int n_cand;
    adia_plan_candidate cand[ADIA_PLAN_MAX_CANDIDATES];
    double cand_measured_ms[ADIA_PLAN_MAX_CANDIDATES]; /* NaN unless timed */
    double predicted_ms, measured_ms;
    double analyze_ms, build_ms;  /* wall clock of the analysis and the build */
    /* A plan made on the device (from_device): its setup's parts, for
     * adia_plan_explain's "setup" line.  upload_bytes 0: nothing uploaded
     * (the matrix was on the device already). */
    double upload_ms, compile_ms;
    double measure_ms;         /* MEASURE's other builds and the timings */
    int64_t upload_bytes;
    const char *upload_how;    /* "pageable" or "pinned" (static) */
    /* adia_plan_update_values (plan_update.c): the update hash
     * (plan_hash.h) of the pattern, once the first update matched the
     * plan's file hash or the device CSR it was made from, 0 before;
     * the last update's wall clock and how many succeeded. */
    uint64_t update_hash;
    double update_ms;
    int64_t updates;
    void *update_work;         /* device: plan_update_gpu.cu's UPDATE_WORDS unsigned long long
                                  (hash sums, the gate, refill counts),
                                  made at the first device update, freed
                                  with the plan */
    char notes[1536];          /* fallbacks and warnings, one per line */
};

/* A plan around F, chosen and built by the caller (a device CSR's plan,
 * plan_device.cu); owns F from the call on (destroyed on failure). */
adia_status adia__plan_adopt(adia_format *F, const plan_hints *h, const char *name,
                             adia_plan **out);
/* What a diagonal format's generated kernel saves over h's calls of F, in
 * ms (what its compile may cost and still repay): ADIA_CODEGEN_GAIN of the
 * generic kernel's time, spmv_ms where measured (else NaN: F's bytes at
 * the model's bandwidth, or PLAN_GPU_ASSUMED_GBS where none was had). */
double adia__plan_codegen_repay_ms(const adia_format *F, const plan_hints *h, double spmv_ms);
/* GPU MEASURE: a candidate timed later replaces the pick only when its
 * SpMV + build / calls is lower by more than this fraction.  Medians of
 * batched CUDA-event timings move a few percent between processes on small
 * matrices (bcsstk16, 4884 rows: hdi in one run, brcsd2 in the next,
 * H200 2026-11-27), so a closer race says nothing and the earlier
 * (cheaper, model-preferred) candidate is kept every run. */
#define PLAN_TIE_GPU 0.05
/* A GPU's streaming bandwidth where none was measured (GB/s): generous
 * (an H200 reads 4.5 TB/s, an H100 3.0), so an estimate errs toward
 * fewer compiles.  ASSUMED. */
#define PLAN_GPU_ASSUMED_GBS 4000.0

/* One line of the plan's notes (adia_plan_explain shows them). */
void adia__plan_note(adia_plan *P, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Defaults and checks of the public hints (NULL allowed); resolves device
 * -1 and, for a CPU plan, has the bandwidth when not given (a GPU's is
 * left 0 for adia__plan_bandwidth: the device planner does not use it). */
adia_status adia__plan_resolve_hints(const adia_plan_hints *h, plan_hints *r);
/* The model's bandwidth in r where it is still 0: a GPU's measured (once
 * per process), a CPU's as adia__plan_cpu_bandwidth_from has it. */
adia_status adia__plan_bandwidth(plan_hints *r);

/* The GPU efficiency the model gives format ops under hints h: that of
 * its non-deterministic kernel when h allows one and it is faster. */
double adia__plan_gpu_efficiency(const adia_format_ops *ops, const plan_hints *h);

/* The model for A (f: adia_matrix_analyze of A itself -- its bandwidths
 * bound the offsets the block counts index by; repeat: NULL or its rows
 * that repeat the row before, adia__analyze_rows): every predictable
 * candidate, least total_ms first; *n = how many (<= ADIA_PLAN_MAX_CANDIDATES). */
adia_status adia__plan_model(const adia_csr *A, const adia_features *f, const uint8_t *repeat,
                            const plan_hints *h, adia_plan_candidate *out, int *n);
/* The same model over csr, ell and sell alone, from the row statistics
 * of a matrix in device memory (the device planner's, when the matrix is
 * not a diagonal one): the longest row, SELL's slots and slices for
 * h->params (-1: sell refuses them), the builds on the GPU (at its
 * bandwidth, no upload). */
adia_status adia__plan_model_rows(int32_t rows, int32_t cols, int64_t nnz, int64_t row_max,
                                  int64_t sell_slots, int64_t sell_slices, const plan_hints *h,
                                  adia_plan_candidate *out, int *n);

/* adia__budget_check of what the analysis and the model pass of A
 * allocate at their peak (the larger: they run one after the other), with
 * the shape in the message; before either starts. */
adia_status adia__plan_check_budget(const adia_csr *A, const char *func);

#ifdef ADIA_HAVE_CUDA
/* A device CSR's description checked (sizes, pointer width, value type,
 * arrays present), the message prefixed with func: ADIA_ERR_INVALID_ARG. */
adia_status adia__device_csr_check(const adia_device_csr *A, const char *func);
#endif

/* A new plan for A (create and load): with analyse, the features and the
 * model's candidates first; then the chooser's format, with fallbacks. */
adia_status adia__plan_build(const adia_matrix *A, const plan_hints *h, int analyse,
                            adia_plan **out);

/* The CPU's read bandwidth in GB/s (streaming read, plan_cpu.c): from
 * ADIA_CPU_BANDWIDTH, else measured once per machine, thread count and
 * library version and kept in the cache folder.  *from (may be NULL): how
 * it was had, for adia_plan_explain (a static string). */
adia_status adia__plan_cpu_bandwidth(double *gbs);
adia_status adia__plan_cpu_bandwidth_from(double *gbs, const char **from);
/* For tests: bandwidth probes this process ran (each reads 128 MiB), and
 * forgetting the in-process bandwidth and calibration, so that the next
 * plan reads the cache folder as a new process would. */
int adia__plan_cpu_probes(void);
void adia__plan_cpu_forget(void);
/* The CPU efficiency of format ops for A: measured on this machine (once,
 * cached on disk; *measured = 1) for a matrix beyond the caches, else the
 * table's assumed eff_cpu. */
double adia__plan_cpu_efficiency(const adia_format_ops *ops, const adia_csr *A, int *measured);

/* Why a GPU plan of a host matrix must be made on the host (analysis and
 * builds there, the format uploaded) rather than by uploading the CSR once
 * and planning on the device: a static sentence, or NULL when the device
 * path applies.  given: the caller's hints (NULL allowed), h resolved.
 * ADIA_GPU_SETUP=host forces the host path (for benchmarks: both paths
 * measured on one machine); ADIA_GPU_SETUP=device or unset: as above. */
const char *adia__plan_host_route(const adia_plan_hints *given, const plan_hints *h);

/* New values of host CSR A (double) into plan P, pattern checked first
 * (plan_update.c); f names the public function in messages. */
adia_status adia__plan_update_csr(adia_plan *P, const adia_csr *A, const char *f);
/* What adia_plan_destroy frees of the updates (plan_update_gpu.cu; a
 * build without CUDA has none: plan_update_none.c). */
void adia__plan_update_free(adia_plan *P);

/* 64-bit hash of the structure (dimensions, rowptr, colind): plan_hash.h's,
 * threaded; _v1: the serial one of plan files version 1 (their check on
 * load). */
uint64_t adia__plan_structure_hash(const adia_csr *A);
uint64_t adia__plan_structure_hash_v1(const adia_csr *A);
uint64_t adia__plan_update_hash(const adia_csr *A);   /* plan_hash.h's update hash */

/* Kinds of what an upload stages (plan_stage.c). */
enum { ADIA_STAGE_F64, ADIA_STAGE_F32, ADIA_STAGE_I64, ADIA_STAGE_I32 };
/* dst[0..n) = src[0..n) converted from in_kind to out_kind (the same
 * kind: a copy; F64 -> F32; I64 -> I32), with the library's threads for
 * large n. */
void adia__plan_stage(void *dst, int out_kind, const void *src, int in_kind, int64_t n);

/* adia_plan_create on the host's path alone (never the upload-once device
 * path), why noted in its explanation: the device-CSR planner's fallback
 * for a matrix that is not diagonal, already copied to the host. */
adia_status adia__plan_create_on_host(const adia_matrix *A, const adia_plan_hints *hints,
                                      const char *why, adia_plan **plan);

/* plan.c, every build (the GPU parts do nothing without CUDA) */
/* MEASURE's host x: cols values 1 / (1 + j % 7) of vt (real values: zeros
 * can run faster than real data) and one spare; NULL when out of memory
 * (the error set).  The caller frees it. */
void *adia__plan_timing_x(int32_t cols, adia_value_type vt);
/* A GPU plan whose hints allow kernels that are not bitwise reproducible,
 * chosen by the model: its format's such kernel where the model rated the
 * format at it (plan.c; MEASURE chose by timing: nothing to do). */
adia_status adia__plan_nondeterministic(adia_plan *P, const plan_hints *h);
/* A diagonal format on its generated kernel: generic and generated timed,
 * the faster kept (plan.c); *ms (may be NULL): its time; appended to how. */
void adia__plan_keep_faster_kernel(adia_format *F, double *ms, char *how, size_t len);
/* MEASURE's kernel tuning on the GPU (plan.c): every other deterministic
 * kernel of F's table (and the non-deterministic ones where h allows them)
 * timed with the host vector x, the fastest kept; *ms: the current
 * kernel's time on entry, the kept one's on return; findings appended to
 * notes[len] as lines. */
void adia__plan_tune_kernel(const plan_hints *h, adia_format *F, const void *x, double *ms,
                            char *notes, size_t len);

#ifdef ADIA_HAVE_CUDA
/* plan_gpu.cu: streaming-read bandwidth of the current device (kept once
 * measured) and the median time of `runs` SpMVs of an uploaded format with
 * the host vector x (of the format's value type) as input. */
adia_status adia__plan_gpu_bandwidth(double *gbs);
adia_status adia__plan_gpu_time(adia_format *F, int runs, const void *x, double *ms);
/* The median per-call times ms[i] of F on each kernel k[i] (runs
 * each), x made on the device (no host vector); F left on the last. */
adia_status adia__plan_gpu_time_kernels(adia_format *F, const adia_gpu_kernel *k, int n,
                                        int runs, double *ms);
/* plan_upload.cu: a GPU plan of host matrix A made on the device: A's CSR
 * uploaded once (32-bit row pointers where the nonzeros fit, values in the
 * plan's type; pinned staging with ADIA_UPLOAD=pinned), then the device
 * planner.  ADIA_OK with *plan NULL and the reason in why[len] when the
 * device planner declines (not a diagonal matrix, over the budget) or the
 * upload finds no room: the caller plans on the host. */
adia_status adia__plan_create_from_host(const adia_matrix *A, const plan_hints *h,
                                        adia_plan **plan, char *why, size_t len);
/* plan_update_gpu.cu: P's update hash (plan_hash.h) from A, the device CSR
 * P was made from -- one pass on the device, so that the first
 * adia_plan_update_values_device_csr needs no host round trip.  A failure
 * leaves it 0 (the first update then checks on the host). */
void adia__plan_update_hash_device(adia_plan *P, const adia_device_csr *A);
#endif

#ifdef __cplusplus
}
#endif
#endif /* ADIA_PLAN_INTERNAL_H */
