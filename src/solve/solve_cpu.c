/* solve_cpu.c -- the solvers on the CPU: the vector passes (OpenMP loops,
 * sums in fixed chunks, combined over the processes through the
 * reductions), the CPU's table of kernels for the methods written once
 * (cg.c, bicgstab.c, gmres.c; method.h) and its driver (krylov), the
 * restarts from the true residual (adia__solve_cpu_run).  solve.c checks,
 * scales and calls it (solve_cpu.h). */
#include "solve_cpu.h"

#include <stdio.h>
#include <string.h>

/* The method, then the true residual of x: when the recurrence says
 * converged but b - A x does not (rounding on ill-conditioned matrices),
 * or BiCGSTAB broke down on its shadow residual ((r0, r) or (r0, A p) =
 * 0), the method restarts from the true residual -- at most
 * SOLVE_RESTARTS times, within max_iter in all. */
#define SOLVE_RESTARTS 3

/* ------------------------------------------------------ vector kernels */

static int sum_chunks(int64_t n) { return n > PARALLEL_ROWS ? SUM_CHUNKS : 1; }

static int64_t chunk_start(int64_t n, int k) { return n * k / sum_chunks(n); }

/* sum over the chunks of part[k * stride + j], in chunk order */
static double in_order(int64_t n, const double *part, int stride, int j)
{
    double s = 0;
    for (int k = 0; k < sum_chunks(n); k++) s += part[k * stride + j];
    return s;
}

/* out[0..1] = the pairs part[k][0..1] summed over the chunks in order */
static void in_order_pairs(int64_t n, double (*part)[2], double out[2])
{
    out[0] = in_order(n, &part[0][0], 2, 0);
    out[1] = in_order(n, &part[0][0], 2, 1);
}

static double dot(const solver *S, const double *a, const double *b)
{
    const int64_t n = S->n;
    double part[SUM_CHUNKS];
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int k = 0; k < sum_chunks(n); k++) {
        double s = 0;
        for (int64_t i = chunk_start(n, k); i < chunk_start(n, k + 1); i++) s += a[i] * b[i];
        part[k] = s;
    }
    double s = in_order(n, part, 1, 0);
    global_sum(S, &s, 1);
    return s;
}

/* ||a||_2 = m 2^e, returned as m with *e, without overflow or underflow
 * on the way (as LAPACK's dnrm2): 2^-e, e the exponent of the global max
 * |a_i|, scales each entry into [0, 1) before it is squared, so m is in
 * [0.5, sqrt(n)) and the norm of 16 x 1e308 or of 16 x 1e-320 is right
 * (the caller decides whether m 2^e fits a double).  The scale is applied
 * as two factors of about 2^(-e/2): 2^-e alone is Inf for a subnormal max
 * (e < -1023), and Inf times the zeros of a made NaN.  m is 0 for a = 0,
 * Inf for an Inf in a and NaN for a NaN (*e 0 then). */

static double nrm2_split(const solver *S, const double *a, int *e)
{
    const int64_t n = S->n;
    double big = 0;
#pragma omp parallel for reduction(max : big) schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) big = fabs(a[i]) > big ? fabs(a[i]) : big;
    global_max(S, &big, 1);
    return adia__solve_nrm2_from_max(S, a, big, e);
}

/* The same from big, max |a_i| over every process, known already. */
double adia__solve_nrm2_from_max(const solver *S, const double *a, double big, int *e)
{
    const int64_t n = S->n;
    *e = 0;
    if (isinf(big)) return big;
    int eb = 0;
    if (big > 0) frexp(big, &eb);   /* big = f 2^eb, f in [0.5, 1) */
    const int half = -eb / 2;
    const double d1 = ldexp(1.0, half), d2 = ldexp(1.0, -eb - half);   /* both normal */
    double part[SUM_CHUNKS];
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int k = 0; k < sum_chunks(n); k++) {
        double s = 0;
        for (int64_t i = chunk_start(n, k); i < chunk_start(n, k + 1); i++) {
            double t = (a[i] * d1) * d2;
            s += t * t;
        }
        part[k] = s;
    }
    double s = in_order(n, part, 1, 0);
    global_sum(S, &s, 1);
    if (!isnan(s)) *e = eb;
    return sqrt(s);
}

/* ||a||_2 as a double: Inf where it exceeds the range (a residual that
 * large is a stop reason anyway). */
