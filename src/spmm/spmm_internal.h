/*
 * spmm_internal.h -- the plan of one diagonal product C = op(A) op(B),
 * shared by the structure phase (spmm.c), the CPU kernels (spmm_hm.c,
 * spmm_cdm.c) and the GPU kernel (src/cuda/spmm.cu).
 *
 * Offsets are always ascending here (the HM format's seed order is a
 * storage detail).  A diagonal set stores the value at (i, i + off[d]) at
 * list[base[d] + i]; for op = T the view of diagonal o of X is diagonal -o
 * of X^T with the same values, so only off and base change.
 */
#ifndef ADIA_SPMM_INTERNAL_H
#define ADIA_SPMM_INTERNAL_H

#include "hm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* op(X) as diagonals: structure from the master CSR, storage on demand. */
typedef struct spmm_operand {
    const adia_csr *csr;      /* the master matrix X */
    adia_op op;
    int32_t rows, cols;       /* of op(X) */
    int32_t dg;
    int32_t *off;             /* ascending offsets of op(X) */
    int64_t stored;           /* values of its HM storage */
    /* HM storage (adia__spmm_operand_store): */
    int64_t *base;
    double *list;
} spmm_operand;

typedef struct spmm_plan {
    spmm_operand a, b;
    int32_t m, k, n;          /* op(A) is m x k, op(B) is k x n */
    int32_t dc;               /* output diagonals */
    int32_t *c_off;           /* ascending */
    int64_t *c_base;          /* C at (i, i + c_off[d]) = c_list[c_base[d] + i] */
    int64_t c_len;            /* = nnz of C */
    int64_t *pair_ptr;        /* dc + 1 */
    int32_t *pair_a, *pair_b; /* operand diagonals; oa ascending in a diagonal */
    int64_t n_pairs, mults;
    int64_t nnz_bound;        /* upper bound of C's true nonzeros (spmm.c) */
    int threads;
    double struct_ms;         /* host time of output diagonals + pairs */
} spmm_plan;

/* Rows i of output diagonal oc that pair (oa, ob = oc - oa) reaches. */
static inline void spmm_pair_rows(const spmm_plan *p, int64_t oa, int64_t oc,
                                  int64_t *lo, int64_t *hi)
{
    int64_t l = 0, h = p->m;
    if (-oa > l) l = -oa;
    if (-oc > l) l = -oc;
    if ((int64_t)p->k - oa < h) h = (int64_t)p->k - oa;
    if ((int64_t)p->n - oc < h) h = (int64_t)p->n - oc;
    *lo = l;
    *hi = h > l ? h : l;
}

/* Build the HM storage (double) of op's operand: base and list. */
adia_status adia__spmm_operand_store(spmm_operand *x);
void adia__spmm_plan_free(spmm_plan *p);

/* Numeric phases; c_list holds C's stored values (initial values when
 * accumulating, else zeros).  time_ms: the multiplications alone (building
 * the operands' diagonal storage and copies excluded). */
adia_status adia__spmm_cpu_hm(spmm_plan *p, double *c_list, double *time_ms);
adia_status adia__spmm_cpu_cdm(spmm_plan *p, double *c_list, double *time_ms);
/* CPU HM values of C's rows [i0, i1) alone: out[d * (i1 - i0) + i - i0]
 * for the rows of output diagonal d (other entries untouched). */
adia_status adia__spmm_cpu_hm_rows(spmm_plan *p, int64_t i0, int64_t i1, double *out);

/* One GPU numeric phase (adia__spmm_gpu_hm): what to do and what it cost. */
typedef struct spmm_gpu_run {
    double *c_list;           /* in: C's values (initial ones when accumulating),
                                 out: the product; NULL: C stays on the device */
    int accumulate;
    int kernel;               /* in: 0 automatic, 1 tiled, 2 streaming        */
    int64_t sample_row0, sample_rows; /* c_list NULL: rows downloaded into */
    double *sample;           /* sample[d * sample_rows + i - sample_row0]    */
    double kernel_ms;         /* out: kernel(s), CUDA events                  */
    double device_ms;         /* out: struct_ms + kernel structure, its upload,
                                 allocation of C, kernel (host wall clock)    */
    double setup_ms;          /* out: part of device_ms: struct_ms + kernel
                                 structure + its upload + launch set-up       */
    double alloc_ms;          /* out: part of device_ms: allocation of C      */
    double transfer_ms;       /* out: upload of A, B (and C to accumulate into),
                                 download of C                               */
    int32_t tile_rows;        /* out: rows of the tiled kernel; 0 = streaming */
    int64_t shared_bytes;     /* out: dynamic shared memory per block         */
} spmm_gpu_run;

/* GPU: uploads the operands' HM storage, runs the tiled kernel when its
 * shared-memory footprint fits (else the streaming one), downloads C. */
adia_status adia__spmm_gpu_hm(spmm_plan *p, spmm_gpu_run *run);
/* Device bytes adia__spmm_gpu_hm allocates at most. */
int64_t adia__spmm_gpu_bytes(const spmm_plan *p);

/* Internal (bench_spmm's products too large for a host C): op(A) op(B) on
 * the GPU with C left on the device; rows [row0, row0 + rows) are
 * downloaded and compared with the CPU HM values of those rows.
 * *mismatches: entries not bitwise equal (NaN equal to NaN). */
adia_status adia__spmm_gpu_check_rows(adia_op opA, const adia_matrix *A, adia_op opB,
                                const adia_matrix *B, int64_t row0, int64_t rows,
                                adia_spgemm_info *info, int64_t *mismatches);

/* Rows of one CPU row block.  The CPU kernels run row blocks in parallel
 * and, inside one, every output diagonal: the block's rows of A, B and C
 * (diagonals x rows x 8 bytes) stay in the core's cache for all the pairs,
 * instead of being streamed from memory once per output diagonal.  About
 * 1 MB per block, at least 64 rows, and at least 4 blocks per thread when
 * the matrix allows it. */
static inline int64_t spmm_cpu_block_rows(int64_t rows, int64_t diagonals, int threads)
{
    int64_t b = 4096;
    while (b > 64 && b * 8 * (diagonals > 0 ? diagonals : 1) > ((int64_t)1 << 20)) b /= 2;
    while (b > 64 && (rows + b - 1) / b < 4 * (int64_t)threads) b /= 2;
    return b;
}

#ifdef __cplusplus
}
#endif
#endif
