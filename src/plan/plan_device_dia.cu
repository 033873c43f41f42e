/* plan_device_dia.cu -- adia_plan_create_device_dia: a GPU plan in format
 * dia from diagonals already in device memory (as adia_stencil_fill_device
 * makes them), copied or taken over; no analysis, no choice. */
#include "plan_device.h"
#include "../cuda/codegen.h"
#include "../cuda/cuda_util.h"
#include "../cuda/diag_build.h"
#include "../formats/diag_core.h"

#include <vector>

namespace {

constexpr int THREADS = ADIA_PLAN_THREADS;

/* out[k rows + i] = in[k rows + i] as Out, 0 where column i + o_k is
 * outside [0, cols) (DIA's rule: such slots hold 0 and are never read as
 * x); the nonzeros inside counted into *count.  A block row per diagonal
 * (blockIdx.y): no 64-bit division a slot, which made a grid-stride loop
 * over all slots 0.35 ms for 27 diagonals of 512,000 rows (an mg level,
 * ncu, H200, 2026-11-28).  In place (in == out: an adopted array) only the
 * outside slots are written. */
template <typename In, typename Out>
__global__ void take_diagonals(const In *in, Out *out, int32_t rows, int32_t cols,
                               const int32_t *off, int ndiag, unsigned long long *count)
{
    unsigned long long mine = 0;
    const bool in_place = (const void *)in == (const void *)out;
    for (int k = blockIdx.y; k < ndiag; k += gridDim.y) {
        const int64_t base = (int64_t)k * rows, o = off[k];
        for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows;
             i += (int64_t)gridDim.x * blockDim.x) {
            const bool inside = i + o >= 0 && i + o < cols;
            const Out v = inside ? (Out)in[base + i] : Out(0);
            if (!in_place || !inside) out[base + i] = v;
            mine += v != Out(0);
        }
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
    /* the count (zero) and the offsets in one allocation by one copy: a
       level of mg makes a plan here, and each cudaMalloc, copy and
       cudaFree (a wait) is 3-13 us of its set-up (H200, 2026-11-28) */
    std::vector<int32_t> staged(2 + (size_t)A->ndiag);
    for (int k = 0; k < A->ndiag; k++) staged[2 + k] = (int32_t)A->offsets[k];
    int32_t *d_staged = nullptr;
    unsigned long long count = 0;
    adia_status s = adia_cuda_check(cudaMalloc(&d_staged, staged.size() * 4), "diagonal offsets");
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(d_staged, staged.data(), staged.size() * 4,
                                       cudaMemcpyHostToDevice), "diagonal offsets");
    unsigned long long *d_count = (unsigned long long *)d_staged;
    const int32_t *d_off = d_staged + 2;
    if (s == ADIA_OK && slots > 0) {
        /* about 8192 blocks in all, a row of them per diagonal */
        const int64_t per_diag = ((int64_t)A->rows + THREADS - 1) / THREADS,
                      most = A->ndiag < 8192 ? 8192 / A->ndiag : 1;
        const dim3 g((unsigned)(per_diag < most ? per_diag : most),
                     (unsigned)(A->ndiag < 65535 ? A->ndiag : 65535));
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
    cudaFree(d_staged);
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
    if (s == ADIA_OK && !D) s = ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK) {
        D->rows = A->rows;
        D->cols = A->cols;
        D->vtype = h.vtype;
        D->nnz = nnz;
        F->impl = D;                     /* owned by F from here */
        F->host_stale = 1;               /* the data stays on the device */
        s = adia__diag_dia_structure(D, A->ndiag, A->offsets);
    }
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
    s = adia__gpu_fence("adia_plan_create_device_dia");   /* the structure's uploads landed */
    if (s != ADIA_OK) {
        adia_format_destroy(F);
        return s;
    }
    double kernel_ms;
    ADIA_TRY(adia__plan_adopt_device(F, h, "device DIA", t0, NAN, &kernel_ms, plan));
    adia__plan_note(*plan, "dia from %d diagonals in device memory (%s), %lld nonzeros; times "
                    "(ms): %s %.1f, kernel %.1f", (int)A->ndiag, A->adopt ? "taken over" : "copied",
                    (long long)nnz, A->adopt ? "outside slots zeroed" : "copy", t_take - t0,
                    kernel_ms);
    return ADIA_OK;
}

extern "C" adia_status adia_plan_device_dia(const adia_plan *plan, int64_t *offsets, int max_diag,
                                            adia_device_dia *A)
{
    const char *f = "adia_plan_device_dia";
    if (!plan || !offsets || !A)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: plan, offsets or A is NULL", f);
    memset(A, 0, sizeof *A);
    adia_format *F = adia_plan_format((adia_plan *)plan);
    /* the host structure only: a device-built plan's values stay there */
    const adia_diag *D = F ? adia__format_diag_structure(F) : nullptr;
    const adia_diag_args *g = F ? adia__gpu_diag_args(F) : nullptr;
    const char *why = !D ? "its format is not a diagonal one"
                    : !g || !g->data ? "it is not on the device"
                    : D->n_pieces != 1 || D->n_scatter || g->rows != D->rows
                        ? "its diagonals are not stored as dia's (pieces or scatter points)"
                        : nullptr;
    if (why)
        return adia__error(ADIA_ERR_UNSUPPORTED, "%s: the plan (%s): %s (adia_format_to_matrix "
                           "reads any plan)", f, adia_plan_format_name(plan), why);
    const int ndiag = D->group_start[D->n_groups];
    if (ndiag > max_diag)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: %d diagonals, room for %d", f, ndiag,
                           max_diag);
    for (int k = 0; k < ndiag; k++) offsets[k] = D->offsets[k];
    A->rows = D->rows;
    A->cols = D->cols;
    A->ndiag = ndiag;
    A->offsets = offsets;
    A->values = (char *)g->data + D->piece_data[0] * (int64_t)adia_value_size(F->vtype);
    A->values_type = F->vtype;
    A->adopt = 0;
    return ADIA_OK;
}
