/* diag_core.c -- the diagonal storage core shared by dia, hdi, brcsd1,
 * brcsd2 and crsd: turn a partition (pieces + per-piece offset lists) into
 * adia_diag, and everything a format does after that (back to CSR, checks,
 * byte counts, CPU SpMV).  Each format supplies only its partition. */
#include "diag_core.h"

#include <inttypes.h>
#include <stdint.h>

/* Below this much work a parallel region costs more than it saves. */
#define DIAG_PAR_MIN 32768

/* Piece holding row r (r < rows): last p with piece_start[p] <= r. */
static int32_t diag_find_piece(const adia_diag *D, int32_t r)
{
    int32_t lo = 0, hi = D->n_pieces - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (D->piece_start[mid] <= r) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* First scatter point in a row >= r. */
static int64_t lower_row(const int32_t *row, int64_t n, int32_t r)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (row[mid] < r) lo = mid + 1; else hi = mid;
    }
    return lo;
}
static int64_t diag_find_scatter(const adia_diag *D, int32_t r)
{
    return lower_row(D->scatter_row, D->n_scatter, r);
}

/* ---------------------------------------------------- SpMV helpers */

/* Cache line, the prefetch step. */
#define DIAG_LINE 64

/* The SpMV chunk kernel is compiled for AVX2 beside the baseline and picked
 * at load time where the toolchain can (GCC/Clang target_clones, x86-64
 * ELF ifunc): on one core the SSE2 loop retires too few bytes per cycle to
 * keep up with memory (it ran at 25-29 GB/s against 40 GB/s read). */
#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define DIAG_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef DIAG_SIMD_CLONES
#define DIAG_SIMD_CLONES
#endif

/* Whether any of v[0, n) is Inf or NaN: an exponent of all ones, found
 * with integer adds and ors on the bits (a loop that vectorises on SSE2,
 * where a compare of doubles into an int does not). */
static int diag_any_nonfinite(const double *restrict v, int32_t n)
{
    const uint64_t exponent = 0x7ff0000000000000u, one = (uint64_t)1 << 52;
    uint64_t any = 0;
    for (int32_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        any |= (bits & exponent) + one;   /* the top bit: exponent all ones */
    }
    return (int)(any >> 63);
}

/* Bytes one product moves (data, x, y) above which y is written with
 * non-temporal stores (beta = 0): the write then skips the read for
 * ownership of every line of y (a third of the traffic of a 7-diagonal
 * matrix is y), and a product this size would have pushed y out of a
 * last-level cache (32 MiB here) with its own stream anyway. */
#define DIAG_STREAM_MIN ((int64_t)32 << 20)

#ifdef __SSE2__
#include <emmintrin.h>

static int diag_streams_y(const adia_diag *D)
{
    int64_t vs = (int64_t)adia_value_size(D->vtype);
    return (D->piece_data[D->n_pieces] + D->rows + D->cols) * vs > DIAG_STREAM_MIN;
}
/* y[0, n) = alpha acc by non-temporal stores, after scalar ones up to the
 * 16-byte boundary the SSE2 stores need. */
static void diag_stream_d(double *y, const double *acc, int32_t n, double alpha)
{
    int32_t i = 0;
    for (; i < n && ((uintptr_t)(y + i) & 15); i++) y[i] = alpha * acc[i];
    for (; i + 2 <= n; i += 2) _mm_stream_pd(y + i, _mm_set_pd(alpha * acc[i + 1], alpha * acc[i]));
    for (; i < n; i++) y[i] = alpha * acc[i];
}
static void diag_stream_f(float *y, const double *acc, int32_t n, double alpha)
{
    int32_t i = 0;
    for (; i < n && ((uintptr_t)(y + i) & 15); i++) y[i] = (float)(alpha * acc[i]);
    for (; i + 4 <= n; i += 4)
        _mm_stream_ps(y + i, _mm_set_ps((float)(alpha * acc[i + 3]), (float)(alpha * acc[i + 2]),
                                        (float)(alpha * acc[i + 1]), (float)(alpha * acc[i])));
    for (; i < n; i++) y[i] = (float)(alpha * acc[i]);
}
/* Non-temporal stores are weakly ordered: a thread's must be globally
 * visible before the region's barrier hands y to the caller. */
