/* diag_formats.c -- the five diagonal formats as partition policies over the
 * storage core (diag_core.c): each decides only how rows are cut into pieces
 * and which offsets each piece keeps.
 *
 *   dia     one piece, every diagonal (Bell & Garland)
 *   hdi     hacks of `hack` rows, each its own present diagonals (Barbieri)
 *   brcsd1  pieces from the diagonals' start/end rows, trimmed to >= eta apart,
 *           rounded to B and split into B-row blocks; a piece keeps every
 *           diagonal that crosses its rows (paper Fig. 6)
 *   brcsd2  B-row pieces, each keeps the diagonals with a nonzero in it
 *           (paper Fig. 10)
 *   crsd    `segment`-row pieces; a diagonal with a single nonzero in a
 *           segment is a scatter point, stored apart as COO (Sun et al.)
 *
 * Identical offset lists always share one group (the core does that). */
#include "diag_core.h"

#include <inttypes.h>
#include <math.h>

/* ------------------------------------------------------- offset lists */

typedef struct offset_set {
    int32_t *offs;
    int32_t K;
} offset_set;

/* Every offset with a nonzero, ascending: marks over the rows+cols-1
 * possible offsets, O(nnz + rows + cols). */
static adia_status all_offsets(const adia_csr *A, offset_set *set)
{
    int64_t span = (int64_t)A->rows + A->cols;
    uint8_t *mark = adia__calloc((size_t)span, 1, "diagonal marks");
    if (!mark) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel for schedule(static) if (A->nnz > 32768) num_threads(adia__threads())
    for (int32_t r = 0; r < A->rows; r++)
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++) {
            int64_t at = (int64_t)A->colind[j] - r + A->rows - 1;
#pragma omp atomic write
            mark[at] = 1;
        }
    int64_t K = 0;
    for (int64_t i = 0; i < span; i++) K += mark[i];
    set->offs = adia__alloc((size_t)K, sizeof *set->offs, "diagonal offsets");
    if (!set->offs) {
        free(mark);
        return ADIA_ERR_NO_MEMORY;
    }
    set->K = 0;
    for (int64_t i = 0; i < span; i++)
        if (mark[i]) set->offs[set->K++] = (int32_t)(i - (A->rows - 1));
    free(mark);
    return ADIA_OK;
}

/* Does diagonal o cross rows [r0, r1) inside the matrix?  It covers rows
 * max(0,-o) .. min(rows, cols-o) - 1. */
static int crosses(const adia_csr *A, int64_t o, int32_t r0, int32_t r1)
{
    int64_t lo = -o > r0 ? -o : r0;
    int64_t hi = (int64_t)A->cols - o < r1 ? (int64_t)A->cols - o : r1;
    return lo < hi;
}

/* The offsets of the set that cross rows [r0, r1); counts only if out is NULL. */
static int32_t crossing(const adia_csr *A, const void *ctx, int32_t r0, int32_t r1,
                        int32_t *out, int32_t *work, uint8_t *scatter)
{
    (void)work;
    (void)scatter;
    const offset_set *set = ctx;
    int32_t n = 0;
    for (int32_t k = 0; k < set->K; k++)
        if (crosses(A, set->offs[k], r0, r1)) {
            if (out) out[n] = set->offs[k];
            n++;
        }
    return n;
}
static int64_t crossing_bound(const adia_csr *A, const void *ctx, int32_t r0, int32_t r1)
{
    return crossing(A, ctx, r0, r1, NULL, NULL, NULL);
}

/* The offsets with a nonzero in rows [r0, r1): at most the nonzeros there. */
static int64_t present_bound(const adia_csr *A, const void *ctx, int32_t r0, int32_t r1)
{
    (void)ctx;
    int64_t n = A->rowptr[r1] - A->rowptr[r0], span = (int64_t)A->rows + A->cols - 1;
    return n < span ? n : span;
}

/* Union of the rows' (sorted) offsets with counts, one merge per row: the
 * cost is rows*K + nonzeros, the piece's stored slots plus its nonzeros.
 * With ctx pointing to a nonzero int (CRSD), a diagonal with a single
 * nonzero in the piece is not kept and that nonzero is flagged a scatter point. */
