/* mg_gpu.cu -- the multigrid cycle's vector kernels on the device: the
 * numerics of mg_cpu.c, kernel for kernel, on arrays of the plan's value
 * type (sums in double).  Each call is one launch on the caller's stream,
 * with no allocation, copy or synchronisation: a CUDA graph captures the
 * cycle whole. */
#include "mg.h"
#include "../cuda/cuda_util.h"

namespace {

constexpr int THREADS = 256;

/* Grid shapes of a pair of levels, by value.  A level has fewer than 2^31
 * rows (a plan's), so a row's grid point is found with 32-bit division,
 * several times cheaper on the device than 64-bit. */
struct pair_dims {
    int32_t fine[3], coarse[3];
    int coarsened[3];
    int32_t shift;   /* the slab's (mg_level.shift), z only */
};

pair_dims dims_of(const mg_level *L, const mg_level *Lc)
{
    pair_dims p;
    for (int d = 0; d < 3; d++) {
        p.fine[d] = L->n[d];
        p.coarse[d] = Lc->n[d];
        p.coarsened[d] = Lc->coarsened[d];
    }
    p.shift = (int32_t)Lc->shift;
    return p;
}

unsigned blocks_for(int64_t n)
{
    int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

template <typename T>
__global__ void smooth_kernel(int64_t n, const T *s, const T *b, T *x, const T *t, T *d,
                              mg_step st, double bs)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double xo = st.zero_x ? 0.0 : (double)x[i];
        double dx = st.c2 * ((double)s[i] * (bs * (double)b[i] - (st.zero_x ? 0.0 : (double)t[i])));
        if (st.c1 != 0) dx += st.c1 * (st.d_is_x ? xo : (double)d[i]);
        if (st.keep_d) d[i] = (T)dx;
        x[i] = (T)(xo + dx);
    }
}

template <typename T, typename Tc>
__global__ void restrict_kernel(pair_dims p, double bs, const T *b, const T *t, Tc *bc)
{
    const int64_t rows = (int64_t)p.coarse[0] * p.coarse[1] * p.coarse[2];
    const int64_t nx = p.fine[0], nxy = nx * p.fine[1];
    const uint32_t cnx = (uint32_t)p.coarse[0], cny = (uint32_t)p.coarse[1];
    for (int64_t I = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; I < rows;
         I += (int64_t)gridDim.x * blockDim.x) {
        const int32_t ci[3] = {(int32_t)((uint32_t)I % cnx), (int32_t)((uint32_t)I / cnx % cny),
                               (int32_t)((uint32_t)I / (cnx * cny))};
        double sum = 0;
        MG_UNROLL
        for (int c = 0; c < 3; c++) {
            int32_t fz, fy, fx;
            double wz, wy, wx;
            if (!mg_child(p.coarsened[2], ci[2], p.fine[2], p.shift, c, &fz, &wz)) continue;
            MG_UNROLL
            for (int e = 0; e < 3; e++) {
                if (!mg_child(p.coarsened[1], ci[1], p.fine[1], 0, e, &fy, &wy)) continue;
                MG_UNROLL
                for (int a = 0; a < 3; a++) {
                    if (!mg_child(p.coarsened[0], ci[0], p.fine[0], 0, a, &fx, &wx)) continue;
                    const int64_t i = fx + nx * fy + nxy * fz;
                    sum += wx * wy * wz * (bs * (double)b[i] - (double)t[i]);
                }
            }
        }
        bc[I] = (Tc)sum;
    }
}

template <typename T, typename Tc>
__global__ void prolong_kernel(pair_dims p, const Tc *xc, T *x)
{
    const int64_t rows = (int64_t)p.fine[0] * p.fine[1] * p.fine[2];
    const int64_t cx = p.coarse[0], cxy = cx * p.coarse[1];
    const uint32_t fnx = (uint32_t)p.fine[0], fny = (uint32_t)p.fine[1];
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int32_t fi[3] = {(int32_t)((uint32_t)i % fnx), (int32_t)((uint32_t)i / fnx % fny),
                               (int32_t)((uint32_t)i / (fnx * fny))};
        double sum = 0;
        MG_UNROLL
        for (int z = 0; z < 2; z++) {
            int32_t cz, cy, c0;
            double wz, wy, wx;
            if (!mg_parent(p.coarsened[2], fi[2], p.coarse[2], p.shift, z, &cz, &wz)) continue;
            MG_UNROLL
            for (int y = 0; y < 2; y++) {
                if (!mg_parent(p.coarsened[1], fi[1], p.coarse[1], 0, y, &cy, &wy)) continue;
                MG_UNROLL
                for (int a = 0; a < 2; a++) {
                    if (!mg_parent(p.coarsened[0], fi[0], p.coarse[0], 0, a, &c0, &wx)) continue;
                    sum += wx * wy * wz * (double)xc[c0 + cx * cy + cxy * cz];
                }
            }
        }
        x[i] = (T)((double)x[i] + sum);
    }
}

/* x = bs A^-1 b: one warp per row of the dense inverse (rows <=
 * MG_DENSE_MAX), lanes striding the row, a shuffle sum. */