static void diag_stream_fence(void) { _mm_sfence(); }
#else
static int diag_streams_y(const adia_diag *D) { (void)D; return 0; }
static void diag_stream_d(double *y, const double *acc, int32_t n, double alpha) { (void)y; (void)acc; (void)n; (void)alpha; }
static void diag_stream_f(float *y, const double *acc, int32_t n, double alpha) { (void)y; (void)acc; (void)n; (void)alpha; }
static void diag_stream_fence(void) {}
#endif

#define VALUE double
#define FN(name) name##_d
#include "diag_kernel.inc"
#define VALUE float
#define FN(name) name##_f
#include "diag_kernel.inc"

static double diag_get(const void *v, adia_value_type vt, int64_t i)
{
    return vt == ADIA_DOUBLE ? ((const double *)v)[i] : (double)((const float *)v)[i];
}
static void diag_set(void *v, adia_value_type vt, int64_t i, double x)
{
    if (vt == ADIA_DOUBLE) ((double *)v)[i] = x; else ((float *)v)[i] = (float)x;
}

/* ------------------------------------------------------------ partition */

void adia__diag_partition_free(adia_diag_partition *part)
{
    free(part->piece_start);
    free(part->list_start);
    free(part->list);
    free(part->scatter);
    memset(part, 0, sizeof *part);
}

adia_status adia__diag_equal_pieces(int32_t rows, int32_t size, adia_diag_partition *part)
{
    if (size <= 0) return adia__error(ADIA_ERR_INVALID_ARG, "piece size %" PRId32 " must be positive", size);
    int32_t n = (int32_t)(((int64_t)rows + size - 1) / size);
    ADIA_ALLOC(part->piece_start, (size_t)n + 1, "diagonal format piece starts");
    for (int32_t p = 0; p < n; p++) part->piece_start[p] = (int32_t)((int64_t)p * size);
    part->piece_start[n] = rows;
    part->n_pieces = n;
    return ADIA_OK;
}

/* Move each piece's list (written at its capacity slot) down so lists are
 * contiguous, and turn list_start into real starts. */
static void compact_lists(adia_diag_partition *part, const int32_t *count)
{
    int64_t at = 0;
    for (int32_t p = 0; p < part->n_pieces; p++) {
        int64_t from = part->list_start[p];
        memmove(part->list + at, part->list + from, (size_t)count[p] * sizeof *part->list);
        part->list_start[p] = at;
        at += count[p];
    }
    part->list_start[part->n_pieces] = at;
}

adia_status adia__diag_fill_lists(const adia_csr *A, const void *ctx,
                                 adia_diag_bound_fn bound, adia_diag_list_fn fn,
                                 adia_diag_partition *part)
{
    int32_t n = part->n_pieces;
    ADIA_ALLOC(part->list_start, (size_t)n + 1, "diagonal format list starts");
    int32_t *count = adia__alloc((size_t)n + 1, sizeof *count, "diagonal format list sizes");
    if (!count) return ADIA_ERR_NO_MEMORY;
    int par = A->nnz > DIAG_PAR_MIN || (int64_t)n * 64 > DIAG_PAR_MIN;
#pragma omp parallel for schedule(dynamic, 64) if (par) num_threads(adia__threads())
    for (int32_t p = 0; p < n; p++)
        part->list_start[p + 1] = bound(A, ctx, part->piece_start[p], part->piece_start[p + 1]);
    /* bounds -> capacity slots (exclusive prefix sum), checked */
    int64_t total = 0, maxb = 0;
    for (int32_t p = 0; p < n; p++) {
        int64_t b = part->list_start[p + 1];
        if (b > maxb) maxb = b;
        part->list_start[p] = total;
        if (!adia_add_i64(total, b, &total) || maxb > INT32_MAX / 4) {
            free(count);
            return adia__error(ADIA_ERR_OVERFLOW, "diagonal format: offset lists too long");
        }
    }
    part->list_start[n] = total;
    part->list = adia__alloc((size_t)total, sizeof *part->list, "diagonal format offset lists");
    int failed = !part->list;
#pragma omp parallel if (par && n > 1) num_threads(adia__threads())
    {
        int32_t *work = failed ? NULL : malloc(((size_t)maxb * 4 + 1) * sizeof *work);
        if (!work) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 16)
        for (int32_t p = 0; p < n; p++)
            count[p] = work ? fn(A, ctx, part->piece_start[p], part->piece_start[p + 1],
                                 part->list + part->list_start[p], work, part->scatter)
                            : 0;
        free(work);
    }
    if (failed) {
        free(count);
        return part->list ? adia__error(ADIA_ERR_NO_MEMORY, "diagonal format: no memory for work lists")
                          : ADIA_ERR_NO_MEMORY;
    }
    compact_lists(part, count);
    free(count);
    return ADIA_OK;
}

