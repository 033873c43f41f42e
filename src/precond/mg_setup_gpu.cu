/* mg_setup_gpu.cu -- the multigrid set-up's kernels on the device (issue
 * 30): the fine operator read in place from a GPU plan's diagonal storage
 * (checked against the grid by a reduction that finds the first bad row),
 * the Galerkin product by the host's row unrolled at compile time (a
 * thread per coarse point), a stencil written as DIA, the power
 * iteration's estimate with deterministic sums, the smoother's scaling.
 * Each function's numerics are its host twin's (mg_grid.c, mg_galerkin.c, mg_smooth.c); what crosses
 * to the host is a few words (a row, a mask, an estimate). */
#include "mg.h"
#include "../cuda/codegen.h"
#include "../cuda/gpu_common.h"
#include "../formats/diag_core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace {

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 4096;   /* grid-stride beyond: partial sums fit */

/* The plan's device storage: diag_gpu.cu's arguments of its kernel. */
const adia_diag_args *args_of(const mg_dview *v) { return (const adia_diag_args *)v->dev; }

unsigned blocks_for(int64_t n)
{
    const int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

/* Grid coordinates of row i (< 2^31: a plan's rows; 32-bit division). */
struct grid3 {
    uint32_t n[3];
};

__device__ __forceinline__ void coords_of(const grid3 &g, uint32_t i, int c[3])
{
    c[0] = (int)(i % g.n[0]);
    c[1] = (int)(i / g.n[0] % g.n[1]);
    c[2] = (int)(i / (g.n[0] * g.n[1]));
}

/* Stencil point of entry (i, j), i at coordinates ci, or -1 when they are
 * not neighbours. */
__device__ __forceinline__ int point_of(const grid3 &g, const int ci[3], uint32_t j)
{
    int cj[3], d[3];
    coords_of(g, j, cj);
    for (int k = 0; k < 3; k++) {
        d[k] = cj[k] - ci[k];
        if (d[k] < -1 || d[k] > 1) return -1;
    }
    return mg_point(d[0], d[1], d[2]);
}

__device__ __forceinline__ unsigned long long warp_min(unsigned long long v)
{
    for (int o = 16; o; o >>= 1) {
        const unsigned long long w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w < v ? w : v;
    }
    return v;
}

__device__ __forceinline__ unsigned warp_or(unsigned v)
{
    for (int o = 16; o; o >>= 1) v |= __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* One pass over the stored entries: the first bad row (atomicMin), the
 * points present (atomicOr), and with WRITE the stencil and the first row
 * with a bad diagonal.  Every thread reaches the warp reductions
 * (grid-stride loop, reductions after it).  A row's coordinates are found
 * once, not again for each entry (the check of lap3d7:256, 1.27 ms under
 * ncu, H200, was bound by the divisions). */
template <typename T, bool WRITE>
__global__ void read_kernel(adia_diag_args a, grid3 g, mg_stencil S, unsigned long long *bad,
                            unsigned *mask, unsigned long long *bad_diag)
{
    unsigned long long my_bad = ~0ull, my_diag = ~0ull;
    unsigned my_mask = 0;
    const T *data = (const T *)a.data;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < a.rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        const adia_diag_loc l = adia_diag_locate(a, (int)r);
        const int k0 = a.group_start[l.group], k1 = a.group_start[l.group + 1];
        int cr[3];
        coords_of(g, (uint32_t)r, cr);
        double v[WRITE ? MG_POINTS : 1] = {};
        for (int k = k0; k < k1; k++) {
            const int64_t c = r + a.offsets[k];
            if (c < 0 || c >= a.cols) continue;   /* DIA's slots outside: stored 0 */
            const double x = (double)data[l.base + (int64_t)(k - k0) * l.len];
            if (x == 0) continue;
            const int p = point_of(g, cr, (uint32_t)c);
            if (p < 0) {
                my_bad = my_bad < (unsigned long long)r ? my_bad : (unsigned long long)r;
                break;
            }
            my_mask |= 1u << p;
            if constexpr (WRITE) v[p] = x;
        }
        if constexpr (WRITE) {
            for (int p = 0; p < MG_POINTS; p++)
                if (S.coef[p]) S.coef[p][r] = v[p];
            const double d = v[mg_point(0, 0, 0)];
            if (d == 0 || !isfinite(d))
                my_diag = my_diag < (unsigned long long)r ? my_diag : (unsigned long long)r;
        }
    }
    my_bad = warp_min(my_bad);
    my_diag = warp_min(my_diag);
    my_mask = warp_or(my_mask);
    if (threadIdx.x % 32 == 0) {
        if (my_bad != ~0ull) atomicMin(bad, my_bad);
        if (my_diag != ~0ull) atomicMin(bad_diag, my_diag);
        if (my_mask) atomicOr(mask, my_mask);
    }
}

/* Row i's first nonzero that is not a neighbour: out = {column, value}. */
template <typename T>
__global__ void bad_entry_kernel(adia_diag_args a, grid3 g, int i, double *out)
{
    const adia_diag_loc l = adia_diag_locate(a, i);
    const int k0 = a.group_start[l.group], k1 = a.group_start[l.group + 1];
    int ci[3];
    coords_of(g, (uint32_t)i, ci);
    out[0] = -1;
    for (int k = k0; k < k1; k++) {
        const int64_t c = (int64_t)i + a.offsets[k];
        if (c < 0 || c >= a.cols) continue;
        const double x = (double)((const T *)a.data)[l.base + (int64_t)(k - k0) * l.len];
        if (x != 0 && point_of(g, ci, (uint32_t)c) < 0) {
            out[0] = (double)c, out[1] = x;
            return;
        }
    }
}

struct coarse_dims {
    int32_t nc[3];
    int coarsened[3];
};

constexpr int GALERKIN_THREADS = 128, GALERKIN_BLOCKS = 4096;

/* One (child, point) pair of the host's row (mg_galerkin.c), number KP in
 * its order (dk_z, dp_z, dk_y, dp_y, dk_x, dp_x, each -1..1 as 0..2), the
 * directions coarsened CO: its value loaded once and added by mg_add_mul
 * into the sums of the parents it reaches.  A template per pair, so that
 * the sums' indices are constants (the nested loops unrolled left the
 * largest kernel's 27 sums on the stack). */
template <int CO, bool FACES, int KP>
__device__ __forceinline__ void rap_pair(const mg_stencil &A, unsigned present,
                                         const bool (&child)[3][3], const bool (&parent)[3][3],
                                         int32_t base, int32_t nx, int32_t nxy,
                                         double (&acc)[MG_POINTS])
{
    constexpr int kz = KP / 243 - 1, pz = KP / 81 % 3 - 1, ky = KP / 27 % 3 - 1,
                  py = KP / 9 % 3 - 1, kx = KP / 3 % 3 - 1, px = KP % 3 - 1;
    constexpr int co[3] = {CO & 1, CO >> 1 & 1, CO >> 2 & 1};
    constexpr int p = (px + 1) + 3 * (py + 1) + 9 * (pz + 1);
    if constexpr ((!co[0] && kx) || (!co[1] && ky) || (!co[2] && kz) ||
                  (FACES && (px != 0) + (py != 0) + (pz != 0) > 1)) {
        return;
    } else {
        const bool on = child[0][kx + 1] && child[1][ky + 1] && child[2][kz + 1];
        const double a = __ldg(A.coef[p] + (on ? base + kx + nx * ky + nxy * kz : 0));
        const double v = on && (present >> p & 1) ? a : 0.0;
        /* the parents of fine point 2c + k + dp, direction by direction:
           o = k + dp even, c + o/2; odd, c + (o -+ 1)/2; not coarsened, c + dp */
        constexpr int o[3] = {kx + px, ky + py, kz + pz};
        constexpr bool odd[3] = {co[0] && o[0] % 2 != 0, co[1] && o[1] % 2 != 0,
                                 co[2] && o[2] % 2 != 0};
        constexpr int lo[3] = {!co[0] ? px : odd[0] ? (o[0] - 1) / 2 : o[0] / 2,
                               !co[1] ? py : odd[1] ? (o[1] - 1) / 2 : o[1] / 2,
                               !co[2] ? pz : odd[2] ? (o[2] - 1) / 2 : o[2] / 2};
        constexpr int m = (co[0] ? (kx != 0) + odd[0] : 0) + (co[1] ? (ky != 0) + odd[1] : 0) +
                          (co[2] ? (kz != 0) + odd[2] : 0);
#pragma unroll
        for (int z = 0; z <= (int)odd[2]; z++)
#pragma unroll
            for (int y = 0; y <= (int)odd[1]; y++)
#pragma unroll
                for (int x = 0; x <= (int)odd[0]; x++) {
                    const int q = (lo[0] + x + 1) + 3 * (lo[1] + y + 1) + 9 * (lo[2] + z + 1);
                    if (parent[0][lo[0] + x + 1] && parent[1][lo[1] + y + 1] &&
                        parent[2][lo[2] + z + 1])
                        acc[q] = mg_add_mul(acc[q], v, mg_half_pow(m));
                }
    }
}

template <int CO, bool FACES, int... KP>
__device__ __forceinline__ void rap_row(const mg_stencil &A, unsigned present,
                                        const bool (&child)[3][3], const bool (&parent)[3][3],
                                        int32_t base, int32_t nx, int32_t nxy,
                                        double (&acc)[MG_POINTS], std::integer_sequence<int, KP...>)
{
    (rap_pair<CO, FACES, KP>(A, present, child, parent, base, nx, nxy, acc), ...);
}

/* C = R A P, a coarse row per thread, the directions coarsened CO (a bit
 * each), A's points only among the centre and its 6 faces where FACES
 * (the 7-point finest level's product: 189 loads a row, not 729):
 * the host's row, each (child, point) value loaded once and added into
 * the sums of the parents it reaches (rap_pair), 27 sums in registers, so
 * each q gets the host's terms in the host's order: its bits.  A term of
 * a child off the grid or a point absent adds +0 (acc is never -0) from a
 * load that cannot fault (A's absent points point at the diagonal), a
 * parent off the coarse grid nothing: no branch separates the loads.
 * (Gathering each (row, q) apart loaded a value once per q it reaches:
 * 4x the loads, 1.2-1.5x slower than a row's scatter through shared
 * memory; Nsight Compute, H200 2026-11-28.) */
template <int CO, bool FACES>
__global__ void __launch_bounds__(GALERKIN_THREADS)
galerkin_kernel(mg_stencil A, unsigned present, coarse_dims cd, mg_stencil C, unsigned *mask)
{
    const int32_t nx = A.n[0], nxy = nx * A.n[1];   /* a level's rows < 2^31 */
    const uint32_t cnx = (uint32_t)cd.nc[0], cny = (uint32_t)cd.nc[1];
    unsigned my_mask = 0;
    for (int64_t I = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; I < C.rows;
         I += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t u = (uint32_t)I;
        const int32_t ci[3] = {(int32_t)(u % cnx), (int32_t)(u / cnx % cny),
                               (int32_t)(u / (cnx * cny))};
        bool child[3][3], parent[3][3];   /* [d][k + 1]: slot k on the fine grid, c + k on
                                             the coarse */
        int32_t f0[3];
#pragma unroll
        for (int d = 0; d < 3; d++) {
            const bool co = CO >> d & 1;
            f0[d] = co ? 2 * ci[d] : ci[d];
#pragma unroll
            for (int k = -1; k <= 1; k++) {
                child[d][k + 1] = (co || k == 0) && f0[d] + k >= 0 && f0[d] + k < A.n[d];
                parent[d][k + 1] = ci[d] + k >= 0 && ci[d] + k < cd.nc[d];
            }
        }
        double acc[MG_POINTS];
#pragma unroll
        for (int q = 0; q < MG_POINTS; q++) acc[q] = 0;
        rap_row<CO, FACES>(A, present, child, parent, f0[0] + nx * f0[1] + nxy * f0[2], nx, nxy,
                           acc, std::make_integer_sequence<int, 729>());
#pragma unroll
        for (int q = 0; q < MG_POINTS; q++) {
            C.coef[q][I] = acc[q];
            if (acc[q] != 0) my_mask |= 1u << q;
        }
    }
    my_mask = warp_or(my_mask);
    if (threadIdx.x % 32 == 0 && my_mask) atomicOr(mask, my_mask);
}

/* The kernel of the directions coarsened and of A's points. */
template <int... CO>
void galerkin_launch(int co, bool faces, unsigned grid, const mg_stencil &A, unsigned present,
                     const coarse_dims &cd, const mg_stencil &C, unsigned *mask,
                     std::integer_sequence<int, CO...>)
{
    ((co == CO ? faces ? (void)galerkin_kernel<CO, true>
                             <<<grid, GALERKIN_THREADS>>>(A, present, cd, C, mask)
                       : (void)galerkin_kernel<CO, false>
                             <<<grid, GALERKIN_THREADS>>>(A, present, cd, C, mask)
               : (void)0),
     ...);
}

/* The couplings (mg_row_coupling) summed as integers: a warp's sums by
 * shuffles, then one atomic add per warp -- any order gives the host's
 * numbers. */
__global__ void coupling_kernel(mg_stencil S, int64_t r0, int64_t r1, unsigned long long *sum)
{
    uint64_t c[3] = {0, 0, 0};
    for (int64_t i = r0 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < r1;
         i += (int64_t)gridDim.x * blockDim.x)
        mg_row_coupling(&S, i, c);
    for (int e = 0; e < 3; e++) {
        unsigned long long v = c[e];
        for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (threadIdx.x % 32 == 0 && v) atomicAdd(sum + e, v);
    }
}

template <typename T>
__global__ void to_dia_kernel(mg_stencil S, mg_dia_map m, T *values)
{
    const grid3 g = {{(uint32_t)S.n[0], (uint32_t)S.n[1], (uint32_t)S.n[2]}};
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < S.rows;
         i += (int64_t)gridDim.x * blockDim.x) {
        int c[3];
        coords_of(g, (uint32_t)i, c);
        for (int k = 0; k < m.ndiag; k++) {
            double v = 0;
            for (int e = m.first[k]; e < m.first[k + 1]; e++) {
                const int p = m.pt[e];
                bool in = true;
                for (int d = 0; d < 3; d++) {
                    const int x = c[d] + mg_dx(p, d);
                    in = in && x >= 0 && x < S.n[d];
                }
                if (in) v = S.coef[p][i];
            }
            values[(int64_t)k * S.rows + i] = (T)v;
        }
    }
}

