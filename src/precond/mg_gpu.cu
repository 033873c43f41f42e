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
    /* prolongation's cells: coarse points cell_lo[d] .. + cells[d] - 1,
       those whose fine points (g = f - shift: 2c, 2c + 1 or c) cover the
       fine grid (c = -1 owns g = -1 where a slab's shift is 1) */
    int32_t cell_lo[3], cells[3];
};

pair_dims dims_of(const mg_level *L, const mg_level *Lc)
{
    pair_dims p;
    p.shift = (int32_t)Lc->shift;
    for (int d = 0; d < 3; d++) {
        p.fine[d] = L->n[d];
        p.coarse[d] = Lc->n[d];
        p.coarsened[d] = Lc->coarsened[d];
        const int32_t s = d == 2 ? p.shift : 0, g0 = -s, g1 = L->n[d] - 1 - s;
        const auto owner = [&](int32_t g) { return p.coarsened[d] ? (g - (g & 1)) / 2 : g; };
        p.cell_lo[d] = owner(g0);
        p.cells[d] = owner(g1) - p.cell_lo[d] + 1;
    }
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

/* x += P xc, a thread per coarse cell c: the fine points (up to 2 x 2 x 2)
 * whose lowest parent slot is c -- g = 2c, 2c + 1 along a coarsened
 * direction, g = c along another (f = g + shift) -- from the cell's coarse
 * values at c and c + 1, so that one division and eight loads serve eight
 * fine points (a thread per fine point spent most of its time finding its
 * coordinates: compute-bound at 3x its bytes, Nsight Compute, H200
 * 2026-11-28).  Each fine point's sum is mg_parent's slots in the host's
 * order (mg_cpu.c), a parent off the coarse grid adding +0. */
template <typename T, typename Tc>
__global__ void prolong_kernel(pair_dims p, const Tc *xc, T *x)
{
    const int64_t cells = (int64_t)p.cells[0] * p.cells[1] * p.cells[2];
    const int64_t nx = p.fine[0], nxy = nx * p.fine[1];
    const int64_t cx = p.coarse[0], cxy = cx * p.coarse[1];
    const uint32_t ncx = (uint32_t)p.cells[0], ncy = (uint32_t)p.cells[1];
    int m[3], s[3] = {0, 0, p.shift};
    MG_UNROLL
    for (int d = 0; d < 3; d++) m[d] = p.coarsened[d] ? 2 : 1;   /* fine points a direction */
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < cells;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int32_t c[3] = {p.cell_lo[0] + (int32_t)((uint32_t)t % ncx),
                              p.cell_lo[1] + (int32_t)((uint32_t)t / ncx % ncy),
                              p.cell_lo[2] + (int32_t)((uint32_t)t / (ncx * ncy))};
        double v[2][2][2];   /* [z][y][x]: xc at c + (x, y, z), 0 off the coarse grid */
        bool in[3][2];
        MG_UNROLL
        for (int d = 0; d < 3; d++)
            MG_UNROLL
            for (int a = 0; a < 2; a++) in[d][a] = c[d] + a >= 0 && c[d] + a < p.coarse[d];
        MG_UNROLL
        for (int z = 0; z < 2; z++)
            MG_UNROLL
            for (int y = 0; y < 2; y++)
                MG_UNROLL
                for (int a = 0; a < 2; a++)
                    v[z][y][a] = in[2][z] && in[1][y] && in[0][a] && z < m[2] && y < m[1] && a < m[0]
                                     ? (double)xc[c[0] + a + cx * (c[1] + y) + cxy * (c[2] + z)]
                                     : 0.0;
        MG_UNROLL
        for (int ez = 0; ez < 2; ez++) {
            const int32_t fz = (m[2] == 2 ? 2 * c[2] + ez : c[2]) + s[2];
            if (ez >= m[2] || fz < 0 || fz >= p.fine[2]) continue;
            MG_UNROLL
            for (int ey = 0; ey < 2; ey++) {
                const int32_t fy = m[1] == 2 ? 2 * c[1] + ey : c[1];
                if (ey >= m[1] || fy < 0 || fy >= p.fine[1]) continue;
                MG_UNROLL
                for (int ex = 0; ex < 2; ex++) {
                    const int32_t fx = m[0] == 2 ? 2 * c[0] + ex : c[0];
                    if (ex >= m[0] || fx < 0 || fx >= p.fine[0]) continue;
                    /* slots: an even (or not coarsened) point c alone, weight 1;
                       an odd one c and c + 1, 1/2 each */
                    double sum = 0;
                    MG_UNROLL
                    for (int z = 0; z <= ez; z++)
                        MG_UNROLL
                        for (int y = 0; y <= ey; y++)
                            MG_UNROLL
                            for (int a = 0; a <= ex; a++) {
                                const double wx = ex ? 0.5 : 1.0, wy = ey ? 0.5 : 1.0,
                                             wz = ez ? 0.5 : 1.0;
                                sum += wx * wy * wz * v[z][y][a];
                            }
                    const int64_t i = fx + nx * fy + nxy * fz;
                    x[i] = (T)((double)x[i] + sum);
                }
            }
        }
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
    const pair_dims p = dims_of(L, Lc);
    prolong_kernel<T, Tc><<<blocks_for((int64_t)p.cells[0] * p.cells[1] * p.cells[2]), THREADS,
                            0, st>>>(p, (const Tc *)Lc->x, (T *)x);
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
