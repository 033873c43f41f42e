/* plan.c -- the inspector-executor: adia_plan_create (analyse, choose,
 * build, upload, with fallbacks), adia_spmv (the hot path), accessors.
 * The cost model is in plan_model.c, explain/save/load in plan_io.c. */
#include "plan_internal.h"
#include "cuda/codegen.h"   /* plain C: the compile's cost model, in every build */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

const char *adia_chooser_name(adia_chooser c)
{
    switch (c) {
    case ADIA_CHOOSE_MODEL: return "model";
    case ADIA_CHOOSE_RULES: return "rules";
    case ADIA_CHOOSE_MEASURE: return "measure";
    case ADIA_CHOOSE_FIXED: return "fixed";
    }
    return "?";
}

static adia_status check_plan(const adia_plan *P, const char *func)
{
    if (!P) return adia__error(ADIA_ERR_INVALID_HANDLE, "%s: plan is NULL", func);
    if (P->magic != ADIA_MAGIC_PLAN)
        return adia__error(ADIA_ERR_INVALID_HANDLE,
                          "%s: not a live plan handle (destroyed or uninitialised)", func);
    return ADIA_OK;
}

/* Append one line to the plan's notes (silently cut when full). */
void adia__plan_note(adia_plan *P, const char *fmt, ...)
{
    size_t used = strlen(P->notes);
    if (used + 2 >= sizeof P->notes) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(P->notes + used, sizeof P->notes - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(P->notes);
    P->notes[used] = '\n';
    P->notes[used + 1] = '\0';
}

static int find_candidate(const adia_plan *P, const char *name)
{
    for (int i = 0; i < P->n_cand; i++)
        if (!strcmp(P->cand[i].format, name)) return i;
    return -1;
}

/* ------------------------------------------------------- tie-breaks */

/* Two candidates whose predicted totals, or measured SpMV + predicted build / calls,
 * differ by less than this fraction are a tie, and the one cheaper to build
 * wins.  Predictions: the model's CPU efficiencies are 0.05 steps and its
 * bandwidth a figure with run-to-run spread (16.7 and 28.7 GB/s on one
 * machine, issue 28), so closer totals say nothing.  Measurements: the
 * best SpMV of a 2-5 ms window moved 3-10% between processes on the 2-core
 * development machine (lap3d7:40 and lap3d27:20: dia, hdi, brcsd1 and
 * brcsd2 measured within 10% of each other, their order changing run to
 * run), so the same command chose brcsd1, dia or hdi from run to run. */
#define PLAN_TIE 0.10

/* Registry position of a format (adia info's order: simpler formats first). */
static int format_rank(const char *name)
{
    for (int i = 0; i < adia_format_count(); i++)
        if (!strcmp(adia__format_ops_at(i)->name, name)) return i;
    return adia_format_count();
}

/* Is a cheaper to build than b: the model's conversion time (bytes read and
 * written: the same on every run), then the registry order. */
static int cheaper_build(const adia_plan_candidate *a, const adia_plan_candidate *b)
{
    if (a->convert_ms != b->convert_ms) return a->convert_ms < b->convert_ms;
    return format_rank(a->format) < format_rank(b->format);
}

/* The model's choice: of the candidates whose predicted total is within
 * PLAN_TIE of the least, the cheapest to build, moved to the front (the
 * rest keep their order). */
static void model_prefer_cheap(adia_plan *P)
{
    int w = 0;
    for (int i = 1; i < P->n_cand; i++)
        if (P->cand[i].total_ms <= P->cand[0].total_ms * (1 + PLAN_TIE) &&
            cheaper_build(&P->cand[i], &P->cand[w]))
            w = i;
    if (w == 0) return;
    adia_plan_candidate c = P->cand[w];
    adia__plan_note(P, "model: %s predicted within %.0f%% of %s (%.4f vs %.4f ms total) and "
                    "cheaper to build: chosen", c.format, 100 * PLAN_TIE, P->cand[0].format,
                    c.total_ms, P->cand[0].total_ms);
    memmove(&P->cand[1], &P->cand[0], (size_t)w * sizeof c);
    P->cand[0] = c;
}

/* ---------------------------------------------------------- building */

/* Build (and upload) one format for the plan.  Failures that a fallback can
 * cure -- over the budget, out of host or device memory, no GPU kernel, bad
 * parameters for this format -- are noted and return ADIA_ERR_NO_MEMORY or
 * ADIA_ERR_UNSUPPORTED with *F NULL; the caller tries the next one. */
static adia_status try_build(adia_plan *P, const adia_matrix *A, const char *name,
                             const plan_hints *h, adia_format **F)
{
    *F = NULL;
    int c = find_candidate(P, name);
    if (h->budget > 0 && c >= 0 && P->cand[c].storage_bytes > h->budget) {
        adia__plan_note(P, "skipped %s: predicted %lld bytes exceed the memory budget of %lld", name,
             (long long)P->cand[c].storage_bytes, (long long)h->budget);
        return ADIA_ERR_NO_MEMORY;
    }
    double t0 = adia__now_ms();
    adia_status s = adia_format_build(A, name, &h->params, h->vtype, F);
    if (s == ADIA_OK && h->budget > 0 && adia_format_storage_bytes(*F) > h->budget) {
        adia__plan_note(P, "skipped %s: its %lld bytes exceed the memory budget of %lld", name,
             (long long)adia_format_storage_bytes(*F), (long long)h->budget);
        s = ADIA_ERR_NO_MEMORY;
    } else if (s == ADIA_OK && h->device) {
        s = adia_format_upload(*F);
        if (s != ADIA_OK) adia__plan_note(P, "skipped %s: upload failed: %s", name, adia_last_error());
    } else if (s != ADIA_OK) {
        adia__plan_note(P, "skipped %s: build failed: %s", name, adia_last_error());
    }
    P->build_ms = adia__now_ms() - t0;
    if (s == ADIA_OK) return ADIA_OK;
    adia_format_destroy(*F);
    *F = NULL;
    /* anything else (a bug, a CUDA fault) stops the plan */
    if (s == ADIA_ERR_NO_MEMORY || s == ADIA_ERR_OVERFLOW) return ADIA_ERR_NO_MEMORY;
    if (s == ADIA_ERR_UNSUPPORTED || s == ADIA_ERR_INVALID_ARG) return ADIA_ERR_UNSUPPORTED;
    return s;
}

/* Time of one SpMV on the plan's device (ms): CPU a warm-up then the best
 * of `runs` (wall clock), GPU the median of `runs` (CUDA events).  x, y:
 * host buffers, used by CPU plans only. */
static adia_status time_spmv(adia_format *F, int device, void *x, void *y, double *ms)
{
    enum { runs = 5 };
    if (device) {
#ifdef ADIA_HAVE_CUDA
        return adia__plan_gpu_time(F, 3 * runs, x, ms);
#else
        return adia__error(ADIA_ERR_NO_DEVICE, "plan: GPU timing without CUDA");
#endif
    }
    /* the best over a window of about 2 ms (at least 5 runs, at most 100):
     * the best of 5 runs of a 0.05 ms product moved 25% between processes */
    adia_gpu_timing t;
    ADIA_TRY(adia_cpu_time_spmv(F, runs, x, y, &t));
    double per = t.min_ms > 1e-4 ? t.min_ms : 1e-4;
    int more = 2.0 / per > 100 ? 100 : (int)(2.0 / per);
    *ms = t.min_ms;
    if (more > runs) {
        ADIA_TRY(adia_cpu_time_spmv(F, more, x, y, &t));
        if (t.min_ms < *ms) *ms = t.min_ms;
    }
    return ADIA_OK;
}

double adia__plan_codegen_repay_ms(const adia_format *F, const plan_hints *h, double spmv_ms)
{
    if (!(spmv_ms > 0)) {
        const double gbs = h->bandwidth_gbs > 0 ? h->bandwidth_gbs : PLAN_GPU_ASSUMED_GBS;
        spmv_ms = (double)adia_format_bytes(F) / (gbs * 1e6);
    }
    return (double)h->calls * spmv_ms * ADIA_CODEGEN_GAIN;
}

/* F just switched to its generated kernel (from the cache, or compiled):
 * that kernel is 1.15-2.5x the generic one on stencils, but 1.3x slower on
 * wide bands with holes (hdi and brcsd2 with an offset list per piece,
 * 61 diagonals at fill 0.5: 0.065 ms against 0.049, H200,
 * bench/results/2026-11-27i-h200/kernel-choice-call7.txt), so both are
 * timed (the median of PLAN_KERNEL_RUNS samples each, a sample a CUDA
 * graph of back-to-back products: 9-12 ms of set-up for both on 4-17 M-row
 * stencils, H200, 2026-11-27, where 15 samples took 20 ms) and the generic one
 * kept where it is faster by more than PLAN_TIE_GPU; *ms (may be NULL)
 * gets the kept one's time, what was found goes to how[len].  Not under
 * ADIA_CODEGEN=always (the generated kernel was asked for). */
#define PLAN_KERNEL_RUNS 5
void adia__plan_keep_faster_kernel(adia_format *F, double *ms, char *how, size_t len)
{
#ifdef ADIA_HAVE_CUDA
    if (adia_format_kernel(F) != ADIA_KERNEL_GENERATED) return;
    const adia_gpu_kernel k[2] = {ADIA_KERNEL_GENERATED, ADIA_KERNEL_GENERIC};
    double t[2] = {INFINITY, INFINITY};
    const int timed = adia__plan_gpu_time_kernels(F, k, 2, PLAN_KERNEL_RUNS, t) == ADIA_OK;
    const double gen = t[0], generic = t[1];
    /* generic by a margin only: two equal launch-bound timings (a small
     * matrix) keep the kernel the plan was given */
    const int keep_generated = !timed || generic * (1 + PLAN_TIE_GPU) >= gen;
    if (!timed) adia_clear_error();
    if (adia_format_set_kernel(F, keep_generated ? ADIA_KERNEL_GENERATED : ADIA_KERNEL_GENERIC) !=
        ADIA_OK) {
        adia_clear_error();
        return;
    }
    if (!timed) return;
    if (ms) *ms = keep_generated ? gen : generic;
    const size_t used = strlen(how);
    snprintf(how + used, len - used, "; timed: generated %.4f ms, generic %.4f ms: %s kept", gen,
             generic, keep_generated ? "generated" : "generic");
#else
    (void)F;
    (void)ms;
    (void)how;
    (void)len;
#endif
}

/* A GPU plan for many calls in a diagonal format still on its generic
 * kernel: the generated one as ADIA_CODEGEN says (codegen.h: loaded from
 * the cache, or compiled in the background, or with sync now), kept where
 * it is the faster. */
static adia_status plan_generated(adia_plan *P, const plan_hints *h)
{
#ifdef ADIA_HAVE_CUDA
    if (!h->device || h->calls < ADIA_PLAN_MEASURE_CALLS ||
        !adia_format_is_diagonal(adia_format_name(P->F)) ||
        adia_format_kernel(P->F) != ADIA_KERNEL_GENERIC)
        return ADIA_OK;
    adia_codegen_mode m;
    ADIA_TRY(adia__codegen_mode(&m));
    char how[400];
    double t0 = adia__now_ms();
    ADIA_TRY(adia__gpu_diag_generate(P->F, m, adia__plan_codegen_repay_ms(P->F, h, P->measured_ms),
                                     how, sizeof how));
    if (m != ADIA_CODEGEN_ALWAYS)   /* always: the generated kernel, as asked */
        adia__plan_keep_faster_kernel(P->F, NULL, how, sizeof how);
    P->compile_ms = adia__now_ms() - t0;
    adia__plan_note(P, "%s (%.1f ms)", how, P->compile_ms);
#else
    (void)P;
    (void)h;
#endif
    return ADIA_OK;
}

/* Append a line to notes[len] (cut when full). */
static void note_line(char *notes, size_t len, const char *fmt, ...)
{
    size_t used = strlen(notes);
    if (used + 2 >= len) return;
    if (used) notes[used++] = '\n', notes[used] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + used, len - used, fmt, ap);
    va_end(ap);
}

