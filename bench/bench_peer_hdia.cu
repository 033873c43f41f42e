/* bench_peer_hdia.cu -- spGPU's HDIA SpMV (Barbieri et al., the GPU layer
 * of PSBLAS) timed beside every adia kernel on the same matrix, in one run
 * (issue 32, item 1).
 *
 * Built only with -DADIA_PEER_SPGPU=DIR, DIR a git-ignored copy of spGPU's
 * sources that bench/peer-hdia.sh prepares (its one change: x read through
 * __ldg in place of the texture references CUDA 12 removed).  No spGPU
 * code is part of adia; this file only calls its public functions.
 *
 * Method, the same on both sides: the peer's matrix comes from its own
 * conversion (computeHdiaHackOffsetsFromCoo + cooToHdia, hack 128 and 32 by
 * default) of adia's CSR; its y is checked against adia's CPU reference
 * (alpha 1 beta 0 on NaN-poisoned y, then alpha -1.5 beta 0.5; the larger
 * relative error) before it is timed; every time is adia's timing (warm-up,
 * samples of CUDA-graph batches of back-to-back calls, CUDA events, the
 * median per call, x rotated over 4 vectors); the floor is
 * vs * (nnz + rows + cols) / B_read with B_read measured in this run. */
#include "adia.h"
#include "adia_bench.h"

extern "C" {
#include "core.h"
#include "hdia.h"
#include "hdia_conv.h"
}

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

const char *const USAGE =
    "usage: bench_peer_hdia (FILE | --gen SPEC) [--runs N] [--float] [--hacks H,H]\n"
    "                       [--formats F,F] [--params K=V,...] [--json-append FILE]\n"
    "spGPU's HDIA SpMV (its conversion, hacks H: default 128,32) beside every GPU\n"
    "kernel of adia's formats (default: all), cuSPARSE CSR ALG1/ALG2 and the floor.";

enum { N_X = 4 };  /* x vectors rotated while timing, as adia_gpu_time_spmv */

/* Return the status of expr when it is not ADIA_OK (adia.h has no macro). */
#define TRY(expr)                                                                              \
    do {                                                                                       \
        adia_status try_s_ = (expr);                                                           \
        if (try_s_ != ADIA_OK) return try_s_;                                                  \
    } while (0)

struct opts {
    const char *file = nullptr, *gen = nullptr, *formats = nullptr, *params = nullptr;
    const char *json = nullptr;
    int runs = 100;
    bool single = false;
    std::vector<int> hacks{128, 32};
};

/* One row of the table: a kernel of adia, cuSPARSE or the peer. */
struct row {
    std::string who, kernel, status = "ok", note;
    double err = NAN, ms = NAN, build_ms = NAN;
    int64_t bytes = 0;
};

struct ctx {
    opts o;
    adia_matrix *A = nullptr;
    adia_value_type vt = ADIA_DOUBLE;
    adia_format_params params{};
    double bread = NAN, floor_ms = NAN;
    std::vector<row> rows;
};

double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

int usage_error(const char *what)
{
    fprintf(stderr, "bench_peer_hdia: %s\n%s\n", what, USAGE);
    return 2;
}

/* --hacks 128,32: each a multiple of 32 (the peer's kernel needs it). */
bool parse_hacks(const char *s, std::vector<int> &out)
{
    out.clear();
    while (*s) {
        char *end;
        long h = strtol(s, &end, 10);
        if (end == s || h < 32 || h > 4096 || h % 32 || (*end && *end != ',')) return false;
        out.push_back((int)h);
        s = *end ? end + 1 : end;
    }
    return !out.empty();
}