static int32_t present(const adia_csr *A, const void *ctx, int32_t r0, int32_t r1,
                       int32_t *out, int32_t *work, uint8_t *scatter)
{
    int split = ctx && *(const int *)ctx;
    int64_t W = present_bound(A, ctx, r0, r1);
    int32_t *cur = work, *cc = work + W, *nxt = work + 2 * W, *nc = work + 3 * W;
    int32_t n = 0;
    for (int32_t r = r0; r < r1; r++) {
        int64_t j = A->rowptr[r], je = A->rowptr[r + 1];
        int32_t i = 0, m = 0;
        while (i < n || j < je) {
            int64_t o = j < je ? (int64_t)A->colind[j] - r : INT64_MAX;
            if (i < n && cur[i] < o) {
                nxt[m] = cur[i]; nc[m++] = cc[i++];
            } else if (i < n && cur[i] == o) {
                nxt[m] = cur[i]; nc[m++] = cc[i++] + 1; j++;
            } else {
                nxt[m] = (int32_t)o; nc[m++] = 1; j++;
            }
        }
        int32_t *t = cur; cur = nxt; nxt = t;
        t = cc; cc = nc; nc = t;
        n = m;
    }
    int32_t kept = 0;
    for (int32_t i = 0; i < n; i++)
        if (!split || cc[i] > 1) out[kept++] = cur[i];
    if (!split) return kept;
    for (int32_t r = r0; r < r1; r++) {
        int32_t i = 0;
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++) {
            int64_t o = (int64_t)A->colind[j] - r;
            while (cur[i] < o) i++;
            if (cc[i] == 1) scatter[j] = 1;
        }
    }
    return kept;
}

/* ------------------------------------------------------------ policies */

/* One piece of every row (a single row for an empty matrix). */
static adia_status dia_piece_rows(const adia_format_params *p, int32_t rows, int32_t *size)
{
    (void)p;
    *size = rows > 0 ? rows : 1;
    return ADIA_OK;
}

static adia_status dia_partition(const adia_csr *A, const adia_format_params *p,
                                 adia_diag_partition *part)
{
    int32_t size;
    ADIA_TRY(dia_piece_rows(p, A->rows, &size));
    offset_set set = {0};
    ADIA_TRY(adia__diag_equal_pieces(A->rows, size, part));
    ADIA_TRY(all_offsets(A, &set));
    adia_status s = adia__diag_fill_lists(A, &set, crossing_bound, crossing, part);
    free(set.offs);
    return s;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* BRCSD-I piece points (paper Fig. 6): 0, rows, -o (o<0), cols-o (o>0),
 * clipped to [0, rows], sorted, unique; trimmed so neighbours are >= eta
 * apart (first and last kept); rounded to multiples of B.  Returns the count. */
static int32_t brcsd1_points(const adia_csr *A, const offset_set *set, int32_t eta,
                             int32_t B, int64_t *pt)
{
    int32_t n = 0, m = A->rows;
    pt[n++] = 0;
    pt[n++] = m;
    for (int32_t k = 0; k < set->K; k++) {
        int64_t o = set->offs[k], q = o < 0 ? -o : (int64_t)A->cols - o;
        if (o != 0) pt[n++] = q < 0 ? 0 : q > m ? m : q;
    }
    qsort(pt, (size_t)n, sizeof *pt, cmp_i64);
    int32_t t = 1;                        /* trim: keep pt[0], then >= eta */
    for (int32_t i = 1; i < n - 1; i++)
        if (pt[i] - pt[t - 1] >= eta) pt[t++] = pt[i];
    if (t > 1 && m - pt[t - 1] < eta) t--; /* the last point must stay */
    pt[t++] = m;
    int32_t u = 1;                        /* round interior points to B */
    for (int32_t i = 1; i < t - 1; i++) {
        int64_t q = (pt[i] + B / 2) / B * B;
        if (q > pt[u - 1] && q < m) pt[u++] = q;
    }
    if (m > 0) pt[u++] = m;
    return u;
}

static adia_status brcsd1_partition(const adia_csr *A, const adia_format_params *p,
                                    adia_diag_partition *part)
{
    int32_t B = adia_param(p->block_rows, 256), eta = adia_param(p->eta, B);
    offset_set set = {0};
    ADIA_TRY(all_offsets(A, &set));
    int64_t *pt = adia__alloc((size_t)set.K + 2, sizeof *pt, "BRCSD-I piece points");
    adia_status s = ADIA_ERR_NO_MEMORY;
    if (pt) {
        int32_t np = brcsd1_points(A, &set, eta, B, pt), n = 0;
        int64_t pieces = 0;               /* split segments into B-row blocks */
        for (int32_t i = 0; i + 1 < np; i++) pieces += (pt[i + 1] - pt[i] + B - 1) / B;
        part->piece_start = adia__alloc((size_t)pieces + 1, sizeof *part->piece_start, "BRCSD-I pieces");
        if (part->piece_start) {
            for (int32_t i = 0; i + 1 < np; i++)
                for (int64_t r = pt[i]; r < pt[i + 1]; r += B) part->piece_start[n++] = (int32_t)r;
            part->piece_start[n] = A->rows;
            part->n_pieces = n;
            s = adia__diag_fill_lists(A, &set, crossing_bound, crossing, part);
        }
    }
    free(pt);
    free(set.offs);
    return s;
}

/* Hacks of `hack` rows, whole warps each. */
static adia_status hdi_piece_rows(const adia_format_params *p, int32_t rows, int32_t *size)
{
    (void)rows;
    *size = adia_param(p->hack, 128);
    if (*size % 32)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "hdi: hack=%" PRId32 " must be a multiple of 32 (the warp size)", *size);
    return ADIA_OK;
}

