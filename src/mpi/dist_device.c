/* dist_device.c -- the device path of a distributed matrix: each process
 * plans its block on one GPU and keeps its local x there; the halo moves
 * by NCCL (dist_nccl.c) or staged through pinned host memory and MPI
 * (dist_staged.c).  A product: the stream waits for the previous one to
 * have finished with the local x; the transport posts the halo (with NCCL
 * on a stream of its own, after a kernel there has copied this process's
 * own rows that the ends read into the local x); the interior's parts
 * run on x as given meanwhile; once the halo is in, the parts reading it
 * (the ends) run -- with NCCL on the halo's stream, beside the interior --
 * and an event marks the local x free again.  Every step runs even after
 * an earlier one failed on this process alone -- the peers wait for its
 * messages -- and the status is agreed afterwards. */
#include "dist_device.h"
#include "dist_kernels.h"

_Static_assert(DIST_PARTS <= DIST_SEGMENTS, "a band per part in one copy");

adia_status adia__dist_cuda(cudaError_t e, const char *call)
{
    if (e == cudaSuccess) return ADIA_OK;
    (void)cudaGetLastError();   /* a non-sticky error must not resurface later */
    return adia_set_error(e == cudaErrorMemoryAllocation ? ADIA_ERR_NO_MEMORY : ADIA_ERR_CUDA,
                          "%s failed: %s", call, cudaGetErrorString(e));
}

/* ------------------------------------------------------------- device */

/* This process's rank among those of its node (sharing memory): its GPU
 * is that modulo the node's devices, so a node's processes spread. */
static int node_rank(MPI_Comm comm)
{
    MPI_Comm node;
    int r = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &r);
    MPI_Comm_free(&node);
    return r;
}

adia_status adia__dist_device_select(adia_dist_matrix *D, int device)
{
    adia_status s = ADIA_OK;
    int count = 0, have, all;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        count = 0;
        (void)cudaGetLastError();
    }
    have = count > 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, D->comm);
    if (!all && device == -1) return ADIA_OK;   /* the CPU on every process */
    if (!have)
        s = adia_set_error(ADIA_ERR_NO_DEVICE, "hints.device 1: no usable CUDA device (%s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    DIST_TRY(adia__dist_agree(D->comm, s));
    int gpu = node_rank(D->comm) % count;
    DIST_TRY(adia__dist_agree(D->comm, adia__dist_cuda(cudaSetDevice(gpu), "cudaSetDevice")));
    D->gpu = gpu;
    return ADIA_OK;
}

/* ------------------------------------------------------------ set-up */

/* The local x, the y of host-vector calls, their stream, the halo's
 * stream (nccl), the events. */
static adia_status alloc_buffers(const adia_dist_matrix *D, dist_device *g)
{
    DIST_TRY(adia__dist_cuda(cudaMalloc((void **)&g->x_local, ((size_t)D->local_cols + 1) *
                                        sizeof *g->x_local), "cudaMalloc (local x)"));
    DIST_TRY(adia__dist_cuda(cudaMalloc((void **)&g->y, ((size_t)D->rows + 1) * sizeof *g->y),
                             "cudaMalloc (y)"));
    DIST_TRY(adia__dist_cuda(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
                             "cudaStreamCreateWithFlags"));
    /* the halo's kernels first: with the product's blocks filling the GPU
     * they would wait for it to drain (solvers' graphs keep the priority) */
    int least = 0, greatest = 0;
    DIST_TRY(adia__dist_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                             "cudaDeviceGetStreamPriorityRange"));
    DIST_TRY(adia__dist_cuda(cudaStreamCreateWithPriority(&g->comm, cudaStreamNonBlocking,
                                                          greatest),
                             "cudaStreamCreateWithPriority"));
    DIST_TRY(adia__dist_cuda(cudaMemset(g->x_local, 0, ((size_t)D->local_cols + 1) *
                                        sizeof *g->x_local), "cudaMemset (local x)"));
    DIST_TRY(adia__dist_cuda(cudaMemset(g->y, 0, ((size_t)D->rows + 1) * sizeof *g->y),
                             "cudaMemset (y)"));
    DIST_TRY(adia__dist_cuda(cudaMalloc((void **)&g->ends_out, ADIA_SPMV_SUMS *
                                        sizeof *g->ends_out), "cudaMalloc (sums)"));
    DIST_TRY(adia__dist_cuda(cudaMemset(g->ends_out, 0, ADIA_SPMV_SUMS * sizeof *g->ends_out),
                             "cudaMemset (sums)"));
    cudaEvent_t *ev[] = {&g->done, &g->x_ready, &g->halo_in};
    for (int k = 0; k < 3; k++)
        DIST_TRY(adia__dist_cuda(cudaEventCreateWithFlags(ev[k], cudaEventDisableTiming),
                                 "cudaEventCreateWithFlags"));
    /* the memsets above are on the legacy stream, which the non-blocking
     * streams do not wait for (adia__gpu_fence in src/core/internal.h) */
    return adia__dist_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
}