double adia__solve_nrm2(const solver *S, const double *a)
{
    int e;
    double m = nrm2_split(S, a, &e);
    return ldexp(m, e);
}


/* y = x 2^e, exact (not a factor that could overflow by itself). */
void adia__solve_scale_pow2(int64_t n, const double *x, int e, double *y)
{
    const double f = pow2_factor(e);
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) y[i] = times_pow2(x[i], e, f);
}

/* y += alpha x */
static void axpy(int64_t n, double alpha, const double *x, double *y)
{
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

/* z = M r: the stage (M's apply; r and z apart), else the diagonal
 * (Jacobi) or r itself */
static adia_status precondition(const solver *S, const double *r, double *z)
{
    if (S->M) return S->M->ops->apply(S->M, S->m_alpha, r, z, NULL);
#pragma omp parallel for schedule(static) if (S->n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < S->n; i++) z[i] = S->diag.host ? S->diag.host[i] * r[i] : r[i];
    return ADIA_OK;
}

/* y = (A / sa) x through the operator, timed */
static adia_status apply(solver *S, const double *x, double *y)
{
    double t0 = adia__now_ms();
    adia_status s = S->op->apply(S->op->ctx, S->a_inv, x, y);
    S->spmv_ms += adia__now_ms() - t0;
    S->spmvs++;
    return s;
}

/* r = b - A x */
adia_status adia__solve_residual(solver *S, const double *b, const double *x, double *r)
{
    ADIA_TRY(apply(S, x, r));
#pragma omp parallel for schedule(static) if (S->n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < S->n; i++) r[i] = b[i] - r[i];
    return ADIA_OK;
}

/* ------------------------------------------------------------- methods */

/* CG is written once (cg.c, method.h) over a device's kernels; these are
 * the CPU's: each pass sums in the fixed chunks of dot(), for the rows
 * held here, and a method's scalars come from the same functions as on
 * the GPU. */

/* One CPU solve as the methods see it: its vectors and state. */
typedef struct cpu_run {
    solver *S;
    const double *b;
    double *x, *r, *p, *q, *s, *u;
    double *r0, *ph, *sh, *t;  /* BiCGSTAB's (v is q, s lives in r)       */
    double *V, *Z;             /* GMRES: the basis, flexible: M V_j      */
    solve_gm_small sm;         /* GMRES's short vectors                  */
    double dots[SOLVE_NDOT];   /* the product's sums, zeroed by their reader */
    solve_state st;
} cpu_run;

static double *cpu_vec(cpu_run *R, solve_vec v)
{
    switch (v) {
    case SV_X: return R->x;
    case SV_B: return (double *)R->b;
    case SV_R: return R->r;
    case SV_P: return R->p;
    case SV_Q: return R->q;
    case SV_S: return R->s;
    case SV_U: return R->u;
    case SV_R0: return R->r0;
    case SV_PH: return R->ph;
    case SV_SH: return R->sh;
    case SV_T: return R->t;
    default: return NULL;
    }
}

static adia_status cpu_residual(void *run)
{
    cpu_run *R = run;
    return adia__solve_residual(R->S, R->b, R->x, R->r);
}

static adia_status cpu_precond(void *run, solve_vec r, solve_vec z)
{
    cpu_run *R = run;
    return precondition(R->S, cpu_vec(R, r), cpu_vec(R, z));
}

/* y = A x, then the five sums of adia_spmv_sums_async over the rows held
 * here (companion z; NULL: x), summed over the processes, added to dots. */
static adia_status cpu_product_sums(void *run, solve_vec xv, solve_vec yv, solve_vec zv)
{
    cpu_run *R = run;
    solver *S = R->S;
    if (R->st.status != SOLVE_RUNNING) return ADIA_OK;   /* BiCGSTAB's half step broke */
    const int64_t n = S->n;
    const double *x = cpu_vec(R, xv), *z = zv == SV_NONE ? x : cpu_vec(R, zv);
    double *y = cpu_vec(R, yv);
    ADIA_TRY(apply(S, x, y));
    double part[SUM_CHUNKS][SOLVE_NDOT];
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int k = 0; k < sum_chunks(n); k++) {
        double t[SOLVE_NDOT] = {0};
        for (int64_t i = chunk_start(n, k); i < chunk_start(n, k + 1); i++) {
            const double xi = x[i], yi = y[i], zi = z[i];
            t[SOLVE_DOT_XY] += xi * yi;
            t[SOLVE_DOT_ZX] += zi * xi;
            t[SOLVE_DOT_ZZ] += zi * zi;
            t[SOLVE_DOT_YY] += yi * yi;
            t[SOLVE_DOT_ZY] += zi * yi;
        }
        memcpy(part[k], t, sizeof t);
    }
    double sums[SOLVE_NDOT];
    for (int j = 0; j < SOLVE_NDOT; j++) sums[j] = in_order(n, &part[0][0], SOLVE_NDOT, j);
    global_sum(S, sums, SOLVE_NDOT);
    for (int j = 0; j < SOLVE_NDOT; j++) R->dots[j] += sums[j];
    return ADIA_OK;
}

