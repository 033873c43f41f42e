/* dist_block.c -- a device matrix's own diagonal block (the rows held here
 * against the same columns) as a dia plan made on the device, for the
 * block preconditioners (dist_precond.c), and its slab (its rows and its
 * neighbours' ghost planes against the slab's columns) for mg across the
 * processes (dist_slab.c); CUDA builds only.
 *
 * Each part's plan lends its diagonals (adia_plan_device_dia) where its
 * format keeps them as dia does -- a stencil's parts do.  Part rows
 * [row0, row0 + rows) read columns numbered from the part's first column,
 * the own rows' first at shift (0 for a part reading the owned x, own_pos
 * for one reading the local x): its diagonal o is the block's diagonal
 * o - shift - row0, copied device to device into the block's storage.  The
 * entries in other processes' columns fall outside the block's columns,
 * which adia_plan_create_device_dia zeroes.  No download, no CSR: on 2 H200
 * the host route (adia_format_to_matrix, a CSR, a new plan) took 1.3-1.4 s
 * at 4.1 M rows a process, against the 38 ms of one GPU's whole mg set-up
 * (bench/results/2026-11-27c-h200x4). */
#include "dist_device.h"

enum { BLOCK_MAX_DIAGS = 256 };   /* per part: beyond, the host route */

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The parts' lent diagonals (views[k], offsets off + k BLOCK_MAX_DIAGS);
 * ADIA_ERR_UNSUPPORTED where one cannot lend them or the types differ. */
static adia_status part_views(const adia_dist_matrix *D, adia_device_dia *views, int64_t *off)
{
    for (int k = 0; k < D->nparts; k++) {
        adia_status s = adia_plan_device_dia(D->part[k].plan, off + (size_t)k * BLOCK_MAX_DIAGS,
                                             BLOCK_MAX_DIAGS, &views[k]);
        if (s != ADIA_OK) return ADIA_ERR_UNSUPPORTED;
        if (views[k].values_type != views[0].values_type) return ADIA_ERR_UNSUPPORTED;
    }
    return ADIA_OK;
}

/* What a part's diagonal offset loses to become the block's: its rows
 * start row0 into the block, its columns own_pos before the own rows
 * when it reads the local x. */
static int64_t part_shift(const adia_dist_matrix *D, const dist_part *p)
{
    return (p->x_own ? 0 : D->own_pos) + p->row0;
}

/* The block's offsets: every part diagonal's, shifted, that has an entry
 * in a rows x rows block, ascending and distinct; their count.  b has
 * room for all the parts' diagonals (DIST_PARTS x BLOCK_MAX_DIAGS). */
static int block_offsets(const adia_dist_matrix *D, const adia_device_dia *views, int64_t rows,
                         int64_t *b)
{
    int n = 0;
    for (int k = 0; k < D->nparts; k++)
        for (int d = 0; d < views[k].ndiag; d++) {
            const int64_t o = views[k].offsets[d] - part_shift(D, &D->part[k]);
            if (o > -rows && o < rows) b[n++] = o;
        }
    qsort(b, (size_t)n, sizeof *b, cmp_i64);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || b[i] != b[m - 1]) b[m++] = b[i];
    return m;
}

