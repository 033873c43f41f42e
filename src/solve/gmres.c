/* gmres.c -- GMRES(m), once for every device: a cycle's start, an Arnoldi
 * step and a cycle's end over the device's kernels (method.h has the
 * algorithm and its scalars).  The device's driver runs steps while the
 * state says running and j < m, then ends the cycle and, still running,
 * begins the next. */
#include "method.h"

/* The product's input from V_j (in p): M of it, kept when M varies. */
static adia_status stage(const solve_method *m)
{
    if (!m->stage) return ADIA_OK;
    ADIA_TRY(m->k->precond(m->run, SV_P, SV_Q));
    return m->flex ? m->k->gm_keep_z(m->run) : ADIA_OK;
}

/* w = b - A x, beta = ||w||, V_0 = w / beta, the product's input. */
adia_status adia__gm_begin_cycle(const solve_method *m)
{
    ADIA_TRY(m->k->residual(m->run));
    ADIA_TRY(m->k->gm_cycle_start(m->run));
    ADIA_TRY(m->k->gm_next_basis(m->run));
    return stage(m);
}

/* w = A z; w against the basis; the rotation; the next basis vector. */
adia_status adia__gm_step(const solve_method *m)
{
    const solve_kernels *k = m->k;
    ADIA_TRY(k->product(m->run, m->stage ? SV_Q : SV_P, SV_R));
    ADIA_TRY(k->gm_orthogonalize(m->run));
    ADIA_TRY(k->gm_givens(m->run));
    ADIA_TRY(k->gm_next_basis(m->run));
    return stage(m);
}

/* y from the cycle's steps; x += D V y, Z y, or M (V y). */
adia_status adia__gm_end_cycle(const solve_method *m)
{
    if (!m->stage || m->flex) return m->k->gm_update_x(m->run);
    ADIA_TRY(m->k->gm_combine(m->run));             /* p = V y */
    ADIA_TRY(m->k->precond(m->run, SV_P, SV_Q));     /* q = M p */
    return m->k->add_q(m->run);
}
