/* bench_parse.c -- Matrix Market parse / write and binary load speed.
 *
 *   bench_parse [FILE.mtx] [--n N] [--read-only] [--write OUT] [--runs R] [--threads T]
 *   bench_parse --bin FILE.bin [--runs R] [--threads T]
 *
 * Without FILE, writes a 3D 27-point stencil on an N^3 grid (default N = 62:
 * ~6.3M entries, about 200 MB of text) to
 * bench_parse_tmp.mtx with adia_matrix_write_mtx (timed).  Then parses the
 * file from memory with 1 and 2 OpenMP threads, reads it with
 * adia_matrix_read_mtx with 1 and 2 threads (file reading included), writes and loads the binary
 * format, and prints MB/s (MB = 1e6 bytes of the text / binary file).
 * --read-only: only the adia_matrix_read_mtx lines (what parse-vs-fmm.sh
 * times); --write OUT: only the write_mtx lines, FILE read (not timed) and
 * written to OUT with adia_matrix_write_mtx (what parse-vs-fmm.sh times
 * against fast_matrix_market's writer; OUT is removed afterwards); --runs
 * R: best of R (default 2); --threads T: only at T threads (a profile of
 * one thread count); --bin FILE.bin: only adia_matrix_read_bin of FILE.bin
 * (read + CSR check) at 1 and 2 threads beside the floor, a memcpy of as
 * many bytes into fresh memory (page faults included, as the reader's new
 * arrays pay) and into memory already touched. */
#include "adia.h"

#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_parse: %s: %s\n", what, adia_last_error());
    exit(1);
}

/* 27-point stencil on n^3, rows in lexicographic order, random values. */
static adia_matrix *stencil27(int n)
{
    int64_t rows = (int64_t)n * n * n, cap = rows * 27;
    int64_t *ptr = malloc((size_t)(rows + 1) * sizeof *ptr);
    int32_t *col = malloc((size_t)cap * sizeof *col);
    double *val = malloc((size_t)cap * sizeof *val);
    if (!ptr || !col || !val) die("out of memory");
    uint64_t s = 88172645463325252ull;
    int64_t k = 0;
    ptr[0] = 0;
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int X = x + dx, Y = y + dy, Z = z + dz;
                            if (X < 0 || Y < 0 || Z < 0 || X >= n || Y >= n || Z >= n) continue;
                            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                            col[k] = (int32_t)(((int64_t)Z * n + Y) * n + X);
                            val[k++] = (dx || dy || dz) ? -(double)(s >> 11) / 9007199254740992.0
                                                        : 26.0 + (double)(s >> 11) / 9007199254740992.0;
                        }
                ptr[((int64_t)z * n + y) * n + x + 1] = k;
            }
    adia_matrix *A;
    if (adia_matrix_create_csr((int32_t)rows, (int32_t)rows, k, ptr, col, val, ADIA_DOUBLE, &A))
        die("create");
    free(ptr);
    free(col);
    free(val);
    return A;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) die("reading the file");
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static double file_mb(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    double mb = (double)ftell(f) / 1e6;
    fclose(f);
    return mb;
}

/* adia_matrix_read_mtx of path at 1 and 2 threads, best of runs: the file,
 * as users read it. */
static int only_threads;   /* --threads */

static void read_file(const char *path, double mb, int runs)
{
    for (int threads = 1; threads <= 2; threads++) {
        if (only_threads && threads != only_threads) continue;
        omp_set_num_threads(threads);
        double best = 1e30;
        for (int rep = 0; rep < runs; rep++) {
            adia_matrix *B;
            double t0 = now();
            if (adia_matrix_read_mtx(path, &B)) die("read_mtx");
            double dt = now() - t0;
            best = dt < best ? dt : best;
            adia_matrix_destroy(B);
        }
        printf("read_mtx  %dT %8.1f MB  %7.3f s  %7.1f MB/s  (file read included, best of %d)\n",
               threads, mb, best, mb / best, runs);
    }
}

/* FILE (read once, not timed) written to out at 1 and 2 threads, best of
 * runs: the write as a program that holds a matrix pays it, temporary file,
 * fsync and rename included. */
static void write_file(const char *path, const char *out, int runs)
{
    adia_matrix *A;
    if (adia_matrix_read_mtx(path, &A)) die("read_mtx");
    for (int threads = 1; threads <= 2; threads++) {
        if (only_threads && threads != only_threads) continue;
        omp_set_num_threads(threads);
        double best = 1e30;
        for (int rep = 0; rep < runs; rep++) {
            double t0 = now();
            if (adia_matrix_write_mtx(A, out)) die("write_mtx");
            double dt = now() - t0;
            best = dt < best ? dt : best;
        }
        double mb = file_mb(out);
        printf("write_mtx %dT %8.1f MB  %7.3f s  %7.1f MB/s  (fsync included, best of %d)\n",
               threads, mb, best, mb / best, runs);
    }
    remove(out);
    adia_matrix_destroy(A);
}

/* memcpy of n bytes at `threads` threads into dst, in 1 MB pieces. */
static double copy_time(char *dst, const char *src, size_t n, int threads)
{
    double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t at = 0; at < n; at += (size_t)1 << 20)
        memcpy(dst + at, src + at, n - at < ((size_t)1 << 20) ? n - at : (size_t)1 << 20);
    return now() - t0;
}

