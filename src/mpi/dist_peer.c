/* dist_peer.c -- the halo of a device matrix written straight into the
 * neighbours' local x, for processes whose GPUs share one node: each
 * process maps its neighbours' local x and a box of flags (device memory,
 * CUDA IPC), and one kernel of its own copies the segments it sends over
 * NVLink and raises the receivers' flags (dist_kernels.cu).  NCCL's
 * send / receive kernels, running 33-42 us beside the interior's product,
 * slowed it by 7-9 us on 2 and 4 H200 whatever NCCL's settings (the
 * device trace, bench/results/2026-11-27b-h200x4); this push takes a few
 * microseconds.  A solve's reductions go the same way (up to
 * DIST_PEER_SUMS values, every reduction of libadia's methods): each
 * process writes its values into a slot of every process's box and sums
 * the slots in rank order, where NCCL's all-reduce took 11-16 us.
 *
 * A product: push (once every receiver has consumed the previous halo,
 * its "consumed" flag), wait (until every sender's "arrived" flag holds
 * this epoch), the parts reading the halo, consumed (this epoch into the
 * senders' flags).  Epochs count products in device memory, so the
 * kernels replay in the solvers' graphs.  A peer that never comes (a
 * process that died) sets the failure flag after ADIA_DIST_PEER_TIMEOUT_S
 * (default 120) seconds and NaN into the halo: the solver stops at its
 * next reduction, and the solve's status names the timeout, where NCCL
 * would wait for ever.
 *
 * The default (and ADIA_DIST_TRANSPORT=peer) where the NCCL transport
 * could run (one GPU per process), every process is on this node (at most
 * DIST_PEER_RANKS), sends at most DIST_PEER_SEGS segments, and a trial
 * exchange at creation equals NCCL's (the reductions: a trial sum and
 * maximum); by default NCCL's otherwise.
 * Per CG iteration 3.0% (2 GPUs) and 1.0% (4) faster than NCCL's halo at
 * 160^3 rows per GPU, the product alone 5.0% and 4.5% (4 H200,
 * 2026-11-27, bench/results/2026-11-27c-h200x4). */
#include "dist_device.h"
#include "dist_kernels.h"

static unsigned long long timeout_ns(void)
{
    const char *env = getenv("ADIA_DIST_PEER_TIMEOUT_S");
    const double s = env && *env ? atof(env) : 120;
    return (unsigned long long)((s > 0 && s < 1e6 ? s : 120) * 1e9);
}

/* Why the peer halo cannot run (NULL: it may be tried), the same on
 * every process (the first reason any of them has). */
static const char *unsuitable(const adia_dist_matrix *D)
{
    static const char *why[] = {NULL, "the halo does not move by NCCL (shared GPUs?)",
                                "one process", "more than 16 processes",
                                "the processes span several nodes",
                                "a process sends more than 16 segments"};
    MPI_Comm node;
    int on_node = 0, k = 0;
    MPI_Comm_split_type(D->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    k = !adia__dist_nccl_active(D) ? 1 : D->size < 2 ? 2 : D->size > DIST_PEER_RANKS ? 3
      : on_node != D->size ? 4 : D->halo.nsend > DIST_PEER_SEGS ? 5 : 0;
    int first = k ? k : 99;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, D->comm);
    return why[first == 99 ? 0 : first];
}

/* Where each segment this process sends lands in its receiver's local x:
 * every process tells each sender the positions of the segments it
 * receives from it, in order (segments between two processes pair up in
 * order, as for NCCL). */
