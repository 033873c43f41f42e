/* plan_upload.cu -- a GPU plan of a host matrix made on the device: the CSR
 * uploaded once, in the smallest layout the device planner reads (32-bit
 * row pointers where the nonzeros fit, values in the plan's type), then
 * analysed and converted there (adia__plan_device_core).  The host path
 * analysed (0.26-0.33 s for 4.1 M rows), built on the host (0.49-0.55 s)
 * and uploaded each candidate: a pass over the matrix on the host costs
 * about what 10-20 SpMVs cost on the GPU (issue 28).
 *
 * Staging: a plain cudaMemcpy from pageable memory goes through the
 * driver's own pinned bounce buffer; ADIA_UPLOAD=pinned stages through two
 * pinned buffers of our own instead (the copy into one overlaps the DMA of
 * the other).  Which pays depends on the host (its memcpy bandwidth, the
 * PCIe link, the cost of pinning): pageable stays the default until a
 * measurement (bench/setup-e2e.py, both settings) says otherwise. */
#include "plan_device.h"
#include "../cuda/cuda_util.h"

#include <stdlib.h>
#include <string.h>
#include <type_traits>

namespace {

/* Bytes per staging chunk (two of them when pinned); ADIA_UPLOAD_CHUNK
 * sets another (bytes, a multiple of 8 from 4096: for measuring the
 * pipeline, and for tests to cross many chunks with a small matrix). */
constexpr size_t CHUNK = (size_t)32 << 20;

struct stager {
    size_t chunk = CHUNK;
    bool pinned = false;
    void *buf[2] = {nullptr, nullptr};
    cudaStream_t stream = nullptr;
    cudaEvent_t done[2] = {nullptr, nullptr};
    int64_t bytes = 0;   /* uploaded so far */
    ~stager()
    {
        if (stream) cudaStreamSynchronize(stream);
        for (int k = 0; k < 2; k++) {
            if (done[k]) cudaEventDestroy(done[k]);
            if (pinned) cudaFreeHost(buf[k]);
            else free(buf[k]);
        }
        if (stream) cudaStreamDestroy(stream);
    }
};

/* ADIA_UPLOAD: "pinned" or "pageable" (unset: pageable); anything else is
 * the caller's error, said, not a silent default. */
adia_status upload_mode(bool *pinned)
{
    const char *v = getenv("ADIA_UPLOAD");
    *pinned = v && !strcmp(v, "pinned");
    if (v && v[0] && !*pinned && strcmp(v, "pageable"))
        return adia__error(ADIA_ERR_INVALID_ARG, "ADIA_UPLOAD=%s: pinned or pageable", v);
    return ADIA_OK;
}

adia_status stager_init(stager &st, bool pinned)
{
    st.pinned = pinned;
    if (const char *v = getenv("ADIA_UPLOAD_CHUNK")) {
        char *end = nullptr;
        const long long c = strtoll(v, &end, 10);
        if (!v[0] || *end || c < 4096 || c % 8 || c > ((long long)1 << 34))
            return adia__error(ADIA_ERR_INVALID_ARG, "ADIA_UPLOAD_CHUNK=%s: bytes, a multiple "
                              "of 8 in 4096..2^34", v);
        st.chunk = (size_t)c;
    }
    for (int k = 0; k < (pinned ? 2 : 1); k++) {
        if (pinned)
            ADIA_TRY(adia_cuda_check(cudaHostAlloc(&st.buf[k], st.chunk, cudaHostAllocDefault),
                                     "upload: pinned staging buffer"));
        else if (!(st.buf[k] = malloc(st.chunk)))
            return adia__error(ADIA_ERR_NO_MEMORY, "upload: staging buffer of %zu bytes",
                               st.chunk);
    }
    if (pinned) {
        ADIA_TRY(adia_cuda_check(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking),
                                 "upload: stream"));
        for (int k = 0; k < 2; k++)
            ADIA_TRY(adia_cuda_check(cudaEventCreateWithFlags(&st.done[k],
                                                              cudaEventDisableTiming),
                                     "upload: event"));
    }
    return ADIA_OK;
}

/* The staging kind of a type (plan_stage.c). */
template <typename T> constexpr int kind()
{
    return std::is_same<T, double>::value    ? ADIA_STAGE_F64
           : std::is_same<T, float>::value   ? ADIA_STAGE_F32
           : std::is_same<T, int64_t>::value ? ADIA_STAGE_I64
                                             : ADIA_STAGE_I32;
}

/* dst[0..n) = (Out)src[0..n) on the device.  Pageable with Out == In: one
 * cudaMemcpy straight from src; else chunk by chunk through the staging
 * buffer(s), converting on the way. */
