/* dist.h -- what the files of adia_mpi share.  adia_mpi uses libadia's
 * public API only (it links libadia.so or libadia.a alike), so messages go
 * through adia_set_error and memory through malloc. */
#ifndef ADIA_DIST_H
#define ADIA_DIST_H

#include "adia_mpi.h"

#include <stdlib.h>
#include <string.h>

#define DIST_MAGIC 0x44495354u   /* "DIST" */
#define DIST_DEAD 0xdeadbeefu

/* Evaluate an adia_status expression; return it if it is an error. */
#define DIST_TRY(expr)                                                         \
    do {                                                                       \
        adia_status dist_s_ = (expr);                                          \
        if (dist_s_ != ADIA_OK) return dist_s_;                                \
    } while (0)

/* A column interval of the local x: global columns [start, start + len) at
 * local position pos. */
typedef struct dist_interval {
    int64_t start, len, pos;
} dist_interval;

/* One contiguous piece of the halo exchange: len values from (send) or to
 * (receive) one peer; at offset of the owned x (send) or position of the
 * local x (receive). */
typedef struct dist_segment {
    int peer;
    int32_t at, len;
} dist_segment;

typedef struct dist_halo dist_halo;
typedef struct dist_device dist_device;   /* dist_device.h: a device matrix's buffers */

/* The transport of the halo: start the exchange of x's owned values
 * (x_owned) into the halo positions of x_local, then wait for it.  Host
 * vectors go through MPI point to point (mpi-host, dist_halo.c); device
 * vectors through NCCL (nccl, dist_nccl.c), written by a kernel into the
 * neighbours' local x (peer, dist_peer.c) or through pinned host buffers
 * and MPI (staged, dist_staged.c) on the SpMV's stream.  A device pointer
 * never reaches MPI: not every MPI is CUDA-aware (the device image's Open
 * MPI is not: MPI_Allreduce of one segfaults).  wait must be called after
 * post even when post failed: the peers' messages are posted regardless,
 * so no process is left waiting while the status is agreed. */
typedef struct dist_transport {
    const char *name;
    adia_status (*post)(adia_dist_matrix *D, const double *x_owned, double *x_local, void *stream);
    adia_status (*wait)(adia_dist_matrix *D, double *x_local, void *stream);
    /* after the parts reading the halo, on their stream (NULL: nothing):
     * the peer transport tells the senders the halo may be overwritten */
    adia_status (*done)(adia_dist_matrix *D, void *stream);
} dist_transport;

struct dist_halo {
    MPI_Comm comm;
    const dist_transport *transport;   /* of adia_dist_spmv(_device) */
    dist_segment *recv, *send;   /* receives in ascending global column per peer */
    int nrecv, nsend;
    MPI_Request *req;            /* nrecv + nsend */
    int neighbours;
    int64_t recv_values, send_values;
};

/* A range of the block's rows and its plan.  A part on the owned x
 * (x_own 1) has only columns of this process's rows, numbered from 0: it
 * reads the caller's x as it is, before and while the halo moves.  A part
 * on the local x reads the owned rows [band, band + band_len) and the halo
 * there.  A block whose rows away from its ends need no halo is cut in
 * three -- ends on the local x, the interior on the owned x -- so the
 * interior's product overlaps the exchange, and only the ends' bands of x
 * are copied into the local x; other blocks are one part on the local x. */
typedef struct dist_part {
    adia_plan *plan;
    int32_t row0, rows;
    int x_own;
    int32_t band, band_len;
    void *sums_work;   /* device blocks: the plan's fused-sums work (its own:
                          the layout follows the plan's rows), or NULL */
} dist_part;

#define DIST_PARTS 3
#define DIST_PRECONDS 8   /* block preconditioners a matrix holds at once */
#define DIST_SLAB_MOVES 64   /* processes of a multigrid across them */

typedef struct dist_slab dist_slab;   /* dist_slab.c: mg across the processes */

