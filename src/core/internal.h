/*
 * internal.h -- what every module of the library shares and users never see:
 * the concrete structs behind the handles, error raising, checked size
 * arithmetic and allocation.
 */
#ifndef ADIA_INTERNAL_H
#define ADIA_INTERNAL_H

#include "adia.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- errors */

/* Record a formatted message as this thread's last error and return code.
 * Use as: return adia_error(ADIA_ERR_PARSE, "%s:%lld: bad index %s", ...); */
adia_status adia_error(adia_status code, const char *fmt, ...)
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
void *adia_alloc(size_t count, size_t size, const char *what);
/* Same, zero-filled. */
void *adia_calloc(size_t count, size_t size, const char *what);
/* ADIA_OK if an operation whose peak host memory is `bytes` fits the memory
 * budget (adia_memory_budget); else ADIA_ERR_NO_MEMORY with "WHAT needs
 * 17.2 GB, budget 12.0 GB (...)".  bytes < 0 means "beyond int64" (a
 * saturated estimate).  Call it with the whole operation's peak before any
 * work. */
adia_status adia_budget_check(int64_t bytes, const char *what);
/* Checked alloc that is allowed to fail: as adia_alloc. */
#define ADIA_ALLOC(ptr, count, what)                                           \
    do {                                                                       \
        (ptr) = adia_alloc((size_t)(count), sizeof(*(ptr)), (what));           \
        if (!(ptr)) return ADIA_ERR_NO_MEMORY;                                 \
    } while (0)

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
adia_status adia_csr_alloc(adia_csr *A, int32_t rows, int32_t cols,
                           int64_t nnz, adia_value_type vt);
void adia_csr_free(adia_csr *A);
/* Deep copy, converting values to vt. */
adia_status adia_csr_copy(const adia_csr *A, adia_value_type vt, adia_csr *out);
/* Check the invariants (rowptr monotone from 0 to nnz, columns in range,
 * sorted, unique); message says the first violation found. */
adia_status adia_csr_check(const adia_csr *A);
/* Value i as double, whatever the type. */
static inline double adia_csr_value(const adia_csr *A, int64_t i)
{
    return A->vtype == ADIA_DOUBLE ? ((const double *)A->values)[i]
                                   : (double)((const float *)A->values)[i];
}

/* ---------------------------------------------------------------- handles */

#define ADIA_MAGIC_MATRIX 0x4d415452u /* "MATR" */
#define ADIA_MAGIC_FORMAT 0x464f524du /* "FORM" */
#define ADIA_MAGIC_DEAD 0xdeadbeefu

struct adia_matrix {
    uint32_t magic;
    adia_csr csr;             /* always ADIA_DOUBLE */
    char name[128];
};

/* Wrap an adia_csr (taking ownership of its arrays) into a new handle. */
adia_status adia_matrix_wrap(adia_csr *csr, adia_matrix **out);
/* ADIA_OK if A is a live matrix handle, else an error naming func. */
adia_status adia_matrix_check_handle(const adia_matrix *A, const char *func);

/* ----------------------------------------------------------- formats */

/* The operations table every format module exports (one per file, named
 * adia_format_<name>).  A NULL slot means "not supported" and the public
 * wrapper returns ADIA_ERR_UNSUPPORTED.  impl is the module's own struct. */
typedef struct adia_format_ops {
    const char *name;         /* stable command-line name */
    const char *family;       /* "diagonal" or "row" */
    const char *description;  /* one line for --help */
    adia_status (*build)(const adia_csr *A, const adia_format_params *p,
                         adia_value_type vt, void **impl);
    adia_status (*to_csr)(const void *impl, adia_csr *out);   /* out: double */
    adia_status (*check)(const void *impl);                    /* invariants */
    void (*destroy)(void *impl);
    int64_t (*padded_zeros)(const void *impl);
    int64_t (*storage_bytes)(const void *impl);                /* arrays */
    int64_t (*spmv_bytes)(const void *impl);                   /* one SpMV */
    adia_status (*spmv)(const void *impl, double alpha, const void *x,
                        double beta, void *y);
} adia_format_ops;

/* The GPU side of a format: a separate table (src/cuda) so the CPU build has
 * no CUDA symbols.  Looked up by name; missing = ADIA_ERR_UNSUPPORTED. */
typedef struct adia_gpu_ops {
    const char *name;
    adia_status (*upload)(const void *impl, adia_value_type vt, void **dev);
    adia_status (*spmv)(const void *dev, double alpha, const void *x,
                        double beta, void *y, void *stream);
    void (*destroy)(void *dev);
} adia_gpu_ops;

/* Monotonic wall clock in milliseconds (src/core/clock.c). */
double adia_now_ms(void);

/* adia_gpu_time_spmv with x given (x_host: cols values of F's type);
 * src/cuda/bench.cu, CUDA builds only (the planner's MEASURE). */
adia_status adia_gpu_time_spmv_x(adia_format *F, int runs, const void *x_host,
                                 adia_gpu_timing *t);

/* Registry lookups (src/formats/registry.c, src/cuda/registry.cu). */
const adia_format_ops *adia_format_ops_find(const char *name);
const adia_gpu_ops *adia_gpu_ops_find(const char *name);

struct adia_format {
    uint32_t magic;
    const adia_format_ops *ops;
    adia_value_type vtype;
    int32_t rows, cols;
    int64_t nnz;              /* nonzeros of the source matrix */
    adia_format_params params;
    void *impl;               /* host storage, owned */
    const adia_gpu_ops *gpu;  /* NULL until uploaded */
    void *dev;                /* device storage, owned */
};

/* A live handle of format `name` for a rows x cols matrix of nnz nonzeros,
 * without storage (impl NULL): the builds fill it (format.c). */
adia_status adia_format_new(const char *name, const adia_format_params *p, adia_value_type vt,
                            int32_t rows, int32_t cols, int64_t nnz, adia_format **out);

/* Effective parameter: p->field if > 0 else dflt. */
static inline int32_t adia_param(int32_t value, int32_t dflt)
{
    return value > 0 ? value : dflt;
}

/* Bytes of x, y traffic of one SpMV for a rows x cols matrix (x read once,
 * y read and written once): the part of spmv_bytes every format shares. */
int64_t adia_vector_bytes(int32_t rows, int32_t cols, adia_value_type vt);

#ifdef __cplusplus
}
#endif
#endif /* ADIA_INTERNAL_H */
