/* dist_halo.c -- the halo exchange.  Set up once: each process cuts the
 * intervals of its local x at the other processes' row blocks (the pieces
 * it receives), tells each owner how many pieces it needs (MPI_Alltoall of
 * counts) and which (MPI_Alltoallv of (start, length) pairs).  Each SpMV
 * then moves every piece as one point-to-point message from the owner's x
 * straight into its place in the local x: pieces are contiguous on both
 * sides, so nothing is packed, and only neighbours talk. */
#include "dist.h"

#define DIST_TAG 1801

/* ------------------------------------------------ posting, any transport */

adia_status adia__dist_post_receives(dist_halo *h, double *base, int packed)
{
    for (int s = 0; s < h->nrecv; s++) h->req[s] = MPI_REQUEST_NULL;
    for (int s = 0, off = 0; s < h->nrecv; off += h->recv[s].len, s++)
        DIST_TRY(adia__dist_mpi(MPI_Irecv(base + (packed ? off : h->recv[s].at), h->recv[s].len,
                                          MPI_DOUBLE, h->recv[s].peer, DIST_TAG, h->comm,
                                          &h->req[s]), "MPI_Irecv"));
    return ADIA_OK;
}

adia_status adia__dist_post_sends(dist_halo *h, const double *base, int packed)
{
    MPI_Request *req = h->req + h->nrecv;
    for (int s = 0; s < h->nsend; s++) req[s] = MPI_REQUEST_NULL;
    for (int s = 0, off = 0; s < h->nsend; off += h->send[s].len, s++)
        DIST_TRY(adia__dist_mpi(MPI_Isend(base + (packed ? off : h->send[s].at), h->send[s].len,
                                          MPI_DOUBLE, h->send[s].peer, DIST_TAG, h->comm,
                                          &req[s]), "MPI_Isend"));
    return ADIA_OK;
}

adia_status adia__dist_halo_waitall(dist_halo *h)
{
    return adia__dist_mpi(MPI_Waitall(h->nrecv + h->nsend, h->req, MPI_STATUSES_IGNORE),
                          "MPI_Waitall");
}

/* ------------------------------------------------ host transport (MPI) */

/* Straight from the owned x into the local x: both contiguous. */
static adia_status mpi_post(adia_dist_matrix *D, const double *x_owned, double *x_local,
                            void *stream)
{
    (void)stream;
    adia_status s = adia__dist_post_receives(&D->halo, x_local, 0);
    adia_status t = adia__dist_post_sends(&D->halo, x_owned, 0);
    return s != ADIA_OK ? s : t;
}

static adia_status mpi_wait(adia_dist_matrix *D, double *x_local, void *stream)
{
    (void)x_local;
    (void)stream;
    return adia__dist_halo_waitall(&D->halo);
}

static const dist_transport mpi_host = {"mpi-host", mpi_post, mpi_wait, NULL};

adia_status adia__dist_exchange(adia_dist_matrix *D, const double *x)
{
    double t0 = MPI_Wtime();
    adia_status s = mpi_host.post(D, x, D->x_local, NULL);
    /* own rows copied while the messages are in flight */
    memcpy(D->x_local + D->own_pos, x, (size_t)D->rows * sizeof *x);
    adia_status t = mpi_host.wait(D, D->x_local, NULL);
    D->halo_ms += (MPI_Wtime() - t0) * 1e3;
    return s != ADIA_OK ? s : t;
}

/* ------------------------------------------------------------ set-up */

