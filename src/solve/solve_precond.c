/* solve_precond.c -- what a solve does with adia_solve_options.precond
 * (src/precond): the checks (a plan solve's M is made on its plan; an
 * operator solve's on a plan of the rows held here, on its device), and
 * the choice between the fused diagonal and the stage of its own.
 *
 * The identity (none) takes the unpreconditioned path.  A kind with a
 * diagonal (jacobi) becomes the host array the methods already fuse into
 * their vector passes (as the old jacobi flag does), so those paths and
 * their speed stay as they were; a diagonal of ones is the identity too.  Any other
 * kind is the stage z = alpha M r, alpha = 2^ea undoing the solver's
 * power-of-two scaling of A (solve.c: the methods run on A / 2^ea, whose
 * inverse is 2^ea A^-1; a power of two, so exact). */
#include "solve_internal.h"
#include "../precond/precond.h"

#include <math.h>
#include <stdio.h>

/* "a CPU plan of 10 x 10" for messages (buf of 64). */
static const char *plan_words(const adia_plan *plan, char *buf, size_t len)
{
    snprintf(buf, len, "a %s plan of %d x %d", adia_plan_device(plan) == 1 ? "GPU" : "CPU",
             adia_plan_rows(plan), adia_plan_cols(plan));
    return buf;
}

/* What any solve checks of opt->precond M (given): a live handle, not
 * beside opt->jacobi, a fixed M for CG. */
static adia_status precond_usable(const adia_solve_options *o, const adia_precond *M,
                                  const char *func)
{
    ADIA_TRY(adia__precond_check(M, func));
    if (o->jacobi)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: opt->jacobi = %d and opt->precond (%s) "
                          "both given: choose one (the jacobi kind is opt->precond of kind "
                          "\"jacobi\")", func, o->jacobi, M->ops->name);
    if (o->method == ADIA_SOLVE_CG && M->asymmetric)
        return adia__error(ADIA_ERR_UNSUPPORTED, "%s: preconditioner %s is not symmetric (%s), "
                          "which CG cannot take: use GMRES or BiCGSTAB", func, M->ops->name,
                          M->asymmetric);
    if (o->method == ADIA_SOLVE_CG && M->ops->varies)
        return adia__error(ADIA_ERR_UNSUPPORTED, "%s: preconditioner %s may change from one "
                          "application to the next, which CG cannot take: use GMRES (flexible "
                          "with such a kind) or BiCGSTAB", func, M->ops->name);
    return ADIA_OK;
}

adia_status adia__solve_precond_check_op(const adia_solve_options *o, int64_t n, int device,
                                         const char *func)
{
    const adia_precond *M = o->precond;
    if (!M) return ADIA_OK;
    ADIA_TRY(precond_usable(o, M, func));
    char a[64];
    if (M->n != n || adia_plan_rows(M->plan) != adia_plan_cols(M->plan))
        return adia__error(ADIA_ERR_DIMENSION, "%s: opt->precond (%s) was made on %s, the "
                          "operator has %lld rows here: M approximates the inverse of the "
                          "operator's rows held here (on several processes, a block of "
                          "its own)", func, M->ops->name, plan_words(M->plan, a, 64),
                          (long long)n);
    if ((adia_plan_device(M->plan) == 1) != (device != 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: opt->precond (%s) was made on %s and the "
                          "solve runs on the %s: make M on a plan of the solve's device", func,
                          M->ops->name, plan_words(M->plan, a, 64), device ? "GPU" : "CPU");
    /* an operator's vectors on the device are doubles: so must M's be */
    if (device && adia_plan_value_type(M->plan) != ADIA_DOUBLE)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: opt->precond (%s) was made on a float GPU "
                          "plan; an operator solve's vectors are double: make M on a double "
                          "plan", func, M->ops->name);
    return ADIA_OK;
}

adia_status adia__solve_precond_check(const adia_solve_options *o, const adia_plan *plan,
                                      const char *func)
{
    const adia_precond *M = o->precond;
    if (!M) return ADIA_OK;
    ADIA_TRY(precond_usable(o, M, func));
    if (!plan)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: opt->precond (%s) needs the solve's plan, "
                          "and the call was given none (plan NULL): make the plan, the "
                          "preconditioner on it, then solve with both", func, M->ops->name);
    if (M->plan != plan) {   /* on the same plan, M lives where the plan does */
        char a[64], b[64];
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: opt->precond (%s) was made on another plan "
                          "(%s; the solve's: %s)", func, M->ops->name, plan_words(M->plan, a, 64),
                          plan_words(plan, b, 64));
    }
    return ADIA_OK;
}

adia_status adia__solve_precond_stage(const adia_precond *M, int ea, adia__solve_diag *diag,
                                      const adia_precond **stage)
{
    *diag = (adia__solve_diag){0};
    *stage = NULL;
    if (!M || M->ops->identity) return ADIA_OK;
    int ones = 0;
    const void *d = M->ops->diagonal ? M->ops->diagonal(M, &ones) : NULL;
    if (!d) {
        *stage = M;
        return ADIA_OK;
    }
    if (ones) return ADIA_OK;   /* the identity */
    if (M->device) {   /* scaled by 2^ea where the solver copies it */
        diag->dev = d;
        diag->dev_vt = M->vtype;
        return ADIA_OK;
    }
    const double *h = d;
    double *s = adia__alloc((size_t)M->n + 1, sizeof *s, "preconditioner diagonal");
    if (!s) return ADIA_ERR_NO_MEMORY;
    const int64_t n = M->n;
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(adia__threads())
    for (int64_t k = 0; k < n; k++) s[k] = ldexp(h[k], ea);
    diag->host = s;
    return ADIA_OK;
}
