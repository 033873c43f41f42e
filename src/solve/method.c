/* method.c -- the stop reason of every method and device, in one set of
 * words (method.h). */
#include "method.h"

#include <stdio.h>

/* "(r0, A p) = -1e-300" and the like: the quantity that broke. */
static const char *broke_name(int broke)
{
    switch (broke) {
    case BROKE_R0V: return "(r0, A p)";
    case BROKE_OMEGA: return "omega";
    case BROKE_RHO: return "(r0, r)";
    case BROKE_PAP: return "p'Ap";
    case BROKE_HESSENBERG: return "Hessenberg entry";
    default: return "residual";
    }
}

void adia__solve_stop_reason(const solve_state *st, adia_solver m, char *w, size_t len)
{
    switch (st->status) {
    case SOLVE_CONVERGED: snprintf(w, len, "converged"); return;
    case SOLVE_LIMIT: snprintf(w, len, "iteration limit reached"); return;
    case SOLVE_NONFINITE:
        if (st->broke == BROKE_RESIDUAL)
            snprintf(w, len, "non-finite residual at iteration %d", st->iter);
        else
            snprintf(w, len, "non-finite %s (%g) at iteration %d", broke_name(st->broke),
                     st->why, st->iter);
        return;
    default: break;
    }
    if (m == ADIA_SOLVE_CG)
        snprintf(w, len, "breakdown: p'Ap = %g at iteration %d (A is not symmetric positive "
                 "definite?)", st->why, st->iter);
    else if (m == ADIA_SOLVE_GMRES)
        snprintf(w, len, "breakdown: singular Hessenberg matrix (%g) at iteration %d", st->why,
                 st->iter);
    else if (st->broke == BROKE_OMEGA)
        snprintf(w, len, "breakdown: omega = %g (t't = %g) at iteration %d", st->why, st->tt,
                 st->iter);
    else
        snprintf(w, len, "breakdown: %s = %g at iteration %d", broke_name(st->broke), st->why,
                 st->iter);
}
