/* test_plan.c -- the planner (src/plan): bad use (NULL pointers, aliasing,
 * destroyed handles, no GPU, unknown formats, mismatched plan files), SpMV of
 * plans made by every chooser against the reference, the model's choices and
 * byte predictions, memory budget fallbacks, save/load round trips. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "plan/plan_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Hints with a fixed bandwidth: the model's choice does not depend on the
 * machine's load. */
static adia_plan_hints hints_of(adia_chooser c, int64_t calls, adia_value_type vt)
{
    adia_plan_hints h;
    memset(&h, 0, sizeof h);
    h.chooser = c;
    h.expected_calls = calls;
    h.vtype = vt;
    h.bandwidth_gbs = 20.0;
    return h;
}

/* Relative error of the plan's y = 1.5*A*x - 0.5*y against the reference. */
static double plan_error(adia_plan *P, const adia_matrix *A, uint64_t seed)
{
    int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    adia_value_type vt = adia_plan_value_type(P);
    size_t vs = adia_value_size(vt);
    double *xd = malloc(((size_t)n + 1) * 8), *yd = malloc(((size_t)m + 1) * 8);
    double *ref = malloc(((size_t)m + 1) * 8), *got = malloc(((size_t)m + 1) * 8);
    void *x = malloc(((size_t)n + 1) * vs), *y = malloc(((size_t)m + 1) * vs);
    double err = INFINITY;
    if (!xd || !yd || !ref || !got || !x || !y) goto out;
    test_rand_vector(&seed, xd, n);
    test_rand_vector(&seed, yd, m);
    for (int32_t j = 0; j < n; j++) {    /* the reference sees the rounded x */
        if (vt == ADIA_FLOAT) ((float *)x)[j] = (float)xd[j], xd[j] = (float)xd[j];
        else ((double *)x)[j] = xd[j];
    }
    for (int32_t i = 0; i < m; i++) {
        if (vt == ADIA_FLOAT) ((float *)y)[i] = (float)yd[i], ref[i] = (float)yd[i];
        else ((double *)y)[i] = ref[i] = yd[i];
    }
    if (adia_matrix_spmv(A, 1.5, xd, -0.5, ref) != ADIA_OK) goto out;
    adia_status s = adia_spmv(P, 1.5, x, -0.5, y);
    CHECK(s == ADIA_OK, "adia_spmv: %s", adia_last_error());
    if (s != ADIA_OK) goto out;
    for (int32_t i = 0; i < m; i++) got[i] = vt == ADIA_FLOAT ? ((float *)y)[i] : ((double *)y)[i];
    err = test_rel_err(got, ref, m);
out:
    free(xd); free(yd); free(ref); free(got); free(x); free(y);
    return err;
}

static void check_chooser(const char *what, const adia_matrix *A, adia_plan_hints h)
{
    adia_plan *P = NULL;
    adia_status s = adia_plan_create(A, &h, &P);
    CHECK(s == ADIA_OK, "%s: plan (%s, %s): %s", what, adia_chooser_name(h.chooser),
          h.format ? h.format : "-", adia_last_error());
    if (s != ADIA_OK) return;
    double err = plan_error(P, A, 7), tol = h.vtype == ADIA_FLOAT ? 1e-5 : 1e-12;
    CHECK(err <= tol, "%s: %s plan (%s, %s) error %g", what, adia_plan_format_name(P),
          adia_chooser_name(h.chooser), adia_value_type_name(h.vtype), err);
    CHECK(adia_plan_rows(P) == adia_matrix_rows(A) && adia_plan_cols(P) == adia_matrix_cols(A),
          "%s: plan shape", what);
    CHECK(adia_plan_device(P) == 0, "%s: CPU plan", what);
    adia_plan_destroy(P);
}

/* Every chooser (and FIXED with every format the registry gives a cost
 * model), both precisions. */
static void test_correct(void)
{
    static const char *const specs[] = {"lap2d5:40", "lap3d7:12", "type2:5000",
                                        "type3:8192,4,0.5", "band:3000,7", "randdiag:3000,6,500"};
    adia_matrix *R = test_random_matrix(3, 300, 300, 0.02);
    adia_matrix *Rr = test_random_matrix(4, 120, 370, 0.03);
    for (size_t k = 0; k < sizeof specs / sizeof *specs + 2; k++) {
        adia_matrix *A = k < 6 ? test_generate(specs[k]) : k == 6 ? R : Rr;
        const char *what = k < 6 ? specs[k] : k == 6 ? "random 300x300" : "random 120x370";
        if (!A) continue;
        for (int vt = 0; vt < 2; vt++) {
            for (int c = ADIA_CHOOSE_MODEL; c <= ADIA_CHOOSE_MEASURE; c++)
                check_chooser(what, A, hints_of((adia_chooser)c, 1000, (adia_value_type)vt));
            adia_plan_hints h = hints_of(ADIA_CHOOSE_FIXED, 1, (adia_value_type)vt);
            for (int f = 0; f < adia_format_count(); f++) {
                if (!adia__format_ops_at(f)->model.storage) continue;
                h.format = adia_format_name_at(f);
                check_chooser(what, A, h);
            }
        }
        if (k < 6) adia_matrix_destroy(A);
    }
    adia_matrix_destroy(R);
    adia_matrix_destroy(Rr);
}