static adia_status landing(const adia_dist_matrix *D, int32_t *dst_at)
{
    const dist_halo *h = &D->halo;
    const int P = D->size;
    int *cnt = calloc(4 * (size_t)P, sizeof *cnt);
    int32_t *mine = malloc(((size_t)h->nrecv + 1) * sizeof *mine);
    adia_status a = cnt && mine ? ADIA_OK : adia_set_error(ADIA_ERR_NO_MEMORY, "allocating the "
                                                           "peer halo's table failed");
    if ((a = adia__dist_agree(D->comm, a)) != ADIA_OK) {
        free(cnt);
        free(mine);
        return a;
    }
    int *scnt = cnt, *sdis = cnt + P, *rcnt = cnt + 2 * P, *rdis = cnt + 3 * P;
    for (int k = 0; k < h->nrecv; k++) scnt[h->recv[k].peer]++;
    for (int k = 0; k < h->nsend; k++) rcnt[h->send[k].peer]++;
    for (int q = 1; q < P; q++) {
        sdis[q] = sdis[q - 1] + scnt[q - 1];
        rdis[q] = rdis[q - 1] + rcnt[q - 1];
    }
    int *fill = calloc((size_t)P, sizeof *fill);
    int32_t *theirs = malloc(((size_t)h->nsend + 1) * sizeof *theirs);
    adia_status s = fill && theirs ? ADIA_OK
                                   : adia_set_error(ADIA_ERR_NO_MEMORY, "allocating the peer "
                                                    "halo's table failed");
    s = adia__dist_agree(D->comm, s);   /* all or none in the exchange */
    if (s == ADIA_OK) {
        for (int k = 0; k < h->nrecv; k++) {
            const int q = h->recv[k].peer;
            mine[sdis[q] + fill[q]++] = h->recv[k].at;
        }
        MPI_Alltoallv(mine, scnt, sdis, MPI_INT32_T, theirs, rcnt, rdis, MPI_INT32_T, D->comm);
        memset(fill, 0, (size_t)P * sizeof *fill);
        for (int k = 0; k < h->nsend; k++) {
            const int q = h->send[k].peer;
            dst_at[k] = theirs[rdis[q] + fill[q]++];
        }
    }
    free(cnt);
    free(mine);
    free(fill);
    free(theirs);
    return s;
}

/* The ranks this process sends to and receives from, ascending. */
static void neighbours(const adia_dist_matrix *D, dist_peer_args *a)
{
    for (int q = 0; q < D->size; q++) {
        int to = 0, from = 0;
        for (int k = 0; k < D->halo.nsend; k++) to |= D->halo.send[k].peer == q;
        for (int k = 0; k < D->halo.nrecv; k++) from |= D->halo.recv[k].peer == q;
        if (to) a->to_rank[a->nto++] = q;
        if (from) a->from_rank[a->nfrom++] = q;
    }
}

/* Device memory of another process (handle h) mapped here, once (*at). */
static adia_status open_peer(cudaIpcMemHandle_t h, void **at, const char *what)
{
    if (*at) return ADIA_OK;
    return adia__dist_cuda(cudaIpcOpenMemHandle(at, h, cudaIpcMemLazyEnablePeerAccess), what);
}

/* The other processes' boxes the reductions write into beyond the
 * neighbours' (all: every process's handles); agreed.  Where one cannot
 * be mapped (GPUs without peer access) the halo still runs: only the
 * reductions go by NCCL. */
static adia_status map_boxes(adia_dist_matrix *D, const cudaIpcMemHandle_t *all)
{
    dist_device *g = D->dev;
    void **boxes = g->peer_mapped;
    adia_status s = ADIA_OK;
    for (int q = 0; q < D->size && s == ADIA_OK; q++)
        if (q != D->rank)
            s = open_peer(all[2 * q], &boxes[q], "cudaIpcOpenMemHandle (a process's flags)");
    s = adia__dist_agree(D->comm, s);
    for (int q = 0; q < D->size && s == ADIA_OK; q++)
        g->peer.all_box[q] = q == D->rank ? g->peer_box : boxes[q];
    return s;
}

/* The box, the handles gathered (box and local x of every process), the
 * neighbours' mapped, the kernels' arguments; with reduce (not 1) every
 * process's box too, its outcome in *boxes_status. */
