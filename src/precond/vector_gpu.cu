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

/* d = 1 / d where d is nonzero and finite (else left as it is); w[0]: the
 * first row where it is not (atomicMin, ~0 if none), w[1]: 1 where some
 * d is not 1.  Every thread reaches the warp reductions. */
template <typename T>
__global__ void invert_kernel(int64_t n, T *d, unsigned long long *w)
{
    unsigned long long bad = ~0ull;
    unsigned not_one = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const T a = d[i];
        not_one |= a != (T)1;
        if (a != 0 && isfinite(a)) d[i] = (T)1 / a;
        else if ((unsigned long long)i < bad) bad = (unsigned long long)i;
    }
    for (int o = 16; o; o >>= 1) {
        const unsigned long long b = __shfl_xor_sync(0xffffffffu, bad, o);
        bad = b < bad ? b : bad;
        not_one |= __shfl_xor_sync(0xffffffffu, not_one, o);
    }
    if (threadIdx.x % 32 == 0) {
        if (bad != ~0ull) atomicMin(&w[0], bad);
        if (not_one) atomicOr(&w[1], 1ull);
    }
}

template <typename T>
adia_status invert(int64_t n, void *d, unsigned long long *w)
{
    int64_t blocks = (n + 255) / 256;
    if (blocks > 4096) blocks = 4096;
    invert_kernel<T><<<(unsigned)(blocks > 0 ? blocks : 1), 256>>>(n, (T *)d, w);
    return adia_cuda_check(cudaGetLastError(), "inverse diagonal kernel");
}

}  // namespace

extern "C" adia_status adia__precond_inverse_diagonal_gpu(const adia_plan *plan, const char *who,
                                                          void **out, int *ones)
{
    *out = NULL;
    const adia_format *F = adia_plan_format(plan);
    const adia_value_type vt = adia_plan_value_type(plan);
    const int64_t n = adia_plan_rows(plan);
    const size_t vs = adia_value_size(vt), bytes = ((size_t)n * vs + 15) / 16 * 16;
    /* one block: the values, then the two words (a small allocation of its
     * own costs 84 us where no other is alive: mg_setup_gpu.cu) */
    char *block = NULL;
    ADIA_CUDA_TRY(cudaMalloc((void **)&block, bytes + 2 * sizeof(unsigned long long)));
    unsigned long long *w = (unsigned long long *)(block + bytes), h[2] = {0, 0};
    adia_status s = adia__format_diagonal_gpu(F, block, vt, NULL);
    if (s == ADIA_OK) s = adia_cuda_check(cudaMemsetAsync(w, 0xff, sizeof *w), "inverse diagonal");
    if (s == ADIA_OK) s = adia_cuda_check(cudaMemsetAsync(w + 1, 0, sizeof *w), "inverse diagonal");
    if (s == ADIA_OK) s = vt == ADIA_FLOAT ? invert<float>(n, block, w) : invert<double>(n, block, w);
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost), "inverse diagonal");
    if (s == ADIA_OK && h[0] != ~0ull) {   /* the entry as it is stored, for the message */
        double a = 0;
        float af = 0;
        s = adia_cuda_check(cudaMemcpy(vt == ADIA_FLOAT ? (void *)&af : (void *)&a,
                                       block + h[0] * vs, vs, cudaMemcpyDeviceToHost),
                            "inverse diagonal");
        if (vt == ADIA_FLOAT) a = af;
        if (s == ADIA_OK)
            s = adia__error(ADIA_ERR_INVALID_ARG, "%s A(%llu,%llu) nonzero and finite, it is %g",
                            who, h[0], h[0], a);
    }
    if (s != ADIA_OK) {
        cudaFree(block);
        return s;
    }
    *out = block;
    *ones = h[1] == 0;
    return ADIA_OK;
}

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