/* ------------------------------------------------------------- groups */

static uint64_t list_hash(const int32_t *l, int64_t n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
    for (int64_t i = 0; i < n; i++) h = (h ^ (uint32_t)l[i]) * 1099511628211ull;
    return h;
}

/* Give pieces with identical offset lists one shared group (a hash table of
 * lists seen so far), so consecutive runs and repeats further down share. */
static adia_status make_groups(const adia_diag_partition *part, adia_diag *D)
{
    int32_t n = part->n_pieces;
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap *= 2;
    ADIA_ALLOC(D->piece_group, (size_t)n + 1, "diagonal piece groups");
    int32_t *table = adia__alloc(cap, sizeof *table, "diagonal group table");
    int32_t *rep = adia__alloc((size_t)n + 1, sizeof *rep, "diagonal group representatives");
    if (!table || !rep) {
        free(table);
        free(rep);
        return ADIA_ERR_NO_MEMORY;
    }
    memset(table, 0xff, cap * sizeof *table);
    int32_t ng = 0;
    int64_t noffs = 0;
    for (int32_t p = 0; p < n; p++) {
        const int32_t *l = part->list + part->list_start[p];
        int64_t len = part->list_start[p + 1] - part->list_start[p];
        size_t h = (size_t)list_hash(l, len) & (cap - 1);
        for (;; h = (h + 1) & (cap - 1)) {
            int32_t g = table[h];
            if (g < 0) {
                table[h] = ng;
                rep[ng++] = p;
                noffs += len;
                D->piece_group[p] = ng - 1;
                break;
            }
            int32_t q = rep[g];
            if (part->list_start[q + 1] - part->list_start[q] == len &&
                !memcmp(part->list + part->list_start[q], l, (size_t)len * sizeof *l)) {
                D->piece_group[p] = g;
                break;
            }
        }
    }
    free(table);
    D->n_groups = ng;
    D->group_start = adia__alloc((size_t)ng + 1, sizeof *D->group_start, "diagonal group starts");
    D->offsets = adia__alloc((size_t)noffs, sizeof *D->offsets, "diagonal offsets");
    if (!D->group_start || !D->offsets || noffs > INT32_MAX) {
        free(rep);
        return D->group_start && D->offsets
                   ? adia__error(ADIA_ERR_OVERFLOW, "diagonal format: %" PRId64 " offsets exceed int32", noffs)
                   : ADIA_ERR_NO_MEMORY;
    }
    int32_t at = 0;
    for (int32_t g = 0; g < ng; g++) {
        int32_t q = rep[g];
        int64_t len = part->list_start[q + 1] - part->list_start[q];
        D->group_start[g] = at;
        memcpy(D->offsets + at, part->list + part->list_start[q], (size_t)len * sizeof *D->offsets);
        at += (int32_t)len;
    }
    D->group_start[ng] = at;
    free(rep);
    return ADIA_OK;
}

/* -------------------------------------------------------------- build */

/* piece_data: each piece's first slot (K of its group times its rows). */
static adia_status layout_data(adia_diag *D)
{
    ADIA_ALLOC(D->piece_data, (size_t)D->n_pieces + 1, "diagonal piece data starts");
    int64_t total = 0;
    D->piece_data[0] = 0;
    for (int32_t p = 0; p < D->n_pieces; p++) {
        int32_t g = D->piece_group[p];
        int64_t k = D->group_start[g + 1] - D->group_start[g], slots;
        if (!adia_mul_i64(k, D->piece_start[p + 1] - D->piece_start[p], &slots) ||
            !adia_add_i64(total, slots, &total))
            return adia__error(ADIA_ERR_OVERFLOW, "diagonal format: stored slots overflow at piece %" PRId32, p);
        D->piece_data[p + 1] = total;
    }
    return ADIA_OK;
}

adia_status adia__diag_structure(adia_diag *D, adia_diag_partition *part)
{
    if (part->n_pieces < 0 || part->piece_start[0] != 0 || part->piece_start[part->n_pieces] != D->rows)
        return adia__error(ADIA_ERR_INTERNAL, "diagonal build: partition does not cover rows 0..%" PRId32, D->rows);
    D->n_pieces = part->n_pieces;
    D->piece_start = part->piece_start;
    part->piece_start = NULL;
    ADIA_TRY(make_groups(part, D));
    return layout_data(D);
}

