/* diagonal_gpu.cu -- A(i,i) of a format on the device (internal.h:
 * adia__format_diagonal_gpu, adia__format_diagonal_download): the GPU
 * table's diagonal slot, or for a table without one the host diagonal
 * uploaded.  The route back to the host takes n values, never the format:
 * a plan built on the device (host_stale) is not downloaded for Jacobi. */
#include "cuda_util.h"

#include <inttypes.h>

namespace {

/* The fallback: the host slot's doubles, as vt, copied on stream
 * (synchronised: the staging buffers are freed here). */
adia_status upload_host_diagonal(const adia_format *F, void *d_dev, adia_value_type vt,
                                 cudaStream_t st)
{
    size_t n = (size_t)F->rows;
    double *h = (double *)adia__alloc(n, sizeof *h, "diagonal (host staging)");
    float *hf = vt == ADIA_FLOAT ? (float *)adia__alloc(n, sizeof *hf, "diagonal (host staging)")
                                 : NULL;
    adia_status s = h && (hf || vt == ADIA_DOUBLE) ? adia__format_host(F) : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) s = F->ops->diagonal(F, h);
    for (size_t i = 0; s == ADIA_OK && hf && i < n; i++) hf[i] = (float)h[i];
    const void *src = hf ? (const void *)hf : (const void *)h;
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpyAsync(d_dev, src, n * adia_value_size(vt),
                                            cudaMemcpyHostToDevice, st),
                            "diagonal to the device");
    if (s == ADIA_OK) s = adia_cuda_check(cudaStreamSynchronize(st), "diagonal to the device");
    free(h);
    free(hf);
    return s;
}

} // namespace

extern "C" adia_status adia__format_diagonal_gpu(const adia_format *F, void *d_dev,
                                                 adia_value_type vt, void *stream)
{
    if (!F || F->magic != ADIA_MAGIC_FORMAT)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "format diagonal (GPU): not a live format handle");
    if (vt != ADIA_DOUBLE && vt != ADIA_FLOAT)
        return adia__error(ADIA_ERR_INVALID_ARG, "format diagonal (GPU): bad value type %d", (int)vt);
    if (!F->dev)
        return adia__error(ADIA_ERR_INVALID_ARG, "format diagonal (GPU): format %s is not on the "
                          "device (adia_format_upload first)", F->ops->name);
    if (F->rows == 0) return ADIA_OK;
    if (!d_dev)
        return adia__error(ADIA_ERR_INVALID_ARG, "format diagonal (GPU): the output of %" PRId32
                          " values is NULL", F->rows);
    cudaStream_t st = (cudaStream_t)stream;
    if (F->ops->gpu->diagonal) return F->ops->gpu->diagonal(F->dev, d_dev, vt, stream);
    return upload_host_diagonal(F, d_dev, vt, st);
}

extern "C" adia_status adia__format_diagonal_download(const adia_format *F, double *d_host)
{
    size_t n = (size_t)F->rows;
    adia_value_type vt = F->vtype;   /* the storage's type: no rounding on the way */
    float *hf = vt == ADIA_FLOAT ? (float *)adia__alloc(n, sizeof *hf, "diagonal (from the device)")
                                 : NULL;
    if (vt == ADIA_FLOAT && !hf) return ADIA_ERR_NO_MEMORY;
    void *d = NULL;
    adia_status s = adia_cuda_check(cudaMalloc(&d, n * adia_value_size(vt)), "diagonal (device)");
    if (s == ADIA_OK) s = adia__format_diagonal_gpu(F, d, vt, NULL);
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(hf ? (void *)hf : (void *)d_host, d,
                                       n * adia_value_size(vt), cudaMemcpyDeviceToHost),
                            "diagonal to the host");
    cudaFree(d);
    for (size_t i = 0; s == ADIA_OK && hf && i < n; i++) d_host[i] = (double)hf[i];
    free(hf);
    return s;
}