/* Rank 0's setting `name` (unset: 0) as its index in choices (NULL-ended,
 * choices[0] the default), the same on every process; anything else is
 * an error listing the choices. */
static adia_status env_mode(const adia_dist_matrix *D, const char *name,
                            const char *const *choices, int *mode)
{
    const char *env = getenv(name);
    adia_status s = ADIA_OK;
    *mode = 0;
    if (D->rank == 0 && env && *env) {
        char list[96] = "";
        *mode = -1;
        for (int k = 0; choices[k]; k++) {
            if (!strcmp(env, choices[k])) *mode = k;
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                     choices[k]);
        }
        if (*mode < 0) {
            s = adia_set_error(ADIA_ERR_INVALID_ARG, "%s=%s: one of %s", name, env, list);
            *mode = 0;
        }
    }
    MPI_Bcast(mode, 1, MPI_INT, 0, D->comm);
    return adia__dist_agree(D->comm, s);
}

/* Whether every process has a GPU of its own: their UUIDs, gathered
 * (unique across nodes too), all different. */
static adia_status distinct_gpus(const adia_dist_matrix *D, int *distinct)
{
    struct cudaDeviceProp p;
    unsigned char *all = adia__dist_alloc((size_t)D->size, sizeof p.uuid, "device UUIDs");
    adia_status s = all ? adia__dist_cuda(cudaGetDeviceProperties(&p, D->gpu),
                                          "cudaGetDeviceProperties")
                        : ADIA_ERR_NO_MEMORY;
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK) {
        MPI_Allgather(&p.uuid, (int)sizeof p.uuid, MPI_BYTE, all, (int)sizeof p.uuid, MPI_BYTE,
                      D->comm);
        *distinct = 1;
        for (int i = 0; i < D->size; i++)
            for (int j = i + 1; j < D->size; j++)
                if (!memcmp(all + i * sizeof p.uuid, all + j * sizeof p.uuid, sizeof p.uuid))
                    *distinct = 0;
    }
    free(all);
    return s;
}

/* nccl where it can run and is not declined, with the peer halo (and
 * reductions) where that can run too, else staged; one process (no halo)
 * is staged unless nccl is asked for.  ADIA_DIST_TRANSPORT: auto (0),
 * staged (1), nccl (2), peer (3); ADIA_DIST_REDUCE: auto (0), nccl (1),
 * peer (2) -- the reductions of a solve, for measuring. */
