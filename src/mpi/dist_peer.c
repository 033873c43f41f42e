/* dist_peer.c -- the solvers' reductions over processes whose GPUs share
 * one node, without NCCL: each process's mailbox (a few KB of device
 * memory) is mapped into every other by CUDA IPC, and a one-block kernel
 * writes its values into all mailboxes and waits for everyone's
 * (dist_kernels.cu).  An ncclAllReduce of 5 doubles took 12-14 us inside
 * the solver's graph on 2 and 4 H200 (the device trace, 2026-11-26); the
 * mailbox kernel is a few NVLink stores and one wait.  Rank-ordered sums:
 * the same bits on every process, run to run.
 *
 * Chosen when the halo moves by NCCL (one GPU per process), every process
 * is on this node, there are at most DIST_PEER_MAX of them, and a trial
 * reduction at creation gives the right answer everywhere; else NCCL's.
 * ADIA_DIST_REDUCE=nccl declines it, =peer insists (an error where it
 * cannot run).  A peer that never reaches its reduction (a process that
 * died) makes the others' values NaN after ADIA_DIST_PEER_TIMEOUT_S
 * (default 120) seconds and the solve fails naming it, where NCCL would
 * wait for ever. */
#include "dist_device.h"
#include "dist_kernels.h"

#include <math.h>

/* Rank 0's ADIA_DIST_REDUCE, the same on every process: 0 auto, 1 nccl,
 * 2 peer. */
static adia_status reduce_mode(const adia_dist_matrix *D, int *mode)
{
    const char *env = getenv("ADIA_DIST_REDUCE");
    adia_status s = ADIA_OK;
    *mode = 0;
    if (D->rank == 0 && env && *env && strcmp(env, "auto")) {
        if (!strcmp(env, "nccl")) *mode = 1;
        else if (!strcmp(env, "peer")) *mode = 2;
        else s = adia_set_error(ADIA_ERR_INVALID_ARG, "ADIA_DIST_REDUCE=%s: auto, nccl or peer",
                                env);
    }
    MPI_Bcast(mode, 1, MPI_INT, 0, D->comm);
    return adia__dist_agree(D->comm, s);
}

/* Why the mailboxes cannot be used here (NULL: they can be tried). */
static const char *unsuitable(const adia_dist_matrix *D)
{
    if (!adia__dist_nccl_active(D)) return "the halo does not move by NCCL (shared GPUs?)";
    if (D->size < 2) return "one process";
    if (D->size > DIST_PEER_MAX) return "more than 8 processes";
    MPI_Comm node;
    int on_node = 0;
    MPI_Comm_split_type(D->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    return on_node == D->size ? NULL : "the processes span several nodes";
}

static unsigned long long timeout_ns(void)
{
    const char *env = getenv("ADIA_DIST_PEER_TIMEOUT_S");
    double s = env && *env ? atof(env) : 120;
    return (unsigned long long)((s > 0 && s < 1e6 ? s : 120) * 1e9);
}

/* This process's mailbox, zeroed, and every other's mapped here. */
static adia_status map_boxes(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    dist_peer_args *a = &g->peer;
    const size_t bytes = adia__dist_peer_box_bytes(D->size);
    cudaIpcMemHandle_t mine, all[DIST_PEER_MAX];
    adia_status s = adia__dist_cuda(cudaMalloc(&g->peer_box, bytes + 2 * sizeof(double)),
                                    "cudaMalloc (peer mailbox)");
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaMemset(g->peer_box, 0, bytes + 2 * sizeof(double)),
                            "cudaMemset (peer mailbox)");
    if (s == ADIA_OK) s = adia__dist_cuda(cudaIpcGetMemHandle(&mine, g->peer_box),
                                          "cudaIpcGetMemHandle");
    DIST_TRY(adia__dist_agree(D->comm, s));
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, D->comm);
    memset(a, 0, sizeof *a);
    a->rank = D->rank;
    a->size = D->size;
    a->timeout_ns = timeout_ns();
    /* after the mailbox: the epoch counter and the failure flag */
    a->epoch = (unsigned long long *)((char *)g->peer_box + bytes);
    a->failed = (int *)((char *)g->peer_box + bytes + sizeof(double));
    for (int q = 0; q < D->size && s == ADIA_OK; q++) {
        if (q == D->rank) {
            a->box[q] = g->peer_box;
            continue;
        }
        s = adia__dist_cuda(cudaIpcOpenMemHandle(&a->box[q], all[q],
                                                 cudaIpcMemLazyEnablePeerAccess),
                            "cudaIpcOpenMemHandle (a peer's mailbox)");
        if (s != ADIA_OK) a->box[q] = NULL;
    }
    return adia__dist_agree(D->comm, s);
}