adia_status adia__diag_dia_structure(adia_diag *D, int ndiag, const int64_t *offsets)
{
    adia_diag_partition part = {.n_pieces = 1};
    part.piece_start = adia__calloc(2, sizeof *part.piece_start, "DIA piece");
    part.list_start = adia__calloc(2, sizeof *part.list_start, "DIA offsets");
    part.list = adia__calloc((size_t)ndiag + 1, sizeof *part.list, "DIA offsets");
    adia_status s = part.piece_start && part.list_start && part.list ? ADIA_OK
                                                                     : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        part.piece_start[1] = D->rows;
        part.list_start[1] = ndiag;
        for (int k = 0; k < ndiag; k++) part.list[k] = (int32_t)offsets[k];
        s = adia__diag_structure(D, &part);
    }
    adia__diag_partition_free(&part);
    return s;
}

/* Scatter points (flagged by the policy) and the source entries whose stored
 * value is zero, both row-sorted: one pass over the CSR arrays. */
static adia_status side_lists(adia_diag *D, const adia_csr *A, const uint8_t *scatter)
{
    const double *v = A->values;
    int64_t ns = 0, nz = 0;
#pragma omp parallel for reduction(+ : ns, nz) schedule(static) if (A->nnz > DIAG_PAR_MIN) num_threads(adia__threads())
    for (int64_t j = 0; j < A->nnz; j++) {
        int s = scatter && scatter[j];
        ns += s;
        nz += !s && (D->vtype == ADIA_DOUBLE ? v[j] == 0.0 : (float)v[j] == 0.0f);
    }
    ADIA_ALLOC(D->scatter_row, (size_t)ns, "scatter rows");
    ADIA_ALLOC(D->scatter_col, (size_t)ns, "scatter columns");
    D->scatter_val = adia__alloc((size_t)ns, adia_value_size(D->vtype), "scatter values");
    if (!D->scatter_val) return ADIA_ERR_NO_MEMORY;
    ADIA_ALLOC(D->zero_row, (size_t)nz, "explicit zero rows");
    ADIA_ALLOC(D->zero_col, (size_t)nz, "explicit zero columns");
    for (int32_t r = 0; r < A->rows && ns + nz > 0; r++) /* usually none */
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++) {
            if (scatter && scatter[j]) {
                D->scatter_row[D->n_scatter] = r;
                D->scatter_col[D->n_scatter] = A->colind[j];
                diag_set(D->scatter_val, D->vtype, D->n_scatter++, v[j]);
            } else if (D->vtype == ADIA_DOUBLE ? v[j] == 0.0 : (float)v[j] == 0.0f) {
                D->zero_row[D->n_zero] = r;
                D->zero_col[D->n_zero++] = A->colind[j];
            }
        }
    return ADIA_OK;
}

static adia_status build_parts(const adia_csr *A, adia_diag_partition *part, adia_diag *D)
{
    if (A->vtype != ADIA_DOUBLE)
        return adia__error(ADIA_ERR_INTERNAL, "diagonal build: source must be double");
    ADIA_TRY(adia__diag_structure(D, part));
    D->data = adia__calloc((size_t)D->piece_data[D->n_pieces], adia_value_size(D->vtype), "diagonal data");
    if (!D->data) return ADIA_ERR_NO_MEMORY;
    ADIA_TRY(side_lists(D, A, part->scatter));
    int64_t bad = D->vtype == ADIA_DOUBLE ? diag_fill_d(D, A, part->scatter)
                                          : diag_fill_f(D, A, part->scatter);
    if (bad >= 0)
        return adia__error(ADIA_ERR_INTERNAL,
                          "diagonal build: a nonzero of row %" PRId64 " is on a diagonal its piece does not keep", bad);
    return ADIA_OK;
}