/* The model: CSR when conversion cannot pay, a diagonal format on a stencil
 * with many calls; predicted bytes equal the built formats' bytes. */
static void test_model(void)
{
    adia_matrix *A = test_generate("lap2d5:200");
    if (!A) return;
    adia_plan *P = NULL;
    adia_plan_hints h = hints_of(ADIA_CHOOSE_MODEL, 1, ADIA_DOUBLE);
    CHECK_OK(adia_plan_create(A, &h, &P));
    CHECK(!strcmp(adia_plan_format_name(P), "csr"), "1 call: chose %s", adia_plan_format_name(P));
    adia_plan_destroy(P);
    h.expected_calls = 1000;
    CHECK_OK(adia_plan_create(A, &h, &P));
    const char *name = adia_plan_format_name(P);
    CHECK(!strcmp(name, "dia") || !strcmp(name, "hdi") || !strcmp(name, "brcsd1") ||
          !strcmp(name, "brcsd2"), "1000 calls: chose %s", name);
    CHECK(adia_plan_predicted_ms(P) > 0 && isnan(adia_plan_measured_ms(P)), "model times");
    char buf[4096];
    CHECK_OK(adia_plan_explain(P, buf, sizeof buf));
    CHECK(test_contains(buf, "<- chosen") && test_contains(buf, "break-even") &&
          test_contains(buf, "type I"), "explain:\n%s", buf);
    adia_plan_destroy(P);

    /* RULES follows the search engine */
    static const char *const rule_specs[][2] = {{"lap2d5:200", "dia"}, {"type2:20000", "brcsd1"},
                                                {"type3:8192,4,0.5", "brcsd2"}};
    for (int k = 0; k < 3; k++) {
        adia_matrix *B = test_generate(rule_specs[k][0]);
        adia_features f;
        h = hints_of(ADIA_CHOOSE_RULES, 1, ADIA_DOUBLE);
        if (!B || adia_matrix_analyze(B, NULL, &f) != ADIA_OK) continue;
        CHECK(!strcmp(f.format, rule_specs[k][1]), "%s: engine says %s", rule_specs[k][0], f.format);
        CHECK_OK(adia_plan_create(B, &h, &P));
        CHECK(!strcmp(adia_plan_format_name(P), f.format), "%s: rules chose %s, engine %s",
              rule_specs[k][0], adia_plan_format_name(P), f.format);
        CHECK(plan_error(P, B, 9) <= 1e-12, "%s: rules plan wrong", rule_specs[k][0]);
        adia_plan_destroy(P);
        adia_matrix_destroy(B);
    }

    /* candidates: sorted, and exact byte counts agree with the formats
     * (lap3d7:50, 125000 rows: the model's threaded passes) */
    static const char *const specs[] = {"lap2d5:60", "type3:8192,5,0.4", "randdiag:2000,5,300",
                                        "lap3d7:50"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        adia_matrix *B = test_generate(specs[k]);
        if (!B) continue;
        for (int vt = 0; vt < 2; vt++) {
            adia_plan_candidate c[ADIA_PLAN_MAX_CANDIDATES];
            int n = 0, count = 0;
            h = hints_of(ADIA_CHOOSE_MODEL, 10, (adia_value_type)vt);
            CHECK_OK(adia_plan_candidates(B, &h, NULL, 0, &count));
            CHECK_OK(adia_plan_candidates(B, &h, c, ADIA_PLAN_MAX_CANDIDATES, &n));
            CHECK(n == count && n >= 6, "%s: %d candidates, count %d", specs[k], n, count);
            for (int i = 0; i < n; i++) {
                CHECK(i == 0 || c[i].total_ms >= c[i - 1].total_ms, "%s: not sorted at %d", specs[k], i);
                adia_format *F = NULL;
                if (adia_format_build(B, c[i].format, NULL, (adia_value_type)vt, &F) != ADIA_OK) continue;
                int64_t real = adia_format_bytes(F);
                if (c[i].exact)
                    CHECK(c[i].bytes == real, "%s %s: predicted %lld bytes, built %lld", specs[k],
                          c[i].format, (long long)c[i].bytes, (long long)real);
                else
                    CHECK(c[i].bytes >= real * 0.7 && c[i].bytes <= real * 2.0,
                          "%s %s: estimate %lld bytes, built %lld", specs[k], c[i].format,
                          (long long)c[i].bytes, (long long)real);
                adia_format_destroy(F);
            }
            CHECK_OK(adia_plan_candidates(B, &h, c, 2, &n));
            CHECK(n == 2, "max 2 gave %d", n);
        }
        adia_matrix_destroy(B);
    }
    adia_matrix_destroy(A);
}

/* A budget below the best candidate's storage falls back (noted); below
 * every format's it is an error.  One call: the best is CSR, and DIA is
 * smaller on a stencil. */