/* --bin: adia_matrix_read_bin of path at 1 and 2 threads, best of runs,
 * and the memcpy floor of as many bytes (fresh and touched destination). */
static void read_bin_file(const char *path, int runs)
{
    double mb = file_mb(path);
    size_t n = (size_t)(mb * 1e6);
    char *src = malloc(n);
    if (!src) die("out of memory");
    memset(src, 1, n);
    for (int threads = 1; threads <= 2; threads++) {
        if (only_threads && threads != only_threads) continue;
        omp_set_num_threads(threads);
        double best = 1e30, fresh = 1e30, warm = 1e30;
        for (int rep = 0; rep < runs; rep++) {
            char *dst = malloc(n);
            if (!dst) die("out of memory");
            double dt = copy_time(dst, src, n, threads);
            fresh = dt < fresh ? dt : fresh;
            dt = copy_time(dst, src, n, threads);
            warm = dt < warm ? dt : warm;
            free(dst);
            adia_matrix *B;
            double t0 = now();
            if (adia_matrix_read_bin(path, &B)) die("read_bin");
            dt = now() - t0;
            best = dt < best ? dt : best;
            adia_matrix_destroy(B);
        }
        printf("read_bin  %dT %8.1f MB  %7.3f s  %7.1f MB/s  (read + CSR check, best of %d); "
               "memcpy fresh %.1f MB/s, touched %.1f MB/s\n", threads, mb, best, mb / best, runs,
               mb / fresh, mb / warm);
    }
    free(src);
}

int main(int argc, char **argv)
{
    const char *path = NULL, *write_out = NULL, *bin_in = NULL;
    int n = 62, runs = 2;
    bool read_only = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) only_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--write") && i + 1 < argc) write_out = argv[++i];
        else if (!strcmp(argv[i], "--read-only")) read_only = true;
        else if (!strcmp(argv[i], "--bin") && i + 1 < argc) bin_in = argv[++i];
        else path = argv[i];
    }
    adia_matrix *A = NULL, *B = NULL;
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    double load[1] = {0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf", &load[0]) != 1) load[0] = 0;
        fclose(la);
    }
    printf("bench_parse  %s  max threads %d  load average %.2f\n", date,
           omp_get_max_threads(), load[0]);
    if (bin_in) {
        read_bin_file(bin_in, runs);
        return 0;
    }
    if (write_out) {
        if (!path) {
            fprintf(stderr, "bench_parse: --write needs FILE\n");
            return 2;
        }
        write_file(path, write_out, runs);
        return 0;
    }
    if (!path) {
        path = "bench_parse_tmp.mtx";
        A = stencil27(n);
        double t0 = now();
        if (adia_matrix_write_mtx(A, path)) die("write_mtx");
        double dt = now() - t0;
        printf("write_mtx    %8.1f MB  %7.3f s  %7.1f MB/s  (27-pt stencil %d^3, nnz %lld)\n",
               file_mb(path), dt, file_mb(path) / dt, n, (long long)adia_matrix_nnz(A));
    }
    if (read_only && !A) {
        read_file(path, file_mb(path), runs);
        return 0;
    }
    size_t len;
    char *text = slurp(path, &len);
    double mb = (double)len / 1e6;
    for (int threads = 1; threads <= 2; threads++) {
        if (only_threads && threads != only_threads) continue;
        omp_set_num_threads(threads);
        double best = 1e30, best_cpu = 0;
        for (int rep = 0; rep < runs; rep++) {
            double t0 = now(), c0 = cpu_now();
            if (adia_matrix_parse_mtx(text, len, path, &B)) die("parse_mtx");
            double dt = now() - t0;
            if (dt < best) best = dt, best_cpu = cpu_now() - c0;
            if (A && !adia_matrix_equal(A, B)) die("parsed matrix differs from the written one");
            if (rep == 0 && !A) { A = B; B = NULL; }
            adia_matrix_destroy(B);
            B = NULL;
        }
        printf("parse_mtx %dT %8.1f MB  %7.3f s  %7.1f MB/s  (from memory, best of %d; "
               "%.3f CPU s)\n", threads, mb, best, mb / best, runs, best_cpu);
    }
    free(text);
    read_file(path, mb, runs);
    const char *bin = "bench_parse_tmp.bin";
    double t0 = now();
    if (adia_matrix_write_bin(A, bin)) die("write_bin");
    double dt = now() - t0;
    double bmb = file_mb(bin);
    printf("write_bin    %8.1f MB  %7.3f s  %7.1f MB/s\n", bmb, dt, bmb / dt);
    t0 = now();
    if (adia_matrix_load(bin, &B)) die("load bin");
    dt = now() - t0;
    printf("load bin     %8.1f MB  %7.3f s  %7.1f MB/s  (read + CSR check)\n", bmb, dt, bmb / dt);
    if (!adia_matrix_equal(A, B)) die("binary round trip differs");
    adia_matrix_destroy(B);
    adia_matrix_destroy(A);
    remove(bin);
    if (!strcmp(path, "bench_parse_tmp.mtx")) remove(path);
    return 0;
}