static adia_status choose_transport(adia_dist_matrix *D)
{
    static const char *const transports[] = {"auto", "staged", "nccl", "peer", NULL};
    static const char *const reductions[] = {"auto", "nccl", "peer", NULL};
    int mode = 0, reduce = 0, distinct = 0;
    DIST_TRY(env_mode(D, "ADIA_DIST_TRANSPORT", transports, &mode));
    DIST_TRY(env_mode(D, "ADIA_DIST_REDUCE", reductions, &reduce));
    DIST_TRY(distinct_gpus(D, &distinct));
    const char *why = !adia__dist_nccl_built() ? "adia_mpi was built without NCCL"
                      : !distinct ? "processes share a GPU (NCCL needs one GPU per process)"
                                  : NULL;
    if (mode >= 2 && why)
        return adia_set_error(ADIA_ERR_UNSUPPORTED, "ADIA_DIST_TRANSPORT=%s: %s",
                              transports[mode], why);
    const int nccl = mode == 2 || mode == 3 || (mode == 0 && !why && D->size > 1);
    if (!nccl && reduce)
        return adia_set_error(ADIA_ERR_UNSUPPORTED, "ADIA_DIST_REDUCE=%s: the transport is "
                              "staged (%s)", reductions[reduce],
                              mode == 1 ? "ADIA_DIST_TRANSPORT=staged" : why ? why : "one process");
    if (!nccl) return adia__dist_staged_init(D);
    adia__dist_phase(D, "dist: device buffers");
    DIST_TRY(adia__dist_nccl_init(D));   /* the reductions, and the halo unless peer's */
    adia__dist_phase(D, "dist: NCCL connected");
    if (mode != 2) return adia__dist_peer_init(D, mode == 3, reduce);
    return reduce != 2 ? ADIA_OK
                       : adia_set_error(ADIA_ERR_UNSUPPORTED, "ADIA_DIST_REDUCE=peer: the "
                                        "transport is nccl (ADIA_DIST_TRANSPORT=nccl)");
}

const char *adia__dist_reduce_name(const adia_dist_matrix *D)
{
    return !D->dev ? "mpi" : D->dev->peer_reduce ? "peer" : adia__dist_nccl_active(D) ? "nccl"
                                                                                      : "mpi";
}

adia_status adia__dist_device_setup(adia_dist_matrix *D)
{
    D->dev = calloc(1, sizeof *D->dev);
    adia_status s = D->dev ? alloc_buffers(D, D->dev)
                           : adia_set_error(ADIA_ERR_NO_MEMORY, "allocating the device state "
                                            "failed");
    DIST_TRY(adia__dist_agree(D->comm, s));
    DIST_TRY(adia__dist_trace_open(D));
    /* a measurement's choice: the ends after the join, as before 2026-11-27 */
    const char *ends = getenv("ADIA_DIST_ENDS");
    D->dev->ends_after = ends && !strcmp(ends, "after");
    const char *bands = getenv("ADIA_DIST_BANDS");
    D->dev->bands_on_product = bands && !strcmp(bands, "product");
    return choose_transport(D);
}

void adia__dist_device_free(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    if (!g) return;
    adia__dist_trace_write(D);   /* the products' stamps since the last solve */
    adia__dist_peer_free(D);
    adia__dist_nccl_free(g);
    adia__dist_trace_free(g);
    cudaEvent_t ev[] = {g->done, g->x_ready, g->halo_in};
    for (int k = 0; k < 3; k++)
        if (ev[k]) cudaEventDestroy(ev[k]);
    if (g->stream) cudaStreamDestroy(g->stream);
    if (g->comm) cudaStreamDestroy(g->comm);
    cudaFree(g->x_local);   /* cudaFree waits for kernels still using them */
    cudaFree(g->y);
    cudaFree(g->ends_out);
    for (int k = 0; k < D->nparts; k++) {
        cudaFree(D->part[k].sums_work);
        D->part[k].sums_work = NULL;
    }
    cudaFreeHost(g->pinned);
    cudaFreeHost(g->pinned_sums);
    free(g);
    D->dev = NULL;
}

/* ------------------------------------------------------------ product */

static adia_status first_error(adia_status a, adia_status b) { return a != ADIA_OK ? a : b; }

/* The owned rows the parts on the local x read, from d_x into it
 * (host-vector calls have put x in place already), in one launch. */
