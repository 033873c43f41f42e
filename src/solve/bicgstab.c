/* bicgstab.c -- BiCGSTAB, once for every device: the stages of an
 * iteration over the device's kernels (method.h has the algorithm and
 * its scalars). */
#include "method.h"

adia_status adia__bicg_begin(const solve_method *m)
{
    ADIA_TRY(m->k->residual(m->run));
    return m->k->bicg_start(m->run);
}

/* The direction, v = A ph with r0'v, the half step, t = A sh with t's,
 * t't, s's, the update; ph = M p and sh = M s (s is in r) where M is a
 * stage of its own. */
adia_status adia__bicg_iteration(const solve_method *m)
{
    const solve_kernels *k = m->k;
    ADIA_TRY(k->bicg_direction(m->run));
    if (m->stage) ADIA_TRY(k->precond(m->run, SV_P, SV_PH));
    ADIA_TRY(k->product_sums(m->run, SV_PH, SV_Q, SV_R0));
    ADIA_TRY(k->bicg_half(m->run));
    if (m->stage) ADIA_TRY(k->precond(m->run, SV_R, SV_SH));
    ADIA_TRY(k->product_sums(m->run, SV_SH, SV_T, SV_R));
    return k->bicg_update(m->run);
}
