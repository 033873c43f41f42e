/* dist_device.h -- a device matrix's state, shared by the device path
 * (dist_device.c) and its NCCL transport (dist_nccl.c); CUDA builds only.
 * adia_mpi calls the CUDA runtime itself (buffers, copies, streams): the
 * block's SpMV is libadia's public adia_spmv_async. */
#ifndef ADIA_DIST_DEVICE_H
#define ADIA_DIST_DEVICE_H

#include "dist.h"
#include "dist_kernels.h"

#include <cuda_runtime.h>
#ifdef ADIA_HAVE_NCCL
#include <nccl.h>
#endif

struct dist_device {
    double *x_local;       /* device: local_cols + 1, own rows at own_pos */
    double *y;             /* device: rows + 1, for host-vector calls     */
    double *pinned;        /* staged: send_values, then recv_values       */
    cudaStream_t stream;   /* host-vector calls                           */
    cudaEvent_t done;      /* recorded after each product: the local x
                              and the pinned receives are free again      */
    cudaStream_t comm;     /* nccl: the halo's, beside the product's      */
    cudaEvent_t x_ready;   /* nccl: x may be sent (on the product's stream) */
    cudaEvent_t halo_in;   /* nccl: the halo has arrived (on comm)        */
    double *pinned_sums;   /* staged: a solver's sums on their way to MPI  */
    double *ends_out;      /* device: the sums of the parts reading the
                              halo, added to the product's (left zeroed)  */
    int ends_after;        /* ADIA_DIST_ENDS=after: those parts on the
                              product's stream after the join (measuring) */
    int bands_on_product;  /* ADIA_DIST_BANDS=product: the owned rows the
                              ends read copied on the product's stream
                              (measuring) */
    unsigned long long *trace;   /* ADIA_DIST_TRACE: tag, ns pairs (device) */
    unsigned *trace_count;       /* stamps taken (device)                    */
    int trace_files;             /* files written so far                     */
    dist_peer_args peer;   /* peer: the push / wait kernels' arguments    */
    unsigned long long *peer_box;   /* peer: this process's flags (device) */
    void **peer_mapped;    /* peer: other processes' flags, then local x,
                              mapped here (2 x size, NULL where unmapped)  */
    int peer_reduce;       /* peer: a solve's reductions by CUDA IPC too   */
#ifdef ADIA_HAVE_NCCL
    ncclComm_t nccl;       /* NULL unless the transport is nccl (or peer) */
    int nccl_failed;       /* a NCCL call failed: abort, not destroy      */
#endif
};

/* A CUDA runtime call's result as an adia error naming the call. */
adia_status adia__dist_cuda(cudaError_t e, const char *call);

/* y = alpha A x + beta y on device vectors of this process's rows: the
 * halo exchange and the block's product on stream (dist_device.c), with
 * the fused sums (beta 0) or sums NULL.  May be captured into a CUDA
 * graph when the transport is nccl or there is no halo.  This process's
 * status, not agreed: the caller agrees (adia_dist_spmv_device) or
 * carries a failure to its next reduction (dist_dsolve.c). */
adia_status adia__dist_device_spmv(adia_dist_matrix *D, double alpha, const double *d_x,
                                   double beta, double *d_y, const dist_sums *sums,
                                   cudaStream_t stream);

/* dist_peer.c: the transport "peer" (CUDA IPC between the GPUs of one
 * node), after NCCL's init; where it cannot run a clear error if asked,
 * else NCCL's halo stays.  reduce (ADIA_DIST_REDUCE): 0 a solve's
 * reductions by CUDA IPC too where a trial equals NCCL's, 1 NCCL's, 2 by
 * CUDA IPC or an error.  reduce: v[0..count) over the processes (as
 * adia__dist_nccl_reduce) by CUDA IPC where peer_reduce is on and count
 * <= DIST_PEER_SUMS, else by NCCL.  free: its mappings (check: dist.h). */
adia_status adia__dist_peer_init(adia_dist_matrix *D, int asked, int reduce);
adia_status adia__dist_device_reduce(adia_dist_matrix *D, double *v, int count, int max,
                                           cudaStream_t stream);
void adia__dist_peer_free(adia_dist_matrix *D);

/* dist_staged.c: the pinned buffer and the transport "staged". */
adia_status adia__dist_staged_init(adia_dist_matrix *D);

/* dist_nccl.c: the transport "nccl", its comm bootstrapped over MPI (a
 * unique id from rank 0, MPI_Bcast, ncclCommInitRank; collective), and
 * its end.  Built without NCCL: built is 0 and init ADIA_ERR_UNSUPPORTED. */
int adia__dist_nccl_built(void);
adia_status adia__dist_nccl_init(adia_dist_matrix *D);
void adia__dist_nccl_free(dist_device *g);
/* Whether the matrix's halo moves by NCCL; then v[0..count) (device) is
 * summed (max 0) or maximised (max 1) over the processes in place by
 * ncclAllReduce on stream.  Built without NCCL: never active, and the
 * reduction ADIA_ERR_UNSUPPORTED. */
int adia__dist_nccl_active(const adia_dist_matrix *D);
adia_status adia__dist_nccl_reduce(adia_dist_matrix *D, double *v, int count, int max,
                                   cudaStream_t stream);

/* dist_trace.c: a developer's trace of the device product and the
 * reductions, where the time of an iteration goes.  With ADIA_DIST_TRACE
 * set to a folder, one-thread kernels stamp the GPU's global timer at each
 * phase (captured into the solver's graphs like the phases themselves),
 * and after each device solve (and at the matrix's destruction, the
 * products since) every process writes its stamps to
 * FOLDER/trace-N.RANK.tsv (bench/dist-trace.py makes the table).  A stamp
 * costs about one kernel launch: time the solve without them. */
typedef enum dist_tag {
    TRACE_PRODUCT,       /* a product starts (its stream)            */
    TRACE_BANDS,         /* the owned rows the ends read are copied
                            (or, on the halo's stream, queued)       */
    TRACE_INTERIOR,      /* the parts needing no halo are done       */
    TRACE_JOIN,          /* the halo has arrived (product's stream)  */
    TRACE_ENDS,          /* the parts reading the halo are done (with
                            nccl beside the interior) and summed    */
    TRACE_HALO_START,    /* the halo's stream starts                 */
    TRACE_HALO_END,      /* ... and has received                     */
    TRACE_REDUCE_START,  /* a reduction over the processes starts    */
    TRACE_REDUCE_END,    /* ... and is done                          */
} dist_tag;
adia_status adia__dist_trace_open(adia_dist_matrix *D);
void adia__dist_trace(adia_dist_matrix *D, dist_tag tag, cudaStream_t stream);
void adia__dist_trace_free(dist_device *g);

#endif
