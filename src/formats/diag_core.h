/*
 * diag_core.h -- the one storage structure behind every diagonal format.
 *
 * DIA, HDI, BRCSD-I, BRCSD-II and CRSD all cut the rows into *pieces*; each
 * piece points to an *offset group* (a list of diagonal offsets o = col-row,
 * shared by consecutive pieces with the same list) and stores DIA-style data
 * for its rows: for piece p with rows [r0, r1) and group g with K offsets,
 *
 *     value of diagonal k at row r  =  data[piece_data[p] + k*(r1-r0) + (r-r0)]
 *
 * so consecutive rows of one diagonal are consecutive in memory (coalesced
 * on a GPU).  Entries whose column o+r falls outside [0, cols) are stored as
 * zero and must never be read as x[o+r] by a kernel.  Formats differ only in
 * the partition policy: how rows are cut and which offsets a piece keeps.
 * CRSD additionally stores its scatter points apart, as COO.
 */
#ifndef ADIA_DIAG_CORE_H
#define ADIA_DIAG_CORE_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adia_diag {
    int32_t rows, cols;
    adia_value_type vtype;

    int32_t n_pieces;
    int32_t *piece_start;     /* n_pieces + 1 row boundaries, [0] = 0, [n] = rows */
    int32_t *piece_group;     /* n_pieces: group of each piece                 */
    int64_t *piece_data;      /* n_pieces + 1: element offset of each piece    */

    int32_t n_groups;
    int32_t *group_start;     /* n_groups + 1: index into offsets              */
    int32_t *offsets;         /* group_start[n_groups] offsets, ascending in a group */

    void *data;               /* piece_data[n_pieces] values (double or float) */

    int64_t n_scatter;        /* CRSD scatter points (COO, row-sorted), else 0 */
    int32_t *scatter_row, *scatter_col;
    void *scatter_val;

    int64_t nnz;              /* nonzeros of the source matrix                 */

    /* Added after the lead's layout (kernels need not read them):          */
    int32_t offsets_per_piece; /* HDI: storage accounting counts each piece's
                                * offsets (no sharing), else each group once */
    int64_t n_zero;           /* source entries whose stored value is zero:   */
    int32_t *zero_row, *zero_col; /* kept (row-sorted) so to_csr is exact     */
} adia_diag;

/* ------------------------------------------------ partition (policy output) */

/* What a format's policy decides: piece boundaries and, per piece, the
 * ascending offsets it keeps; CRSD also flags the nonzeros (by CSR index)
 * that go to the scatter part.  The core turns it into an adia_diag. */
typedef struct adia_diag_partition {
    int32_t n_pieces;
    int32_t *piece_start;     /* n_pieces + 1 */
    int64_t *list_start;      /* n_pieces + 1: index into list */
    int32_t *list;            /* offsets of piece p: list[list_start[p] ..) */
    uint8_t *scatter;         /* NULL, or A->nnz flags: 1 = scatter point */
} adia_diag_partition;

typedef adia_diag_policy_fn adia_diag_partition_fn;   /* internal.h */

void adia__diag_partition_free(adia_diag_partition *part);

/* Piece boundaries of equal pieces of `size` rows (last one shorter). */
adia_status adia__diag_equal_pieces(int32_t rows, int32_t size,
                                   adia_diag_partition *part);

/* Per-piece offset lists, computed in parallel over pieces: fn writes the
 * ascending offsets of rows [r0, r1) to out (at most bound(r0, r1) of them;
 * work holds 4*max bound int32) and returns how many.  fn may set
 * part->scatter flags of the nonzeros in its own rows. */
typedef int32_t (*adia_diag_list_fn)(const adia_csr *A, const void *ctx,
                                     int32_t r0, int32_t r1, int32_t *out,
                                     int32_t *work, uint8_t *scatter);
typedef int64_t (*adia_diag_bound_fn)(const adia_csr *A, const void *ctx,
                                      int32_t r0, int32_t r1);
adia_status adia__diag_fill_lists(const adia_csr *A, const void *ctx,
                                 adia_diag_bound_fn bound, adia_diag_list_fn fn,
                                 adia_diag_partition *part);

/* ---------------------------------------------------------- the core */

/* The structure of D from a partition, without data: pieces (taken from
 * part), groups (pieces with identical lists share one, numbered in order
 * of first use), offsets and piece_data.  D->rows must be set; D->data is
 * left alone.  The host build and the GPU build (src/cuda/diag_build.cu)
 * both use it, so their layouts agree array for array. */
