/* ell.c -- the "ell" format (ELLPACK, survey 003 eqs. 2.3-2.5): width
 * slots per row, column-major (slot k of row i at k*rows + i) so that a
 * GPU thread per row reads coalesced.  width = params->ell_width, or the
 * longest row when not given; a row longer than a given width is an error
 * (hyb stores such rows' tail as COO).  Storage = rows*width*(index + value),
 * eq. 2.5's 2*(N_mnzr*m) counted in array elements.  Also the ELL part of
 * hyb (row_ell_* in row_common.h). */
#include "row_common.h"

#include <inttypes.h>

void adia__row_ell_free(adia_ell *E)
{
    free(E->colind);
    free(E->values);
    memset(E, 0, sizeof *E);
}

/* Entries of A beyond width (0 when every row fits). */
static int64_t overflow_entries(const adia_csr *A, int32_t width)
{
    int64_t n = 0;
    for (int32_t i = 0; i < A->rows; i++)
        if (row_len(A, i) > width) n += row_len(A, i) - width;
    return n;
}

/* Row i's first width entries into E's slots, the rest into rest at *k. */
static void fill_row(const adia_csr *A, int32_t i, adia_ell *E, adia_coo *rest, int64_t *k)
{
    int64_t slot = 0;
    for (int64_t q = A->rowptr[i]; q < A->rowptr[i + 1]; q++, slot++) {
        if (slot < E->width) {
            int64_t p = slot * E->rows + i;
            E->colind[p] = A->colind[q];
            row_value_set(E->values, E->vtype, p, adia_csr_value(A, q));
        } else {
            rest->rowind[*k] = i;
            rest->colind[*k] = A->colind[q];
            row_value_set(rest->values, rest->vtype, (*k)++, adia_csr_value(A, q));
        }
    }
}

adia_status adia__row_ell_fill(const adia_csr *A, int32_t width, adia_value_type vt,
                         adia_ell *E, adia_coo *rest)
{
    int64_t extra = overflow_entries(A, width), slots;
    if (extra > 0 && !rest)
        for (int32_t i = 0; i < A->rows; i++)
            if (row_len(A, i) > width)
                return adia__error(ADIA_ERR_INVALID_ARG,
                                  "ell: row %d has %" PRId64 " entries, more than width=%d "
                                  "(use width>=%" PRId64 ", no width, or format hyb)",
                                  (int)i, row_len(A, i), (int)width, adia__row_max_len(A));
    ADIA_TRY(adia__row_mul(A->rows, width, "ell slots", &slots));
    *E = (adia_ell){.rows = A->rows, .cols = A->cols, .width = width,
                    .nnz = A->nnz - extra, .vtype = vt};
    E->colind = adia__alloc((size_t)slots, sizeof *E->colind, "ell column indices");
    E->values = adia__row_values_alloc(slots, vt, "ell values");
    if (!E->colind || !E->values) {
        adia__row_ell_free(E);
        return ADIA_ERR_NO_MEMORY;
    }
    for (int64_t p = 0; p < slots; p++) E->colind[p] = ADIA_ROW_PAD;
    if (rest) {
        adia_status s = adia__row_coo_alloc(rest, A->rows, A->cols, extra, vt);
        if (s != ADIA_OK) {
            adia__row_ell_free(E);
            return s;
        }
    }
    int64_t k = 0;
    for (int32_t i = 0; i < A->rows; i++) fill_row(A, i, E, rest, &k);
    return ADIA_OK;
}

adia_status adia__row_ell_check(const adia_ell *E)
{
    int64_t slots = (int64_t)E->width * E->rows, n = 0;
    ADIA_TRY(adia__row_check_index("ell", "colind", E->colind, slots, E->cols, true));
    for (int32_t i = 0; i < E->rows; i++)
        for (int64_t k = 0; k < E->width; k++) {
            int64_t p = k * E->rows + i;
            if (E->colind[p] == ADIA_ROW_PAD) {
                if (row_value_get(E->values, E->vtype, p) != 0.0)
                    return adia__error(ADIA_ERR_INVALID_MATRIX,
                                      "ell: padding slot %" PRId64 " of row %d holds a nonzero",
                                      k, (int)i);
                continue;
            }
            n++;
            if (k > 0 && (E->colind[p - E->rows] == ADIA_ROW_PAD ||
                          E->colind[p - E->rows] >= E->colind[p]))
                return adia__error(ADIA_ERR_INVALID_MATRIX,
                                  "ell: row %d slot %" PRId64 " (column %d) does not follow "
                                  "an entry of smaller column", (int)i, k, (int)E->colind[p]);
        }
    if (n != E->nnz)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "ell: %" PRId64 " entries stored, header says %"
                          PRId64, n, E->nnz);
    return ADIA_OK;
}