int parse_args(int argc, char **argv, opts &o)
{
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool has = i + 1 < argc;
        if (a == "--help" || a == "-h") {
            puts(USAGE);
            exit(0);
        } else if (a == "--float") o.single = true;
        else if (a == "--gen" && has) o.gen = argv[++i];
        else if (a == "--formats" && has) o.formats = argv[++i];
        else if (a == "--params" && has) o.params = argv[++i];
        else if (a == "--json-append" && has) o.json = argv[++i];
        else if (a == "--runs" && has) {
            char *end;
            long r = strtol(argv[++i], &end, 10);
            if (*end || r < 50 || r > 100000) return usage_error("--runs: an integer in 50..100000");
            o.runs = (int)r;
        } else if (a == "--hacks" && has) {
            if (!parse_hacks(argv[++i], o.hacks))
                return usage_error("--hacks: multiples of 32 in 32..4096, comma-separated");
        } else if (a[0] == '-' && a != "-") return usage_error(("unknown option or missing value: " + a).c_str());
        else if (!o.file) o.file = argv[i];
        else return usage_error("more than one FILE");
    }
    if (!o.file == !o.gen) return usage_error("give exactly one of FILE or --gen SPEC");
    return 0;
}

/* ------------------------------------------------------------- the peer */

/* spGPU's HDIA of A in the device memory of one hack size. */
struct peer {
    spgpuHandle_t h = nullptr;
    int hack = 0, rows = 0, cols = 0, height = 0;
    void *vals = nullptr, *x = nullptr, *y = nullptr;
    int *offs = nullptr, *hack_offs = nullptr;
    adia_value_type vt = ADIA_DOUBLE;
    ~peer()
    {
        cudaFree(vals), cudaFree(offs), cudaFree(hack_offs), cudaFree(x), cudaFree(y);
        if (h) spgpuDestroy(h);
    }
    int64_t bytes() const   /* storage + x read + y written */
    {
        size_t vs = adia_value_size(vt);
        return (int64_t)height * hack * vs + (int64_t)height * 4 +
               ((int64_t)(rows + hack - 1) / hack + 1) * 4 + (int64_t)(rows + cols) * vs;
    }
};

/* The last CUDA failure of the peer's side, for its row's note (adia's
 * own failures are in adia_last_error). */
std::string cuda_error;

adia_status cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return ADIA_OK;
    cuda_error = std::string(what) + ": " + cudaGetErrorString(e);
    return ADIA_ERR_CUDA;
}

template <typename T>
adia_status upload(void **d, const T *h, size_t n, const char *what)
{
    adia_status s = cuda_ok(cudaMalloc(d, n ? n * sizeof(T) : 1), what);
    if (s == ADIA_OK && n) s = cuda_ok(cudaMemcpy(*d, h, n * sizeof(T), cudaMemcpyHostToDevice), what);
    return s;
}

/* The peer's own conversion (COO in, 0-based) on the host, then uploaded. */
template <typename T>
adia_status peer_build(const adia_csr_view &v, int hack, peer &p)
{
    std::vector<int> ri((size_t)v.nnz), ci((size_t)v.nnz);
    std::vector<T> val((size_t)v.nnz);
    for (int32_t r = 0; r < v.rows; r++)
        for (int64_t k = v.rowptr[r]; k < v.rowptr[r + 1]; k++) {
            ri[(size_t)k] = r;
            ci[(size_t)k] = v.colind[k];
            val[(size_t)k] = (T)v.values[k];
        }
    int hacks = getHdiaHacksCount(hack, v.rows);
    std::vector<int> hack_offs((size_t)hacks + 1);
    computeHdiaHackOffsetsFromCoo(&p.height, hack_offs.data(), hack, v.rows, v.cols, (int)v.nnz,
                                  ri.data(), ci.data(), 0);
    if ((int64_t)p.height * hack > INT32_MAX) return ADIA_ERR_OVERFLOW;   /* its kernel indexes in int */
    std::vector<T> hv((size_t)p.height * hack, T(0));   /* padding slots must be zero */
    std::vector<int> offs((size_t)p.height);
    cooToHdia(hv.data(), offs.data(), hack_offs.data(), hack, v.rows, v.cols, (int)v.nnz,
              ri.data(), ci.data(), val.data(), 0,
              sizeof(T) == 8 ? SPGPU_TYPE_DOUBLE : SPGPU_TYPE_FLOAT);
    p.hack = hack, p.rows = v.rows, p.cols = v.cols;
    TRY(upload(&p.vals, hv.data(), hv.size(), "peer values"));
    TRY(upload((void **)&p.offs, offs.data(), offs.size(), "peer offsets"));
    TRY(upload((void **)&p.hack_offs, hack_offs.data(), hack_offs.size(), "peer hack offsets"));
    TRY(cuda_ok(cudaMalloc(&p.x, (size_t)v.cols * N_X * sizeof(T) + 1), "peer x"));
    TRY(cuda_ok(cudaMalloc(&p.y, (size_t)v.rows * sizeof(T) + 1), "peer y"));
    int dev = 0;
    TRY(cuda_ok(cudaGetDevice(&dev), "cudaGetDevice"));
    return spgpuCreate(&p.h, dev) == SPGPU_SUCCESS ? ADIA_OK : cuda_ok(cudaErrorUnknown, "spgpuCreate");
}

