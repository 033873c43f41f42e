/* plan_cpu.c -- what the CPU side of the cost model measures on the
 * machine it runs on, instead of assuming it:
 *
 *  - the read bandwidth: a parallel sum with eight independent accumulators
 *    per thread (one serial sum waits on each add and measures add latency,
 *    not memory), over 128 MiB;
 *  - each format's efficiency (bytes moved / (time * bandwidth)) on three
 *    DRAM-bound probes, 5-, 7- and 27-point stencils: how well a kernel
 *    streams depends on how many entries a row has (the DIA kernel, whose
 *    diagonals lie one matrix length apart, streams K arrays at once: 2-2.6x
 *    behind the pieced formats with 10+ diagonals until it prefetched
 *    them, and how far it is now is the machine's to say).  A matrix's
 *    efficiency is interpolated piecewise linearly in its mean entries per
 *    row.
 *
 * Both are measured once per machine (CPU model, processors, memory size),
 * thread count and library version and kept in the cache folder
 * (adia__cache_path: $ADIA_CACHE_DIR, else ~/.cache/adia), written through
 * the safe writer; a missing, damaged or foreign file is measured again.
 * ADIA_CPU_BANDWIDTH (GB/s) replaces the bandwidth.  The calibration
 * takes about a second; it is only used for matrices too big for the
 * caches (below that no format streams from memory, and the assumed
 * efficiencies of the format tables apply). */
#define _POSIX_C_SOURCE 200809L
#include "plan_internal.h"

#include "io/outfile.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* In increasing entries per row; a kernel's efficiency may bend between 5
 * and 27 (the DIA kernel without prefetch was already 1.4x slower than the
 * pieced formats at 7), which a line from 5 to 27 would miss. */
#define PROBES 3
static const char *const probe_spec[PROBES] = {"lap2d5:1024", "lap3d7:100", "lap3d27:64"};
/* The cache file's format and the kernels it measured: 3 since the
 * diagonal kernels' AVX2 build, prefetch and streamed y (efficiencies
 * measured for older kernels are measured again). */
#define CALIB_VERSION 3
/* Matrices whose CSR takes less stay in the caches: assumed efficiencies. */
#define DRAM_MIN_BYTES ((int64_t)32 << 20)

typedef struct cpu_calib {
    int threads;                   /* 0: nothing measured or loaded yet */
    double gbs;                    /* read bandwidth during the calibration */
    double row[PROBES];            /* mean entries per row of each probe */
    int n;
    struct {
        char name[24];
        double eff[PROBES];        /* NaN: the probe could not be built */
    } f[ADIA_PLAN_MAX_CANDIDATES];
} cpu_calib;

static cpu_calib calib;
/* Bandwidth probes run by this process (adia__plan_cpu_probes). */
static _Atomic int probe_count;

/* --------------------------------------------------------- bandwidth */

/* Bytes read per second by a parallel sum over a, the best of three. */
static double stream_read_gbs(const double *a, int64_t n)
{
    double best = INFINITY, sink = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = adia__now_ms(), s = 0;
#pragma omp parallel reduction(+ : s) num_threads(adia__threads())
        {
            double acc[8] = {0};
#pragma omp for schedule(static)
            for (int64_t i = 0; i < n / 8; i++)
                for (int k = 0; k < 8; k++) acc[k] += a[8 * i + k];
            for (int k = 0; k < 8; k++) s += acc[k];
        }
        double t = (adia__now_ms() - t0) * 1e-3;   /* seconds */
        sink += s;
        if (t < best) best = t;
    }
    return sink == 12345.678 ? 0 : (double)(n / 8 * 8) * 8.0 / best * 1e-9;   /* keep the sum */
}

/* One measurement over 128 MiB (four times the L3 here: over 64 MiB part
 * of it stayed there and read 1.6x faster). */
static adia_status measure_gbs(double *gbs)
{
    int64_t n = (int64_t)1 << 24;
    probe_count++;
    double *a = adia__alloc((size_t)n, sizeof *a, "bandwidth probe");
    if (!a) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel for schedule(static) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) a[i] = (double)(i & 7);
    *gbs = stream_read_gbs(a, n);
    free(a);
    return ADIA_OK;
}

