/* plan_update_gpu.cu -- adia_plan_update_values_device_csr: new values of
 * a plan from a CSR in device memory (CuPy's, cuSPARSE's; issue 28, item 6).
 *
 * The device path: a GPU plan whose format's GPU table refills (the
 * diagonal core's formats -- CRSD without scatter points -- csr, ell,
 * sell: each writes a value to its slot, found from the structure),
 * once the plan has an update hash (plan_hash.h: from the device CSR it
 * was made from, or the first update's check on the host), hashes A's
 * structure on the device (one read of rowptr and colind), compares on
 * the device and, when it matches, writes A's values into the format's
 * device data in one pass -- three kernels queued back to back and one
 * wait for five words: no host copy, no transfer of the matrix.  The host copy of the data is marked stale (downloaded at its
 * first host use).  A's values with zeros in them go the host path too,
 * which keeps the format's explicit-zero lists (the round trip to CSR).
 *
 * Every other case -- the first update, another format, a pattern that
 * differs (its message names the row), a CPU plan -- copies A to the host
 * once and takes adia_plan_update_values' path. */
#include "plan_internal.h"
#include "plan_hash.h"
#include "formats/diag_core.h"
#include "../cuda/cuda_util.h"
#include "../cuda/gpu_common.h"

#include <vector>

namespace {

/* A's arrays to the host as out (values double, rowptr 64 bits). */
adia_status download_csr(const adia_device_csr *A, adia_csr *out)
{
    ADIA_TRY(adia__csr_alloc(out, A->rows, A->cols, A->nnz, ADIA_DOUBLE));
    const size_t rows = (size_t)A->rows, nnz = (size_t)A->nnz;
    if (A->rowptr_bits == 32) {
        std::vector<int32_t> rp(rows + 1);
        ADIA_CUDA_TRY(cudaMemcpy(rp.data(), A->rowptr, rp.size() * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i <= rows; i++) out->rowptr[i] = rp[i];
    } else {
        ADIA_CUDA_TRY(cudaMemcpy(out->rowptr, A->rowptr, (rows + 1) * 8, cudaMemcpyDeviceToHost));
    }
    if (nnz == 0) return ADIA_OK;
    ADIA_CUDA_TRY(cudaMemcpy(out->colind, A->colind, nnz * 4, cudaMemcpyDeviceToHost));
    double *v = (double *)out->values;
    if (A->values_type == ADIA_FLOAT) {
        std::vector<float> f(nnz);
        ADIA_CUDA_TRY(cudaMemcpy(f.data(), A->values, nnz * 4, cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < nnz; k++) v[k] = f[k];
    } else {
        ADIA_CUDA_TRY(cudaMemcpy(v, A->values, nnz * 8, cudaMemcpyDeviceToHost));
    }
    return ADIA_OK;
}

adia_status check_args(const adia_plan *P, const adia_device_csr *A)
{
    if (!P) return adia__error(ADIA_ERR_INVALID_HANDLE, "adia_plan_update_values_device_csr: plan is NULL");
    if (P->magic != ADIA_MAGIC_PLAN)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "adia_plan_update_values_device_csr: not a live "
                           "plan handle (destroyed or uninitialised)");
    return adia__device_csr_check(A, "adia_plan_update_values_device_csr");
}

/* The work words (P->update_work): the hash's two sums, the verdict (the
 * refill's gate), the refill's two counts. */
enum { W_ROWS, W_COLS, W_GATE, W_ZEROS, W_BAD, UPDATE_WORDS };

/* The update hash's two sums (plan_hash.h) over A's structure into
 * sums[0..2) (added: zeroed by the caller); a block sums its threads'
 * terms, one atomic each.  The columns are read four at a time (one
 * 16-byte load) where colind is 16-byte aligned. */
constexpr int HASH_THREADS = 256;
template <typename R>
__global__ void __launch_bounds__(HASH_THREADS) hash_kernel(const R *__restrict__ rowptr, int rows,
                                                            const int *__restrict__ colind,
                                                            long long nnz, unsigned long long *sums)
{
    __shared__ unsigned long long part[2][HASH_THREADS / 32];
    long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long step = (long long)gridDim.x * blockDim.x;
    uint64_t sr = 0, sc = 0;
    for (long long i = i0; i <= rows; i += step) sr += adia__uhash_row(i, (int64_t)rowptr[i]);
    long long quads = ((uintptr_t)colind & 15) == 0 ? nnz / 4 : 0;
    const int4 *c4 = (const int4 *)colind;
    for (long long q = i0; q < quads; q += step) {
        int4 c = __ldg(c4 + q);
        long long j = 4 * q;
        sc += adia__uhash_col(j, c.x) + adia__uhash_col(j + 1, c.y) + adia__uhash_col(j + 2, c.z) +
              adia__uhash_col(j + 3, c.w);
    }
    for (long long j = 4 * quads + i0; j < nnz; j += step) sc += adia__uhash_col(j, colind[j]);
    for (int o = 16; o > 0; o >>= 1) {
        sr += __shfl_down_sync(0xffffffffu, sr, o);
        sc += __shfl_down_sync(0xffffffffu, sc, o);
    }
    const int warp = threadIdx.x / 32;
    if ((threadIdx.x & 31) == 0) part[0][warp] = sr, part[1][warp] = sc;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < HASH_THREADS / 32; w++) sr += part[0][w], sc += part[1][w];
        atomicAdd(sums + W_ROWS, (unsigned long long)sr);
        atomicAdd(sums + W_COLS, (unsigned long long)sc);
    }
}

/* The refill's gate: 1 when the sums give the plan's hash. */
__global__ void verdict_kernel(unsigned long long *work, int rows, int cols, long long nnz,
                               unsigned long long expect)
{
    work[W_GATE] = adia__hash_combine(rows, cols, nnz, work[W_ROWS], work[W_COLS]) == expect;
}

