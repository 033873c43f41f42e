/* cmd_solve.c -- `adia solve FILE.mtx | --gen SPEC`: solve A x = b with CG
 * or BiCGSTAB on top of the planner, b = A * ones so that the exact
 * solution is known; report iterations, residual, error and the format
 * the planner picked.  Exit 1 when it does not converge. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: adia solve FILE.mtx | --gen SPEC [--method cg|bicgstab] [--rtol R]\n"
    "                  [--max-iter N] [--jacobi] [--format NAME] [--json]\n"
    "Solve A x = b (b = A * ones, x0 = 0) on the CPU with every product through\n"
    "the planner's format; exit 1 if it does not converge.";

typedef struct solve_opts {
    const char *gen, *method, *format;
    double rtol;
    long max_iter;
    bool jacobi, json;
} solve_opts;

static void print_result(const adia_matrix *A, const solve_opts *o, const adia_solve_info *in,
                         double err, bool json)
{
    if (json) {
        cli_json j;
        json_begin(&j, stdout);
        json_str(&j, "matrix", adia_matrix_name(A));
        json_str(&j, "method", o->method);
        json_bool(&j, "jacobi", o->jacobi);
        json_str(&j, "format", in->format);
        json_bool(&j, "converged", in->converged);
        json_int(&j, "iterations", in->iterations);
        json_num(&j, "residual", in->residual);
        json_num(&j, "error", err);
        json_num(&j, "time_ms", in->time_ms);
        json_num(&j, "spmv_ms", in->spmv_ms);
        json_int(&j, "spmvs", in->spmvs);
        json_str(&j, "stop", in->stop);
        json_end(&j);
        return;
    }
    printf("%s: %d x %d, %lld nonzeros, %s%s, format %s (cpu)\n", adia_matrix_name(A),
           adia_matrix_rows(A), adia_matrix_cols(A), (long long)adia_matrix_nnz(A), o->method,
           o->jacobi ? " + Jacobi" : "", in->format);
    printf("  %s after %d iterations: residual %.3g (rtol %.3g), |x - x*| / |x*| = %.3g\n",
           in->stop, in->iterations, in->residual, o->rtol, err);
    printf("  %.3f ms, of which %.3f ms in %d SpMVs\n", in->time_ms, in->spmv_ms, in->spmvs);
}

/* b = A * ones; x0 = 0; solve; error of x against ones. */
static int solve(const char *cmd, const adia_matrix *A, adia_plan *P, const solve_opts *o,
                 adia_solver method)
{
    int32_t n = adia_matrix_rows(A);
    double *one = malloc((size_t)n * sizeof *one + 8), *b = malloc((size_t)n * sizeof *b + 8),
           *x = calloc((size_t)n + 1, sizeof *x);
    int rc = 1;
    if (!one || !b || !x) {
        fprintf(stderr, "adia %s: out of memory for %d-entry vectors\n", cmd, n);
        goto done;
    }
    for (int32_t i = 0; i < n; i++) one[i] = 1;
    adia_solve_options so = {.method = method, .max_iter = (int)o->max_iter, .rtol = o->rtol,
                             .jacobi = o->jacobi};
    adia_solve_info in;
    adia_status s = adia_matrix_spmv(A, 1.0, one, 0.0, b);
    if (s == ADIA_OK) s = adia_solve(A, P, b, x, &so, &in);
    if (s != ADIA_OK) {
        rc = cli_fail(cmd, s);
        goto done;
    }
    double e = 0;
    for (int32_t i = 0; i < n; i++) e += (x[i] - 1) * (x[i] - 1);
    print_result(A, o, &in, n ? sqrt(e / n) : 0, o->json);
    rc = in.converged ? 0 : 1;
    if (rc) fprintf(stderr, "adia %s: did not converge: %s (residual %.3g, rtol %.3g)\n", cmd,
                    in.stop, in.residual, o->rtol);
done:
    free(one);
    free(b);
    free(x);
    return rc;
}

int cmd_solve(int argc, char **argv)
{
    solve_opts o = {.method = "cg", .rtol = 1e-8, .max_iter = 1000};
    bool done;
    const cli_option opts[] = {
        {"gen", CLI_STRING, &o.gen, "generate the matrix from SPEC (adia gen --list)"},
        {"method", CLI_STRING, &o.method, "cg (symmetric positive definite A) or bicgstab"},
        {"rtol", CLI_DOUBLE, &o.rtol, "stop at ||b - A x|| <= rtol ||b|| (default 1e-8)"},
        {"max-iter", CLI_INT, &o.max_iter, "iteration limit (default 1000)"},
        {"jacobi", CLI_FLAG, &o.jacobi, "diagonal (Jacobi) preconditioner"},
        {"format", CLI_STRING, &o.format, "use this format instead of the planner's choice"},
        {"json", CLI_FLAG, &o.json, "print one JSON object"},
        {0},
    };
    const char *pos[1];
    int npos, rc = cli_parse(argc, argv, usage, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    adia_solver method = !strcmp(o.method, "cg") ? ADIA_SOLVE_CG : ADIA_SOLVE_BICGSTAB;
    if (strcmp(o.method, "cg") && strcmp(o.method, "bicgstab"))
        return cli_usage_error(argv[0], "--method must be cg or bicgstab, not '%s'", o.method);
    if ((rc = cli_check_range(argv[0], "rtol", o.rtol, 1e-300, 0.9)) ||
        (rc = cli_check_range(argv[0], "max-iter", (double)o.max_iter, 1, 1e8)))
        return rc;
    if (o.format && (rc = cli_check_format(argv[0], o.format))) return rc;
    adia_matrix *A;
    if ((rc = cli_open_matrix(argv[0], npos ? pos[0] : NULL, o.gen, &A))) return rc;
    adia_plan *P = NULL;
    if (o.format) {   /* a fixed format; else adia_solve plans for max_iter calls */
        adia_plan_hints h = {.expected_calls = o.max_iter, .vtype = ADIA_DOUBLE,
                             .chooser = ADIA_CHOOSE_FIXED, .format = o.format};
        adia_status s = adia_plan_create(A, &h, &P);
        if (s != ADIA_OK) rc = cli_fail(argv[0], s);
    }
    if (rc == 0) rc = solve(argv[0], A, P, &o, method);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    return rc;
}
