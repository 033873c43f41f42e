/* test_plan_cache.c -- what a plan costs and chooses beyond its matrix
 * (issue 28, item 3): the CPU bandwidth is measured once per machine and
 * kept in the cache folder ($ADIA_CACHE_DIR, here a temporary folder), read
 * back by a later process without a probe, measured again over a damaged or
 * unreadable entry, and replaced by ADIA_CPU_BANDWIDTH or a hint; a plan
 * made twice with the model chooser chooses the same format.
 *
 * The probes are counted by the library (adia__plan_cpu_probes), not
 * timed.  The cache key holds the thread count, which follows the load
 * (docs/threads.md): the test runs itself again under OMP_NUM_THREADS=1,
 * where the count is 1 whatever the load. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "plan/plan_internal.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

/* The one bandwidth-cpu-*.txt in the cache folder: its path, or "". */
static void bandwidth_file(char *path, size_t len)
{
    path[0] = '\0';
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "bandwidth-cpu-", 14)) {
            snprintf(path, len, "%s/%s", dir, e->d_name);
            found++;
        }
    if (d) closedir(d);
    CHECK(found <= 1, "%d bandwidth files in %s", found, dir);
}

static void read_text(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* A MODEL plan of a small matrix with the bandwidth left to the library:
 * its bandwidth and its explain text. */
static double plan_bandwidth(const char *spec, char *explain, size_t len)
{
    adia_matrix *A = test_generate(spec);
    adia_plan_hints h = {.chooser = ADIA_CHOOSE_MODEL, .expected_calls = 10};
    adia_plan *P = NULL;
    double gbs = NAN;
    explain[0] = '\0';
    if (A) CHECK_OK(adia_plan_create(A, &h, &P));
    if (P) {
        gbs = P->bandwidth_gbs;
        CHECK_OK(adia_plan_explain(P, explain, len));
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    return gbs;
}

/* The child process: one plan, no probe, the figure from the cache. */
static int child(void)
{
    char text[8192];
    double gbs = plan_bandwidth("lap2d5:20", text, sizeof text);
    int ok = adia__plan_cpu_probes() == 0 && gbs > 0 && test_contains(text, "read from the cache");
    if (!ok) fprintf(stderr, "child: %d probes, %g GB/s\n%s", adia__plan_cpu_probes(), gbs, text);
    return ok ? 0 : 1;
}

static int run_child(const char *self)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_bandwidth_cache(const char *self)
{
    char path[512], text[8192], file[512], again[512];
    unsetenv("ADIA_CPU_BANDWIDTH");
    adia__plan_cpu_forget();
    int p0 = adia__plan_cpu_probes();

    /* first plan on an empty cache: one probe, the entry written */
    double g1 = plan_bandwidth("lap2d5:20", text, sizeof text);
    CHECK(adia__plan_cpu_probes() == p0 + 1, "first plan: %d probes", adia__plan_cpu_probes() - p0);
    CHECK(test_contains(text, "measured now, kept in the cache"), "first explain:\n%s", text);
    bandwidth_file(path, sizeof path);
    read_text(path, file, sizeof file);
    CHECK(path[0] && !strncmp(file, "adia-cpu-bandwidth 1\nkey adia ", 30),
          "no bandwidth entry in %s: '%s'", dir, file);
    CHECK(test_contains(file, "| 1 threads\n"), "entry key: %s", file);

    /* the same process again: no probe */
    plan_bandwidth("lap2d5:20", text, sizeof text);
    CHECK(adia__plan_cpu_probes() == p0 + 1, "second plan probed");

    /* a new process reads it without a probe */
    CHECK(run_child(self) == 0, "a second process probed or did not read the cache");

    /* as does this one once it forgets: the same figure */
    adia__plan_cpu_forget();
    double g2 = plan_bandwidth("lap3d7:8", text, sizeof text);
    CHECK(adia__plan_cpu_probes() == p0 + 1, "plan after forget probed");
    CHECK(fabs(g2 - g1) <= 1e-3 * g1, "cached %g GB/s, measured %g", g2, g1);
    CHECK(test_contains(text, "read from the cache"), "cached explain:\n%s", text);

    /* damaged entries: measured again and replaced, never an error */
    static const char *const bad[] = {
        "", "garbage\n", "adia-cpu-bandwidth 1\n",
        "adia-cpu-bandwidth 1\nkey another machine\nbandwidth_gbs 20\n",
        "adia-cpu-bandwidth 9\n", "\x01\x02\xff\xfe"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_text(path, bad[i]);
        adia__plan_cpu_forget();
        int p = adia__plan_cpu_probes();
        double g = plan_bandwidth("lap2d5:20", text, sizeof text);
        CHECK(g > 0 && adia__plan_cpu_probes() == p + 1, "bad entry %zu: %d probes, %g GB/s", i,
              adia__plan_cpu_probes() - p, g);
        read_text(path, again, sizeof again);
        CHECK(!strncmp(again, file, strlen("adia-cpu-bandwidth 1\nkey ")) &&
              test_contains(again, "bandwidth_gbs "), "bad entry %zu not replaced: '%s'", i, again);
        bandwidth_file(again, sizeof again);
        CHECK(!strcmp(again, path), "bad entry %zu: another file %s", i, again);
    }
    /* a complete entry with the same key but a figure of its own is used */
    read_text(path, file, sizeof file);
    char *at = strstr(file, "bandwidth_gbs ");
    if (at) snprintf(at, sizeof file - (size_t)(at - file), "bandwidth_gbs 123.5000\n");
    write_text(path, file);
    adia__plan_cpu_forget();
    int p = adia__plan_cpu_probes();
    CHECK(plan_bandwidth("lap2d5:20", text, sizeof text) == 123.5 && adia__plan_cpu_probes() == p,
          "edited entry not used:\n%s", text);

    /* unreadable (a folder where the file was): measured, the plan made */
    remove(path);
    CHECK(mkdir(path, 0755) == 0, "mkdir %s", path);
    adia__plan_cpu_forget();
    p = adia__plan_cpu_probes();
    CHECK(plan_bandwidth("lap2d5:20", text, sizeof text) > 0 && adia__plan_cpu_probes() == p + 1,
          "unreadable entry:\n%s", text);
    rmdir(path);

    /* ADIA_CPU_BANDWIDTH and the hint win; neither probes */
    setenv("ADIA_CPU_BANDWIDTH", "12.5", 1);
    adia__plan_cpu_forget();
    p = adia__plan_cpu_probes();
    CHECK(plan_bandwidth("lap2d5:20", text, sizeof text) == 12.5 && adia__plan_cpu_probes() == p &&
          test_contains(text, "12.5 GB/s (from ADIA_CPU_BANDWIDTH)"), "env:\n%s", text);
    setenv("ADIA_CPU_BANDWIDTH", "fast", 1);      /* not a number: ignored */
    CHECK(plan_bandwidth("lap2d5:20", text, sizeof text) != 12.5, "bad env used");
    unsetenv("ADIA_CPU_BANDWIDTH");
    adia_matrix *A = test_generate("lap2d5:20");
    adia_plan_hints h = {.chooser = ADIA_CHOOSE_MODEL, .bandwidth_gbs = 7.0};
    adia_plan *P = NULL;
    if (A) CHECK_OK(adia_plan_create(A, &h, &P));
    if (P) {
        CHECK_OK(adia_plan_explain(P, text, sizeof text));
        CHECK(test_contains(text, "7.0 GB/s (from the hints)"), "hint:\n%s", text);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* One plan of A by chooser c (bandwidth left to the library). */
static adia_plan *plan_of(const adia_matrix *A, adia_chooser c, int64_t calls)
{
    adia_plan_hints h = {.chooser = c, .expected_calls = calls};
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create(A, &h, &P));
    return P;
}

/* The same input on the same machine gives the same format: with the
 * model (whose inputs, the bandwidth included, now come from the cache:
 * the same totals to the bit, and the cheapest build of those within 10%
 * of the least), and with the measured times on the CPU (ties within 10%
 * to the cheaper build). */
static void test_same_choice(void)
{
    static const char *const specs[] = {"lap2d5:200", "lap3d7:40", "lap3d27:20",
                                        "type3:8192,4,0.5", "band:3000,7"};
    int p0 = adia__plan_cpu_probes();
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        adia_matrix *A = test_generate(specs[k]);
        if (!A) continue;
        for (int64_t calls = 1; calls <= 100000; calls *= 100) {
            adia__plan_cpu_forget();   /* each plan as a new process makes it */
            adia_plan *P = plan_of(A, ADIA_CHOOSE_MODEL, calls);
            adia__plan_cpu_forget();
            adia_plan *Q = plan_of(A, ADIA_CHOOSE_MODEL, calls);
            if (P && Q) {
                CHECK(!strcmp(adia_plan_format_name(P), adia_plan_format_name(Q)) &&
                      P->cand[0].total_ms == Q->cand[0].total_ms &&
                      P->bandwidth_gbs == Q->bandwidth_gbs,
                      "%s, %lld calls: model chose %s (%.6f ms) then %s (%.6f ms)", specs[k],
                      (long long)calls, adia_plan_format_name(P), P->cand[0].total_ms,
                      adia_plan_format_name(Q), Q->cand[0].total_ms);
                /* the rule: of the totals within 10% of the least, the least conversion */
                double least = INFINITY;
                for (int i = 0; i < P->n_cand; i++)
                    if (P->cand[i].total_ms < least) least = P->cand[i].total_ms;
                CHECK(!strcmp(P->cand[0].format, adia_plan_format_name(P)) &&
                      P->cand[0].total_ms <= 1.1 * least,
                      "%s, %lld calls: chose %s, %.4f ms total, least %.4f", specs[k],
                      (long long)calls, adia_plan_format_name(P), P->cand[0].total_ms, least);
                for (int i = 1; i < P->n_cand; i++)
                    CHECK(P->cand[i].total_ms > 1.1 * least ||
                          P->cand[i].convert_ms >= P->cand[0].convert_ms,
                          "%s, %lld calls: %s (%.4f ms total, %.4f convert) is within 10%% and "
                          "cheaper to build than %s (%.4f convert)", specs[k], (long long)calls,
                          P->cand[i].format, P->cand[i].total_ms, P->cand[i].convert_ms,
                          P->cand[0].format, P->cand[0].convert_ms);
            }
            adia_plan_destroy(P);
            adia_plan_destroy(Q);
        }
        adia_matrix_destroy(A);
    }
    CHECK(adia__plan_cpu_probes() == p0, "%d probes for plans with the cache warm",
          adia__plan_cpu_probes() - p0);
    /* MEASURE's repeatability rests on timings: measured, not tested (a
     * timed test fails under a loaded CI run: issue 28's notes give the
     * counts, 6 of 6 at one thread on lap2d5:200) */
}

int main(int argc, char **argv)
{
    const char *t = getenv("OMP_NUM_THREADS");
    if (!t || strcmp(t, "1")) {   /* one thread whatever the load: a fixed key */
        setenv("OMP_NUM_THREADS", "1", 1);
        execv("/proc/self/exe", argv);
        perror("execv /proc/self/exe");
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "child")) return child();
    TEST_BEGIN();
    snprintf(dir, sizeof dir, "/tmp/adia-cache-test.XXXXXX");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    setenv("ADIA_CACHE_DIR", dir, 1);
    test_bandwidth_cache("/proc/self/exe");
    test_same_choice();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_END();
}
