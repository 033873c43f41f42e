/* spmm.cu -- the GPU numeric phase of the diagonal products.
 *
 * Formulation: output diagonal oc at row i is
 *
 *     C[i][i+oc] = sum over pairs (oa, ob), oa + ob = oc, oa ascending, of
 *                  A[i][i+oa] * B[i+oa][i+oc]
 *
 * i.e. a sum of elementwise products of shifted input diagonals.  The host
 * builds the structure (output diagonals, pairs grouped per output
 * diagonal, tiles of SPMM_TILE_ROWS rows); one thread block owns one tile,
 * one thread one output element, and walks the pair list of its diagonal:
 * three unit-stride, coalesced streams (A's diagonal, B's diagonal, one
 * write of C), no shared-memory staging, no atomics.  Every element is
 * summed by one thread in the CPU's pair order with __dmul_rn/__dadd_rn (no
 * FMA contraction), so the result equals the CPU HM product bitwise.
 *
 * Compared with the seed's kernels: section 6.2 gives each nonzero of A a
 * thread and scatters into C with atomics (non-deterministic sums, one
 * atomic read-modify-write of C per multiplication); here C is written
 * once per element.  Section 6.1 stages T x T tiles of A in shared memory
 * and reads B from global memory per multiplication; here A and B are both
 * read per multiplication, but the pair list of a tile touches the same
 * rows of A's diagonals from every output diagonal, which L1/L2 serve.
 * That this is as fast as the tiled kernel is an expectation to measure
 * (bench/bench_spmm.c), not a proof.
 */
#include "cuda_util.h"
#include "spmm/spmm_internal.h"

#include <inttypes.h>

