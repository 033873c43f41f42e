/* plan_update.c -- values change, structure stays (issue 28, item 6):
 * adia_plan_update_values refills a plan's format from a CSR of the same
 * pattern, keeping the plan (its choice, upload, generated kernels).
 *
 * The pattern is checked before anything is written: the first update
 * compares the structure hash the plan keeps for plan files (plan_io.c)
 * and then keeps the cheaper update hash (plan_hash.h), so later updates
 * check at the speed of a read of rowptr and colind.  A mismatch names the first row
 * that differs (found against the plan's own format, on that error path
 * alone).
 *
 * The refill is a slot of the format's table (refill) with a reference
 * fallback: the diagonal core's formats, csr, ell and sell write the new
 * values into their slots in place (the structure says where: no map),
 * and a diagonal GPU plan copies its data array up once; every other
 * format (and, on the GPU, all but the diagonal ones and CRSD with
 * scatter points) rebuilds from the new CSR and swaps the storage (host
 * and device), keeping the plan and the GPU kernel variant it chose. */
#include "plan_internal.h"
#include "formats/diag_core.h"

#include <inttypes.h>

/* The first row where A's pattern and the plan's differ: a message. */
static adia_status pattern_error(const adia_plan *P, const adia_csr *A, const char *f)
{
    adia_matrix *M = NULL;
    adia_status s = adia_format_to_matrix(P->F, &M);
    if (s != ADIA_OK)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: the new matrix's pattern (%lld entries) "
                           "differs from the plan's (%lld)", f, (long long)A->nnz, (long long)P->nnz);
    const adia_csr *B = &M->csr;
    int32_t r = 0;
    int64_t at = -1;   /* the first differing entry of row r, or -1: its length */
    for (; r < A->rows; r++) {
        int64_t a0 = A->rowptr[r], n = A->rowptr[r + 1] - a0, b0 = B->rowptr[r];
        int64_t m = B->rowptr[r + 1] - b0, k = 0;
        while (k < n && k < m && A->colind[a0 + k] == B->colind[b0 + k]) k++;
        if (k < n && k < m) at = k;
        if (at >= 0 || n != m) break;
    }
    char what[160];
    if (r == A->rows)
        snprintf(what, sizeof what, "no row differs: a hash collision -- please report");
    else if (at >= 0)
        snprintf(what, sizeof what, "entry %lld of row %d is in column %d, the plan's in column %d",
                 (long long)at, (int)r, (int)A->colind[A->rowptr[r] + at],
                 (int)B->colind[B->rowptr[r] + at]);
    else
        snprintf(what, sizeof what, "row %d has %lld entries, the plan's %lld", (int)r,
                 (long long)(A->rowptr[r + 1] - A->rowptr[r]),
                 (long long)(B->rowptr[r + 1] - B->rowptr[r]));
    adia_matrix_destroy(M);
    return adia__error(ADIA_ERR_INVALID_ARG, "%s: the pattern differs from the plan's at row %d "
                       "(%s; %lld entries against %lld): values of the same pattern only -- a "
                       "new pattern needs a new plan", f, (int)(r < A->rows ? r : 0), what,
                       (long long)A->nnz, (long long)P->nnz);
}

/* A's pattern is the plan's, checked before anything is written. */
static adia_status check_pattern(adia_plan *P, const adia_csr *A, const char *f)
{
    if (A->rows != P->rows || A->cols != P->cols)
        return adia__error(ADIA_ERR_DIMENSION, "%s: the new matrix is %d x %d, the plan's %d x %d",
                           f, (int)A->rows, (int)A->cols, (int)P->rows, (int)P->cols);
    if (P->update_hash) {   /* an earlier update, or the device CSR it was made from */
        if (A->nnz == P->nnz && adia__plan_update_hash(A) == P->update_hash) return ADIA_OK;
        return pattern_error(P, A, f);
    }
    const uint64_t h = adia__plan_structure_hash(A);   /* the first: against the file hash */
    if (!P->hash) {   /* a device plan: the hash of its format's matrix, once */
        adia_matrix *M = NULL;
        ADIA_TRY(adia_format_to_matrix(P->F, &M));
        P->hash = adia__plan_structure_hash(&M->csr);
        adia_matrix_destroy(M);
    }
    if (A->nnz != P->nnz || h != P->hash) return pattern_error(P, A, f);
    P->update_hash = adia__plan_update_hash(A);
    return ADIA_OK;
}

