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
    uint8_t *mark = adia_calloc((size_t)span, 1, "diagonal marks");
    if (!mark) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel for schedule(static) if (A->nnz > 32768)
    for (int32_t r = 0; r < A->rows; r++)
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++) {
            int64_t at = (int64_t)A->colind[j] - r + A->rows - 1;
#pragma omp atomic write
            mark[at] = 1;
        }
    int64_t K = 0;
    for (int64_t i = 0; i < span; i++) K += mark[i];
    set->offs = adia_alloc((size_t)K, sizeof *set->offs, "diagonal offsets");
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

static adia_status dia_partition(const adia_csr *A, const adia_format_params *p,
                                 adia_diag_partition *part)
{
    (void)p;
    offset_set set = {0};
    ADIA_TRY(adia_diag_equal_pieces(A->rows, A->rows > 0 ? A->rows : 1, part));
    ADIA_TRY(all_offsets(A, &set));
    adia_status s = adia_diag_fill_lists(A, &set, crossing_bound, crossing, part);
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
    int64_t *pt = adia_alloc((size_t)set.K + 2, sizeof *pt, "BRCSD-I piece points");
    adia_status s = ADIA_ERR_NO_MEMORY;
    if (pt) {
        int32_t np = brcsd1_points(A, &set, eta, B, pt), n = 0;
        int64_t pieces = 0;               /* split segments into B-row blocks */
        for (int32_t i = 0; i + 1 < np; i++) pieces += (pt[i + 1] - pt[i] + B - 1) / B;
        part->piece_start = adia_alloc((size_t)pieces + 1, sizeof *part->piece_start, "BRCSD-I pieces");
        if (part->piece_start) {
            for (int32_t i = 0; i + 1 < np; i++)
                for (int64_t r = pt[i]; r < pt[i + 1]; r += B) part->piece_start[n++] = (int32_t)r;
            part->piece_start[n] = A->rows;
            part->n_pieces = n;
            s = adia_diag_fill_lists(A, &set, crossing_bound, crossing, part);
        }
    }
    free(pt);
    free(set.offs);
    return s;
}

static adia_status hdi_partition(const adia_csr *A, const adia_format_params *p,
                                 adia_diag_partition *part)
{
    int32_t hack = adia_param(p->hack, 128);
    if (hack % 32)
        return adia_error(ADIA_ERR_INVALID_ARG,
                          "hdi: hack=%" PRId32 " must be a multiple of 32 (the warp size)", hack);
    ADIA_TRY(adia_diag_equal_pieces(A->rows, hack, part));
    return adia_diag_fill_lists(A, NULL, present_bound, present, part);
}

static adia_status brcsd2_partition(const adia_csr *A, const adia_format_params *p,
                                    adia_diag_partition *part)
{
    ADIA_TRY(adia_diag_equal_pieces(A->rows, adia_param(p->block_rows, 256), part));
    return adia_diag_fill_lists(A, NULL, present_bound, present, part);
}

static adia_status crsd_partition(const adia_csr *A, const adia_format_params *p,
                                  adia_diag_partition *part)
{
    static const int split = 1;
    int32_t seg = adia_param(p->segment, 4);
    if (seg != 2 && seg != 4 && seg != 8)
        return adia_error(ADIA_ERR_INVALID_ARG, "crsd: seg=%" PRId32 " must be 2, 4 or 8", seg);
    ADIA_TRY(adia_diag_equal_pieces(A->rows, seg, part));
    part->scatter = adia_calloc((size_t)A->nnz, 1, "CRSD scatter flags");
    if (!part->scatter) return ADIA_ERR_NO_MEMORY;
    return adia_diag_fill_lists(A, &split, present_bound, present, part);
}

/* ------------------------------------------------------- build + tables */

static adia_status build_with(adia_diag_partition_fn policy, int per_piece,
                              const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    adia_diag_partition part = {0};
    adia_status s = policy(A, p, &part);
    if (s != ADIA_OK) {
        adia_diag_partition_free(&part);
        return s;
    }
    return adia_diag_build(A, vt, &part, per_piece, (adia_diag **)impl);
}

/* One build per format (the table slot has no room for the policy). */
static adia_status dia_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    return build_with(dia_partition, 0, A, p, vt, impl);
}
static adia_status hdi_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    return build_with(hdi_partition, 1, A, p, vt, impl); /* HDI: no sharing */
}
static adia_status brcsd1_build(const adia_csr *A, const adia_format_params *p,
                                adia_value_type vt, void **impl)
{
    return build_with(brcsd1_partition, 0, A, p, vt, impl);
}
static adia_status brcsd2_build(const adia_csr *A, const adia_format_params *p,
                                adia_value_type vt, void **impl)
{
    return build_with(brcsd2_partition, 0, A, p, vt, impl);
}
static adia_status crsd_build(const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    return build_with(crsd_partition, 0, A, p, vt, impl);
}

const adia_format_ops adia_format_dia =
    ADIA_DIAG_OPS("dia", "DIA: one offset list for all rows (Bell & Garland)", dia_build);
const adia_format_ops adia_format_hdi =
    ADIA_DIAG_OPS("hdi", "HDI: DIA per hack of rows (hack=128, multiple of 32)", hdi_build);
const adia_format_ops adia_format_brcsd1 =
    ADIA_DIAG_OPS("brcsd1", "BRCSD-I: row pieces cut where diagonals start/end (B=256, eta=B)", brcsd1_build);
const adia_format_ops adia_format_brcsd2 =
    ADIA_DIAG_OPS("brcsd2", "BRCSD-II: B-row pieces keep their nonzero diagonals (B=256)", brcsd2_build);
const adia_format_ops adia_format_crsd =
    ADIA_DIAG_OPS("crsd", "CRSD: 2/4/8-row segments, single-nonzero diagonals as scatter COO (seg=4)", crsd_build);
