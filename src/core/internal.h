/*
 * internal.h -- what every module of the library shares and users never see:
 * the concrete structs behind the handles, error raising, checked size
 * arithmetic and allocation.
 */
#ifndef ADIA_INTERNAL_H
#define ADIA_INTERNAL_H

#include "adia.h"
#include "adia_bench.h"   /* timings, adia_random_value, adia_rel_err: not the API */

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- errors */

/* Record a formatted message as this thread's last error and return code.
 * Use as: return adia__error(ADIA_ERR_PARSE, "%s:%lld: bad index %s", ...); */
adia_status adia__error(adia_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Evaluate an adia_status expression and return it from the caller on error. */
#define ADIA_TRY(expr)                                                         \
    do {                                                                       \
        adia_status adia_try_s_ = (expr);                                      \
        if (adia_try_s_ != ADIA_OK) return adia_try_s_;                        \
    } while (0)

/* ---------------------------------------------------- checked arithmetic */

/* a*b into *out; false (and *out untouched) on overflow of int64/size_t. */
static inline bool adia_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool adia_add_i64(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}
static inline bool adia_mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
/* Saturating (at INT64_MAX) sums and products of non-negative sizes: for
 * peak-memory estimates that are compared with the budget, where "too
 * large to count" must still compare as too large. */
static inline int64_t adia_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
static inline int64_t adia_sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* malloc(count*size) with overflow check; records an error and returns
 * NULL on failure.  count == 0 returns a valid 1-byte allocation so that
 * NULL always means failure.  what names the array in the message. */
void *adia__alloc(size_t count, size_t size, const char *what);
/* Same, zero-filled. */
void *adia__calloc(size_t count, size_t size, const char *what);
/* ADIA_OK if an operation whose peak host memory is `bytes` fits the memory
 * budget (adia_memory_budget); else ADIA_ERR_NO_MEMORY with "WHAT needs
 * 17.2 GB, budget 12.0 GB (...)".  bytes < 0 means "beyond int64" (a
 * saturated estimate).  Call it with the whole operation's peak before any
 * work. */
adia_status adia__budget_check(int64_t bytes, const char *what);
/* The same against the smaller of the budget and a caller's own limit
 * (> 0; e.g. adia_spgemm_options.max_bytes), which the message names by
 * limit_name when it is the one that refuses. */
adia_status adia__budget_check_limit(int64_t bytes, int64_t limit, const char *limit_name,
                                     const char *what);
/* Device memory: ADIA_OK if bytes <= free_bytes, else ADIA_ERR_NO_MEMORY
 * with "WHAT needs 2.1 GB of device memory, 1.3 GB free on the device"
 * (the decision and the message; the query is adia__gpu_check_free). */
adia_status adia__device_memory_check(int64_t bytes, int64_t free_bytes, const char *what);
/* adia__device_memory_check against the current device's free memory
 * (cudaMemGetInfo; src/cuda/gpu_util.cu).  Call it before an upload or a
 * device allocation that scales with the input.  Without CUDA:
 * ADIA_ERR_NO_DEVICE. */
adia_status adia__gpu_check_free(int64_t bytes, const char *what);
/* Wait until the work the library queued on the legacy default stream has
 * finished: cudaMemcpy from pageable memory returns once the bytes are
 * staged, before the DMA lands, and cudaMemset and launches on stream 0
 * return at once.  A kernel on a non-blocking stream (the solver's, the
 * distributed matrix's, a caller's) does not wait for them, and under load
 * (other processes on the GPU) it read offsets that had not arrived: a
 * wrong product (tests/mpi/test_dist_gpu.c, H200, 2026-11-27).  So every
 * call that sets up device memory for later use ends with this fence; one
 * wait per object, not one per copy.  Without CUDA: ADIA_OK. */
adia_status adia__gpu_fence(const char *what);
/* Device memory a GPU solve leaves with its plan for the plan's next solve
 * (src/solve/solve_gpu.cu): the vectors of a solve are one cudaMalloc of
 * up to hundreds of MB (0.5-1 ms of a 10 ms solve at lap3d7:160), which a
 * second solve on the same plan -- a time step, another right-hand side --
 * need not pay again.  Freed with the plan, by release. */
typedef struct adia__solve_parked {
    void (*release)(struct adia__solve_parked *);
} adia__solve_parked;
/* The plan's slot for it (NULL: plan is not a live plan).  Taken and given
 * back by atomic exchange: two solves on one plan at once each get their
 * own memory. */
adia__solve_parked **adia__plan_parked(adia_plan *plan);
/* A CPU plan in format dia of a rows x rows matrix from ndiag ascending
 * offsets and their values (ndiag x rows doubles, diagonal k of row i at
 * k rows + i, the slots outside the matrix 0; taken over, freed on
 * failure too), nnz of them nonzero: no CSR, no analysis (mg's levels). */
adia_status adia__plan_create_host_dia(int32_t rows, int ndiag, const int64_t *offsets,
                                       double *values, int64_t nnz, const adia_plan_hints *hints,
                                       const char *name, adia_plan **plan);
/* adia_spmv_sums_async's work for a plan of `rows` rows, and the call on
 * its format (arguments checked; src/cuda/dot_gpu.cu).  Without CUDA: 0,
 * and ADIA_ERR_NO_DEVICE. */
size_t adia__gpu_dot_work_bytes(int64_t rows);
adia_status adia__gpu_spmv_sums(adia_format *F, double alpha, const void *x, void *y,
                                const void *xd, const void *z, double *out, void *work,
                                void *stream);
/* Checked alloc that is allowed to fail: as adia__alloc. */
#define ADIA_ALLOC(ptr, count, what)                                           \
    do {                                                                       \
        (ptr) = adia__alloc((size_t)(count), sizeof(*(ptr)), (what));           \
        if (!(ptr)) return ADIA_ERR_NO_MEMORY;                                 \
    } while (0)

/* ---------------------------------------------------------------- threads */

/* Threads of an OpenMP region: OpenMP's choice (OMP_NUM_THREADS), at most
 * adia_thread_limit(), and no more than the cores other processes leave
 * free.  Every parallel region of the library says
 * num_threads(adia__threads()) (threads.c says why). */
int adia__threads(void);
/* Cores of procs that other processes kept busy, from the clock ticks of a
 * window: all CPUs' busy ticks, this process's, and all CPUs' total
 * (their share of the machine times procs, rounded). */
int adia__busy_cores(int64_t busy, int64_t self, int64_t total, int procs);

/* path = the cache folder ($ADIA_CACHE_DIR, else ~/.cache/adia, made if
 * missing) + "/" + name; false when there is none or path is too short. */
bool adia__cache_path(const char *name, char *path, size_t len);

/* ------------------------------------------------------------------ CSR */

/* Typed CSR arrays: the master form (double) and the "csr" format (double
 * or float).  Owns its arrays. */
typedef struct adia_csr {
    int32_t rows, cols;
    int64_t nnz;
    int64_t *rowptr;
    int32_t *colind;
    void *values;             /* double* or float* by vtype */
    adia_value_type vtype;
} adia_csr;

/* Allocate arrays for rows x cols with nnz entries (rowptr zeroed). */
adia_status adia__csr_alloc(adia_csr *A, int32_t rows, int32_t cols,
                           int64_t nnz, adia_value_type vt);
void adia__csr_free(adia_csr *A);
/* Deep copy, converting values to vt. */
adia_status adia__csr_copy(const adia_csr *A, adia_value_type vt, adia_csr *out);
/* Check the invariants (rowptr monotone from 0 to nnz, columns in range,
 * sorted, unique); message says the first violation found. */
adia_status adia__csr_check(const adia_csr *A);
/* The first row breaking them (rowptr[0] = 0 given), or rows: threads,
 * no message. */
int32_t adia__csr_first_broken_row(const adia_csr *A);
/* The least and the greatest offset col - row present (0, 0 without
 * nonzeros), from each row's first and last column (A canonical): what
 * per-offset arrays need, a band's width rather than rows + cols. */
void adia__csr_offset_range(const adia_csr *A, int64_t *omin, int64_t *omax);
/* Rows r and i of A hold the same offsets (col - row) in the same order:
 * the analysis sweep and the model's block counts skip the rows a
 * stencil or band repeats. */
bool adia__csr_same_offsets(const adia_csr *A, int32_t r, int32_t i);
/* adia_matrix_analyze, and where repeat is not NULL (rows bytes, zeroed by
 * the caller) repeat[i] = 1 for the rows the sweep found to hold row
 * i - 1's offsets (0: different, or not compared): the planner's block
 * counts skip them without comparing again. */
adia_status adia__analyze_rows(const adia_matrix *A, const adia_search_params *p,
                               adia_features *f, uint8_t *repeat);
/* Value i as double, whatever the type. */
static inline double adia_csr_value(const adia_csr *A, int64_t i)
{
    return A->vtype == ADIA_DOUBLE ? ((const double *)A->values)[i]
                                   : (double)((const float *)A->values)[i];
}

/* Padded slots never multiply x (docs/formats-diagonal.md): a format
 * whose storage holds zeros beside its nonzeros (padding, the zeros of a
 * dense block or of a stored diagonal) sums every slot first, as its loop
 * runs fastest -- a stored zero adds exactly 0 to a finite sum -- and
 * recomputes a row (or a chunk of rows) whose sum is not finite with
 * adia__pad_mul, so an Inf or NaN in x reaches only the rows of its
 * nonzeros, as in CSR.  A format cannot tell an explicit zero of its
 * source from padding: that one is skipped as well there (CSR's 0 * Inf
 * is NaN). */
static inline double adia__pad_mul(double v, double x) { return v != 0.0 ? v * x : 0.0; }
/* The recount (a *_pad function beside each kernel) is rare: out of line
 * and marked cold, so the kernel's own loop compiles as before -- one
 * isfinite test per row is all it gains (0-3% more instructions per
 * product; bcsr with the recount inlined spilled around its row loop and
 * ran 7% slower). */
#if defined(__GNUC__)
#define ADIA_COLD __attribute__((cold, noinline))
#else
#define ADIA_COLD
#endif

/* --------------------------------------------------------------- analysis */

/* Host bytes adia_matrix_analyze allocates at its peak for a rows x cols
 * matrix of nnz entries: per sweeping thread, three int32 per diagonal
 * slot (rows + cols); 1.2 GB for an empty 10^8 x 10^8 matrix. */
int64_t adia__analyze_peak_bytes(int32_t rows, int32_t cols, int64_t nnz);
/* adia__budget_check of that peak, the message naming func, the shape,
 * the threads and the slots. */
adia_status adia__analyze_check_budget(const adia_csr *a, const char *func);

/* ---------------------------------------------------------------- handles */

#define ADIA_MAGIC_MATRIX 0x4d415452u /* "MATR" */
#define ADIA_MAGIC_FORMAT 0x464f524du /* "FORM" */
#define ADIA_MAGIC_DEAD 0xdeadbeefu

struct adia_matrix {
    uint32_t magic;
    adia_csr csr;             /* always ADIA_DOUBLE */
    char name[128];
    char *comments;           /* a Matrix Market file's header comment lines
                                 ("%...\n" each; src/io/mtx_header.h), written
                                 back by adia_matrix_write_mtx; NULL: none */
};

/* Wrap an adia_csr (taking ownership of its arrays) into a new handle. */
adia_status adia__matrix_wrap(adia_csr *csr, adia_matrix **out);
/* The caller's CSR arrays (checked as adia_matrix_create_csr checks them,
 * in func's words) as *view, a matrix that reads them in place -- never
 * destroyed, valid while they are -- where they are canonical (columns
 * ascending and unique in every row) with double values: *viewed 1;
 * else *viewed 0 (the caller copies them: adia_matrix_create_csr). */
adia_status adia__matrix_view_csr(int32_t rows, int32_t cols, int64_t nnz, const int64_t *rowptr,
                                  const int32_t *colind, const void *values,
                                  adia_value_type vt, const char *func, adia_matrix *view,
                                  int *viewed);
/* ADIA_OK if A is a live matrix handle, else an error naming func. */
adia_status adia__matrix_check_handle(const adia_matrix *A, const char *func);

/* ----------------------------------------------------------- formats */

/* What a format is, as one operations table per format (PETSc's Mat ops,
 * BLIS's reference-then-override): every module exports one table,
 * adia__format_<name>, with named slots (designated initialisers); the
 * registry (src/formats/registry.c, one line per format) resolves it once:
 *
 *  - a slot the module leaves NULL gets its one documented fallback there
 *    (adia__format_resolve), so callers test a slot once and never a name;
 *  - a diagonal format names only its partition policy (diag.policy): the
 *    diagonal core fills build, to_csr, check, destroy, padded_zeros,
 *    storage_bytes and spmv, and codegen / spy overlay accept it;
 *  - the GPU slots (gpu) come from the format's .cu file (adia__gpu_<name>),
 *    named in the registry line; NULL in a build without CUDA and for a
 *    format without a GPU kernel -- the planner and `adia bench` learn it here;
 *  - bytes moved per SpMV are derived once: storage_bytes + the x, y
 *    traffic (adia__vector_bytes), never a slot.
 * A slot still NULL after resolution returns ADIA_ERR_UNSUPPORTED. */
struct adia_diag_partition;   /* src/formats/diag_core.h */
typedef adia_status (*adia_diag_policy_fn)(const adia_csr *A, const adia_format_params *p,
                                           struct adia_diag_partition *part);
/* Rows per piece (*size, the last piece shorter) of a diagonal format that
 * cuts a matrix of `rows` rows into equal pieces, each keeping the
 * diagonals with a nonzero in it, for parameters p: the shape the device
 * build (src/cuda/diag_build.cu) makes. */
typedef adia_status (*adia_diag_piece_rows_fn)(const adia_format_params *p, int32_t rows,
                                               int32_t *size);

/* Distinct offsets per block of rows (one O(nnz) pass, plan_model.c):
 * slots = sum K_b * len_b, offsets = sum K_b, groups = runs of blocks with
 * differing offset sets (an upper bound of the core's groups), kmax. */
typedef struct adia_block_count {
    int64_t blocks, slots, offsets, groups, group_offsets, kmax;
} adia_block_count;

/* What the planner knows of A before building anything (plan_model.c
 * fills it once per plan; a format's model.storage reads it). */
typedef struct adia_model_input {
    const adia_csr *A;
    const adia_features *f;
    const adia_format_params *p;
    adia_value_type vtype;
    adia_block_count block;       /* per B-row block (B = block_rows, 256)   */
    adia_block_count hack;        /* per HDI hack (hack, 128)                */
    int64_t sell_slots, sell_slices;  /* SELL-C-sigma; -1: sell refuses p   */
} adia_model_input;

/* What one GPU thread walks in sequence (the model's latency term): the
 * longest row, the diagonals, the most offsets in one hack / B-row block. */
typedef enum adia_model_steps {
    ADIA_STEPS_ROW_MAX = 0, ADIA_STEPS_N_DIAG, ADIA_STEPS_HACK, ADIA_STEPS_BLOCK
} adia_model_steps;

/* The planner's cost model of a format (plan_model.c says what the
 * constants mean and where they were measured).  storage NULL: the model
 * never proposes the format (RULES and FIXED still may). */
typedef struct adia_format_model {
    /* Predicted bytes of the arrays (-1: not predictable for these
     * parameters); *exact = 1 when equal to storage_bytes of the build. */
    int64_t (*storage)(const adia_model_input *in, int *exact);
    double eff_cpu, eff_gpu;      /* fraction of streaming bandwidth reached */
    int launches, passes;         /* kernel launches per SpMV, CSR passes to build */
    double base_us, step_us;      /* GPU small-matrix regime (fits, H200)    */
    adia_model_steps steps;
} adia_format_model;

struct adia_dot_work;   /* src/cuda/diag_kernel.cuh */

struct adia_format_ops;

/* The GPU side of a format (a .cu file; NULL slots: see adia_format_ops). */
typedef struct adia_gpu_ops {
    /* Copy the host storage to the device; p: the handle's parameters
     * (kernel variant, threads per row, rows per thread, interleaving). */
    adia_status (*upload)(const void *impl, adia_value_type vt, const adia_format_params *p,
                          void **dev);
    adia_status (*spmv)(const void *dev, double alpha, const void *x,
                        double beta, void *y, void *stream);
    void (*destroy)(void *dev);
    unsigned kernels;             /* (1u << adia_gpu_kernel) of each variant
                                     adia_format_set_kernel accepts; 0: one
                                     kernel, no choice                      */
    /* A kernel of `kernels` that is faster but not bitwise reproducible
     * (0: none) and the fraction of the streaming bandwidth it reaches:
     * the planner's model rates the format at it, and chooses it, only
     * when the hints allow such kernels (adia_plan_hints.nondeterministic) */
    adia_gpu_kernel kernel_nondet;
    double eff_nondet;
    /* Optional (NULL: the fallback in brackets). */
    /* spmv with the sums of adia_dot_work (diag_kernel.cuh: x'y, z'x, z'z,
     * y'y, z'y; square) in its epilogue [spmv, then a pass for the sums:
     * adia__format_spmv_dot_gpu] */
    adia_status (*spmv_dot)(const void *dev, double alpha, const void *x, double beta,
                            void *y, const struct adia_dot_work *dw, void *stream);
    /* build format `self` from CSR arrays in device memory (GPU solvers)
     * [download the CSR, host build, upload]; the diagonal formats with
     * diag.piece_rows have one */
    adia_status (*build_device)(const struct adia_format_ops *self, int32_t rows,
                                int32_t cols, int64_t nnz, const int64_t *d_rowptr,
                                const int32_t *d_colind, const double *d_values,
                                const adia_format_params *p, adia_value_type vt,
                                adia_format **out);
    /* the device's data into the host storage impl: a format built on the
     * device leaves its host copy to the first host use (adia__format_host) */
    adia_status (*download)(const void *dev, void *impl);
    /* A(i,i) of every row into d (rows values of vt in device memory, 0
     * where A(i,i) is not stored), queued on stream, read from the device
     * storage alone [the host diagonal uploaded: adia__format_diagonal_gpu] */
    adia_status (*diagonal)(const void *dev, void *d, adia_value_type vt, void *stream);
    /* New values of the upload's own pattern from a CSR in device memory,
     * written in place on the device: kernels queued on the default
     * stream after the caller's pattern check, each returning at once
     * unless *gate (device memory, the check's verdict) is nonzero;
     * count[0] += the values zero in the upload's value type where the
     * host storage keeps zeros apart (the diagonal core's zero lists),
     * count[1] += entries that fit no slot (the caller reads both back
     * with the verdict: one wait).  Only with download (the host copy is
     * left stale) [adia_plan_update_values_device_csr's host path: the CSR
     * to the host, the format refilled or rebuilt there, uploaded] */
    adia_status (*refill)(void *dev, const adia_device_csr *A, const unsigned long long *gate,
                          unsigned long long *count);
} adia_gpu_ops;

typedef struct adia_format_ops {
    const char *name;         /* stable command-line name */
    const char *description;  /* one line for --help */
    /* Kind of storage: the diagonal core's partition policy (the format is
     * an adia_diag, diag_core.h; per_piece: HDI's offsets per piece), or
     * policy NULL: the module's own storage.  piece_rows: set when the
     * policy cuts equal pieces that keep their present diagonals, which
     * the device can build too (NULL: pieces cut otherwise, host build
     * only).  A policy gets the core's GPU table from the registry. */
    struct {
        adia_diag_policy_fn policy;
        int per_piece;
        adia_diag_piece_rows_fn piece_rows;
    } diag;
    /* to_csr cannot tell a stored explicit zero from padding (it keeps the
     * nonzeros): the handle keeps the source's explicit zeros apart and
     * adia_format_to_matrix merges them back (format.c), so the round trip
     * is exact for every format. */
    int zeros_apart;
    /* host [diagonal core's for diag.policy] */
    adia_status (*build)(const adia_csr *A, const adia_format_params *p,
                         adia_value_type vt, void **impl);
    adia_status (*to_csr)(const void *impl, adia_csr *out);   /* out: double */
    adia_status (*check)(const void *impl);                    /* invariants */
    void (*destroy)(void *impl);
    int64_t (*padded_zeros)(const void *impl);
    int64_t (*storage_bytes)(const void *impl);                /* arrays */
    adia_status (*spmv)(const void *impl, double alpha, const void *x,
                        double beta, void *y);
    /* A(i,i) of every row into d (F->rows host doubles: the stored value
     * exactly, 0 where A(i,i) is not stored), F's host storage complete;
     * the handle, not impl, since the reference needs the explicit zeros
     * it keeps apart [the reference: adia__format_diagonal_ref; the
     * diagonal core's for diag.policy] */
    adia_status (*diagonal)(const adia_format *F, double *d);
    /* New values of the build's own pattern into impl in place (A: the
     * master CSR, double; the pattern checked by the caller: a mismatch
     * found here is ADIA_ERR_INTERNAL).  [the reference: a build from A
     * swapped in, adia_plan_update_values; the diagonal core's for
     * diag.policy] */
    adia_status (*refill)(void *impl, const adia_csr *A);
    /* the planner's cost model [never proposed by the model] */
    adia_format_model model;
    /* GPU side: set by the registry from its line (never by the module) */
    const adia_gpu_ops *gpu;
} adia_format_ops;

/* Defines fn, an spmv slot over storage TYPE whose kernel is written once
 * and instantiated per value type (FN(kernel) in a *_kernel.inc gives
 * kernel_d and kernel_f): the instance for VT runs on ARG (VT and ARG are
 * expressions of `A`, the storage).  The one double/float dispatch of the
 * formats with their own storage; put `static` in front for a file-local
 * slot. */
#define ADIA_SPMV_SLOT(fn, kernel, TYPE, ARG, VT)                              \
    adia_status fn(const void *impl, double alpha, const void *x, double beta,  \
                   void *y)                                                     \
    {                                                                           \
        const TYPE *A = impl;                                                   \
        if ((VT) == ADIA_DOUBLE) kernel##_d(ARG, alpha, x, beta, y);            \
        else kernel##_f(ARG, alpha, x, beta, y);                                \
        return ADIA_OK;                                                         \
    }

/* The explicit zeros of a source kept apart by a zeros_apart format:
 * row-sorted positions and their values as stored (-0.0 stays -0.0). */
typedef struct adia__zeros {
    int64_t n;
    int32_t *row, *col;
    double *val;
} adia__zeros;

/* Monotonic wall clock in milliseconds (src/core/clock.c). */
double adia__now_ms(void);
/* With ADIA_PHASES set: "what" and the milliseconds since the last mark,
 * on stderr; else nothing (src/core/clock.c). */
void adia__phase(const char *what);

/* t's median, min and max of the n samples ms[] (sorted in place): the
 * one summary of the CPU's and the GPU's timings (src/core/measure.c). */
void adia__timing_summarize(double *ms, int n, adia_gpu_timing *t);

/* Registry lookups (src/formats/registry.c): the resolved tables. */
const adia_format_ops *adia__format_ops_find(const char *name);
const adia_format_ops *adia__format_ops_at(int i);   /* 0 .. adia_format_count()-1 */
/* The registry's names, ", "-separated, filtered by `diagonal` (-1: all,
 * 1: the diagonal core's formats, 0: the others): for messages. */
const char *adia__format_list(int diagonal);

struct adia_format {
    uint32_t magic;
    const adia_format_ops *ops;
    adia_value_type vtype;
    int32_t rows, cols;
    int64_t nnz;              /* nonzeros of the source matrix */
    adia_format_params params;
    void *impl;               /* host storage, owned */
    void *dev;                /* device storage (ops->gpu), owned; NULL until uploaded */
    adia__zeros zeros;        /* ops->zeros_apart: the source's explicit zeros */
    int host_stale;           /* built on the device: impl's data not yet
                                 downloaded (adia__format_host)            */
};

/* F's host storage complete (downloads the data of a format built on the
 * device, once; thread-safe): every host use of impl's data calls it. */
adia_status adia__format_host(const adia_format *F);

/* 1: F's GPU product takes adia_spmv_sums_async's sums in its epilogue
 * (a gpu->spmv_dot slot), 0: they cost a pass of their own (the solvers'
 * bytes per iteration). */
int adia__format_sums_fused(const adia_format *F);

/* A(i,i) of F's rows (n = F->rows host doubles, 0 where A(i,i) is not
 * stored; rows >= cols have none), exactly as stored (src/formats/
 * diagonal.c).  A format on the device (uploaded, or built there:
 * host_stale) is read there and n values come back, never the format; a
 * host format through its diagonal slot.  The jacobi preconditioner and
 * the solvers' Jacobi read it. */
adia_status adia__format_diagonal(const adia_format *F, double *d_host);
/* The reference: adia_format_to_matrix and a scan of each row (the
 * resolved diagonal slot of every format without a faster one). */
adia_status adia__format_diagonal_ref(const adia_format *F, double *d);
/* The same on the device: F->rows values of vt into d_dev (device memory),
 * queued on stream, F uploaded (src/cuda/diagonal_gpu.cu): the GPU table's
 * diagonal slot, else the host diagonal uploaded.  Without CUDA:
 * ADIA_ERR_NO_DEVICE. */
adia_status adia__format_diagonal_gpu(const adia_format *F, void *d_dev, adia_value_type vt,
                                      void *stream);
/* The device route of adia__format_diagonal: F's device diagonal, its n
 * values downloaded as doubles (diagonal_gpu.cu; without CUDA:
 * ADIA_ERR_NO_DEVICE). */
adia_status adia__format_diagonal_download(const adia_format *F, double *d_host);

/* A live handle of format `name` for a rows x cols matrix of nnz nonzeros,
 * without storage (impl NULL): the builds fill it (format.c). */
adia_status adia__format_new(const char *name, const adia_format_params *p, adia_value_type vt,
                            int32_t rows, int32_t cols, int64_t nnz, adia_format **out);

/* The build slot, or the diagonal core's build through ops->diag.policy. */
adia_status adia__format_build_impl(const adia_format_ops *ops, const adia_csr *A,
                                    const adia_format_params *p, adia_value_type vt, void **impl);

/* Explicit zeros (src/core/zeros.c): collect the entries of A whose value
 * in vt is zero (row-sorted); merge them back into a CSR that lacks them
 * (out is replaced; n == 0: untouched); free. */
adia_status adia__zeros_collect(const adia_csr *A, adia_value_type vt, adia__zeros *z);
adia_status adia__zeros_merge(const adia__zeros *z, adia_csr *out);
void adia__zeros_free(adia__zeros *z);

/* adia_format_params.interleave values (0: when it pays). */
#define ADIA_INTERLEAVE_OFF 1
#define ADIA_INTERLEAVE_FORCE 2
/* adia_format_params.stage values (0: when it pays). */
#define ADIA_STAGE_OFF 1
#define ADIA_STAGE_FORCE 2

/* Effective parameter: p->field if > 0 else dflt. */
static inline int32_t adia_param(int32_t value, int32_t dflt)
{
    return value > 0 ? value : dflt;
}

/* Bytes of x, y traffic of one SpMV for a rows x cols matrix (x read once,
 * y read and written once): adia_format_bytes = storage_bytes + this. */
int64_t adia__vector_bytes(int32_t rows, int32_t cols, adia_value_type vt);

#ifdef __cplusplus
}
#endif
#endif /* ADIA_INTERNAL_H */