static adia_status map_all(adia_dist_matrix *D, int reduce, adia_status *boxes_status)
{
    dist_device *g = D->dev;
    dist_peer_args *a = &g->peer;
    const int P = D->size;
    const size_t box_bytes = PEER_BOX_WORDS * sizeof(unsigned long long);
    cudaIpcMemHandle_t mine[2], *all = malloc(2 * (size_t)P * sizeof *all);
    int32_t dst_at[DIST_PEER_SEGS];
    g->peer_mapped = calloc(2 * (size_t)P, sizeof *g->peer_mapped);
    if (!all || !g->peer_mapped) {
        free(all);
        return adia_set_error(ADIA_ERR_NO_MEMORY, "allocating the peer halo's handles failed");
    }
    void **boxes = g->peer_mapped, **xs = g->peer_mapped + P;
    adia_status s = adia__dist_cuda(cudaMalloc((void **)&g->peer_box, box_bytes),
                                    "cudaMalloc (peer flags)");
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaMemset(g->peer_box, 0, box_bytes), "cudaMemset (peer flags)");
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaIpcGetMemHandle(&mine[0], g->peer_box), "cudaIpcGetMemHandle");
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaIpcGetMemHandle(&mine[1], g->x_local), "cudaIpcGetMemHandle");
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK) {
        MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, D->comm);
        s = landing(D, dst_at);
    }
    memset(a, 0, sizeof *a);
    a->box = g->peer_box;
    a->rank = D->rank;
    a->size = P;
    a->timeout_ns = timeout_ns();
    neighbours(D, a);
    for (int k = 0; k < a->nto && s == ADIA_OK; k++) {
        const int q = a->to_rank[k];
        s = open_peer(all[2 * q], &boxes[q], "cudaIpcOpenMemHandle (a neighbour's flags)");
        if (s == ADIA_OK)
            s = open_peer(all[2 * q + 1], &xs[q], "cudaIpcOpenMemHandle (a neighbour's local x)");
        a->to_box[k] = boxes[q];
    }
    for (int k = 0; k < a->nfrom && s == ADIA_OK; k++) {
        const int q = a->from_rank[k];
        s = open_peer(all[2 * q], &boxes[q], "cudaIpcOpenMemHandle (a neighbour's flags)");
        a->from_box[k] = boxes[q];
    }
    for (int k = 0; k < D->halo.nsend && s == ADIA_OK; k++) {
        const dist_segment *seg = &D->halo.send[k];
        a->src_at[a->nseg] = seg->at;
        a->len[a->nseg] = seg->len;
        a->dst[a->nseg++] = (double *)xs[seg->peer] + dst_at[k];
    }
    for (int k = 0; k < D->halo.nrecv && k < DIST_PEER_SEGS; k++)
        a->recv_first[a->nrecv++] = g->x_local + D->halo.recv[k].at;
    s = adia__dist_agree(D->comm, s);
    /* not asked for (1) or no halo: no status of its own, no message */
    *boxes_status = s != ADIA_OK ? s : reduce == 1 ? ADIA_ERR_UNSUPPORTED : map_boxes(D, all);
    free(all);
    return s;
}

/* ------------------------------------------------------- the transport */

static adia_status peer_post(adia_dist_matrix *D, const double *x_owned, double *x_local,
                             void *stream)
{
    (void)x_local;
    return adia__dist_cuda(adia__dist_peer_push(&D->dev->peer, x_owned, stream),
                           "the peer halo's push");
}

static adia_status peer_wait(adia_dist_matrix *D, double *x_local, void *stream)
{
    (void)x_local;
    return adia__dist_cuda(adia__dist_peer_wait(&D->dev->peer, stream), "the peer halo's wait");
}

static adia_status peer_done(adia_dist_matrix *D, void *stream)
{
    return adia__dist_cuda(adia__dist_peer_consumed(&D->dev->peer, stream),
                           "the peer halo's release");
}

static const dist_transport peer = {"peer", peer_post, peer_wait, peer_done};

/* The trial's local x: zero but for the segments this process sends,
 * which hold their global row numbers + 1 (exact in double below 2^53). */
static adia_status trial_fill(adia_dist_matrix *D, double *buf)
{
    dist_device *g = D->dev;
    adia_status s = adia__dist_cuda(cudaMemset(g->x_local, 0, (size_t)D->local_cols *
                                               sizeof *g->x_local), "cudaMemset");
    for (int k = 0; k < D->halo.nsend && s == ADIA_OK; k++) {
        const dist_segment *seg = &D->halo.send[k];
        for (int32_t i = 0; i < seg->len; i++) buf[i] = (double)(D->first + seg->at + i + 1);
        s = adia__dist_cuda(cudaMemcpy(g->x_local + D->own_pos + seg->at, buf,
                                       (size_t)seg->len * sizeof *buf, cudaMemcpyHostToDevice),
                            "cudaMemcpy");
    }
    /* landed before the exchange reads them on the non-blocking stream */
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
    return s;
}

/* One exchange of known values by the transport in place (NCCL's) and by
 * the peer halo: the received segments must come out the same, and the
 * whole local x (its hash: no copy of a local x that may be most of the
 * GPU's memory to the host), everywhere. */
