/* plan_device.cu -- GPU plans from matrices already in device memory,
 * without a host round trip of the matrix on the way in:
 * adia_plan_create_device_csr (CuPy's, cuSPARSE's, an assembly on the
 * device) and adia_plan_create_device_dia (diagonals, as
 * adia_stencil_fill_device makes them).
 *
 * The choice runs on what the GPU build measures, not on the host's
 * features: the number of distinct diagonals (the build's first phase)
 * gives DIA's storage exactly (one full-length row of values per
 * diagonal); when that is close to the nonzeros (stencils, bands) DIA is
 * built -- no offset lookups at all -- otherwise BRCSD-II (B-row pieces
 * keep only the diagonals they hold).  A matrix whose BRCSD-II still
 * stores more than MAX_FILL slots per nonzero is not a diagonal matrix: it
 * is copied to the host once and planned there (row formats). */
#include "plan_internal.h"
#include "../cuda/cuda_util.h"
#include "../cuda/diag_build.h"

#include <math.h>
#include <vector>

namespace {

/* DIA when its slots are at most this many per nonzero. */
constexpr double DIA_FILL = 1.1;
/* Above this many slots per nonzero, not a diagonal matrix. */
constexpr double MAX_FILL = 3.0;

constexpr int THREADS = 256;

template <typename In, typename Out>
__global__ void widen(const In *in, int64_t n, Out *out)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (Out)in[i];
}

/* A in the build's layout (int64 row pointers, double values): A's own
 * arrays where they are that already, else widened copies owned here. */
struct canonical {
    adia_gpu_csr A = {};
    void *rowptr = nullptr, *values = nullptr;
    ~canonical()
    {
        cudaFree(rowptr);
        cudaFree(values);
    }
};

template <typename In, typename Out>
adia_status widened(const In *in, int64_t n, void **owned, const char *what)
{
    ADIA_TRY(adia_cuda_check(cudaMalloc(owned, (size_t)(n > 0 ? n : 1) * sizeof(Out)), what));
    if (n > 0) {
        int64_t blocks = (n + THREADS - 1) / THREADS;
        widen<In, Out><<<(unsigned)(blocks < 4096 ? blocks : 4096), THREADS>>>(in, n, (Out *)*owned);
        ADIA_TRY(adia_cuda_check(cudaGetLastError(), what));
    }
    return ADIA_OK;
}

adia_status check_args(const adia_device_csr *A, adia_plan **plan)
{
#define BAD(...) return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_create_device_csr: " __VA_ARGS__)
    if (!plan) BAD("plan is NULL");
    *plan = nullptr;
    if (!A) BAD("the matrix is NULL");
    if (A->rows < 0 || A->cols < 0 || A->nnz < 0)
        BAD("negative size %d x %d, %lld nonzeros", (int)A->rows, (int)A->cols, (long long)A->nnz);
    if (A->rowptr_bits != 32 && A->rowptr_bits != 64)
        BAD("rowptr_bits = %d: row pointers are 32 or 64 bits", A->rowptr_bits);
    if (A->rowptr_bits == 32 && A->nnz > INT32_MAX)
        BAD("%lld nonzeros do not fit 32-bit row pointers", (long long)A->nnz);
    if (A->values_type != ADIA_DOUBLE && A->values_type != ADIA_FLOAT)
        BAD("values_type %d: double or float", (int)A->values_type);
    if (!A->rowptr || (A->nnz > 0 && (!A->colind || !A->values)))
        BAD("NULL device array (rowptr %p, colind %p, values %p)", A->rowptr,
            (const void *)A->colind, A->values);
    return ADIA_OK;
#undef BAD
}

