/* spmm.cu -- the GPU numeric phase of the diagonal products.
 *
 * Formulation: output diagonal oc at row i is
 *
 *     C[i][i+oc] = sum over pairs (oa, ob), oa + ob = oc, oa ascending, of
 *                  A[i][i+oa] * B[i+oa][i+oc]
 *
 * a sum of elementwise products of shifted input diagonals; a pair counts
 * at row i only when i lies on A's diagonal oa (then B's row i + oa exists:
 * no product with a padded zero, so Inf/NaN stay where the CPU puts them).
 * Every element is summed by one thread in the CPU's pair order with
 * __dmul_rn/__dadd_rn (no FMA contraction): C equals the CPU HM product
 * bitwise, whichever kernel runs.
 *
 * Two kernels:
 *
 * - tiled (seed 004 section 6.1, extended to B): one block owns T
 *   consecutive rows i0..i0+T-1 of every output diagonal.  It stages A's
 *   rows [i0, i0+T) of every A diagonal and B's rows i0 + oa + [0, T) for
 *   every A offset oa (the windows of nearby offsets merged into a few
 *   segments: a band needs T + 2w rows, a 3D stencil three segments) into
 *   shared memory with coalesced loads, then computes from shared memory
 *   and writes C once, coalesced.  A thread owns one row of a group of
 *   TILE_G consecutive output diagonals and walks the group's "steps":
 *   one step per A diagonal ia (ascending), naming for each diagonal of the
 *   group the B row of its pair with ia (or none).  The A value is read
 *   once per step and used by up to TILE_G accumulators; each accumulator
 *   still sees its own pairs in ascending oa.  Warps read consecutive rows
 *   of one diagonal: no bank conflicts, the step descriptor is a broadcast.
 *   Blocks are persistent (the steps are staged once per block).
 *   Selection: the largest T of 256, 128, 64 whose footprint fits half of
 *   an SM's shared memory (two blocks per SM); otherwise the streaming one.
 *
 * - streaming: one block per SPMM_STREAM_ROWS rows of one output diagonal,
 *   one thread per element, A and B read from global memory per pair (L1/L2
 *   serve the reuse).  The pair descriptors (A's position, B's position,
 *   rows where the pair counts) are staged per block in shared memory, so
 *   a pair costs two data loads.  Used for scattered offsets.
 *
 * adia_spgemm_options.gpu_kernel forces one (tests; tiled fails with
 * ADIA_ERR_UNSUPPORTED when it does not fit).
 */
#include "cuda_util.h"
#include "spmm/spmm_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int STREAM_ROWS = 256;   /* threads (rows) of a streaming block */
constexpr int TILE_THREADS = 512;  /* threads of a tiled block */
constexpr int TILE_G = 7;          /* output diagonals per thread */
constexpr int MAX_SEG = 8;         /* B window segments of the tiled kernel */

/* Rows lo <= i < hi of a diagonal; its value at row i is x[base + i]. */
struct diag_desc {
    long long base;
    int lo, hi;
};

/* Streaming pair: a[a + i] * b[b + i] at rows lo <= i < hi. */
struct pair_desc {
    long long a, b;
    int lo, hi;
};

/* Tiled step: A diagonal ia; b[g] = position in the staged B of the row
 * paired with local row 0 for the group's diagonal g, -1 when it has no
 * pair with ia.  16 bytes: one shared load. */
struct __align__(16) tile_step {
    short ia;
    short b[TILE_G];
};

struct tile_geom {
    int log_t;                 /* T = 1 << log_t */
    int w;                     /* staged rows of each B diagonal */
    int da, db, dc, ngroups, nsteps, nseg;
    int seg_lo[MAX_SEG];       /* segment s: B rows i0 + seg_lo[s] + j ... */
    int seg_start[MAX_SEG];    /* ... at staged positions seg_start[s] + j */
    int oa_min, oa_max;
    long long m, k;
    int accumulate;
};

__device__ __forceinline__ double madd(double s, double a, double b)
{
    return __dadd_rn(s, __dmul_rn(a, b));
}

