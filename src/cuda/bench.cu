/* bench.cu -- the measuring core of `adia bench`: device info, a
 * streaming-read bandwidth kernel (B_read), checking a format's GPU SpMV
 * against the CPU reference, timing with CUDA events, and cuSPARSE's
 * cusparseSpMV (CSR ALG1 / ALG2) as the reference to beat. */
#include "gpu_common.h"

#include "cusparse_util.h"
#include <math.h>

#include <algorithm>
#include <vector>

namespace {

/* ------------------------------------------------------- device buffers */

/* A device allocation freed on scope exit (one cleanup path). */
struct dbuf {
    void *p = nullptr;
    ~dbuf() { cudaFree(p); }
    adia_status alloc(size_t bytes, const char *what)
    {
        return adia_cuda_check(cudaMalloc(&p, bytes ? bytes : 1), what);
    }
};

/* v[k] = adia's random vector for seed at k, rounded to vt's precision
 * so that the device and the double reference multiply the same numbers. */
void random_fill(std::vector<double> &v, uint64_t seed, adia_value_type vt)
{
    for (size_t k = 0; k < v.size(); k++) {
        double r = adia_random_value(seed, (int64_t)k);
        v[k] = vt == ADIA_FLOAT ? (double)(float)r : r;
    }
}

/* Host doubles v[n] to a device array of type vt. */
adia_status to_device(const double *v, int64_t n, adia_value_type vt, void *d)
{
    if (n == 0) return ADIA_OK;
    if (vt == ADIA_DOUBLE)
        return adia_cuda_check(cudaMemcpy(d, v, (size_t)n * 8, cudaMemcpyHostToDevice), "copy to device");
    std::vector<float> f(v, v + n);
    return adia_cuda_check(cudaMemcpy(d, f.data(), (size_t)n * 4, cudaMemcpyHostToDevice), "copy to device");
}

adia_status from_device(const void *d, int64_t n, adia_value_type vt, double *v)
{
    if (n == 0) return ADIA_OK;
    if (vt == ADIA_DOUBLE)
        return adia_cuda_check(cudaMemcpy(v, d, (size_t)n * 8, cudaMemcpyDeviceToHost), "copy from device");
    std::vector<float> f((size_t)n);
    ADIA_CUDA_TRY(cudaMemcpy(f.data(), d, (size_t)n * 4, cudaMemcpyDeviceToHost));
    std::copy(f.begin(), f.end(), v);
    return ADIA_OK;
}

/* What one timing needs: its own stream (capturable, unlike the legacy
 * default stream), two events, and the graph of one batch. */
struct timer {
    cudaStream_t st = nullptr;
    cudaEvent_t a = nullptr, b = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ~timer()
    {
        if (exec) cudaGraphExecDestroy(exec);
        if (graph) cudaGraphDestroy(graph);
        if (a) cudaEventDestroy(a);
        if (b) cudaEventDestroy(b);
        if (st) cudaStreamDestroy(st);
    }
    adia_status create()
    {
        ADIA_CUDA_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        ADIA_CUDA_TRY(cudaEventCreate(&a));
        return adia_cuda_check(cudaEventCreate(&b), "cudaEventCreate");
    }
    /* ms between a and b, after waiting for b */
    adia_status elapsed(float *ms)
    {
        ADIA_CUDA_TRY(cudaEventSynchronize(b));
        return adia_cuda_check(cudaEventElapsedTime(ms, a, b), "cudaEventElapsedTime");
    }
};

/* Capture `batch` calls of fn in a graph; false (errors cleared) when some
 * call cannot be captured -- the caller then launches them one by one. */
template <typename F>
bool capture_batch(timer &tm, F fn, int batch)
{
    if (cudaStreamBeginCapture(tm.st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    bool ok = true;
    for (int j = 0; j < batch && ok; j++) ok = fn(j, tm.st) == ADIA_OK;
    ok = cudaStreamEndCapture(tm.st, &tm.graph) == cudaSuccess && ok;
    ok = ok && cudaGraphInstantiate(&tm.exec, tm.graph, 0) == cudaSuccess;
    if (!ok) {
        cudaGetLastError();
        adia_clear_error();
    }
    return ok;
}

constexpr int BATCH_MAX = 100;   /* calls in a batch at most */
#define BATCH_TARGET_MS 0.5   /* one timed sample lasts about this long */

/* Per-call time of fn(i, stream).  Each sample times a batch of calls
 * issued back to back (a CUDA graph of them where capture works) and
 * divides by the batch: a solver calls SpMV back to back too, and timing
 * single launches adds the host's launch latency (2-4 us, 5% of a 60 us
 * kernel, half of a 6 us one) to every kernel alike.  The batch is sized
 * so that a sample lasts about BATCH_TARGET_MS; t->runs samples. */
template <typename F>
adia_status time_runs(F fn, int runs, adia_gpu_timing *t)
{
    if (runs < 1) return adia__error(ADIA_ERR_INVALID_ARG, "timing: runs = %d", runs);
    timer tm;
    ADIA_TRY(tm.create());
    for (int i = 0; i < 3; i++) ADIA_TRY(fn(i, tm.st));
    float ms = 0;
    ADIA_CUDA_TRY(cudaEventRecord(tm.a, tm.st));
    for (int i = 0; i < 4; i++) ADIA_TRY(fn(i, tm.st));
    ADIA_CUDA_TRY(cudaEventRecord(tm.b, tm.st));
    ADIA_TRY(tm.elapsed(&ms));
    double one = ms / 4;
    int batch = one * BATCH_MAX < BATCH_TARGET_MS ? BATCH_MAX : (int)ceil(BATCH_TARGET_MS / one);
    bool graph = capture_batch(tm, fn, batch);
    std::vector<double> per;
    for (int i = 0; i < runs; i++) {
        ADIA_CUDA_TRY(cudaEventRecord(tm.a, tm.st));
        if (graph) ADIA_CUDA_TRY(cudaGraphLaunch(tm.exec, tm.st));
        else
            for (int j = 0; j < batch; j++) ADIA_TRY(fn(j, tm.st));
        ADIA_CUDA_TRY(cudaEventRecord(tm.b, tm.st));
        ADIA_TRY(tm.elapsed(&ms));
        per.push_back(ms / batch);
    }
    adia__timing_summarize(per.data(), (int)per.size(), t);
    t->batch = batch;
    t->graph = graph;
    return ADIA_OK;
}

/* ------------------------------------------------------ read bandwidth */

__global__ void read_kernel(const int4 *__restrict__ p, size_t n, unsigned long long *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    int acc = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {  /* 4 loads in flight */
        int4 a = __ldcs(p + i), b = __ldcs(p + i + stride);
        int4 c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
        acc ^= c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        int4 a = __ldcs(p + i);
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x7fffffff) atomicAdd(out, 1ull);  /* keeps the loads alive */
}

/* ------------------------------------------------------------ cuSPARSE */

#define SP_TRY(call) ADIA_CUSPARSE_TRY(call)

struct sparse_ctx {
    cusparseHandle_t h = nullptr;
    cusparseSpMatDescr_t A = nullptr;
    cusparseDnVecDescr_t x = nullptr, y = nullptr;
    ~sparse_ctx()
    {
        if (x) cusparseDestroyDnVec(x);
        if (y) cusparseDestroyDnVec(y);
        if (A) cusparseDestroySpMat(A);
        if (h) cusparseDestroy(h);
    }
};

} // namespace

extern "C" adia_status adia_gpu_get_info(adia_gpu_info *info)
{
    if (!info) return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_get_info: info is NULL");
    memset(info, 0, sizeof *info);
    int dev;
    cudaDeviceProp p;
    ADIA_CUDA_TRY(cudaGetDevice(&dev));
    ADIA_CUDA_TRY(cudaGetDeviceProperties(&p, dev));
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->sm_count = p.multiProcessorCount;
    info->l2_bytes = p.l2CacheSize;
    info->global_bytes = (int64_t)p.totalGlobalMem;
    ADIA_CUDA_TRY(cudaDriverGetVersion(&info->driver_version));
    ADIA_CUDA_TRY(cudaRuntimeGetVersion(&info->runtime_version));
    return ADIA_OK;
}

extern "C" adia_status adia_gpu_read_bandwidth(size_t bytes, int runs, double *gbps)
{
    if (!gbps) return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_read_bandwidth: gbps is NULL");
    size_t free_b = 0, total = 0;
    ADIA_CUDA_TRY(cudaMemGetInfo(&free_b, &total));
    if (bytes == 0) bytes = (size_t)2 << 30;
    bytes = std::min(bytes, free_b / 4) & ~(size_t)4095;
    if (bytes < (1u << 20))
        return adia__error(ADIA_ERR_NO_MEMORY, "read bandwidth: only %zu bytes free", free_b);
    dbuf buf, out;
    ADIA_TRY(buf.alloc(bytes, "read-bandwidth buffer"));
    ADIA_TRY(out.alloc(8, "read-bandwidth result"));
    ADIA_CUDA_TRY(cudaMemset(buf.p, 0x5a, bytes));
    ADIA_CUDA_TRY(cudaMemset(out.p, 0, 8));
    int dev, sms;
    ADIA_CUDA_TRY(cudaGetDevice(&dev));
    ADIA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    size_t n = bytes / sizeof(int4);
    adia_gpu_timing t;
    ADIA_TRY(time_runs([&](int, cudaStream_t st) {
        read_kernel<<<sms * 8, 256, 0, st>>>((const int4 *)buf.p, n, (unsigned long long *)out.p);
        return adia__gpu_launch_check("read-bandwidth kernel");
    }, runs > 0 ? runs : 20, &t));
    *gbps = (double)bytes / (t.median_ms * 1e-3) / 1e9;
    return ADIA_OK;
}

extern "C" adia_status adia_gpu_check_spmv(adia_format *F, const adia_matrix *A, double alpha,
                                           double beta, uint64_t seed, double *err)
{
    if (!F || !A || !err) return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_check_spmv: NULL argument");
    int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    if (m != adia_format_rows(F) || n != adia_format_cols(F))
        return adia__error(ADIA_ERR_DIMENSION, "adia_gpu_check_spmv: matrix %dx%d, format %dx%d",
                          m, n, adia_format_rows(F), adia_format_cols(F));
    adia_value_type vt = adia_format_value_type(F);
    /* Values rounded to the format's precision first, so that both sides
     * multiply the same numbers. */
    std::vector<double> x((size_t)n), y0((size_t)m, NAN), ref((size_t)m), y((size_t)m);
    random_fill(x, seed, vt);
    if (beta != 0) random_fill(y0, ~seed, vt);   /* another stream than x's */
    ref = y0;
    ADIA_TRY(adia_matrix_spmv(A, alpha, x.data(), beta, ref.data()));
    size_t vs = adia_value_size(vt);
    dbuf dx, dy;
    ADIA_TRY(dx.alloc((size_t)n * vs, "check x"));
    ADIA_TRY(dy.alloc((size_t)m * vs, "check y"));
    ADIA_TRY(to_device(x.data(), n, vt, dx.p));
    ADIA_TRY(to_device(y0.data(), m, vt, dy.p));
    ADIA_TRY(adia_format_spmv_gpu(F, alpha, dx.p, beta, dy.p, NULL));
    ADIA_CUDA_TRY(cudaDeviceSynchronize());
    ADIA_TRY(from_device(dy.p, m, vt, y.data()));
    *err = adia_rel_err(y.data(), ref.data(), m);
    return ADIA_OK;
}

enum { N_X = 4 };  /* x vectors rotated while timing (L2 effects) */

/* x_host: cols values of F's type, copied to every x slot; NULL: random. */
extern "C" adia_status adia_gpu_time_spmv_x(adia_format *F, int runs, const void *x_host,
                                           void *y_host, adia_gpu_timing *t)
{
    if (!F || !t || (y_host && !x_host))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_time_spmv: NULL argument");
    ADIA_TRY(adia_format_upload(F));
    int32_t m = adia_format_rows(F), n = adia_format_cols(F);
    adia_value_type vt = adia_format_value_type(F);
    size_t vs = adia_value_size(vt);
    dbuf dx, dy;
    ADIA_TRY(dx.alloc((size_t)n * vs * N_X, "timing x"));
    ADIA_TRY(dy.alloc((size_t)m * vs, "timing y"));
    if (x_host) {
        for (int i = 0; i < N_X && n > 0; i++)
            ADIA_CUDA_TRY(cudaMemcpy((char *)dx.p + (size_t)i * n * vs, x_host, (size_t)n * vs,
                                     cudaMemcpyHostToDevice));
    } else {
        std::vector<double> x((size_t)n * N_X);
        random_fill(x, 12345, vt);
        ADIA_TRY(to_device(x.data(), (int64_t)n * N_X, vt, dx.p));
    }
    ADIA_TRY(time_runs([&](int i, cudaStream_t st) {
        const char *xp = (const char *)dx.p + (size_t)(i % N_X) * n * vs;
        return adia_format_spmv_gpu(F, 1.0, xp, 0.0, dy.p, st);
    }, runs, t));
    /* every timed call wrote F*x (all x slots hold x_host) */
    if (y_host && m > 0)
        ADIA_CUDA_TRY(cudaMemcpy(y_host, dy.p, (size_t)m * vs, cudaMemcpyDeviceToHost));
    return ADIA_OK;
}

extern "C" adia_status adia_gpu_time_spmv(adia_format *F, int runs, adia_gpu_timing *t)
{
    return adia_gpu_time_spmv_x(F, runs, NULL, NULL, t);
}

extern "C" adia_status adia_gpu_time_call(adia_gpu_call fn, void *ctx, int runs,
                                         adia_gpu_timing *t)
{
    if (!fn || !t) return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_time_call: NULL argument");
    return time_runs([&](int i, cudaStream_t st) { return fn(ctx, i, (void *)st); }, runs, t);
}

extern "C" adia_status adia_cusparse_time_spmv(const adia_matrix *A, adia_value_type vt, int alg,
                                               int runs, double *err, adia_gpu_timing *t)
{
    if (!A || !err || !t || (alg != 1 && alg != 2))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_cusparse_time_spmv: bad argument (alg %d)", alg);
    adia_csr_view v;
    ADIA_TRY(adia_matrix_csr(A, &v));
    bool i64 = v.nnz > INT32_MAX;
    size_t is = i64 ? 8 : 4, vs = adia_value_size(vt);
    /* Same index type for row offsets and columns (what every algorithm takes). */
    std::vector<char> rp((size_t)(v.rows + 1) * is), ci((size_t)v.nnz * is);
    for (int64_t i = 0; i <= v.rows; i++)
        if (i64) ((int64_t *)rp.data())[i] = v.rowptr[i]; else ((int32_t *)rp.data())[i] = (int32_t)v.rowptr[i];
    for (int64_t k = 0; k < v.nnz; k++)
        if (i64) ((int64_t *)ci.data())[k] = v.colind[k]; else ((int32_t *)ci.data())[k] = v.colind[k];
    dbuf drp, dci, dv, dx, dy, work;
    ADIA_TRY(drp.alloc(rp.size(), "cuSPARSE row offsets"));
    ADIA_TRY(dci.alloc(ci.size(), "cuSPARSE columns"));
    ADIA_TRY(dv.alloc((size_t)v.nnz * vs, "cuSPARSE values"));
    ADIA_TRY(dx.alloc((size_t)v.cols * vs * N_X, "cuSPARSE x"));
    ADIA_TRY(dy.alloc((size_t)v.rows * vs, "cuSPARSE y"));
    ADIA_CUDA_TRY(cudaMemcpy(drp.p, rp.data(), rp.size(), cudaMemcpyHostToDevice));
    ADIA_CUDA_TRY(cudaMemcpy(dci.p, ci.data(), ci.size(), cudaMemcpyHostToDevice));
    ADIA_TRY(to_device(v.values, v.nnz, vt, dv.p));
    std::vector<double> x((size_t)v.cols * N_X), ref((size_t)v.rows), y((size_t)v.rows);
    random_fill(x, 777, vt);
    ADIA_TRY(to_device(x.data(), (int64_t)v.cols * N_X, vt, dx.p));

    cudaDataType dt = vt == ADIA_DOUBLE ? CUDA_R_64F : CUDA_R_32F;
    cusparseIndexType_t it = i64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    cusparseSpMVAlg_t a = alg == 1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
    sparse_ctx c;
    SP_TRY(cusparseCreate(&c.h));
    SP_TRY(cusparseCreateCsr(&c.A, v.rows, v.cols, v.nnz, drp.p, dci.p, dv.p, it, it,
                             CUSPARSE_INDEX_BASE_ZERO, dt));
    SP_TRY(cusparseCreateDnVec(&c.x, v.cols, dx.p, dt));
    SP_TRY(cusparseCreateDnVec(&c.y, v.rows, dy.p, dt));
    double ad = 1, bd = 0;
    float af = 1, bf = 0;
    const void *al = vt == ADIA_DOUBLE ? (const void *)&ad : (const void *)&af;
    const void *be = vt == ADIA_DOUBLE ? (const void *)&bd : (const void *)&bf;
    size_t wbytes = 0;
    SP_TRY(cusparseSpMV_bufferSize(c.h, CUSPARSE_OPERATION_NON_TRANSPOSE, al, c.A, c.x, be, c.y,
                                   dt, a, &wbytes));
    ADIA_TRY(work.alloc(wbytes, "cuSPARSE workspace"));   /* once, outside the timed loop */
    auto spmv = [&](int i, cudaStream_t st) {
        SP_TRY(cusparseSetStream(c.h, st));
        SP_TRY(cusparseDnVecSetValues(c.x, (char *)dx.p + (size_t)(i % N_X) * v.cols * vs));
        return adia_cusparse_check(cusparseSpMV(c.h, CUSPARSE_OPERATION_NON_TRANSPOSE, al, c.A, c.x, be,
                                     c.y, dt, a, work.p), "cusparseSpMV");
    };
    ADIA_TRY(spmv(0, 0));
    ADIA_CUDA_TRY(cudaDeviceSynchronize());
    ADIA_TRY(from_device(dy.p, v.rows, vt, y.data()));
    ADIA_TRY(adia_matrix_spmv(A, 1.0, x.data(), 0.0, ref.data()));
    *err = adia_rel_err(y.data(), ref.data(), v.rows);
    return time_runs(spmv, runs, t);
}
