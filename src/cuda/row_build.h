/* row_build.h -- the row formats (csr, ell, sell) built on the GPU from a
 * CSR in device memory (the build's layout of diag_build.h), and the row
 * statistics the device planner's model and CSR's kernel choice read
 * (src/cuda/row_build.cu).  Plain C; CUDA builds only.  The format tables'
 * build_device slots (csr_gpu.cu, row_gpu.cu) wrap these arrays. */
#ifndef ADIA_ROW_BUILD_H
#define ADIA_ROW_BUILD_H

#include "diag_build.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dA's row pointers (0 first, nnz last, monotone) and columns (in the
 * matrix, ascending in a row) checked: ADIA_ERR_INVALID_MATRIX names the
 * first bad row and what it holds. */
adia_status adia__gpu_csr_check(const adia_gpu_csr *dA, const char *who);

typedef struct adia_gpu_row_stats {
    int64_t row_max;                  /* entries of the longest row         */
    uint64_t len_sq;                  /* sum of squared row lengths (exact) */
    int64_t sell_slots, sell_slices;  /* SELL-C-sigma's slots and slices for
                                         the parameters given; -1 when not
                                         asked (p NULL) or refused by them   */
} adia_gpu_row_stats;

/* The row statistics of dA (checked by the caller); p non-NULL: SELL's
 * slot count for its C and sigma too, exactly as the host build lays it
 * out.  Deterministic (integer sums). */
adia_status adia__gpu_row_stats(const adia_gpu_csr *dA, const adia_format_params *p,
                                adia_gpu_row_stats *st);

/* The entries of dA whose column is the column at the same position of
 * the row before plus one (consecutive rows on one diagonal: how much the
 * x reads of neighbouring rows coalesce; CSR's kernel choice). */
adia_status adia__gpu_row_continuity(const adia_gpu_csr *dA, uint64_t *n);

/* ELL of `width` slots a row (width >= the longest row: the caller's
 * check) from dA: *col and *val (values of vt) new device arrays of
 * width * rows, the host build's layout (row_formats.h). */
adia_status adia__gpu_ell_fill(const adia_gpu_csr *dA, int32_t width, adia_value_type vt,
                               int32_t **col, void **val);

/* SELL-C-sigma of dA as the host build lays it out: device arrays of the
 * layout (slice_ptr, width, perm) and the slots (col, val of vt); host
 * copies of slice_ptr and width (the host struct's, for its byte counts). */
typedef struct adia_gpu_sell {
    int32_t C, sigma, nslices;
    int64_t slots;
    int64_t *slice_ptr;               /* device, nslices + 1 */
    int32_t *width, *perm, *col;      /* device */
    void *val;                        /* device, slots values of vt */
    int64_t *host_slice_ptr;          /* host (adia__alloc), nslices + 1 */
    int32_t *host_width;              /* host, nslices */
} adia_gpu_sell;

adia_status adia__gpu_sell_fill(const adia_gpu_csr *dA, int32_t C, int32_t sigma,
                                adia_value_type vt, adia_gpu_sell *out);
/* Frees every array of S (device and host) and zeroes it. */
void adia__gpu_sell_free(adia_gpu_sell *S);

#ifdef __cplusplus
}
#endif
#endif