__global__ void __launch_bounds__(STREAM_ROWS)
spmm_stream_kernel(const long long *__restrict__ tile_ptr, const diag_desc *__restrict__ cdesc,
                   const long long *__restrict__ pair_ptr, const pair_desc *__restrict__ pairs,
                   const double *__restrict__ a, const double *__restrict__ b,
                   double *__restrict__ c, int dc, int accumulate)
{
    __shared__ pair_desc sp[STREAM_ROWS];
    __shared__ int s_d;
    const long long t = blockIdx.x;
    if (threadIdx.x == 0) {                  /* last d with tile_ptr[d] <= t */
        int lo = 0, hi = dc - 1;
        while (lo < hi) {
            int mid = lo + (hi - lo + 1) / 2;
            if (tile_ptr[mid] <= t) lo = mid;
            else hi = mid - 1;
        }
        s_d = lo;
    }
    __syncthreads();
    const int d = s_d;
    const diag_desc cd = cdesc[d];
    const long long i = cd.lo + (t - tile_ptr[d]) * STREAM_ROWS + threadIdx.x;
    const bool active = i < cd.hi;
    double s = accumulate && active ? c[cd.base + i] : 0.0;
    const long long q1 = pair_ptr[d + 1];
    for (long long q0 = pair_ptr[d]; q0 < q1; q0 += STREAM_ROWS) {
        const int cnt = q1 - q0 < STREAM_ROWS ? (int)(q1 - q0) : STREAM_ROWS;
        __syncthreads();                     /* the previous chunk is consumed */
        if ((int)threadIdx.x < cnt) sp[threadIdx.x] = pairs[q0 + threadIdx.x];
        __syncthreads();
        if (!active) continue;
        for (int q = 0; q < cnt; q++) {
            const pair_desc pd = sp[q];
            if (i >= pd.lo && i < pd.hi) s = madd(s, a[pd.a + i], b[pd.b + i]);
        }
    }
    if (active) c[cd.base + i] = s;
}

/* Shared-memory layout of the tiled kernel, in bytes from the start. */
__host__ __device__ inline size_t tile_off_steps(const tile_geom &g)
{
    size_t doubles = ((size_t)g.da << g.log_t) + (size_t)g.db * g.w;
    return (doubles * 8 + 15) / 16 * 16;
}
__host__ __device__ inline size_t tile_smem(const tile_geom &g)
{
    return tile_off_steps(g) + 16 * (size_t)g.nsteps + 8 * (size_t)g.da +
           4 * ((size_t)g.ngroups + 1);
}

/* Stage A's and B's rows of the tile starting at row i0 (seg: the
 * segments' seg_lo then seg_start, in shared memory: a parameter array
 * indexed at run time would be copied to local memory). */
__device__ __forceinline__ void tile_stage(const tile_geom &g, long long i0,
                                           const diag_desc *__restrict__ adesc,
                                           const diag_desc *__restrict__ bdesc,
                                           const double *__restrict__ a,
                                           const double *__restrict__ b, const int *seg,
                                           double *sA, double *sB)
{
    const int na = g.da << g.log_t, tmask = (1 << g.log_t) - 1;
    for (int x = threadIdx.x; x < na; x += blockDim.x) {
        const diag_desc ad = adesc[x >> g.log_t];
        const long long i = i0 + (x & tmask);
        sA[x] = i >= ad.lo && i < ad.hi ? a[ad.base + i] : 0.0;
    }
    const int nb = g.db * g.w;
    for (int x = threadIdx.x; x < nb; x += blockDim.x) {
        const int ib = x / g.w, j = x - ib * g.w;
        int s = 0;
        while (s + 1 < g.nseg && j >= seg[MAX_SEG + s + 1]) s++;
        const diag_desc bd = bdesc[ib];
        const long long l = i0 + seg[s] + (j - seg[MAX_SEG + s]);
        sB[x] = l >= bd.lo && l < bd.hi ? b[bd.base + l] : 0.0;
    }
}

/* Row i0 + r of the group gi's output diagonals. */
template <bool CHECK>
__device__ __forceinline__ void tile_item(const tile_geom &g, long long i0, int gi, int r,
                          const diag_desc *__restrict__ cdesc, const double *sA,
                          const double *sB, const tile_step *sS, const int2 *sR, const int *sP,
                          double *__restrict__ c)
{
    const long long i = i0 + r;
    const int d0 = gi * TILE_G;
    double s[TILE_G];
#pragma unroll
    for (int e = 0; e < TILE_G; e++) {
        s[e] = 0.0;
        if (g.accumulate && d0 + e < g.dc) {
            const diag_desc cd = cdesc[d0 + e];
            if (i >= cd.lo && i < cd.hi) s[e] = c[cd.base + i];
        }
    }
    const int q1 = sP[gi + 1];
    for (int q = sP[gi]; q < q1; q++) {
        const tile_step st = sS[q];
        if (CHECK) {
            const int2 rg = sR[st.ia];
            if (i < rg.x || i >= rg.y) continue;
        }
        const double av = sA[(st.ia << g.log_t) + r];
#pragma unroll
        for (int e = 0; e < TILE_G; e++)
            if (st.b[e] >= 0) s[e] = madd(s[e], av, sB[st.b[e] + r]);
    }
#pragma unroll
    for (int e = 0; e < TILE_G; e++) {
        if (d0 + e >= g.dc) break;
        const diag_desc cd = cdesc[d0 + e];
        if (i >= cd.lo && i < cd.hi) c[cd.base + i] = s[e];
    }
}

