/* dist_trace.c -- the device trace of a distributed product and its
 * reductions (ADIA_DIST_TRACE, see dist_device.h): a developer's tool to
 * find where an iteration's time goes on several GPUs.  The stamps are
 * one-thread kernels on the stream of the phase they mark, so they are
 * captured into the solver's graphs and replayed with them; each reads
 * the GPU's global timer (ns; one clock per GPU, so a phase is timed
 * within one process, never across two).  A trace that fails to set up
 * or write is reported on stderr and dropped: it never fails a solve. */
#include "dist_device.h"
#include "dist_kernels.h"

#include <stdio.h>

#define TRACE_CAP (1u << 20)   /* stamps kept per solve: 16 MiB of device memory */

static const char *const tag_name[] = {
    [TRACE_PRODUCT] = "product",       [TRACE_BANDS] = "bands",
    [TRACE_INTERIOR] = "interior",     [TRACE_JOIN] = "join",
    [TRACE_ENDS] = "ends",             [TRACE_HALO_START] = "halo_start",
    [TRACE_HALO_END] = "halo_end",     [TRACE_REDUCE_START] = "reduce_start",
    [TRACE_REDUCE_END] = "reduce_end",
};

static const char *trace_dir(void)
{
    const char *d = getenv("ADIA_DIST_TRACE");
    return d && *d ? d : NULL;
}

adia_status adia__dist_trace_open(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    if (!trace_dir() || g->trace) return ADIA_OK;
    cudaError_t e = cudaMalloc((void **)&g->trace, 2 * sizeof *g->trace * TRACE_CAP);
    if (e == cudaSuccess) e = cudaMalloc((void **)&g->trace_count, sizeof *g->trace_count);
    if (e == cudaSuccess) e = cudaMemset(g->trace_count, 0, sizeof *g->trace_count);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamLegacy);   /* before the streams' kernels count */
    if (e != cudaSuccess) {
        fprintf(stderr, "adia_mpi: ADIA_DIST_TRACE: no trace (%s)\n", cudaGetErrorString(e));
        (void)cudaGetLastError();
        adia__dist_trace_free(g);
    }
    return ADIA_OK;
}

void adia__dist_trace(adia_dist_matrix *D, dist_tag tag, cudaStream_t stream)
{
    dist_device *g = D->dev;
    if (!g->trace) return;
    if (adia__dist_stamp(g->trace, g->trace_count, TRACE_CAP, (unsigned)tag, stream) !=
        cudaSuccess)
        (void)cudaGetLastError();
}

/* The stamps so far to FOLDER/trace-N.RANK.tsv ("tag<TAB>ns" a line, in
 * the order taken), then none kept; no file when there are none. */
void adia__dist_trace_write(adia_dist_matrix *D)
{
    dist_device *g = D->dev;
    const char *dir = trace_dir();
    if (!g || !g->trace || !dir) return;
    unsigned count = 0;
    unsigned long long *h = NULL;
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaMemcpy(&count, g->trace_count, sizeof count, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && count == 0) return;
    if (count > TRACE_CAP) count = TRACE_CAP;
    if (e == cudaSuccess && count && !(h = malloc(2 * sizeof *h * count))) e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess && count)
        e = cudaMemcpy(h, g->trace, 2 * sizeof *h * count, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemset(g->trace_count, 0, sizeof *g->trace_count);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamLegacy);
    /* written whole under a temporary name, then renamed: a failed write
     * never leaves a partial trace or replaces an earlier one */
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/trace-%d.%d.tsv", dir, g->trace_files++, D->rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = e == cudaSuccess ? fopen(tmp, "w") : NULL;
    for (unsigned i = 0; f && i < count; i++)
        fprintf(f, "%s\t%llu\n", h[2 * i] < sizeof tag_name / sizeof *tag_name
                                     ? tag_name[h[2 * i]] : "?", h[2 * i + 1]);
    int ok = f != NULL;
    if (f) {
        ok = !ferror(f);
        ok = !fclose(f) && ok;
        ok = ok && !rename(tmp, path);
        if (!ok) remove(tmp);
    }
    if (!ok) {
        fprintf(stderr, "adia_mpi: ADIA_DIST_TRACE: %s not written (%s)\n", path,
                e != cudaSuccess ? cudaGetErrorString(e) : "cannot write");
    }
    if (e != cudaSuccess) (void)cudaGetLastError();
    free(h);
}

void adia__dist_trace_free(dist_device *g)
{
    cudaFree(g->trace);
    cudaFree(g->trace_count);
    g->trace = NULL;
    g->trace_count = NULL;
}