/* A stencil's present points, ascending (the host's order of addition):
 * each one's array, row offset and moves; the power step walks these
 * alone, and skips the grid-edge tests on rows inside the grid -- the
 * 27-point walk with a test per point and direction held the step
 * compute-bound: 839 us a step on lap3d7:256 (SM 76%, DRAM 26%; ncu,
 * H200, 2026-11-27). */
struct point_list {
    int count;
    const double *coef[MG_POINTS];
    int64_t off[MG_POINTS];
    int8_t dx[MG_POINTS][3];
};

point_list points_of(const mg_stencil &S)
{
    point_list L = {};
    for (int p = 0; p < MG_POINTS; p++) {
        if (!S.coef[p]) continue;
        L.coef[L.count] = S.coef[p];
        for (int d = 0; d < 3; d++) L.dx[L.count][d] = (int8_t)mg_dx(p, d);
        L.off[L.count++] = mg_dx(p, 0) + (int64_t)S.n[0] * (mg_dx(p, 1) + (int64_t)S.n[1] * mg_dx(p, 2));
    }
    return L;
}

/* The start of the power steps: u = mg_checker_value (checker) or
 * mg_start_value of the global row origin + i on a grid nx x ny x any,
 * *sc = 1 (each value made once, not again for every neighbour that reads
 * it in the first step).  Skipped once *stop is set: the finest level's
 * restart from the hash, queued behind its checkerboard's steps, runs
 * only where they were not certified. */