/* MEASURE on the GPU also tunes the kernel: every other kernel the format
 * has (CSR's scalar / vector / adaptive) is timed and the fastest kept,
 * and candidates are compared with their fastest kernel.  A diagonal
 * format's generated kernel is not among them: whether it was compiled
 * before (the kernel cache) must not change the format chosen, and a
 * compile (0.1-3 s) per candidate would not repay; the chosen format gets
 * it where the plan's calls repay its compile (plan_generated).  A kernel that is not bitwise
 * reproducible (csr's cusparse-alg1) is timed only when the hints allow
 * one, and its time is noted whether it wins or not.
 * *ms: the current kernel's time on entry, the kept kernel's on return;
 * what was found: lines appended to notes[len]. */
void adia__plan_tune_kernel(const plan_hints *h, adia_format *F, const void *x, double *ms,
                            char *notes, size_t len)
{
    const adia_gpu_kernel start = adia_format_kernel(F);   /* timed already: *ms */
    const unsigned kernels = F->ops->gpu ? F->ops->gpu->kernels : 0;   /* the table's variants */
    adia_gpu_kernel best = start;
    adia_gpu_kernel all[32];
    size_t n_all = 0;
    for (int k = 1; k < 32; k++)
        if (kernels & (1u << k)) all[n_all++] = (adia_gpu_kernel)k;
    for (size_t i = 0; i < n_all; i++) {
        double t = INFINITY;
        if (all[i] == ADIA_KERNEL_GENERATED) continue;
        const int nondet = !adia_gpu_kernel_is_deterministic(all[i]);
        if (nondet && !h->nondeterministic) continue;
        if (all[i] == start || adia_format_set_kernel(F, all[i]) != ADIA_OK ||
            time_spmv(F, 1, (void *)x, NULL, &t) != ADIA_OK) {
            adia_clear_error();   /* not a kernel of this format, or no generator */
            continue;
        }
        if (nondet)
            note_line(notes, len, "measure: %s %s kernel (not bitwise reproducible, allowed by "
                      "the hints) %.4f ms", adia_format_name(F), adia_gpu_kernel_name(all[i]), t);
        if (t < *ms) {
            note_line(notes, len, "measure: %s %s kernel %.4f ms replaces %s %.4f ms",
                      adia_format_name(F), adia_gpu_kernel_name(all[i]), t,
                      adia_gpu_kernel_name(best), *ms);
            *ms = t;
            best = all[i];
        }
    }
    if (adia_format_set_kernel(F, best) != ADIA_OK) adia_clear_error();
}