static void test_budget(void)
{
    adia_matrix *A = test_generate("lap2d5:100");
    if (!A) return;
    adia_plan_hints h = hints_of(ADIA_CHOOSE_MODEL, 1, ADIA_DOUBLE);
    adia_plan_candidate c[ADIA_PLAN_MAX_CANDIDATES];
    int n = 0;
    CHECK_OK(adia_plan_candidates(A, &h, c, ADIA_PLAN_MAX_CANDIDATES, &n));
    h.memory_budget = c[0].storage_bytes - 1;
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create(A, &h, &P));
    CHECK(!strcmp(c[0].format, "csr"), "1 call: best is %s", c[0].format);
    CHECK(P && strcmp(adia_plan_format_name(P), c[0].format), "budget: still %s", c[0].format);
    CHECK(P && adia_format_storage_bytes(adia_plan_format(P)) <= h.memory_budget, "over budget");
    char buf[4096] = "";
    if (P) adia_plan_explain(P, buf, sizeof buf);
    CHECK(test_contains(buf, "memory budget") && test_contains(buf, "fell back"), "explain:\n%s", buf);
    if (P) CHECK(plan_error(P, A, 3) <= 1e-12, "budget plan wrong");
    adia_plan_destroy(P);
    h.memory_budget = 1000;
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_NO_MEMORY, "memory budget");
    CHECK(P == NULL, "failed create leaves NULL");
    h.chooser = ADIA_CHOOSE_FIXED;   /* a fixed format over the budget falls back too */
    h.format = "ell";
    h.memory_budget = c[0].storage_bytes * 10;
    CHECK_OK(adia_plan_create(A, &h, &P));
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* The process budget bounds analysis and planning as a whole: an empty
 * 10^7 x 10^7 matrix (80 MB of row pointers) needs 240 MB of diagonal
 * slots in arrays of 80 MB, each under the per-allocation check: refused
 * before the work, naming the figure, by each entry point. */
static void test_process_budget(void)
{
    const int32_t n = 10000000;
    int32_t r[1] = {0}, c[1] = {0};
    double v[1] = {0};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_coo(n, n, 0, r, c, v, ADIA_DOUBLE, &A));
    if (!A) return;
    CHECK_OK(adia_set_memory_budget(200000000));
    adia_features f;
    CHECK_ERR(adia_matrix_analyze(A, NULL, &f), ADIA_ERR_NO_MEMORY,
              "10000000 x 10000000 matrix (1 thread(s) x 20000000 diagonal slots of 12 bytes) "
              "needs 240.0 MB, budget 200.0 MB");
    adia_plan *P = NULL;
    CHECK_ERR(adia_plan_create(A, NULL, &P), ADIA_ERR_NO_MEMORY,
              "adia_plan_create: planning a 10000000 x 10000000 matrix");
    CHECK(P == NULL && test_contains(adia_last_error(), "needs 240.0 MB, budget 200.0 MB"),
          "the figures: %s", adia_last_error());
    adia_plan_candidate cand[ADIA_PLAN_MAX_CANDIDATES];
    int nc = 0;
    CHECK_ERR(adia_plan_candidates(A, NULL, cand, ADIA_PLAN_MAX_CANDIDATES, &nc),
              ADIA_ERR_NO_MEMORY, "adia_plan_candidates: planning");
    CHECK_OK(adia_set_memory_budget(300000000));
    CHECK_OK(adia_matrix_analyze(A, NULL, &f));
    CHECK(f.nnz == 0 && f.empty_rows == n, "analysed once it fits");
    CHECK_OK(adia_set_memory_budget(0));
    adia_matrix_destroy(A);

    /* The hint narrows the process budget, never widens it: with 1 MB for
     * the process, a hint of 1 GB still finds no format of a 3 MB matrix. */
    adia_matrix *L = test_generate("lap2d5:200");
    CHECK_OK(adia_set_memory_budget(1000000));
    adia_plan_hints wide = {.memory_budget = 1000000000};
    CHECK_ERR(adia_plan_create(L, &wide, &P), ADIA_ERR_NO_MEMORY, "");
    CHECK(P == NULL, "no plan past the process budget");
    CHECK_OK(adia_set_memory_budget(0));
    adia_plan_hints narrow = {.memory_budget = 1000000};
    CHECK_ERR(adia_plan_create(L, &narrow, &P), ADIA_ERR_NO_MEMORY, "no format fits");
    adia_matrix_destroy(L);
}