__global__ void __launch_bounds__(TILE_THREADS, 2)
spmm_tiled_kernel(tile_geom g, const diag_desc *__restrict__ adesc,
                  const diag_desc *__restrict__ bdesc, const diag_desc *__restrict__ cdesc,
                  const int *__restrict__ step_ptr, const tile_step *__restrict__ steps,
                  const double *__restrict__ a, const double *__restrict__ b,
                  double *__restrict__ c, long long ntiles)
{
    extern __shared__ __align__(16) unsigned char smem[];
    double *sA = (double *)smem;
    double *sB = sA + ((size_t)g.da << g.log_t);
    tile_step *sS = (tile_step *)(smem + tile_off_steps(g));
    int2 *sR = (int2 *)(sS + g.nsteps);          /* rows of each A diagonal */
    int *sP = (int *)(sR + g.da);                /* step_ptr */
    __shared__ int seg[2 * MAX_SEG];
    if (threadIdx.x == 0) {
#pragma unroll
        for (int x = 0; x < MAX_SEG; x++) {
            seg[x] = g.seg_lo[x];
            seg[MAX_SEG + x] = g.seg_start[x];
        }
    }
    for (int x = threadIdx.x; x < g.nsteps; x += blockDim.x) sS[x] = steps[x];
    for (int x = threadIdx.x; x < g.da; x += blockDim.x) sR[x] = make_int2(adesc[x].lo, adesc[x].hi);
    for (int x = threadIdx.x; x <= g.ngroups; x += blockDim.x) sP[x] = step_ptr[x];
    const int T = 1 << g.log_t, items = g.ngroups << g.log_t;
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long i0 = t << g.log_t;
        __syncthreads();                         /* the previous tile is done */
        tile_stage(g, i0, adesc, bdesc, a, b, seg, sA, sB);
        __syncthreads();
        /* every pair counts on every row of an interior tile */
        const bool interior = i0 + g.oa_min >= 0 && i0 + T - 1 + g.oa_max < g.k;
        for (int x = threadIdx.x; x < items; x += blockDim.x) {
            if (interior)
                tile_item<false>(g, i0, x >> g.log_t, x & (T - 1), cdesc, sA, sB, sS, sR, sP, c);
            else
                tile_item<true>(g, i0, x >> g.log_t, x & (T - 1), cdesc, sA, sB, sS, sR, sP, c);
        }
    }
}

/* ------------------------------------------------------------ host side */

size_t align16(size_t x) { return (x + 15) / 16 * 16; }

/* Rows of diagonal o of a rows x cols matrix, and its storage base. */
diag_desc make_desc(int32_t rows, int32_t cols, int64_t o, int64_t base)
{
    diag_desc d;
    d.base = base;
    d.lo = (int)adia_diag_row0(o);
    d.hi = (int)(d.lo + adia_diag_len(rows, cols, o));
    return d;
}

void fill_descs(diag_desc *out, int32_t rows, int32_t cols, int32_t dg, const int32_t *off,
                const int64_t *base)
{
    for (int32_t d = 0; d < dg; d++) out[d] = make_desc(rows, cols, off[d], base[d]);
}

/* The structure arrays a kernel reads, packed into one host buffer
 * uploaded with one copy; part offsets are 16-byte aligned. */
struct blob {
    unsigned char *host;
    size_t size;
    size_t part[6];
};

adia_status blob_alloc(blob *bl, const size_t *bytes, int parts)
{
    bl->size = 0;
    for (int i = 0; i < parts; i++) {
        bl->part[i] = bl->size;
        bl->size = align16(bl->size + bytes[i]);
    }
    bl->host = (unsigned char *)adia__calloc(bl->size ? bl->size : 1, 1, "gpu product structure");
    return bl->host ? ADIA_OK : ADIA_ERR_NO_MEMORY;
}

