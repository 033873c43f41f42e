/* dist_nccl.c -- the halo of a device matrix by NCCL, one GPU per
 * process: every segment one ncclSend / ncclRecv, all of them in one
 * group on the product's stream, straight from the owned x into the local
 * x (both contiguous: nothing packed).  Segments between two processes
 * pair up in order, as they are listed in the same (ascending column)
 * order on both sides.  Stream-ordered: nothing to wait for on the host. */
#include "dist_device.h"

#ifdef ADIA_HAVE_NCCL

/* A NCCL call's result as an adia error; a failure marks the comm for
 * ncclCommAbort (its operations may never complete). */
static adia_status nccl_check(dist_device *g, ncclResult_t r, const char *call)
{
    if (r == ncclSuccess) return ADIA_OK;
    g->nccl_failed = 1;
    return adia_set_error(ADIA_ERR_CUDA, "%s failed: %s", call, ncclGetErrorString(r));
}

static adia_status nccl_post(adia_dist_matrix *D, const double *x_owned, double *x_local,
                             void *stream)
{
    dist_halo *h = &D->halo;
    dist_device *g = D->dev;
    cudaStream_t st = stream;
    adia_status s = nccl_check(g, ncclGroupStart(), "ncclGroupStart");
    for (int k = 0; k < h->nrecv && s == ADIA_OK; k++)
        s = nccl_check(g, ncclRecv(x_local + h->recv[k].at, (size_t)h->recv[k].len, ncclDouble,
                                   h->recv[k].peer, g->nccl, st), "ncclRecv");
    for (int k = 0; k < h->nsend && s == ADIA_OK; k++)
        s = nccl_check(g, ncclSend(x_owned + h->send[k].at, (size_t)h->send[k].len, ncclDouble,
                                   h->send[k].peer, g->nccl, st), "ncclSend");
    adia_status t = nccl_check(g, ncclGroupEnd(), "ncclGroupEnd");   /* closed in any case */
    return s != ADIA_OK ? s : t;
}

static adia_status nccl_wait(adia_dist_matrix *D, double *x_local, void *stream)
{
    (void)D;
    (void)x_local;
    (void)stream;
    return ADIA_OK;
}

static const dist_transport nccl = {"nccl", nccl_post, nccl_wait, NULL};

/* NCCL connects two processes at their first send and receive, and a
 * reduction's ring or tree at its first collective: 0.5-1.3 s on 2 and 4
 * H200 (the device trace, 2026-11-26), which the first solve paid inside
 * its iterations.  Here one halo exchange (x_local's owned values, zeroed,
 * to its halo) and one reduction make them once, at creation. */
static adia_status nccl_connect(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    const double t0 = MPI_Wtime();
    adia_status s = nccl_post(D, g->x_local + D->own_pos, g->x_local, g->stream);
    if (s == ADIA_OK) s = adia__dist_nccl_reduce(D, g->y, 1, 0, g->stream);
    adia_status w = adia__dist_cuda(cudaStreamSynchronize(g->stream), "cudaStreamSynchronize");
    D->connect_ms = (MPI_Wtime() - t0) * 1e3;
    return adia__dist_agree(D->comm, s != ADIA_OK ? s : w);
}

int adia__dist_nccl_built(void) { return 1; }

adia_status adia__dist_nccl_init(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    adia_status s = D->rank == 0 ? nccl_check(g, ncclGetUniqueId(&id), "ncclGetUniqueId") : ADIA_OK;
    DIST_TRY(adia__dist_agree(D->comm, s));
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, D->comm);
    s = nccl_check(g, ncclCommInitRank(&g->nccl, D->size, id, D->rank), "ncclCommInitRank");
    if (s != ADIA_OK) g->nccl = NULL;
    DIST_TRY(adia__dist_agree(D->comm, s));
    D->halo.transport = &nccl;
    return nccl_connect(D);
}

int adia__dist_nccl_active(const adia_dist_matrix *D) { return D->dev && D->dev->nccl; }

adia_status adia__dist_nccl_reduce(adia_dist_matrix *D, double *v, int count, int max,
                                   cudaStream_t stream)
{
    return nccl_check(D->dev, ncclAllReduce(v, v, (size_t)count, ncclDouble,
                                            max ? ncclMax : ncclSum, D->dev->nccl, stream),
                      "ncclAllReduce");
}