/* Equal pieces from `piece_rows`, each keeping its present diagonals. */
static adia_status present_pieces(const adia_csr *A, const adia_format_params *p,
                                  adia_diag_piece_rows_fn piece_rows, adia_diag_partition *part)
{
    int32_t size;
    ADIA_TRY(piece_rows(p, A->rows, &size));
    ADIA_TRY(adia__diag_equal_pieces(A->rows, size, part));
    return adia__diag_fill_lists(A, NULL, present_bound, present, part);
}

static adia_status hdi_partition(const adia_csr *A, const adia_format_params *p,
                                 adia_diag_partition *part)
{
    return present_pieces(A, p, hdi_piece_rows, part);
}

/* B-row blocks. */
static adia_status brcsd2_piece_rows(const adia_format_params *p, int32_t rows, int32_t *size)
{
    (void)rows;
    *size = adia_param(p->block_rows, 256);
    return ADIA_OK;
}

static adia_status brcsd2_partition(const adia_csr *A, const adia_format_params *p,
                                    adia_diag_partition *part)
{
    return present_pieces(A, p, brcsd2_piece_rows, part);
}

static adia_status crsd_partition(const adia_csr *A, const adia_format_params *p,
                                  adia_diag_partition *part)
{
    static const int split = 1;
    int32_t seg = adia_param(p->segment, 4);
    if (seg != 2 && seg != 4 && seg != 8)
        return adia__error(ADIA_ERR_INVALID_ARG, "crsd: seg=%" PRId32 " must be 2, 4 or 8", seg);
    ADIA_TRY(adia__diag_equal_pieces(A->rows, seg, part));
    part->scatter = adia__calloc((size_t)A->nnz, 1, "CRSD scatter flags");
    if (!part->scatter) return ADIA_ERR_NO_MEMORY;
    return adia__diag_fill_lists(A, &split, present_bound, present, part);
}

/* ------------------------------------------------------- cost model */

/* Predicted storage (the planner's, plan_model.c): exact for dia and hdi
 * (distinct offsets per hack, counted), estimates for the BRCSD groups. */