template <typename X> X *blob_at(const blob &bl, int i) { return (X *)(bl.host + bl.part[i]); }

/* Streaming kernel structure: C descriptors, tiles per diagonal, pairs. */
adia_status stream_build(const spmm_plan *p, blob *bl, int64_t *ntiles)
{
    size_t bytes[4] = {sizeof(diag_desc) * (size_t)p->dc, 8 * ((size_t)p->dc + 1),
                       8 * ((size_t)p->dc + 1), sizeof(pair_desc) * (size_t)p->n_pairs};
    ADIA_TRY(blob_alloc(bl, bytes, 4));
    diag_desc *cd = blob_at<diag_desc>(*bl, 0);
    long long *tp = blob_at<long long>(*bl, 1), *pp = blob_at<long long>(*bl, 2);
    pair_desc *pd = blob_at<pair_desc>(*bl, 3);
    fill_descs(cd, p->m, p->n, p->dc, p->c_off, p->c_base);
    tp[0] = 0;
    for (int32_t d = 0; d < p->dc; d++) {
        tp[d + 1] = tp[d] + (cd[d].hi - cd[d].lo + STREAM_ROWS - 1) / STREAM_ROWS;
        pp[d + 1] = p->pair_ptr[d + 1];
        for (int64_t q = p->pair_ptr[d]; q < p->pair_ptr[d + 1]; q++) {
            const int32_t ia = p->pair_a[q];
            const int64_t oa = p->a.off[ia];
            const diag_desc ad = make_desc(p->m, p->k, oa, p->a.base[ia]);
            pd[q].a = ad.base;
            pd[q].b = p->b.base[p->pair_b[q]] + oa;
            pd[q].lo = ad.lo;
            pd[q].hi = ad.hi;
        }
    }
    *ntiles = p->dc ? tp[p->dc] : 0;
    if (*ntiles > INT32_MAX)
        return adia__error(ADIA_ERR_OVERFLOW, "spmm gpu: %" PRId64 " tiles exceed the grid limit",
                          *ntiles);
    return ADIA_OK;
}

/* Segments of A's offsets whose B windows [oa, oa + T) overlap; false
 * when there are more than MAX_SEG or the staged B is too long. */
bool tile_segments(const spmm_plan *p, tile_geom *g)
{
    const int64_t t = (int64_t)1 << g->log_t;
    int64_t w = 0, hi = 0;
    g->nseg = 0;
    for (int32_t ia = 0; ia < p->a.dg; ia++) {
        const int64_t oa = p->a.off[ia];
        if (g->nseg > 0 && oa <= hi) {
            hi = oa + t;
            continue;
        }
        if (g->nseg > 0) w += hi - g->seg_lo[g->nseg - 1];
        if (g->nseg == MAX_SEG) return false;
        g->seg_lo[g->nseg] = (int)oa;
        g->seg_start[g->nseg++] = (int)w;
        hi = oa + t;
    }
    if (g->nseg > 0) w += hi - g->seg_lo[g->nseg - 1];
    if (w * p->b.dg > INT16_MAX || p->a.dg > INT16_MAX) return false;  /* short positions */
    g->w = (int)w;
    return true;
}

/* Staged B position of local row 0 for A diagonal ia and B diagonal ib. */
int tile_bpos(const spmm_plan *p, const tile_geom &g, int32_t ia, int32_t ib)
{
    const int oa = p->a.off[ia];
    int s = 0;
    while (s + 1 < g.nseg && oa >= g.seg_lo[s + 1]) s++;
    return ib * g.w + g.seg_start[s] + (oa - g.seg_lo[s]);
}

/* Steps of the group of output diagonals d0 .. d0 + TILE_G - 1: merge of
 * their pair lists by A diagonal.  out NULL: count only. */