struct adia_dist_matrix {
    uint32_t magic;
    MPI_Comm comm;
    int rank, size;
    int64_t n, nnz;
    int64_t *starts;             /* size + 1: rank r holds rows [starts[r], starts[r+1]) */
    int64_t first, rows;
    dist_interval *iv;           /* the local x's intervals, ascending */
    int niv;
    int from_offsets;
    int32_t local_cols;          /* length of the local x */
    int32_t own_pos;             /* where this process's rows sit in it */
    dist_part part[DIST_PARTS];  /* the block's rows in order; nparts used */
    int nparts;
    double *x_local;             /* local_cols + 1 */
    double *diag;                /* A(i,i) of the rows held here */
    char *spec;                  /* the Laplacian the block was filled from
                                    on the device (dist_fill.c), or NULL */
    double max_abs;              /* max |A(i,j)| of the rows held here */
    int gpu;                     /* CUDA device of the plan; -1: the CPU */
    dist_device *dev;            /* device buffers; NULL on the CPU */
    dist_halo halo;
    double halo_ms, reduce_ms;
    double connect_ms;           /* nccl: the connections made at creation */
    int64_t halo_bytes_all;
    adia_precond *prec[DIST_PRECONDS];   /* preconditioners (dist_precond.c) */
    adia_plan *prec_plan[DIST_PRECONDS]; /* ... the plans of their blocks or slabs */
    dist_slab *prec_slab[DIST_PRECONDS]; /* ... a slab mg's callbacks, or NULL */
    int nprec;
};

/* dist_util.c: the status every process returns (an error of the lowest
 * failing rank, its message prefixed "rank R: ", on all); handle check. */
adia_status adia__dist_agree(MPI_Comm comm, adia_status s);
adia_status adia__dist_check(const adia_dist_matrix *D, const char *func);
/* malloc of count x size bytes (at least 1), or NULL after an error naming what. */
void *adia__dist_alloc(size_t count, size_t size, const char *what);

/* Rows as a CSR with 64-bit columns (global ones, or whatever numbering
 * its maker says): rowptr[0..rows] from 0, nnz = rowptr[rows].  Zeroed
 * and its arrays freed by adia__dist_rows_free. */
typedef struct dist_rows {
    int64_t rows, nnz;
    int64_t *rowptr, *col;
    double *val;
} dist_rows;
void adia__dist_rows_free(dist_rows *r);

/* dist_util.c: CSR rows shipped between the processes, for a file's rows
 * moved to whole planes (dist_matrix.c) and a slab's ghost planes
 * (dist_slab.c).  This process's rows (rowptr[0..rows], col, val) go to
 * each process q as its rows [range[2q], range[2q + 1]) (none where
 * range[2q] >= range[2q + 1]; to itself copied), and *got holds the rows
 * every process sent here, in rank order.  A process sends and receives
 * fewer than 2^31 rows and values (MPI's int counts): more is an error.
 * Collective, agreed; *got empty on failure. */
adia_status adia__dist_ship_rows(MPI_Comm comm, int64_t rows, const int64_t *rowptr,
                                 const int64_t *col, const double *val,
                                 const int64_t *range, dist_rows *got);

/* How adia__dist_read_rows numbers the columns: global (every entry), or
 * the own diagonal block's (only columns of this process's rows, from 0;
 * the others dropped). */
typedef enum dist_cols { DIST_COLS_GLOBAL, DIST_COLS_OWN } dist_cols;
/* dist_util.c: this process's rows read back from the plans of D's parts
 * (adia_format_to_matrix: a device plan's storage downloaded) as a CSR in
 * cols' numbering, for a slab's rows (dist_slab.c) and the own block
 * (dist_precond.c); this process's status, not agreed. */
adia_status adia__dist_read_rows(const adia_dist_matrix *D, dist_cols cols, dist_rows *out);
/* r's columns narrowed to int32 (*out, the caller's to free) for
 * adia_matrix_create_csr: cols must fit an int32 and each column lie in
 * [0, cols); the error names what. */
