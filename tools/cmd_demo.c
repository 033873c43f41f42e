/* cmd_demo.c -- `adia demo` (what `make demo` runs): one generated matrix of
 * each of the paper's types and two small real matrices from data/; for
 * each, analyse, build the chosen format, run SpMV on the GPU when one can
 * run it (else the CPU), check it, and compare with plain CSR.  One table. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: adia demo\n"
    "Generate a type I, II and III matrix, read two matrices from data/, pick\n"
    "each one's format by analysis, run and check SpMV (GPU if present, else\n"
    "CPU) and compare its time with plain CSR.  No arguments, no downloads.";

/* Generated matrices: one per type of the paper (sizes keep the demo well
 * under a minute on a 2-core CPU). */
static const char *const generated[] = {
    "lap2d5:512",              /* type I: 5-point stencil, 262k rows        */
    "type2:500000",            /* type II: far diagonals                    */
    "type3:1000000,41,0.35",   /* type III: long zero sections, fill 0.35   */
};
static const char *const shipped[] = {"orsreg_1.mtx", "watt__1.mtx"};

/* Path of a shipped matrix: ./data/name, else the source tree's data/name
 * (compile-time path); NULL when neither exists. */
static const char *data_path(const char *name, char *buf, size_t size)
{
    const char *dirs[] = {"data",
#ifdef ADIA_SOURCE_DIR
                          ADIA_SOURCE_DIR "/data",
#endif
    };
    struct stat st;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(buf, size, "%s/%s", dirs[i], name);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) return buf;
    }
    return NULL;
}

/* One timed, checked product of format name on A: GPU if it can run
 * there and want_gpu, else CPU. */
static int run_format(const adia_matrix *A, const char *name, bool want_gpu,
                      cli_spmv_result *r)
{
    adia_format *F = NULL;
    adia_status s = adia_format_build(A, name, NULL, ADIA_DOUBLE, &F);
    if (s != ADIA_OK) return cli_fail("demo", s);
    bool gpu = want_gpu && cli_gpu_usable(F, &s);
    int rc = s != ADIA_OK ? cli_fail("demo", s)
                          : cli_spmv_run("demo", A, F, gpu, gpu ? 100 : 10, 42, NULL, NULL, r);
    adia_format_destroy(F);
    if (rc == 0 && !(r->max_rel_err <= r->tolerance)) {
        fprintf(stderr, "adia demo: %s: %s check FAILED: max relative error %.3g > %.0e\n",
                adia_matrix_name(A), name, r->max_rel_err, r->tolerance);
        rc = 1;
    }
    return rc;
}

/* One table row: analyse, chosen format vs CSR.  Returns 0 or 1. */
static int demo_row(const char *label, const char *path, const char *spec, bool have_gpu)
{
    adia_matrix *A;
    adia_features f;
    adia_status s;
    int rc = cli_open_matrix("demo", path, spec, &A);
    if (rc) {
        printf("%-24s error (see above)\n", label);
        return 1;
    }
    if ((s = adia_matrix_analyze(A, NULL, &f)) != ADIA_OK) {
        rc = cli_fail("demo", s);
        printf("%-24s error (see above)\n", label);
        adia_matrix_destroy(A);
        return rc;
    }
    cli_spmv_result chosen, csr;
    rc = run_format(A, f.format, have_gpu, &chosen);
    /* CSR on the same device as the chosen format, so the speedup compares like with like */
    if (rc == 0) rc = run_format(A, "csr", !strcmp(chosen.device, "gpu"), &csr);
    if (rc == 0) {
        bool same = !strcmp(chosen.device, csr.device);
        char speedup[32];
        if (same) snprintf(speedup, sizeof speedup, "%.2f", csr.time_ms / chosen.time_ms);
        else snprintf(speedup, sizeof speedup, "- (csr %s)", csr.device);
        printf("%-24s %9d %10lld %4s %-7s %-4s %10.4f %10.4f %8s %10.2e\n", label,
               (int)adia_matrix_rows(A), (long long)adia_matrix_nnz(A),
               adia_matrix_type_name(f.type), f.format, chosen.device, chosen.time_ms,
               csr.time_ms, speedup, fmax(chosen.max_rel_err, csr.max_rel_err));
    } else {
        printf("%-24s %9d %10lld %4s %-7s error (see above)\n", label, (int)adia_matrix_rows(A),
               (long long)adia_matrix_nnz(A), adia_matrix_type_name(f.type), f.format);
    }
    fflush(stdout);
    adia_matrix_destroy(A);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    bool done;
    const char *pos[1];
    int npos, rc = cli_parse(argc, argv, usage, NULL, pos, 0, &npos, &done);
    if (rc || done) return rc;
    int ngpu = 0;
    adia_gpu_device_count(&ngpu);
    printf("adia %s demo: SpMV y = A*x in double on %s; times are medians in ms\n",
           ADIA_VERSION_STRING, ngpu > 0 ? "the GPU where the format has a kernel"
                                         : "the CPU (no CUDA device)");
    printf("%-24s %9s %10s %4s %-7s %-4s %10s %10s %8s %10s\n", "matrix", "rows", "nnz",
           "type", "format", "dev", "t_format", "t_csr", "speedup", "max_rel_err");
    int failed = 0;
    for (size_t i = 0; i < sizeof generated / sizeof *generated; i++)
        failed += demo_row(generated[i], NULL, generated[i], ngpu > 0);
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++) {
        char buf[4200];
        const char *path = data_path(shipped[i], buf, sizeof buf);
        if (path) failed += demo_row(shipped[i], path, NULL, ngpu > 0);
        else printf("%-24s skipped: not found in ./data or the source tree's data/\n", shipped[i]);
    }
    printf("speedup = t_csr / t_format; max_rel_err = max |y - y_ref| / max |y_ref| against "
           "the double CSR reference\n");
    if (failed) fprintf(stderr, "adia demo: %d matrix(es) failed\n", failed);
    return failed ? 1 : 0;
}