adia_status adia__dist_nccl_moves(adia_dist_matrix *D, const dist_move *m, int n, void *stream)
{
    dist_device *g = D->dev;
    cudaStream_t st = stream;
    if (!g || !g->nccl)
        return adia_set_error(ADIA_ERR_UNSUPPORTED, "slab exchange: the matrix has no NCCL");
    adia_status c = ADIA_OK;   /* a failed copy still posts the peers' messages */
    for (int k = 0; k < n && c == ADIA_OK; k++)
        if (m[k].peer == D->rank)
            c = adia__dist_cuda(cudaMemcpyAsync(m[k].at, m[k].from, (size_t)m[k].count *
                                                sizeof(double), cudaMemcpyDeviceToDevice, st),
                                "cudaMemcpyAsync (slab)");
    adia_status s = nccl_check(g, ncclGroupStart(), "ncclGroupStart");
    const int started = s == ADIA_OK;
    for (int k = 0; k < n && s == ADIA_OK; k++) {
        if (m[k].peer == D->rank) continue;
        s = m[k].send ? nccl_check(g, ncclSend(m[k].at, (size_t)m[k].count, ncclDouble, m[k].peer,
                                               g->nccl, st), "ncclSend")
                      : nccl_check(g, ncclRecv(m[k].at, (size_t)m[k].count, ncclDouble, m[k].peer,
                                               g->nccl, st), "ncclRecv");
    }
    if (started) {   /* closed in any case */
        adia_status t = nccl_check(g, ncclGroupEnd(), "ncclGroupEnd");
        if (s == ADIA_OK) s = t;
    }
    return c != ADIA_OK ? c : s;
}

adia_status adia__dist_nccl_broadcasts(adia_dist_matrix *D, const dist_move *m, int n,
                                       void *stream)
{
    dist_device *g = D->dev;
    if (!g || !g->nccl)
        return adia_set_error(ADIA_ERR_UNSUPPORTED, "slab gather: the matrix has no NCCL");
    adia_status s = nccl_check(g, ncclGroupStart(), "ncclGroupStart");
    const int started = s == ADIA_OK;
    for (int k = 0; k < n && s == ADIA_OK; k++)
        s = nccl_check(g, ncclBroadcast(m[k].peer == D->rank ? m[k].from : m[k].at, m[k].at,
                                        (size_t)m[k].count, ncclDouble, m[k].peer, g->nccl,
                                        (cudaStream_t)stream), "ncclBroadcast");
    if (started) {   /* closed in any case */
        adia_status t = nccl_check(g, ncclGroupEnd(), "ncclGroupEnd");
        if (s == ADIA_OK) s = t;
    }
    return s;
}

void adia__dist_nccl_free(dist_device *g)
{
    if (!g->nccl) return;
    if (g->nccl_failed) ncclCommAbort(g->nccl);
    else ncclCommDestroy(g->nccl);
    g->nccl = NULL;
}

#else

int adia__dist_nccl_built(void) { return 0; }

adia_status adia__dist_nccl_init(adia_dist_matrix *D)
{
    (void)D;
    return adia_set_error(ADIA_ERR_UNSUPPORTED, "adia_mpi was built without NCCL");
}

void adia__dist_nccl_free(dist_device *g) { (void)g; }

int adia__dist_nccl_active(const adia_dist_matrix *D)
{
    (void)D;
    return 0;
}

adia_status adia__dist_nccl_reduce(adia_dist_matrix *D, double *v, int count, int max,
                                   cudaStream_t stream)
{
    (void)D, (void)v, (void)count, (void)max, (void)stream;
    return adia_set_error(ADIA_ERR_UNSUPPORTED, "adia_mpi was built without NCCL");
}

adia_status adia__dist_nccl_moves(adia_dist_matrix *D, const dist_move *m, int n, void *stream)
{
    (void)D, (void)m, (void)n, (void)stream;
    return adia_set_error(ADIA_ERR_UNSUPPORTED, "adia_mpi was built without NCCL");
}

adia_status adia__dist_nccl_broadcasts(adia_dist_matrix *D, const dist_move *m, int n,
                                       void *stream)
{
    (void)D, (void)m, (void)n, (void)stream;
    return adia_set_error(ADIA_ERR_UNSUPPORTED, "adia_mpi was built without NCCL");
}

#endif