template <typename In, typename Out>
adia_status put(stager &st, Out *dst, const In *src, int64_t n, const char *what)
{
    if (n <= 0) return ADIA_OK;
    st.bytes += n * (int64_t)sizeof(Out);
    if (!st.pinned && std::is_same<In, Out>::value)
        return adia_cuda_check(cudaMemcpy(dst, src, (size_t)n * sizeof(Out),
                                          cudaMemcpyHostToDevice), what);
    const int64_t per = (int64_t)(st.chunk / sizeof(Out));
    for (int64_t at = 0, k = 0; at < n; at += per, k++) {
        const int64_t m = n - at < per ? n - at : per;
        const int b = st.pinned ? (int)(k & 1) : 0;
        /* the buffer's previous copy must have left it */
        if (st.pinned) ADIA_TRY(adia_cuda_check(cudaEventSynchronize(st.done[b]), what));
        Out *tmp = (Out *)st.buf[b];
        adia__plan_stage(tmp, kind<Out>(), src + at, kind<In>(), m);   /* threaded */
        if (st.pinned) {
            ADIA_TRY(adia_cuda_check(cudaMemcpyAsync(dst + at, tmp, (size_t)m * sizeof(Out),
                                                     cudaMemcpyHostToDevice, st.stream), what));
            ADIA_TRY(adia_cuda_check(cudaEventRecord(st.done[b], st.stream), what));
        } else {
            ADIA_TRY(adia_cuda_check(cudaMemcpy(dst + at, tmp, (size_t)m * sizeof(Out),
                                                cudaMemcpyHostToDevice), what));
        }
    }
    return ADIA_OK;
}

/* The device copy of a host CSR, freed with it. */
struct device_copy {
    adia_device_csr d = {};
    void *mem[3] = {nullptr, nullptr, nullptr};
    ~device_copy()
    {
        for (void *p : mem) cudaFree(p);
    }
};

adia_status upload(const adia_csr &A, adia_value_type vt, bool pinned, device_copy &c,
                   int64_t *bytes)
{
    const bool narrow = A.nnz <= INT32_MAX;   /* 32-bit row pointers: 4 bytes a row less */
    const size_t rp = narrow ? 4 : 8, vs = adia_value_size(vt);
    const int64_t rows = A.rows, nnz = A.nnz;
    ADIA_TRY(adia__gpu_check_free((rows + 1) * (int64_t)rp + nnz * (int64_t)(4 + vs),
                                  "upload of the CSR for planning on the GPU"));
    ADIA_TRY(adia_cuda_check(cudaMalloc(&c.mem[0], (size_t)(rows + 1) * rp), "upload: rowptr"));
    ADIA_TRY(adia_cuda_check(cudaMalloc(&c.mem[1], (size_t)(nnz > 0 ? nnz : 1) * 4),
                             "upload: colind"));
    ADIA_TRY(adia_cuda_check(cudaMalloc(&c.mem[2], (size_t)(nnz > 0 ? nnz : 1) * vs),
                             "upload: values"));
    stager st;
    ADIA_TRY(stager_init(st, pinned));
    if (narrow)
        ADIA_TRY(put(st, (int32_t *)c.mem[0], A.rowptr, rows + 1, "upload: rowptr"));
    else
        ADIA_TRY(put(st, (int64_t *)c.mem[0], A.rowptr, rows + 1, "upload: rowptr"));
    ADIA_TRY(put(st, (int32_t *)c.mem[1], A.colind, nnz, "upload: colind"));
    const double *v = (const double *)A.values;   /* the master CSR: double */
    if (vt == ADIA_FLOAT) ADIA_TRY(put(st, (float *)c.mem[2], v, nnz, "upload: values"));
    else ADIA_TRY(put(st, (double *)c.mem[2], v, nnz, "upload: values"));
    if (st.stream) ADIA_TRY(adia_cuda_check(cudaStreamSynchronize(st.stream), "upload"));
    c.d = adia_device_csr{A.rows, A.cols, A.nnz, c.mem[0], narrow ? 32 : 64,
                          (const int32_t *)c.mem[1], c.mem[2], vt};
    *bytes = st.bytes;
    return ADIA_OK;
}

} // namespace

extern "C" adia_status adia__plan_create_from_host(const adia_matrix *A, const plan_hints *h,
                                                   adia_plan **plan, char *why, size_t len)
{
    *plan = nullptr;
    why[0] = '\0';
    bool pinned;
    ADIA_TRY(upload_mode(&pinned));
    const double t0 = adia__now_ms();
    device_copy c;
    int64_t bytes = 0;
    adia_status s = upload(A->csr, h->vtype, pinned, c, &bytes);
    if (s == ADIA_ERR_NO_MEMORY) {   /* the host path builds one format at a time, smaller */
        snprintf(why, len, "no room on the GPU for the CSR's upload (%.160s)", adia_last_error());
        adia_clear_error();
        return ADIA_OK;
    }
    ADIA_TRY(s);
    const double t_up = adia__now_ms();
    ADIA_TRY(adia__plan_device_core(&c.d, *h, A->name, plan, why, len));
    if (!*plan) return ADIA_OK;
    adia_plan *P = *plan;
    adia__plan_update_hash_device(P, &c.d);   /* the CSR is on the device now: one pass */
    P->upload_ms = t_up - t0;
    P->upload_bytes = bytes;
    P->upload_how = pinned ? "pinned" : "pageable";
    adia__plan_note(P, "from a host CSR uploaded once (%lld bytes, %s, %.1f ms: %.1f GB/s): "
                    "analysed and built on the GPU", (long long)bytes, P->upload_how, t_up - t0,
                    t_up > t0 ? bytes / ((t_up - t0) * 1e6) : 0.0);
    return ADIA_OK;
}