static void test_bad_use(void)
{
    adia_matrix *A = test_generate("lap2d5:10"), *R = test_random_matrix(5, 30, 50, 0.1);
    adia_plan *P = NULL;
    adia_plan_hints h = hints_of(ADIA_CHOOSE_MODEL, 1, ADIA_DOUBLE);
    double x[100] = {0}, y[100] = {0};
    char buf[256];
    CHECK_ERR(adia_plan_create(NULL, &h, &P), ADIA_ERR_INVALID_HANDLE, "matrix");
    CHECK_ERR(adia_plan_create(A, &h, NULL), ADIA_ERR_INVALID_ARG, "plan is NULL");
    CHECK_ERR(adia_spmv(NULL, 1, x, 0, y), ADIA_ERR_INVALID_HANDLE, "NULL");
    CHECK_ERR(adia_plan_explain(NULL, buf, sizeof buf), ADIA_ERR_INVALID_HANDLE, "plan");
    CHECK(adia_plan_rows(NULL) == -1 && !strcmp(adia_plan_format_name(NULL), "") &&
          adia_plan_format(NULL) == NULL && isnan(adia_plan_predicted_ms(NULL)), "NULL accessors");
    /* rectangular: x has cols entries, y rows */
    CHECK_OK(adia_plan_create(R, NULL, &P));
    CHECK(adia_plan_rows(P) == 30 && adia_plan_cols(P) == 50, "shape %d x %d",
          (int)adia_plan_rows(P), (int)adia_plan_cols(P));
    CHECK(adia_plan_chooser(P) == ADIA_CHOOSE_MODEL && adia_plan_value_type(P) == ADIA_DOUBLE,
          "NULL hints = model, double");
    CHECK_ERR(adia_spmv(P, 1, NULL, 0, y), ADIA_ERR_INVALID_ARG, "NULL");
    CHECK_ERR(adia_spmv(P, 1, x, 0, NULL), ADIA_ERR_INVALID_ARG, "NULL");
    CHECK_ERR(adia_spmv(P, 1, x, 0, x), ADIA_ERR_INVALID_ARG, "overlap");
    CHECK_ERR(adia_spmv(P, 1, x, 0, x + 49), ADIA_ERR_INVALID_ARG, "overlap");
    CHECK_OK(adia_spmv(P, 1, x, 0, x + 50));     /* adjacent, not overlapping */
    CHECK_OK(adia_spmv_async(P, 1, x, 0, x + 50, NULL));   /* CPU: synchronous */
    CHECK_ERR(adia_plan_explain(P, NULL, 10), ADIA_ERR_INVALID_ARG, "buffer");
    CHECK_OK(adia_plan_explain(P, buf, 8));       /* truncated, terminated */
    CHECK(strlen(buf) == 7, "truncated explain has %zu chars", strlen(buf));
    CHECK_ERR(adia_plan_save(P, NULL), ADIA_ERR_INVALID_ARG, "path");
    CHECK_ERR(adia_plan_save(P, "/nonexistent-dir/p.plan"), ADIA_ERR_IO, "/nonexistent-dir/p.plan");
    adia_plan_destroy(P);
    adia_plan_destroy(NULL);

    /* a dead or uninitialised handle, without touching freed memory */
    struct adia_plan fake;
    memset(&fake, 0, sizeof fake);
    CHECK_ERR(adia_spmv(&fake, 1, x, 0, y), ADIA_ERR_INVALID_HANDLE, "destroyed or uninitialised");
    fake.magic = ADIA_MAGIC_DEAD;
    CHECK_ERR(adia_spmv(&fake, 1, x, 0, y), ADIA_ERR_INVALID_HANDLE, "destroyed");
    adia_plan_destroy(&fake);   /* ignored: not live */
#if !defined(__SANITIZE_ADDRESS__)
    /* the real sequence: use after destroy, memory not reused in between
     * (undefined behaviour in C; caught here only because the magic word
     * was cleared or overwritten by the allocator) */
    adia_plan *Q = NULL;
    CHECK_OK(adia_plan_create(A, NULL, &Q));
    adia_plan_destroy(Q);
    CHECK_ERR(adia_spmv(Q, 1, x, 0, y), ADIA_ERR_INVALID_HANDLE, "plan");
#endif

    /* devices */
    int ndev = 0;
    CHECK_OK(adia_gpu_device_count(&ndev));
    h.device = 1;
    if (ndev == 0) CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_NO_DEVICE, "no CUDA device");
    h.device = -1;
    CHECK_OK(adia_plan_create(A, &h, &P));
    CHECK(adia_plan_device(P) == (ndev > 0), "auto device gave %d", adia_plan_device(P));
    adia_plan_destroy(P);
    h.device = 2;
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "device");
    h.device = 0;

    /* bad hints */
    h.vtype = (adia_value_type)7;
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "value type");
    h.vtype = ADIA_DOUBLE;
    h.chooser = (adia_chooser)9;
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "chooser");
    h.chooser = ADIA_CHOOSE_FIXED;
    h.format = "nosuch";
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "nosuch");
    h.format = NULL;
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "FIXED");
    adia_format_params prm;
    adia_format_params_default(&prm);
    prm.hack = 33;
    h.format = "hdi";
    h.params = &prm;
    CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "hack=33");
    h.chooser = ADIA_CHOOSE_MODEL;   /* the model skips what the params break */
    CHECK_OK(adia_plan_create(A, &h, &P));
    CHECK(P && strcmp(adia_plan_format_name(P), "hdi"), "hack=33 gave hdi");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    adia_matrix_destroy(R);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The whole of a small file into buf (NUL-ended; "" when unreadable). */
static void read_text(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

/* Replace the "key ..." line of a plan file by "key value" (the value
 * written as given: junk and all). */
static void set_line(const char *path, const char *key, const char *value)
{
    char text[2048] = "", line[512];
    size_t k = strlen(key);
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, key, k) && line[k] == ' ')
            snprintf(line, sizeof line, "%s %s\n", key, value);
        strncat(text, line, sizeof text - strlen(text) - 1);
    }
    fclose(f);
    write_text(path, text);
}
static void set_format(const char *path, const char *format) { set_line(path, "format", format); }

/* Plan files are parsed strictly: a value is the whole value (no trailing
 * junk, no wrap-around of numbers past 32 bits), each key once, a folder
 * is named as one; a loaded format that cannot hold the matrix fails,
 * naming the file and the format, instead of quietly becoming csr. */
