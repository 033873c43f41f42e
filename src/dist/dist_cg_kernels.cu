/* dist_cg_kernels.cu -- the vector kernels of the device-resident
 * distributed CG (dist_cg.h).  The update is one pass over the vectors
 * (what the CPU CG's cg_update does in one loop); the three local dot
 * products are one pass too, reduced per block and then by one block in a
 * fixed order -- no atomics -- so a solve gives the same iterates every
 * run, as the CPU's static OpenMP schedule does. */
#include "dist_cg.h"

#define CG_BLOCK 256
#define CG_MAX_BLOCKS 1024

static int blocks_for(int64_t n)
{
    int64_t b = (n + CG_BLOCK - 1) / CG_BLOCK;
    return b < 1 ? 1 : b > CG_MAX_BLOCKS ? CG_MAX_BLOCKS : (int)b;
}

extern "C" int64_t adia__dist_cg_partials(int64_t n) { return 3 * (int64_t)blocks_for(n); }

/* u may alias r (no preconditioner): each element is read before it is written. */
static __global__ void residual_kernel(int64_t n, const double *b, double *r, const double *d,
                                       double *u)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double ri = b[i] - r[i];
        r[i] = ri;
        if (d) u[i] = d[i] * ri;
    }
}

static __global__ void update_kernel(int64_t n, double alpha, double beta, const double *d,
                                     const double *w, double *p, double *s, double *x, double *r,
                                     double *u)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double pi = u[i] + beta * p[i], si = w[i] + beta * s[i];
        p[i] = pi;
        s[i] = si;
        x[i] += alpha * pi;
        double ri = r[i] - alpha * si;
        r[i] = ri;
        if (d) u[i] = d[i] * ri;
    }
}

/* The three sums of v[k][0..CG_BLOCK) into v[k][0], by halves. */
static __device__ void block_sum3(double (*v)[CG_BLOCK])
{
    for (int half = CG_BLOCK / 2; half > 0; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half)
            for (int k = 0; k < 3; k++) v[k][threadIdx.x] += v[k][threadIdx.x + half];
    }
    __syncthreads();
}

static __global__ void dots_kernel(int64_t n, const double *u, const double *w, const double *r,
                                   double *partial)
{
    __shared__ double v[3][CG_BLOCK];
    double uw = 0, ru = 0, rr = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double ui = u[i], ri = r[i];
        uw += ui * w[i];
        ru += ri * ui;
        rr += ri * ri;
    }
    v[0][threadIdx.x] = uw;
    v[1][threadIdx.x] = ru;
    v[2][threadIdx.x] = rr;
    block_sum3(v);
    if (threadIdx.x < 3) partial[3 * blockIdx.x + threadIdx.x] = v[threadIdx.x][0];
}

/* One block: the blocks' partial sums into out[0..3). */
static __global__ void dots_final_kernel(int blocks, const double *partial, double *out)
{
    __shared__ double v[3][CG_BLOCK];
    for (int k = 0; k < 3; k++) v[k][threadIdx.x] = 0;
    for (int b = threadIdx.x; b < blocks; b += CG_BLOCK)
        for (int k = 0; k < 3; k++) v[k][threadIdx.x] += partial[3 * b + k];
    block_sum3(v);
    if (threadIdx.x < 3) out[threadIdx.x] = v[threadIdx.x][0];
}

extern "C" cudaError_t adia__dist_cg_residual(int64_t n, const double *b, double *r,
                                              const double *inv_diag, double *u,
                                              cudaStream_t stream)
{
    residual_kernel<<<blocks_for(n), CG_BLOCK, 0, stream>>>(n, b, r, inv_diag, u);
    return cudaGetLastError();
}

extern "C" cudaError_t adia__dist_cg_update(int64_t n, double alpha, double beta,
                                            const double *inv_diag, const double *w, double *p,
                                            double *s, double *x, double *r, double *u,
                                            cudaStream_t stream)
{
    update_kernel<<<blocks_for(n), CG_BLOCK, 0, stream>>>(n, alpha, beta, inv_diag, w, p, s, x,
                                                          r, u);
    return cudaGetLastError();
}

extern "C" cudaError_t adia__dist_cg_dots(int64_t n, const double *u, const double *w,
                                          const double *r, double *partial, double *out,
                                          cudaStream_t stream)
{
    int blocks = blocks_for(n);
    dots_kernel<<<blocks, CG_BLOCK, 0, stream>>>(n, u, w, r, partial);
    dots_final_kernel<<<1, CG_BLOCK, 0, stream>>>(blocks, partial, out);
    return cudaGetLastError();
}