/* Once per machine, thread count and library version, kept on disk
 * (bandwidth_load/save, below); this process's copy in bw.  A probe reads
 * 128 MiB and takes about 0.1 s, and two probes of the same machine read
 * 16.7 and 28.7 GB/s (issue 28): measured per process, the figure, and
 * with it the model's choice for a small matrix, changed from run to run. */
static struct {
    double gbs;
    int threads;                   /* 0: nothing measured or loaded yet */
    const char *from;
} bw;

static bool bandwidth_load(int threads, double *gbs);
static void bandwidth_save(int threads, double gbs);

/* ADIA_CPU_BANDWIDTH (GB/s), when it holds a positive number. */
static double bandwidth_env(void)
{
    const char *v = getenv("ADIA_CPU_BANDWIDTH");
    char *end = NULL;
    double g = v && *v ? strtod(v, &end) : 0;
    return end && *end == '\0' && isfinite(g) && g > 0 ? g : 0;
}

adia_status adia__plan_cpu_bandwidth_from(double *gbs, const char **from)
{
    adia_status s = ADIA_OK;
    double env = bandwidth_env();
    if (env > 0) {
        *gbs = env;
        if (from) *from = "from ADIA_CPU_BANDWIDTH";
        return ADIA_OK;
    }
#pragma omp critical(adia__plan_cpu_bandwidth)
    {
        if (bw.threads != adia__threads()) {
            int threads = adia__threads();
            if (bandwidth_load(threads, &bw.gbs)) {
                bw.from = "measured once on this machine, read from the cache";
            } else if ((s = measure_gbs(&bw.gbs)) == ADIA_OK) {
                bandwidth_save(threads, bw.gbs);
                bw.from = "measured now, kept in the cache";
            }
            bw.threads = s == ADIA_OK ? threads : 0;
        }
        *gbs = bw.gbs;
        if (from) *from = bw.from;
    }
    return s;
}

adia_status adia__plan_cpu_bandwidth(double *gbs)
{
    return adia__plan_cpu_bandwidth_from(gbs, NULL);
}

/* ------------------------------------------------------ calibration */

/* Efficiency of format `name` on probe matrix A (NaN when it cannot be
 * built there, e.g. over the memory budget): the best of 10 products, so
 * that another process's burst does not become the machine's figure. */
static double probe_eff(const adia_matrix *A, const char *name, double gbs,
                        const double *x, double *y)
{
    adia_format *F = NULL;
    adia_gpu_timing t;
    double eff = NAN;
    if (adia_format_build(A, name, NULL, ADIA_DOUBLE, &F) == ADIA_OK &&
        adia_cpu_time_spmv(F, 10, x, y, &t) == ADIA_OK && t.min_ms > 0)
        eff = (double)adia_format_bytes(F) / (t.min_ms * 1e6 * gbs);
    adia_format_destroy(F);
    return eff;
}

/* Every format with a model slot on probe p, against the bandwidth
 * measured beside it: on a shared machine another process's load then
 * slows both and cancels out of the efficiencies. */
static adia_status calibrate_probe(cpu_calib *c, int p)
{
    double gbs;
    ADIA_TRY(measure_gbs(&gbs));
    adia_matrix *A = NULL;
    ADIA_TRY(adia_matrix_generate(probe_spec[p], &A));
    const adia_csr *M = &A->csr;
    c->row[p] = (double)M->nnz / M->rows;
    double *x = adia__alloc((size_t)M->cols, sizeof *x, "calibration x");
    double *y = adia__alloc((size_t)M->rows, sizeof *y, "calibration y");
    adia_status s = x && y ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int32_t i = 0; s == ADIA_OK && i < M->cols; i++) x[i] = adia_random_value(1, i);
    for (int i = 0; s == ADIA_OK && i < c->n; i++)
        c->f[i].eff[p] = probe_eff(A, c->f[i].name, gbs, x, y);
    free(x);
    free(y);
    adia_matrix_destroy(A);
    return s;
}