static void test_strict_file(void)
{
    char path[64], line[700];
    snprintf(path, sizeof path, "/tmp/adia_test_plan_%ld_strict.plan", (long)getpid());
    adia_matrix *A = test_generate("lap2d5:20");   /* 400 x 400, 1920 nonzeros */
    adia_plan *P = A ? test_plan_fixed(A, "csr", ADIA_DOUBLE, 0) : NULL, *Q = NULL;
    if (!P) {
        adia_matrix_destroy(A);
        return;
    }
    static const struct { const char *key, *value; } bad[] = {
        {"calls", "1000junk"}, {"calls", "100 200"}, {"calls", "0"}, {"calls", "-5"},
        {"calls", "99999999999999999999"}, {"device", "1x"}, {"device", "2"}, {"device", ""},
        {"hash", "0123456789abcdef0"}, {"hash", "12345zz"}, {"hash", "0x12"},
        {"format", "csr junk"}, {"vtype", "double extra"}, {"chooser", "fixed x"},
        {"shape", "4294967696 4294967696 1920"}, {"shape", "400 400"},
        {"shape", "400 400 1920 7"}, {"shape", "2 2 5"}, {"shape", "+400 400 1920"},
        {"params", "B=4 junk"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_OK(adia_plan_save(P, path));
        CHECK_OK(adia_plan_load(A, path, &Q));   /* the file as saved loads */
        adia_plan_destroy(Q);
        Q = NULL;
        set_line(path, bad[i].key, bad[i].value);
        char want[32];
        snprintf(want, sizeof want, ": bad %s '", bad[i].key);
        adia_status s = adia_plan_load(A, path, &Q);
        CHECK(s == ADIA_ERR_PARSE && test_contains(adia_last_error(), want) &&
              test_contains(adia_last_error(), "expected"),
              "%s '%s' -> %s (%s)", bad[i].key, bad[i].value, adia_status_string(s),
              adia_last_error());
        CHECK(Q == NULL, "no plan after a refused file");
        adia_plan_destroy(Q);
        Q = NULL;
    }
    /* each key once; no endless lines */
    CHECK_OK(adia_plan_save(P, path));
    FILE *f = fopen(path, "a");
    if (f) {
        fputs("calls 5\n", f);
        fclose(f);
    }
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_PARSE, "a second 'calls' line");
    memset(line, 'B', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    CHECK_OK(adia_plan_save(P, path));
    set_line(path, "params", line);
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_PARSE, "line longer than");
    /* a folder is a folder, not an empty plan file */
    CHECK_ERR(adia_plan_load(A, "/tmp", &Q), ADIA_ERR_IO, "/tmp: is a directory");
    CHECK(Q == NULL, "no plan from a folder");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);

    /* "format dia" for a matrix whose DIA storage does not fit the budget
     * (random:4000,4: 175 MB built, then over 50 MB; random:100000,2: 59 GB,
     * refused by the allocator): an error naming the file and the format --
     * the second loaded as csr and returned success */
    static const struct { const char *spec; int64_t budget; } big[] = {
        {"random:4000,4", 50000000}, {"random:100000,2", 1000000000}};
    for (int b = 0; b < 2; b++) {
        A = test_generate(big[b].spec);
        P = A ? test_plan_fixed(A, "csr", ADIA_DOUBLE, 0) : NULL;
        if (P) {
            CHECK_OK(adia_plan_save(P, path));
            set_format(path, "dia");
            CHECK_OK(adia_set_memory_budget(big[b].budget));
            adia_status s = adia_plan_load(A, path, &Q);
            CHECK(s == ADIA_ERR_NO_MEMORY && test_contains(adia_last_error(), path) &&
                  test_contains(adia_last_error(), "the plan's format dia cannot be used"),
                  "%s: dia that cannot fit -> %s (%s), format %s", big[b].spec,
                  adia_status_string(s), adia_last_error(), Q ? adia_plan_format_name(Q) : "-");
            CHECK(Q == NULL, "%s: no plan (csr) after the refusal", big[b].spec);
            adia_plan_destroy(Q);
            Q = NULL;
            CHECK_OK(adia_set_memory_budget(0));
            set_format(path, "csr");
            CHECK_OK(adia_plan_load(A, path, &Q));
            CHECK(Q && !strcmp(adia_plan_format_name(Q), "csr"), "csr plan loads");
            adia_plan_destroy(Q);
            Q = NULL;
        }
        adia_plan_destroy(P);
        adia_matrix_destroy(A);
    }
    unlink(path);
}

/* A plan replaces only a plan: saved onto the matrix it was made from (or
 * any file that is not a plan) it is refused and the file stays; onto a
 * plan, an empty file or a new name it is written. */