/* MEASURE: build the model's best few, time each, keep the least
 * spmv + build / calls.  *F NULL (and ADIA_OK) when none could be built. */
void *adia__plan_timing_x(int32_t cols, adia_value_type vt)
{
    const size_t vs = adia_value_size(vt);
    void *x = adia__calloc((size_t)cols + 1, vs, "plan: timing x");
    for (int32_t j = 0; x && j < cols; j++) {
        const double v = 1.0 / (1 + j % 7);
        if (vs == sizeof(float)) ((float *)x)[j] = (float)v;
        else ((double *)x)[j] = v;
    }
    return x;
}

static adia_status measure(adia_plan *P, const adia_matrix *A, const plan_hints *h,
                           adia_format **F)
{
    size_t vs = adia_value_size(h->vtype);
    void *x = adia__plan_timing_x(A->csr.cols, h->vtype);
    void *y = adia__calloc((size_t)A->csr.rows + 1, vs, "plan: timing y");
    adia_status s = x && y ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    double best = INFINITY, best_build = 0;
    *F = NULL;
    /* the model's best few, and CSR wherever it ranks: the baseline, cheap to
     * build, and the winner on small and L2-resident matrices, where the
     * model's byte counts decide least (H200 accuracy runs).  Timed cheapest
     * build first; a dearer one replaces the pick only when it beats it by
     * more than PLAN_TIE, so a tie goes to the cheaper build every run.  On
     * the GPU (CUDA events over batches) the model's order, and a later
     * candidate wins by more than PLAN_TIE_GPU. */
    const double tie = h->device ? PLAN_TIE_GPU : PLAN_TIE;
    int order[ADIA_PLAN_MAX_CANDIDATES], n_order = 0, pick = 0;
    for (int i = 0; i < P->n_cand; i++) {
        if (i >= ADIA_PLAN_MEASURE_TOP && strcmp(P->cand[i].format, "csr")) continue;
        int at = n_order++;
        while (at > 0 && !h->device && cheaper_build(&P->cand[i], &P->cand[order[at - 1]])) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    for (int k = 0; s == ADIA_OK && k < n_order; k++) {
        int i = order[k];
        adia_format *G;
        adia_status b = try_build(P, A, P->cand[i].format, h, &G);
        if (b != ADIA_OK) {
            if (b != ADIA_ERR_NO_MEMORY && b != ADIA_ERR_UNSUPPORTED) s = b;
            continue;
        }
        double ms = INFINITY;
        s = time_spmv(G, h->device, x, y, &ms);
        if (s == ADIA_OK && h->device) {
            char tuned[600] = "";
            adia__plan_tune_kernel(h, G, x, &ms, tuned, sizeof tuned);
            if (tuned[0]) adia__plan_note(P, "%s", tuned);
        }
        /* CPU: the pick and the challenger timed again, in turn, each
         * keeping its best: another process's burst of memory traffic
         * (a build beside us) slows one window, rarely all four, and the
         * first window of a process runs before the load is known */
        for (int r = 0; s == ADIA_OK && *F && !h->device && r < 2; r++) {
            double a = INFINITY, g = INFINITY;
            s = time_spmv(*F, 0, x, y, &a);
            if (s == ADIA_OK) s = time_spmv(G, 0, x, y, &g);
            if (a < P->measured_ms) {
                best -= P->measured_ms - a;
                P->measured_ms = P->cand_measured_ms[pick] = a;
            }
            if (g < ms) ms = g;
        }
        if (s == ADIA_OK) {
            P->cand_measured_ms[i] = ms;
            /* the build's share from the model's conversion time: the
             * build's wall clock (one untimed run, page faults, the load)
             * moved the score of a 0.04 ms SpMV by 10-50% at 1000 calls */
            double score = ms + (h->device ? P->build_ms : P->cand[i].convert_ms) /
                                    (double)h->calls;
            if (*F && score < best && score * (1 + tie) >= best)
                adia__plan_note(P, "measure: %s %.4f ms within %.0f%% of %s %.4f ms: the "
                                "cheaper build kept", P->cand[i].format, score, 100 * tie,
                                adia_format_name(*F), best);
            if (score * (1 + tie) < best || !*F) {
                best = score;
                best_build = P->build_ms;
                adia_format_destroy(*F);
                *F = G;
                P->measured_ms = ms;
                pick = i;
                continue;
            }
        }
        adia_format_destroy(G);
    }
    if (*F) P->build_ms = best_build;
    if (s != ADIA_OK) {
        adia_format_destroy(*F);
        *F = NULL;
    }
    free(x);
    free(y);
    return s;
}

/* A GPU plan whose hints allow kernels that are not bitwise reproducible,
 * chosen without measuring: the chosen format's such kernel where the
 * model rated the format at it (adia__plan_gpu_efficiency), unless the
 * caller named a kernel (parameter kernel=).  MEASURE chose by timing. */
adia_status adia__plan_nondeterministic(adia_plan *P, const plan_hints *h)
{
    const adia_gpu_ops *g = P->F->ops->gpu;
    if (!h->device || !h->nondeterministic || h->chooser == ADIA_CHOOSE_MEASURE ||
        h->params.gpu_kernel != ADIA_KERNEL_AUTO || !g || !g->kernel_nondet ||
        adia__plan_gpu_efficiency(P->F->ops, h) != g->eff_nondet)
        return ADIA_OK;
    adia_status s = adia_format_set_kernel(P->F, g->kernel_nondet);
    if (s == ADIA_ERR_UNSUPPORTED) {   /* e.g. csr past 2^31 nonzeros: keep the upload's */
        adia__plan_note(P, "model: %s kernel %s not available (%s): kept %s", adia_format_name(P->F),
                        adia_gpu_kernel_name(g->kernel_nondet), adia_last_error(),
                        adia_gpu_kernel_name(adia_format_kernel(P->F)));
        adia_clear_error();
        return ADIA_OK;
    }
    ADIA_TRY(s);
    adia__plan_note(P, "model: %s on its %s kernel (efficiency %.2f; not bitwise reproducible, "
                    "allowed by the hints)", adia_format_name(P->F),
                    adia_gpu_kernel_name(g->kernel_nondet), g->eff_nondet);
    return ADIA_OK;
}

/* The formats to try in order for the plan's chooser. */
static int attempt_order(const adia_plan *P, const plan_hints *h, const char **names)
{
    int n = 0;
    if (h->chooser == ADIA_CHOOSE_FIXED) names[n++] = h->format;
    if (h->chooser == ADIA_CHOOSE_RULES) names[n++] = P->f.format;
    if (h->chooser != ADIA_CHOOSE_FIXED)
        for (int i = 0; i < P->n_cand; i++) names[n++] = P->cand[i].format;
    names[n++] = "csr";
    return n;
}

static adia_status choose_and_build(adia_plan *P, const adia_matrix *A, const plan_hints *h)
{
    if (h->chooser == ADIA_CHOOSE_MEASURE) {
        ADIA_TRY(measure(P, A, h, &P->F));
        if (P->F) return ADIA_OK;
        adia__plan_note(P, "measure: none of the model's best %d could be built", ADIA_PLAN_MEASURE_TOP);
    }
    const char *names[ADIA_PLAN_MAX_CANDIDATES + 2];
    int n = attempt_order(P, h, names);
    for (int i = 0; i < n; i++) {
        int tried = 0;
        for (int j = 0; j < i; j++) tried |= !strcmp(names[i], names[j]);
        if (tried) continue;
        adia_status s = try_build(P, A, names[i], h, &P->F);
        if (s == ADIA_OK) {
            if (i > 0) adia__plan_note(P, "fell back to %s", names[i]);
            return ADIA_OK;
        }
        if (s != ADIA_ERR_NO_MEMORY && s != ADIA_ERR_UNSUPPORTED) return s;
        if (h->chooser == ADIA_CHOOSE_FIXED && i == 0 && h->strict)
            return adia__error(s, "format %s: %.*s", names[0], (int)strlen(P->notes) - 1,
                              P->notes);
        if (h->chooser == ADIA_CHOOSE_FIXED && i == 0 && s == ADIA_ERR_UNSUPPORTED) {
            /* the caller named it: a refusal is the caller's error, say why */
            return adia__error(ADIA_ERR_INVALID_ARG, "plan: fixed format %s: %.*s", names[0],
                              (int)strlen(P->notes) - 1, P->notes);
        }
    }
    return adia__error(ADIA_ERR_NO_MEMORY, "plan: no format fits: %.*s",
                      (int)strlen(P->notes) - 1, P->notes);
}

/* The plan's fields that do not depend on the choice. */
static adia_plan *plan_new(int32_t rows, int32_t cols, int64_t nnz, const char *name,
                           const plan_hints *h)
{
    adia_plan *P = adia__calloc(1, sizeof *P, "plan handle");
    if (!P) return NULL;
    P->magic = ADIA_MAGIC_PLAN;
    P->device = h->device;
    P->vtype = h->vtype;
    P->chooser = h->chooser;
    P->nondeterministic = h->nondeterministic;
    P->rows = rows;
    P->cols = cols;
    P->nnz = nnz;
    P->calls = h->calls;
    P->params = h->params;
    P->bandwidth_gbs = h->bandwidth_gbs;
    P->bandwidth_measured = h->bandwidth_measured;
    P->bandwidth_from = h->bandwidth_from;
    P->predicted_ms = P->measured_ms = NAN;
    for (int i = 0; i < ADIA_PLAN_MAX_CANDIDATES; i++) P->cand_measured_ms[i] = NAN;
    snprintf(P->matrix_name, sizeof P->matrix_name, "%s", name);
    return P;
}

adia_status adia__plan_adopt(adia_format *F, const plan_hints *h, const char *name,
                             adia_plan **out)
{
    adia_plan *P = plan_new(F->rows, F->cols, F->nnz, name, h);
    if (!P) {
        adia_format_destroy(F);
        return ADIA_ERR_NO_MEMORY;
    }
    P->F = F;
    *out = P;
    return ADIA_OK;
}

adia_status adia__plan_build(const adia_matrix *A, const plan_hints *h, int analyse,
                            adia_plan **out)
{
    plan_hints hb = *h;   /* with the model's bandwidth, where it will run */
    if (analyse) {
        ADIA_TRY(adia__plan_check_budget(&A->csr, "adia_plan_create"));
        ADIA_TRY(adia__plan_bandwidth(&hb));
        h = &hb;
    }
    adia_plan *P = plan_new(A->csr.rows, A->csr.cols, A->csr.nnz, A->name, h);
    if (!P) return ADIA_ERR_NO_MEMORY;
    adia_status s = ADIA_OK;
    P->hash = adia__plan_structure_hash(&A->csr);
    if (analyse) {
        double t0 = adia__now_ms();
        /* the rows that repeat the row before, found by the analysis'
         * sweep, spare the model's block counts a second comparison */
        uint8_t *repeat = adia__calloc((size_t)A->csr.rows + 1, 1, "plan: repeated rows");
        s = repeat ? adia__analyze_rows(A, NULL, &P->f, repeat) : ADIA_ERR_NO_MEMORY;
        if (s == ADIA_OK) {
            P->have_features = 1;
            s = adia__plan_model(&A->csr, &P->f, repeat, h, P->cand, &P->n_cand);
            /* GPU timings are exact enough to rank by: CPU plans only */
            if (s == ADIA_OK && !h->device) model_prefer_cheap(P);
        }
        free(repeat);
        P->analyze_ms = adia__now_ms() - t0;
    }
    if (s == ADIA_OK) s = choose_and_build(P, A, h);
    if (s == ADIA_OK) s = adia__plan_nondeterministic(P, h);
    if (s == ADIA_OK) s = plan_generated(P, h);
    if (s != ADIA_OK) {
        adia_plan_destroy(P);
        return s;
    }
    int c = find_candidate(P, adia_format_name(P->F));
    if (c >= 0) P->predicted_ms = P->cand[c].spmv_ms;
    *out = P;
    return ADIA_OK;
}

const char *adia__plan_host_route(const adia_plan_hints *given, const plan_hints *h)
{
    const char *env = getenv("ADIA_GPU_SETUP");
    if (env && !strcmp(env, "host")) return "ADIA_GPU_SETUP=host";
    if (h->chooser == ADIA_CHOOSE_RULES)
        return "chooser rules: the search engine reads the host analysis' features";
    if (h->chooser == ADIA_CHOOSE_FIXED) {
        const adia_format_ops *o = h->format ? adia__format_ops_find(h->format) : NULL;
        /* the GPU builds the diagonal formats of equal pieces, and the row
         * formats whose GPU table has a build of its own */
        if (!o || !(o->diag.piece_rows || (!o->diag.policy && o->gpu && o->gpu->build_device)))
            return "the fixed format is built on the host (the GPU builds dia, hdi, brcsd2, csr, "
                   "ell, sell)";
    }
    if (given && given->memory_budget > 0)
        return "a memory budget: the host model predicts each format's storage before building it";
    if (h->strict) return "a loaded plan file: its format, built as the host builds it";
    return NULL;
}

/* A GPU plan of a host matrix: by the device path where it applies (the
 * CSR uploaded once, analysed and built on the GPU), else on the host, the
 * reason noted either way (adia_plan_explain).  *done 0: the caller plans
 * on the host. */
static adia_status plan_on_device(const adia_matrix *A, const adia_plan_hints *hints,
                                  const plan_hints *h, adia_plan **plan, char *why, size_t len)
{
    const char *route = adia__plan_host_route(hints, h);
    if (route) {
        snprintf(why, len, "planned on the host, format uploaded: %s", route);
        return ADIA_OK;
    }
    /* the device analysis holds per-row and per-diagonal arrays as the
     * host's does: the same budget, checked before the upload */
    if (h->chooser != ADIA_CHOOSE_FIXED)
        ADIA_TRY(adia__plan_check_budget(&A->csr, "adia_plan_create"));
#ifdef ADIA_HAVE_CUDA
    char declined[320];
    adia_status s = adia__plan_create_from_host(A, h, plan, declined, sizeof declined);
    if (s == ADIA_ERR_NO_MEMORY) {   /* the host path builds one format at a time, with fallbacks */
        snprintf(declined, sizeof declined, "the GPU ran out of memory (%.250s)", adia_last_error());
        adia_clear_error();
        s = ADIA_OK;
    }
    ADIA_TRY(s);
    if (!*plan) snprintf(why, len, "planned on the host after the upload: %s", declined);
#else
    (void)A;
    (void)plan;
    snprintf(why, len, "planned on the host: built without CUDA");
#endif
    return ADIA_OK;
}

/* The host's planning (analysis, model, builds on the host, the format
 * uploaded for a GPU plan), why noted in its explanation. */
static adia_status plan_on_host(const adia_matrix *A, plan_hints *h, const char *why,
                                adia_plan **plan)
{
    /* FIXED needs no analysis: the caller chose */
    const int analyse = h->chooser != ADIA_CHOOSE_FIXED;
    adia_status s = adia__plan_build(A, h, analyse, plan);
    if (s == ADIA_OK && why && why[0]) adia__plan_note(*plan, "%s", why);
    if (s == ADIA_OK || !h->device || !h->device_auto ||
        (s != ADIA_ERR_NO_MEMORY && s != ADIA_ERR_INVALID_ARG))
        return s;
    /* device -1: nothing ran on the GPU (no kernel, no room), so the CPU */
    char failed[320];
    snprintf(failed, sizeof failed, "%s", adia_last_error());
    h->device = 0;
    if (h->bandwidth_measured)
        ADIA_TRY(adia__plan_cpu_bandwidth_from(&h->bandwidth_gbs, &h->bandwidth_from));
    ADIA_TRY(adia__plan_build(A, h, analyse, plan));
    adia__plan_note(*plan, "no format could run on the GPU, planned for the CPU (%.300s)", failed);
    return ADIA_OK;
}

/* The checks every plan of a host matrix starts with. */
static adia_status start_plan(const adia_matrix *A, const adia_plan_hints *hints, plan_hints *h,
                              adia_plan **plan, const char *func)
{
    if (!plan) return adia__error(ADIA_ERR_INVALID_ARG, "%s: plan is NULL", func);
    *plan = NULL;
    ADIA_TRY(adia__matrix_check_handle(A, func));
    ADIA_TRY(adia__plan_resolve_hints(hints, h));
    /* a value the matrix refuses is the caller's error, not a reason for
     * every candidate to be skipped and "no format fits" */
    return adia_format_params_check(&h->params, A->csr.rows, A->csr.cols);
}

adia_status adia__plan_create_on_host(const adia_matrix *A, const adia_plan_hints *hints,
                                      const char *why, adia_plan **plan)
{
    plan_hints h;
    ADIA_TRY(start_plan(A, hints, &h, plan, "adia_plan_create"));
    return plan_on_host(A, &h, why, plan);
}

adia_status adia_plan_create(const adia_matrix *A, const adia_plan_hints *hints,
                             adia_plan **plan)
{
    plan_hints h;
    ADIA_TRY(start_plan(A, hints, &h, plan, "adia_plan_create"));
    char why[400] = "";
    if (h.device) {
        ADIA_TRY(plan_on_device(A, hints, &h, plan, why, sizeof why));
        if (*plan) return ADIA_OK;
    }
    return plan_on_host(A, &h, why, plan);
}

adia_status adia_plan_create_csr(int32_t rows, int32_t cols, int64_t nnz, const int64_t *rowptr,
                                 const int32_t *colind, const void *values, adia_value_type vt,
                                 const char *name, const adia_plan_hints *hints,
                                 adia_plan **plan)
{
    const char *f = "adia_plan_create_csr";
    if (!plan) return adia__error(ADIA_ERR_INVALID_ARG, "%s: plan is NULL", f);
    *plan = NULL;
    adia_matrix view, *A = &view;
    int viewed = 0;
    ADIA_TRY(adia__matrix_view_csr(rows, cols, nnz, rowptr, colind, values, vt, f, &view,
                                   &viewed));
    if (!viewed) ADIA_TRY(adia_matrix_create_csr(rows, cols, nnz, rowptr, colind, values, vt, &A));
    adia_status s = name ? adia_matrix_set_name(A, name) : ADIA_OK;
    if (s == ADIA_OK) s = adia_plan_create(A, hints, plan);
    if (!viewed) adia_matrix_destroy(A);
    return s;
}

adia__solve_parked **adia__plan_parked(adia_plan *plan)
{
    return plan && plan->magic == ADIA_MAGIC_PLAN ? &plan->parked : NULL;
}

void adia_plan_destroy(adia_plan *plan)
{
    if (!plan || plan->magic != ADIA_MAGIC_PLAN) return;
    plan->magic = ADIA_MAGIC_DEAD;
    if (plan->parked) plan->parked->release(plan->parked);
    adia__plan_update_free(plan);
    adia_format_destroy(plan->F);
    free(plan);
}

/* ----------------------------------------------------------- execute */

/* Do [a, a+na) and [b, b+nb) share a byte?  (Device pointers too: CUDA
 * uses one virtual address space.) */
static int overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na > 0 && nb > 0 && x < y + nb && y < x + na;
}