__global__ void start_kernel(double *u, int64_t rows, int64_t origin, int32_t nx, int32_t ny,
                             int checker, const int *stop, double *sc)
{
    if (*stop) return;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows;
         i += (int64_t)gridDim.x * blockDim.x)
        u[i] = checker ? mg_checker_value(origin + i, nx, ny) : mg_start_value(origin + i);
    if (blockIdx.x == 0 && threadIdx.x == 0) *sc = 1;
}

/* Gershgorin's bound over rows [r0, r1) into *g, the bits of a double
 * (zeroed before): non-negative doubles order as their bits do, so the
 * largest is an integer max (atomicMax; ~min of ~bits within a warp) --
 * exact in any order, the host's fmax over the same mg_row_gershgorin. */
__global__ void gershgorin_kernel(mg_stencil S, int64_t r0, int64_t r1, unsigned long long *g)
{
    double m = 0;
    for (int64_t i = r0 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < r1;
         i += (int64_t)gridDim.x * blockDim.x)
        m = fmax(m, mg_row_gershgorin(&S, i));
    const unsigned long long b = ~warp_min(~(unsigned long long)__double_as_longlong(m));
    if (threadIdx.x % 32 == 0 && b) atomicMax(g, b);
}

/* One power step, v = scale u (scale: *sc): w = A v, block partials of
 * v'w, v'Dv and (w/D)'(w/D) over rows [r0, r1) (a slab's own; all of a
 * whole grid's), and u_next = w / D on every row.  Skipped once *stop is
 * set: every block leaves at once (the finest level's steps queued after
 * its certificate took 11 us each with their block sums; ncu, H200). */
__global__ void power_kernel(mg_stencil S, point_list P, const double *u, double *un,
                             const double *sc, const int *stop, int64_t r0, int64_t r1,
                             double *partial)
{
    __shared__ double red[3][THREADS];
    if (*stop) return;   /* the same for the whole block: no barrier is left waiting */
    double s[3] = {0, 0, 0};
    const grid3 g = {{(uint32_t)S.n[0], (uint32_t)S.n[1], (uint32_t)S.n[2]}};
    const double scale = *sc;
    const double *diag = S.coef[mg_point(0, 0, 0)];
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < S.rows;
         i += (int64_t)gridDim.x * blockDim.x) {
        int c[3];
        coords_of(g, (uint32_t)i, c);
        bool inner = true;   /* every neighbour on the grid */
        for (int d = 0; d < 3; d++) inner = inner && c[d] >= 1 && c[d] <= S.n[d] - 2;
        double w = 0;
        for (int k = 0; k < P.count; k++) {
            if (!inner) {
                bool in = true;
                for (int d = 0; d < 3; d++) {
                    const int x = c[d] + P.dx[k][d];
                    in = in && x >= 0 && x < S.n[d];
                }
                if (!in) continue;
            }
            const int64_t j = i + P.off[k];
            /* v_j = scale u_j as the host's v = scale w; a + b c as its loop rounds */
            w = mg_add_mul(w, P.coef[k][i], scale * u[j]);
        }
        const double vi = scale * u[i];
        const double di = diag[i];
        const bool own = i >= r0 && i < r1;
        if (own) s[0] += vi * w;
        if (own) s[1] += vi * di * vi;
        w /= di;
        if (own) s[2] += w * w;
        un[i] = w;
    }
    for (int k = 0; k < 3; k++) red[k][threadIdx.x] = s[k];
    __syncthreads();
    for (int h = THREADS / 2; h > 0; h /= 2) {   /* a fixed tree: deterministic */
        if ((int)threadIdx.x < h)
            for (int k = 0; k < 3; k++) red[k][threadIdx.x] += red[k][threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int k = 0; k < 3; k++) partial[3 * blockIdx.x + k] = red[k][0];
}