/* The reference: F's storage rebuilt from A (host, and device for a GPU
 * plan) and swapped in; the GPU kernel variant the plan chose is kept. */
static adia_status refill_rebuild(adia_plan *P, const adia_csr *A)
{
    adia_format *F = P->F;
    void *impl = NULL, *dev = NULL;
    adia__zeros z;
    memset(&z, 0, sizeof z);
    adia_status s = adia__format_build_impl(F->ops, A, &F->params, F->vtype, &impl);
    if (s == ADIA_OK && F->ops->zeros_apart) s = adia__zeros_collect(A, F->vtype, &z);
    if (s == ADIA_OK && P->device) s = F->ops->gpu->upload(impl, F->vtype, &F->params, &dev);
    if (s == ADIA_OK && P->device) s = adia__gpu_fence("adia_plan_update_values");
    if (s != ADIA_OK) {   /* the plan is untouched */
        if (dev) F->ops->gpu->destroy(dev);
        if (impl) F->ops->destroy(impl);
        adia__zeros_free(&z);
        return s;
    }
    adia_gpu_kernel k = F->dev ? adia_format_kernel(F) : ADIA_KERNEL_AUTO;
    if (F->dev) F->ops->gpu->destroy(F->dev);
    if (F->impl) F->ops->destroy(F->impl);
    adia__zeros_free(&F->zeros);
    F->impl = impl;
    F->dev = dev;
    F->zeros = z;
    F->host_stale = 0;
    if (dev && k != ADIA_KERNEL_AUTO && adia_format_kernel(F) != k) s = adia_format_set_kernel(F, k);
    return s;
}

/* The diagonal core in place: host slots, then the data array up. */
static adia_status refill_diag(adia_plan *P, const adia_csr *A)
{
    adia_format *F = P->F;
    adia_diag *D = F->impl;
    if (P->device && D->n_scatter > 0) return refill_rebuild(P, A);   /* CRSD: COO up */
    adia_status s = adia__diag_refill(D, A);
    if (s == ADIA_OK && F->dev) s = adia__gpu_diag_set_data(F->dev, D);
    if (s == ADIA_OK) F->host_stale = 0;
    return s;
}

/* The slot, else the reference.  A GPU plan: the diagonal core refills
 * its host storage and copies the data up; other formats' device layouts
 * take a rebuilt upload (a host matrix crosses PCIe either way). */
static adia_status refill_format(adia_plan *P, const adia_csr *A)
{
    adia_format *F = P->F;
    if (F->ops->diag.policy && F->impl) return refill_diag(P, A);
    if (!P->device && F->ops->refill && F->impl) return F->ops->refill(F->impl, A);
    return refill_rebuild(P, A);
}

adia_status adia__plan_update_csr(adia_plan *P, const adia_csr *A, const char *f)
{
    if (A->vtype != ADIA_DOUBLE)
        return adia__error(ADIA_ERR_INTERNAL, "%s: the source must be double", f);
    ADIA_TRY(check_pattern(P, A, f));
    double t0 = adia__now_ms();
    adia_status s = refill_format(P, A);
    P->update_ms = adia__now_ms() - t0;
    P->updates += s == ADIA_OK;
    return s;
}

adia_status adia_plan_update_values(adia_plan *plan, const adia_matrix *A)
{
    const char *f = "adia_plan_update_values";
    if (!plan) return adia__error(ADIA_ERR_INVALID_HANDLE, "%s: plan is NULL", f);
    if (plan->magic != ADIA_MAGIC_PLAN)
        return adia__error(ADIA_ERR_INVALID_HANDLE,
                           "%s: not a live plan handle (destroyed or uninitialised)", f);
    ADIA_TRY(adia__matrix_check_handle(A, f));
    return adia__plan_update_csr(plan, &A->csr, f);
}