int64_t tile_group_steps(const spmm_plan *p, const tile_geom &g, int32_t d0, tile_step *out)
{
    int64_t cur[TILE_G], end[TILE_G], n = 0;
    for (int e = 0; e < TILE_G; e++) {
        const bool in = d0 + e < p->dc;
        cur[e] = in ? p->pair_ptr[d0 + e] : 0;
        end[e] = in ? p->pair_ptr[d0 + e + 1] : 0;
    }
    for (;;) {
        int32_t ia = INT32_MAX;
        for (int e = 0; e < TILE_G; e++)
            if (cur[e] < end[e] && p->pair_a[cur[e]] < ia) ia = p->pair_a[cur[e]];
        if (ia == INT32_MAX) return n;
        if (out) out[n].ia = (short)ia;
        for (int e = 0; e < TILE_G; e++) {
            const bool hit = cur[e] < end[e] && p->pair_a[cur[e]] == ia;
            if (out) out[n].b[e] = hit ? (short)tile_bpos(p, g, ia, p->pair_b[cur[e]]) : -1;
            if (hit) cur[e]++;
        }
        n++;
    }
}

/* Choose T (or report that nothing fits in budget bytes). */
bool tile_choose(const spmm_plan *p, size_t budget, tile_geom *g)
{
    memset(g, 0, sizeof *g);
    g->da = p->a.dg;
    g->db = p->b.dg;
    g->dc = p->dc;
    g->ngroups = (p->dc + TILE_G - 1) / TILE_G;
    g->m = p->m;
    g->k = p->k;
    g->oa_min = p->a.dg ? p->a.off[0] : 0;
    g->oa_max = p->a.dg ? p->a.off[p->a.dg - 1] : 0;
    g->log_t = 6;                   /* the smallest tile fails without steps: done */
    if (!tile_segments(p, g) || tile_smem(*g) > budget) return false;
    int64_t nsteps = 0;
    for (int32_t gi = 0; gi < g->ngroups; gi++)
        nsteps += tile_group_steps(p, *g, gi * TILE_G, NULL);
    if (nsteps > INT32_MAX / 16) return false;
    g->nsteps = (int)nsteps;
    for (g->log_t = 8; g->log_t >= 6; g->log_t--)
        if (tile_segments(p, g) && tile_smem(*g) <= budget) return true;
    return false;
}

adia_status tiled_build(const spmm_plan *p, const tile_geom &g, blob *bl)
{
    size_t bytes[5] = {sizeof(diag_desc) * (size_t)p->a.dg, sizeof(diag_desc) * (size_t)p->b.dg,
                       sizeof(diag_desc) * (size_t)p->dc, 4 * ((size_t)g.ngroups + 1),
                       sizeof(tile_step) * (size_t)g.nsteps};
    ADIA_TRY(blob_alloc(bl, bytes, 5));
    fill_descs(blob_at<diag_desc>(*bl, 0), p->m, p->k, p->a.dg, p->a.off, p->a.base);
    fill_descs(blob_at<diag_desc>(*bl, 1), p->k, p->n, p->b.dg, p->b.off, p->b.base);
    fill_descs(blob_at<diag_desc>(*bl, 2), p->m, p->n, p->dc, p->c_off, p->c_base);
    int *sp = blob_at<int>(*bl, 3);
    tile_step *st = blob_at<tile_step>(*bl, 4);
    sp[0] = 0;
    for (int32_t gi = 0; gi < g.ngroups; gi++)
        sp[gi + 1] = sp[gi] + (int)tile_group_steps(p, g, gi * TILE_G, st + sp[gi]);
    return ADIA_OK;
}

/* Device allocations of one product, freed together. */
struct dev_arrays {
    void *ptr[8];
    int count;
};

adia_status dev_put(dev_arrays *da, void **dst, const void *src, size_t bytes, const char *what)
{
    *dst = NULL;
    if (bytes == 0) return ADIA_OK;
    ADIA_TRY(adia_cuda_check(cudaMalloc(dst, bytes), what));
    da->ptr[da->count++] = *dst;
    if (src) ADIA_TRY(adia_cuda_check(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice), what));
    return ADIA_OK;
}

void dev_free(dev_arrays *da)
{
    for (int i = 0; i < da->count; i++) cudaFree(da->ptr[i]);
    da->count = 0;
}

/* Shared bytes a tiled block may use: two blocks per SM. */
adia_status tile_budget(size_t *budget)
{
    int dev = 0, optin = 0, per_sm = 0;
    ADIA_CUDA_TRY(cudaGetDevice(&dev));
    ADIA_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    ADIA_CUDA_TRY(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                         dev));
    /* 1 KB a block is reserved by the driver, 64 bytes are static */
    size_t half = per_sm / 2 > 2048 ? (size_t)per_sm / 2 - 2048 : 0;
    *budget = half < (size_t)optin ? half : (size_t)optin;
    return ADIA_OK;
}

