/* diagonal.c -- A(i,i) of a format: the one entry every reader calls
 * (adia__format_diagonal) and the reference, the diagonal slot of every
 * format without a faster one.
 *
 * Jacobi needs n numbers.  Reading them through adia_format_to_matrix
 * converts the whole matrix to CSR on one thread -- and, for a plan built
 * on the GPU, downloads the format first: 917 ms for lap3d7:160 on an H100
 * against a 90 ms solve (issue 28).  The fast slots read only the stored
 * diagonal (diagonal core: the offset-0 diagonal of each piece; csr, ell,
 * sell: a search in each row); a format on the device is read there. */
#include "internal.h"

#include <inttypes.h>

adia_status adia__format_diagonal_ref(const adia_format *F, double *d)
{
    adia_matrix *A = NULL;
    ADIA_TRY(adia_format_to_matrix(F, &A));
    const adia_csr *c = &A->csr;
    const double *v = c->values;
    for (int32_t i = 0; i < c->rows; i++) {
        d[i] = 0.0;
        for (int64_t k = c->rowptr[i]; k < c->rowptr[i + 1] && c->colind[k] <= i; k++)
            if (c->colind[k] == i) d[i] = v[k];
    }
    adia_matrix_destroy(A);
    return ADIA_OK;
}

/* Read on the device: the format lives there and its table can (a format
 * built on the device has a diagonal slot, so it is never downloaded for
 * this; one uploaded from the host is read there too: faster, and the same
 * numbers). */
static int read_on_device(const adia_format *F)
{
    return F->dev && F->ops->gpu && F->ops->gpu->diagonal;
}

adia_status adia__format_diagonal(const adia_format *F, double *d_host)
{
    if (!F || F->magic != ADIA_MAGIC_FORMAT)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "format diagonal: not a live format handle");
    if (F->rows == 0) return ADIA_OK;
    if (!d_host)
        return adia__error(ADIA_ERR_INVALID_ARG, "format diagonal: the output of %" PRId32
                          " values is NULL", F->rows);
    if (read_on_device(F)) return adia__format_diagonal_download(F, d_host);
    if (!F->ops->diagonal)   /* the registry fills every slot: a table not from it */
        return adia__error(ADIA_ERR_INTERNAL, "format %s: no diagonal slot", F->ops->name);
    ADIA_TRY(adia__format_host(F));
    return F->ops->diagonal(F, d_host);
}
