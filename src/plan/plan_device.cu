/* plan_device.cu -- the device planner: a GPU plan chosen and built on
 * the GPU from a CSR in device memory, without a host round trip of the
 * matrix.  Its entries: adia_plan_create_device_csr (CuPy's, cuSPARSE's,
 * an assembly on the device) and, through adia__plan_device_core, a host
 * matrix uploaded once (plan_upload.cu).
 *
 * The choice runs on what the GPU build measures, not on the host's
 * features: the number of distinct diagonals (the build's first phase)
 * gives DIA's storage exactly (one full-length row of values per
 * diagonal); when that is close to the nonzeros (stencils, bands) DIA is
 * built -- no offset lookups at all -- otherwise BRCSD-II (B-row pieces
 * keep only the diagonals they hold).  HDI stores the same slots as
 * BRCSD-II of the same piece size with one offset list per piece instead
 * of shared ones, so by bytes it never wins: MEASURE alone, which times
 * dia, hdi and brcsd2 built from the one copy of A, can pick it.  A matrix
 * whose BRCSD-II would store more than MAX_FILL slots per nonzero is not
 * a diagonal matrix (the build refuses it before its fill): csr, ell and
 * sell are built here instead, ranked by the host's cost model from the
 * device's row statistics (the longest row, SELL's slots), and MEASURE
 * times them (csr on each of its kernels) from the one copy of A.
 * brcsd1 and crsd are not built here: on the GPU neither was the fastest
 * kernel of any matrix measured (type III, bands with holes, a 201-wide
 * band, random diagonals; H200, bench/results/2026-11-27i-h200/
 * diag-formats-call4.txt), so they are no candidates; a plan that names
 * one is built on the host (adia__plan_host_route). */
#include "plan_device.h"
#include "../cuda/codegen.h"
#include "../cuda/cuda_util.h"
#include "../cuda/diag_build.h"
#include "../cuda/row_build.h"

#include <math.h>
#include <vector>

