/* operator.c -- the solvers' operator (solve_internal.h) made from a plan
 * or from an adia_operator.  A plan is reached through its public
 * products alone (adia_spmv, adia_spmv_async, adia_spmv_sums_async) and
 * its format's public queries: the methods need nothing else of it, and
 * a new format or product kernel changes nothing here. */
#include "solve_internal.h"

static adia_status plan_apply(void *ctx, double alpha, const double *x, double *y)
{
    const adia__plan_op_ctx *c = ctx;
    return adia_spmv(c->plan, alpha, x, 0.0, y);
}

/* A GPU plan's host product: the CSR it was made from, or without one the
 * plan's format as a matrix (downloaded once: a rare check, x rounded
 * below double's normal range). */
static adia_status matrix_apply(void *ctx, double alpha, const double *x, double *y)
{
    adia__plan_op_ctx *c = ctx;
    if (!c->A && !c->own) ADIA_TRY(adia_format_to_matrix(adia_plan_format(c->plan), &c->own));
    return adia_matrix_spmv(c->A ? c->A : c->own, alpha, x, 0.0, y);
}

void adia__solve_op_plan_free(adia__plan_op_ctx *ctx)
{
    adia_matrix_destroy(ctx->own);
    ctx->own = NULL;
}

static adia_status plan_apply_device(void *ctx, double alpha, const void *x, void *y,
                                     void *stream)
{
    const adia__plan_op_ctx *c = ctx;
    return adia_spmv_async(c->plan, alpha, x, 0.0, y, stream);
}

static adia_status plan_apply_sums(void *ctx, double alpha, const void *x, void *y,
                                   const void *z, double *out, void *work, void *stream)
{
    const adia__plan_op_ctx *c = ctx;
    return adia_spmv_sums_async(c->plan, alpha, x, y, NULL, z, out, work, stream);
}

void adia__solve_op_plan(adia_plan *plan, const adia_matrix *A, adia__plan_op_ctx *ctx,
                         adia__solve_op *op)
{
    const int gpu = adia_plan_device(plan) == 1;
    const adia_format *F = adia_plan_format(plan);
    *ctx = (adia__plan_op_ctx){.plan = plan, .A = A};
    *op = (adia__solve_op){.n = adia_plan_rows(plan), .vt = adia_plan_value_type(plan),
                           .ctx = ctx, .device_graph = 2,
                           .apply_bytes = (double)adia_format_bytes(F),
                           .storage_bytes = (double)adia_format_storage_bytes(F)};
    if (!gpu) {
        op->apply = plan_apply;
        op->vt = ADIA_DOUBLE;
        return;
    }
    op->apply = matrix_apply;
    op->apply_device = plan_apply_device;
    op->apply_sums_device = plan_apply_sums;
    op->sums_work_bytes = adia_spmv_sums_work_bytes(plan);
    op->sums_fused = adia__format_sums_fused(F);
}

/* The caller's callbacks, ctx included, behind the operator's face. */
static adia_status user_apply_device(void *ctx, double alpha, const void *x, void *y,
                                     void *stream)
{
    const adia_operator *u = ctx;
    return u->apply_device(u->ctx, alpha, x, y, stream);
}

static adia_status user_apply_sums(void *ctx, double alpha, const void *x, void *y,
                                   const void *z, double *out, void *work, void *stream)
{
    const adia_operator *u = ctx;
    (void)work;   /* the caller's own */
    return u->apply_sums_device(u->ctx, alpha, x, y, z, out, stream);
}

static adia_status user_apply(void *ctx, double alpha, const double *x, double *y)
{
    const adia_operator *u = ctx;
    return u->apply(u->ctx, alpha, x, y);
}

void adia__solve_op_user(const adia_operator *user, adia__solve_op *op, adia__solve_comm *comm)
{
    const double vs = sizeof(double), n = (double)user->n;
    *op = (adia__solve_op){.n = user->n, .first = user->first, .vt = ADIA_DOUBLE,
                           .ctx = (void *)user, .apply = user->apply ? user_apply : NULL,
                           .apply_device = user->apply_device ? user_apply_device : NULL,
                           .apply_sums_device = user->apply_sums_device ? user_apply_sums : NULL,
                           .sums_fused = user->apply_sums_device != NULL,
                           .device_graph = user->device_graph,
                           .apply_bytes = user->apply_bytes > 0 ? user->apply_bytes : 0,
                           .diag = user->diag, .max_abs = user->max_abs};
    /* its matrix: what one product moves less a pass each of x and y */
    if (op->apply_bytes > 2 * vs * n) op->storage_bytes = op->apply_bytes - 2 * vs * n;
    *comm = (adia__solve_comm){.ctx = user->ctx, .sum = user->sum, .max = user->max,
                               .agree = user->agree, .sum_device = user->sum_device,
                               .max_device = user->max_device};
}