adia_status adia__diag_structure(adia_diag *D, adia_diag_partition *part);
/* DIA's structure of D (rows set): one piece, one group of the ndiag
 * ascending offsets -- a plan of diagonals given as arrays (host or
 * device: adia_plan_create_device_dia, adia__plan_create_host_dia). */
adia_status adia__diag_dia_structure(adia_diag *D, int ndiag, const int64_t *offsets);
/* Build from CSR and a partition (consumed: freed on return either way). */
adia_status adia__diag_build(const adia_csr *A, adia_value_type vt,
                            adia_diag_partition *part, int offsets_per_piece,
                            adia_diag **out);
void adia__diag_free(adia_diag *D);
/* New values into D in place from A (master CSR, double) of the same
 * structure as D's source -- the caller has checked it: a mismatch found
 * here is ADIA_ERR_INTERNAL and leaves D's data part written.  Data slots,
 * CRSD's scatter values and the zero lists; padding is left as it is
 * (zero).  D->data NULL (built on the device) is allocated first. */
adia_status adia__diag_refill(adia_diag *D, const adia_csr *A);
/* D's data (refilled) into its upload dev: one host-to-device copy
 * (src/cuda/diag_gpu.cu).  CRSD with scatter points is not served here
 * (ADIA_ERR_INTERNAL).  Without CUDA: ADIA_ERR_NO_DEVICE. */
adia_status adia__gpu_diag_set_data(void *dev, const adia_diag *D);
/* New values of a device CSR A with the pattern of dev's upload straight
 * into dev's data, on the device (diag_gpu.cu; adia_gpu_ops.refill: gated
 * by *gate, count[0] += values zero in the format's value type -- the
 * host's zero lists are the caller's -- count[1] += entries on no stored
 * diagonal).  CRSD with scatter points is not served here (ADIA_ERR_INTERNAL).
 * Without CUDA: ADIA_ERR_NO_DEVICE. */
adia_status adia__gpu_diag_refill(void *dev, const adia_device_csr *A,
                                  const unsigned long long *gate, unsigned long long *count);
adia_status adia__diag_to_csr(const adia_diag *D, adia_csr *out);
adia_status adia__diag_check(const adia_diag *D);
/* Stored slots (data + scatter) minus the source's nonzeros: padding,
 * counting slots whose column lies outside the matrix as padding too. */
int64_t adia__diag_padded_zeros(const adia_diag *D);
/* Offsets the format stores: per piece for HDI, per group otherwise. */
int64_t adia__diag_offsets_stored(const adia_diag *D);
int64_t adia__diag_storage_bytes(const adia_diag *D);
/* Storage bytes of a diagonal format of np pieces, ng groups, `offsets`
 * stored offsets and `slots` data values of vs bytes (per_piece: HDI) --
 * adia__diag_storage_bytes without the build, for the planner (saturating). */
int64_t adia__diag_predict_bytes(int64_t slots, int64_t offsets, int64_t np, int64_t ng,
                                int per_piece, int64_t vs);
adia_status adia__diag_spmv(const adia_diag *D, double alpha, const void *x,
                           double beta, void *y);

/* The diagonal storage of a built format; NULL for formats whose table
 * has no partition policy (not the diagonal core's storage). */
const adia_diag *adia__format_diag(const adia_format *F);
/* Its structure alone (offsets, groups, pieces; not D->data, which may be
 * stale): a format built on the device is not downloaded for it. */
const adia_diag *adia__format_diag_structure(const adia_format *F);

/* Build through a format's partition policy (the build slot of every
 * format with diag.policy; part of the core). */
adia_status adia__diag_build_policy(adia_diag_policy_fn policy, int per_piece, const adia_csr *A,
                                   const adia_format_params *p, adia_value_type vt, void **impl);

/* Operations table slots shared by every diagonal format (diag_core.c);
 * the registry fills them for every table with diag.policy. */
adia_status adia__diag_op_to_csr(const void *impl, adia_csr *out);
adia_status adia__diag_op_check(const void *impl);
void adia__diag_op_destroy(void *impl);
int64_t adia__diag_op_padded_zeros(const void *impl);
int64_t adia__diag_op_storage_bytes(const void *impl);
adia_status adia__diag_op_spmv(const void *impl, double alpha, const void *x,
                              double beta, void *y);
/* adia__diag_refill as the table's refill slot. */
adia_status adia__diag_op_refill(void *impl, const adia_csr *A);
/* The offset-0 diagonal of each piece, then CRSD's scatter points on it. */
adia_status adia__diag_op_diagonal(const adia_format *F, double *d);

#ifdef __cplusplus
}
#endif
#endif /* ADIA_DIAG_CORE_H */