/* z = alpha*A*x + beta*y with y = z (in place, as the peer allows). */
void peer_spmv(const peer &p, const void *x, double alpha, double beta, cudaStream_t st)
{
    spgpuSetStream(p.h, st);
    if (p.vt == ADIA_DOUBLE)
        spgpuDhdiaspmv(p.h, (double *)p.y, (const double *)p.y, alpha, (const double *)p.vals,
                       p.offs, p.hack, p.hack_offs, p.rows, p.cols, (const double *)x, beta);
    else
        spgpuShdiaspmv(p.h, (float *)p.y, (const float *)p.y, (float)alpha, (const float *)p.vals,
                       p.offs, p.hack, p.hack_offs, p.rows, p.cols, (const float *)x, (float)beta);
}

/* Host doubles to the device in vt (n values at d). */
adia_status put(void *d, const std::vector<double> &v, adia_value_type vt)
{
    if (vt == ADIA_DOUBLE)
        return cuda_ok(cudaMemcpy(d, v.data(), v.size() * 8, cudaMemcpyHostToDevice), "copy");
    std::vector<float> f(v.begin(), v.end());
    return cuda_ok(cudaMemcpy(d, f.data(), f.size() * 4, cudaMemcpyHostToDevice), "copy");
}

adia_status get(std::vector<double> &v, const void *d, adia_value_type vt)
{
    if (vt == ADIA_DOUBLE)
        return cuda_ok(cudaMemcpy(v.data(), d, v.size() * 8, cudaMemcpyDeviceToHost), "copy");
    std::vector<float> f(v.size());
    TRY(cuda_ok(cudaMemcpy(f.data(), d, f.size() * 4, cudaMemcpyDeviceToHost), "copy"));
    for (size_t i = 0; i < f.size(); i++) v[i] = f[i];
    return ADIA_OK;
}

/* The peer's y against adia's CPU reference, as adia_gpu_check_spmv. */
adia_status peer_check(const ctx &c, const peer &p, double alpha, double beta, uint64_t seed,
                       double *err)
{
    std::vector<double> x((size_t)p.cols), y0((size_t)p.rows, NAN), y((size_t)p.rows);
    for (int32_t j = 0; j < p.cols; j++) {
        double r = adia_random_value(seed, j);
        x[(size_t)j] = c.vt == ADIA_FLOAT ? (double)(float)r : r;
    }
    for (int32_t i = 0; beta != 0 && i < p.rows; i++) {
        double r = adia_random_value(~seed, i);
        y0[(size_t)i] = c.vt == ADIA_FLOAT ? (double)(float)r : r;
    }
    std::vector<double> ref = y0;
    TRY(adia_matrix_spmv(c.A, alpha, x.data(), beta, ref.data()));
    TRY(put(p.x, x, c.vt));
    TRY(put(p.y, y0, c.vt));
    peer_spmv(p, p.x, alpha, beta, 0);
    TRY(cuda_ok(cudaDeviceSynchronize(), "peer SpMV"));
    TRY(get(y, p.y, c.vt));
    *err = adia_rel_err(y.data(), ref.data(), p.rows);
    return ADIA_OK;
}

struct peer_call {
    const peer *p;
    size_t x_stride;   /* bytes between the rotated x vectors */
};

adia_status peer_timed(void *arg, int i, void *stream)
{
    const peer_call *pc = (const peer_call *)arg;
    const char *x = (const char *)pc->p->x + (size_t)(i % N_X) * pc->x_stride;
    peer_spmv(*pc->p, x, 1.0, 0.0, (cudaStream_t)stream);
    return cuda_ok(cudaGetLastError(), "peer SpMV launch");
}