/* The index of o in b[0..n) (present). */
static int find(const int64_t *b, int n, int64_t o)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (b[mid] < o) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The parts' diagonals copied into values (ndiag x rows, zeroed), the
 * own rows from row `below` (a slab's ghost planes before them). */
static adia_status gather(const adia_dist_matrix *D, const adia_device_dia *views,
                          const int64_t *b, int nb, int64_t rows, int64_t below, char *values,
                          size_t vs)
{
    adia_status s = adia__dist_cuda(cudaMemset(values, 0, (size_t)nb * (size_t)rows * vs),
                                    "cudaMemset (the own block)");
    for (int k = 0; k < D->nparts && s == ADIA_OK; k++) {
        const dist_part *p = &D->part[k];
        for (int d = 0; d < views[k].ndiag && s == ADIA_OK; d++) {
            const int64_t o = views[k].offsets[d] - part_shift(D, p);
            const int e = find(b, nb, o);
            if (e >= nb || b[e] != o) continue;   /* no entry in these columns */
            const size_t at = ((size_t)e * (size_t)rows + (size_t)(below + p->row0)) * vs;
            s = adia__dist_cuda(cudaMemcpy(values + at,
                                           (const char *)views[k].values +
                                               (size_t)d * (size_t)views[k].rows * vs,
                                           (size_t)p->rows * vs, cudaMemcpyDeviceToDevice),
                                "cudaMemcpy (the own block's diagonals)");
        }
    }
    return s;
}

adia_status adia__dist_device_block(const adia_dist_matrix *D, const adia_plan_hints *hints,
                                    adia_plan **plan)
{
    *plan = NULL;
    adia_device_dia views[DIST_PARTS];
    /* the parts' offsets, then the block's (before duplicates go: as many) */
    int64_t *off = malloc((size_t)2 * DIST_PARTS * BLOCK_MAX_DIAGS * sizeof *off);
    if (!off) return adia_set_error(ADIA_ERR_NO_MEMORY, "rank %d: the own block's offsets: out "
                                    "of memory", D->rank);
    int64_t *b = off + (size_t)DIST_PARTS * BLOCK_MAX_DIAGS;
    adia_status s = part_views(D, views, off);
    const int nb = s == ADIA_OK ? block_offsets(D, views, D->rows, b) : 0;
    /* dia's storage only where it suits the block: at most as many
     * diagonals as a part may lend, at most 3 slots per nonzero (the
     * planner's bound for a diagonal matrix); else the host route plans it */
    int64_t nnz = 0;
    for (int k = 0; k < D->nparts; k++) nnz += adia_format_nnz(adia_plan_format(D->part[k].plan));
    const double slots = (double)nb * (double)D->rows;
    if (s == ADIA_OK && (nb > BLOCK_MAX_DIAGS || slots > 3.0 * (double)nnz + (double)D->rows))
        s = ADIA_ERR_UNSUPPORTED;
    if (s != ADIA_OK) {
        free(off);
        return ADIA_ERR_UNSUPPORTED;   /* no error kept: the host route follows */
    }
    const size_t vs = adia_value_size(views[0].values_type);
    void *values = NULL;
    s = adia__dist_cuda(cudaMalloc(&values, (size_t)(nb > 0 ? nb : 1) * (size_t)D->rows * vs),
                        "cudaMalloc (the own block)");
    if (s == ADIA_OK) s = gather(D, views, b, nb, D->rows, 0, values, vs);
    if (s != ADIA_OK) {
        cudaFree(values);
        free(off);
        return s;
    }
    adia_device_dia B = {.rows = (int32_t)D->rows, .cols = (int32_t)D->rows, .ndiag = nb,
                         .offsets = b, .values = values,
                         .values_type = views[0].values_type, .adopt = 1};
    s = adia_plan_create_device_dia(&B, hints, plan);   /* takes values, even on failure */
    free(off);
    return s;
}

int adia__dist_device_offsets(const adia_dist_matrix *D, int64_t *off, int most)
{
    adia_device_dia views[DIST_PARTS];
    int64_t *lent = malloc((size_t)2 * DIST_PARTS * BLOCK_MAX_DIAGS * sizeof *lent);
    if (!lent) return -1;
    int n = part_views(D, views, lent) == ADIA_OK
                ? block_offsets(D, views, D->n, lent + DIST_PARTS * BLOCK_MAX_DIAGS) : -1;
    if (n > most) n = -1;
    for (int e = 0; e < n; e++) off[e] = lent[DIST_PARTS * BLOCK_MAX_DIAGS + e];
    free(lent);
    return n;
}

adia_status adia__dist_device_slab(const adia_dist_matrix *D, const adia_plan_hints *hints,
                                   int64_t rows, int64_t below, const int64_t *b, int nb,
                                   adia_status (*exchange)(void *ctx, double *v), void *ctx,
                                   adia_plan **plan)
{
    *plan = NULL;
    adia_device_dia views[DIST_PARTS];
    int64_t *off = malloc((size_t)DIST_PARTS * BLOCK_MAX_DIAGS * sizeof *off);
    adia_status s = off ? part_views(D, views, off)
                        : adia_set_error(ADIA_ERR_NO_MEMORY, "the slab's offsets: out of memory");
    if (s == ADIA_OK && views[0].values_type != ADIA_DOUBLE)
        s = adia_set_error(ADIA_ERR_UNSUPPORTED, "the slab of a float device matrix");
    void *values = NULL;
    if (s == ADIA_OK)
        s = adia__dist_cuda(cudaMalloc(&values, (size_t)(nb > 0 ? nb : 1) * (size_t)rows * 8),
                            "cudaMalloc (the slab)");
    if (s == ADIA_OK) s = gather(D, views, b, nb, rows, below, values, 8);
    free(off);
    /* every diagonal's ghost planes from their owners: the same count of
     * exchanges on every process (b is the union of all processes') */
    adia_status a = adia__dist_agree(D->comm, s);
    for (int e = 0; e < nb && a == ADIA_OK; e++)
        a = adia__dist_agree(D->comm, exchange(ctx, (double *)values + (size_t)e * (size_t)rows));
    if (a == ADIA_OK) a = adia__dist_agree(D->comm, adia__dist_cuda(cudaDeviceSynchronize(),
                                                                  "cudaDeviceSynchronize (slab)"));
    if (a != ADIA_OK) {
        cudaFree(values);
        return a;
    }
    adia_device_dia B = {.rows = (int32_t)rows, .cols = (int32_t)rows, .ndiag = nb,
                         .offsets = b, .values = values, .values_type = ADIA_DOUBLE, .adopt = 1};
    return adia_plan_create_device_dia(&B, hints, plan);   /* takes values, even on failure */
}