static int64_t dia_predict(const adia_model_input *in, int *exact)
{
    int64_t rows = in->A->rows, nd = in->f->n_diag;
    *exact = 1;
    return adia__diag_predict_bytes(adia_sat_mul(nd, rows), nd, rows > 0 ? 1 : 0, 1, 0,
                                   (int64_t)adia_value_size(in->vtype));
}
static int64_t hdi_predict(const adia_model_input *in, int *exact)
{
    const adia_block_count *h = &in->hack;
    *exact = 1;
    if (adia_param(in->p->hack, 128) % 32) return -1;
    return adia__diag_predict_bytes(h->slots, h->offsets, h->blocks, h->blocks, 1,
                                   (int64_t)adia_value_size(in->vtype));
}
/* BRCSD-I: every diagonal over its in-matrix length, widened by about one
 * B-row block where its ends are rounded; pieces: B-blocks + cuts. */
static int64_t brcsd1_predict(const adia_model_input *in, int *exact)
{
    const adia_features *f = in->f;
    int64_t rows = in->A->rows, nnz = in->A->nnz, B = adia_param(in->p->block_rows, 256);
    double len_sum = nnz > 0 && f->dia_fill > 0 ? (double)nnz / f->dia_fill : 0;
    double slots = fmin(len_sum + (double)f->n_diag * B, (double)f->n_diag * rows);
    int64_t pieces = (rows + B - 1) / B + 2 * f->n_diag;
    *exact = 0;
    return adia__diag_predict_bytes((int64_t)slots,
                                   f->n_diag * (int64_t)fmin(pieces, 2 * f->n_diag + 1), pieces,
                                   pieces, 0, (int64_t)adia_value_size(in->vtype));
}
static int64_t brcsd2_predict(const adia_model_input *in, int *exact)
{
    const adia_block_count *b = &in->block;
    *exact = 0;
    return adia__diag_predict_bytes(b->slots, b->group_offsets, b->blocks, b->groups, 0,
                                   (int64_t)adia_value_size(in->vtype));
}

/* ------------------------------------------------------------ tables */

/* A diagonal format is its partition policy (and piece_rows where its
 * pieces are equal and keep their present diagonals): the diagonal core
 * fills every other slot, the GPU's included (registry.c). */
const adia_format_ops adia__format_dia = {
    .name = "dia",
    .description = "DIA: one offset list for all rows (Bell & Garland)",
    .diag = {.policy = dia_partition, .per_piece = 0, .piece_rows = dia_piece_rows},
    .model = {dia_predict, 0.60, 0.95, 1, 3, 1.79, 0.077, ADIA_STEPS_N_DIAG}, /* contiguous x and data */
};
const adia_format_ops adia__format_hdi = {
    .name = "hdi",
    .description = "HDI: DIA per hack of rows (hack=128, multiple of 32)",
    /* HDI: offsets per piece, no sharing */
    .diag = {.policy = hdi_partition, .per_piece = 1, .piece_rows = hdi_piece_rows},
    .model = {hdi_predict, 0.55, 0.80, 1, 3, 1.98, 0.209, ADIA_STEPS_HACK},
};
const adia_format_ops adia__format_brcsd1 = {
    .name = "brcsd1",
    .description = "BRCSD-I: row pieces cut where diagonals start/end (B=256, eta=B)",
    .diag = {.policy = brcsd1_partition, .per_piece = 0},
    .model = {brcsd1_predict, 0.55, 0.90, 1, 3, 1.84, 0.072, ADIA_STEPS_BLOCK},
};
const adia_format_ops adia__format_brcsd2 = {
    .name = "brcsd2",
    .description = "BRCSD-II: B-row pieces keep their nonzero diagonals (B=256)",
    .diag = {.policy = brcsd2_partition, .per_piece = 0, .piece_rows = brcsd2_piece_rows},
    .model = {brcsd2_predict, 0.55, 0.90, 1, 3, 1.82, 0.074, ADIA_STEPS_BLOCK},
};
const adia_format_ops adia__format_crsd = {
    .name = "crsd",
    .description = "CRSD: 2/4/8-row segments, single-nonzero diagonals as scatter COO (seg=4)",
    .diag = {.policy = crsd_partition, .per_piece = 0},
};
