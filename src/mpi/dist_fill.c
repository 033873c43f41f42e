/* dist_fill.c -- a Laplacian's blocks filled on each process's GPU
 * straight into diagonal storage: the layout of the local x from the
 * stencil's offsets (no column scan), adia_stencil_fill_device writing the
 * block's diagonals, adia_plan_create_device_dia taking them over.  No CSR
 * on the way and nothing of the matrix on the host but its diagonal
 * (Jacobi): a 7-point 1200^3 grid on two GPUs is 6 billion nonzeros a
 * process, which CSR on the host could not hold beside them, and global
 * rows are 64-bit (the grid may pass 2^31 points). */
#include "dist_device.h"
#include "dist_kernels.h"

#include <math.h>

/* The stencil's diagonals [k0, k0 + *m) that have a column inside the
 * matrix for these rows (the others, the extreme ones, hold zeros), their
 * local offsets L[0..m). */
static int local_offsets(const adia_dist_matrix *D, const int64_t *off, int nd, int64_t *L, int *m)
{
    int k0 = 0;
    *m = 0;
    while (k0 < nd && !adia__dist_local_offset(D, off[k0], &L[0])) k0++;
    while (k0 + *m < nd && adia__dist_local_offset(D, off[k0 + *m], &L[*m])) (*m)++;
    return k0;
}

/* The part's rows filled on the device (all nd diagonals), its diagonal
 * into D->diag, max |a| into *max_abs, and its plan from the diagonals it
 * has a column for (the part's columns: the owned rows or the local x). */
static adia_status fill_part(adia_dist_matrix *D, dist_part *p, const char *spec, int nd,
                             int k0, const int64_t *L, int m, int kmain, double *max_abs,
                             const adia_plan_hints *h)
{
    const int64_t rows = p->rows, cols = p->x_own ? D->rows : D->local_cols;
    const int64_t shift = p->row0 - (p->x_own ? D->own_pos : 0);
    int64_t o[ADIA_STENCIL_MAX_DIAGONALS];
    int a = 0, b = m;   /* L[a..b): a column of the part's range */
    while (a < b && shift + L[a] <= -rows) a++;
    while (b > a && shift + L[b - 1] >= cols) b--;
    for (int k = a; k < b; k++) o[k - a] = shift + L[k];
    double *values = NULL;
    const size_t bytes = (size_t)nd * (size_t)rows * sizeof *values;
    cudaError_t e = cudaMalloc((void **)&values, bytes ? bytes : 8);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return adia_set_error(e == cudaErrorMemoryAllocation ? ADIA_ERR_NO_MEMORY : ADIA_ERR_CUDA,
                              "rank %d: cudaMalloc of %d diagonals of %lld rows (%.3g GB) "
                              "failed: %s", D->rank, nd, (long long)rows, bytes / 1e9,
                              cudaGetErrorString(e));
    }
    adia__dist_phase(D, "dist: part's diagonals allocated");
    adia_status s = adia_stencil_fill_device(spec, D->first + p->row0, rows, values, ADIA_DOUBLE,
                                             NULL);
    adia__dist_phase(D, "dist: part filled");
    if (s == ADIA_OK && kmain >= 0)
        s = adia__dist_cuda(cudaMemcpy(D->diag + p->row0, values + kmain * rows,
                                       (size_t)rows * sizeof *values, cudaMemcpyDeviceToHost),
                            "cudaMemcpy (diagonal)");
    adia__dist_phase(D, "dist: part's diagonal to the host");
    if (s == ADIA_OK)
        s = adia__dist_cuda(adia__dist_max_abs(nd * rows, values, max_abs, NULL),
                            "max |a| of the block");
    adia__dist_phase(D, "dist: part's max |a|");
    if (s != ADIA_OK) {
        cudaFree(values);
        return s;
    }
    /* the plan takes the array over when all of it is the part's */
    const int adopt = k0 + a == 0 && k0 + b == nd;
    adia_device_dia A = {(int32_t)rows, (int32_t)cols, b - a, o, values + (size_t)(k0 + a) * rows,
                         ADIA_DOUBLE, adopt};
    s = adia_plan_create_device_dia(&A, h, &p->plan);
    if (!adopt) cudaFree(values);
    adia__dist_phase(D, "dist: part's plan");
    return s;
}

adia_status adia__dist_fill_block(adia_dist_matrix *D, const char *spec,
                                  const adia_plan_hints *hints)
{
    int64_t off[ADIA_STENCIL_MAX_DIAGONALS], L[ADIA_STENCIL_MAX_DIAGONALS];
    int nd = 0, m, kmain = -1;
    DIST_TRY(adia_stencil_diagonals(spec, NULL, &nd, off));
    DIST_TRY(adia__dist_layout_offsets(D, off, nd));
    const int k0 = local_offsets(D, off, nd, L, &m);
    for (int k = 0; k < nd; k++)
        if (off[k] == 0) kmain = k;
    D->diag = adia__dist_alloc((size_t)D->rows + 1, sizeof *D->diag, "matrix diagonal");
    if (!D->diag) return ADIA_ERR_NO_MEMORY;
    if (kmain < 0) memset(D->diag, 0, (size_t)D->rows * sizeof *D->diag);
    int32_t lo, hi;
    adia__dist_cut_rows(D, off + k0, m, &lo, &hi);
    const int32_t rows = (int32_t)D->rows;
    if (lo == hi) {   /* one part: the block as it is, all owned rows copied */
        D->part[D->nparts++] = (dist_part){.rows = rows, .band_len = rows};
    } else {          /* the owned rows the ends read: their rows +- the reach */
        int64_t omin = off[k0] < 0 ? off[k0] : 0, omax = off[k0 + m - 1] > 0 ? off[k0 + m - 1] : 0;
        int32_t top = (int32_t)(lo + omax < rows ? lo + omax : rows);
        int32_t bottom = (int32_t)(hi + omin > 0 ? hi + omin : 0);
        if (lo > 0) D->part[D->nparts++] = (dist_part){.rows = lo, .band_len = top};
        D->part[D->nparts++] = (dist_part){.row0 = lo, .rows = hi - lo, .x_own = 1};
        if (hi < rows) D->part[D->nparts++] = (dist_part){.row0 = hi, .rows = rows - hi,
                                                          .band = bottom,
                                                          .band_len = rows - bottom};
    }
    adia_plan_hints h = adia__dist_block_hints(D, hints);
    D->max_abs = 0;
    for (int k = 0; k < D->nparts; k++) {
        double mx = 0;
        DIST_TRY(fill_part(D, &D->part[k], spec, nd, k0, L, m, kmain, &mx, &h));
        D->max_abs = mx > D->max_abs || isnan(mx) ? mx : D->max_abs;
    }
    return ADIA_OK;
}