template <typename T>
__global__ void gemv_kernel(int64_t n, const T *a, const T *b, T *x, double bs)
{
    const int lane = threadIdx.x % 32;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < n;
         r += (int64_t)gridDim.x * blockDim.x / 32) {
        double s = 0;
        for (int64_t j = lane; j < n; j += 32) s += (double)a[r * n + j] * (double)b[j];
        for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
        if (lane == 0) x[r] = (T)(bs * s);
    }
}

template <typename T>
adia_status smooth_t(const mg_level *L, mg_step step, double bs, const void *b, void *x,
                     cudaStream_t st)
{
    smooth_kernel<T><<<blocks_for(L->rows), THREADS, 0, st>>>(
        L->rows, (const T *)L->s, (const T *)b, (T *)x, (const T *)L->t, (T *)L->d, step, bs);
    return adia_cuda_check(cudaGetLastError(), "mg smoother kernel");
}

template <typename T, typename Tc>
adia_status restrict_t(const mg_level *L, const mg_level *Lc, double bs, const void *b,
                       cudaStream_t st)
{
    restrict_kernel<T, Tc><<<blocks_for(Lc->rows), THREADS, 0, st>>>(
        dims_of(L, Lc), bs, (const T *)b, (const T *)L->t, (Tc *)Lc->b);
    return adia_cuda_check(cudaGetLastError(), "mg restriction kernel");
}

template <typename T, typename Tc>
adia_status prolong_t(const mg_level *L, const mg_level *Lc, void *x, cudaStream_t st)
{
    prolong_kernel<T, Tc><<<blocks_for(L->rows), THREADS, 0, st>>>(dims_of(L, Lc),
                                                                   (const Tc *)Lc->x, (T *)x);
    return adia_cuda_check(cudaGetLastError(), "mg prolongation kernel");
}

template <typename T>
adia_status coarse_t(const mg_level *L, double bs, const void *b, void *x, cudaStream_t st)
{
    gemv_kernel<T><<<blocks_for(L->rows * 32), THREADS, 0, st>>>(L->rows, (const T *)L->ainv,
                                                                  (const T *)b, (T *)x, bs);
    return adia_cuda_check(cudaGetLastError(), "mg coarsest-level kernel");
}

adia_status gpu_smooth(const mg_state *S, const mg_level *L, mg_step step, double bs,
                       const void *b, void *x, void *stream)
{
    (void)S;
    cudaStream_t st = (cudaStream_t)stream;
    return L->vtype == ADIA_FLOAT ? smooth_t<float>(L, step, bs, b, x, st)
                                  : smooth_t<double>(L, step, bs, b, x, st);
}

/* A pair of levels: both of the plan's type, both float, or the finest in
 * double and the coarse in float (float_levels COARSE). */
adia_status gpu_restrict(const mg_state *S, const mg_level *L, const mg_level *Lc, double bs,
                         const void *b, void *stream)
{
    (void)S;
    cudaStream_t st = (cudaStream_t)stream;
    if (L->vtype == ADIA_FLOAT) return restrict_t<float, float>(L, Lc, bs, b, st);
    return Lc->vtype == ADIA_FLOAT ? restrict_t<double, float>(L, Lc, bs, b, st)
                                   : restrict_t<double, double>(L, Lc, bs, b, st);
}

adia_status gpu_prolong(const mg_state *S, const mg_level *L, const mg_level *Lc, void *x,
                        void *stream)
{
    (void)S;
    cudaStream_t st = (cudaStream_t)stream;
    if (L->vtype == ADIA_FLOAT) return prolong_t<float, float>(L, Lc, x, st);
    return Lc->vtype == ADIA_FLOAT ? prolong_t<double, float>(L, Lc, x, st)
                                   : prolong_t<double, double>(L, Lc, x, st);
}

adia_status gpu_coarse(const mg_state *S, const mg_level *L, double bs, const void *b, void *x,
                       void *stream)
{
    (void)S;
    cudaStream_t st = (cudaStream_t)stream;
    return L->vtype == ADIA_FLOAT ? coarse_t<float>(L, bs, b, x, st)
                                  : coarse_t<double>(L, bs, b, x, st);
}

}  // namespace

extern "C" const mg_kernels adia__mg_gpu_kernels = {
    .smooth = gpu_smooth,
    .restrict_residual = gpu_restrict,
    .prolong = gpu_prolong,
    .coarse = gpu_coarse,
};

extern "C" adia_status adia__mg_gpu_zeros(adia_value_type vt, int64_t n, void **out)
{
    *out = NULL;
    const size_t bytes = (size_t)(n > 0 ? n : 1) * adia_value_size(vt);
    void *p = NULL;
    ADIA_TRY(adia__gpu_check_free((int64_t)bytes, "mg level array"));
    ADIA_TRY(adia_cuda_check(cudaMalloc(&p, bytes), "mg level array"));
    adia_status s = adia_cuda_check(cudaMemset(p, 0, bytes), "mg level array");
    if (s != ADIA_OK) cudaFree(p);
    else *out = p;
    return s;
}
