/* dist_parts.c -- a block's rows cut into parts (dist.h, dist_part): where
 * a block is cut, the parts' plans, the CPU product over them (the
 * device's is dist_device.c's), what info reports. */
#include "dist.h"

/* A block is cut when its interior holds at least this share of
 * its rows: a matrix with far diagonals (type II) has next to none, and
 * its ends' parts would only add launches. */
#define CUT_MIN_SHARE 0.5

static void set_part(adia_dist_matrix *D, int32_t row0, int32_t rows, int x_own, int32_t band,
                     int32_t band_end)
{
    if (rows <= 0) return;
    if (band < 0) band = 0;
    if (band_end > D->rows) band_end = (int32_t)D->rows;
    D->part[D->nparts++] = (dist_part){.row0 = row0, .rows = rows, .x_own = x_own, .band = band,
                                       .band_len = band_end > band ? band_end - band : 0};
}

/* A cut at [lo, hi) worth making; else *lo = *hi = 0.  All rows interior
 * (one process) is a cut too: one part on the owned x. */
static void worth_cutting(const adia_dist_matrix *D, int32_t *lo, int32_t *hi)
{
    if (*hi - *lo < CUT_MIN_SHARE * (double)D->rows) *lo = *hi = 0;
}

void adia__dist_cut_rows(const adia_dist_matrix *D, const int64_t *off, int nd, int32_t *lo,
                         int32_t *hi)
{
    /* row i reads global column first + i + o: another process's unless it
     * lies in the owned rows or outside the matrix (a slot holding zero,
     * never read) -- above the block for i < -o when a process holds rows
     * above, below it for i >= rows - o when one holds rows below */
    int64_t a = 0, b = D->rows;
    for (int k = 0; k < nd; k++) {
        if (off[k] < 0 && D->first > 0 && -off[k] > a) a = -off[k];
        if (off[k] > 0 && D->first + D->rows < D->n && D->rows - off[k] < b) b = D->rows - off[k];
    }
    *lo = (int32_t)(a < D->rows ? a : D->rows);
    *hi = (int32_t)(b > *lo ? b : *lo);
    worth_cutting(D, lo, hi);
}

/* The longest run of rows whose columns all lie in the owned rows. */
static void interior_run(const adia_dist_matrix *D, const adia_csr_view *v, int32_t *lo,
                         int32_t *hi)
{
    int32_t start = 0;
    *lo = *hi = 0;
    for (int32_t i = 0; i <= v->rows; i++) {
        int inside = i < v->rows;
        for (int64_t k = inside ? v->rowptr[i] : 0; inside && k < v->rowptr[i + 1]; k++)
            inside = v->colind[k] >= D->own_pos && v->colind[k] < D->own_pos + D->rows;
        if (inside) continue;
        if (i - start > *hi - *lo) {
            *lo = start;
            *hi = i;
        }
        start = i + 1;
    }
    worth_cutting(D, lo, hi);
}

/* The owned rows that rows [r0, r1) read: [*a, *b) (empty: a = b). */
static void owned_band(const adia_dist_matrix *D, const adia_csr_view *v, int32_t r0, int32_t r1,
                       int32_t *a, int32_t *b)
{
    int64_t lo = D->rows, hi = 0;
    for (int64_t k = v->rowptr[r0]; k < v->rowptr[r1]; k++) {
        int64_t r = v->colind[k] - D->own_pos;
        if (r < 0 || r >= D->rows) continue;
        if (r < lo) lo = r;
        if (r + 1 > hi) hi = r + 1;
    }
    *a = (int32_t)lo;
    *b = (int32_t)(hi > lo ? hi : lo);
}

/* Rows [p->row0, + p->rows) of v as a matrix in the part's columns. */
static adia_status slice(const adia_dist_matrix *D, const adia_csr_view *v, const dist_part *p,
                         adia_matrix **out)
{
    const int64_t base = v->rowptr[p->row0], nnz = v->rowptr[p->row0 + p->rows] - base;
    const int32_t shift = p->x_own ? D->own_pos : 0;
    int64_t *rp = adia__dist_alloc((size_t)p->rows + 1, sizeof *rp, "a part's rows");
    int32_t *ci = adia__dist_alloc((size_t)nnz, sizeof *ci, "a part's columns");
    adia_status s = rp && ci ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        for (int32_t i = 0; i <= p->rows; i++) rp[i] = v->rowptr[p->row0 + i] - base;
        for (int64_t k = 0; k < nnz; k++) ci[k] = v->colind[base + k] - shift;
        s = adia_matrix_create_csr(p->rows, p->x_own ? (int32_t)D->rows : D->local_cols, nnz, rp,
                                   ci, v->values + base, ADIA_DOUBLE, out);
    }
    free(rp);
    free(ci);
    return s;
}

