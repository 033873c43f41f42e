/* precond.c -- the preconditioner handle: create, apply, explain, destroy,
 * dispatching to the kind's table (precond.h). */
#include "precond.h"
#include "mg.h"   /* what a solve with mg likely takes */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void adia_precond_options_default(adia_precond_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->kind = "jacobi";
    opt->cycle = 'v';
}

adia_status adia__precond_check(const adia_precond *M, const char *func)
{
    if (!M || M->magic != ADIA_MAGIC_PRECOND)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "%s: not a live preconditioner", func);
    return ADIA_OK;
}

static adia_status check_options(const adia_precond_options *o)
{
    for (int d = 0; d < 3; d++)
        if (o->grid[d] < 0)
            return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: grid[%d] = %d is "
                              "negative", d, o->grid[d]);
    if (o->cycle != 'v' && o->cycle != 'w' && o->cycle != 'f')
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: cycle '%c' (%d): not "
                          "'v', 'w' or 'f'", o->cycle > 32 && o->cycle < 127 ? o->cycle : '?',
                          o->cycle);
    if (o->sweeps > 100 || o->degree > 100 || o->max_levels > 64)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: sweeps %d, degree %d, "
                          "max_levels %d: at most 100, 100 and 64", o->sweeps, o->degree,
                          o->max_levels);
    if (o->float_levels < ADIA_FLOAT_LEVELS_DEFAULT || o->float_levels > ADIA_FLOAT_LEVELS_NONE)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: float_levels %d: 0 "
                          "(default), 1 (all), 2 (coarse) or 3 (none)", o->float_levels);
    const adia_slab_comm *c = o->slab;
    if (c && (!o->kind || strcmp(o->kind, "mg")))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: slab is mg's (kind \"%s\")",
                          o->kind ? o->kind : "jacobi");
    if (c && (!c->sum || !c->sum_u64 || !c->max || !c->agree || !c->layout || !c->exchange ||
              !c->gather))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: a slab callback is NULL");
    if (c && (c->ghosts < 2 || c->ghosts > 8))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: slab ghosts %d: 2 to 8",
                          c->ghosts);
    if (c && !(c->zs >= 0 && c->zs <= c->z0 && c->z0 < c->z1 && c->z1 <= c->nz))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: slab planes zs %lld, own "
                          "[%lld, %lld) of %lld: not 0 <= zs <= z0 < z1 <= nz", (long long)c->zs,
                          (long long)c->z0, (long long)c->z1, (long long)c->nz);
    return ADIA_OK;
}

/* "auto": the first of mg, agg, jacobi, none that A suits (agg only what
 * mg sees as a strip 2 points wide: mg.h, mg_strip).  A kind that
 * declines (A not on a grid, a zero diagonal entry: INVALID_ARG, DIMENSION
 * or UNSUPPORTED) is noted in M->why and the next one tried; any other
 * error (memory, the device) ends the set-up. */
static adia_status setup_auto(adia_precond *M, const adia_precond_options *o)
{
    static const char *const order[] = {"mg", "agg", "jacobi", "none"};
    static const char *const why[] = {" (A lies on a grid)", " (A is a band: a strip 2 points "
                                      "wide)", "", ""};
    size_t k = (size_t)snprintf(M->why, sizeof M->why, "auto:");
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        adia_precond_options t = *o;
        t.kind = order[i];
        M->ops = adia__precond_find(order[i]);
        M->impl = NULL;
        M->automatic = 1;
        const adia_status s = M->ops->setup(M, &t);
        if (s == ADIA_OK) {
            if (k < sizeof M->why)
                snprintf(M->why + k, sizeof M->why - k, " %s%s\n", order[i], why[i]);
            return ADIA_OK;
        }
        if (M->ops->destroy) M->ops->destroy(M);
        M->impl = NULL;
        if (s != ADIA_ERR_INVALID_ARG && s != ADIA_ERR_DIMENSION && s != ADIA_ERR_UNSUPPORTED)
            return s;
        if (k < sizeof M->why)
            k += (size_t)snprintf(M->why + k, sizeof M->why - k, " not %s (%.200s);", order[i],
                                  adia_last_error());
        adia_clear_error();
    }
    return adia__error(ADIA_ERR_INTERNAL, "adia_precond_create: auto made no kind");
}

adia_status adia_precond_create(adia_plan *plan, const adia_precond_options *opt,
                                adia_precond **out)
{
    return adia__precond_create(plan, opt, 0, out);
}

adia_status adia__precond_create(adia_plan *plan, const adia_precond_options *opt, int galerkin,
                                 adia_precond **out)
{
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: out is NULL");
    *out = NULL;
    const double t0 = adia__now_ms();
    if (adia_plan_device(plan) < 0)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "adia_precond_create: plan is not a live "
                          "plan");
    if (adia_plan_rows(plan) != adia_plan_cols(plan))
        return adia__error(ADIA_ERR_DIMENSION, "adia_precond_create: the plan is %d x %d, not "
                          "square", adia_plan_rows(plan), adia_plan_cols(plan));
    adia_precond_options o;
    adia_precond_options_default(&o);
    if (opt) {
        o = *opt;
        if (!o.kind) o.kind = "jacobi";
        if (!o.cycle) o.cycle = 'v';
    }
    ADIA_TRY(check_options(&o));
    const int automatic = o.kind && !strcmp(o.kind, "auto");
    const adia_precond_ops *ops = automatic ? adia__precond_find("none") : adia__precond_find(o.kind);
    if (!ops)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_create: unknown kind \"%s\" "
                          "(kinds: %s, auto)", o.kind, adia__precond_list());
    if (adia_plan_device(plan) == 0 && adia_plan_value_type(plan) != ADIA_DOUBLE)
        return adia__error(ADIA_ERR_UNSUPPORTED, "adia_precond_create: a CPU plan in float (the "
                          "CPU solvers run in double)");
    adia_precond *M = adia__calloc(1, sizeof *M, "preconditioner");
    if (!M) return ADIA_ERR_NO_MEMORY;
    M->magic = ADIA_MAGIC_PRECOND;
    M->ops = ops;
    M->plan = plan;
    M->n = adia_plan_rows(plan);
    M->device = adia_plan_device(plan);
    M->vtype = adia_plan_value_type(plan);
    M->galerkin = galerkin;
    adia_status s = automatic ? setup_auto(M, &o) : ops->setup(M, &o);
    if (s == ADIA_OK && M->device) s = adia__gpu_fence("adia_precond_create");   /* any stream */
    if (s != ADIA_OK) {
        adia_precond_destroy(M);
        return s;
    }
    M->setup_ms = adia__now_ms() - t0;
    *out = M;
    return ADIA_OK;
}