adia_status adia_spmv_async(adia_plan *plan, double alpha, const void *x, double beta,
                            void *y, void *stream)
{
    ADIA_TRY(check_plan(plan, "adia_spmv"));
    if ((!x && plan->cols > 0) || (!y && plan->rows > 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_spmv: x or y is NULL (%d x %d plan)",
                          (int)plan->rows, (int)plan->cols);
    size_t vs = adia_value_size(plan->vtype);
    if (overlap(x, (size_t)plan->cols * vs, y, (size_t)plan->rows * vs))
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "adia_spmv: x and y overlap (x = %p, y = %p): y must not alias x",
                          x, y);
    if (plan->device) return adia_format_spmv_gpu(plan->F, alpha, x, beta, y, stream);
    return adia_format_spmv(plan->F, alpha, x, beta, y);
}

adia_status adia_spmv(adia_plan *plan, double alpha, const void *x, double beta, void *y)
{
    return adia_spmv_async(plan, alpha, x, beta, y, NULL);
}

size_t adia_spmv_sums_work_bytes(const adia_plan *plan)
{
    if (check_plan(plan, "adia_spmv_sums_work_bytes") != ADIA_OK || !plan->device) return 0;
    return adia__gpu_dot_work_bytes(plan->rows);
}

adia_status adia_spmv_sums_async(adia_plan *plan, double alpha, const void *x, void *y,
                                 const void *xd, const void *z, double *out, void *work,
                                 void *stream)
{
    const char *f = "adia_spmv_sums_async";
    ADIA_TRY(check_plan(plan, f));
    if (!plan->device)
        return adia__error(ADIA_ERR_UNSUPPORTED, "%s: a GPU plan is needed (this one is on the "
                          "CPU)", f);
    if (!x || !y || !out || !work)
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: %s is NULL", f, !x ? "x" : !y ? "y"
                          : !out ? "out" : "work");
    if (plan->rows > plan->cols || (plan->rows != plan->cols && !xd))
        return adia__error(ADIA_ERR_DIMENSION, "%s: a %d x %d plan needs %s", f, (int)plan->rows,
                          (int)plan->cols, plan->rows > plan->cols ? "rows <= cols"
                          : "xd (each row's own x entry)");
    size_t vs = adia_value_size(plan->vtype);
    if (overlap(x, (size_t)plan->cols * vs, y, (size_t)plan->rows * vs))
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: x and y overlap (x = %p, y = %p)", f, x, y);
    return adia__gpu_spmv_sums(plan->F, alpha, x, y, xd, z, out, work, stream);
}