/* One block: the step's sums from the partials in a fixed order; sums
 * NULL: the estimate v'Av / v'Dv into *est, a step counted in *count, the
 * next scale 1 / sqrt(ww), or *stop where the host's steps end -- ww not
 * positive and finite, or the estimate certified by *bound (0: none);
 * else the three sums into sums (a slab's, to be added over the
 * processes). */
__global__ void power_finish(const double *partial, int nb, double *est, double *sc, int *stop,
                             const double *bound, double *count, double *sums)
{
    __shared__ double red[3][THREADS];
    if (*stop) return;
    for (int k = 0; k < 3; k++) {
        double t = 0;
        for (int b = threadIdx.x; b < nb; b += THREADS) t += partial[3 * b + k];
        red[k][threadIdx.x] = t;
    }
    __syncthreads();
    for (int h = THREADS / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h)
            for (int k = 0; k < 3; k++) red[k][threadIdx.x] += red[k][threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0 && sums) {
        for (int k = 0; k < 3; k++) sums[k] = red[k][0];
    } else if (threadIdx.x == 0) {
        *est = red[0][0] / red[1][0];
        *count += 1;
        const double ww = red[2][0];
        if (!(ww > 0) || !isfinite(ww) || mg_certified(*est, *bound)) *stop = 1;
        else *sc = 1 / sqrt(ww);
    }
}

template <typename T>
__global__ void scaling_kernel(mg_stencil S, int kind, double omega, T *s)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < S.rows;
         i += (int64_t)gridDim.x * blockDim.x) {
        double v;
        if (kind == MG_L1JACOBI) {
            double sum = 0;
            for (int p = 0; p < MG_POINTS; p++) sum += S.coef[p] ? fabs(S.coef[p][i]) : 0;
            v = 1 / sum;
        } else {
            v = (kind == MG_JACOBI ? omega : 1.0) / S.coef[mg_point(0, 0, 0)][i];
        }
        s[i] = (T)v;
    }
}

grid3 grid_of(const int32_t n[3])
{
    return grid3{{(uint32_t)n[0], (uint32_t)n[1], (uint32_t)n[2]}};
}

adia_status launched(const char *what)
{
    return adia_cuda_check(cudaGetLastError(), what);
}

adia_status alloc_doubles(int64_t n, double **out, const char *what)
{
    *out = nullptr;
    ADIA_TRY(adia__gpu_check_free(n * 8, what));
    return adia_cuda_check(cudaMalloc((void **)out, (size_t)(n > 0 ? n : 1) * 8), what);
}

/* The device words w[0..3) set to h before a pass: w[0] bad row, w[1]
 * bad diagonal, w[2] mask (the view's), or sums (a stencil's).  Words
 * that live for the whole set-up, not a scratch a pass: a small cudaMalloc
 * + cudaFree costs 84 us where no other small allocation is alive (5 us
 * where one is; H200, 2026-11-28), the case of a large plan whose blocks
 * are past the driver's small pages -- lap3d7:256's first passes each paid
 * it. */
adia_status words_set(unsigned long long *w, unsigned long long h0, unsigned long long h1,
                      unsigned long long h2, const char *what)
{
    const unsigned long long h[3] = {h0, h1, h2};
    return adia_cuda_check(cudaMemcpy(w, h, sizeof h, cudaMemcpyHostToDevice), what);
}

adia_status read_pass(const mg_dview *v, const int32_t n[3], int write, const mg_stencil *S,
                      int64_t *bad, unsigned *mask, int64_t *bad_diag)
{
    unsigned long long *w = v->words;
    ADIA_TRY(words_set(w, ~0ull, ~0ull, 0, "mg set-up: reading the fine operator"));
    const adia_diag_args &a = *args_of(v);
    const mg_stencil none = {};
    const mg_stencil &St = S ? *S : none;
    unsigned *m = (unsigned *)(w + 2);
    const unsigned nb = blocks_for(v->rows);
    const grid3 g = grid_of(n);
    if (v->vt == ADIA_FLOAT && write)
        read_kernel<float, true><<<nb, THREADS>>>(a, g, St, w, m, w + 1);
    else if (v->vt == ADIA_FLOAT)
        read_kernel<float, false><<<nb, THREADS>>>(a, g, St, w, m, w + 1);
    else if (write)
        read_kernel<double, true><<<nb, THREADS>>>(a, g, St, w, m, w + 1);
    else
        read_kernel<double, false><<<nb, THREADS>>>(a, g, St, w, m, w + 1);
    ADIA_TRY(launched("mg set-up: reading the fine operator"));
    unsigned long long h[3];
    ADIA_TRY(adia_cuda_check(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost),
                             "mg set-up: reading the fine operator"));
    *bad = h[0] == ~0ull ? v->rows : (int64_t)h[0];
    if (bad_diag) *bad_diag = h[1] == ~0ull ? v->rows : (int64_t)h[1];
    *mask = (unsigned)h[2];
    return ADIA_OK;
}

}  // namespace