/* Which kernel: 1 tiled (g filled), 0 streaming. */
adia_status choose_kernel(const spmm_plan *p, int force, tile_geom *g, int *tiled)
{
    size_t budget = 0;
    ADIA_TRY(tile_budget(&budget));
    if (force == 2) {   /* options.gpu_kernel: streaming */
        *tiled = 0;
        return ADIA_OK;
    }
    *tiled = tile_choose(p, budget, g);
    if (force == 1 && !*tiled)
        return adia__error(ADIA_ERR_UNSUPPORTED, "spmm gpu: the tiled kernel was asked for, but the "
                          "tile of %" PRId32 " x %" PRId32 " diagonals does not fit %zu bytes "
                          "of shared memory", p->a.dg, p->b.dg, budget);
    return ADIA_OK;
}

adia_status launch_tiled(const spmm_plan *p, tile_geom g, const void *dstruct, const blob &bl,
                         const double *a, const double *b, double *c, int accumulate)
{
    const unsigned char *base = (const unsigned char *)dstruct;
    const size_t smem = tile_smem(g);
    g.accumulate = accumulate;
    const long long ntiles = ((long long)p->m + (1 << g.log_t) - 1) >> g.log_t;
    if (ntiles == 0) return ADIA_OK;
    ADIA_CUDA_TRY(cudaFuncSetAttribute(spmm_tiled_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0, dev = 0, sms = 0;
    ADIA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spmm_tiled_kernel,
                                                                TILE_THREADS, smem));
    ADIA_CUDA_TRY(cudaGetDevice(&dev));
    ADIA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (per_sm < 1)
        return adia__error(ADIA_ERR_CUDA, "spmm gpu: the tiled kernel with %zu bytes of shared "
                          "memory cannot run on this device", smem);
    const long long grid = ntiles < (long long)per_sm * sms ? ntiles : (long long)per_sm * sms;
    spmm_tiled_kernel<<<(unsigned)grid, TILE_THREADS, smem>>>(
        g, (const diag_desc *)(base + bl.part[0]), (const diag_desc *)(base + bl.part[1]),
        (const diag_desc *)(base + bl.part[2]), (const int *)(base + bl.part[3]),
        (const tile_step *)(base + bl.part[4]), a, b, c, ntiles);
    return adia_cuda_check(cudaGetLastError(), "spmm_tiled_kernel launch");
}

adia_status launch_stream(const spmm_plan *p, const void *dstruct, const blob &bl,
                          int64_t ntiles, const double *a, const double *b, double *c,
                          int accumulate)
{
    const unsigned char *base = (const unsigned char *)dstruct;
    if (ntiles == 0) return ADIA_OK;
    spmm_stream_kernel<<<(unsigned)ntiles, STREAM_ROWS>>>(
        (const long long *)(base + bl.part[1]), (const diag_desc *)(base + bl.part[0]),
        (const long long *)(base + bl.part[2]), (const pair_desc *)(base + bl.part[3]), a, b, c,
        p->dc, accumulate);
    return adia_cuda_check(cudaGetLastError(), "spmm_stream_kernel launch");
}

/* Kernel between two events; *ms its time. */
template <typename F> adia_status timed(F launch, double *ms)
{
    cudaEvent_t e0, e1;
    ADIA_CUDA_TRY(cudaEventCreate(&e0));
    adia_status s = adia_cuda_check(cudaEventCreate(&e1), "cudaEventCreate");
    if (s != ADIA_OK) {
        cudaEventDestroy(e0);
        return s;
    }
    s = adia_cuda_check(cudaEventRecord(e0), "cudaEventRecord");
    if (s == ADIA_OK) s = launch();
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventRecord(e1), "cudaEventRecord");
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventSynchronize(e1), "spmm gpu kernel");
    float f = 0;
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventElapsedTime(&f, e0, e1), "cudaEventElapsedTime");
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *ms = f;
    return s;
}

/* Rows [row0, row0 + rows) of C on the device into run->sample. */
adia_status download_sample(const spmm_plan *p, const double *c, spmm_gpu_run *run)
{
    const int64_t r0 = run->sample_row0, r1 = r0 + run->sample_rows;
    for (int32_t d = 0; d < p->dc; d++) {
        const diag_desc cd = make_desc(p->m, p->n, p->c_off[d], p->c_base[d]);
        const int64_t lo = cd.lo > r0 ? cd.lo : r0, hi = cd.hi < r1 ? cd.hi : r1;
        if (lo < hi)
            ADIA_CUDA_TRY(cudaMemcpy(run->sample + (int64_t)d * run->sample_rows + (lo - r0),
                                     c + cd.base + lo, (size_t)(hi - lo) * 8,
                                     cudaMemcpyDeviceToHost));
    }
    return ADIA_OK;
}

