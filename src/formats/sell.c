/* sell.c -- the "sell" format, SELL-C-sigma (Kreutzer et al.; survey 003
 * eqs. 2.56-2.60).  Rows are sorted by decreasing length (stable) inside
 * windows of sigma consecutive rows, then cut into slices of C sorted rows;
 * each slice is ELL of its own width (longest row in it), column-major:
 * slot k of local row r of slice s at slice_ptr[s] + k*C + r.  perm maps a
 * sorted position back to the original row, so y is written in the
 * original order.
 * Parameters: C (default 32); sigma (default 256, or the least multiple of
 * C above it when C does not divide 256); sigma must be 1 (no sorting: plain
 * SELL-C, the survey's worked example) or a multiple of C.
 * Storage: slice_ptr (int64) + widths + perm (int32) + slots*(index+value).
 * Eq. 2.60 writes N_s + 1 + 4*sum(w_i) (elements, for its C = 2): the
 * general count is N_s + 1 + 2*C*sum(w_i), plus widths and perm here. */
#include "row_common.h"

#include <inttypes.h>

typedef struct row_key {
    int64_t len;
    int32_t row;
} row_key;

static int by_len_desc(const void *a, const void *b)
{
    const row_key *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);   /* stable: original order */
}

static void sell_free(adia_sell *S)
{
    free(S->slice_ptr);
    free(S->slice_width);
    free(S->perm);
    free(S->colind);
    free(S->values);
    free(S);
}

adia_status adia__row_sell_params(const adia_format_params *p, int32_t *C, int32_t *sigma)
{
    *C = adia_param(p->sell_c, 32);
    if (p->sell_sigma > 0) {
        *sigma = p->sell_sigma;
        if (*sigma != 1 && *sigma % *C != 0)
            return adia__error(ADIA_ERR_INVALID_ARG, "sell: sigma=%d is not a multiple of C=%d "
                              "(use sigma=1 for no sorting)", (int)*sigma, (int)*C);
    } else {
        *sigma = *C >= 256 ? *C : (256 + *C - 1) / *C * *C;
    }
    return ADIA_OK;
}

/* perm: rows sorted by length inside each window of sigma rows. */
static adia_status sort_rows(const adia_csr *A, int32_t sigma, int32_t *perm)
{
    row_key *key = adia__alloc((size_t)A->rows, sizeof *key, "sell sort keys");
    if (!key) return ADIA_ERR_NO_MEMORY;
    for (int32_t i = 0; i < A->rows; i++) key[i] = (row_key){row_len(A, i), i};
    for (int64_t w0 = 0; sigma > 1 && w0 < A->rows; w0 += sigma) {
        int64_t n = A->rows - w0 < sigma ? A->rows - w0 : sigma;
        qsort(key + w0, (size_t)n, sizeof *key, by_len_desc);
    }
    for (int32_t i = 0; i < A->rows; i++) perm[i] = key[i].row;
    free(key);
    return ADIA_OK;
}

/* Slice widths and pointers from the sorted rows. */
static adia_status slice_layout(const adia_csr *A, adia_sell *S)
{
    S->slice_ptr[0] = 0;
    for (int32_t s = 0; s < S->nslices; s++) {
        int64_t w = 0, size;
        for (int64_t q = (int64_t)s * S->C; q < A->rows && q < ((int64_t)s + 1) * S->C; q++)
            if (row_len(A, S->perm[q]) > w) w = row_len(A, S->perm[q]);
        if (w > INT32_MAX) return adia__error(ADIA_ERR_OVERFLOW, "sell: slice %d too wide", (int)s);
        S->slice_width[s] = (int32_t)w;
        ADIA_TRY(adia__row_mul(w, S->C, "sell slice", &size));
        if (!adia_add_i64(S->slice_ptr[s], size, &S->slice_ptr[s + 1]))
            return adia__error(ADIA_ERR_OVERFLOW, "sell: slot count overflows");
    }
    return ADIA_OK;
}