/* One reduction of known values, synchronised: every process must see
 * 1 + 2 + ... + size (and its maximum), else the mailboxes are not used. */
static adia_status trial(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    double h[2] = {D->rank + 1.0, D->rank + 1.0};
    const double sum = D->size * (D->size + 1) / 2.0;
    adia_status s = adia__dist_cuda(cudaMemcpy(g->y, h, sizeof h, cudaMemcpyHostToDevice),
                                    "cudaMemcpy");
    if (s == ADIA_OK)
        s = adia__dist_cuda(adia__dist_peer_reduce(&g->peer, g->y, 1, 0, g->stream),
                            "peer reduction");
    if (s == ADIA_OK)
        s = adia__dist_cuda(adia__dist_peer_reduce(&g->peer, g->y + 1, 1, 1, g->stream),
                            "peer reduction");
    if (s == ADIA_OK) s = adia__dist_cuda(cudaStreamSynchronize(g->stream), "cudaStreamSynchronize");
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaMemcpy(h, g->y, sizeof h, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (s == ADIA_OK && (h[0] != sum || h[1] != D->size))
        s = adia_set_error(ADIA_ERR_INTERNAL, "a trial reduction over peer mailboxes gave %g "
                           "and %g, not %g and %d", h[0], h[1], sum, D->size);
    return adia__dist_agree(D->comm, s);
}

static void unmap(dist_device *g)
{
    for (int q = 0; q < g->peer.size; q++)
        if (g->peer.box[q] && g->peer.box[q] != g->peer_box) cudaIpcCloseMemHandle(g->peer.box[q]);
    cudaFree(g->peer_box);
    memset(&g->peer, 0, sizeof g->peer);
    g->peer_box = NULL;
    g->peer_on = 0;
    (void)cudaGetLastError();
}

adia_status adia__dist_peer_init(adia_dist_matrix *D)
{
    int mode = 0;
    DIST_TRY(reduce_mode(D, &mode));
    if (mode == 1) return ADIA_OK;
    const char *why = unsuitable(D);
    if (why && mode == 2)
        return adia_set_error(ADIA_ERR_UNSUPPORTED, "ADIA_DIST_REDUCE=peer: %s", why);
    if (why) return ADIA_OK;
    adia_status s = map_boxes(D);
    if (s == ADIA_OK) s = trial(D);
    if (s == ADIA_OK) {
        D->dev->peer_on = 1;
        return ADIA_OK;
    }
    unmap(D->dev);
    /* auto: NCCL's reductions then (the message says why, for --explain) */
    return mode == 2 ? s : ADIA_OK;
}

int adia__dist_peer_active(const adia_dist_matrix *D) { return D->dev && D->dev->peer_on; }

adia_status adia__dist_peer_reduce_on(adia_dist_matrix *D, double *v, int count, int max,
                                      cudaStream_t stream)
{
    return adia__dist_cuda(adia__dist_peer_reduce(&D->dev->peer, v, count, max, stream),
                           "peer reduction");
}

adia_status adia__dist_peer_check(adia_dist_matrix *D)
{
    int failed = 0;
    if (!adia__dist_peer_active(D)) return ADIA_OK;
    adia_status s = adia__dist_cuda(cudaMemcpy(&failed, D->dev->peer.failed, sizeof failed,
                                               cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (s == ADIA_OK && failed)
        s = adia_set_error(ADIA_ERR_INTERNAL, "a peer process did not reach a reduction within "
                           "%.0f s (ADIA_DIST_PEER_TIMEOUT_S)", D->dev->peer.timeout_ns / 1e9);
    return s;
}

const char *adia__dist_reduce_name(const adia_dist_matrix *D)
{
    return adia__dist_peer_active(D) ? "peer" : adia__dist_nccl_active(D) ? "nccl" : "mpi";
}

void adia__dist_peer_free(dist_device *g)
{
    if (g->peer_box) unmap(g);
}