/* After r = b - A x: u = D r (Jacobi), a fresh state. */
static adia_status cpu_cg_start(void *run)
{
    cpu_run *R = run;
    const double *d = R->S->diag.host;
    const int64_t n = R->S->n;
    if (d) {
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
        for (int64_t i = 0; i < n; i++) R->u[i] = d[i] * R->r[i];
    }
    R->st.iter = 0;
    R->st.status = SOLVE_RUNNING;
    return ADIA_OK;
}

/* CG's vector pass (cg_gpu.cu's cg_step): p = u + beta p, s = w + beta s,
 * x += alpha p, r -= alpha s (u = D r; a stage: the updated r'r). */
static adia_status cpu_cg_step(void *run)
{
    cpu_run *R = run;
    solver *S = R->S;
    if (R->st.status != SOLVE_RUNNING) return ADIA_OK;
    const solve_cg_scalars c = solve_cg_step_scalars(R->dots, &R->st);
    const int64_t n = S->n;
    const double *d = S->diag.host, *w = R->q, alpha = c.alpha, beta = c.beta;
    const int first = R->st.iter == 0, stage = S->M != NULL;
    double *x = R->x, *r = R->r, *u = R->u, *p = R->p, *sv = R->s;
    double part[SUM_CHUNKS], rr = 0;
    if (c.status == SOLVE_RUNNING) {
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
        for (int k = 0; k < sum_chunks(n); k++) {
            double t = 0;
            for (int64_t i = chunk_start(n, k); i < chunk_start(n, k + 1); i++) {
                const double ri = r[i], ui = stage ? u[i] : d ? d[i] * ri : ri;
                const double pi = first ? ui : ui + beta * p[i];
                const double si = first ? w[i] : w[i] + beta * sv[i];
                p[i] = pi;
                sv[i] = si;
                x[i] += alpha * pi;
                const double rn = ri - alpha * si;
                r[i] = rn;
                if (d) u[i] = d[i] * rn;
                t += rn * rn;
            }
            part[k] = t;
        }
        rr = in_order(n, part, 1, 0);
        if (stage && !R->st.split) global_sum(S, &rr, 1);
    }
    solve_cg_finish(&R->st, R->dots, &c, stage, rr);
    return ADIA_OK;
}

/* BiCGSTAB's vector passes (bicgstab_gpu.cu's kernels; d: Jacobi's D). */

/* After r = b - A x: r0 = r, p = v = 0, the state from r0'r. */
static adia_status cpu_bicg_start(void *run)
{
    cpu_run *R = run;
    const int64_t n = R->S->n;
    double part[SUM_CHUNKS];
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int k = 0; k < sum_chunks(n); k++) {
        double t = 0;
        for (int64_t i = chunk_start(n, k); i < chunk_start(n, k + 1); i++) {
            R->r0[i] = R->r[i];
            R->p[i] = R->q[i] = 0;
            t += R->r[i] * R->r[i];
        }
        part[k] = t;
    }
    double rr = in_order(n, part, 1, 0);
    global_sum(R->S, &rr, 1);
    solve_bicg_start_finish(&R->st, rr);
    return ADIA_OK;
}

/* p = r + beta (p - omega v); ph = D p */
static adia_status cpu_bicg_direction(void *run)
{
    cpu_run *R = run;
    if (R->st.status != SOLVE_RUNNING) return ADIA_OK;
    const int64_t n = R->S->n;
    const double *d = R->S->diag.host, beta = R->st.beta, omega = R->st.omega;
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        const double pi = R->r[i] + beta * (R->p[i] - omega * R->q[i]);
        R->p[i] = pi;
        if (d) R->ph[i] = d[i] * pi;
    }
    return ADIA_OK;
}