namespace {

__global__ void spmm_hm_kernel(const int32_t *__restrict__ tile_diag,
                               const int32_t *__restrict__ tile_row,
                               const int32_t *__restrict__ c_off,
                               const int64_t *__restrict__ c_base,
                               const int64_t *__restrict__ pair_ptr,
                               const int32_t *__restrict__ pair_a,
                               const int32_t *__restrict__ pair_b,
                               const int32_t *__restrict__ a_off,
                               const int64_t *__restrict__ a_base,
                               const int64_t *__restrict__ b_base,
                               const double *__restrict__ a,
                               const double *__restrict__ b,
                               double *__restrict__ c,
                               int32_t m, int32_t k, int32_t n, int accumulate)
{
    const int32_t d = tile_diag[blockIdx.x];
    const int64_t oc = c_off[d];
    const int64_t i = (int64_t)tile_row[blockIdx.x] + threadIdx.x;
    const int64_t end = (int64_t)n - oc < (int64_t)m ? (int64_t)n - oc : (int64_t)m;
    if (i >= end) return;
    const int64_t at = c_base[d] + i;
    double s = accumulate ? c[at] : 0.0;
    const int64_t q1 = pair_ptr[d + 1];
    for (int64_t q = pair_ptr[d]; q < q1; q++) {
        const int32_t ia = pair_a[q];
        const int64_t l = i + a_off[ia];    /* column of A = row of B */
        if (l < 0 || l >= k) continue;
        s = __dadd_rn(s, __dmul_rn(a[a_base[ia] + i], b[b_base[pair_b[q]] + l]));
    }
    c[at] = s;
}

/* Device allocations of one product, freed together. */
struct dev_arrays {
    void *ptr[16];
    int count;
};

adia_status dev_put(dev_arrays *da, void **dst, const void *src, size_t count,
                    size_t size, const char *what)
{
    size_t bytes;
    if (!adia_mul_size(count, size, &bytes))
        return adia_error(ADIA_ERR_OVERFLOW, "spmm gpu: %s: %zu x %zu bytes overflow", what,
                          count, size);
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

/* One tile per SPMM_TILE_ROWS rows of each output diagonal. */
adia_status make_tiles(const spmm_plan *p, int32_t **td, int32_t **tr, int64_t *count)
{
    int64_t nt = 0;
    for (int32_t d = 0; d < p->dc; d++)
        nt += (adia_diag_len(p->m, p->n, p->c_off[d]) + SPMM_TILE_ROWS - 1) / SPMM_TILE_ROWS;
    if (nt > INT32_MAX)
        return adia_error(ADIA_ERR_OVERFLOW, "spmm gpu: %" PRId64 " tiles exceed the grid limit",
                          nt);
    *td = (int32_t *)adia_alloc((size_t)nt, sizeof **td, "gpu tiles");
    *tr = (int32_t *)adia_alloc((size_t)nt, sizeof **tr, "gpu tiles");
    if (!*td || !*tr) {
        free(*td);
        free(*tr);
        return ADIA_ERR_NO_MEMORY;
    }
    int64_t t = 0;
    for (int32_t d = 0; d < p->dc; d++) {
        int64_t r0 = adia_diag_row0(p->c_off[d]);
        int64_t r1 = r0 + adia_diag_len(p->m, p->n, p->c_off[d]);
        for (int64_t r = r0; r < r1; r += SPMM_TILE_ROWS) {
            (*td)[t] = d;
            (*tr)[t++] = (int32_t)r;
        }
    }
    *count = nt;
    return ADIA_OK;
}

adia_status run(spmm_plan *p, double *c_list, int accumulate, double *time_ms,
                const int32_t *td, const int32_t *tr, int64_t ntiles, dev_arrays *da)
{
    size_t free_b = 0, total_b = 0;
    ADIA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    int64_t need = spmm_gpu_bytes(p);
    if ((uint64_t)need > (uint64_t)free_b)
        return adia_error(ADIA_ERR_NO_MEMORY, "spmm gpu: the product needs %" PRId64
                          " bytes of device memory, %zu are free (C: %" PRId64 " entries)",
                          need, free_b, p->c_len);
    void *a, *b, *c, *aoff, *abase, *bbase, *coff, *cbase, *pptr, *pa, *pb, *dtd, *dtr;
    ADIA_TRY(dev_put(da, &a, p->a.list, (size_t)p->a.stored, 8, "A diagonals"));
    ADIA_TRY(dev_put(da, &b, p->b.list, (size_t)p->b.stored, 8, "B diagonals"));
    ADIA_TRY(dev_put(da, &c, accumulate ? c_list : NULL, (size_t)p->c_len, 8, "C diagonals"));
    ADIA_TRY(dev_put(da, &aoff, p->a.off, (size_t)p->a.dg, 4, "A offsets"));
    ADIA_TRY(dev_put(da, &abase, p->a.base, (size_t)p->a.dg, 8, "A bases"));
    ADIA_TRY(dev_put(da, &bbase, p->b.base, (size_t)p->b.dg, 8, "B bases"));
    ADIA_TRY(dev_put(da, &coff, p->c_off, (size_t)p->dc, 4, "C offsets"));
    ADIA_TRY(dev_put(da, &cbase, p->c_base, (size_t)p->dc, 8, "C bases"));
    ADIA_TRY(dev_put(da, &pptr, p->pair_ptr, (size_t)p->dc + 1, 8, "pair pointers"));
    ADIA_TRY(dev_put(da, &pa, p->pair_a, (size_t)p->n_pairs, 4, "pairs"));
    ADIA_TRY(dev_put(da, &pb, p->pair_b, (size_t)p->n_pairs, 4, "pairs"));
    ADIA_TRY(dev_put(da, &dtd, td, (size_t)ntiles, 4, "tiles"));
    ADIA_TRY(dev_put(da, &dtr, tr, (size_t)ntiles, 4, "tiles"));
    cudaEvent_t e0, e1;
    ADIA_CUDA_TRY(cudaEventCreate(&e0));
    adia_status s = adia_cuda_check(cudaEventCreate(&e1), "cudaEventCreate");
    if (s != ADIA_OK) {
        cudaEventDestroy(e0);
        return s;
    }
    s = adia_cuda_check(cudaEventRecord(e0), "cudaEventRecord");
    if (s == ADIA_OK && ntiles > 0) {
        spmm_hm_kernel<<<(unsigned)ntiles, SPMM_TILE_ROWS>>>(
            (const int32_t *)dtd, (const int32_t *)dtr, (const int32_t *)coff,
            (const int64_t *)cbase, (const int64_t *)pptr, (const int32_t *)pa,
            (const int32_t *)pb, (const int32_t *)aoff, (const int64_t *)abase,
            (const int64_t *)bbase, (const double *)a, (const double *)b, (double *)c,
            p->m, p->k, p->n, accumulate);
        s = adia_cuda_check(cudaGetLastError(), "spmm_hm_kernel launch");
    }
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventRecord(e1), "cudaEventRecord");
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventSynchronize(e1), "spmm_hm_kernel");
    float ms = 0;
    if (s == ADIA_OK) s = adia_cuda_check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (s == ADIA_OK && time_ms) *time_ms = ms;
    if (s == ADIA_OK && p->c_len > 0)
        s = adia_cuda_check(cudaMemcpy(c_list, c, (size_t)p->c_len * 8, cudaMemcpyDeviceToHost),
                            "download of C");
    return s;
}

} // namespace

extern "C" adia_status spmm_gpu_hm(spmm_plan *p, double *c_list, int accumulate, double *time_ms)
{
    ADIA_TRY(spmm_operand_store(&p->a));
    ADIA_TRY(spmm_operand_store(&p->b));
    int32_t *td = NULL, *tr = NULL;
    int64_t ntiles = 0;
    ADIA_TRY(make_tiles(p, &td, &tr, &ntiles));
    dev_arrays da;
    da.count = 0;
    adia_status s = run(p, c_list, accumulate, time_ms, td, tr, ntiles, &da);
    dev_free(&da);
    free(td);
    free(tr);
    return s;
}
