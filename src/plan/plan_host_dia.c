/* plan_host_dia.c -- a CPU plan in format dia from diagonals in host
 * memory, taken over: no CSR, no analysis, no choice.  The host twin of
 * adia_plan_create_device_dia, for mg's levels (mg.c): a level made
 * through a CSR and adia_plan_create took lap3d7:128's level 1 41 ms to
 * the matrix and 110 ms to the plan (2 cores, 2026-11-28). */
#include "plan_internal.h"
#include "../formats/diag_core.h"

adia_status adia__plan_create_host_dia(int32_t rows, int ndiag, const int64_t *offsets,
                                       double *values, int64_t nnz, const adia_plan_hints *hints,
                                       const char *name, adia_plan **plan)
{
    *plan = NULL;
    plan_hints h;
    adia_status s = adia__plan_resolve_hints(hints, &h);
    if (s == ADIA_OK && (h.device || h.vtype != ADIA_DOUBLE))
        s = adia__error(ADIA_ERR_INTERNAL, "a host DIA plan: CPU and double only");
    for (int k = 0; s == ADIA_OK && k < ndiag; k++)
        if ((k > 0 && offsets[k] <= offsets[k - 1]) || offsets[k] <= -(int64_t)rows ||
            offsets[k] >= rows)
            s = adia__error(ADIA_ERR_INTERNAL, "a host DIA plan: offset %lld (diagonal %d)",
                            (long long)offsets[k], k);
    const double t0 = adia__now_ms();
    adia_format *F = NULL;
    if (s == ADIA_OK) s = adia__format_new("dia", &h.params, ADIA_DOUBLE, rows, rows, nnz, &F);
    adia_diag *D = s == ADIA_OK ? adia__calloc(1, sizeof *D, "diagonal format") : NULL;
    if (s == ADIA_OK && !D) s = ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        D->rows = D->cols = rows;
        D->vtype = ADIA_DOUBLE;
        D->nnz = nnz;
        F->impl = D;   /* owned by F from here */
        s = adia__diag_dia_structure(D, ndiag, offsets);
    }
    if (s == ADIA_OK) {
        D->data = values;   /* diagonal k of row i at k rows + i: the piece's layout */
        values = NULL;
    }
    free(values);
    if (s != ADIA_OK) {
        adia_format_destroy(F);
        return s;
    }
    ADIA_TRY(adia__plan_adopt(F, &h, name, plan));   /* destroys F on failure */
    (*plan)->build_ms = adia__now_ms() - t0;
    adia__plan_note(*plan, "dia from %d diagonals in host memory, taken over", ndiag);
    return ADIA_OK;
}