static void fill_slices(const adia_csr *A, adia_sell *S)
{
    int64_t slots = S->slice_ptr[S->nslices];
    for (int64_t p = 0; p < slots; p++) S->colind[p] = ADIA_ROW_PAD;
    for (int64_t q = 0; q < A->rows; q++) {
        int32_t i = S->perm[q], s = (int32_t)(q / S->C), r = (int32_t)(q % S->C);
        for (int64_t k = 0; k < row_len(A, i); k++) {
            int64_t p = S->slice_ptr[s] + k * S->C + r, src = A->rowptr[i] + k;
            S->colind[p] = A->colind[src];
            row_value_set(S->values, S->vtype, p, adia_csr_value(A, src));
        }
    }
}

static adia_status sell_build(const adia_csr *A, const adia_format_params *p,
                              adia_value_type vt, void **impl)
{
    int32_t C, sigma;
    ADIA_TRY(adia__row_sell_params(p, &C, &sigma));
    adia_sell *S = adia__calloc(1, sizeof *S, "sell format");
    if (!S) return ADIA_ERR_NO_MEMORY;
    *S = (adia_sell){.rows = A->rows, .cols = A->cols, .C = C, .sigma = sigma,
                     .nslices = (int32_t)(((int64_t)A->rows + C - 1) / C), .nnz = A->nnz,
                     .vtype = vt};
    S->slice_ptr = adia__alloc((size_t)S->nslices + 1, sizeof *S->slice_ptr, "sell slice pointers");
    S->slice_width = adia__alloc((size_t)S->nslices, sizeof *S->slice_width, "sell slice widths");
    S->perm = adia__alloc((size_t)A->rows, sizeof *S->perm, "sell permutation");
    adia_status s = S->slice_ptr && S->slice_width && S->perm ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) s = sort_rows(A, sigma, S->perm);
    if (s == ADIA_OK) s = slice_layout(A, S);
    if (s == ADIA_OK) {
        S->colind = adia__alloc((size_t)S->slice_ptr[S->nslices], sizeof *S->colind,
                               "sell column indices");
        S->values = adia__row_values_alloc(S->slice_ptr[S->nslices], vt, "sell values");
        if (!S->colind || !S->values) s = ADIA_ERR_NO_MEMORY;
    }
    if (s != ADIA_OK) {
        sell_free(S);
        return s;
    }
    fill_slices(A, S);
    *impl = S;
    return ADIA_OK;
}

static adia_status sell_to_csr(const void *impl, adia_csr *out)
{
    const adia_sell *S = impl;
    int32_t *pos = adia__alloc((size_t)S->rows, sizeof *pos, "sell inverse permutation");
    if (!pos) return ADIA_ERR_NO_MEMORY;
    for (int32_t q = 0; q < S->rows; q++) pos[S->perm[q]] = q;
    row_csr_builder b;
    adia_status st = adia__row_csr_begin(&b, out, S->rows, S->cols, S->nnz);
    for (int32_t i = 0; st == ADIA_OK && i < S->rows; i++) {
        int32_t s = pos[i] / S->C, r = pos[i] % S->C;
        for (int64_t k = 0; k < S->slice_width[s]; k++) {
            int64_t p = S->slice_ptr[s] + k * S->C + r;
            if (S->colind[p] != ADIA_ROW_PAD)
                row_csr_push(&b, i, S->colind[p], row_value_get(S->values, S->vtype, p));
        }
    }
    free(pos);
    return st == ADIA_OK ? adia__row_csr_finish(&b, "sell") : st;
}

static adia_status sell_check(const void *impl)
{
    const adia_sell *S = impl;
    if (S->C <= 0 || S->nslices != ((int64_t)S->rows + S->C - 1) / S->C)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "sell: C=%d and %d slices do not fit %d rows",
                          (int)S->C, (int)S->nslices, (int)S->rows);
    for (int32_t s = 0; s < S->nslices; s++)
        if (S->slice_ptr[s + 1] - S->slice_ptr[s] != (int64_t)S->slice_width[s] * S->C)
            return adia__error(ADIA_ERR_INVALID_MATRIX, "sell: slice %d holds %" PRId64
                              " slots, not width %d x C %d", (int)s,
                              S->slice_ptr[s + 1] - S->slice_ptr[s], (int)S->slice_width[s],
                              (int)S->C);
    ADIA_TRY(adia__row_check_index("sell", "perm", S->perm, S->rows, S->rows, false));
    ADIA_TRY(adia__row_check_index("sell", "colind", S->colind, S->slice_ptr[S->nslices], S->cols, true));
    int64_t n = 0;
    for (int64_t p = 0; p < S->slice_ptr[S->nslices]; p++)
        if (S->colind[p] != ADIA_ROW_PAD) n++;
        else if (row_value_get(S->values, S->vtype, p) != 0.0)
            return adia__error(ADIA_ERR_INVALID_MATRIX, "sell: padding slot %" PRId64
                              " holds a nonzero", p);
    if (n != S->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "sell: %" PRId64 " entries stored, header says %"
                          PRId64, n, S->nnz);
    return ADIA_OK;
}