adia_status run_product(spmm_plan *p, spmm_gpu_run *run, dev_arrays *da, blob *bl)
{
    char what[96];
    snprintf(what, sizeof what, "spmm gpu: the product (C: %" PRId64 " entries)", p->c_len);
    ADIA_TRY(adia__gpu_check_free(adia__spmm_gpu_bytes(p), what));
    /* operands (and a C to accumulate into): what a device-resident caller has */
    double t0 = adia__now_ms();
    void *a, *b, *c = NULL, *st;
    ADIA_TRY(dev_put(da, &a, p->a.list, (size_t)p->a.stored * 8, "A diagonals"));
    ADIA_TRY(dev_put(da, &b, p->b.list, (size_t)p->b.stored * 8, "B diagonals"));
    if (run->accumulate)
        ADIA_TRY(dev_put(da, &c, run->c_list, (size_t)p->c_len * 8, "C diagonals"));
    ADIA_CUDA_TRY(cudaDeviceSynchronize());
    double t1 = adia__now_ms();
    run->transfer_ms = t1 - t0;
    /* the device phase: kernel structure, its upload, C, kernel */
    tile_geom g;
    int tiled = 0;
    int64_t ntiles = 0;
    ADIA_TRY(choose_kernel(p, run->kernel, &g, &tiled));
    ADIA_TRY(tiled ? tiled_build(p, g, bl) : stream_build(p, bl, &ntiles));
    /* C and the structure share one allocation (one cudaMalloc less: it
     * costs more than the kernel on small products) */
    const size_t c_bytes = run->accumulate ? 0 : align16((size_t)p->c_len * 8);
    double ta = adia__now_ms();
    void *mem = NULL;
    ADIA_TRY(dev_put(da, &mem, NULL, c_bytes + bl->size, "C diagonals and gpu product structure"));
    double tk = adia__now_ms();
    if (!run->accumulate) c = mem;
    st = (unsigned char *)mem + c_bytes;
    if (bl->size > 0)
        ADIA_CUDA_TRY(cudaMemcpy(st, bl->host, bl->size, cudaMemcpyHostToDevice));
    auto launch = [&]() {
        return tiled ? launch_tiled(p, g, st, *bl, (const double *)a, (const double *)b,
                                    (double *)c, run->accumulate)
                     : launch_stream(p, st, *bl, ntiles, (const double *)a, (const double *)b,
                                     (double *)c, run->accumulate);
    };
    ADIA_TRY(timed(launch, &run->kernel_ms));
    double t2 = adia__now_ms();
    run->device_ms = p->struct_ms + (t2 - t1);
    run->alloc_ms = tk - ta;
    run->setup_ms = p->struct_ms + (t2 - t1) - run->alloc_ms - run->kernel_ms;
    run->tile_rows = tiled ? 1 << g.log_t : 0;
    run->shared_bytes = tiled ? (int64_t)tile_smem(g) : (int64_t)sizeof(pair_desc) * STREAM_ROWS;
    if (run->c_list && p->c_len > 0)
        ADIA_CUDA_TRY(cudaMemcpy(run->c_list, c, (size_t)p->c_len * 8, cudaMemcpyDeviceToHost));
    if (!run->c_list && run->sample) ADIA_TRY(download_sample(p, (const double *)c, run));
    run->transfer_ms += adia__now_ms() - t2;
    return ADIA_OK;
}

} // namespace

extern "C" adia_status adia__spmm_gpu_hm(spmm_plan *p, spmm_gpu_run *run)
{
    if (run->accumulate && !run->c_list)
        return adia__error(ADIA_ERR_INVALID_ARG, "spmm gpu: accumulating needs C's values");
    ADIA_TRY(adia__spmm_operand_store(&p->a));
    ADIA_TRY(adia__spmm_operand_store(&p->b));
    dev_arrays da;
    da.count = 0;
    blob bl;
    bl.host = NULL;
    adia_status s = run_product(p, run, &da, &bl);
    dev_free(&da);
    free(bl.host);
    return s;
}