static adia_status copy_bands(adia_dist_matrix *D, const double *d_x, cudaStream_t stream)
{
    double *own = D->dev->x_local + D->own_pos;
    dist_segments segs = {.count = 0};
    for (int k = 0; k < D->nparts && d_x != own; k++) {
        const dist_part *p = &D->part[k];
        if (!p->x_own && p->band_len) {
            segs.at[segs.count] = p->band;
            segs.len[segs.count++] = p->band_len;
        }
    }
    if (segs.count == 0) return ADIA_OK;
    return adia__dist_cuda(adia__dist_copy_segments(own, d_x, segs, stream),
                           "copying the owned rows the ends read");
}

/* The halo's stream: NCCL's own, ordered after x is ready on stream, so
 * that the owned part's product runs while the halo moves; the staged
 * transport copies on stream (and waits from the host). */
static adia_status halo_stream(adia_dist_matrix *D, cudaStream_t stream, cudaStream_t *hs)
{
    dist_device *g = D->dev;
    *hs = stream;
    if (!adia__dist_nccl_active(D)) return ADIA_OK;
    *hs = g->comm;
    DIST_TRY(adia__dist_cuda(cudaEventRecord(g->x_ready, stream), "cudaEventRecord"));
    return adia__dist_cuda(cudaStreamWaitEvent(g->comm, g->x_ready, 0), "cudaStreamWaitEvent");
}

/* Whether stream is being captured into a CUDA graph (a solver's loop). */
static int capturing(cudaStream_t stream)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess) (void)cudaGetLastError();
    return cs == cudaStreamCaptureStatusActive;
}

static int has_ends(const adia_dist_matrix *D)
{
    for (int k = 0; k < D->nparts; k++)
        if (!D->part[k].x_own) return 1;
    return 0;
}

/* The parts reading the halo, on the halo's stream as soon as it has
 * arrived: they run beside the interior's product instead of after it
 * (the high-priority stream's blocks go first as the interior's retire).
 * Their sums go to ends_out, added to the interior's once both are done
 * (the same order every time: deterministic). */
static adia_status run_ends(adia_dist_matrix *D, double alpha, const double *d_x, double beta,
                            double *d_y, const dist_sums *sums, cudaStream_t hs)
{
    dist_sums ends = {0};
    if (sums) ends = (dist_sums){sums->z, D->dev->ends_out};
    return adia__dist_run_parts(D, alpha, d_x, D->dev->x_local, beta, d_y, 0,
                                sums ? &ends : NULL, hs);
}

