/* dist_krylov_kernels.cu -- the vector kernels of the device-resident
 * distributed solvers (dist_krylov.h).  Each update is one pass over its
 * vectors (what the CPU methods do in several loops); the dot products of
 * one reduction are one pass too, reduced per block and then, per sum, by
 * one block in a fixed order -- no atomics -- so a solve gives the same
 * iterates every run, as the CPU's fixed chunks do. */
#include "dist_krylov.h"

#include <string.h>

#define KR_BLOCK 256
#define KR_MAX_BLOCKS 1024
#define DOT_GROUP ADIA_DIST_DOTS_MAX   /* sums one block computes at once */

static int blocks_for(int64_t n)
{
    int64_t b = (n + KR_BLOCK - 1) / KR_BLOCK;
    return b < 1 ? 1 : b > KR_MAX_BLOCKS ? KR_MAX_BLOCKS : (int)b;
}

extern "C" int64_t adia__dist_dots_partials(int64_t n, int count)
{
    return (int64_t)count * blocks_for(n);
}

#define FOR_ROWS(i, n)                                                                   \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);           \
         i += (int64_t)gridDim.x * blockDim.x)

/* ------------------------------------------------------- dot products */

/* The pairs of adia__dist_dots. */
struct pair_source {
    const double *a[DOT_GROUP], *b[DOT_GROUP];
    int count;
    double scale;   /* each factor times this: 1, or a norm's power of two */
    __device__ const double *left(int l) const { return a[l]; }
    __device__ const double *right(int l) const { return b[l]; }
};

/* The pairs of adia__dist_basis_dots: (V_l, w) for l < k, then (w, w). */
struct basis_source {
    const double *V, *w;
    int64_t n;
    int k, count;
    double scale;
    __device__ const double *left(int l) const { return l < k ? V + l * n : w; }
    __device__ const double *right(int) const { return w; }
};

/* The sums v[g][0..KR_BLOCK) into v[g][0], by halves. */
static __device__ void block_sums(double (*v)[KR_BLOCK], int groups)
{
    for (int half = KR_BLOCK / 2; half > 0; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half)
            for (int g = 0; g < groups; g++) v[g][threadIdx.x] += v[g][threadIdx.x + half];
    }
    __syncthreads();
}

/* Block (x, y): sums y DOT_GROUP .. + DOT_GROUP of the rows of its
 * grid-stride, into partial[sum * gridDim.x + x]. */
template <class S>
static __global__ void dots_kernel(int64_t n, S src, double *partial)
{
    __shared__ double v[DOT_GROUP][KR_BLOCK];
    const int first = blockIdx.y * DOT_GROUP;
    const int count = min(DOT_GROUP, src.count - first);
    const double *a[DOT_GROUP], *b[DOT_GROUP];
    double acc[DOT_GROUP];
    for (int g = 0; g < DOT_GROUP; g++) {
        a[g] = g < count ? src.left(first + g) : NULL;
        b[g] = g < count ? src.right(first + g) : NULL;
        acc[g] = 0;
    }
    FOR_ROWS(i, n) {
#pragma unroll
        for (int g = 0; g < DOT_GROUP; g++)
            if (g < count) acc[g] += (a[g][i] * src.scale) * (b[g][i] * src.scale);
    }
    for (int g = 0; g < DOT_GROUP; g++) v[g][threadIdx.x] = acc[g];
    block_sums(v, count);
    if (threadIdx.x < count)
        partial[(first + threadIdx.x) * (int64_t)gridDim.x + blockIdx.x] = v[threadIdx.x][0];
}

/* Block l: partial[l * blocks ..] into out[l]. */
static __global__ void dots_final_kernel(int blocks, const double *partial, double *out)
{
    __shared__ double v[1][KR_BLOCK];
    double s = 0;
    for (int b = threadIdx.x; b < blocks; b += KR_BLOCK)
        s += partial[blockIdx.x * (int64_t)blocks + b];
    v[0][threadIdx.x] = s;
    block_sums(v, 1);
    if (threadIdx.x == 0) out[blockIdx.x] = v[0][0];
}