double tolerance(const ctx &c) { return c.vt == ADIA_FLOAT ? 1e-4 : 1e-10; }

/* "relative error E > T", the note of a failed check. */
std::string error_note(const ctx &c, double err)
{
    char buf[80];
    snprintf(buf, sizeof buf, "relative error %.3g > %.0e", err, tolerance(c));
    return buf;
}

void bench_peer(ctx &c, int hack)
{
    row r;
    r.who = "spgpu-hdia";
    r.kernel = "hack" + std::to_string(hack);
    adia_csr_view v;
    peer p;
    p.vt = c.vt;
    double t0 = now_ms();
    cuda_error.clear();
    adia_status s = adia_matrix_csr(c.A, &v);
    if (s == ADIA_OK && v.nnz > INT32_MAX) s = ADIA_ERR_OVERFLOW;   /* the peer counts in int */
    if (s == ADIA_OK) s = c.vt == ADIA_DOUBLE ? peer_build<double>(v, hack, p) : peer_build<float>(v, hack, p);
    r.build_ms = now_ms() - t0;
    double e1 = NAN, e2 = NAN;
    if (s == ADIA_OK) s = peer_check(c, p, 1.0, 0.0, 11, &e1);
    if (s == ADIA_OK) s = peer_check(c, p, -1.5, 0.5, 12, &e2);
    r.err = std::isnan(e1) || std::isnan(e2) ? NAN : fmax(e1, e2);
    if (s == ADIA_OK && !(r.err <= tolerance(c))) {
        r.status = "FAILED";
        r.note = error_note(c, r.err);
    } else if (s == ADIA_OK) {
        std::vector<double> x((size_t)v.cols * N_X);
        for (size_t k = 0; k < x.size(); k++) x[k] = adia_random_value(12345, (int64_t)k);
        s = put(p.x, x, c.vt);
        peer_call pc{&p, (size_t)v.cols * adia_value_size(c.vt)};
        adia_gpu_timing t;
        if (s == ADIA_OK) s = adia_gpu_time_call(peer_timed, &pc, c.o.runs, &t);
        if (s == ADIA_OK) {
            r.ms = t.median_ms;
            r.bytes = p.bytes();
            if (!t.graph) r.note = "timed as plain launches (no graph)";
        }
    }
    if (s != ADIA_OK) {
        r.status = "FAILED";
        r.note = s == ADIA_ERR_OVERFLOW ? "2^31 nonzeros or slots or more (the peer counts in int)"
                 : s == ADIA_ERR_CUDA && !cuda_error.empty() ? cuda_error : adia_last_error();
    }
    c.rows.push_back(r);
}

/* ----------------------------------------------------------- adia's side */

void bench_kernel(ctx &c, adia_format *F, const char *fmt, adia_gpu_kernel k, double build_ms)
{
    row r;
    r.who = fmt;
    r.build_ms = build_ms;
    adia_status s = adia_format_set_kernel(F, k);
    r.kernel = adia_gpu_kernel_name(k ? k : adia_format_kernel(F));
    double e1 = NAN, e2 = NAN;
    if (s == ADIA_OK) s = adia_gpu_check_spmv(F, c.A, 1.0, 0.0, 11, &e1);
    if (s == ADIA_OK) s = adia_gpu_check_spmv(F, c.A, -1.5, 0.5, 12, &e2);
    r.err = std::isnan(e1) || std::isnan(e2) ? NAN : fmax(e1, e2);
    adia_gpu_timing t;
    if (s == ADIA_OK && !(r.err <= tolerance(c))) r.status = "FAILED", r.note = error_note(c, r.err);
    else if (s == ADIA_OK && (s = adia_gpu_time_spmv(F, c.o.runs, &t)) == ADIA_OK) {
        r.ms = t.median_ms;
        r.bytes = adia_format_bytes(F);
        if (!t.graph) r.note = "timed as plain launches (no graph)";
    }
    if (s != ADIA_OK) {
        r.status = s == ADIA_ERR_UNSUPPORTED ? "skipped" : "FAILED";
        r.note = adia_last_error();
    }
    c.rows.push_back(r);
}