static adia_status trial(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    const dist_halo *H = &D->halo;
    size_t most = 1, got = 0;
    for (int k = 0; k < H->nsend; k++)
        if ((size_t)H->send[k].len > most) most = (size_t)H->send[k].len;
    for (int k = 0; k < H->nrecv; k++) got += (size_t)H->recv[k].len;
    double *h = malloc((most + 2 * got) * sizeof *h);
    adia_status s = h ? ADIA_OK : adia_set_error(ADIA_ERR_NO_MEMORY, "allocating the peer "
                                                 "halo's trial failed");
    DIST_TRY(adia__dist_agree(D->comm, s));
    double *own = g->x_local + D->own_pos, *in[2] = {h + most, h + most + got};
    unsigned long long hash[2] = {0, 1};
    const dist_transport *before = D->halo.transport;
    for (int pass = 0; pass < 2; pass++) {
        if (s == ADIA_OK) s = trial_fill(D, h);
        if (pass == 1) MPI_Barrier(D->comm);   /* every halo cleared before any push */
        const dist_transport *t = pass ? &peer : before;
        adia_status p = t->post(D, own, g->x_local, g->stream);   /* posted in any case */
        adia_status w = t->wait(D, g->x_local, g->stream);
        if (t->done) w = w != ADIA_OK ? w : t->done(D, g->stream);
        s = s != ADIA_OK ? s : p != ADIA_OK ? p : w;
        if (s == ADIA_OK)
            s = adia__dist_cuda(cudaStreamSynchronize(g->stream), "cudaStreamSynchronize");
        for (int k = 0, at = 0; k < H->nrecv && s == ADIA_OK; at += H->recv[k].len, k++)
            s = adia__dist_cuda(cudaMemcpy(in[pass] + at, g->x_local + H->recv[k].at,
                                           (size_t)H->recv[k].len * sizeof *h,
                                           cudaMemcpyDeviceToHost), "cudaMemcpy");
        if (s == ADIA_OK)
            s = adia__dist_cuda(adia__dist_hash(D->local_cols, g->x_local, &hash[pass],
                                                g->stream), "the local x's hash");
    }
    if (s == ADIA_OK && (memcmp(in[0], in[1], got * sizeof *h) || hash[0] != hash[1]))
        s = adia_set_error(ADIA_ERR_INTERNAL, "rank %d: a trial exchange of the peer halo "
                           "differs from NCCL's", D->rank);
    free(h);
    return adia__dist_agree(D->comm, s);
}

static void unmap(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    for (int q = 0; g->peer_mapped && q < 2 * D->size; q++)
        if (g->peer_mapped[q]) cudaIpcCloseMemHandle(g->peer_mapped[q]);
    free(g->peer_mapped);
    cudaFree(g->peer_box);
    g->peer_mapped = NULL;
    g->peer_box = NULL;
    (void)cudaGetLastError();
}

/* ADIA_DIST_PEER_TEST_MUTE: the rank whose flags are never raised (the
 * timeout's test), -1 unset; anything but a rank of D is an error. */
static adia_status muted_rank(const adia_dist_matrix *D, int *rank)
{
    const char *env = getenv("ADIA_DIST_PEER_TEST_MUTE");
    char *end = NULL;
    const long r = env && *env ? strtol(env, &end, 10) : -1;
    *rank = (int)r;
    if (env && *env && (*end || r < 0 || r >= D->size))
        return adia_set_error(ADIA_ERR_INVALID_ARG, "ADIA_DIST_PEER_TEST_MUTE=%s: a rank of the "
                              "%d processes", env, D->size);
    return ADIA_OK;
}

/* Trial reductions by CUDA IPC against NCCL's of the same values: a sum
 * of a few values (one warp), a sum and a maximum of DIST_PEER_SUMS (a
 * block of 256), each pass its own values (both sets of slots are read),
 * whose sums are exact in any order (NCCL's order does not matter).
 * Every process launches every reduction whatever failed before on it
 * (the others wait for them); the outcome is agreed at the end. */