extern "C" {

adia_status adia__mg_gpu_view(adia_plan *plan, mg_dview *v, char *why, size_t len)
{
    memset(v, 0, sizeof *v);
    adia_format *F = adia_plan_format(plan);
    /* the structure only: the values stay on the device (adia__format_diag
     * would download a device-built plan's, 0.2-0.8 s at 4-17 M rows) */
    const adia_diag *D = F ? adia__format_diag_structure(F) : nullptr;
    const adia_diag_args *h = F ? adia__gpu_diag_args(F) : nullptr;
    const char *reason = nullptr;
    if (!D) reason = "its format is not a diagonal one";
    else if (D->n_scatter) reason = "its format keeps scatter points apart";
    else if (!h || h->rows != D->rows || h->cols != D->cols || h->n_pieces != D->n_pieces ||
             !h->data)
        reason = "its device storage is not uploaded as the reader expects";
    if (reason) {
        snprintf(why, len, "the plan (%s) cannot be read on the device: %s",
                 adia_plan_format_name(plan), reason);
        return ADIA_ERR_UNSUPPORTED;
    }
    v->dev = h;
    v->vt = F->vtype;
    v->rows = D->rows;
    v->cols = D->cols;
    v->noff = D->group_start[D->n_groups];
    v->offsets = D->offsets;
    v->n_pieces = D->n_pieces;
    v->data0 = D->piece_data[0];
    double *words = nullptr;
    adia_status s = alloc_doubles(3, &words, "mg set-up: scratch");
    v->words = (unsigned long long *)words;
    return s;
}

void adia__mg_gpu_view_free(mg_dview *v)
{
    cudaFree(v->words);
    v->words = nullptr;
}

adia_status adia__mg_gpu_check(const mg_dview *v, const int32_t n[3], int64_t *bad,
                               unsigned *mask)
{
    return read_pass(v, n, 0, nullptr, bad, mask, nullptr);
}

adia_status adia__mg_gpu_bad_entry(const mg_dview *v, const int32_t n[3], int64_t i, int64_t *j,
                                   double *val)
{
    double *d = (double *)v->words, h[2] = {-1, 0};
    if (v->vt == ADIA_FLOAT) bad_entry_kernel<float><<<1, 1>>>(*args_of(v), grid_of(n), (int)i, d);
    else bad_entry_kernel<double><<<1, 1>>>(*args_of(v), grid_of(n), (int)i, d);
    adia_status s = launched("mg set-up: the bad entry");
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost),
                            "mg set-up: the bad entry");
    *j = (int64_t)h[0];
    *val = h[1];
    return s;
}

void adia__mg_gpu_stencil_free(mg_stencil *S)
{
    cudaFree(S->block);
    S->block = nullptr;
    for (int p = 0; p < MG_POINTS; p++) S->coef[p] = nullptr;
}

/* A device stencil's block starts with STENCIL_WORDS words for results
 * that cross to the host -- [0] its points with a nonzero (the Galerkin
 * product's), [0..3) its couplings' sums -- so that no scratch allocation
 * (a cudaMalloc, a copy, a cudaFree that waits) is made for them; a lent
 * stencil's block is these words alone.  (Its couplings summed in its
 * DIA pass, to_dia_kernel, cost that pass more than the coupling kernel
 * they saved: lap3d7:256 +0.36 ms; H200, 2026-11-28.) */
constexpr int64_t STENCIL_WORDS = 4;

static unsigned long long *words_of(const mg_stencil *S)
{
    return (unsigned long long *)S->block;
}

/* Arrays for the points in mask (the centre always), rows each, after the
 * words, in one allocation (a level's set-up is a handful of cudaMalloc,
 * not 27). */
static adia_status stencil_alloc(mg_stencil *S, const int32_t n[3], unsigned mask)
{
    *S = mg_stencil{{n[0], n[1], n[2]}, (int64_t)n[0] * n[1] * n[2], {}, nullptr};
    mask |= 1u << mg_point(0, 0, 0);
    int np = 0;
    for (int p = 0; p < MG_POINTS; p++) np += mask >> p & 1;
    double *block = nullptr;
    ADIA_TRY(alloc_doubles(STENCIL_WORDS + S->rows * np, &block, "mg device stencil"));
    S->block = block;
    for (int p = 0, k = 0; p < MG_POINTS; p++)
        if (mask >> p & 1) S->coef[p] = block + STENCIL_WORDS + (int64_t)k++ * S->rows;
    return ADIA_OK;
}

/* The plan's diagonals as the stencil's arrays, when v is double DIA (one
 * piece) and each stored offset is the offset of exactly one point possible
 * on grid n (the centre's among them): diagonal k is point p's array, its
 * slots outside the grid zero (the check pass found no nonzero there, and
 * the kernels never read them).  0: not so (the copy is made). */
static int lend_diagonals(const mg_dview *v, const int32_t n[3], unsigned mask, mg_stencil *S)
{
    if (v->vt != ADIA_DOUBLE || v->n_pieces != 1 || v->noff > MG_POINTS) return 0;
    const double *data = (const double *)args_of(v)->data + v->data0;
    mg_stencil L = {{n[0], n[1], n[2]}, (int64_t)n[0] * n[1] * n[2], {}, nullptr};
    for (int k = 0; k < v->noff; k++) {
        int found = -1, count = 0;
        for (int p = 0; p < MG_POINTS; p++) {
            int possible = 1;
            for (int d = 0; d < 3; d++) possible &= mg_dx(p, d) == 0 || n[d] > 1;
            const int64_t o = mg_dx(p, 0) + (int64_t)n[0] * (mg_dx(p, 1) + (int64_t)n[1] *
                                                                               mg_dx(p, 2));
            if (possible && o == v->offsets[k]) found = p, count++;
        }
        if (count != 1) return 0;
        if (mask >> found & 1 || found == mg_point(0, 0, 0))
            L.coef[found] = const_cast<double *>(data) + (int64_t)k * L.rows;
    }
    if (!L.coef[mg_point(0, 0, 0)]) return 0;
    L.lent = 1;
    *S = L;
    return 1;
}

/* The first row whose diagonal entry d[i] is zero or not finite. */
static __global__ void diagonal_kernel(const double *d, int64_t rows, unsigned long long *bad)
{
    unsigned long long mine = ~0ull;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows;
         i += (int64_t)gridDim.x * blockDim.x)
        if ((d[i] == 0 || !isfinite(d[i])) && (unsigned long long)i < mine) mine = i;
    mine = warp_min(mine);
    if (threadIdx.x % 32 == 0 && mine != ~0ull) atomicMin(bad, mine);
}

static adia_status check_diagonal(const mg_dview *v, const mg_stencil *S, int64_t *bad_diag)
{
    ADIA_TRY(words_set(v->words, ~0ull, ~0ull, 0, "mg set-up: the diagonal"));
    diagonal_kernel<<<blocks_for(S->rows), THREADS>>>(S->coef[mg_point(0, 0, 0)], S->rows,
                                                      v->words + 1);
    ADIA_TRY(launched("mg set-up: the diagonal"));
    unsigned long long h;
    ADIA_TRY(adia_cuda_check(cudaMemcpy(&h, v->words + 1, sizeof h, cudaMemcpyDeviceToHost),
                             "mg set-up: the diagonal"));
    *bad_diag = h == ~0ull ? S->rows : (int64_t)h;
    return ADIA_OK;
}