adia_status adia__diag_build(const adia_csr *A, adia_value_type vt,
                            adia_diag_partition *part, int offsets_per_piece,
                            adia_diag **out)
{
    *out = NULL;
    adia_diag *D = adia__calloc(1, sizeof *D, "diagonal format");
    if (!D) {
        adia__diag_partition_free(part);
        return ADIA_ERR_NO_MEMORY;
    }
    D->rows = A->rows;
    D->cols = A->cols;
    D->vtype = vt;
    D->nnz = A->nnz;
    D->offsets_per_piece = offsets_per_piece;
    adia_status s = build_parts(A, part, D);
    adia__diag_partition_free(part);
    if (s != ADIA_OK) {
        adia__diag_free(D);
        return s;
    }
    *out = D;
    return ADIA_OK;
}

/* ------------------------------------------------------- value refill */

/* Zero in D's value type (as side_lists counts it). */
static int diag_zero_in(const adia_diag *D, double v)
{
    return D->vtype == ADIA_DOUBLE ? v == 0.0 : (float)v == 0.0f;
}

/* flags[j] = 1 for A's entries that are D's scatter points (both
 * row-sorted, columns ascending in a row), their new values stored;
 * -1, or the first row whose scatter point is not among A's entries. */
static int64_t refill_scatter(adia_diag *D, const adia_csr *A, uint8_t *flags)
{
    const double *v = A->values;
    for (int64_t s = 0; s < D->n_scatter;) {
        int32_t r = D->scatter_row[s];
        int64_t j = A->rowptr[r], end = A->rowptr[r + 1];
        for (; s < D->n_scatter && D->scatter_row[s] == r; s++) {
            while (j < end && A->colind[j] < D->scatter_col[s]) j++;
            if (j == end || A->colind[j] != D->scatter_col[s]) return r;
            flags[j] = 1;
            diag_set(D->scatter_val, D->vtype, s, v[j]);
        }
    }
    return -1;
}

/* D's zero lists anew from A's values (the entries not in flags). */
static adia_status refill_zero_lists(adia_diag *D, const adia_csr *A, const uint8_t *flags)
{
    const double *v = A->values;
    int64_t nz = 0;
#pragma omp parallel for reduction(+ : nz) schedule(static) if (A->nnz > DIAG_PAR_MIN) num_threads(adia__threads())
    for (int64_t j = 0; j < A->nnz; j++) nz += !(flags && flags[j]) && diag_zero_in(D, v[j]);
    if (nz == 0 && D->n_zero == 0) return ADIA_OK;   /* the usual case: one pass */
    int32_t *zr = adia__alloc((size_t)nz, sizeof *zr, "explicit zero rows");
    int32_t *zc = adia__alloc((size_t)nz, sizeof *zc, "explicit zero columns");
    if (!zr || !zc) {
        free(zr);
        free(zc);
        return ADIA_ERR_NO_MEMORY;
    }
    int64_t n = 0;
    for (int32_t r = 0; r < A->rows && nz > 0; r++)
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++)
            if (!(flags && flags[j]) && diag_zero_in(D, v[j])) {
                zr[n] = r;
                zc[n++] = A->colind[j];
            }
    free(D->zero_row);
    free(D->zero_col);
    D->zero_row = zr;
    D->zero_col = zc;
    D->n_zero = n;
    return ADIA_OK;
}

adia_status adia__diag_refill(adia_diag *D, const adia_csr *A)
{
    if (A->vtype != ADIA_DOUBLE || A->rows != D->rows || A->cols != D->cols || A->nnz != D->nnz)
        return adia__error(ADIA_ERR_INTERNAL, "diagonal refill: a source of another shape or type");
    if (!D->data) {   /* built on the device, never downloaded: padding must read 0 */
        D->data = adia__calloc((size_t)D->piece_data[D->n_pieces], adia_value_size(D->vtype),
                               "diagonal data");
        if (!D->data) return ADIA_ERR_NO_MEMORY;
    }
    uint8_t *flags = NULL;
    if (D->n_scatter > 0) {
        flags = adia__calloc((size_t)A->nnz, 1, "scatter flags");
        if (!flags) return ADIA_ERR_NO_MEMORY;
    }
    int64_t bad = flags ? refill_scatter(D, A, flags) : -1;
    if (bad < 0)
        bad = D->vtype == ADIA_DOUBLE ? diag_fill_d(D, A, flags) : diag_fill_f(D, A, flags);
    adia_status s = bad >= 0 ? adia__error(ADIA_ERR_INTERNAL,
                                           "diagonal refill: row %" PRId64 " has an entry the "
                                           "storage does not keep (pattern changed)", bad)
                             : refill_zero_lists(D, A, flags);
    free(flags);
    return s;
}