template <class S>
static cudaError_t dots(int64_t n, const S &src, double *partial, double *out, cudaStream_t stream)
{
    const int blocks = blocks_for(n);
    dim3 grid(blocks, (src.count + DOT_GROUP - 1) / DOT_GROUP);
    dots_kernel<<<grid, KR_BLOCK, 0, stream>>>(n, src, partial);
    dots_final_kernel<<<src.count, KR_BLOCK, 0, stream>>>(blocks, partial, out);
    return cudaGetLastError();
}

extern "C" cudaError_t adia__dist_dots(int64_t n, int count, const double *const *a,
                                       const double *const *b, double *partial, double *out,
                                       cudaStream_t stream)
{
    if (count < 1 || count > DOT_GROUP) return cudaErrorInvalidValue;
    pair_source src = {};
    for (int k = 0; k < count; k++) {
        src.a[k] = a[k];
        src.b[k] = b[k];
    }
    src.count = count;
    src.scale = 1;   /* x 1 is exact: the plain products */
    return dots(n, src, partial, out, stream);
}

extern "C" cudaError_t adia__dist_basis_dots(int64_t n, int k, const double *V, const double *w,
                                             int self, double *partial, double *out,
                                             cudaStream_t stream)
{
    if (k < 0 || k + !!self < 1) return cudaErrorInvalidValue;
    basis_source src = {V, w, n, k, k + !!self, 1};
    return dots(n, src, partial, out, stream);
}

extern "C" cudaError_t adia__dist_sumsq(int64_t n, const double *v, double scale,
                                        double *partial, double *out, cudaStream_t stream)
{
    pair_source src = {};
    src.a[0] = src.b[0] = v;
    src.count = 1;
    src.scale = scale;
    return dots(n, src, partial, out, stream);
}

/* Non-negative doubles order as their bit patterns (NaN above Inf), so an
 * integer atomicMax of the patterns is the maximum. */
static __global__ void max_abs_kernel(int64_t n, const double *v, unsigned long long *out)
{
    unsigned long long m = 0;
    FOR_ROWS(i, n) {
        const unsigned long long b = (unsigned long long)__double_as_longlong(fabs(v[i]));
        m = b > m ? b : m;
    }
    for (int d = 16; d; d >>= 1) {
        const unsigned long long o = __shfl_down_sync(0xffffffffu, m, d);
        m = o > m ? o : m;
    }
    if ((threadIdx.x & 31) == 0) atomicMax(out, m);
}