void bench_format(ctx &c, const char *fmt)
{
    adia_format *F = nullptr;
    double t0 = now_ms();
    adia_status s = adia_format_build(c.A, fmt, &c.params, c.vt, &F);
    double build_ms = now_ms() - t0;
    if (s == ADIA_OK) s = adia_format_upload(F);
    if (s != ADIA_OK) {
        row r;
        r.who = fmt;
        r.status = s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_NO_MEMORY || s == ADIA_ERR_OVERFLOW
                       ? "skipped" : "FAILED";
        r.note = adia_last_error();
        c.rows.push_back(r);
        adia_format_destroy(F);
        return;
    }
    unsigned kernels = adia_format_gpu_kernels(fmt);
    if (!kernels) bench_kernel(c, F, fmt, ADIA_KERNEL_AUTO, build_ms);
    for (int k = 1; k < 32; k++)
        if (kernels & (1u << k)) bench_kernel(c, F, fmt, (adia_gpu_kernel)k, build_ms);
    adia_format_destroy(F);
}

void bench_cusparse(ctx &c)
{
    for (int alg = 1; alg <= 2; alg++) {
        row r;
        r.who = "cusparse";
        r.kernel = alg == 1 ? "csr-alg1" : "csr-alg2";
        adia_gpu_timing t;
        if (adia_cusparse_time_spmv(c.A, c.vt, alg, c.o.runs, &r.err, &t) != ADIA_OK) {
            r.status = "FAILED";
            r.note = adia_last_error();
        } else if (!(r.err <= tolerance(c))) r.status = "FAILED", r.note = error_note(c, r.err);
        else r.ms = t.median_ms;
        c.rows.push_back(r);
    }
}

/* ---------------------------------------------------------------- output */

double best_of(const ctx &c, bool peer_side)
{
    double best = INFINITY;
    for (const row &r : c.rows)
        if (r.status == "ok" && (r.who == "spgpu-hdia") == peer_side && r.who != "cusparse" &&
            r.ms < best)
            best = r.ms;
    return best;
}

void print_table(const ctx &c, const adia_gpu_info &g, const char *date)
{
    double peer_ms = best_of(c, true);
    printf("# bench_peer_hdia %s -- %s (sm_%d%d, %d SMs), runtime %d\n", date, g.name, g.cc_major,
           g.cc_minor, g.sm_count, g.runtime_version);
    printf("# matrix %s: %d x %d, nnz %lld, %s, runs %d; B_read %.1f GB/s, floor %.4f ms, "
           "peer best %.4f ms\n", adia_matrix_name(c.A), adia_matrix_rows(c.A),
           adia_matrix_cols(c.A), (long long)adia_matrix_nnz(c.A), adia_value_type_name(c.vt),
           c.o.runs, c.bread, c.floor_ms, peer_ms);
    printf("| who | kernel | build ms | rel err | time ms | GB/s | t/floor | t/peer | status |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (const row &r : c.rows) {
        if (r.status != "ok") {
            printf("| %s | %s | | | | | | | %s: %.200s |\n", r.who.c_str(), r.kernel.c_str(),
                   r.status.c_str(), r.note.c_str());
            continue;
        }
        printf("| %s | %s | %.1f | %.1e | %.4f | %.0f | %.2f | %.2f | ok%s%s |\n", r.who.c_str(),
               r.kernel.c_str(), r.build_ms, r.err, r.ms,
               r.bytes ? (double)r.bytes / (r.ms * 1e6) : NAN, r.ms / c.floor_ms, r.ms / peer_ms,
               r.note.empty() ? "" : ": ", r.note.c_str());
    }
}

/* A JSON string value: the few characters a name may hold escaped. */
void json_str(FILE *f, const char *key, const std::string &v)
{
    fprintf(f, "\"%s\":\"", key);
    for (char ch : v) {
        if (ch == '"' || ch == '\\') fputc('\\', f);
        if ((unsigned char)ch >= 0x20) fputc(ch, f);
    }
    fputs("\",", f);
}

void json_num(FILE *f, const char *key, double v, const char *sep = ",")
{
    if (std::isfinite(v)) fprintf(f, "\"%s\":%.6g%s", key, v, sep);
    else fprintf(f, "\"%s\":null%s", key, sep);
}