/* alpha = rho / r0'v; s = r - alpha v (into r); sh = D s */
static adia_status cpu_bicg_half(void *run)
{
    cpu_run *R = run;
    if (R->st.status != SOLVE_RUNNING) return ADIA_OK;
    const int64_t n = R->S->n;
    const double *d = R->S->diag.host;
    double alpha;
    const int ok = solve_bicg_alpha(&R->st, R->dots, &alpha);
    if (ok) {
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
        for (int64_t i = 0; i < n; i++) {
            const double si = R->r[i] - alpha * R->q[i];
            R->r[i] = si;
            if (d) R->sh[i] = d[i] * si;
        }
    }
    solve_bicg_half_finish(&R->st, R->dots, alpha, ok);
    return ADIA_OK;
}

/* x += alpha ph + omega sh; r = s - omega t; r0'r, r'r over every
 * process (one reduction), then the state */
static adia_status cpu_bicg_update(void *run)
{
    cpu_run *R = run;
    if (R->st.status != SOLVE_RUNNING) return ADIA_OK;
    const int64_t n = R->S->n;
    double omega;
    const int ok = solve_bicg_omega(&R->st, R->dots, &omega);
    const double alpha = R->st.alpha;
    double part[SUM_CHUNKS][2], v[2] = {0, 0};
    if (ok) {
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
        for (int k = 0; k < sum_chunks(n); k++) {
            double a = 0, c = 0;
            for (int64_t i = chunk_start(n, k); i < chunk_start(n, k + 1); i++) {
                R->x[i] += alpha * R->ph[i] + omega * R->sh[i];
                const double ri = R->r[i] - omega * R->t[i];
                R->r[i] = ri;
                a += R->r0[i] * ri;
                c += ri * ri;
            }
            part[k][0] = a;
            part[k][1] = c;
        }
        in_order_pairs(n, part, v);
        global_sum(R->S, v, 2);
    }
    solve_bicg_update_finish(&R->st, R->dots, v);
    return ADIA_OK;
}

/* GMRES's passes (gmres_gpu.cu's kernels but for the orthogonalization:
 * modified Gram-Schmidt, see method.h). */

static adia_status cpu_product(void *run, solve_vec x, solve_vec y)
{
    cpu_run *R = run;
    return apply(R->S, cpu_vec(R, x), cpu_vec(R, y));
}

/* After w = b - A x (in r): beta = ||w||, the cycle's state. */
static adia_status cpu_gm_cycle_start(void *run)
{
    cpu_run *R = run;
    solve_gm_cycle_finish(&R->st, &R->sm, dot(R->S, R->r, R->r));
    return ADIA_OK;
}

/* V_j = w / h(j,j-1); p = D V_j (V_j itself without Jacobi) */
static adia_status cpu_gm_next_basis(void *run)
{
    cpu_run *R = run;
    const solve_state *st = &R->st;
    if (st->status != SOLVE_RUNNING || st->j >= st->m) return ADIA_OK;
    const int64_t n = R->S->n;
    const double inv = 1.0 / st->hnext, *d = R->S->diag.host;
    double *vj = R->V + (int64_t)st->j * n;
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        const double v = R->r[i] * inv;
        vj[i] = v;
        R->p[i] = d ? d[i] * v : v;
    }
    return ADIA_OK;
}

/* w against V_0..V_j, one V_k after the other (each dot, then its update,
 * the vector still in cache): H's column j in hcol, ||w||^2 */
static adia_status cpu_gm_orthogonalize(void *run)
{
    cpu_run *R = run;
    solve_state *st = &R->st;
    if (st->status != SOLVE_RUNNING || st->j >= st->m) return ADIA_OK;
    const int64_t n = R->S->n;
    for (int k = 0; k <= st->j; k++) {
        const double *vk = R->V + (int64_t)k * n;
        const double h = dot(R->S, vk, R->r);
        axpy(n, -h, vk, R->r);
        R->sm.hcol[k] = h;
    }
    st->wnorm2 = dot(R->S, R->r, R->r);
    return ADIA_OK;
}