adia_status adia__dist_cols32(const dist_rows *r, int64_t cols, const char *what, int32_t **out);

/* dist_layout.c: the local x of rows [first, first + rows of L) of an
 * n x n matrix whose block L has global columns: intervals (from the
 * offsets when there are few, else from the columns), and the block with
 * columns renumbered into that layout (*local), its diagonal and max |a|. */
adia_status adia__dist_layout(adia_dist_matrix *D, const adia_matrix *L, adia_matrix **local);
/* The same layout from the block's diagonals alone (no matrix: a block
 * filled on the device), and the local offset of global offset o: the
 * diagonal's columns j = row + o mapped into the local x (a diagonal stays
 * a diagonal); 0 when it has no column inside the matrix for these rows. */
adia_status adia__dist_layout_offsets(adia_dist_matrix *D, const int64_t *offsets, int count);
int adia__dist_local_offset(const adia_dist_matrix *D, int64_t o, int64_t *local);

/* dist_matrix.c: the hints of a block's plan: the caller's, on the device
 * resolved for every process, in double (the local x and y are). */
adia_plan_hints adia__dist_block_hints(const adia_dist_matrix *D, const adia_plan_hints *hints);

/* dist_fill.c (device builds): the block of a Laplacian spec (hints.device
 * resolved to this process's GPU) filled on the device into its plan, with
 * the layout of the local x from the stencil's offsets, D->diag and
 * D->max_abs; this process's status, not agreed. */
adia_status adia__dist_fill_block(adia_dist_matrix *D, const char *spec,
                                  const adia_plan_hints *hints);

/* dist_parts.c: the block's parts.  plan_parts: from the block in local
 * columns (CSR), cut in three when it has an interior (see dist_part),
 * else one part; cut_rows: where a block whose diagonals
 * have the global offsets off[0..nd) is cut (*lo == *hi: not cut) -- for
 * blocks filled on the device (dist_fill.c).  Each part's plan made with
 * the block's hints. */
adia_status adia__dist_plan_parts(adia_dist_matrix *D, const adia_matrix *local,
                                  const adia_plan_hints *hints);
void adia__dist_cut_rows(const adia_dist_matrix *D, const int64_t *off, int nd, int32_t *lo,
                         int32_t *hi);
/* A device product's fused sums (adia_spmv_sums_async over the block's
 * rows, each part's added to out, in its part's sums_work): z (NULL: x)
 * and out (device). */
typedef struct dist_sums {
    const double *z;
    double *out;
} dist_sums;

/* The parts on the owned x (x_own 1: x as given) or on the local x, into
 * their rows of y (stream: a device block's cudaStream_t); sums (device
 * blocks, beta 0) or NULL. */
adia_status adia__dist_run_parts(const adia_dist_matrix *D, double alpha, const double *x,
                                 const double *x_local, double beta, double *y, int x_own,
                                 const dist_sums *sums, void *stream);
/* y = alpha A x + beta y of a CPU block (x, y: the owned rows): the halo
 * posted, the parts on the owned x computed while it moves, then the
 * others; timed into halo_ms (posting and waiting). */
adia_status adia__dist_parts_spmv(adia_dist_matrix *D, double alpha, const double *x, double beta,
                                  double *y);
/* The block's nonzeros; the largest part's format (what info reports). */
int64_t adia__dist_block_nnz(const adia_dist_matrix *D);
const char *adia__dist_format(const adia_dist_matrix *D);
void adia__dist_parts_free(adia_dist_matrix *D);

/* dist_halo.c: the exchange plan (what each process needs from which
 * other, agreed with MPI_Alltoall / Alltoallv once) and one exchange. */
adia_status adia__dist_halo_setup(adia_dist_matrix *D);
void adia__dist_halo_free(dist_halo *h);
/* x (owned rows, host) into D->x_local, halo included, through MPI on the
 * host whatever the matrix's transport; timed into halo_ms. */