adia_status adia__mg_gpu_stencil(const mg_dview *v, const int32_t n[3], unsigned mask,
                                 mg_stencil *S, int64_t *bad_diag, double *dval)
{
    adia_status s;
    if (lend_diagonals(v, n, mask, S)) {
        double *words = nullptr;
        s = alloc_doubles(STENCIL_WORDS, &words, "mg device stencil");
        S->block = words;
        if (s == ADIA_OK) s = check_diagonal(v, S, bad_diag);
    } else {
        ADIA_TRY(stencil_alloc(S, n, mask));
        int64_t bad;
        unsigned m;
        s = read_pass(v, n, 1, S, &bad, &m, bad_diag);
    }
    *dval = 0;
    if (s == ADIA_OK && *bad_diag < S->rows)
        s = adia_cuda_check(cudaMemcpy(dval, S->coef[mg_point(0, 0, 0)] + *bad_diag, 8,
                                       cudaMemcpyDeviceToHost), "mg set-up: the diagonal");
    if (s != ADIA_OK) adia__mg_gpu_stencil_free(S);
    return s;
}

adia_status adia__mg_gpu_coupling(const mg_stencil *S, uint64_t c[3])
{
    return adia__mg_gpu_coupling_rows(S, 0, S->rows, c);
}

adia_status adia__mg_gpu_coupling_rows(const mg_stencil *S, int64_t r0, int64_t r1, uint64_t c[3])
{
    unsigned long long *w = words_of(S);   /* [0..3): the sums */
    ADIA_TRY(words_set(w, 0, 0, 0, "mg set-up: the couplings"));
    coupling_kernel<<<blocks_for(r1 - r0), THREADS>>>(*S, r0, r1, w);
    ADIA_TRY(launched("mg set-up: the couplings"));
    unsigned long long h[3];
    ADIA_TRY(adia_cuda_check(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost),
                             "mg set-up: the couplings"));
    for (int e = 0; e < 3; e++) c[e] = h[e];
    return ADIA_OK;
}

adia_status adia__mg_gpu_galerkin(const mg_stencil *A, const int32_t nc[3],
                                  const int coarsened[3], mg_stencil *C)
{
    ADIA_TRY(stencil_alloc(C, nc, ~0u >> (32 - MG_POINTS)));
    coarse_dims cd;
    int co = 0;
    for (int d = 0; d < 3; d++) {
        cd.nc[d] = nc[d], cd.coarsened[d] = coarsened[d];
        co |= (coarsened[d] != 0) << d;
    }
    mg_stencil a = *A;   /* the absent points at the diagonal: loads that cannot fault */
    unsigned present = 0;
    bool faces = true;
    for (int p = 0; p < MG_POINTS; p++) {
        present |= (unsigned)(A->coef[p] != nullptr) << p;
        faces = faces && (!A->coef[p] ||
                          (mg_dx(p, 0) != 0) + (mg_dx(p, 1) != 0) + (mg_dx(p, 2) != 0) <= 1);
        if (!a.coef[p]) a.coef[p] = A->coef[mg_point(0, 0, 0)];
    }
    unsigned *d_mask = (unsigned *)words_of(C);
    adia_status s = adia_cuda_check(cudaMemsetAsync(d_mask, 0, sizeof *d_mask), "mg set-up: the "
                                    "Galerkin product");
    unsigned mask = 0;
    if (s == ADIA_OK && co == 0)   /* adia__mg_coarsen_more: a direction halves */
        s = adia__error(ADIA_ERR_INTERNAL, "mg set-up: a Galerkin product with no direction "
                        "coarsened");
    if (s == ADIA_OK) {
        const int64_t nb = (C->rows + GALERKIN_THREADS - 1) / GALERKIN_THREADS;
        galerkin_launch(co, faces,
                        (unsigned)std::min<int64_t>(std::max<int64_t>(nb, 1), GALERKIN_BLOCKS), a,
                        present, cd, *C, d_mask,
                        std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7>());
        s = launched("mg set-up: the Galerkin product");
    }
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(&mask, d_mask, sizeof mask, cudaMemcpyDeviceToHost),
                            "mg set-up: the Galerkin product");
    if (s != ADIA_OK) {
        adia__mg_gpu_stencil_free(C);
        return s;
    }
    for (int p = 0; p < MG_POINTS; p++)   /* the host's rule: drop the points zero everywhere
                                             (their rows stay in the block until it is freed) */
        if (!(mask >> p & 1) && p != mg_point(0, 0, 0)) C->coef[p] = nullptr;
    return ADIA_OK;
}

adia_status adia__mg_gpu_to_dia(const mg_stencil *S, adia_value_type vt, int64_t *offsets,
                                int *ndiag, void **values)
{
    mg_dia_map m;
    adia__mg_dia_layout(S, offsets, &m);
    *ndiag = m.ndiag;
    *values = nullptr;
    const int64_t n = S->rows * m.ndiag;
    const size_t vs = adia_value_size(vt);
    ADIA_TRY(adia__gpu_check_free(n * (int64_t)vs, "mg level diagonals"));
    ADIA_TRY(adia_cuda_check(cudaMalloc(values, (size_t)(n > 0 ? n : 1) * vs),
                             "mg level diagonals"));
    if (vt == ADIA_FLOAT)
        to_dia_kernel<float><<<blocks_for(S->rows), THREADS>>>(*S, m, (float *)*values);
    else
        to_dia_kernel<double><<<blocks_for(S->rows), THREADS>>>(*S, m, (double *)*values);
    adia_status s = launched("mg set-up: a level's diagonals");
    if (s != ADIA_OK) {
        cudaFree(*values);
        *values = nullptr;
    }
    return s;
}

/* The power steps' arrays: the vector and its successor, the blocks'
 * partials and `extra` words after them (zeroed), the stop flag (in a
 * double's room) -- one allocation of its own, or a part of one that
 * holds every level's (adia__mg_gpu_estimate's, freed there). */
struct power_work {
    double *u = nullptr, *un = nullptr, *w = nullptr;
    int *stop = nullptr;
    double *own = nullptr;   /* the allocation, where it is this work's own */
    ~power_work() { cudaFree(own); }
    /* doubles of one level's work */
    static int64_t size(int64_t rows, unsigned nb, int extra)
    {
        return 2 * (rows > 0 ? rows : 1) + 3 * (int64_t)nb + extra + 1;
    }
    /* the arrays at block (size() doubles), their zeros queued on st,
     * where the steps run (a non-blocking stream does not wait for the
     * legacy stream's memsets) */
    adia_status place(double *block, int64_t rows, unsigned nb, int extra, cudaStream_t st)
    {
        const char *what = "mg eigenvalue estimate";
        const int64_t r = rows > 0 ? rows : 1;
        u = block;
        un = u + r;
        w = un + r;
        stop = (int *)(w + 3 * (int64_t)nb + extra);
        ADIA_TRY(adia_cuda_check(cudaMemsetAsync(stop, 0, sizeof *stop, st), what));
        return adia_cuda_check(cudaMemsetAsync(w, 0, (3 * (size_t)nb + extra) * 8, st), what);
    }
    adia_status init(int64_t rows, unsigned nb, int extra, cudaStream_t st = 0)
    {
        ADIA_TRY(alloc_doubles(size(rows, nb, extra), &own, "mg eigenvalue estimate"));
        return place(own, rows, nb, extra, st);
    }
    void swap()
    {
        double *t = u;
        u = un, un = t;
    }
};