static void test_save_keeps_data(void)
{
    char path[64], before[4096], after[4096];
    snprintf(path, sizeof path, "/tmp/adia_test_plan_%ld.mtx", (long)getpid());
    adia_matrix *A = test_generate("lap2d5:8");
    adia_plan *P = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 0) : NULL;
    if (!P) {
        adia_matrix_destroy(A);
        return;
    }
    CHECK_OK(adia_matrix_write_mtx(A, path));
    read_text(path, before, sizeof before);
    CHECK_ERR(adia_plan_save(P, path), ADIA_ERR_INVALID_ARG, "is not an adia plan file");
    CHECK(test_contains(adia_last_error(), path) &&
          test_contains(adia_last_error(), "'%%MatrixMarket"),
          "the message names the file and what it holds: %s", adia_last_error());
    read_text(path, after, sizeof after);
    CHECK(before[0] && !strcmp(before, after), "the matrix file was changed by the refused save");
    write_text(path, "\x01\x02binary");
    CHECK_ERR(adia_plan_save(P, path), ADIA_ERR_INVALID_ARG, "not an adia plan file");
    write_text(path, "");
    CHECK_OK(adia_plan_save(P, path));   /* an empty file holds no data */
    read_text(path, after, sizeof after);
    CHECK(!strncmp(after, "adia-plan 2\n", 12), "saved over an empty file: %.20s", after);
    CHECK_OK(adia_plan_save(P, path));   /* a plan replaces a plan */
    CHECK_OK(adia_plan_save(P, "/dev/null"));
    unlink(path);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

static void test_save_load(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/adia_test_plan_%ld.plan", (long)getpid());
    adia_matrix *A = test_generate("type3:8192,4,0.5"), *B = test_generate("lap2d5:91"), *A2 = NULL;
    if (!A || !B) return;
    adia_format_params prm;
    adia_format_params_default(&prm);
    prm.block_rows = 128;
    adia_plan_hints h = hints_of(ADIA_CHOOSE_RULES, 500, ADIA_FLOAT);
    h.params = &prm;
    adia_plan *P = NULL, *Q = NULL;
    CHECK_OK(adia_plan_create(A, &h, &P));
    CHECK(!strcmp(adia_plan_format_name(P), "brcsd2"), "rules on type III: %s", adia_plan_format_name(P));
    CHECK_OK(adia_plan_save(P, path));
    CHECK_OK(adia_plan_load(A, path, &Q));
    CHECK(Q && !strcmp(adia_plan_format_name(Q), adia_plan_format_name(P)) &&
          adia_plan_chooser(Q) == ADIA_CHOOSE_RULES && adia_plan_value_type(Q) == ADIA_FLOAT,
          "round trip: %s", adia_plan_format_name(Q));
    CHECK(Q && adia_format_bytes(adia_plan_format(Q)) == adia_format_bytes(adia_plan_format(P)),
          "loaded plan has other parameters");
    char buf[2048] = "";
    if (Q) adia_plan_explain(Q, buf, sizeof buf);
    CHECK(test_contains(buf, "loaded from"), "explain of a loaded plan:\n%s", buf);
    if (Q) CHECK(plan_error(Q, A, 5) <= 1e-5, "loaded plan wrong");
    adia_plan_destroy(Q);
    Q = NULL;
    /* a file of version 1 (the serial structure hash of adia's first plan
     * files) still loads; the same hash under version 2 is another
     * structure's */
    char hex[32];
    snprintf(hex, sizeof hex, "%016" PRIx64, adia__plan_structure_hash_v1(&A->csr));
    set_line(path, "adia-plan", "1");
    set_line(path, "hash", hex);
    CHECK_OK(adia_plan_load(A, path, &Q));
    CHECK(Q && !strcmp(adia_plan_format_name(Q), "brcsd2"), "version 1 file: %s",
          Q ? adia_plan_format_name(Q) : "no plan");
    adia_plan_destroy(Q);
    Q = NULL;
    set_line(path, "adia-plan", "2");
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_INVALID_ARG, "another structure");
    CHECK_OK(adia_plan_save(P, path));   /* version 2 again */
    /* the same structure with other values is the same matrix to a plan */
    adia_csr_view v;
    adia_matrix_csr(A, &v);
    double *val = malloc((size_t)v.nnz * sizeof *val);
    for (int64_t i = 0; val && i < v.nnz; i++) val[i] = 2 * v.values[i];
    if (val) CHECK_OK(adia_matrix_create_csr(v.rows, v.cols, v.nnz, v.rowptr, v.colind, val, ADIA_DOUBLE, &A2));
    free(val);
    if (A2) {
        CHECK_OK(adia_plan_load(A2, path, &Q));
        if (Q) CHECK(plan_error(Q, A2, 6) <= 1e-5, "loaded plan on new values wrong");
        adia_plan_destroy(Q);
    }
    /* no re-analysis: the file's format is used as written */
    set_format(path, "ell");
    CHECK_OK(adia_plan_load(A, path, &Q));
    CHECK(Q && !strcmp(adia_plan_format_name(Q), "ell"), "edited plan: %s", adia_plan_format_name(Q));
    adia_plan_destroy(Q);
    CHECK_ERR(adia_plan_load(B, path, &Q), ADIA_ERR_INVALID_ARG, "another matrix");
    CHECK(Q == NULL, "failed load leaves NULL");
    set_format(path, "nosuch");
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_PARSE, "nosuch");
    write_text(path, "adia-plan 1\nformat csr\nvtype complex\ndevice 0\nchooser model\ncalls 1\n"
                     "shape 1 1 1\nhash 0\nparams \n");
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_PARSE, "complex");
    write_text(path, "adia-plan 1\nformat csr\n");
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_PARSE, "lacks");
    write_text(path, "not a plan\n");
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_PARSE, "not an adia plan");
    write_text(path, "");
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_PARSE, "empty");
    unlink(path);
    CHECK_ERR(adia_plan_load(A, path, &Q), ADIA_ERR_IO, path);
    CHECK_ERR(adia_plan_load(A, NULL, &Q), ADIA_ERR_INVALID_ARG, "NULL");
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    adia_matrix_destroy(A2);
    adia_matrix_destroy(B);
}