static void sell_destroy(void *impl) { sell_free(impl); }

static int64_t sell_padded_zeros(const void *impl)
{
    const adia_sell *S = impl;
    return S->slice_ptr[S->nslices] - S->nnz;
}

static int64_t sell_storage_bytes(const void *impl)
{
    const adia_sell *S = impl;
    int64_t slots = S->slice_ptr[S->nslices];
    return ((int64_t)S->nslices + 1) * 8 + (int64_t)S->nslices * 4 + (int64_t)S->rows * 4 +
           slots * 4 + row_value_bytes(slots, S->vtype);
}

/* A(i,i): sorted row q holds row perm[q]; its slots (stride C) up to
 * that column, rows on threads. */
static adia_status sell_diagonal(const adia_format *F, double *d)
{
    const adia_sell *S = F->impl;
#pragma omp parallel for schedule(static) if (S->rows > ROW_DIAGONAL_PAR_MIN) num_threads(adia__threads())
    for (int32_t q = 0; q < S->rows; q++) {
        int32_t i = S->perm[q], s = q / S->C;
        int64_t first = S->slice_ptr[s] + q % S->C;
        int64_t k = row_find_col(S->colind + first, S->slice_width[s], S->C, i);
        d[i] = k < 0 ? 0.0 : row_value_get(S->values, S->vtype, first + k * S->C);
    }
    return ADIA_OK;
}

/* New values: sorted row q holds row perm[q], its entry k at
 * slice_ptr[q / C] + k*C + q % C, computed from the structure. */
static adia_status sell_refill(void *impl, const adia_csr *A)
{
    adia_sell *S = impl;
    if (S->rows != A->rows) return adia__error(ADIA_ERR_INTERNAL, "sell refill: another shape");
    const double *v = A->values;
#pragma omp parallel for schedule(static) if (A->nnz > ROW_DIAGONAL_PAR_MIN) num_threads(adia__threads())
    for (int32_t q = 0; q < S->rows; q++) {
        int32_t i = S->perm[q];
        int64_t first = S->slice_ptr[q / S->C] + q % S->C, j0 = A->rowptr[i];
        for (int64_t j = j0; j < A->rowptr[i + 1]; j++)
            row_value_set(S->values, S->vtype, first + (j - j0) * S->C, v[j]);
    }
    return ADIA_OK;
}

/* The planner's cost model (constants: plan_model.c). */
static int64_t sell_predict(const adia_model_input *in, int *exact)
{
    int64_t slices = in->sell_slices, rows = in->A->rows;
    *exact = 1;
    if (in->sell_slots < 0) return -1;
    return adia_sat_add((slices + 1) * 8 + slices * 4 + rows * 4,
                        adia_sat_mul(in->sell_slots, 4 + (int64_t)adia_value_size(in->vtype)));
}

const adia_format_ops adia__format_sell = {
    .name = "sell",
    .description = "SELL-C-sigma: sorted slices of C rows, ELL inside (params C, sigma)",
    .build = sell_build,
    .to_csr = sell_to_csr,
    .check = sell_check,
    .destroy = sell_destroy,
    .padded_zeros = sell_padded_zeros,
    .storage_bytes = sell_storage_bytes,
    .spmv = adia__sell_spmv,
    .diagonal = sell_diagonal,
    .refill = sell_refill,
    .model = {sell_predict, 0.50, 0.55, 1, 3, 1.60, 0.348, ADIA_STEPS_ROW_MAX},
};
