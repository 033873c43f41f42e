/* dist_fill.c -- a Laplacian's blocks filled on each process's GPU
 * straight into diagonal storage: the layout of the local x from the
 * stencil's offsets (no column scan), adia_stencil_fill_device writing the
 * block's diagonals, adia_plan_create_device_dia taking them over.  No CSR
 * on the way and nothing of the matrix on the host but its diagonal
 * (Jacobi): a 7-point 1200^3 grid on two GPUs is 6 billion nonzeros a
 * process, which CSR on the host could not hold beside them, and global
 * rows are 64-bit (the grid may pass 2^31 points). */
#include "dist_device.h"
#include "dist_fill.h"

#define FILL_MAX_DIAGONALS 27   /* adia_stencil_diagonals' most */

/* The block's diagonals in the local x: [*k0, *k1) of the stencil's have
 * a column inside the matrix for these rows (the others, the extreme
 * ones, hold zeros), local[k - k0] their local offsets. */
static void local_diagonals(const adia_dist_matrix *D, const int64_t *off, int nd, int *k0,
                            int *k1, int64_t *local)
{
    int64_t o;
    *k0 = 0;
    *k1 = nd;
    while (*k0 < nd && !adia__dist_local_offset(D, off[*k0], &o)) (*k0)++;
    while (*k1 > *k0 && !adia__dist_local_offset(D, off[*k1 - 1], &o)) (*k1)--;
    for (int k = *k0; k < *k1; k++) adia__dist_local_offset(D, off[k], &local[k - *k0]);
}

/* A(i, i) of the block's rows into D->diag (host), from the main diagonal's row of values. */
static adia_status copy_diagonal(adia_dist_matrix *D, const double *values, const int64_t *off,
                                 int nd)
{
    D->diag = adia__dist_alloc((size_t)D->rows + 1, sizeof *D->diag, "matrix diagonal");
    if (!D->diag) return ADIA_ERR_NO_MEMORY;
    for (int k = 0; k < nd; k++)
        if (off[k] == 0)
            return adia__dist_cuda(cudaMemcpy(D->diag, values + k * D->rows, (size_t)D->rows * 8,
                                              cudaMemcpyDeviceToHost), "cudaMemcpy (diagonal)");
    memset(D->diag, 0, (size_t)D->rows * sizeof *D->diag);
    return ADIA_OK;
}

adia_status adia__dist_fill_block(adia_dist_matrix *D, const char *spec,
                                  const adia_plan_hints *hints)
{
    int64_t off[FILL_MAX_DIAGONALS], local[FILL_MAX_DIAGONALS];
    int nd = 0, k0, k1;
    DIST_TRY(adia_stencil_diagonals(spec, NULL, &nd, off));
    DIST_TRY(adia__dist_layout_offsets(D, off, nd));
    local_diagonals(D, off, nd, &k0, &k1, local);
    double *values = NULL;
    const size_t bytes = (size_t)nd * (size_t)D->rows * sizeof *values;
    cudaError_t e = cudaMalloc((void **)&values, bytes ? bytes : 8);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return adia_set_error(e == cudaErrorMemoryAllocation ? ADIA_ERR_NO_MEMORY : ADIA_ERR_CUDA,
                              "rank %d: cudaMalloc of its %d diagonals of %lld rows (%.3g GB) "
                              "failed: %s", D->rank, nd, (long long)D->rows, bytes / 1e9,
                              cudaGetErrorString(e));
    }
    adia_status s = adia_stencil_fill_device(spec, D->first, D->rows, values, ADIA_DOUBLE, NULL);
    if (s == ADIA_OK) s = copy_diagonal(D, values, off, nd);
    if (s == ADIA_OK)
        s = adia__dist_cuda(adia__dist_max_abs(values, nd * D->rows, &D->max_abs, NULL),
                            "max |a| of the block");
    if (s != ADIA_OK) {
        cudaFree(values);
        return s;
    }
    /* the plan takes the array over when all of it is the block's */
    const int adopt = k0 == 0 && k1 == nd;
    adia_device_dia A = {(int32_t)D->rows, D->local_cols, k1 - k0, local,
                         values + (size_t)k0 * D->rows, ADIA_DOUBLE, adopt};
    adia_plan_hints h = adia__dist_block_hints(D, hints);
    s = adia_plan_create_device_dia(&A, &h, &D->plan);
    if (!adopt) cudaFree(values);
    return s;
}