/* MEASURE times its candidates; a 0 x 0 matrix plans and runs. */
static void test_measure_and_empty(void)
{
    adia_matrix *A = test_generate("band:5000,3"), *E = NULL;
    adia_plan *P = NULL;
    adia_plan_hints h = hints_of(ADIA_CHOOSE_MEASURE, 1000, ADIA_DOUBLE);
    CHECK_OK(adia_plan_create(A, &h, &P));
    CHECK(adia_plan_measured_ms(P) > 0, "measured %g ms", adia_plan_measured_ms(P));
    char buf[4096] = "";
    if (P) adia_plan_explain(P, buf, sizeof buf);
    CHECK(test_contains(buf, "fastest measured"), "explain:\n%s", buf);
    adia_plan_destroy(P);
    CHECK_OK(adia_matrix_create_csr(0, 0, 0, (int64_t[]){0}, NULL, NULL, ADIA_DOUBLE, &E));
    for (int c = ADIA_CHOOSE_MODEL; E && c <= ADIA_CHOOSE_MEASURE; c++) {
        h.chooser = (adia_chooser)c;
        CHECK_OK(adia_plan_create(E, &h, &P));
        CHECK_OK(adia_spmv(P, 1, NULL, 0, NULL));
        adia_plan_destroy(P);
    }
    adia_matrix_destroy(E);
    adia_matrix_destroy(A);
}

/* A matrix made from arrays has no name: explain says so, never "plan:  (". */
static void test_explain_unnamed(void)
{
    const int64_t rowptr[] = {0, 1, 2};
    const int32_t col[] = {0, 1};
    const double v[] = {2, 3};
    adia_matrix *A = NULL;
    adia_plan *P = NULL;
    CHECK_OK(adia_matrix_create_csr(2, 2, 2, rowptr, col, v, ADIA_DOUBLE, &A));
    adia_plan_hints h = hints_of(ADIA_CHOOSE_MODEL, 1, ADIA_DOUBLE);
    if (A) CHECK_OK(adia_plan_create(A, &h, &P));
    char buf[4096] = "";
    if (P) CHECK_OK(adia_plan_explain(P, buf, sizeof buf));
    CHECK(!strncmp(buf, "plan: unnamed matrix (2 x 2,", 28), "explain:\n%s", buf);
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* Which GPU plans of a host matrix stay on the host (issue 28, item 1):
 * the decision alone, no device needed (hints resolved for the CPU, then
 * marked GPU: the route reads only the chooser, the format and the
 * budget). */
static const char *route(adia_chooser c, const char *format, int64_t budget)
{
    adia_plan_hints given = {.chooser = c, .format = format, .memory_budget = budget,
                             .bandwidth_gbs = 100};
    plan_hints h;
    if (adia__plan_resolve_hints(&given, &h) != ADIA_OK) return "(hints refused)";
    h.device = 1;
    return adia__plan_host_route(&given, &h);
}

static void test_gpu_route(void)
{
    unsetenv("ADIA_GPU_SETUP");
    CHECK(route(ADIA_CHOOSE_MODEL, NULL, 0) == NULL, "model: the device path");
    CHECK(route(ADIA_CHOOSE_MEASURE, NULL, 0) == NULL, "measure: the device path");
    /* the row formats are built on the device by their GPU tables: a
     * build with CUDA has them */
#ifdef ADIA_HAVE_CUDA
    static const char *const on_device[] = {"dia", "hdi", "brcsd2", "csr", "ell", "sell"};
    static const char *const on_host[] = {"brcsd1", "crsd", "coo", "hyb", "bcsr"};
#else
    static const char *const on_device[] = {"dia", "hdi", "brcsd2"};
    static const char *const on_host[] = {"csr", "ell", "sell", "brcsd1", "crsd"};
#endif
    for (size_t i = 0; i < sizeof on_device / sizeof *on_device; i++)
        CHECK(route(ADIA_CHOOSE_FIXED, on_device[i], 0) == NULL, "fixed %s: the device path",
              on_device[i]);
    for (size_t i = 0; i < sizeof on_host / sizeof *on_host; i++) {
        const char *why = route(ADIA_CHOOSE_FIXED, on_host[i], 0);
        CHECK(why && test_contains(why, "built on the host"), "fixed %s: host (%s)", on_host[i],
              why ? why : "NULL");
    }
    const char *why = route(ADIA_CHOOSE_RULES, NULL, 0);
    CHECK(why && test_contains(why, "rules"), "rules: host (%s)", why ? why : "NULL");
    why = route(ADIA_CHOOSE_MODEL, NULL, 1 << 20);
    CHECK(why && test_contains(why, "budget"), "a budget: host (%s)", why ? why : "NULL");
    setenv("ADIA_GPU_SETUP", "host", 1);
    why = route(ADIA_CHOOSE_MODEL, NULL, 0);
    CHECK(why && test_contains(why, "ADIA_GPU_SETUP=host"), "forced: host (%s)",
          why ? why : "NULL");
    unsetenv("ADIA_GPU_SETUP");
}

/* The upload's staging copy (plan_stage.c): copies and conversions equal
 * an element loop, on 0, 1, odd and threaded (> 1 MiB) lengths; nothing
 * written past n. */
static void test_stage(void)
{
    static const int64_t sizes[] = {0, 1, 7, 1001, (1 << 18) + 3};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int64_t n = sizes[k];
        double *d = malloc((size_t)(n + 1) * 8), *dd = malloc((size_t)(n + 1) * 8);
        float *f = malloc((size_t)(n + 1) * 4);
        int64_t *l = malloc((size_t)(n + 1) * 8);
        int32_t *i32 = malloc((size_t)(n + 1) * 4);
        uint64_t seed = 3;
        for (int64_t i = 0; i < n; i++) {
            d[i] = test_rand(&seed) * 1e3;
            l[i] = i * 7 - 5;
        }
        dd[n] = -1, f[n] = -1, i32[n] = -1;
        adia__plan_stage(dd, ADIA_STAGE_F64, d, ADIA_STAGE_F64, n);
        adia__plan_stage(f, ADIA_STAGE_F32, d, ADIA_STAGE_F64, n);
        adia__plan_stage(i32, ADIA_STAGE_I32, l, ADIA_STAGE_I64, n);
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (dd[i] != d[i] || f[i] != (float)d[i] || i32[i] != (int32_t)l[i]) bad = i;
        CHECK(bad < 0, "stage, n = %lld: first difference at %lld", (long long)n, (long long)bad);
        CHECK(dd[n] == -1 && f[n] == -1 && i32[n] == -1, "stage, n = %lld: wrote past n",
              (long long)n);
        free(d);
        free(dd);
        free(f);
        free(l);
        free(i32);
    }
}

