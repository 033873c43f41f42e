/* vector_gpu.cu -- the preconditioners' device helpers: a scaled diagonal
 * product and the upload of a host diagonal in the plan's value type. */
#include "precond.h"
#include "../cuda/cuda_util.h"

#include <vector>

namespace {

/* z = alpha d .* r (d NULL: alpha r), r and d in T, z in U. */
template <typename T, typename U>
__global__ void scale_kernel(int64_t n, double alpha, const T *d, const T *r, U *z)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        z[i] = (U)(alpha * (d ? (double)d[i] : 1.0) * (double)r[i]);
}

template <typename T, typename U = T>
adia_status scale(int64_t n, double alpha, const void *d, const void *r, void *z,
                  cudaStream_t s)
{
    if (n <= 0) return ADIA_OK;
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65535) blocks = 65535;
    scale_kernel<T, U><<<(unsigned)blocks, 256, 0, s>>>(n, alpha, (const T *)d, (const T *)r,
                                                        (U *)z);
    return adia_cuda_check(cudaGetLastError(), "preconditioner scale kernel");
}

template <typename T>
adia_status upload(int64_t n, const double *h, void **out)
{
    std::vector<T> t((size_t)n);
    for (int64_t i = 0; i < n; i++) t[i] = (T)h[i];
    ADIA_CUDA_TRY(cudaMalloc(out, (size_t)(n > 0 ? n : 1) * sizeof(T)));
    return adia_cuda_check(cudaMemcpy(*out, t.data(), (size_t)n * sizeof(T),
                                      cudaMemcpyHostToDevice),
                           "preconditioner upload");
}

}  // namespace

extern "C" adia_status adia__precond_scale_gpu(adia_value_type vt, int64_t n, double alpha,
                                               const void *d, const void *r, void *z,
                                               void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    return vt == ADIA_FLOAT ? scale<float>(n, alpha, d, r, z, s)
                            : scale<double>(n, alpha, d, r, z, s);
}

extern "C" adia_status adia__precond_convert_gpu(adia_value_type from, adia_value_type to,
                                                 int64_t n, double alpha, const void *r, void *z,
                                                 void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (from == ADIA_FLOAT)
        return to == ADIA_FLOAT ? scale<float>(n, alpha, NULL, r, z, s)
                                : scale<float, double>(n, alpha, NULL, r, z, s);
    return to == ADIA_FLOAT ? scale<double, float>(n, alpha, NULL, r, z, s)
                            : scale<double>(n, alpha, NULL, r, z, s);
}

extern "C" adia_status adia__precond_upload(adia_value_type vt, int64_t n, const double *h,
                                            void **out)
{
    *out = NULL;
    adia_status st = vt == ADIA_FLOAT ? upload<float>(n, h, out) : upload<double>(n, h, out);
    if (st != ADIA_OK) {
        cudaFree(*out);
        *out = NULL;
    }
    return st;
}

extern "C" void adia__precond_free_gpu(void *d)
{
    if (d) cudaFree(d);
}
