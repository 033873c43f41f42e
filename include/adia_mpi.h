/*
 * adia_mpi.h -- distributed SpMV and solvers over MPI (library adia_mpi,
 * beside libadia: a program that does not include this header needs no
 * MPI).  One process per rank of a communicator; every function here is
 * collective over it (all of its processes call it, in the same order).
 *
 * A distributed matrix is square, n x n with 64-bit global indices, its
 * rows split into contiguous blocks, one per process (by default balanced:
 * rank r holds rows [r n / P, (r + 1) n / P)); no process holds more than
 * its block.  Vectors are split like the rows: each process passes the
 * values of its rows.  The columns a block needs beyond its own rows (the
 * halo) are, for diagonal matrices, its row range shifted by each offset,
 * merged into intervals; each process keeps x as those intervals side by
 * side (its own rows inside), so a diagonal stays a diagonal and the block
 * is planned by adia_plan_create like any matrix.  docs/distributed.md.
 *
 * Errors: an error on one process is an error on all of them, with the
 * message of the lowest failing rank ("rank 2: ..."), so no process is
 * left waiting in a collective call.
 *
 * GPU (hints.device 1, or -1: the GPU if every process has one, else the
 * CPU on all): each process plans its block on one GPU -- its rank among
 * the processes of its node, modulo the devices it sees, made the calling
 * thread's current device (cudaSetDevice) at creation and left so -- and
 * keeps its local x there.  The halo moves by CUDA IPC (transport "peer":
 * in builds with NCCL, every process on one node on a GPU of its own;
 * each GPU writes into its neighbours' memory, and a solve's reductions
 * go the same way; NCCL's comm is made too, for what NCCL moves),
 * by NCCL ("nccl": distinct GPUs on several nodes) or through pinned host
 * buffers and MPI ("staged": otherwise, e.g. several processes on one
 * GPU); a device pointer never reaches MPI, which need not be CUDA-aware.
 * The environment variable ADIA_DIST_TRANSPORT of rank 0 decides at
 * creation: unset or "auto" as above, "staged", "nccl" or "peer"
 * (ADIA_ERR_UNSUPPORTED where it cannot run).  On peer a neighbour that
 * has not sent its halo after ADIA_DIST_PEER_TIMEOUT_S seconds (default
 * 120) fails the product and the matrix: the processes' collective calls
 * must come within that time of each other.  CPU matrices use
 * "mpi-host" whatever it says.  docs/distributed.md.
 */
#ifndef ADIA_MPI_H
#define ADIA_MPI_H

#include "adia.h"

#include <mpi.h>

#if defined(ADIA_MPI_BUILDING_LIBRARY) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adia_dist_matrix adia_dist_matrix;

/* The matrix of a generator spec (adia_matrix_generate), each process
 * building only its rows.  hints: for each process's plan of its block
 * (NULL: the defaults, the CPU); device 1 without a GPU on some process is
 * ADIA_ERR_NO_DEVICE on all, a CUDA or NCCL failure ADIA_ERR_CUDA naming
 * the call.
 * A Laplacian (lap2d5, lap2d9, lap3d7, lap3d27) on the GPUs is filled on
 * each device straight into dia (adia_stencil_fill_device,
 * adia_plan_create_device_dia): no CSR anywhere, 64-bit global rows (the
 * grid may pass 2^31 points; a block stays under 2^31 rows).
 * More processes than rows, or a matrix that is not square, is
 * ADIA_ERR_INVALID_ARG. */
adia_status adia_dist_generate(MPI_Comm comm, const char *spec, const adia_plan_hints *hints,
                               adia_dist_matrix **out);
/* The matrix of a Matrix Market file, each process streaming the file and
 * keeping its rows (adia_matrix_read_mtx_rows); not standard input. */
adia_status adia_dist_read_mtx(MPI_Comm comm, const char *path, const adia_plan_hints *hints,
                               adia_dist_matrix **out);
/* From the caller's blocks: this process holds rows [first, first + rows
 * of local) of an n x n matrix, local's columns being the global ones (as
 * adia_matrix_generate_rows gives them).  The blocks must follow each
 * other in rank order and cover 0..n-1, none empty.  local is copied. */
adia_status adia_dist_create(MPI_Comm comm, int64_t n, int64_t first, const adia_matrix *local,
                             const adia_plan_hints *hints, adia_dist_matrix **out);
/* Frees this process's part (NULL is fine).  Not collective, except on
 * the nccl transport: ncclCommDestroy may wait for the other processes
 * (NCCL finalises a communicator once all are quiescent), so every
 * process destroys such a matrix. */