static adia_status cpu_gm_givens(void *run)
{
    cpu_run *R = run;
    solve_gm_givens(&R->st, &R->sm);
    return ADIA_OK;
}

/* flexible: Z_j = q (= M V_j) */
static adia_status cpu_gm_keep_z(void *run)
{
    cpu_run *R = run;
    const solve_state *st = &R->st;
    if (st->status != SOLVE_RUNNING || st->j >= st->m) return ADIA_OK;
    const int64_t n = R->S->n;
    memcpy(R->Z + (int64_t)st->j * n, R->q, (size_t)n * sizeof *R->q);
    return ADIA_OK;
}

/* out (+)= D (W y) over the cycle's k = st->j steps (W: V or Z; d NULL: no D) */
static void combine(cpu_run *R, const double *W, const double *d, int add, double *out)
{
    const int64_t n = R->S->n;
    const int k = R->st.j;
    const double *y = R->sm.y;
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        double a = 0;
        for (int l = 0; l < k; l++) a += y[l] * W[(int64_t)l * n + i];
        a = d ? d[i] * a : a;
        out[i] = add ? out[i] + a : a;
    }
}

/* y, then x += D V y (flexible: Z y) */
static adia_status cpu_gm_update_x(void *run)
{
    cpu_run *R = run;
    solve_gm_solve_y(&R->st, &R->sm);
    const int flex = R->Z != NULL;
    combine(R, flex ? R->Z : R->V, flex ? NULL : R->S->diag.host, 1, R->x);
    return ADIA_OK;
}

/* y, then p = V y */
static adia_status cpu_gm_combine(void *run)
{
    cpu_run *R = run;
    solve_gm_solve_y(&R->st, &R->sm);
    combine(R, R->V, NULL, 0, R->p);
    return ADIA_OK;
}

static adia_status cpu_add_q(void *run)
{
    cpu_run *R = run;
    axpy(R->S->n, 1.0, R->q, R->x);
    return ADIA_OK;
}

static const solve_kernels cpu_kernels = {
    .residual = cpu_residual, .precond = cpu_precond, .product_sums = cpu_product_sums,
    .cg_start = cpu_cg_start, .cg_step = cpu_cg_step, .bicg_start = cpu_bicg_start,
    .bicg_direction = cpu_bicg_direction, .bicg_half = cpu_bicg_half,
    .bicg_update = cpu_bicg_update, .product = cpu_product,
    .gm_cycle_start = cpu_gm_cycle_start, .gm_next_basis = cpu_gm_next_basis,
    .gm_orthogonalize = cpu_gm_orthogonalize, .gm_givens = cpu_gm_givens,
    .gm_keep_z = cpu_gm_keep_z, .gm_update_x = cpu_gm_update_x, .gm_combine = cpu_gm_combine,
    .add_q = cpu_add_q};

/* GMRES's cycles on the CPU (gmres.c): steps while running with room in
 * the cycle, its end, the next while running (solve_graph.cu's loop). */
static adia_status gmres_cycles(const solve_method *m, const solve_state *st)
{
    adia_status s = adia__gm_begin_cycle(m);
    while (s == ADIA_OK) {
        while (s == ADIA_OK && st->status == SOLVE_RUNNING && st->j < st->m) s = adia__gm_step(m);
        if (s == ADIA_OK) s = adia__gm_end_cycle(m);
        if (s != ADIA_OK || st->status != SOLVE_RUNNING) break;
        s = adia__gm_begin_cycle(m);
    }
    return s;
}

/* A method on the CPU (cg.c, bicgstab.c, gmres.c over cpu_kernels) from
 * x; w: workspace_vectors() x n doubles.  Leaves info->stop and adds its
 * iterations to info->iterations. */