extern "C" cudaError_t adia__dist_max_abs(int64_t n, const double *v, double *out,
                                          cudaStream_t stream)
{
    unsigned long long *d = nullptr, bits = 0;
    cudaError_t e = cudaMalloc(&d, sizeof *d);
    if (e == cudaSuccess) e = cudaMemsetAsync(d, 0, sizeof *d, stream);
    if (e == cudaSuccess && n > 0) {
        max_abs_kernel<<<blocks_for(n), KR_BLOCK, 0, stream>>>(n, v, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(&bits, d, sizeof bits, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    cudaFree(d);
    memcpy(out, &bits, sizeof *out);
    return e;
}

/* ------------------------------------------------------------ updates */

/* sum_l c[l] V_l[i] in l order (the CPU's order for GMRES's V y). */
static __global__ void combine_kernel(int64_t n, int k, const double *V, const double *c,
                                      double sign, const double *d, double div, double *y)
{
    FOR_ROWS(i, n) {
        double s = 0;
        for (int l = 0; l < k; l++) s += c[l] * V[l * n + i];
        if (d) s *= d[i];
        y[i] = (y[i] + sign * s) / div;
    }
}

/* u may alias r (no preconditioner): each element is read before it is written. */
static __global__ void residual_kernel(int64_t n, const double *b, double *r, const double *d,
                                       double *u)
{
    FOR_ROWS(i, n) {
        double ri = b[i] - r[i];
        r[i] = ri;
        if (d) u[i] = d[i] * ri;
    }
}

static __global__ void diag_mul_kernel(int64_t n, const double *d, const double *x, double *y)
{
    FOR_ROWS(i, n) y[i] = d[i] * x[i];
}

static __global__ void axpy_kernel(int64_t n, double alpha, const double *x, double *y)
{
    FOR_ROWS(i, n) y[i] += alpha * x[i];
}

static __global__ void cg_update_kernel(int64_t n, double alpha, double beta, const double *d,
                                        const double *w, double *p, double *s, double *x,
                                        double *r, double *u)
{
    FOR_ROWS(i, n) {
        double pi = u[i] + beta * p[i], si = w[i] + beta * s[i];
        p[i] = pi;
        s[i] = si;
        x[i] += alpha * pi;
        double ri = r[i] - alpha * si;
        r[i] = ri;
        if (d) u[i] = d[i] * ri;
    }
}

/* ph may alias p (no preconditioner). */
static __global__ void bicgstab_p_kernel(int64_t n, double beta, double omega, const double *r,
                                         const double *v, double *p, const double *d, double *ph)
{
    FOR_ROWS(i, n) {
        double pi = r[i] + beta * (p[i] - omega * v[i]);
        p[i] = pi;
        if (d) ph[i] = d[i] * pi;
    }
}

/* sh may alias r (no preconditioner). */
static __global__ void bicgstab_s_kernel(int64_t n, double alpha, const double *v, double *r,
                                         const double *d, double *sh)
{
    FOR_ROWS(i, n) {
        double si = r[i] - alpha * v[i];
        r[i] = si;
        if (d) sh[i] = d[i] * si;
    }
}

/* sh may alias r (no preconditioner): read before r is written. */
static __global__ void bicgstab_x_kernel(int64_t n, double alpha, double omega, const double *ph,
                                         const double *sh, const double *t, double *x, double *r)
{
    FOR_ROWS(i, n) {
        double si = r[i], shi = sh[i];
        x[i] = (x[i] + alpha * ph[i]) + omega * shi;
        r[i] = si - omega * t[i];
    }
}

#define LAUNCH(kernel, n, ...)                                                           \
    do {                                                                                 \
        kernel<<<blocks_for(n), KR_BLOCK, 0, stream>>>(n, __VA_ARGS__);                  \
        return cudaGetLastError();                                                       \
    } while (0)

extern "C" cudaError_t adia__dist_basis_combine(int64_t n, int k, const double *V,
                                                const double *c, double sign,
                                                const double *inv_diag, double div, double *y,
                                                cudaStream_t stream)
{
    LAUNCH(combine_kernel, n, k, V, c, sign, inv_diag, div, y);
}

extern "C" cudaError_t adia__dist_residual(int64_t n, const double *b, double *r,
                                           const double *inv_diag, double *u,
                                           cudaStream_t stream)
{
    LAUNCH(residual_kernel, n, b, r, inv_diag, u);
}

extern "C" cudaError_t adia__dist_diag_mul(int64_t n, const double *inv_diag, const double *x,
                                           double *y, cudaStream_t stream)
{
    LAUNCH(diag_mul_kernel, n, inv_diag, x, y);
}

extern "C" cudaError_t adia__dist_axpy(int64_t n, double alpha, const double *x, double *y,
                                       cudaStream_t stream)
{
    LAUNCH(axpy_kernel, n, alpha, x, y);
}

extern "C" cudaError_t adia__dist_cg_update(int64_t n, double alpha, double beta,
                                            const double *inv_diag, const double *w, double *p,
                                            double *s, double *x, double *r, double *u,
                                            cudaStream_t stream)
{
    LAUNCH(cg_update_kernel, n, alpha, beta, inv_diag, w, p, s, x, r, u);
}

extern "C" cudaError_t adia__dist_bicgstab_p(int64_t n, double beta, double omega,
                                             const double *r, const double *v, double *p,
                                             const double *inv_diag, double *ph,
                                             cudaStream_t stream)
{
    LAUNCH(bicgstab_p_kernel, n, beta, omega, r, v, p, inv_diag, ph);
}

extern "C" cudaError_t adia__dist_bicgstab_s(int64_t n, double alpha, const double *v, double *r,
                                             const double *inv_diag, double *sh,
                                             cudaStream_t stream)
{
    LAUNCH(bicgstab_s_kernel, n, alpha, v, r, inv_diag, sh);
}

extern "C" cudaError_t adia__dist_bicgstab_x(int64_t n, double alpha, double omega,
                                             const double *ph, const double *sh, const double *t,
                                             double *x, double *r, cudaStream_t stream)
{
    LAUNCH(bicgstab_x_kernel, n, alpha, omega, ph, sh, t, x, r);
}
