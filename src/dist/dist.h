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

/* The transport of the halo: start the exchange of x's owned values
 * (x_owned) into the halo positions of x_local, then wait for it.  Host
 * memory and MPI point to point now (dist_halo.c).  A GPU transport fills
 * the same two slots with device pointers and NCCL (ncclSend / ncclRecv of
 * each segment inside ncclGroupStart / ncclGroupEnd on the SpMV's stream):
 * a device pointer must never reach an MPI that is not CUDA-aware (the
 * device image's Open MPI is not: MPI_Allreduce of one segfaults). */
typedef struct dist_transport {
    const char *name;
    adia_status (*post)(dist_halo *h, const double *x_owned, double *x_local);
    adia_status (*wait)(dist_halo *h);
} dist_transport;

struct dist_halo {
    MPI_Comm comm;
    const dist_transport *transport;
    dist_segment *recv, *send;   /* receives in ascending global column per peer */
    int nrecv, nsend;
    MPI_Request *req;            /* nrecv + nsend */
    int neighbours;
    int64_t recv_values;
};

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
    adia_plan *plan;             /* of the block: rows x local_cols */
    double *x_local;             /* local_cols + 1 */
    double *diag;                /* A(i,i) of the rows held here */
    double max_abs;              /* max |A(i,j)| of the rows held here */
    dist_halo halo;
    double halo_ms, reduce_ms;
    int64_t halo_bytes_all;
};

/* dist_util.c: the status every process returns (an error of the lowest
 * failing rank, its message prefixed "rank R: ", on all); handle check. */
adia_status adia__dist_agree(MPI_Comm comm, adia_status s);
adia_status adia__dist_check(const adia_dist_matrix *D, const char *func);
/* malloc of count x size bytes (at least 1), or NULL after an error naming what. */
void *adia__dist_alloc(size_t count, size_t size, const char *what);

/* dist_layout.c: the local x of rows [first, first + rows of L) of an
 * n x n matrix whose block L has global columns: intervals (from the
 * offsets when there are few, else from the columns), and the block with
 * columns renumbered into that layout (*local), its diagonal and max |a|. */
adia_status adia__dist_layout(adia_dist_matrix *D, const adia_matrix *L, adia_matrix **local);

/* dist_halo.c: the exchange plan (what each process needs from which
 * other, agreed with MPI_Alltoall / Alltoallv once) and one exchange. */
adia_status adia__dist_halo_setup(adia_dist_matrix *D);
void adia__dist_halo_free(dist_halo *h);
/* x (owned rows) into D->x_local, halo included; timed into halo_ms. */
adia_status adia__dist_exchange(adia_dist_matrix *D, const double *x);

#endif