namespace {

/* DIA when its slots are at most this many per nonzero. */
constexpr double DIA_FILL = 1.1;
/* Above this many slots per nonzero, not a diagonal matrix. */
constexpr double MAX_FILL = 3.0;
/* MEASURE's SpMV timings per candidate (median, CUDA events). */
constexpr int MEASURE_RUNS = 15;
/* What MEASURE costs, in products of the matrix: three candidates, each
 * built, given an x and timed MEASURE_RUNS times (481 ms on lap3d7:256,
 * H200 2026-11-27, about 1450 products; 100 is a floor). */
constexpr double MEASURE_COST_PRODUCTS = 100;

/* Can measuring repay itself?  Where dia fits (fill <= DIA_FILL), another
 * format saves at most dia's padding, (fill - 1) of each expected product:
 * measure only where that, over the calls, is above what measuring costs. */
bool measure_repays(double fill, double calls)
{
    return fill > DIA_FILL || (fill - 1) * calls > MEASURE_COST_PRODUCTS;
}

constexpr int THREADS = ADIA_PLAN_THREADS;

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
    if (!plan)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_create_device_csr: plan is NULL");
    *plan = nullptr;
    return adia__device_csr_check(A, "adia_plan_create_device_csr");
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

/* Not a diagonal matrix: A (a caller's device CSR) to the host once, in
 * the master CSR's layout, and the host planner. */
adia_status host_plan(const adia_device_csr *A, const adia_plan_hints *hints, const char *why,
                      adia_plan **out)
{
    const size_t rows = (size_t)A->rows, nnz = (size_t)A->nnz;
    std::vector<int64_t> rowptr(rows + 1);
    std::vector<int32_t> colind(nnz);
    std::vector<double> values(nnz);
    if (A->rowptr_bits == 32) {
        std::vector<int32_t> rp(rows + 1);
        ADIA_CUDA_TRY(cudaMemcpy(rp.data(), A->rowptr, rp.size() * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i <= rows; i++) rowptr[i] = rp[i];
    } else {
        ADIA_CUDA_TRY(cudaMemcpy(rowptr.data(), A->rowptr, rowptr.size() * 8,
                                 cudaMemcpyDeviceToHost));
    }
    ADIA_CUDA_TRY(cudaMemcpy(colind.data(), A->colind, nnz * 4, cudaMemcpyDeviceToHost));
    if (A->values_type == ADIA_FLOAT) {
        std::vector<float> v(nnz);
        ADIA_CUDA_TRY(cudaMemcpy(v.data(), A->values, nnz * 4, cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < nnz; k++) values[k] = v[k];
    } else {
        ADIA_CUDA_TRY(cudaMemcpy(values.data(), A->values, nnz * 8, cudaMemcpyDeviceToHost));
    }
    adia_matrix *M = nullptr;
    ADIA_TRY(adia_matrix_create_csr(A->rows, A->cols, A->nnz, rowptr.data(), colind.data(),
                                    values.data(), ADIA_DOUBLE, &M));
    char note[400];
    snprintf(note, sizeof note, "%s: planned from a host copy of the CSR in device memory", why);
    adia_status s = adia__plan_create_on_host(M, hints, note, out);
    adia_matrix_destroy(M);
    return s;
}

/* Stored slots of a diagonal format built here. */
int64_t slots(const adia_format *F)
{
    const adia_diag *D = (const adia_diag *)F->impl;
    return D->piece_data[D->n_pieces];
}

/* One format built on the device from A: *F, its wall-clock build time and
 * the build's own GPU/host split; a diagonal format storing more than
 * max_slots (> 0) refused (ADIA_ERR_UNSUPPORTED) before its fill. */
adia_status build_one(const adia_gpu_csr &A, const char *name, const plan_hints &h,
                      int64_t max_slots, adia_format **F, double *ms, adia_gpu_build_info *bi)
{
    const double t = adia__now_ms();
    ADIA_TRY(adia__format_build_device(name, &A, &h.params, h.vtype, max_slots, F, bi));
    *ms = adia__now_ms() - t;
    return ADIA_OK;
}

/* MEASURE's x (adia__plan_timing_x), freed with its holder. */
struct timing_x {
    void *p = nullptr;
    ~timing_x() { free(p); }
    adia_status make(int32_t cols, adia_value_type vt)
    {
        p = adia__plan_timing_x(cols, vt);
        return p ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    }
};

/* A candidate that could not be built (no room, refused): noted, skipped. */
bool skippable(adia_status s, const char *name, char *line, size_t len, size_t *used)
{
    if (s != ADIA_ERR_NO_MEMORY && s != ADIA_ERR_UNSUPPORTED && s != ADIA_ERR_INVALID_ARG)
        return false;
    if (*used < len)
        *used += (size_t)snprintf(line + *used, len - *used, " %s skipped (%.100s);", name,
                                  adia_last_error());
    adia_clear_error();
    return true;
}

/* A matrix that is not a diagonal one: csr, ell and sell ranked by the
 * cost model from the device's row statistics; MODEL builds the first
 * that fits, MEASURE builds and times each (csr on each of its kernels),
 * keeping the least SpMV + build / calls (a later one by more than
 * PLAN_TIE_GPU).  ell and sell storing more than MAX_FILL slots per
 * nonzero are not built (their padding would cost more than it could
 * save).  *cand, *n_cand: the model's ranking, for the plan's
 * explanation; line[len]: what was done. */
adia_status rows_device(const adia_gpu_csr &A, const plan_hints &h, adia_format **F,
                        double *build_ms, double *spmv_ms, adia_plan_candidate *cand,
                        int *n_cand, char *line, size_t len)
{
    *F = nullptr;
    adia_gpu_row_stats st;
    ADIA_TRY(adia__gpu_row_stats(&A, &h.params, &st));
    ADIA_TRY(adia__plan_model_rows(A.rows, A.cols, A.nnz, st.row_max, st.sell_slots,
                                   st.sell_slices, &h, cand, n_cand));
    const bool measure = h.chooser == ADIA_CHOOSE_MEASURE;
    const double nnz = A.nnz > 0 ? (double)A.nnz : 1;
    const int64_t slot_bytes = 4 + (int64_t)adia_value_size(h.vtype);
    timing_x x;
    if (measure) ADIA_TRY(x.make(A.cols, h.vtype));
    size_t used = (size_t)snprintf(line, len, "row formats built on the GPU (longest row %lld); "
                                   "%s:", (long long)st.row_max,
                                   measure ? "measure (SpMV ms + build ms)" : "model");
    double best = INFINITY;
    for (int i = 0; i < *n_cand; i++) {
        const adia_plan_candidate &c = cand[i];
        const bool padded = strcmp(c.format, "csr") != 0;
        const double per_nnz = (double)(c.storage_bytes / slot_bytes) / nnz;
        if (padded && per_nnz > MAX_FILL) {
            if (used < len)
                used += (size_t)snprintf(line + used, len - used, " %s not built (%.1f slots "
                                         "per nonzero);", c.format, per_nnz);
            continue;
        }
        if (h.budget > 0 && c.storage_bytes > h.budget) {
            if (used < len)
                used += (size_t)snprintf(line + used, len - used, " %s over the memory budget;",
                                         c.format);
            continue;
        }
        adia_format *G = nullptr;
        double b_ms = 0, s_ms = NAN;
        adia_status s = build_one(A, c.format, h, 0, &G, &b_ms, nullptr);
        char tuned[400] = "";
        if (s == ADIA_OK && measure) {
            s = adia__plan_gpu_time(G, MEASURE_RUNS, x.p, &s_ms);
            if (s == ADIA_OK) adia__plan_tune_kernel(&h, G, x.p, &s_ms, tuned, sizeof tuned);
        }
        if (s != ADIA_OK) {
            adia_format_destroy(G);
            if (skippable(s, c.format, line, len, &used)) continue;
            adia_format_destroy(*F);
            *F = nullptr;
            return s;
        }
        if (!measure) {
            if (used < len)
                snprintf(line + used, len - used, " %s predicted %.4f ms, built in %.1f ms",
                         c.format, c.spmv_ms, b_ms);
            *F = G;
            *build_ms = b_ms;
            return ADIA_OK;
        }
        const double score = s_ms + b_ms / (double)h.calls;
        for (char *q = tuned; *q; q++) *q = *q == '\n' ? ';' : *q;
        if (used < len)
            used += (size_t)snprintf(line + used, len - used, " %s (%s) %.4f + %.1f%s%s%s;",
                                     c.format, adia_gpu_kernel_name(adia_format_kernel(G)), s_ms,
                                     b_ms, tuned[0] ? " [" : "", tuned, tuned[0] ? "]" : "");
        if (!*F || score * (1 + PLAN_TIE_GPU) < best) {
            best = score;
            adia_format_destroy(*F);
            *F = G;
            *build_ms = b_ms;
            *spmv_ms = s_ms;
        } else {
            adia_format_destroy(G);
        }
    }
    if (!*F) return adia__error(ADIA_ERR_NO_MEMORY, "GPU plan: no row format could be built: %s",
                                line);
    return ADIA_OK;
}

/* MEASURE on the device: dia (where its storage is bounded: n_diag rows
 * slots within MAX_FILL per nonzero), hdi and brcsd2 built one after the
 * other from the one copy of A, each timed (generic kernel: the winner's
 * generated kernel is adia__plan_adopt_device's business, so one compile
 * at most, not one per candidate) with real x values; kept: the least
 * SpMV + build / calls.  *F the winner, *build_ms its build; the line for
 * the notes in line[len]. */
adia_status measure_device(const adia_gpu_csr &A, const plan_hints &h, int64_t n_diag,
                           adia_format **F, double *build_ms, double *spmv_ms, char *line,
                           size_t len)
{
    const char *names[3];
    int n = 0;
    const double nnz = A.nnz > 0 ? (double)A.nnz : 1;
    if ((double)n_diag * A.rows <= MAX_FILL * nnz) names[n++] = "dia";
    names[n++] = "hdi";
    names[n++] = "brcsd2";
    timing_x x;
    ADIA_TRY(x.make(A.cols, h.vtype));
    *F = nullptr;
    double best = INFINITY;
    size_t used = (size_t)snprintf(line, len, "measure (built on the GPU, generic kernels, SpMV "
                                   "ms + build ms / %lld calls; a later one wins by more than "
                                   "%.0f%%):", (long long)h.calls, 100 * PLAN_TIE_GPU);
    for (int i = 0; i < n; i++) {
        adia_format *G = nullptr;
        double b_ms = 0, s_ms = INFINITY;
        adia_status s = build_one(A, names[i], h, 0, &G, &b_ms, nullptr);
        if (s == ADIA_OK) s = adia__plan_gpu_time(G, MEASURE_RUNS, x.p, &s_ms);
        if (s == ADIA_ERR_NO_MEMORY || s == ADIA_ERR_UNSUPPORTED) {   /* the next one may fit */
            if (used < len)
                used += (size_t)snprintf(line + used, len - used, " %s skipped (%.80s);",
                                         names[i], adia_last_error());
            adia_format_destroy(G);
            adia_clear_error();
            continue;
        }
        if (s != ADIA_OK) {
            adia_format_destroy(G);
            adia_format_destroy(*F);
            *F = nullptr;
            return s;
        }
        const double score = s_ms + b_ms / (double)h.calls;
        if (used < len)
            used += (size_t)snprintf(line + used, len - used, " %s %.4f + %.1f;", names[i], s_ms,
                                     b_ms);
        if (!*F || score * (1 + PLAN_TIE_GPU) < best) {
            best = score;
            adia_format_destroy(*F);
            *F = G;
            *build_ms = b_ms;
            *spmv_ms = s_ms;
        } else {
            adia_format_destroy(G);
        }
    }
    if (!*F) return adia__error(ADIA_ERR_NO_MEMORY, "GPU plan: none of %s could be built: %s",
                                n == 3 ? "dia, hdi, brcsd2" : "hdi, brcsd2", line);
    return ADIA_OK;
}

} // namespace

/* For many products the generated kernel (1.15-2.5x the generic one on
 * the stencils measured, bench/GPU-NOTES.md) is worth having; its NVRTC
 * compile (0.1-1.8 s a structure on the H200's host) is worth waiting for
 * only where the products repay it (issue 28: 1000 products of a 0.065 ms
 * SpMV save about 10 ms).  So a cached kernel is loaded at once, and an
 * uncached one compiles where adia__plan_codegen_repay_ms covers its
 * estimate, or in the background with ADIA_CODEGEN=background (codegen.h).
 * Otherwise, or where the generator declines, the generic kernel stays
 * and the plan says why. */
adia_status adia__plan_adopt_device(adia_format *F, const plan_hints &h, const char *name,
                                    double t0, double spmv_ms, double *kernel_ms,
                                    adia_plan **plan)
{
    char note[400] = "";
    const double t = adia__now_ms();
    adia_codegen_mode mode = ADIA_CODEGEN_BACKGROUND;
    adia_status s = adia__codegen_mode(&mode);
    if (s != ADIA_OK) {
        adia_format_destroy(F);
        return s;
    }
    if (h.calls >= ADIA_PLAN_MEASURE_CALLS && F->ops->diag.policy) {   /* diagonal formats' */
        s = adia__gpu_diag_generate(F, mode, adia__plan_codegen_repay_ms(F, &h, spmv_ms), note,
                                    sizeof note);
        if (s != ADIA_OK) {
            adia_format_destroy(F);
            return s;
        }
        if (mode != ADIA_CODEGEN_ALWAYS)   /* always: the generated kernel, as asked */
            adia__plan_keep_faster_kernel(F, nullptr, note, sizeof note);
    }
    *kernel_ms = adia__now_ms() - t;
    ADIA_TRY(adia__plan_adopt(F, &h, name, plan));
    if (note[0]) adia__plan_note(*plan, "%s (%.1f ms)", note, *kernel_ms);
    (*plan)->build_ms = adia__now_ms() - t0;
    (*plan)->compile_ms = *kernel_ms;
    (*plan)->from_device = 1;
    return ADIA_OK;
}

adia_status adia__plan_device_core(const adia_device_csr *in, const plan_hints &h,
                                   const char *name, adia_plan **plan, char *why, size_t len)
{
    *plan = nullptr;
    why[0] = '\0';
    const double t0 = adia__now_ms();
    canonical c;
    ADIA_TRY(canonicalize(in, c));
    const adia_gpu_csr &A = c.A;
    const bool fixed = h.chooser == ADIA_CHOOSE_FIXED;
    const double nnz = A.nnz > 0 ? (double)A.nnz : 1;
    int64_t n_diag = -1;
    const char *format = h.format;
    if (!fixed) {
        ADIA_TRY(adia__gpu_count_diagonals(&A, &n_diag));
        format = (double)n_diag * A.rows <= DIA_FILL * nnz ? "dia" : "brcsd2";
    }
    const double t_count = adia__now_ms();
    adia_format *F = nullptr;
    adia_gpu_build_info bi = {};
    double build_ms = 0, spmv_ms = NAN;
    char measured[600] = "", rows[700] = "";
    adia_plan_candidate cand[ADIA_PLAN_MAX_CANDIDATES];
    int n_cand = 0;
    const double fill = (double)n_diag * A.rows / nnz;
    /* MEASURE of a matrix that is not a diagonal one would build three
     * formats to find that out: the single build below says it first */
    const bool measure = !fixed && h.chooser == ADIA_CHOOSE_MEASURE && fill <= MAX_FILL;
    if (measure && !measure_repays(fill, (double)h.calls))
        snprintf(measured, sizeof measured, "not measured: dia stores %.4f slots per nonzero, so "
                 "another format saves at most %.2f%% of each of %lld products, less than "
                 "measuring costs (about %.0f products)", fill, 100 * (fill - 1),
                 (long long)h.calls, MEASURE_COST_PRODUCTS);
    adia_status s = ADIA_OK;
    if (measure && !measured[0])
        s = measure_device(A, h, n_diag, &F, &build_ms, &spmv_ms, measured, sizeof measured);
    else
        s = build_one(A, format, h, fixed ? 0 : (int64_t)(MAX_FILL * nnz), &F, &build_ms, &bi);
    /* brcsd2 refused (not a diagonal matrix), or without room for its
     * analysis where dia stores more than MAX_FILL slots per nonzero
     * anyway: the row formats, which need less */
    if (!fixed && (s == ADIA_ERR_UNSUPPORTED || (s == ADIA_ERR_NO_MEMORY && fill > MAX_FILL))) {
        snprintf(why, len, "not a diagonal matrix (%lld diagonals; %.150s)", (long long)n_diag,
                 adia_last_error());
        adia_clear_error();
        s = rows_device(A, h, &F, &build_ms, &spmv_ms, cand, &n_cand, rows, sizeof rows);
        if (s == ADIA_ERR_NO_MEMORY) {   /* the host path builds with fallbacks */
            snprintf(why + strlen(why), len - strlen(why), "; %.200s", adia_last_error());
            adia_clear_error();
            return ADIA_OK;
        }
    }
    ADIA_TRY(s);
    const double t_built = adia__now_ms();
    if (h.budget > 0 && adia_format_storage_bytes(F) > h.budget) {
        snprintf(why, len, "%s built on the GPU stores %lld bytes, over the memory budget of %lld",
                 adia_format_name(F), (long long)adia_format_storage_bytes(F),
                 (long long)h.budget);
        adia_format_destroy(F);
        return ADIA_OK;
    }
    const bool diagonal = F->ops->diag.policy != nullptr;
    double kernel_ms;
    ADIA_TRY(adia__plan_adopt_device(F, h, name, t0, spmv_ms, &kernel_ms, plan));
    adia_plan *P = *plan;
    adia_status sn = adia__plan_nondeterministic(P, &h);   /* MODEL: csr's ALG1 where allowed */
    if (sn != ADIA_OK) {
        adia_plan_destroy(P);
        *plan = nullptr;
        return sn;
    }
    P->analyze_ms = t_count - t0;
    P->build_ms = build_ms;
    P->measured_ms = spmv_ms;
    P->measure_ms = measured[0] || (rows[0] && h.chooser == ADIA_CHOOSE_MEASURE)
                        ? t_built - t_count - build_ms : 0;
    P->n_cand = n_cand;
    for (int i = 0; i < n_cand; i++) {
        P->cand[i] = cand[i];
        if (!strcmp(cand[i].format, adia_format_name(F))) P->predicted_ms = cand[i].spmv_ms;
    }
    if (measured[0]) adia__plan_note(P, "%s", measured);
    if (diagonal)
        adia__plan_note(P, "times (ms): widening + diagonal count %.1f, build %.1f (GPU analysis "
                        "%.1f, host structure %.1f, GPU fill %.1f), kernel %.1f", t_count - t0,
                        build_ms, bi.analyze_ms, bi.host_ms, bi.build_ms, kernel_ms);
    else
        adia__plan_note(P, "times (ms): widening + diagonal count %.1f, the refused diagonal "
                        "build and the row formats %.1f (the chosen one's build %.1f)",
                        t_count - t0, t_built - t_count, build_ms);
    if (fixed)
        adia__plan_note(P, "built on the GPU, as asked (%s)", adia_format_name(P->F));
    else if (!diagonal)
        adia__plan_note(P, "%s: %s", why, rows);
    else
        adia__plan_note(P, "built on the GPU: %lld diagonals, dia would store %.2f slots per "
                        "nonzero (chosen at <= %.1f), %s stores %.2f", (long long)n_diag,
                        (double)n_diag * A.rows / nnz, DIA_FILL, adia_format_name(P->F),
                        slots(P->F) / nnz);
    why[0] = '\0';
    return ADIA_OK;
}

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
    char why[256];
    ADIA_TRY(adia__plan_device_core(A, h, "device CSR", plan, why, sizeof why));
    if (!*plan) ADIA_TRY(host_plan(A, &gpu, why, plan));
    else adia__plan_note(*plan, "from a CSR in device memory");
    adia__plan_update_hash_device(*plan, A);   /* new values later: checked on the device */
    return ADIA_OK;
}

extern "C" adia_status adia__device_csr_check(const adia_device_csr *A, const char *func)
{
#define BAD(fmt, ...) return adia__error(ADIA_ERR_INVALID_ARG, "%s: " fmt, func, ##__VA_ARGS__)
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