void adia_dist_destroy(adia_dist_matrix *D);

typedef struct adia_dist_info {
    int ranks, rank;
    int64_t n, nnz;                /* the whole matrix                        */
    int64_t first, rows;           /* this process's rows                     */
    int64_t rows_min, rows_max;    /* rows per process, over all processes    */
    int64_t local_cols;            /* length of this process's x: own + halo  */
    int intervals;                 /* column intervals of that x              */
    int from_offsets;              /* 1: intervals from the diagonal offsets;
                                      0: from the column indices (general)    */
    int neighbours;                /* processes this one exchanges with       */
    int64_t halo_bytes;            /* bytes this process receives per SpMV    */
    int64_t halo_bytes_all;        /* ... all processes together              */
    char format[16];               /* this process's plan                     */
    double halo_ms;                /* time in the halo exchange (posting and
                                      waiting), since creation               */
    double reduce_ms;              /* time in the solvers' global reductions  */
    char transport[16];            /* of the halo: "mpi-host" (CPU matrices),
                                      "nccl", "peer" or "staged" (device
                                      matrices); halo_ms of nccl and peer:
                                      enqueueing only, the transfer runs on
                                      the SpMV's stream                      */
    int gpu;                       /* this process's CUDA device; -1: CPU     */
    int64_t interior_rows;         /* rows whose product runs while the halo
                                      moves: those reading only this
                                      process's x (the block is cut when
                                      they are at least half its rows)    */
    double connect_ms;             /* nccl: time of the first halo exchange
                                      and reduction, made at creation:
                                      NCCL connects the processes then
                                      (0.5-1.3 s on 2-4 H200), so that no
                                      product or solve pays it            */
    char reduce[16];               /* of a solve's sums over the processes:
                                      "peer" (CUDA IPC), "nccl", or "mpi"
                                      (host MPI_Allreduce: CPU matrices,
                                      staged)                             */
} adia_dist_info;
adia_status adia_dist_get_info(const adia_dist_matrix *D, adia_dist_info *info);

/* y = alpha A x + beta y; x and y: this process's rows (info.rows values
 * each), host memory.  The halo moves point to point, straight into the
 * local x.  A device matrix takes them too, copying x in and y out each
 * call (correct, not the fast path: adia_dist_spmv_device). */
adia_status adia_dist_spmv(adia_dist_matrix *D, double alpha, const double *x, double beta,
                           double *y);
/* The same on a device matrix with d_x, d_y device pointers (this
 * process's rows, double, on its device: info.gpu) and stream a
 * cudaStream_t (NULL: the default stream).  Work is queued on stream; the
 * call returns once the halo has been received (staged) or queued (nccl):
 * synchronise stream before reading d_y.  The block's interior rows (those
 * reading only this process's x: info.interior_rows) are computed from d_x
 * in place while the halo moves.  x is read on stream, so work
 * producing it may be queued there before the call.  The status is agreed
 * by all processes (an Allreduce per call).  A CPU matrix is
 * ADIA_ERR_INVALID_ARG; without CUDA, ADIA_ERR_NO_DEVICE. */
adia_status adia_dist_spmv_device(adia_dist_matrix *D, double alpha, const double *d_x,
                                  double beta, double *d_y, void *stream);
/* The same product computed another way on the host, compared with y
 * from adia_dist_spmv: *rel_err = max |y - y_ref| / max |y_ref| over all
 * processes.  The other way: each part's CSR (adia_matrix_spmv) instead
 * of its plan's format; for a block filled on the device from a Laplacian,
 * the stencil's rule itself (adia_stencil_fill, a million rows at a time:
 * no CSR at any size). */
adia_status adia_dist_check_spmv(adia_dist_matrix *D, const double *x, const double *y,
                                 double *rel_err);

/* adia_solve on the distributed matrix (CG, BiCGSTAB, GMRES(m), Jacobi):
 * the same methods (adia_solve_operator) with every dot product and norm
 * reduced by MPI_Allreduce; b and x are this process's rows (host
 * memory).  opt must be the same on every process; info is the same on
 * every process (format: this process's plan).
 * A device matrix runs libadia's GPU methods (adia_solve_operator with
 * device 1) over the distributed operator: b and x go to the device once
 * and every vector stays there, the scalars too; each product carries its
 * dot products in its parts' epilogues (adia_spmv_sums_async), and each
 * reduction is summed over the processes on the device (by CUDA IPC on
 * the peer transport, ncclAllReduce on nccl; the staged transport copies
 * the few sums to the host for MPI_Allreduce).  Reductions an iteration: CG one
 * (Chronopoulos-Gear), BiCGSTAB three, GMRES(m) four per step (classical
 * Gram-Schmidt, the second pass always run).  The iteration loop is a CUDA
 * graph -- one WHILE graph for one process, chunks of iterations on nccl
 * -- and launched iteration by iteration on the staged transport (its
 * host waits cannot be captured).  Options, scaling, stop rules,
 * breakdowns and info as adia_solve on a GPU plan (converged only from
 * the true residual b - A x, recomputed by one more product; spmv_ms
 * NaN).  The iterates are the CPU methods' in exact arithmetic, so
 * iterations and x agree with them up to rounding.  info.time_ms against
 * adia_dist_get_info's halo_ms and reduce_ms gives the communication
 * share where the host times it (CPU matrices, the staged transport); in
 * a graph (nccl) they run on the device, untimed. */
