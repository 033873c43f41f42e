/* cg.c -- CG, once for every device: the stages of an iteration over the
 * device's kernels (method.h; the algorithm and its scalars are there). */
#include "method.h"

adia_status adia__cg_begin(const solve_method *m)
{
    ADIA_TRY(m->k->residual(m->run));
    return m->k->cg_start(m->run);
}

/* (u = M r,) w = A u with u'w, r'u, r'r (companion r: u is D r or M r;
 * without either u is r and its sums are r's), then the vector pass. */
adia_status adia__cg_iteration(const solve_method *m)
{
    if (m->stage) ADIA_TRY(m->k->precond(m->run, SV_R, SV_U));
    ADIA_TRY(m->k->product_sums(m->run, SV_U, SV_Q, m->jacobi || m->stage ? SV_R : SV_NONE));
    return m->k->cg_step(m->run);
}