static adia_status calibrate(cpu_calib *c)
{
    memset(c, 0, sizeof *c);
    ADIA_TRY(adia__plan_cpu_bandwidth(&c->gbs));
    for (int i = 0; i < adia_format_count() && c->n < ADIA_PLAN_MAX_CANDIDATES; i++) {
        const adia_format_ops *ops = adia__format_ops_at(i);
        if (ops->model.storage) snprintf(c->f[c->n++].name, sizeof c->f[0].name, "%s", ops->name);
    }
    for (int p = 0; p < PROBES; p++) ADIA_TRY(calibrate_probe(c, p));
    c->threads = adia__threads();
    return ADIA_OK;
}

/* ------------------------------------------------------- cache file */

/* The machine as the cache files name it: the library version, the CPU
 * model, the processors this process may use, the memory in GiB and the
 * thread count.  Another CPU, container size or library version: another
 * file, measured once there.  Kept whole in the file: a hash collision is
 * caught on load. */
static void machine_key(int threads, char *key, size_t len)
{
    char model[256] = "unknown", line[512];
    long long mem_kb = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            const char *v = strchr(line, ':');
            snprintf(model, sizeof model, "%.200s", v ? v + 1 + strspn(v + 1, " \t") : line);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
    f = fopen("/proc/meminfo", "r");
    if (f && fscanf(f, "MemTotal: %lld kB", &mem_kb) != 1) mem_kb = 0;
    if (f) fclose(f);
    snprintf(key, len, "adia %s | %s | %d processors | %lld GiB | %d threads", ADIA_VERSION,
             model, omp_get_num_procs(), (mem_kb + (1 << 19)) >> 20, threads);
}

/* path = the cache file "<prefix>-<FNV-1a 64 of the machine key>.txt".
 * threads: read once by the caller for both the load and the save (the
 * load-dependent count may change while a probe runs). */
static bool cache_file(const char *prefix, int threads, char *key, size_t key_len, char *path,
                       size_t len)
{
    machine_key(threads, key, key_len);
    uint64_t h = 1469598103934665603ull;                  /* FNV-1a 64 */
    for (const char *k = key; *k; k++) h = (h ^ (unsigned char)*k) * 1099511628211ull;
    char name[64];
    snprintf(name, sizeof name, "%s-%016llx.txt", prefix, (unsigned long long)h);
    return adia__cache_path(name, path, len);
}

static bool calib_path(int threads, char *path, size_t len)
{
    char key[512];
    return cache_file("cpu", threads, key, sizeof key, path, len);
}

/* The bandwidth file: "adia-cpu-bandwidth 1", the key, the figure.
 * Written through the safe writer (a temporary renamed over the file), so
 * a reader sees the old file or the new one, never half of one. */
#define BANDWIDTH_VERSION 1

static void bandwidth_save(int threads, double gbs)
{
    char key[512], path[1024];
    adia_outfile o;
    if (!cache_file("bandwidth-cpu", threads, key, sizeof key, path, sizeof path) ||
        adia__outfile_open(&o, path, false) != ADIA_OK) {
        adia_clear_error();   /* best effort: measured again next time */
        return;
    }
    adia__outfile_printf(&o, "adia-cpu-bandwidth %d\nkey %s\nbandwidth_gbs %.4f\n",
                         BANDWIDTH_VERSION, key, gbs);
    if (adia__outfile_commit(&o) != ADIA_OK) adia_clear_error();
}

/* The file as bandwidth_save writes it, or false (missing, unreadable,
 * another version or machine, damaged: measured again, never an error). */
static bool bandwidth_load(int threads, double *gbs)
{
    char key[512], path[1024], line[640], want[600];
    if (!cache_file("bandwidth-cpu", threads, key, sizeof key, path, sizeof path)) return false;
    FILE *f = fopen(path, "r");
    if (!f) return false;
    int version = 0;
    double g = 0;
    char extra;
    snprintf(want, sizeof want, "key %s\n", key);
    bool ok = fscanf(f, "adia-cpu-bandwidth %d\n", &version) == 1 &&
              version == BANDWIDTH_VERSION && fgets(line, sizeof line, f) &&
              !strcmp(line, want) && fscanf(f, "bandwidth_gbs %lf", &g) == 1 &&
              fscanf(f, " %c", &extra) == EOF && isfinite(g) && g > 0.01 && g < 1e6;
    fclose(f);
    if (ok) *gbs = g;
    return ok;
}

int adia__plan_cpu_probes(void) { return probe_count; }