/* A level's extra words after the partials: the estimate, the scale,
 * the bound (the bits of a double, gershgorin_kernel's), the steps; a
 * slab's sums after them. */
enum { W_EST, W_SCALE, W_BOUND, W_STEPS, W_SUMS, W_WORDS = W_SUMS + 3 };

/* Gershgorin's bound of rows [r0, r1) into w[W_BOUND], queued on st. */
static adia_status queue_bound(const mg_stencil *S, int64_t r0, int64_t r1, double *w,
                               cudaStream_t st)
{
    gershgorin_kernel<<<blocks_for(r1 - r0), THREADS, 0, st>>>(
        *S, r0, r1, (unsigned long long *)(w + W_BOUND));
    return launched("mg set-up: the Gershgorin bound");
}

/* The start of a level's steps (checker: the checkerboard), queued on st. */
static adia_status queue_start(const mg_stencil *S, int64_t origin, int checker,
                               const power_work &p, unsigned nb, double *w, cudaStream_t st)
{
    start_kernel<<<nb, THREADS, 0, st>>>(p.u, S->rows, origin, S->n[0], S->n[1], checker, p.stop,
                                         w + W_SCALE);
    return launched("mg set-up: the power steps' start");
}

/* Every level's estimate at once, each chain of power steps on a stream
 * of its own: the levels' chains are independent, and one after another
 * the small levels' steps (a few microseconds of work each, launch and
 * finish bound) took most of the 11.2 ms of lap3d7:256's estimates (H200,
 * 2026-11-27).  The same kernels and sums, so the same estimates.  The
 * finest level's (fine) checkerboard steps, restart and hash steps are
 * all queued: a certificate sets its stop flag and the rest skip, so the
 * early stop costs no wait for the host. */
adia_status adia__mg_gpu_estimate(const mg_stencil *S, int n, int fine, mg_estimate *est)
{
    struct job {
        power_work p;   /* placed in `block` */
        cudaStream_t st = nullptr;
        unsigned nb = 0;
        int checker = 0;   /* the checkerboard's steps first (the finest level) */
        double out[W_SUMS] = {};
        double *w() const { return p.w + 3 * nb; }
        ~job() { if (st) cudaStreamDestroy(st); }
    };
    /* the levels' stencils were written on the legacy stream, which the
     * jobs' non-blocking streams do not wait for */
    ADIA_TRY(adia__gpu_fence("mg eigenvalue estimate"));
    std::vector<job> jobs(n > 0 ? n : 0);
    /* every level's work in one allocation: four cudaMalloc and four
     * cudaFree a level (each free a wait for the device) are gone */
    int64_t total = 0;
    for (int l = 0; l < n; l++) total += power_work::size(S[l].rows, blocks_for(S[l].rows), W_SUMS);
    double *block = nullptr;
    adia_status s = alloc_doubles(total, &block, "mg eigenvalue estimate");
    int64_t at = 0;
    for (int l = 0; l < n && s == ADIA_OK; l++) {
        job &j = jobs[l];
        j.nb = blocks_for(S[l].rows);
        j.checker = fine && l == 0 ? MG_CHECKER_STEPS : 0;
        s = adia_cuda_check(cudaStreamCreateWithFlags(&j.st, cudaStreamNonBlocking),
                            "mg eigenvalue estimate");
        if (s == ADIA_OK) s = j.p.place(block + at, S[l].rows, j.nb, W_SUMS, j.st);
        at += power_work::size(S[l].rows, j.nb, W_SUMS);
        if (s == ADIA_OK && j.checker) s = queue_bound(&S[l], 0, S[l].rows, j.w(), j.st);
        if (s == ADIA_OK) s = queue_start(&S[l], 0, j.checker > 0, j.p, j.nb, j.w(), j.st);
    }
    for (int k = 0; s == ADIA_OK && k < MG_CHECKER_STEPS + MG_POWER_STEPS; k++)
        for (int l = 0; l < n && s == ADIA_OK; l++) {
            job &j = jobs[l];
            if (k >= j.checker + MG_POWER_STEPS) continue;
            if (j.checker && k == j.checker &&   /* the hash's, unless certified */
                (s = queue_start(&S[l], 0, 0, j.p, j.nb, j.w(), j.st)) != ADIA_OK)
                break;
            double *w = j.w();
            power_kernel<<<j.nb, THREADS, 0, j.st>>>(S[l], points_of(S[l]), j.p.u, j.p.un,
                                                     w + W_SCALE, j.p.stop, 0, S[l].rows, j.p.w);
            power_finish<<<1, THREADS, 0, j.st>>>(j.p.w, (int)j.nb, w + W_EST, w + W_SCALE,
                                                  j.p.stop, w + W_BOUND, w + W_STEPS, nullptr);
            s = launched("mg set-up: a power step");
            j.p.swap();
        }
    for (int l = 0; l < n && s == ADIA_OK; l++)
        s = adia_cuda_check(cudaMemcpyAsync(jobs[l].out, jobs[l].w(), sizeof jobs[l].out,
                                            cudaMemcpyDeviceToHost, jobs[l].st),
                            "mg estimate");
    for (int l = 0; l < n; l++)   /* every stream's work done before its arrays go */
        if (jobs[l].st) {
            const adia_status w = adia_cuda_check(cudaStreamSynchronize(jobs[l].st), "mg estimate");
            if (s == ADIA_OK) s = w;
        }
    for (int l = 0; l < n; l++)
        est[l] = mg_estimate{jobs[l].out[W_EST], jobs[l].out[W_BOUND], (int)jobs[l].out[W_STEPS]};
    cudaFree(block);   /* after every stream's work (synchronised above) */
    return s;
}

/* One power step of a slab (the host's step in mg_smooth.c, its sums on
 * the device): e's quotient and steps, *end where the steps end. */