/* The hint nondeterministic (issue 32): 0 by default, 0 or 1 accepted,
 * anything else refused naming the hint; a CPU plan is the same either
 * way; the kernel names and the parameter kernel= know cusparse-alg1. */
static void test_nondeterministic_hint(void)
{
    adia_matrix *A = test_generate("powerlaw:2000,2,200");
    adia_plan *P = NULL, *Q = NULL;
    adia_plan_hints h = hints_of(ADIA_CHOOSE_MODEL, 100, ADIA_DOUBLE);
    CHECK(h.nondeterministic == 0, "zero-filled hints are reproducible");
    const int bad[] = {-1, 2, 7};
    for (int i = 0; i < 3; i++) {
        h.nondeterministic = bad[i];
        CHECK_ERR(adia_plan_create(A, &h, &P), ADIA_ERR_INVALID_ARG, "nondeterministic must be 0");
        CHECK(P == NULL, "no plan for nondeterministic = %d", bad[i]);
        int n = -1;
        CHECK_ERR(adia_plan_candidates(A, &h, NULL, 0, &n), ADIA_ERR_INVALID_ARG,
                  "nondeterministic");
    }
    h.nondeterministic = 0;
    CHECK_OK(adia_plan_create(A, &h, &P));
    h.nondeterministic = 1;
    CHECK_OK(adia_plan_create(A, &h, &Q));
    CHECK(P && Q && !strcmp(adia_plan_format_name(P), adia_plan_format_name(Q)),
          "a CPU plan is the same with non-deterministic kernels allowed: %s vs %s",
          adia_plan_format_name(P), adia_plan_format_name(Q));
    adia_plan_destroy(P);
    adia_plan_destroy(Q);
    adia_gpu_kernel k = ADIA_KERNEL_AUTO;
    CHECK_OK(adia_gpu_kernel_parse("cusparse-alg1", &k));
    CHECK(k == ADIA_KERNEL_CSR_CUSPARSE_ALG1 && !strcmp(adia_gpu_kernel_name(k), "cusparse-alg1"),
          "cusparse-alg1 names kernel %d", (int)k);
    for (int j = ADIA_KERNEL_AUTO; j <= ADIA_KERNEL_CSR_CUSPARSE_ALG1; j++)
        CHECK(adia_gpu_kernel_is_deterministic((adia_gpu_kernel)j) ==
                  (j != ADIA_KERNEL_CSR_CUSPARSE_ALG1),
              "kernel %s deterministic?", adia_gpu_kernel_name((adia_gpu_kernel)j));
    adia_format_params p;
    memset(&p, 0, sizeof p);
    CHECK_OK(adia_format_params_parse(&p, "kernel=cusparse-alg1"));
    CHECK(p.gpu_kernel == ADIA_KERNEL_CSR_CUSPARSE_ALG1, "kernel=cusparse-alg1 -> %d",
          (int)p.gpu_kernel);
    CHECK_ERR(adia_format_params_parse(&p, "kernel=8"), ADIA_ERR_INVALID_ARG, "kernel=8");
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_nondeterministic_hint();
    test_gpu_route();
    test_stage();
    test_explain_unnamed();
    test_bad_use();
    test_model();
    test_budget();
    test_process_budget();
    test_save_load();
    test_save_keeps_data();
    test_strict_file();
    test_measure_and_empty();
    test_correct();
    return TEST_END();
}