adia_status canonicalize(const adia_device_csr *in, canonical &c)
{
    c.A = {in->rows, in->cols, in->nnz, (const int64_t *)in->rowptr, in->colind,
           (const double *)in->values};
    if (in->rowptr_bits == 32) {
        ADIA_TRY((widened<int32_t, int64_t>((const int32_t *)in->rowptr, (int64_t)in->rows + 1,
                                            &c.rowptr, "device CSR: 64-bit row pointers")));
        c.A.rowptr = (const int64_t *)c.rowptr;
    }
    if (in->values_type == ADIA_FLOAT) {
        ADIA_TRY((widened<float, double>((const float *)in->values, in->nnz, &c.values,
                                         "device CSR: double values")));
        c.A.values = (const double *)c.values;
    }
    return ADIA_OK;
}

/* Not a diagonal matrix: the CSR to the host once, the host planner. */
adia_status host_plan(const adia_gpu_csr &A, const adia_plan_hints *hints, const char *why,
                      adia_plan **out)
{
    std::vector<int64_t> rowptr((size_t)A.rows + 1);
    std::vector<int32_t> colind((size_t)A.nnz);
    std::vector<double> values((size_t)A.nnz);
    ADIA_CUDA_TRY(cudaMemcpy(rowptr.data(), A.rowptr, rowptr.size() * 8, cudaMemcpyDeviceToHost));
    ADIA_CUDA_TRY(cudaMemcpy(colind.data(), A.colind, colind.size() * 4, cudaMemcpyDeviceToHost));
    ADIA_CUDA_TRY(cudaMemcpy(values.data(), A.values, values.size() * 8, cudaMemcpyDeviceToHost));
    adia_matrix *M = nullptr;
    ADIA_TRY(adia_matrix_create_csr(A.rows, A.cols, A.nnz, rowptr.data(), colind.data(),
                                    values.data(), ADIA_DOUBLE, &M));
    adia_status s = adia_plan_create(M, hints, out);
    adia_matrix_destroy(M);
    if (s == ADIA_OK) adia__plan_note(*out, "%s", why);
    return s;
}

/* Stored slots of a diagonal format built here. */
int64_t slots(const adia_format *F)
{
    const adia_diag *D = (const adia_diag *)F->impl;
    return D->piece_data[D->n_pieces];
}

/* F, built on the GPU since t0, as the plan: for many products the
 * generated kernel (1.15-2.5x the generic one on every diagonal matrix
 * measured, bench/GPU-NOTES.md) is worth its compile -- where the
 * generator declines, the generic kernel stays and the plan says why.
 * *kernel_ms: the kernel's choice. */
adia_status adopt_device(adia_format *F, const plan_hints &h, const char *name, double t0,
                         double *kernel_ms, adia_plan **plan)
{
    char note[320] = "";
    const double t = adia__now_ms();
    if (h.calls >= ADIA_PLAN_MEASURE_CALLS &&
        adia_format_set_kernel(F, ADIA_KERNEL_GENERATED) != ADIA_OK)
        snprintf(note, sizeof note, "generic kernel: %.280s", adia_last_error());
    *kernel_ms = adia__now_ms() - t;
    ADIA_TRY(adia__plan_adopt(F, &h, name, plan));
    if (note[0]) adia__plan_note(*plan, "%s", note);
    (*plan)->build_ms = adia__now_ms() - t0;
    (*plan)->from_device = 1;
    return ADIA_OK;
}

} // namespace