static adia_status reduce_trial(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    enum { N = DIST_PEER_SUMS, PASSES = 3 };
    static const int counts[PASSES] = {5, N, N}, maxes[PASSES] = {0, 0, 1};
    double *h = malloc(4 * N * sizeof *h), *d = NULL;   /* the inputs twice, then NCCL's and
                                                         * the peers' results */
    adia_status s = h ? adia__dist_cuda(cudaMalloc((void **)&d, 2 * N * sizeof *d), "cudaMalloc")
                      : adia_set_error(ADIA_ERR_NO_MEMORY, "the peer reductions' trial");
    if ((s = adia__dist_agree(D->comm, s)) != ADIA_OK) {
        cudaFree(d);
        free(h);
        return s;
    }
    for (int p = 0; p < PASSES; p++) {
        const int n = counts[p], max = maxes[p];
        for (int k = 0; k < n; k++)
            h[k] = h[N + k] = ((D->rank * 7 + k * 3 + p * 5) % 11 - 5) * 0.25;
        adia_status c = adia__dist_cuda(cudaMemcpy(d, h, 2 * N * sizeof *d,
                                                   cudaMemcpyHostToDevice), "cudaMemcpy");
        adia_status r = adia__dist_cuda(adia__dist_peer_reduce(&g->peer, d + N, n, max,
                                                               g->stream), "the peer reduction");
        adia_status q = adia__dist_nccl_reduce(D, d, n, max, g->stream);
        adia_status w = adia__dist_cuda(cudaStreamSynchronize(g->stream),
                                        "cudaStreamSynchronize");
        if (s == ADIA_OK) s = c != ADIA_OK ? c : r != ADIA_OK ? r : q != ADIA_OK ? q : w;
        if (s == ADIA_OK)
            s = adia__dist_cuda(cudaMemcpy(h + 2 * N, d, 2 * N * sizeof *d,
                                           cudaMemcpyDeviceToHost), "cudaMemcpy");
        for (int k = 0; k < n && s == ADIA_OK; k++)
            if (h[2 * N + k] != h[3 * N + k])
                s = adia_set_error(ADIA_ERR_INTERNAL, "rank %d: a trial %s of %d values by CUDA "
                                   "IPC gives %.17g where NCCL's gives %.17g", D->rank,
                                   max ? "maximum" : "sum", n, h[3 * N + k], h[2 * N + k]);
    }
    cudaFree(d);
    free(h);
    s = adia__dist_agree(D->comm, s);
    if (s != ADIA_OK) {   /* the halo goes on: a timeout's flag cleared, once all are done */
        if (cudaMemset(g->peer_box + PEER_FAILED, 0, sizeof *g->peer_box) != cudaSuccess)
            (void)cudaGetLastError();
        MPI_Barrier(D->comm);
    }
    return s;
}

adia_status adia__dist_peer_init(adia_dist_matrix *D, int asked, int reduce)
{
    int mute = -1;
    DIST_TRY(adia__dist_agree(D->comm, muted_rank(D, &mute)));
    const char *why = unsuitable(D);
    if (why && reduce == 2)
        return adia_set_error(ADIA_ERR_UNSUPPORTED, "ADIA_DIST_REDUCE=peer: %s", why);
    if (why && !asked) return ADIA_OK;   /* NCCL's halo */
    if (why) return adia_set_error(ADIA_ERR_UNSUPPORTED, "ADIA_DIST_TRANSPORT=peer: %s", why);
    adia_status boxes = ADIA_OK, s = map_all(D, reduce, &boxes);
    adia__dist_phase(D, "dist: peer boxes mapped");
    if (s == ADIA_OK) s = trial(D);
    adia__dist_phase(D, "dist: peer halo's trial");
    if (s != ADIA_OK) {
        unmap(D);
        return asked || reduce == 2 ? s : ADIA_OK;   /* else NCCL's halo, which the trial checked */
    }
    D->halo.transport = &peer;
    if (reduce != 1) {
        s = boxes == ADIA_OK ? reduce_trial(D) : boxes;
        if (s != ADIA_OK && reduce == 2) return s;
        D->dev->peer_reduce = s == ADIA_OK;
    }
    D->dev->peer.mute = mute == D->rank;
    return ADIA_OK;
}

adia_status adia__dist_device_reduce(adia_dist_matrix *D, double *v, int count, int max,
                                     cudaStream_t stream)
{
    if (!D->dev->peer_reduce || count > DIST_PEER_SUMS)
        return adia__dist_nccl_reduce(D, v, count, max, stream);
    return adia__dist_cuda(adia__dist_peer_reduce(&D->dev->peer, v, count, max, stream),
                           "the peer reduction");
}

adia_status adia__dist_peer_check(adia_dist_matrix *D)
{
    unsigned long long failed = 0;
    if (D->halo.transport != &peer) return ADIA_OK;
    adia_status s = adia__dist_cuda(cudaMemcpy(&failed, D->dev->peer_box + PEER_FAILED,
                                               sizeof failed, cudaMemcpyDeviceToHost),
                                    "cudaMemcpy");
    if (s == ADIA_OK && failed)
        s = adia_set_error(ADIA_ERR_INTERNAL, "rank %d: a process did not send its halo or sums "
                           "within %g s (ADIA_DIST_PEER_TIMEOUT_S)", D->rank,
                           D->dev->peer.timeout_ns / 1e9);
    return s;
}

void adia__dist_peer_free(adia_dist_matrix *D)
{
    if (D->dev && (D->dev->peer_box || D->dev->peer_mapped)) unmap(D);
}