/* Rank holding global row j (bisection over the row starts). */
static int owner(const adia_dist_matrix *D, int64_t j)
{
    int lo = 0, hi = D->size - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (D->starts[mid] <= j) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The pieces of the local x other processes own, ascending in column (so
 * grouped by owner, in rank order); gstart[s]: first global column of s. */
static adia_status receive_pieces(adia_dist_matrix *D, int64_t **gstart)
{
    dist_halo *h = &D->halo;
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {   /* count, then fill */
        n = 0;
        for (int k = 0; k < D->niv; k++) {
            int64_t lo = D->iv[k].start, end = lo + D->iv[k].len;
            for (int r = owner(D, lo); lo < end; lo = D->starts[++r]) {
                int64_t hi = D->starts[r + 1] < end ? D->starts[r + 1] : end;
                if (r == D->rank) continue;
                if (pass) {
                    h->recv[n] = (dist_segment){r, (int32_t)(D->iv[k].pos + lo - D->iv[k].start),
                                                (int32_t)(hi - lo)};
                    (*gstart)[n] = lo;
                    h->recv_values += hi - lo;
                }
                n++;
            }
        }
        if (pass) break;
        h->recv = adia__dist_alloc((size_t)n, sizeof *h->recv, "halo receives");
        *gstart = adia__dist_alloc((size_t)n, sizeof **gstart, "halo receives");
        if (!h->recv || !*gstart) return ADIA_ERR_NO_MEMORY;
    }
    h->nrecv = n;
    return ADIA_OK;
}

/* The pieces this process sends: the (start, length) pairs the others
 * asked for (give: 2 int64 per piece, in peer order), checked to be its rows. */
static adia_status send_pieces(adia_dist_matrix *D, const int *ngive, const int64_t *give)
{
    dist_halo *h = &D->halo;
    int n = 0;
    for (int r = 0; r < D->size; r++) n += ngive[r];
    h->send = adia__dist_alloc((size_t)n, sizeof *h->send, "halo sends");
    if (!h->send) return ADIA_ERR_NO_MEMORY;
    h->nsend = n;
    for (int r = 0, s = 0; r < D->size; r++)
        for (int k = 0; k < ngive[r]; k++, s++) {
            int64_t at = give[2 * s] - D->first, len = give[2 * s + 1];
            if (at < 0 || len < 1 || at + len > D->rows)
                return adia_set_error(ADIA_ERR_INTERNAL, "rank %d asked rank %d for columns "
                                      "%lld + %lld, outside its rows", r, D->rank,
                                      (long long)give[2 * s], (long long)len);
            h->send[s] = (dist_segment){r, (int32_t)at, (int32_t)len};
            h->send_values += len;
        }
    return ADIA_OK;
}

/* Exclusive prefix sums of 2 x counts (pairs of int64) into displ. */
static void pair_displacements(const int *count, int size, int *len, int *displ)
{
    for (int r = 0, at = 0; r < size; r++) {
        len[r] = 2 * count[r];
        displ[r] = at;
        at += len[r];
    }
}

/* What to send where: the counts, then the pairs, each process's needs
 * travelling to the owners. */
static adia_status agree_pieces(adia_dist_matrix *D, int *nreq, int *ngive, int *len, int *displ,
                                const int64_t *gstart)
{
    dist_halo *h = &D->halo;
    for (int s = 0; s < h->nrecv; s++) nreq[h->recv[s].peer]++;
    MPI_Alltoall(nreq, 1, MPI_INT, ngive, 1, MPI_INT, D->comm);
    int64_t total = 0;
    for (int r = 0; r < D->size; r++) total += ngive[r];
    int64_t *want = adia__dist_alloc(2 * (size_t)h->nrecv, sizeof *want, "halo requests");
    int64_t *give = adia__dist_alloc(2 * (size_t)total, sizeof *give, "halo requests");
    adia_status s = adia__dist_agree(D->comm, want && give ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    if (s == ADIA_OK) {
        for (int k = 0; k < h->nrecv; k++) {
            want[2 * k] = gstart[k];
            want[2 * k + 1] = h->recv[k].len;
        }
        pair_displacements(nreq, D->size, len, displ);
        int *rlen = len + D->size, *rdispl = displ + D->size;
        pair_displacements(ngive, D->size, rlen, rdispl);
        MPI_Alltoallv(want, len, displ, MPI_INT64_T, give, rlen, rdispl, MPI_INT64_T, D->comm);
        s = adia__dist_agree(D->comm, send_pieces(D, ngive, give));
    }
    free(want);
    free(give);
    return s;
}

adia_status adia__dist_halo_setup(adia_dist_matrix *D)
{
    dist_halo *h = &D->halo;
    h->comm = D->comm;
    h->transport = &mpi_host;   /* a device matrix's replaces it (dist_device.c) */
    int64_t *gstart = NULL;
    int *counts = calloc(6 * (size_t)D->size, sizeof *counts);   /* nreq ngive len[2] displ[2] */
    adia_status s = counts ? receive_pieces(D, &gstart)
                           : adia_set_error(ADIA_ERR_NO_MEMORY, "allocating halo counts failed");
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK)
        s = agree_pieces(D, counts, counts + D->size, counts + 2 * D->size, counts + 4 * D->size,
                         gstart);
    if (s == ADIA_OK) {
        for (int r = 0; r < D->size; r++)
            h->neighbours += counts[r] > 0 || counts[D->size + r] > 0;
        h->req = adia__dist_alloc((size_t)(h->nrecv + h->nsend), sizeof *h->req, "halo requests");
        s = adia__dist_agree(D->comm, h->req ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    }
    if (s == ADIA_OK) {
        int64_t bytes = 8 * h->recv_values;
        MPI_Allreduce(&bytes, &D->halo_bytes_all, 1, MPI_INT64_T, MPI_SUM, D->comm);
    }
    free(counts);
    free(gstart);
    return s;
}

void adia__dist_halo_free(dist_halo *h)
{
    free(h->recv);
    free(h->send);
    free(h->req);
    memset(h, 0, sizeof *h);
}