extern "C" adia_status adia_plan_create_device_csr(const adia_device_csr *A,
                                                   const adia_plan_hints *hints,
                                                   adia_plan **plan)
{
    ADIA_TRY(check_args(A, plan));
    adia_plan_hints gpu = hints ? *hints : adia_plan_hints{};
    gpu.device = 1;   /* the matrix is on the device: so is the plan */
    plan_hints h;
    ADIA_TRY(adia__plan_resolve_hints(&gpu, &h));
    if (!h.device)
        return adia__error(ADIA_ERR_NO_DEVICE, "adia_plan_create_device_csr: no CUDA device");
    const double t0 = adia__now_ms();
    canonical c;
    ADIA_TRY(canonicalize(A, c));
    const bool fixed = h.chooser == ADIA_CHOOSE_FIXED;
    const double nnz = A->nnz > 0 ? (double)A->nnz : 1;
    int64_t n_diag = -1;
    const char *name = h.format;
    if (!fixed) {
        ADIA_TRY(adia__gpu_count_diagonals(&c.A, &n_diag));
        name = (double)n_diag * A->rows <= DIA_FILL * nnz ? "dia" : "brcsd2";
    }
    const double t_count = adia__now_ms();
    adia_format *F = nullptr;
    adia_gpu_build_info bi;
    ADIA_TRY(adia__format_build_device(name, &c.A, &h.params, h.vtype, &F, &bi));
    const double t_build = adia__now_ms();
    if (!fixed && slots(F) > MAX_FILL * nnz) {
        char why[256];
        snprintf(why, sizeof why, "a CSR in device memory, not a diagonal matrix (%lld diagonals, "
                 "brcsd2 would store %.1f slots per nonzero): planned from a host copy",
                 (long long)n_diag, slots(F) / nnz);
        adia_format_destroy(F);
        return host_plan(c.A, &gpu, why, plan);
    }
    double kernel_ms;
    ADIA_TRY(adopt_device(F, h, "device CSR", t0, &kernel_ms, plan));
    adia__plan_note(*plan, "times (ms): widening + diagonal count %.1f, build %.1f (GPU analysis "
                    "%.1f, host structure %.1f, GPU fill %.1f, data to the host %.1f), kernel "
                    "%.1f", t_count - t0, t_build - t_count, bi.analyze_ms, bi.host_ms,
                    bi.build_ms, bi.download_ms, kernel_ms);
    if (fixed)
        adia__plan_note(*plan, "built on the GPU from a CSR in device memory, as asked (%s)", name);
    else
        adia__plan_note(*plan, "built on the GPU from a CSR in device memory: %lld diagonals, dia "
                        "would store %.2f slots per nonzero (chosen at <= %.1f), %s stores %.2f",
                        (long long)n_diag, (double)n_diag * A->rows / nnz, DIA_FILL, name,
                        slots(F) / nnz);
    return ADIA_OK;
}

/* ------------------------------------------------- from diagonals */

namespace {

/* out[t] = in[t] as Out for slot t = k rows + i, 0 where column i + o_k
 * is outside [0, cols) (DIA's rule: such slots hold 0 and are never read
 * as x); the nonzeros inside counted into *count.  in may be out. */
template <typename In, typename Out>
__global__ void take_diagonals(const In *in, Out *out, int32_t rows, int32_t cols,
                               const int32_t *off, int ndiag, unsigned long long *count)
{
    unsigned long long mine = 0;
    const int64_t total = (int64_t)rows * ndiag;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int k = (int)(t / rows);
        const int64_t c = t - (int64_t)k * rows + off[k];
        const Out v = c >= 0 && c < cols ? (Out)in[t] : Out(0);
        out[t] = v;
        mine += v != Out(0);
    }
    for (int d = 16; d; d >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, d);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(count, mine);
}

adia_status check_dia(const adia_device_dia *A, adia_plan **plan)
{
#define BAD(...) return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_create_device_dia: " __VA_ARGS__)
    if (!plan) BAD("plan is NULL");
    *plan = nullptr;
    if (!A) BAD("the matrix is NULL");
    if (A->rows < 0 || A->cols < 0 || A->ndiag < 0)
        BAD("negative size %d x %d, %d diagonals", (int)A->rows, (int)A->cols, (int)A->ndiag);
    if (A->values_type != ADIA_DOUBLE && A->values_type != ADIA_FLOAT)
        BAD("values_type %d: double or float", (int)A->values_type);
    if (A->ndiag > 0 && (!A->offsets || (A->rows > 0 && !A->values)))
        BAD("NULL array (offsets %p, values %p)", (const void *)A->offsets, A->values);
    for (int k = 0; k < A->ndiag; k++) {
        const int64_t o = A->offsets[k];
        if (o <= -(int64_t)A->rows || o >= A->cols)
            BAD("offset %lld (diagonal %d) has no entry in a %d x %d matrix", (long long)o, k,
                (int)A->rows, (int)A->cols);
        if (k > 0 && o <= A->offsets[k - 1])
            BAD("offsets not ascending: %lld after %lld (diagonal %d)", (long long)o,
                (long long)A->offsets[k - 1], k);
    }
    return ADIA_OK;
#undef BAD
}

