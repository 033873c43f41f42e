/* diag_build.h -- diagonal formats (dia, hdi, brcsd2) built on the GPU from
 * a CSR matrix that is already in device memory (src/cuda/diag_build.cu).  Plain C; CUDA builds
 * only (the CPU build has no such function: nothing outside src/cuda and
 * the GPU tests/benches calls it). */
#ifndef ADIA_DIAG_BUILD_H
#define ADIA_DIAG_BUILD_H

#include "formats/diag_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CSR matrix in device memory (the master CSR's layout: values double). */
typedef struct adia_gpu_csr {
    int32_t rows, cols;
    int64_t nnz;
    const int64_t *rowptr;           /* rows + 1, rowptr[0] = 0, [rows] = nnz */
    const int32_t *colind;           /* nnz, ascending within a row */
    const double *values;            /* nnz */
} adia_gpu_csr;

typedef struct adia_gpu_build_info {
    double analyze_ms;   /* GPU: diagonal ids, per-piece offset lists (events) */
    double build_ms;     /* GPU: data fill + explicit zeros (events)           */
    double host_ms;      /* wall clock between them: lists down, groups and
                          * layout on the host (adia__diag_structure), up     */
    double download_ms;  /* data and zero lists to the host (0 if not asked)  */
    int64_t n_diag;      /* distinct diagonals of the whole matrix            */
    int64_t stored;      /* stored slots = piece_data[n_pieces]               */
} adia_gpu_build_info;

/* The diagonal format of dA with equal pieces of block_rows rows, values
 * in vt: per_piece 0 is BRCSD-II (B = block_rows; one piece of all rows is
 * DIA), per_piece 1 HDI (hack = block_rows).  *out gets a host adia_diag
 * equal in every array to adia_format_build of that format (same group
 * numbering, offsets, piece_data, zero lists), except that its data is
 * copied to the host only when download != 0 (else D->data = NULL: the
 * structure alone is on the host).  *dev_data (dev_data may be NULL if not
 * wanted) receives the device array of the data (piece_data[n_pieces]
 * values of vt; NULL when that is 0), owned by the caller (cudaFree).
 * info may be NULL.  The column indices are checked (in range, ascending
 * in a row): ADIA_ERR_INVALID_MATRIX names the row. */
adia_status adia__gpu_diag_build(const adia_gpu_csr *dA, int32_t block_rows, int per_piece,
                                adia_value_type vt, int download, adia_diag **out,
                                void **dev_data, adia_gpu_build_info *info);

/* Distinct diagonals of dA (the first phase of the build alone; the
 * columns are checked as there). */
adia_status adia__gpu_count_diagonals(const adia_gpu_csr *dA, int64_t *n_diag);

/* Format `name` (parameters p) built on the GPU from dA, its data on the
 * device, its host copy left to the first host use: a diagonal format
 * with diag.piece_rows (info, may be NULL: the build's timings; max_slots
 * > 0: a format that would store more slots is refused with
 * ADIA_ERR_UNSUPPORTED before its fill), or a format whose GPU table has
 * build_device (csr, ell, sell: row_build.h).  ADIA_ERR_UNSUPPORTED for
 * any other format. */
adia_status adia__format_build_device(const char *name, const adia_gpu_csr *dA,
                                      const adia_format_params *p, adia_value_type vt,
                                      int64_t max_slots, adia_format **out,
                                      adia_gpu_build_info *info);
/* The same as the build_device slot of the diagonal core's GPU table. */
adia_status adia__diag_build_device(const adia_format_ops *self, int32_t rows, int32_t cols,
                                    int64_t nnz, const int64_t *d_rowptr,
                                    const int32_t *d_colind, const double *d_values,
                                    const adia_format_params *p, adia_value_type vt,
                                    adia_format **out);

/* The device side of a diagonal format whose data is already on the device
 * (diag_gpu.cu): like the format table's upload, but dev_data (the data of
 * D, D->vtype values) is taken over instead of copied -- owned from the
 * call on, freed on failure too.  *dev is a device handle of the diagonal
 * core's GPU table (every diagonal format's). */
adia_status adia__gpu_diag_adopt(const adia_diag *D, adia_value_type vt,
                                const adia_format_params *p, void *dev_data,
                                void **dev);

#ifdef __cplusplus
}
#endif
#endif