adia_status adia__dist_exchange(adia_dist_matrix *D, const double *x);
/* MPI_Irecv of every receive, MPI_Isend of every send: segment s at
 * base + its at (packed 0) or right after the previous segment (packed 1:
 * the staged transport's pinned buffers).  Every request is posted or
 * MPI_REQUEST_NULL, so adia__dist_halo_waitall may follow any failure. */
adia_status adia__dist_post_receives(dist_halo *h, double *base, int packed);
adia_status adia__dist_post_sends(dist_halo *h, const double *base, int packed);
adia_status adia__dist_halo_waitall(dist_halo *h);

/* y = alpha A x + beta y on host vectors of this process's rows; this
 * process's status, not agreed (dist_matrix.c). */
adia_status adia__dist_spmv_host(adia_dist_matrix *D, double alpha, const double *x, double beta,
                                 double *y);
/* NULL vectors refused on every process alike (and the handle checked). */
adia_status adia__dist_check_vectors(const adia_dist_matrix *D, const void *x, const void *y,
                                     const char *func);

/* dist_device.c (dist_device_none.c without CUDA), collective where the
 * matrix functions calling them are.  select: hints.device 1 or -1
 * resolved alike on every process -- -1 is the GPU only if every process
 * has one -- and this process's device made current (its rank on the node
 * modulo the devices it sees) before any other CUDA call; D->gpu set.
 * setup: after the halo's, the device's local x, the SpMV's buffers and
 * the transport (nccl or staged: env ADIA_DIST_TRANSPORT of rank 0). */
adia_status adia__dist_device_select(adia_dist_matrix *D, int device);
adia_status adia__dist_device_setup(adia_dist_matrix *D);
void adia__dist_device_free(adia_dist_matrix *D);
/* adia__dist_spmv_host's device matrix case: x and y copied in and out. */
adia_status adia__dist_device_spmv_host(adia_dist_matrix *D, double alpha, const double *x,
                                        double beta, double *y);

/* The context of a distributed matrix's adia_operator (dist_solve.c):
 * a failure of this process alone is kept (note: the first, with its
 * message) and agreed after the solve. */
typedef struct dist_op {
    adia_dist_matrix *D;
    adia_status failed;
    char why[512];
} dist_op;
void adia__dist_op_note(dist_op *o, adia_status s);

/* A device matrix's operator for libadia's GPU methods: op's device
 * callbacks on context o (dist_dsolve.c) and their buffers; ADIA_OK or
 * this process's error, not agreed.  dist_device_none.c: never called,
 * no matrix is a device matrix there. */
adia_status adia__dist_device_operator(dist_op *o, adia_operator *op);

/* ADIA_PHASES set: what of the set-up just ended and the wall time since
 * this process's mark before, with its rank, on stderr -- libadia's own
 * marks (docs/solvers.md) for the distributed set-up (dist_util.c). */
void adia__dist_phase(const adia_dist_matrix *D, const char *what);

/* The device trace's stamps so far written out (ADIA_DIST_TRACE, see
 * dist_device.h; dist_trace.c); nothing without it or without CUDA. */
void adia__dist_trace_write(adia_dist_matrix *D);
/* The peer transport's failure flag after a solve: an error naming the
 * neighbour's timeout, else ADIA_OK (any other transport, no CUDA). */
adia_status adia__dist_peer_check(adia_dist_matrix *D);
/* How a solve sums over the processes: "peer", "nccl" or "mpi". */
const char *adia__dist_reduce_name(const adia_dist_matrix *D);
/* dist_block.c: the own diagonal block of a device matrix as a dia plan
 * made on the device from the parts' diagonals; ADIA_ERR_UNSUPPORTED (no
 * error kept) where a part's format does not keep them as dia's, or
 * without CUDA. */
