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

/* One stamp of the device trace (dist_trace.c): tag and the GPU's global
 * timer (ns) into the next free pair of slots[0..2 cap), counted in
 * *count, by a one-thread kernel on stream (so a graph captures it). */
cudaError_t adia__dist_stamp(unsigned long long *slots, unsigned *count, unsigned cap,
                             unsigned tag, cudaStream_t stream);

/* The reductions over processes whose GPUs share a node (dist_peer.c):
 * each process's mailbox (device memory, mapped into every other by CUDA
 * IPC) holds per parity two sets of DIST_PEER_VALUES slots per process
 * and a flag per process. */
#define DIST_PEER_MAX 8          /* processes                          */
#define DIST_PEER_VALUES 64      /* values one reduction combines      */
typedef struct dist_peer_args {
    void *box[DIST_PEER_MAX];    /* every process's mailbox, as mapped here */
    int rank, size;
    unsigned long long *epoch;   /* this process's reductions so far (device) */
    int *failed;                 /* device: set when a peer did not answer  */
    unsigned long long timeout_ns;
} dist_peer_args;
size_t adia__dist_peer_box_bytes(int size);
/* v[0..count) (device, count <= DIST_PEER_VALUES) summed (max 0) or
 * maximised (max 1) over the processes, in place, by a one-block kernel
 * on stream: the values go to every mailbox, then the kernel waits for
 * every process's and combines them in rank order (the same bits on every
 * process).  A peer silent for timeout_ns: NaN, and *failed set. */
cudaError_t adia__dist_peer_reduce(const dist_peer_args *a, double *v, int count, int max,
                                   cudaStream_t stream);

/* out[k] += add[k], then add[k] = 0, k < n (device, n small), by a
 * one-warp kernel on stream. */
cudaError_t adia__dist_add_sums(double *out, double *add, int n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