adia_status adia_precond_apply(adia_precond *M, const void *r, void *z, void *stream)
{
    ADIA_TRY(adia__precond_check(M, "adia_precond_apply"));
    if (!r || !z) return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_apply: r or z is NULL");
    const size_t bytes = (size_t)M->n * (M->device ? adia_value_size(M->vtype) : sizeof(double));
    const char *rc = r, *zc = z;
    if (M->n > 0 && rc < zc + bytes && zc < rc + bytes)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_apply: r and z overlap");
    return M->ops->apply(M, 1.0, r, z, stream);
}

adia_status adia_solve_expected_calls(const adia_matrix *A, adia_solver method, int max_iter,
                                      const char *precond, int64_t *calls)
{
    const char *f = "adia_solve_expected_calls";
    if (!calls) return adia__error(ADIA_ERR_INVALID_ARG, "%s: calls is NULL", f);
    *calls = 0;
    if (!A) return adia__error(ADIA_ERR_INVALID_ARG, "%s: the matrix is NULL", f);
    if (method != ADIA_SOLVE_CG && method != ADIA_SOLVE_BICGSTAB && method != ADIA_SOLVE_GMRES)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: method %d (cg, bicgstab or gmres)", f,
                           (int)method);
    if (max_iter < 0) return adia__error(ADIA_ERR_INVALID_ARG, "%s: max_iter %d", f, max_iter);
    const int automatic = precond && !strcmp(precond, "auto");
    if (precond && !automatic && !adia__precond_find(precond))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: unknown preconditioner \"%s\" (kinds: %s, "
                           "auto)", f, precond, adia__precond_list());
    const int64_t per = method == ADIA_SOLVE_BICGSTAB ? 2 : 1, all = (int64_t)max_iter * per + 2;
    const int mg = precond && (!strcmp(precond, "mg") || (automatic && adia__mg_likely(&A->csr)));
    const int64_t likely = MG_LIKELY_ITERATIONS * (per + MG_CYCLE_PRODUCTS) + 2;
    *calls = mg && likely < all ? likely : all;
    return ADIA_OK;
}

const char *adia_precond_kind(const adia_precond *M)
{
    return M && M->magic == ADIA_MAGIC_PRECOND ? M->ops->name : "";
}

adia_status adia_precond_explain(const adia_precond *M, char *buf, size_t len)
{
    ADIA_TRY(adia__precond_check(M, "adia_precond_explain"));
    if (!buf || len == 0) return adia__error(ADIA_ERR_INVALID_ARG, "adia_precond_explain: no "
                                            "buffer");
    int k = snprintf(buf, len, "preconditioner %s on %s (%lld rows, %s), set up in %.3f ms\n%s",
                     M->ops->name, M->device ? "GPU" : "CPU", (long long)M->n,
                     M->vtype == ADIA_FLOAT ? "float" : "double", M->setup_ms, M->why);
    if (M->ops->explain && k >= 0 && (size_t)k < len - 1) M->ops->explain(M, buf + k, len - k);
    return ADIA_OK;
}

void adia_precond_destroy(adia_precond *M)
{
    if (!M || M->magic != ADIA_MAGIC_PRECOND) return;
    if (M->ops->destroy) M->ops->destroy(M);
    M->magic = ADIA_MAGIC_DEAD;
    free(M);
}

adia_status adia__precond_array(const adia_precond *M, int64_t n, const double *h, void **out)
{
    *out = NULL;
    if (M->device)
        return h ? adia__precond_upload(M->vtype, n, h, out) : adia__mg_gpu_zeros(M->vtype, n, out);
    double *a = adia__calloc((size_t)n + 1, sizeof *a, "preconditioner array");
    if (!a) return ADIA_ERR_NO_MEMORY;
    for (int64_t i = 0; h && i < n; i++) a[i] = h[i];
    *out = a;
    return ADIA_OK;
}

void adia__precond_array_free(const adia_precond *M, void *p)
{
    if (M->device) adia__precond_free_gpu(p);
    else free(p);
}

adia_status adia__precond_scale(int device, adia_value_type vt, int64_t n, double alpha,
                                const void *d, const void *r, void *z, void *stream)
{
    if (device) return adia__precond_scale_gpu(vt, n, alpha, d, r, z, stream);
    const double *dd = d, *rr = r;
    double *zz = z;
    if (dd)
        for (int64_t i = 0; i < n; i++) zz[i] = alpha * dd[i] * rr[i];
    else
        for (int64_t i = 0; i < n; i++) zz[i] = alpha * rr[i];
    return ADIA_OK;
}