/* The data of A in vt on the device, outside slots zeroed, into *data
 * (A's own array when adopted); its nonzeros into *nnz. */
adia_status take_data(const adia_device_dia *A, adia_value_type vt, void **data, int64_t *nnz)
{
    const int64_t slots = (int64_t)A->rows * A->ndiag;
    const size_t vs = adia_value_size(vt);
    *data = A->adopt ? A->values : nullptr;
    if (!A->adopt) {
        ADIA_TRY(adia__gpu_check_free(slots * (int64_t)vs, "adia_plan_create_device_dia: a copy "
                                     "of the diagonals"));
        ADIA_TRY(adia_cuda_check(cudaMalloc(data, (size_t)(slots > 0 ? slots : 1) * vs),
                                 "adia_plan_create_device_dia: the diagonals' copy"));
    }
    std::vector<int32_t> off(A->offsets, A->offsets + A->ndiag);
    int32_t *d_off = nullptr;
    unsigned long long *d_count = nullptr, count = 0;
    adia_status s = adia_cuda_check(cudaMalloc(&d_off, off.size() * 4 + 4), "diagonal offsets");
    if (s == ADIA_OK) s = adia_cuda_check(cudaMalloc(&d_count, sizeof *d_count), "nonzero count");
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(d_off, off.data(), off.size() * 4, cudaMemcpyHostToDevice),
                            "diagonal offsets");
    if (s == ADIA_OK) s = adia_cuda_check(cudaMemset(d_count, 0, sizeof *d_count), "nonzero count");
    if (s == ADIA_OK && slots > 0) {
        const int64_t blocks = (slots + THREADS - 1) / THREADS;
        const unsigned g = (unsigned)(blocks < 65536 ? blocks : 65536);
        const bool in_d = A->values_type == ADIA_DOUBLE, out_d = vt == ADIA_DOUBLE;
        if (in_d && out_d)
            take_diagonals<<<g, THREADS>>>((const double *)A->values, (double *)*data, A->rows,
                                           A->cols, d_off, A->ndiag, d_count);
        else if (in_d)
            take_diagonals<<<g, THREADS>>>((const double *)A->values, (float *)*data, A->rows,
                                           A->cols, d_off, A->ndiag, d_count);
        else if (out_d)
            take_diagonals<<<g, THREADS>>>((const float *)A->values, (double *)*data, A->rows,
                                           A->cols, d_off, A->ndiag, d_count);
        else
            take_diagonals<<<g, THREADS>>>((const float *)A->values, (float *)*data, A->rows,
                                           A->cols, d_off, A->ndiag, d_count);
        s = adia_cuda_check(cudaGetLastError(), "adia_plan_create_device_dia: taking the diagonals");
    }
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost),
                            "adia_plan_create_device_dia: taking the diagonals");
    cudaFree(d_off);
    cudaFree(d_count);
    *nnz = (int64_t)count;
    if (s != ADIA_OK) {
        cudaFree(*data);
        *data = nullptr;
    }
    return s;
}

/* DIA's host structure (one piece, one group: the offsets) for data on
 * the device, which the format takes over (freed on failure too). */