void adia__diag_free(adia_diag *D)
{
    if (!D) return;
    free(D->piece_start);
    free(D->piece_group);
    free(D->piece_data);
    free(D->group_start);
    free(D->offsets);
    free(D->data);
    free(D->scatter_row);
    free(D->scatter_col);
    free(D->scatter_val);
    free(D->zero_row);
    free(D->zero_col);
    free(D);
}

/* ------------------------------------------------------------- to CSR */

/* Entries of rows of piece p in column order: stored slots inside the matrix
 * that are nonzero or were explicit zeros of the source, merged with the
 * row's scatter points.  Counts per row when out is NULL, else fills. */
static void piece_entries(const adia_diag *D, int32_t p, int64_t *rowcount, adia_csr *out)
{
    int32_t r0 = D->piece_start[p], r1 = D->piece_start[p + 1], len = r1 - r0;
    int32_t g = D->piece_group[p], k0 = D->group_start[g], k1 = D->group_start[g + 1];
    int64_t s = diag_find_scatter(D, r0), z = lower_row(D->zero_row, D->n_zero, r0);
    double *ov = out ? out->values : NULL;
    for (int32_t r = r0; r < r1; r++) {
        int64_t at = out ? out->rowptr[r] : 0, n = 0;
        for (int32_t k = k0; k <= k1; k++) {
            int64_t c = k < k1 ? (int64_t)r + D->offsets[k] : INT64_MAX;
            for (; s < D->n_scatter && D->scatter_row[s] == r && D->scatter_col[s] < c; s++, n++)
                if (out) {
                    out->colind[at + n] = D->scatter_col[s];
                    ov[at + n] = diag_get(D->scatter_val, D->vtype, s);
                }
            if (k == k1 || c < 0 || c >= D->cols) continue;
            double v = diag_get(D->data, D->vtype, D->piece_data[p] + (int64_t)(k - k0) * len + (r - r0));
            while (z < D->n_zero && (D->zero_row[z] < r || (D->zero_row[z] == r && D->zero_col[z] < c))) z++;
            int keep = v != 0.0 || (z < D->n_zero && D->zero_row[z] == r && D->zero_col[z] == c);
            if (!keep) continue;
            if (out) {
                out->colind[at + n] = (int32_t)c;
                ov[at + n] = v;
            }
            n++;
        }
        if (rowcount) rowcount[r] = n;
    }
}

adia_status adia__diag_to_csr(const adia_diag *D, adia_csr *out)
{
    int64_t *cnt = adia__calloc((size_t)D->rows + 1, sizeof *cnt, "row counts");
    if (!cnt) return ADIA_ERR_NO_MEMORY;
    int par = D->piece_data[D->n_pieces] + D->n_scatter > DIAG_PAR_MIN;
#pragma omp parallel for schedule(dynamic, 16) if (par) num_threads(adia__threads())
    for (int32_t p = 0; p < D->n_pieces; p++) piece_entries(D, p, cnt, NULL);
    int64_t nnz = 0;
    for (int32_t r = 0; r < D->rows; r++) nnz += cnt[r];
    adia_status s = adia__csr_alloc(out, D->rows, D->cols, nnz, ADIA_DOUBLE);
    if (s == ADIA_OK) {
        for (int32_t r = 0; r < D->rows; r++) out->rowptr[r + 1] = out->rowptr[r] + cnt[r];
#pragma omp parallel for schedule(dynamic, 16) if (par) num_threads(adia__threads())
        for (int32_t p = 0; p < D->n_pieces; p++) piece_entries(D, p, NULL, out);
    }
    free(cnt);
    return s;
}

/* ------------------------------------------------------------- checks */

