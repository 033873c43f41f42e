/* dist_dsolve.c -- a device matrix as an adia_operator for libadia's GPU
 * methods (adia_solve_operator with device 1, called by dist_solve.c):
 * the methods, their scaling, stop rules and true-residual check are
 * libadia's; this file gives them the distributed product and the
 * reductions over the processes, on the solver's stream.
 *   apply_device       the product: halo and parts (adia__dist_device_spmv)
 *   apply_sums_device  the same with the dot products fused into each
 *                      part's epilogue (adia_spmv_sums_async), added up
 *   sum/max_device     by CUDA IPC (peer transport: dist_peer.c) or
 *                      ncclAllReduce on the stream (nccl), else the
 *                      values through pinned host memory and
 *                      MPI_Allreduce (the host waits: no graph then)
 * A failure on this process alone (a CUDA or NCCL error) makes the
 * product's y NaN, so every process stops at the next reduction, and the
 * error is agreed after the solve (dist_solve.c). */
#include "dist_device.h"

#include <math.h>

/* The most values one reduction of libadia's GPU methods combines:
 * GMRES's basis products, restart + 2 with restart <= 1000. */
#define MOST_SUMS 1002


/* After a local failure: values that stop every process at its next
 * reduction (all bits set: a NaN). */
static void poison(dist_op *o, double *v, int64_t count, cudaStream_t st)
{
    if (o->failed == ADIA_OK) return;
    if (cudaMemsetAsync(v, 0xff, (size_t)count * sizeof *v, st) != cudaSuccess)
        (void)cudaGetLastError();
}

static adia_status apply(void *ctx, double alpha, const double *x, double *y, void *stream)
{
    dist_op *o = ctx;
    adia__dist_op_note(o, adia__dist_device_spmv(o->D, alpha, x, 0.0, y, NULL, stream));
    poison(o, y, o->D->rows, stream);
    return ADIA_OK;
}

static adia_status apply_sums(void *ctx, double alpha, const double *x, double *y,
                              const double *z, double *out, void *stream)
{
    dist_op *o = ctx;
    dist_sums sums = {z, out};
    adia__dist_op_note(o, adia__dist_device_spmv(o->D, alpha, x, 0.0, y, &sums, stream));
    poison(o, y, o->D->rows, stream);
    poison(o, out, ADIA_SPMV_SUMS, stream);
    return ADIA_OK;
}

/* v[0..count) (device) summed or maximised over the processes, in place. */
static void reduce(dist_op *o, double *v, int count, int max, cudaStream_t st)
{
    adia_dist_matrix *D = o->D;
    double *h = D->dev->pinned_sums;
    poison(o, v, count, st);
    adia__dist_trace(D, TRACE_REDUCE_START, st);
    if (adia__dist_nccl_active(D)) {
        adia__dist_op_note(o, adia__dist_device_reduce(D, v, count, max, st));
        adia__dist_trace(D, TRACE_REDUCE_END, st);
        return;
    }
    const size_t bytes = (size_t)count * sizeof *v;
    adia_status s = adia__dist_cuda(cudaMemcpyAsync(h, v, bytes, cudaMemcpyDeviceToHost, st),
                                    "cudaMemcpyAsync (sums)");
    if (s == ADIA_OK) s = adia__dist_cuda(cudaStreamSynchronize(st), "cudaStreamSynchronize");
    adia__dist_op_note(o, s);
    for (int k = 0; k < count && o->failed != ADIA_OK; k++) h[k] = NAN;   /* all stop */
    double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, h, count, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, D->comm);
    D->reduce_ms += (MPI_Wtime() - t0) * 1e3;
    /* the next reduction's copy into h is queued after this one on st */
    adia__dist_op_note(o, adia__dist_cuda(cudaMemcpyAsync(v, h, bytes, cudaMemcpyHostToDevice, st),
                                          "cudaMemcpyAsync (sums)"));
    adia__dist_trace(D, TRACE_REDUCE_END, st);
}

static void sum(void *ctx, double *v, int count, void *stream) { reduce(ctx, v, count, 0, stream); }
static void max(void *ctx, double *v, int count, void *stream) { reduce(ctx, v, count, 1, stream); }

/* Each part's fused-sums work (zeroed: adia_spmv_sums_async leaves it
 * so), and the staged reductions' pinned buffer: made once. */
static adia_status buffers(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    for (int k = 0; k < D->nparts; k++) {
        dist_part *p = &D->part[k];
        size_t work = adia_spmv_sums_work_bytes(p->plan);
        if (p->sums_work) continue;
        DIST_TRY(adia__dist_cuda(cudaMalloc(&p->sums_work, work + 8), "cudaMalloc (sums work)"));
        DIST_TRY(adia__dist_cuda(cudaMemset(p->sums_work, 0, work + 8), "cudaMemset"));
    }
    /* zero before the solver's non-blocking stream adds to it */
    DIST_TRY(adia__dist_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize"));
    if (!g->pinned_sums && !adia__dist_nccl_active(D))
        DIST_TRY(adia__dist_cuda(cudaMallocHost((void **)&g->pinned_sums, MOST_SUMS *
                                                sizeof *g->pinned_sums), "cudaMallocHost (sums)"));
    return ADIA_OK;
}

adia_status adia__dist_device_operator(dist_op *o, adia_operator *op)
{
    adia_dist_matrix *D = o->D;
    DIST_TRY(buffers(D));
    op->apply_device = apply;
    op->apply_sums_device = apply_sums;
    /* one process sums nothing -- unless NCCL was asked for: then its
     * reductions take the path of many (an identity on one GPU) */
    const int nccl = adia__dist_nccl_active(D);
    if (D->size > 1 || nccl) {
        op->sum_device = sum;
        op->max_device = max;
    }
    /* NCCL is captured into the WHILE graph (its kernels are what a body
     * allows: measured on 2 and 4 H200 with NCCL 2.28), and where that
     * capture fails, into chunks of iterations; the staged halo and
     * reductions wait on the host; one process sends nothing */
    const int halo = D->halo.nsend > 0 || D->halo.nrecv > 0;
    op->device_graph = nccl || (D->size == 1 && !halo) ? 2 : 0;
    /* a measurement's choice (ADIA_DIST_GRAPH=while|chunks|none): a WHILE
     * graph is tried first and falls back to chunks where it fails */
    const char *env = getenv("ADIA_DIST_GRAPH");
    if (env && (nccl || (D->size == 1 && !halo))) {
        if (!strcmp(env, "while")) op->device_graph = 2;
        else if (!strcmp(env, "chunks")) op->device_graph = 1;
        else if (!strcmp(env, "none")) op->device_graph = 0;
    }
    double bytes = 0;
    for (int k = 0; k < D->nparts; k++)
        bytes += (double)adia_format_bytes(adia_plan_format(D->part[k].plan));
    op->apply_bytes = bytes;
    return ADIA_OK;
}