adia_status adia_dist_solve(adia_dist_matrix *D, const double *b, double *x,
                            const adia_solve_options *opt, adia_solve_info *info);
/* The same on a device matrix with b and x on the device (this process's
 * rows, double, on its device: info.gpu), the work ordered after what is
 * queued on stream (a cudaStream_t; NULL: the default stream), returning
 * when x is ready: no vector crosses to the host
 * (adia_solve_operator_device: as adia_plan_solve, the system is not
 * rescaled).  A CPU matrix is ADIA_ERR_INVALID_ARG; without CUDA,
 * ADIA_ERR_NO_DEVICE. */
adia_status adia_dist_solve_device(adia_dist_matrix *D, const double *d_b, double *d_x,
                                   const adia_solve_options *opt, adia_solve_info *info,
                                   void *stream);

/* A preconditioner of D, on D's device; collective, agreed.  *M goes to
 * opt->precond of adia_dist_solve and adia_dist_solve_device on D.
 *  - mg across the processes ("slabs": kind mg, where every process's
 *    rows are whole planes (z) of the matrix's grid -- opt->grid, else
 *    found from the offsets -- and a device matrix moves its halo by
 *    NCCL): one hierarchy over the whole grid, each process holding its
 *    planes of every level and 3 of each neighbour's (their rows fetched
 *    once, a second copy of the block), the small levels gathered onto
 *    every process (adia_slab_comm, adia.h).  z = M r is one V-cycle of
 *    the whole matrix, as one process's mg would make it.
 *  - block Jacobi ("blocks": every other kind, NULL: jacobi; mg where
 *    slabs cannot run and opt->grid is 0 -- with a grid, an error): a
 *    preconditioner of each process's own diagonal
 *    block (its rows against the same columns), as adia_precond_create
 *    makes it on one matrix; z = M r needs no communication, the
 *    couplings between blocks are left to the method (CG needs every
 *    block's M SPD).  The block is a second copy, made on the device from
 *    D's diagonals where its plans keep them as dia does (a stencil's),
 *    else read back from D's plans.
 * Environment (rank 0's): ADIA_DIST_MG=slab (refused where slabs cannot
 * run) or block.  D keeps the copies and frees them with M:
 * adia_dist_precond_destroy, or adia_dist_destroy for the ones left; at
 * most 8 at once. */
adia_status adia_dist_precond_create(adia_dist_matrix *D, const adia_precond_options *opt,
                                     adia_precond **M);
void adia_dist_precond_destroy(adia_dist_matrix *D, adia_precond *M);   /* NULL is fine */
/* "slabs" or "blocks" (above) for a preconditioner D holds, else "". */
const char *adia_dist_precond_scope(const adia_dist_matrix *D, const adia_precond *M);

/* Whole vectors (n values) on rank root to the processes' rows and back:
 * full is read (scatter) or written (gather) on root only. */
adia_status adia_dist_scatter(const adia_dist_matrix *D, int root, const double *full,
                              double *local);
adia_status adia_dist_gather(const adia_dist_matrix *D, int root, const double *local,
                             double *full);
/* Vector files: rank 0 reads (adia_vector_read_mtx) and scatters: *local
 * (malloc'd, free()) gets this process's rows; a file whose length is not
 * n is ADIA_ERR_DIMENSION on every process.  Write: gathered on rank 0,
 * written there (adia_vector_write_mtx). */
adia_status adia_dist_vector_read_mtx(const adia_dist_matrix *D, const char *path,
                                      double **local);
adia_status adia_dist_vector_write_mtx(const adia_dist_matrix *D, const char *path,
                                       const double *local);

#ifdef __cplusplus
}
#endif
#if defined(ADIA_MPI_BUILDING_LIBRARY) && defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif /* ADIA_MPI_H */
