/* dist_solve.c -- the solvers on a distributed matrix: adia_solve_operator
 * (the methods of adia_solve, written once in libadia) over an operator
 * whose apply is the distributed SpMV and whose sums and maxima are
 * MPI_Allreduce.  Every process then sees the same scalars and takes the
 * same branches.  A device matrix adds the operator's device callbacks
 * (dist_dsolve.c) and runs libadia's GPU methods: every vector on the
 * device. */
#include "dist.h"

#include <math.h>

void adia__dist_op_note(dist_op *o, adia_status s)
{
    if (s == ADIA_OK || o->failed != ADIA_OK) return;
    o->failed = s;
    snprintf(o->why, sizeof o->why, "%s", adia_last_error());
}

/* y = alpha A x: halo exchange, then the block's plan.  A failure here is
 * this process's alone: y becomes NaN (every process stops at the next
 * reduction) and the error is kept for after the solve. */
static adia_status op_apply(void *ctx, double alpha, const double *x, double *y)
{
    dist_op *o = ctx;
    adia_dist_matrix *D = o->D;
    adia_status s = adia__dist_spmv_host(D, alpha, x, 0.0, y);
    adia__dist_op_note(o, s);
    if (s != ADIA_OK)
        for (int64_t i = 0; i < D->rows; i++) y[i] = NAN;
    return ADIA_OK;
}

static void reduce(dist_op *o, double *v, int count, MPI_Op op)
{
    double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, op, o->D->comm);
    o->D->reduce_ms += (MPI_Wtime() - t0) * 1e3;
}

static void op_sum(void *ctx, double *v, int count) { reduce(ctx, v, count, MPI_SUM); }
static void op_max(void *ctx, double *v, int count) { reduce(ctx, v, count, MPI_MAX); }

static adia_status op_agree(void *ctx, adia_status s)
{
    return adia__dist_agree(((dist_op *)ctx)->D->comm, s);
}

/* The methods over the distributed operator: the CPU's, or on a device
 * matrix the GPU's; b and x host vectors, or (stream_given) device ones
 * ordered on stream. */
static adia_status solve_operator(adia_dist_matrix *D, const double *b, double *x,
                                  const adia_solve_options *opt, adia_solve_info *info,
                                  int stream_given, void *stream)
{
    const double t0 = MPI_Wtime();
    dist_op o = {.D = D};
    adia_operator op = {.n = D->rows, .first = D->first, .apply = op_apply, .sum = op_sum,
                        .max = op_max, .agree = op_agree, .diag = D->diag,
                        .max_abs = D->max_abs, .ctx = &o};
    adia_solve_options on;
    adia_solve_options_default(&on);
    if (opt) on = *opt;
    on.device = D->dev != NULL;
    adia_status s = D->dev ? adia__dist_device_operator(&o, &op) : ADIA_OK;
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK)
        s = stream_given ? adia_solve_operator_device(&op, b, x, &on, info, stream)
                         : adia_solve_operator(&op, b, x, &on, info);
    /* setup_ms: the call less its iterations, the device operator made above included */
    const double total = (MPI_Wtime() - t0) * 1e3;
    const double it = info->time_ms > 0 && isfinite(info->time_ms) ? info->time_ms : 0;
    info->setup_ms = total > it ? total - it : 0;
    adia__dist_trace_write(D);
    /* a local failure or a peer's timeout puts NaN into the sums: what the
     * solver says of them (a non-finite b, a breakdown), on this process or
     * another, follows from it -- so the cause is agreed first */
    adia_status cause = o.failed != ADIA_OK ? adia_set_error(o.failed, "%s", o.why) : ADIA_OK;
    if (cause == ADIA_OK && D->dev) {
        adia_status p = adia__dist_peer_check(D);   /* a copy's own error only without one */
        if (p == ADIA_ERR_INTERNAL || (p != ADIA_OK && s == ADIA_OK)) cause = p;
    }
    cause = adia__dist_agree(D->comm, cause);
    return cause != ADIA_OK ? cause : adia__dist_agree(D->comm, s);
}

adia_status adia_dist_solve(adia_dist_matrix *D, const double *b, double *x,
                            const adia_solve_options *opt, adia_solve_info *info)
{
    DIST_TRY(adia__dist_check(D, "adia_dist_solve"));
    adia_status s = b && x ? ADIA_OK : adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_solve: "
                                                      "b or x is NULL");
    DIST_TRY(adia__dist_agree(D->comm, s));
    adia_solve_info scratch;
    if (!info) info = &scratch;
    s = solve_operator(D, b, x, opt, info, 0, NULL);
    snprintf(info->format, sizeof info->format, "%s", adia__dist_format(D));
    return s;
}

adia_status adia_dist_solve_device(adia_dist_matrix *D, const double *d_b, double *d_x,
                                   const adia_solve_options *opt, adia_solve_info *info,
                                   void *stream)
{
    const char *f = "adia_dist_solve_device";
    DIST_TRY(adia__dist_check(D, f));
    adia_status s = d_b && d_x ? ADIA_OK : adia_set_error(ADIA_ERR_INVALID_ARG, "%s: b or x is "
                                                          "NULL", f);
    DIST_TRY(adia__dist_agree(D->comm, s));
    if (!D->dev)   /* the same on every process: the device was agreed */
#ifdef ADIA_HAVE_CUDA
        return adia_set_error(ADIA_ERR_INVALID_ARG, "%s: the matrix is planned on the CPU "
                              "(hints.device 0, or -1 without a GPU everywhere): use "
                              "adia_dist_solve", f);
#else
        return adia_set_error(ADIA_ERR_NO_DEVICE, "%s: adia_mpi was built without CUDA", f);
#endif
    adia_solve_info scratch;
    if (!info) info = &scratch;
    s = solve_operator(D, d_b, d_x, opt, info, 1, stream);
    snprintf(info->format, sizeof info->format, "%s", adia__dist_format(D));
    return s;
}
