/* gen_device.cu -- adia_stencil_fill_device: a block of rows of a Laplacian
 * filled on the GPU straight into diagonal storage (one row of values per
 * diagonal), for problems too large to pass through CSR on the host: a
 * 7-point 1200^3 grid is 12 billion CSR nonzeros, and the GPU writes its
 * diagonals at memory speed.  The entries come from the rule the host's
 * CSR builder reads (stencil.h), so both give the same matrix. */
#include "gen.h"
#include "../cuda/cuda_util.h"

#include <inttypes.h>

namespace {

struct fill_args {
    adia_stencil s;
    int ndiag;
    uint32_t points[STENCIL_MAX_POINTS];   /* stencil points on each diagonal */
    int64_t first, count;
};

/* values[k count + i] = A(first + i, first + i + o_k): the sum over the
 * points on diagonal k, of which at most one is inside the grid. */
template <typename T>
__global__ void fill(const fill_args a, T *values)
{
    const int64_t total = a.count * a.ndiag;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int k = (int)(t / a.count);
        const int64_t i = t - k * a.count;
        values[t] = (T)adia__stencil_entry(&a.s, a.points[k], a.first + i);
    }
}

} // namespace

extern "C" adia_status adia_stencil_fill_device(const char *spec, int64_t first, int64_t count,
                                                void *values, adia_value_type vt, void *stream)
{
    fill_args a = {};
    int64_t off[STENCIL_MAX_POINTS];
    ADIA_TRY(adia__stencil_fill_args("adia_stencil_fill_device", spec, first, count, values,
                                     &a.s, off, a.points, &a.ndiag));
    if (vt != ADIA_DOUBLE && vt != ADIA_FLOAT)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_stencil_fill_device: value type %d", (int)vt);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        (void)cudaGetLastError();
        return adia__error(ADIA_ERR_NO_DEVICE, "adia_stencil_fill_device: no CUDA device");
    }
    a.first = first;
    a.count = count;
    const int64_t total = count * a.ndiag;
    if (total == 0) return ADIA_OK;
    const int threads = 256;
    const int64_t blocks = (total + threads - 1) / threads;
    cudaStream_t st = (cudaStream_t)stream;
    if (vt == ADIA_DOUBLE)
        fill<double><<<(unsigned)(blocks < 65536 ? blocks : 65536), threads, 0, st>>>(a, (double *)values);
    else
        fill<float><<<(unsigned)(blocks < 65536 ? blocks : 65536), threads, 0, st>>>(a, (float *)values);
    return adia_cuda_check(cudaGetLastError(), "adia_stencil_fill_device");
}