adia_status dia_format(const adia_device_dia *A, const plan_hints &h, void *data, int64_t nnz,
                       adia_format **out)
{
    adia_format *F = nullptr;
    adia_status s = adia__format_new("dia", &h.params, h.vtype, A->rows, A->cols, nnz, &F);
    adia_diag *D = s == ADIA_OK ? (adia_diag *)adia__calloc(1, sizeof *D, "diagonal format")
                                : nullptr;
    adia_diag_partition part = {};
    if (s == ADIA_OK && !D) s = ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        D->rows = A->rows;
        D->cols = A->cols;
        D->vtype = h.vtype;
        D->nnz = nnz;
        F->impl = D;                     /* owned by F from here */
        F->host_stale = 1;               /* the data stays on the device */
        part.n_pieces = 1;
        part.piece_start = (int32_t *)adia__calloc(2, sizeof(int32_t), "DIA piece");
        part.list_start = (int64_t *)adia__calloc(2, sizeof(int64_t), "DIA offsets");
        part.list = (int32_t *)adia__calloc((size_t)A->ndiag + 1, sizeof(int32_t), "DIA offsets");
        s = part.piece_start && part.list_start && part.list ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    }
    if (s == ADIA_OK) {
        part.piece_start[1] = A->rows;
        part.list_start[1] = A->ndiag;
        for (int k = 0; k < A->ndiag; k++) part.list[k] = (int32_t)A->offsets[k];
        s = adia__diag_structure(D, &part);
    }
    adia__diag_partition_free(&part);
    if (s == ADIA_OK) {
        s = adia__gpu_diag_adopt(D, h.vtype, &F->params, data, &F->dev);   /* takes data */
        data = nullptr;
    }
    cudaFree(data);
    if (s != ADIA_OK) {
        adia_format_destroy(F);
        return s;
    }
    *out = F;
    return ADIA_OK;
}

adia_status dia_hints(const adia_device_dia *A, const adia_plan_hints *hints, plan_hints &h)
{
    adia_plan_hints gpu = hints ? *hints : adia_plan_hints{};
    gpu.device = 1;   /* the matrix is on the device: so is the plan */
    ADIA_TRY(adia__plan_resolve_hints(&gpu, &h));
    if (!h.device)
        return adia__error(ADIA_ERR_NO_DEVICE, "adia_plan_create_device_dia: no CUDA device");
    if (h.chooser == ADIA_CHOOSE_FIXED && (!h.format || strcmp(h.format, "dia")))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_create_device_dia: format %s asked "
                          "for; diagonals given on the device make dia", h.format ? h.format : "(none)");
    if (A->adopt && A->values_type != h.vtype)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_create_device_dia: adopted values are "
                          "%s, the plan's type %s (copy them: adopt 0)",
                          adia_value_type_name(A->values_type), adia_value_type_name(h.vtype));
    return ADIA_OK;
}

} // namespace

extern "C" adia_status adia_plan_create_device_dia(const adia_device_dia *A,
                                                   const adia_plan_hints *hints,
                                                   adia_plan **plan)
{
    adia_status s = check_dia(A, plan);
    plan_hints h;
    if (s == ADIA_OK) s = dia_hints(A, hints, h);
    if (s != ADIA_OK) {
        if (A && A->adopt) cudaFree(A->values);   /* taken over, as promised */
        return s;
    }
    const double t0 = adia__now_ms();
    void *data = nullptr;
    int64_t nnz = 0;
    adia_format *F = nullptr;
    ADIA_TRY(take_data(A, h.vtype, &data, &nnz));   /* frees an adopted array on failure */
    const double t_take = adia__now_ms();
    ADIA_TRY(dia_format(A, h, data, nnz, &F));
    double kernel_ms;
    ADIA_TRY(adopt_device(F, h, "device DIA", t0, &kernel_ms, plan));
    adia__plan_note(*plan, "dia from %d diagonals in device memory (%s), %lld nonzeros; times "
                    "(ms): %s %.1f, kernel %.1f", (int)A->ndiag, A->adopt ? "taken over" : "copied",
                    (long long)nnz, A->adopt ? "outside slots zeroed" : "copy", t_take - t0,
                    kernel_ms);
    return ADIA_OK;
}