adia_status adia__diag_check(const adia_diag *D)
{
#define BAD(...) return adia__error(ADIA_ERR_INVALID_MATRIX, "diagonal format: " __VA_ARGS__)
    if (D->n_pieces < 0 || D->piece_start[0] != 0 || D->piece_start[D->n_pieces] != D->rows)
        BAD("pieces do not cover rows 0..%" PRId32, D->rows);
    if (D->piece_data[0] != 0) BAD("piece_data[0] = %" PRId64 ", not 0", D->piece_data[0]);
    for (int32_t p = 0; p < D->n_pieces; p++) {
        int32_t r0 = D->piece_start[p], r1 = D->piece_start[p + 1], g = D->piece_group[p];
        if (r1 <= r0) BAD("piece %" PRId32 " has rows [%" PRId32 ", %" PRId32 ")", p, r0, r1);
        if (g < 0 || g >= D->n_groups) BAD("piece %" PRId32 " has group %" PRId32 " of %" PRId32, p, g, D->n_groups);
        int64_t want = (int64_t)(D->group_start[g + 1] - D->group_start[g]) * (r1 - r0);
        if (D->piece_data[p + 1] - D->piece_data[p] != want)
            BAD("piece %" PRId32 " stores %" PRId64 " slots, expected %" PRId64, p,
                D->piece_data[p + 1] - D->piece_data[p], want);
    }
    if (D->group_start[0] != 0) BAD("group_start[0] = %" PRId32, D->group_start[0]);
    for (int32_t g = 0; g < D->n_groups; g++) {
        if (D->group_start[g + 1] < D->group_start[g]) BAD("group %" PRId32 " has negative length", g);
        for (int32_t k = D->group_start[g]; k < D->group_start[g + 1]; k++) {
            int32_t o = D->offsets[k];
            if (o <= -D->rows || o >= D->cols) BAD("group %" PRId32 " offset %" PRId32 " outside the matrix", g, o);
            if (k > D->group_start[g] && o <= D->offsets[k - 1])
                BAD("group %" PRId32 " offsets not ascending at %" PRId32, g, o);
        }
    }
    for (int64_t s = 0; s < D->n_scatter; s++) {
        int32_t r = D->scatter_row[s], c = D->scatter_col[s];
        if (r < 0 || r >= D->rows || c < 0 || c >= D->cols) BAD("scatter point %" PRId64 " (%d, %d) outside", s, r, c);
        if (s > 0 && (r < D->scatter_row[s - 1] || (r == D->scatter_row[s - 1] && c <= D->scatter_col[s - 1])))
            BAD("scatter point %" PRId64 " (%d, %d) out of order", s, r, c);
    }
    return ADIA_OK;
#undef BAD
}

/* ------------------------------------------------------------- sizes */

int64_t adia__diag_padded_zeros(const adia_diag *D)
{
    return D->piece_data[D->n_pieces] + D->n_scatter - D->nnz;
}

int64_t adia__diag_offsets_stored(const adia_diag *D)
{
    if (!D->offsets_per_piece) return D->group_start[D->n_groups];
    int64_t n = 0;
    for (int32_t p = 0; p < D->n_pieces; p++)
        n += D->group_start[D->piece_group[p] + 1] - D->group_start[D->piece_group[p]];
    return n;
}

/* data + offsets + piece starts, groups and data starts + group starts
 * (per-piece offset starts for HDI) + scatter COO. */
int64_t adia__diag_storage_bytes(const adia_diag *D)
{
    int64_t vs = (int64_t)adia_value_size(D->vtype), np = D->n_pieces;
    int64_t ng = D->offsets_per_piece ? np : D->n_groups;
    return D->piece_data[np] * vs + adia__diag_offsets_stored(D) * 4 +
           (np + 1) * 4 + (D->offsets_per_piece ? 0 : np * 4) + (np + 1) * 8 +
           (ng + 1) * 4 + D->n_scatter * (8 + vs);
}

int64_t adia__diag_predict_bytes(int64_t slots, int64_t offsets, int64_t np, int64_t ng,
                                int per_piece, int64_t vs)
{
    return adia_sat_add(adia_sat_add(adia_sat_mul(slots, vs), adia_sat_mul(offsets, 4)),
                        (np + 1) * 4 + (per_piece ? 0 : np * 4) + (np + 1) * 8 + (ng + 1) * 4);
}

adia_status adia__diag_spmv(const adia_diag *D, double alpha, const void *x,
                           double beta, void *y)
{
    if (D->vtype == ADIA_DOUBLE)
        diag_spmv_d(D, alpha, x, beta, y);
    else
        diag_spmv_f(D, alpha, x, beta, y);
    return ADIA_OK;
}

/* ----------------------------------------------------------- diagonal */

/* Rows per task of the diagonal's read: one DIA piece holds every row,
 * HDI pieces are 128 rows, so the threads split rows, not pieces. */
#define DIAG_TASK_ROWS 8192