adia_status adia__dist_device_block(const adia_dist_matrix *D, const adia_plan_hints *hints,
                                    adia_plan **plan);

/* One point-to-point move of doubles: count values sent from at (send 1)
 * or received into at from peer; peer = this process: copied from `from`. */
typedef struct dist_move {
    int peer, send;
    double *at;
    const double *from;
    int64_t count;
} dist_move;
/* Whether D's device halo and reductions go through NCCL (0 without CUDA). */
int adia__dist_nccl_active(const adia_dist_matrix *D);
/* Moves of device arrays in one NCCL group on stream (dist_nccl.c; a
 * build without NCCL: ADIA_ERR_UNSUPPORTED). */
adia_status adia__dist_nccl_moves(adia_dist_matrix *D, const dist_move *m, int n, void *stream);
/* ncclBroadcast of count doubles into at on every process from root peer's
 * `from`, n of them in one group on stream (a gather without new
 * connections: NCCL's collectives share the all-reduce's, where
 * point-to-point between processes that never met costs 0.7 s to connect
 * on 4 H200). */
adia_status adia__dist_nccl_broadcasts(adia_dist_matrix *D, const dist_move *m, int n,
                                       void *stream);

/* dist_block.c (CUDA; -1 / ADIA_ERR_UNSUPPORTED without): the distinct
 * global offsets (col - row) of a device matrix's parts, lent where their
 * format keeps dia's diagonals, ascending, at most `most` (-1: not lent, or
 * more); its slab as a dia plan of rows x rows made on the device: its own
 * rows from row `below`, diagonals b[0..nb) (every process's), each
 * diagonal's ghost planes filled by exchange(ctx, diagonal), collective. */
int adia__dist_device_offsets(const adia_dist_matrix *D, int64_t *off, int most);
adia_status adia__dist_device_slab(const adia_dist_matrix *D, const adia_plan_hints *hints,
                                   int64_t rows, int64_t below, const int64_t *b, int nb,
                                   adia_status (*exchange)(void *ctx, double *v), void *ctx,
                                   adia_plan **plan);

/* dist_slab.c: mg across the processes for D (opt->kind "mg"): its plan
 * (this process's planes and ghost planes), M and the callbacks' context
 * (freed by adia__dist_slab_free after M and the plan); ADIA_ERR_UNSUPPORTED
 * with the reason in why (no error kept) where the rows are not whole
 * planes of a grid, or the device matrix has no NCCL.  Collective, agreed. */
adia_status adia__dist_slab_precond(adia_dist_matrix *D, const adia_precond_options *opt,
                                    adia_plan **plan, adia_precond **M, dist_slab **ctx, char *why,
                                    size_t len);
void adia__dist_slab_free(dist_slab *c);

/* dist_precond.c: the block preconditioners D still holds, freed. */
void adia__dist_precond_free(adia_dist_matrix *D);

/* dist_util.c: the grids the matrix of n rows may be a stencil on, from
 * every process's distinct offsets (off[0..k); k -1: more than
 * DIST_GRID_OFFSETS), likeliest first (adia_grid_candidates over their
 * union), at most max into g; *count -1 where a process had too many, 0
 * where none fits.  Each turned so that the processes split its planes
 * (dist_grid_planes).  Collective, agreed. */
#define DIST_GRID_OFFSETS 32   /* a stencil has at most 27, the centre's included */
adia_status adia__dist_grids(MPI_Comm comm, int64_t n, const int64_t *off, int k,
                             int32_t (*g)[3], int max, int *count);
/* A grid nx x ny x nz as the processes split it, by planes z: a 2D grid
 * (nz 1) as nx x 1 x ny -- its rows are the planes, and its multigrid the
 * same with y named z -- a 1D one as 1 x 1 x nx. */
void adia__dist_grid_planes(int32_t g[3]);

/* An MPI call's return code as an adia error naming the call. */
adia_status adia__dist_mpi(int rc, const char *call);

#endif
