/* hyb.c -- the "hyb" format (Bell & Garland 2008): an ELL part (ell.c's
 * layout) of width w plus the entries beyond w of each row as row-sorted
 * COO.  Width rule (Bell & Garland / CUSP): the largest w such that at least
 * max(4096, rows/3) rows have >= w entries -- below that many rows, an ELL
 * column costs more in padding than COO costs per entry -- so w = 0 (all
 * COO) for matrices of fewer than 4096 rows.  params->ell_width overrides
 * the rule (longer rows then spill to COO, never an error). */
#include "row_common.h"

#include <inttypes.h>

/* Bell & Garland's width: largest w with count(rows of length >= w) >=
 * max(4096, rows/3), found from the histogram of row lengths. */
static adia_status hyb_width(const adia_csr *A, int32_t *width)
{
    int64_t longest = adia__row_max_len(A);
    if (longest > INT32_MAX)
        return adia__error(ADIA_ERR_OVERFLOW, "hyb: longest row has %" PRId64
                          " entries, more than a 32-bit width", longest);
    int64_t *count = adia__calloc((size_t)longest + 2, sizeof *count, "hyb row histogram");
    if (!count) return ADIA_ERR_NO_MEMORY;
    for (int32_t i = 0; i < A->rows; i++) count[row_len(A, i)]++;
    int64_t need = A->rows / 3 > 4096 ? A->rows / 3 : 4096, atleast = 0;
    *width = 0;
    for (int64_t w = longest; w >= 1; w--) {   /* atleast = rows with len >= w */
        atleast += count[w];
        if (atleast >= need) {
            *width = (int32_t)w;
            break;
        }
    }
    free(count);
    return ADIA_OK;
}

static adia_status hyb_build(const adia_csr *A, const adia_format_params *p,
                             adia_value_type vt, void **impl)
{
    int32_t width = p->ell_width;
    if (width <= 0) ADIA_TRY(hyb_width(A, &width));
    adia_hyb *H = adia__calloc(1, sizeof *H, "hyb format");
    if (!H) return ADIA_ERR_NO_MEMORY;
    adia_status s = adia__row_ell_fill(A, width, vt, &H->ell, &H->coo);
    if (s != ADIA_OK) {
        free(H);
        return s;
    }
    *impl = H;
    return ADIA_OK;
}

static adia_status hyb_to_csr(const void *impl, adia_csr *out)
{
    const adia_hyb *H = impl;
    return adia__row_ell_to_csr(&H->ell, &H->coo, out);
}

static adia_status hyb_check(const void *impl)
{
    const adia_hyb *H = impl;
    ADIA_TRY(adia__row_ell_check(&H->ell));
    ADIA_TRY(adia__row_coo_check(&H->coo));
    if (H->ell.rows != H->coo.rows || H->ell.cols != H->coo.cols)
        return adia__error(ADIA_ERR_INVALID_MATRIX, "hyb: ELL part %dx%d, COO part %dx%d",
                          (int)H->ell.rows, (int)H->ell.cols, (int)H->coo.rows,
                          (int)H->coo.cols);
    return ADIA_OK;
}

static void hyb_destroy(void *impl)
{
    adia_hyb *H = impl;
    adia__row_ell_free(&H->ell);
    adia__row_coo_free(&H->coo);
    free(H);
}

static int64_t hyb_padded_zeros(const void *impl)
{
    const adia_hyb *H = impl;
    return (int64_t)H->ell.width * H->ell.rows - H->ell.nnz;
}

static int64_t hyb_storage_bytes(const void *impl)
{
    const adia_hyb *H = impl;
    int64_t slots = (int64_t)H->ell.width * H->ell.rows;
    return slots * 4 + row_value_bytes(slots, H->ell.vtype) + H->coo.nnz * 8 +
           row_value_bytes(H->coo.nnz, H->coo.vtype);
}

static adia_status hyb_spmv(const void *impl, double alpha, const void *x,
                            double beta, void *y)
{
    const adia_hyb *H = impl;
    ADIA_TRY(adia__ell_spmv(&H->ell, alpha, x, beta, y));
    return H->coo.nnz > 0 ? adia__coo_spmv(&H->coo, alpha, x, 1.0, y) : ADIA_OK;
}

/* The ELL part's diagonal, then the overflow's (entries beyond the width:
 * not in the ELL part). */
static adia_status hyb_diagonal(const adia_format *F, double *d)
{
    const adia_hyb *H = F->impl;
    adia__row_ell_diagonal(&H->ell, d);
    adia__row_coo_diagonal(&H->coo, d);
    return ADIA_OK;
}

const adia_format_ops adia__format_hyb = {
    .name = "hyb",
    .description = "hybrid ELL + COO (Bell-Garland width rule, or param width)",
    .build = hyb_build,
    .to_csr = hyb_to_csr,
    .check = hyb_check,
    .destroy = hyb_destroy,
    .padded_zeros = hyb_padded_zeros,
    .storage_bytes = hyb_storage_bytes,
    .spmv = hyb_spmv,
    .diagonal = hyb_diagonal,
};