static adia_status slab_step(const mg_stencil *S, int64_t r0, int64_t r1, const adia_slab_comm *c,
                             int level, power_work &p, unsigned nb, mg_estimate *e, int *end)
{
    double *w = p.w + 3 * nb;
    power_kernel<<<nb, THREADS>>>(*S, points_of(*S), p.u, p.un, w + W_SCALE, p.stop, r0, r1, p.w);
    power_finish<<<1, THREADS>>>(p.w, (int)nb, nullptr, nullptr, p.stop, nullptr, nullptr,
                                 w + W_SUMS);
    double h[3] = {0, 0, 0};
    adia_status s = launched("mg set-up: a power step");
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(h, w + W_SUMS, sizeof h, cudaMemcpyDeviceToHost),
                            "mg estimate");
    ADIA_TRY(c->agree(c->ctx, s));
    c->sum(c->ctx, h, 3);   /* the same on every process: all stop alike */
    e->q = h[0] / h[1];
    e->steps++;
    *end = !(h[2] > 0) || !isfinite(h[2]) || mg_certified(e->q, e->bound);
    if (*end) return ADIA_OK;
    const double sc = 1 / sqrt(h[2]);
    s = adia_cuda_check(cudaMemcpy(w + W_SCALE, &sc, sizeof sc, cudaMemcpyHostToDevice),
                        "mg estimate");
    if ((s = c->agree(c->ctx, s)) == ADIA_OK)   /* the next step reads un's ghost planes */
        s = c->agree(c->ctx, c->exchange(c->ctx, level, p.un, 1, nullptr));
    p.swap();
    return s;
}

adia_status adia__mg_gpu_estimate_slab(const mg_stencil *S, int64_t origin, int64_t r0, int64_t r1,
                                      const adia_slab_comm *c, int level, int fine,
                                      mg_estimate *e)
{
    const unsigned nb = blocks_for(S->rows);
    power_work p;
    adia_status s = c->agree(c->ctx, p.init(S->rows, nb, W_WORDS));
    double *w = p.w + 3 * nb;
    *e = mg_estimate{0, 0, 0};
    if (fine && s == ADIA_OK) {   /* every process's largest (all get the same) */
        s = queue_bound(S, r0, r1, w, 0);
        if (s == ADIA_OK)
            s = adia_cuda_check(cudaMemcpy(&e->bound, w + W_BOUND, 8, cudaMemcpyDeviceToHost),
                                "mg estimate");
        if ((s = c->agree(c->ctx, s)) == ADIA_OK) c->max(c->ctx, &e->bound, 1);
    }
    int end = 0;
    /* the checkerboard's few steps (level 0), then, unless they ended, the hash's */
    for (int checker = fine; checker >= 0 && !end && s == ADIA_OK; checker--) {
        s = c->agree(c->ctx, queue_start(S, origin, checker, p, nb, w, 0));
        const int steps = checker ? MG_CHECKER_STEPS : MG_POWER_STEPS;
        for (int k = 0; k < steps && !end && s == ADIA_OK; k++)
            s = slab_step(S, r0, r1, c, level, p, nb, e, &end);
    }
    return s;
}

adia_status adia__mg_gpu_stencil_zeros(mg_stencil *S, const int32_t n[3], unsigned mask)
{
    ADIA_TRY(stencil_alloc(S, n, mask));
    const int64_t bytes =
        (STENCIL_WORDS + (int64_t)__builtin_popcount(mask | 1u << mg_point(0, 0, 0)) * S->rows) * 8;
    adia_status s = adia_cuda_check(cudaMemset(S->block, 0, (size_t)bytes), "mg device stencil");
    if (s != ADIA_OK) adia__mg_gpu_stencil_free(S);
    return s;
}

adia_status adia__mg_gpu_scaling(const mg_stencil *S, mg_smoother kind, double omega,
                                 adia_value_type vt, void **s)
{
    *s = nullptr;
    const size_t bytes = (size_t)(S->rows > 0 ? S->rows : 1) * adia_value_size(vt);
    ADIA_TRY(adia__gpu_check_free((int64_t)bytes, "mg smoother"));
    ADIA_TRY(adia_cuda_check(cudaMalloc(s, bytes), "mg smoother"));
    if (vt == ADIA_FLOAT)
        scaling_kernel<float><<<blocks_for(S->rows), THREADS>>>(*S, kind, omega, (float *)*s);
    else
        scaling_kernel<double><<<blocks_for(S->rows), THREADS>>>(*S, kind, omega, (double *)*s);
    adia_status st = launched("mg set-up: the smoother's scaling");
    if (st != ADIA_OK) {
        cudaFree(*s);
        *s = nullptr;
    }
    return st;
}

adia_status adia__mg_gpu_download(const mg_stencil *D, mg_stencil *H)
{
    *H = mg_stencil{{D->n[0], D->n[1], D->n[2]}, D->rows, {}, nullptr};
    /* the block up to its last present array in one copy, not one a point
     * (27 copies: 0.33 ms of the coarsest level's set-up) */
    const double *block = D->lent ? nullptr : (const double *)D->block;
    int64_t end = 0;
    for (int p = 0; p < MG_POINTS && block; p++)
        if (D->coef[p]) end = std::max(end, (int64_t)(D->coef[p] - block) + D->rows);
    std::vector<double> all;
    adia_status s = ADIA_OK;
    if (end > 0) {
        try {
            all.resize((size_t)end);
        } catch (...) {
            return adia__error(ADIA_ERR_NO_MEMORY, "mg set-up: a stencil to the host");
        }
        s = adia_cuda_check(cudaMemcpy(all.data(), block, (size_t)end * 8, cudaMemcpyDeviceToHost),
                            "mg set-up: a stencil to the host");
    }
    for (int p = 0; p < MG_POINTS && s == ADIA_OK; p++) {
        if (!D->coef[p]) continue;
        H->coef[p] = (double *)adia__alloc((size_t)D->rows + 1, sizeof(double), "mg stencil");
        if (!H->coef[p]) s = ADIA_ERR_NO_MEMORY;
        else if (end > 0) memcpy(H->coef[p], all.data() + (D->coef[p] - block), (size_t)D->rows * 8);
        else s = adia_cuda_check(cudaMemcpy(H->coef[p], D->coef[p], (size_t)D->rows * 8,
                                            cudaMemcpyDeviceToHost),
                                 "mg set-up: a stencil to the host");
    }
    if (s != ADIA_OK) adia__mg_stencil_free(H);
    return s;
}

}  // extern "C"