adia_status adia__dist_plan_parts(adia_dist_matrix *D, const adia_matrix *local,
                                  const adia_plan_hints *hints)
{
    adia_plan_hints h = adia__dist_block_hints(D, hints);
    adia_csr_view v;
    DIST_TRY(adia_matrix_csr(local, &v));
    int32_t lo, hi, a, b;
    interior_run(D, &v, &lo, &hi);
    if (lo == hi) {   /* one part: the block as it is, all owned rows copied */
        set_part(D, 0, (int32_t)D->rows, 0, 0, (int32_t)D->rows);
        return adia_plan_create(local, &h, &D->part[0].plan);
    }
    owned_band(D, &v, 0, lo, &a, &b);
    set_part(D, 0, lo, 0, a, b);
    set_part(D, lo, hi - lo, 1, 0, 0);
    owned_band(D, &v, hi, (int32_t)D->rows, &a, &b);
    set_part(D, hi, (int32_t)D->rows - hi, 0, a, b);
    for (int k = 0; k < D->nparts; k++) {
        adia_matrix *M = NULL;
        adia_status s = slice(D, &v, &D->part[k], &M);
        if (s == ADIA_OK) s = adia_plan_create(M, &h, &D->part[k].plan);
        adia_matrix_destroy(M);
        DIST_TRY(s);
    }
    return ADIA_OK;
}

adia_status adia__dist_run_parts(const adia_dist_matrix *D, double alpha, const double *x,
                                 const double *x_local, double beta, double *y, int x_own,
                                 const dist_sums *sums, void *stream)
{
    for (int k = 0; k < D->nparts; k++) {
        const dist_part *p = &D->part[k];
        const double *in = x_own ? x : x_local;
        if (p->x_own != x_own) continue;
        if (sums)   /* each row's own x entry is x's (the owned rows) */
            DIST_TRY(adia_spmv_sums_async(p->plan, alpha, in, y + p->row0, x + p->row0,
                                          sums->z ? sums->z + p->row0 : NULL, sums->out,
                                          p->sums_work, stream));
        else   /* a CPU plan runs at once, stream unused */
            DIST_TRY(adia_spmv_async(p->plan, alpha, in, beta, y + p->row0, stream));
    }
    return ADIA_OK;
}

adia_status adia__dist_parts_spmv(adia_dist_matrix *D, double alpha, const double *x, double beta,
                                  double *y)
{
    double t0 = MPI_Wtime();
    /* posted whatever happens: the peers wait for these messages */
    adia_status s = D->halo.transport->post(D, x, D->x_local, NULL);
    for (int k = 0; k < D->nparts; k++) {   /* the owned rows the ends read */
        const dist_part *p = &D->part[k];
        if (!p->x_own)
            memcpy(D->x_local + D->own_pos + p->band, x + p->band,
                   (size_t)p->band_len * sizeof *x);
    }
    double t1 = MPI_Wtime();
    if (s == ADIA_OK) s = adia__dist_run_parts(D, alpha, x, D->x_local, beta, y, 1, NULL, NULL);
    double t2 = MPI_Wtime();
    adia_status w = D->halo.transport->wait(D, D->x_local, NULL);
    D->halo_ms += (t1 - t0 + MPI_Wtime() - t2) * 1e3;
    if (s == ADIA_OK) s = w;
    return s == ADIA_OK ? adia__dist_run_parts(D, alpha, x, D->x_local, beta, y, 0, NULL, NULL)
                        : s;
}

int64_t adia__dist_block_nnz(const adia_dist_matrix *D)
{
    int64_t nnz = 0;
    for (int k = 0; k < D->nparts; k++) nnz += adia_format_nnz(adia_plan_format(D->part[k].plan));
    return nnz;
}

const char *adia__dist_format(const adia_dist_matrix *D)
{
    int big = 0;
    for (int k = 1; k < D->nparts; k++)
        if (D->part[k].rows > D->part[big].rows) big = k;
    return D->nparts ? adia_plan_format_name(D->part[big].plan) : "";
}

void adia__dist_parts_free(adia_dist_matrix *D)
{
    for (int k = 0; k < DIST_PARTS; k++) adia_plan_destroy(D->part[k].plan);
    D->nparts = 0;
}