/* One JSON line appended to path (the sweep's input). */
int append_json(const ctx &c, const adia_gpu_info &g, const char *date, const char *path)
{
    FILE *f = fopen(path, "a");
    if (!f) {
        perror(path);
        return 1;
    }
    fputc('{', f);
    json_str(f, "date", date);
    json_str(f, "device", g.name);
    json_str(f, "matrix", adia_matrix_name(c.A));
    json_str(f, "precision", adia_value_type_name(c.vt));
    fprintf(f, "\"rows\":%d,\"nnz\":%lld,\"runs\":%d,", adia_matrix_rows(c.A),
            (long long)adia_matrix_nnz(c.A), c.o.runs);
    json_num(f, "bread_gbps", c.bread);
    json_num(f, "floor_ms", c.floor_ms);
    fputs("\"results\":[", f);
    for (size_t i = 0; i < c.rows.size(); i++) {
        const row &r = c.rows[i];
        fputc('{', f);
        json_str(f, "who", r.who);
        json_str(f, "kernel", r.kernel);
        json_str(f, "status", r.status);
        json_num(f, "rel_err", r.err);
        json_num(f, "build_ms", r.build_ms);
        json_num(f, "time_ms", r.ms, "}");
        fputs(i + 1 < c.rows.size() ? "," : "", f);
    }
    fputs("]}\n", f);
    return fclose(f) == 0 ? 0 : 1;
}

adia_status run(ctx &c)
{
    adia_gpu_info g;
    TRY(adia_gpu_get_info(&g));
    TRY(adia_gpu_read_bandwidth(0, 20, &c.bread));
    double vs = (double)adia_value_size(c.vt);
    c.floor_ms = vs * ((double)adia_matrix_nnz(c.A) + adia_matrix_rows(c.A) + adia_matrix_cols(c.A)) /
                 (c.bread * 1e9) * 1e3;
    for (int hack : c.o.hacks) bench_peer(c, hack);
    if (c.o.formats) {
        std::string list = c.o.formats;
        for (size_t at = 0; at <= list.size();) {
            size_t end = list.find(',', at);
            if (end == std::string::npos) end = list.size();
            bench_format(c, list.substr(at, end - at).c_str());
            at = end + 1;
        }
    } else {
        for (int i = 0; i < adia_format_count(); i++) bench_format(c, adia_format_name_at(i));
    }
    bench_cusparse(c);
    char date[64];
    time_t now = time(nullptr);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm);
    print_table(c, g, date);
    if (c.o.json && append_json(c, g, date, c.o.json)) return ADIA_ERR_IO;
    return ADIA_OK;
}

} // namespace

int main(int argc, char **argv)
{
    ctx c;
    int rc = parse_args(argc, argv, c.o);
    if (rc) return rc;
    c.vt = c.o.single ? ADIA_FLOAT : ADIA_DOUBLE;
    if (c.o.params && adia_format_params_parse(&c.params, c.o.params) != ADIA_OK)
        return usage_error(adia_last_error());
    for (const char *f = c.o.formats; f && *f;) {   /* every name known before any work */
        const char *end = strchr(f, ',');
        std::string name = end ? std::string(f, end) : std::string(f);
        if (!adia_format_exists(name.c_str()))
            return usage_error(("unknown format '" + name + "'").c_str());
        f = end ? end + 1 : f + name.size();
    }
    int ndev = 0;
    if (adia_gpu_device_count(&ndev) != ADIA_OK || ndev == 0) {
        fprintf(stderr, "bench_peer_hdia: no CUDA device\n");
        return 77;
    }
    adia_status s = c.o.gen ? adia_matrix_generate(c.o.gen, &c.A) : adia_matrix_load(c.o.file, &c.A);
    if (s == ADIA_OK) s = run(c);
    if (s != ADIA_OK) fprintf(stderr, "bench_peer_hdia: %s\n", adia_last_error());
    int failed = 0;
    for (const row &r : c.rows) failed += r.status == "FAILED";
    adia_matrix_destroy(c.A);
    return s != ADIA_OK ? 1 : failed ? 1 : 0;
}