/* The hash's sums of A into work (zeroed first), queued. */
adia_status queue_hash(const adia_device_csr *A, unsigned long long *work)
{
    ADIA_CUDA_TRY(cudaMemsetAsync(work, 0, UPDATE_WORDS * sizeof *work, 0));
    int64_t n = A->nnz / 4 > A->rows ? A->nnz / 4 : (int64_t)A->rows + 1;
    unsigned blocks = adia_gpu_blocks(n, HASH_THREADS);
    if (blocks > 4096) blocks = 4096;   /* a grid-stride loop: enough to fill the GPU */
    if (A->rowptr_bits == 32)
        hash_kernel<int><<<blocks, HASH_THREADS>>>((const int *)A->rowptr, A->rows, A->colind,
                                                   A->nnz, work);
    else
        hash_kernel<long long><<<blocks, HASH_THREADS>>>((const long long *)A->rowptr, A->rows,
                                                         A->colind, A->nnz, work);
    ADIA_GPU_LAUNCH_TRY("structure hash");
    return ADIA_OK;
}

adia_status update_work(adia_plan *P, unsigned long long **work)
{
    if (!P->update_work)
        ADIA_CUDA_TRY(cudaMalloc(&P->update_work, UPDATE_WORDS * sizeof(unsigned long long)));
    *work = (unsigned long long *)P->update_work;
    return ADIA_OK;
}

/* Can F take A's values on the device (its GPU table's refill slot)?
 * CRSD's scatter points live in a COO upload of their own: not there. */
bool refills_on_device(const adia_format *F)
{
    const adia_gpu_ops *g = F->ops->gpu;
    if (!F->dev || !g || !g->refill || !g->download) return false;
    const adia_diag *D = F->ops->diag.policy ? (const adia_diag *)F->impl : NULL;
    return !(D && D->n_scatter > 0);
}

/* The device path (see the top): the hash, its verdict and the gated
 * refill queued back to back, one wait for the five words; *done 0: take
 * the host path (a mismatch wrote nothing). */
adia_status device_refill(adia_plan *P, const adia_device_csr *A, int *done)
{
    *done = 0;
    adia_format *F = P->F;
    if (!P->device || !refills_on_device(F) || !P->update_hash || A->nnz != P->nnz) return ADIA_OK;
    unsigned long long *work, h[UPDATE_WORDS];
    ADIA_TRY(update_work(P, &work));
    ADIA_TRY(queue_hash(A, work));
    verdict_kernel<<<1, 1>>>(work, A->rows, A->cols, A->nnz, P->update_hash);
    ADIA_GPU_LAUNCH_TRY("structure hash verdict");
    ADIA_TRY(F->ops->gpu->refill(F->dev, A, work + W_GATE, work + W_ZEROS));
    /* the five words back: the refill is in place before any product on
     * any stream (a non-blocking one too) */
    ADIA_CUDA_TRY(cudaMemcpy(h, work, sizeof h, cudaMemcpyDeviceToHost));
    if (!h[W_GATE]) return ADIA_OK;   /* the host path names the row */
    if (h[W_BAD])
        return adia__error(ADIA_ERR_INTERNAL, "value update on the device: %llu entries fit no "
                           "slot of the plan's format (the pattern changed past the check)",
                           h[W_BAD]);
    if (h[W_ZEROS] > 0) return ADIA_OK;   /* the diagonal core's zero lists: the host path */
    if (F->ops->diag.policy) {            /* no zeros now: its zero lists are empty */
        adia_diag *D = (adia_diag *)F->impl;
        free(D->zero_row);
        free(D->zero_col);
        D->zero_row = D->zero_col = NULL;
        D->n_zero = 0;
    }
    F->host_stale = 1;   /* the host copy is downloaded at its first use */
    *done = 1;
    return ADIA_OK;
}

} // namespace

extern "C" void adia__plan_update_hash_device(adia_plan *P, const adia_device_csr *A)
{
    unsigned long long *work, h[2];
    if (update_work(P, &work) != ADIA_OK || queue_hash(A, work) != ADIA_OK ||
        adia_cuda_check(cudaMemcpy(h, work, sizeof h, cudaMemcpyDeviceToHost), "structure hash") !=
            ADIA_OK) {
        adia_clear_error();   /* not the plan's failure: the first update hashes again */
        return;
    }
    P->update_hash = adia__hash_combine(A->rows, A->cols, A->nnz, h[W_ROWS], h[W_COLS]);
}

extern "C" void adia__plan_update_free(adia_plan *P)
{
    cudaFree(P->update_work);
    P->update_work = NULL;
}

extern "C" adia_status adia_plan_update_values_device_csr(adia_plan *plan, const adia_device_csr *A)
{
    ADIA_TRY(check_args(plan, A));
    if (A->rows != plan->rows || A->cols != plan->cols)
        return adia__error(ADIA_ERR_DIMENSION, "adia_plan_update_values_device_csr: the new matrix is "
                           "%d x %d, the plan's %d x %d", (int)A->rows, (int)A->cols,
                           (int)plan->rows, (int)plan->cols);
    double t0 = adia__now_ms();
    int done = 0;
    ADIA_TRY(device_refill(plan, A, &done));
    if (done) {
        plan->update_ms = adia__now_ms() - t0;
        plan->updates++;
        return ADIA_OK;
    }
    adia_csr c;
    memset(&c, 0, sizeof c);
    adia_status s = download_csr(A, &c);
    if (s == ADIA_OK) s = adia__plan_update_csr(plan, &c, "adia_plan_update_values_device_csr");
    adia__csr_free(&c);
    return s;
}