void adia__plan_cpu_forget(void)
{
#pragma omp critical(adia__plan_cpu_bandwidth)
    bw.threads = 0;
#pragma omp critical(adia__plan_cpu_calibration)
    calib.threads = 0;
}

static void calib_save(const cpu_calib *c)
{
    char path[1024];
    adia_outfile o;
    if (!calib_path(c->threads, path, sizeof path) || adia__outfile_open(&o, path, false) != ADIA_OK) {
        adia_clear_error();   /* best effort: next time it is measured again */
        return;
    }
    adia__outfile_printf(&o, "adia-cpu-calibration %d\nthreads %d\nbandwidth_gbs %.4f\nprobe_rows",
                         CALIB_VERSION, c->threads, c->gbs);
    for (int p = 0; p < PROBES; p++) adia__outfile_printf(&o, " %.4f", c->row[p]);
    for (int i = 0; i < c->n; i++) {
        adia__outfile_printf(&o, "\nformat %s", c->f[i].name);
        for (int p = 0; p < PROBES; p++) adia__outfile_printf(&o, " %.4f", c->f[i].eff[p]);
    }
    adia__outfile_printf(&o, "\n");
    if (adia__outfile_commit(&o) != ADIA_OK) adia_clear_error();   /* best effort */
}

/* The file as calib_save writes it, or false (missing, another version,
 * damaged: measured again). */
static bool calib_load(cpu_calib *c)
{
    char path[1024], name[24];
    if (!calib_path(adia__threads(), path, sizeof path)) return false;
    FILE *f = fopen(path, "r");
    if (!f) return false;
    memset(c, 0, sizeof *c);
    int version = 0, threads = 0;
    bool ok = fscanf(f, "adia-cpu-calibration %d threads %d bandwidth_gbs %lf probe_rows",
                     &version, &threads, &c->gbs) == 3 &&
              version == CALIB_VERSION && threads == adia__threads() && c->gbs > 0;
    for (int p = 0; ok && p < PROBES; p++)
        ok = fscanf(f, "%lf", &c->row[p]) == 1 && (p == 0 || c->row[p] > c->row[p - 1]);
    while (ok && c->n < ADIA_PLAN_MAX_CANDIDATES && fscanf(f, " format %23s", name) == 1) {
        snprintf(c->f[c->n].name, sizeof name, "%s", name);
        for (int p = 0; ok && p < PROBES; p++) ok = fscanf(f, "%lf", &c->f[c->n].eff[p]) == 1;
        c->n++;
    }
    ok = ok && c->n > 0 && fscanf(f, " %c", name) == EOF;
    fclose(f);
    if (ok) c->threads = threads;
    return ok;
}

/* ------------------------------------------------------- efficiency */

/* The calibrated efficiency of format `name` at `row` entries per row
 * (interpolated between the probes), or NaN. */
static double calib_eff(const cpu_calib *c, const char *name, double row)
{
    for (int i = 0; i < c->n; i++) {
        const double *e = c->f[i].eff;
        if (strcmp(c->f[i].name, name)) continue;
        int p = 0;                         /* the probes' segment holding row */
        while (p + 2 < PROBES && row > c->row[p + 1]) p++;
        double w = (row - c->row[p]) / (c->row[p + 1] - c->row[p]);
        w = w < 0 ? 0 : w > 1 ? 1 : w;
        double eff = (1 - w) * e[p] + w * e[p + 1];
        return eff > 0 ? eff : NAN;        /* a probe it could not be built on */
    }
    return NAN;
}

double adia__plan_cpu_efficiency(const adia_format_ops *ops, const adia_csr *A, int *measured)
{
    *measured = 0;
    if ((double)A->nnz * 12 + (double)A->rows * 8 < (double)DRAM_MIN_BYTES) return ops->model.eff_cpu;
    double eff = NAN;
#pragma omp critical(adia__plan_cpu_calibration)
    {
        if (calib.threads != adia__threads() && !calib_load(&calib)) {
            if (calibrate(&calib) == ADIA_OK) calib_save(&calib);
            else calib.threads = 0;    /* assumed efficiencies; tried again next time */
        }
        if (calib.threads) eff = calib_eff(&calib, ops->name, (double)A->nnz / A->rows);
    }
    *measured = !isnan(eff);
    return *measured ? eff : ops->model.eff_cpu;
}
