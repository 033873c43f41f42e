/* dist_staged.c -- the halo of a device matrix through host memory, for
 * an MPI that is not CUDA-aware or processes sharing a GPU: the segments
 * this process sends are copied device -> pinned host (one buffer sized at
 * set-up: the sends packed, then the receives), sent with MPI_Isend;
 * received segments land in the pinned buffer (MPI_Irecv) and are copied
 * pinned -> device into their place in the local x.  MPI only ever sees
 * host pointers. */
#include "dist_device.h"

static adia_status staged_post(adia_dist_matrix *D, const double *x_owned, double *x_local,
                               void *stream)
{
    dist_halo *h = &D->halo;
    dist_device *g = D->dev;
    double *out = g->pinned, *in = g->pinned + h->send_values;
    (void)x_local;
    /* MPI may write the receive buffer as soon as a receive is posted: the
     * previous product's copies out of it must be done */
    adia_status s = h->nrecv ? adia__dist_cuda(cudaEventSynchronize(g->done),
                                               "cudaEventSynchronize")
                             : ADIA_OK;
    adia_status r = adia__dist_post_receives(h, in, 1);
    for (int k = 0, off = 0; k < h->nsend && s == ADIA_OK; off += h->send[k].len, k++)
        s = adia__dist_cuda(cudaMemcpyAsync(out + off, x_owned + h->send[k].at,
                                            (size_t)h->send[k].len * sizeof *out,
                                            cudaMemcpyDeviceToHost, (cudaStream_t)stream),
                            "cudaMemcpyAsync (halo to host)");
    if (s == ADIA_OK && h->nsend)
        s = adia__dist_cuda(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
    /* sent after a failure too: the peers wait for these messages (the
     * status is agreed after the product) */
    adia_status t = adia__dist_post_sends(h, out, 1);
    return s != ADIA_OK ? s : r != ADIA_OK ? r : t;
}

static adia_status staged_wait(adia_dist_matrix *D, double *x_local, void *stream)
{
    dist_halo *h = &D->halo;
    const double *in = D->dev->pinned + h->send_values;
    adia_status s = adia__dist_halo_waitall(h);
    for (int k = 0, off = 0; k < h->nrecv && s == ADIA_OK; off += h->recv[k].len, k++)
        s = adia__dist_cuda(cudaMemcpyAsync(x_local + h->recv[k].at, in + off,
                                            (size_t)h->recv[k].len * sizeof *in,
                                            cudaMemcpyHostToDevice, (cudaStream_t)stream),
                            "cudaMemcpyAsync (halo to device)");
    return s;
}

static const dist_transport staged = {"staged", staged_post, staged_wait, NULL};

adia_status adia__dist_staged_init(adia_dist_matrix *D)
{
    size_t values = (size_t)(D->halo.send_values + D->halo.recv_values) + 1;
    adia_status s = adia__dist_cuda(cudaMallocHost((void **)&D->dev->pinned,
                                                   values * sizeof *D->dev->pinned),
                                    "cudaMallocHost (halo buffer)");
    DIST_TRY(adia__dist_agree(D->comm, s));
    D->halo.transport = &staged;
    return ADIA_OK;
}