adia_status adia__dist_device_spmv(adia_dist_matrix *D, double alpha, const double *d_x,
                                   double beta, double *d_y, const dist_sums *sums,
                                   cudaStream_t stream)
{
    dist_device *g = D->dev;
    cudaStream_t hs = stream;
    /* captured: the graph orders its products itself, an event from outside
     * it may not be waited on, and host time is the capture's, not the run's */
    const int graph = capturing(stream);
    double t0 = MPI_Wtime();
    /* a product on another stream may still read the local x */
    adia_status s = graph ? ADIA_OK : adia__dist_cuda(cudaStreamWaitEvent(stream, g->done, 0),
                                                      "cudaStreamWaitEvent");
    adia__dist_trace(D, TRACE_PRODUCT, stream);
    /* the owned rows the ends read: one kernel on the halo's stream, off
     * the interior's path (as two copy nodes there they had delayed the
     * ends by 60 us on 4 H100); ADIA_DIST_BANDS=product for the A/B */
    if (g->bands_on_product) s = first_error(s, copy_bands(D, d_x, stream));
    s = first_error(s, halo_stream(D, stream, &hs));
    if (hs != stream) adia__dist_trace(D, TRACE_HALO_START, hs);
    if (!g->bands_on_product) s = first_error(s, copy_bands(D, d_x, hs));
    adia__dist_trace(D, TRACE_BANDS, stream);
    /* posted after a failure too: the peers wait for these messages */
    s = first_error(s, D->halo.transport->post(D, d_x, g->x_local, hs));
    double t1 = MPI_Wtime();
    if (s == ADIA_OK)   /* meanwhile */
        s = adia__dist_run_parts(D, alpha, d_x, g->x_local, beta, d_y, 1, sums, stream);
    adia__dist_trace(D, TRACE_INTERIOR, stream);
    double t2 = MPI_Wtime();
    s = first_error(s, D->halo.transport->wait(D, g->x_local, hs));
    if (!graph) D->halo_ms += (t1 - t0 + MPI_Wtime() - t2) * 1e3;
    if (hs != stream) adia__dist_trace(D, TRACE_HALO_END, hs);
    if (s == ADIA_OK && !g->ends_after) s = run_ends(D, alpha, d_x, beta, d_y, sums, hs);
    /* the halo read: the peers may overwrite it (queued after a failure
     * too: they wait for it) */
    if (!g->ends_after && D->halo.transport->done)
        s = first_error(s, D->halo.transport->done(D, hs));
    if (hs != stream) {
        s = first_error(s, adia__dist_cuda(cudaEventRecord(g->halo_in, hs), "cudaEventRecord"));
        s = first_error(s, adia__dist_cuda(cudaStreamWaitEvent(stream, g->halo_in, 0),
                                           "cudaStreamWaitEvent"));
    }
    adia__dist_trace(D, TRACE_JOIN, stream);
    if (s == ADIA_OK && g->ends_after)   /* their sums straight into out */
        s = adia__dist_run_parts(D, alpha, d_x, g->x_local, beta, d_y, 0, sums, stream);
    if (g->ends_after && D->halo.transport->done)
        s = first_error(s, D->halo.transport->done(D, stream));
    if (s == ADIA_OK && sums && has_ends(D) && !g->ends_after)
        s = adia__dist_cuda(adia__dist_add_sums(sums->out, g->ends_out, ADIA_SPMV_SUMS, stream),
                            "adding the ends' sums");
    adia__dist_trace(D, TRACE_ENDS, stream);
    return graph ? s : first_error(s, adia__dist_cuda(cudaEventRecord(D->dev->done, stream),
                                                      "cudaEventRecord"));
}

adia_status adia_dist_spmv_device(adia_dist_matrix *D, double alpha, const double *d_x,
                                  double beta, double *d_y, void *stream)
{
    DIST_TRY(adia__dist_check_vectors(D, d_x, d_y, "adia_dist_spmv_device"));
    if (!D->dev)   /* the same on every process: the device was agreed */
        return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_spmv_device: the matrix is planned "
                              "on the CPU (hints.device 0, or -1 without a GPU everywhere): use "
                              "adia_dist_spmv");
    return adia__dist_agree(D->comm, adia__dist_device_spmv(D, alpha, d_x, beta, d_y, NULL,
                                                            stream));
}

adia_status adia__dist_device_spmv_host(adia_dist_matrix *D, double alpha, const double *x,
                                        double beta, double *y)
{
    dist_device *g = D->dev;
    double *own = g->x_local + D->own_pos;
    size_t bytes = (size_t)D->rows * sizeof *x;
    /* x straight into its place in the local x, once no product reads it */
    adia_status s = adia__dist_cuda(cudaStreamWaitEvent(g->stream, g->done, 0),
                                    "cudaStreamWaitEvent");
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaMemcpyAsync(own, x, bytes, cudaMemcpyHostToDevice, g->stream),
                            "cudaMemcpyAsync (x)");
    if (s == ADIA_OK && beta != 0)   /* y is not read when beta is 0 */
        s = adia__dist_cuda(cudaMemcpyAsync(g->y, y, bytes, cudaMemcpyHostToDevice, g->stream),
                            "cudaMemcpyAsync (y)");
    s = first_error(s, adia__dist_device_spmv(D, alpha, own, beta, g->y, NULL, g->stream));
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaMemcpyAsync(y, g->y, bytes, cudaMemcpyDeviceToHost, g->stream),
                            "cudaMemcpyAsync (y back)");
    return first_error(s, adia__dist_cuda(cudaStreamSynchronize(g->stream),
                                          "cudaStreamSynchronize"));
}