adia_status adia__row_ell_to_csr(const adia_ell *E, const adia_coo *rest, adia_csr *out)
{
    row_csr_builder b;
    ADIA_TRY(adia__row_csr_begin(&b, out, E->rows, E->cols, E->nnz + (rest ? rest->nnz : 0)));
    int64_t k = 0;
    for (int32_t i = 0; i < E->rows; i++) {
        for (int64_t s = 0; s < E->width; s++) {
            int64_t p = s * E->rows + i;
            if (E->colind[p] != ADIA_ROW_PAD)
                row_csr_push(&b, i, E->colind[p], row_value_get(E->values, E->vtype, p));
        }
        for (; rest && k < rest->nnz && rest->rowind[k] == i; k++)
            row_csr_push(&b, i, rest->colind[k], row_value_get(rest->values, rest->vtype, k));
    }
    return adia__row_csr_finish(&b, rest ? "hyb" : "ell");
}

static adia_status ell_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    int64_t longest = adia__row_max_len(A);
    if (longest > INT32_MAX)
        return adia__error(ADIA_ERR_OVERFLOW, "ell: longest row has %" PRId64
                          " entries, more than a 32-bit width", longest);
    adia_ell *E = adia__calloc(1, sizeof *E, "ell format");
    if (!E) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__row_ell_fill(A, adia_param(p->ell_width, (int32_t)longest), vt, E, NULL);
    if (s != ADIA_OK) {
        free(E);
        return s;
    }
    *impl = E;
    return ADIA_OK;
}

static adia_status ell_to_csr(const void *impl, adia_csr *out)
{
    return adia__row_ell_to_csr(impl, NULL, out);
}

static adia_status ell_check(const void *impl) { return adia__row_ell_check(impl); }

static void ell_destroy(void *impl)
{
    adia__row_ell_free(impl);
    free(impl);
}

static int64_t ell_padded_zeros(const void *impl)
{
    const adia_ell *E = impl;
    return (int64_t)E->width * E->rows - E->nnz;
}

static int64_t ell_storage_bytes(const void *impl)
{
    const adia_ell *E = impl;
    int64_t slots = (int64_t)E->width * E->rows;
    return slots * 4 + row_value_bytes(slots, E->vtype);
}

/* A(i,i): row i's slots (stride rows) up to column i. */
void adia__row_ell_diagonal(const adia_ell *E, double *d)
{
#pragma omp parallel for schedule(static) if (E->rows > ROW_DIAGONAL_PAR_MIN) num_threads(adia__threads())
    for (int32_t i = 0; i < E->rows; i++) {
        int64_t k = row_find_col(E->colind + i, E->width, E->rows, i);
        d[i] = k < 0 ? 0.0 : row_value_get(E->values, E->vtype, k * E->rows + i);
    }
}

static adia_status ell_diagonal(const adia_format *F, double *d)
{
    adia__row_ell_diagonal(F->impl, d);
    return ADIA_OK;
}

/* New values: entry k of row i at slot k*rows + i, computed from the
 * structure (row_formats.h), rows on threads. */
static adia_status ell_refill(void *impl, const adia_csr *A)
{
    adia_ell *E = impl;
    if (E->rows != A->rows) return adia__error(ADIA_ERR_INTERNAL, "ell refill: another shape");
    const double *v = A->values;
#pragma omp parallel for schedule(static) if (A->nnz > ROW_DIAGONAL_PAR_MIN) num_threads(adia__threads())
    for (int32_t i = 0; i < A->rows; i++)
        for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++)
            row_value_set(E->values, E->vtype, (j - A->rowptr[i]) * E->rows + i, v[j]);
    return ADIA_OK;
}

/* The planner's cost model (constants: plan_model.c). */
static int64_t ell_predict(const adia_model_input *in, int *exact)
{
    int64_t width = in->p->ell_width > 0 ? in->p->ell_width : in->f->row_max;
    *exact = 1;
    return adia_sat_mul(adia_sat_mul(width, in->A->rows), 4 + (int64_t)adia_value_size(in->vtype));
}

const adia_format_ops adia__format_ell = {
    .name = "ell",
    .description = "ELLPACK: fixed slots per row, column-major (param width)",
    .build = ell_build,
    .to_csr = ell_to_csr,
    .check = ell_check,
    .destroy = ell_destroy,
    .padded_zeros = ell_padded_zeros,
    .storage_bytes = ell_storage_bytes,
    .spmv = adia__ell_spmv,
    .diagonal = ell_diagonal,
    .refill = ell_refill,
    .model = {ell_predict, 0.55, 0.80, 1, 2, 1.49, 0.181, ADIA_STEPS_ROW_MAX},
};