/* Index in group g of offset 0 (offsets ascend), -1 if g does not keep it. */
static int32_t group_find_zero(const adia_diag *D, int32_t g)
{
    int32_t lo = D->group_start[g], hi = D->group_start[g + 1];
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (D->offsets[mid] < 0) lo = mid + 1; else hi = mid;
    }
    return lo < D->group_start[g + 1] && D->offsets[lo] == 0 ? lo - D->group_start[g] : -1;
}

/* d[r] for rows [a, b) of piece p: its offset-0 slots (zero there when the
 * piece keeps no offset 0 or column r is outside the matrix). */
static void piece_diagonal(const adia_diag *D, int32_t p, int32_t a, int32_t b, double *d)
{
    int32_t r0 = D->piece_start[p], len = D->piece_start[p + 1] - r0;
    int32_t k = group_find_zero(D, D->piece_group[p]);
    int32_t in = b < D->cols ? b : a > D->cols ? a : D->cols;   /* rows of [a, in) have column r */
    if (k < 0) in = a;
    int64_t at = D->piece_data[p] + (int64_t)k * len - r0;
    if (D->vtype == ADIA_DOUBLE)
        for (int32_t r = a; r < in; r++) d[r] = ((const double *)D->data)[at + r];
    else
        for (int32_t r = a; r < in; r++) d[r] = (double)((const float *)D->data)[at + r];
    for (int32_t r = in; r < b; r++) d[r] = 0.0;
}

adia_status adia__diag_op_diagonal(const adia_format *F, double *d)
{
    const adia_diag *D = F->impl;
    int64_t tasks = ((int64_t)D->rows + DIAG_TASK_ROWS - 1) / DIAG_TASK_ROWS;
#pragma omp parallel for schedule(static) if (D->rows > DIAG_PAR_MIN) num_threads(adia__threads())
    for (int64_t t = 0; t < tasks; t++) {
        int32_t a = (int32_t)(t * DIAG_TASK_ROWS), end = D->rows - a < DIAG_TASK_ROWS ? D->rows
                                                         : a + DIAG_TASK_ROWS;
        for (int32_t p = diag_find_piece(D, a); a < end; p++) {
            int32_t b = D->piece_start[p + 1] < end ? D->piece_start[p + 1] : end;
            piece_diagonal(D, p, a, b, d);
            a = b;
        }
    }
    /* a scatter point on the diagonal: its slot in the piece is padding
     * (one point per position: no two threads write one row) */
#pragma omp parallel for schedule(static) if (D->n_scatter > DIAG_PAR_MIN) num_threads(adia__threads())
    for (int64_t s = 0; s < D->n_scatter; s++)
        if (D->scatter_row[s] == D->scatter_col[s])
            d[D->scatter_row[s]] = diag_get(D->scatter_val, D->vtype, s);
    return ADIA_OK;
}

const adia_diag *adia__format_diag(const adia_format *F)
{
    const adia_diag *D = adia__format_diag_structure(F);
    return D && adia__format_host(F) == ADIA_OK ? D : NULL;
}

const adia_diag *adia__format_diag_structure(const adia_format *F)
{
    if (!F || F->magic != ADIA_MAGIC_FORMAT || !F->impl || !F->ops->diag.policy) return NULL;
    return F->impl;
}

/* ------------------------------------------------ operations table slots */

adia_status adia__diag_op_to_csr(const void *impl, adia_csr *out) { return adia__diag_to_csr(impl, out); }
adia_status adia__diag_op_check(const void *impl) { return adia__diag_check(impl); }
void adia__diag_op_destroy(void *impl) { adia__diag_free(impl); }
int64_t adia__diag_op_padded_zeros(const void *impl) { return adia__diag_padded_zeros(impl); }
int64_t adia__diag_op_storage_bytes(const void *impl) { return adia__diag_storage_bytes(impl); }
adia_status adia__diag_op_spmv(const void *impl, double alpha, const void *x,
                              double beta, void *y)
{
    return adia__diag_spmv(impl, alpha, x, beta, y);
}

adia_status adia__diag_build_policy(adia_diag_policy_fn policy, int per_piece, const adia_csr *A,
                                   const adia_format_params *p, adia_value_type vt, void **impl)
{
    adia_diag_partition part = {0};
    adia_status s = policy(A, p, &part);
    if (s != ADIA_OK) {
        adia__diag_partition_free(&part);
        return s;
    }
    return adia__diag_build(A, vt, &part, per_piece, (adia_diag **)impl);
}

adia_status adia__diag_op_refill(void *impl, const adia_csr *A) { return adia__diag_refill(impl, A); }
