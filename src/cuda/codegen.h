/* codegen.h -- the per-matrix kernel generator of the diagonal core.
 * Source generation (codegen_host.c) is plain C and is built in every
 * configuration; compiling and launching (codegen.c) needs NVRTC and the
 * CUDA driver API. */
#ifndef ADIA_CODEGEN_H
#define ADIA_CODEGEN_H

#include "internal.h"
#include "formats/diag_core.h"
#include "diag_kernel.cuh"

#ifdef __cplusplus
extern "C" {
#endif

/* Generator limits: up to this many offsets in all groups together, each
 * group is a case with literal offsets; beyond it, the warp layout gets the
 * loop form (the generic warp loop) and the per-row layout the shape form: a
 * case per group size for the sizes most pieces use, up to SHAPE_K
 * diagonals and SHAPE_TERMS unrolled terms in all (other sizes loop), so
 * every diagonal matrix gets a kernel that compiles in bounded time. */
#define ADIA_CODEGEN_MAX_TERMS 512
#define ADIA_CODEGEN_SHAPE_K 16
#define ADIA_CODEGEN_SHAPE_TERMS 512
/* Name of the generated kernel (extern "C"). */
#define ADIA_CODEGEN_KERNEL "adia_generated_spmv"

/* Source of the generated kernel for D with values of type vt (malloc'd);
 * rows: the rows per thread asked for (format parameter R, 0: chosen);
 * dot: the variant with the fused sums of adia_dot_work (diag_kernel.cuh)
 * in its epilogue (a second kernel, compiled when a solver first asks). */
adia_status adia__codegen_diag_source(const adia_diag *D, adia_value_type vt, int rows, int dot,
                                     char **source);
/* What compiling D's kernel (dot: its fused-sums variant) costs, in ms,
 * estimated from the terms its source unrolls: what the plan weighs
 * against what the kernel saves (ADIA_CODEGEN_GAIN). */
double adia__codegen_estimate_ms(const adia_diag *D, adia_value_type vt, int rows, int dot);
/* The share of a generic kernel's time its generated kernel saves: 1.27x
 * against 1.10x the floor on lap3d7 and 1.29x against 1.11x on lap2d5
 * (H200, bench/GPU-NOTES.md v4), none on type III (the loop form). */
#define ADIA_CODEGEN_GAIN 0.13
/* Rows per thread R of the warp kernels for D: the largest R <= 16 bytes /
 * value size (2 for double, 4 for float; half that when a group has more
 * than 12 diagonals, 1 beyond 64) such that every piece starts at a
 * multiple of 32*R rows; 0 when
 * pieces are not 32-aligned (then the per-row kernels are used).  want
 * (format parameter R: 1, 2 or 4; 0: chosen as above) caps R instead. */
/* The most diagonals any group of D has (the rows-per-thread rule's and
 * the few-rows kernel's input). */
int32_t adia__diag_widest_group(const adia_diag *D);
int adia__codegen_rows_per_thread(const adia_diag *D, adia_value_type vt, int want);
/* How a plan gets its generated kernel (ADIA_CODEGEN, read per plan):
 * SYNC (default, unset or "sync"): the plan waits for the compile where
 * its calls repay it (adia__gpu_diag_generate); ALWAYS ("always"): it
 * waits for it whatever the calls -- to fill the kernel cache for the
 * runs that follow (the solver's fused-sums variant likewise);
 * BACKGROUND ("background", opt-in: an intermittent crash with a warm
 * cache is not yet found, 2026-11-27): a kernel not in the cache compiles
 * on a thread while the generic kernel runs, and the format switches
 * between two calls once it is ready; OFF ("off"): the generic kernel
 * only.  A cached kernel is loaded
 * at once in BACKGROUND and SYNC.  Any other value: ADIA_ERR_INVALID_ARG. */
typedef enum adia_codegen_mode {
    ADIA_CODEGEN_BACKGROUND = 0,
    ADIA_CODEGEN_SYNC,
    ADIA_CODEGEN_OFF,
    ADIA_CODEGEN_ALWAYS
} adia_codegen_mode;
adia_status adia__codegen_mode(adia_codegen_mode *mode);
const char *adia__codegen_mode_name(adia_codegen_mode mode);

/* Record the NVRTC log of this thread's last compile. */
void adia__codegen_set_log(const char *log);
/* FNV-1a 64-bit hash of len bytes, continuing from h (start: 0). */
uint64_t adia__fnv1a(uint64_t h, const void *p, size_t len);

/* Compile src with NVRTC for sm_<arch> into a malloc'd CUBIN (no device
 * needed); the log is kept (adia_codegen_log). */
adia_status adia__codegen_nvrtc(const char *src, int arch, void **cubin, size_t *size);

/* A compiled generated kernel (codegen.c). */
typedef struct adia_codegen_kernel adia_codegen_kernel;
adia_status adia__codegen_compile(const adia_diag *D, adia_value_type vt, int rows, int dot,
                                 adia_codegen_kernel **out);
/* Blocks of a launch of k over a->rows rows. */
unsigned adia__codegen_grid(const adia_codegen_kernel *k, const adia_diag_args *a, int block);
/* dw: the fused sums' work for a dot kernel, else NULL. */
adia_status adia__codegen_launch(const adia_codegen_kernel *k, const adia_diag_args *a,
                                adia_value_type vt, double alpha, double beta,
                                const void *x, void *y, const adia_dot_work *dw, int block,
                                void *stream);
void adia__codegen_free(adia_codegen_kernel *k);

/* Is the kernel of D in the memory or disk cache (no compile needed)? */
int adia__codegen_cached(const adia_diag *D, adia_value_type vt, int rows, int dot);

/* A compile in the background (issue 28, item 4): the source and the
 * cache key made here (CUDA calls), a cached CUBIN taken at once, else
 * NVRTC on a detached thread of its own that makes no CUDA call (so it
 * never disturbs a graph capture) and fills both caches.  The job keeps
 * nothing of D (the kernel's rows per thread are taken here), so its
 * owner may go first.  The process waits at exit for the
 * compiles still running (atexit): none is cut off inside NVRTC. */
typedef struct adia_codegen_job adia_codegen_job;
adia_status adia__codegen_start(const adia_diag *D, adia_value_type vt, int rows, int dot,
                                adia_codegen_job **out);
/* 1 once the compile has finished (well or not); never blocks. */
int adia__codegen_job_ready(adia_codegen_job *j);
/* The finished job's kernel, loaded now (a CUDA call: on the launching
 * thread, outside a capture); once.  A failed compile: its status and
 * message. */
adia_status adia__codegen_job_load(adia_codegen_job *j, adia_codegen_kernel **out);
/* The owner lets go; never waits (a running compile finishes alone). */
void adia__codegen_job_release(adia_codegen_job *j);

/* diag_gpu.cu: the generated kernel for the uploaded diagonal format F as
 * mode says (a cached one loaded at once; SYNC compiles now where the
 * compile's estimate (adia__codegen_estimate_ms) is at most repay_ms, what
 * the kernel saves over the caller's calls, else keeps the generic kernel
 * -- the fused-sums variant likewise when a solver asks; BACKGROUND
 * starts the compile and F switches between two later calls once it is
 * loaded; OFF: nothing); what happened in how[len], for the plan's
 * notes.  The fused-sums variant follows when a solver first asks, in the
 * background too unless SYNC.  Not a diagonal format: ADIA_ERR_UNSUPPORTED.
 * A CUDA graph captured before the switch keeps the generic kernel it
 * captured (correct, only slower); no switch happens during a capture.
 * Generated and generic kernels agree to the tests' 1e-12 relative (not
 * bitwise): a solve across the switch may differ from one without it in
 * the last bits and by an iteration. */
adia_status adia__gpu_diag_generate(adia_format *F, adia_codegen_mode mode, double repay_ms,
                                    char *how, size_t len);
/* What F's generated kernel is doing ("generic (compiling in the
 * background)", "generated", ...), or NULL for a non-diagonal format. */
const char *adia__gpu_diag_codegen_state(const adia_format *F);
/* The device arrays of an uploaded diagonal-core format (its generic
 * kernel's arguments: offsets, pieces, data), for readers of the storage
 * such as the multigrid's set-up; NULL for any other format or before the
 * upload. */
const adia_diag_args *adia__gpu_diag_args(const adia_format *F);

#ifdef __cplusplus
}
#endif
#endif