/* --------------------------------------------------------- accessors */

#define ACCESS(func) (check_plan(plan, func) == ADIA_OK)

const char *adia_plan_format_name(const adia_plan *plan)
{
    return ACCESS("adia_plan_format_name") ? adia_format_name(plan->F) : "";
}
int adia_plan_device(const adia_plan *plan)
{
    return ACCESS("adia_plan_device") ? plan->device : -1;
}
adia_chooser adia_plan_chooser(const adia_plan *plan)
{
    return ACCESS("adia_plan_chooser") ? plan->chooser : (adia_chooser)-1;
}
adia_value_type adia_plan_value_type(const adia_plan *plan)
{
    return ACCESS("adia_plan_value_type") ? plan->vtype : (adia_value_type)-1;
}
int32_t adia_plan_rows(const adia_plan *plan)
{
    return ACCESS("adia_plan_rows") ? plan->rows : -1;
}
int32_t adia_plan_cols(const adia_plan *plan)
{
    return ACCESS("adia_plan_cols") ? plan->cols : -1;
}
double adia_plan_predicted_ms(const adia_plan *plan)
{
    return ACCESS("adia_plan_predicted_ms") ? plan->predicted_ms : NAN;
}
double adia_plan_measured_ms(const adia_plan *plan)
{
    return ACCESS("adia_plan_measured_ms") ? plan->measured_ms : NAN;
}
adia_format *adia_plan_format(const adia_plan *plan)
{
    return ACCESS("adia_plan_format") ? plan->F : NULL;
}