static adia_status krylov(solver *S, adia_solver method, const double *b, double *x, double *w)
{
    const int64_t n = S->n;
    const int staged = S->diag.host || S->M;   /* u, ph, sh apart from r, p, s */
    const int mr = S->restart, flex = method == ADIA_SOLVE_GMRES && S->M && S->M->ops->varies;
    cpu_run R = {.S = S, .b = b, .x = x, .r = w, .p = w + n, .q = w + 2 * n};
    double *small = NULL;
    if (method == ADIA_SOLVE_CG) {
        R.s = w + 3 * n;
        R.u = staged ? w + 4 * n : R.r;
    } else if (method == ADIA_SOLVE_BICGSTAB) {
        R.r0 = w + 3 * n;
        R.t = w + 4 * n;
        R.ph = staged ? w + 5 * n : R.p;
        R.sh = staged ? w + 6 * n : R.r;
    } else {
        R.V = w + 3 * n;
        R.Z = flex ? R.V + (int64_t)(mr + 1) * n : NULL;
        /* H ((m + 1) m), c (m + 2), hcol, cs, sn, g, y (m + 1 each), as the GPU's */
        const size_t m1 = (size_t)mr + 1;
        small = adia__calloc(m1 * ((size_t)mr + 6) + 1, sizeof *small, "GMRES short vectors");
        if (!small) return ADIA_ERR_NO_MEMORY;
        R.sm = (solve_gm_small){small, small + m1 * (mr + 5), small + m1 * mr,
                                small + m1 * (mr + 1), small + m1 * (mr + 2),
                                small + m1 * (mr + 3), small + m1 * (mr + 4)};
    }
    /* several processes: CG's stop after a stage's update waits for the
     * next product's sums, as on the GPU (no reduction of its own) */
    R.st = (solve_state){.tol2 = S->tol * S->tol, .max_iter = S->max_iter - S->info->iterations,
                         .m = mr, .split = S->comm->sum != NULL};
    const solve_method m = {&cpu_kernels, &R, S->diag.host != NULL, S->M != NULL, flex};
    adia_status s;
    if (method == ADIA_SOLVE_GMRES) {
        s = gmres_cycles(&m, &R.st);
    } else {
        const int cg = method == ADIA_SOLVE_CG;
        s = cg ? adia__cg_begin(&m) : adia__bicg_begin(&m);
        while (s == ADIA_OK && R.st.status == SOLVE_RUNNING)
            s = cg ? adia__cg_iteration(&m) : adia__bicg_iteration(&m);
    }
    free(small);
    S->info->iterations += R.st.iter;
    adia__solve_stop_reason(&R.st, method, S->info->stop, sizeof S->info->stop);
    return s;
}

/* Doubles of workspace beside b / sb (krylov's layout): CG 5 n, BiCGSTAB
 * 7 n, GMRES (m + 4) n (r, p, q and the basis), flexible GMRES (2 m + 4) n. */
int64_t adia__solve_cpu_vectors(const solver *S, adia_solver method)
{
    const int64_t m = S->restart;
    if (method == ADIA_SOLVE_GMRES) return m + 4 + (S->M && S->M->ops->varies ? m : 0);
    return method == ADIA_SOLVE_CG ? 5 : 7;
}

/* The CPU methods, restarted from the true residual, on bs (= b / sb);
 * w: workspace. */
adia_status adia__solve_cpu_run(solver *S, adia_solver method, const double *bs, double *x,
                                double *w)
{
    adia_solve_info *info = S->info;
    double *r = w;   /* the true residual, after the method */
    adia_status s = ADIA_OK;
    int said = 0;
    for (int restart = 0; s == ADIA_OK; restart++) {
        snprintf(info->stop, sizeof info->stop, "iteration limit reached");
        s = krylov(S, method, bs, x, w);
        if (s == ADIA_OK) s = adia__solve_residual(S, bs, x, r);
        if (s != ADIA_OK) break;
        const double rnorm = adia__solve_nrm2(S, r);
        info->residual = rnorm / S->bnorm;
        info->converged = rnorm <= S->tol;        /* false for NaN */
        said = !strcmp(info->stop, "converged");
        /* BiCGSTAB's shadow residual became orthogonal to r or A p: go on
         * from the true residual with a new one */
        int shadow = method == ADIA_SOLVE_BICGSTAB && isfinite(rnorm) &&
                     (!strncmp(info->stop, "breakdown: (r0, r)", 18) ||
                      !strncmp(info->stop, "breakdown: (r0, A p)", 20));
        if (info->converged || !(said || shadow) || restart == SOLVE_RESTARTS ||
            info->iterations >= S->max_iter)
            break;
    }
    if (s == ADIA_OK && said && !info->converged)
        snprintf(info->stop, sizeof info->stop, isfinite(info->residual)
                 ? "the recurrence converged, the true residual did not (%.3g): lost accuracy"
                 : "non-finite true residual (%g)", info->residual);
    return s;
}

