/* dist_kernels.h -- adia_mpi's own device kernel (dist_kernels.cu): plain
 * C interface, no MPI, so nvcc never sees mpi.h. */
#ifndef ADIA_DIST_KERNELS_H
#define ADIA_DIST_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *out (host) = max |v_i| of v[0..n) (device; NaN if one is NaN), on
 * stream (a cudaStream_t); synchronises it. */
cudaError_t adia__dist_max_abs(int64_t n, const double *v, double *out, cudaStream_t stream);

/* *out (host) = a hash of v[0..n) (device) and the positions of its
 * values, order-free (equal vectors, equal hashes), on stream; synchronises
 * it.  The peer halo's trial compares whole local x's by it. */
cudaError_t adia__dist_hash(int64_t n, const double *v, unsigned long long *out,
                            cudaStream_t stream);

/* One stamp of the device trace (dist_trace.c): tag and the GPU's global
 * timer (ns) into the next free pair of slots[0..2 cap), counted in
 * *count, by a one-thread kernel on stream (so a graph captures it). */
cudaError_t adia__dist_stamp(unsigned long long *slots, unsigned *count, unsigned cap,
                             unsigned tag, cudaStream_t stream);

/* out[k] += add[k], then add[k] = 0, k < n (device, n small), by a
 * one-warp kernel on stream. */
cudaError_t adia__dist_add_sums(double *out, double *add, int n, cudaStream_t stream);

/* The owned rows the ends read, into the local x: dst[at[k] + i] =
 * src[at[k] + i] for i < len[k], k < count (at most DIST_SEGMENTS), in
 * one launch on stream (two copy nodes cost 2-4 us more on 4 H200). */
#define DIST_SEGMENTS 4
typedef struct dist_segments {
    int32_t at[DIST_SEGMENTS], len[DIST_SEGMENTS];
    int count;
} dist_segments;
cudaError_t adia__dist_copy_segments(double *dst, const double *src, dist_segments segs,
                                     cudaStream_t stream);

/* The peer halo and reductions (dist_peer.c): this process's box of
 * words -- per rank, the epoch of the halo that rank last wrote here
 * (arrived) and the last it read here (consumed), then this process's
 * epoch, a block counter, the failure flag, the reductions' epoch, and
 * the reductions' slots: two sets (by the epoch's parity) of one slot per
 * rank, its epoch then its values -- and the boxes and local x of the
 * processes on the node, mapped by CUDA IPC. */
#define DIST_PEER_RANKS 16   /* processes of one node */
#define DIST_PEER_SEGS 16    /* segments this process sends */
#define DIST_PEER_SUMS 1002  /* values one peer reduction combines: GMRES(1000)'s basis
                                products, the most of libadia's methods (more: NCCL's) */
enum { PEER_ARRIVED = 0, PEER_CONSUMED = DIST_PEER_RANKS, PEER_EPOCH = 2 * DIST_PEER_RANKS,
       PEER_COUNT, PEER_FAILED, PEER_SUM_EPOCH, PEER_SUM_SLOTS,
       PEER_SUM_SLOT_WORDS = 1 + DIST_PEER_SUMS,
       PEER_BOX_WORDS = PEER_SUM_SLOTS + 2 * DIST_PEER_RANKS * PEER_SUM_SLOT_WORDS };
typedef struct dist_peer_args {
    unsigned long long *box;                   /* this process's (device) */
    int rank, size, nto, nfrom, nseg, nrecv;
    int to_rank[DIST_PEER_RANKS], from_rank[DIST_PEER_RANKS];
    unsigned long long *to_box[DIST_PEER_RANKS];     /* mapped */
    unsigned long long *from_box[DIST_PEER_RANKS];   /* mapped */
    unsigned long long *all_box[DIST_PEER_RANKS];    /* every rank's, this one's own */
    int32_t src_at[DIST_PEER_SEGS], len[DIST_PEER_SEGS];
    double *dst[DIST_PEER_SEGS];               /* in a peer's local x (mapped) */
    double *recv_first[DIST_PEER_SEGS];        /* each received segment's first slot here */
    unsigned long long timeout_ns;
    int mute;   /* fault injection (tests): never raise the receivers' arrived flags
                   nor a reduction's epochs (and fail those reductions here too) */
} dist_peer_args;

/* Queued on stream: push: once every process sent to has consumed the
 * previous halo, the segments of x_owned written into their local x,
 * then (last block) this epoch into their arrived flags; wait: until
 * every process received from has arrived at this epoch (a timeout sets
 * the failure flag and NaN in the halo), then the epoch advanced;
 * consumed: this epoch into the consumed flags of the processes received
 * from (after the parts reading the halo). */
cudaError_t adia__dist_peer_push(const dist_peer_args *a, const double *x_owned,
                                 cudaStream_t stream);
cudaError_t adia__dist_peer_wait(const dist_peer_args *a, cudaStream_t stream);
cudaError_t adia__dist_peer_consumed(const dist_peer_args *a, cudaStream_t stream);

/* v[0..count) (device, count <= DIST_PEER_SUMS) summed (max 0) or
 * maximised (max 1, NaN kept) over every process in place, queued on
 * stream: one block writes v into its slot of every process's box, then
 * raises that slot's epoch, waits for every rank's slot here and combines
 * them in rank order (the same bits on every process).  Two sets of
 * slots: a process can be one reduction ahead of another, not two (the
 * next needs the other's values).  A timeout, or an epoch past this one,
 * sets the failure flag of every process and NaN into v; a process that
 * finds its flag set after its wait puts NaN into v too (so a process late
 * by more than the timeout fails with the others). */
cudaError_t adia__dist_peer_reduce(const dist_peer_args *a, double *v, int count, int max,
                                   cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
