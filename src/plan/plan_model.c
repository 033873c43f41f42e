/* plan_model.c -- the planner's cost model: predicted time of one SpMV per
 * candidate format, without building any format.
 *
 *   spmv_ms    = CPU: bytes / (bandwidth * efficiency) + launches * overhead
 *                GPU: base + max(steps * step, bytes / (bandwidth * efficiency))
 *   convert_ms = (passes * CSR bytes read + storage written) / build bandwidth
 *                (+ storage / PCIe bandwidth for a GPU plan)
 *   total_ms   = convert_ms + expected_calls * spmv_ms
 *
 * Bytes come from the features and one O(nnz) pass per row-block size
 * (distinct offsets per block: exact HDI and BRCSD-II slot counts), the
 * SELL-C-sigma slice widths from the row lengths (exact, O(rows log sigma)).
 * The formulas mirror the formats' storage_bytes; tests check that they
 * agree with adia_format_bytes on the formats flagged exact. */
#define _POSIX_C_SOURCE 200809L
#include "plan_internal.h"
#include "plan_hash.h"

#include <math.h>
#include <omp.h>

/* Per format (its table's model slot, adia_format_model): fraction of
 * the streaming bandwidth its kernel reaches on the CPU and on the GPU,
 * kernel launches per SpMV, passes over the CSR while building (GPU
 * efficiencies: bytes / (time * B_read) of the best kernel on the
 * generated suite, H200, rounded down where float or unstructured inputs
 * reach less -- csr 0.85 on stencils but 0.37 on random rows, sell 0.70 /
 * 0.38; the CPU side is measured on the machine for matrices beyond the
 * caches, plan_cpu.c, and assumed below that); and the GPU's small-matrix
 * regime, where no format is bandwidth-bound and time is a fixed base plus
 * one dependent load latency per step a thread walks.  base_us and step_us
 * are least-squares fits (relative error) to the best kernel of each format
 * on the 30 shared real matrices, H200, 2026-11-22, batched (graph) timing:
 * median error 1-8% (coo 14%).  Without the step term every format cost the
 * same launch on a small matrix and bytes decided -- MODEL was within 10%
 * of the best on 10% of them; with it, on all 30 (bench/GPU-NOTES.md).
 * A format whose table has no model.storage is never chosen by the model
 * (only RULES or FIXED). */

/* Per-SpMV overhead on the CPU (ms): an OpenMP fork/join.  ASSUMED. */
static const double cpu_overhead_ms = 0.003;
/* Builds run at this fraction of the host bandwidth (scattered writes, several
 * arrays); uploads at this PCIe bandwidth (GB/s).  ASSUMED. */
static const double build_fraction = 0.25, pcie_gbs = 20.0;

/* ------------------------------------------------------------- hints */

adia_status adia__plan_resolve_hints(const adia_plan_hints *h, plan_hints *r)
{
    adia_plan_hints z;
    memset(&z, 0, sizeof z);
    if (!h) h = &z;
    memset(r, 0, sizeof *r);
    r->calls = h->expected_calls > 0 ? h->expected_calls : 1;
    if (h->vtype != ADIA_DOUBLE && h->vtype != ADIA_FLOAT)
        return adia__error(ADIA_ERR_INVALID_ARG, "plan hints: bad value type %d", (int)h->vtype);
    r->vtype = h->vtype;
    if (h->chooser < ADIA_CHOOSE_MODEL || h->chooser > ADIA_CHOOSE_FIXED)
        return adia__error(ADIA_ERR_INVALID_ARG, "plan hints: bad chooser %d", (int)h->chooser);
    r->chooser = h->chooser;
    if (r->chooser == ADIA_CHOOSE_FIXED && (!h->format || !adia_format_exists(h->format)))
        return adia__error(ADIA_ERR_INVALID_ARG, "plan hints: chooser FIXED needs a registered "
                          "format name, got '%s'", h->format ? h->format : "(null)");
    r->format = h->format;
    if (h->nondeterministic != 0 && h->nondeterministic != 1)
        return adia__error(ADIA_ERR_INVALID_ARG, "plan hints: nondeterministic must be 0 (bitwise "
                          "reproducible kernels only, the default) or 1 (also kernels whose "
                          "results may differ in the last bits between runs), got %d",
                          h->nondeterministic);
    r->nondeterministic = h->nondeterministic;
    /* one budget: the hint narrows the process budget for format storage,
     * never widens it */
    int64_t process = adia_memory_budget();
    r->budget = h->memory_budget > 0 && h->memory_budget < process ? h->memory_budget : process;
    if (h->params) r->params = *h->params;
    if (h->device < -1 || h->device > 1)
        return adia__error(ADIA_ERR_INVALID_ARG, "plan hints: device must be 0 (CPU), 1 (GPU) "
                          "or -1 (auto), got %d", h->device);
    int n = 0;
    ADIA_TRY(adia_gpu_device_count(&n));
    if (h->device == 1 && n == 0)
        return adia__error(ADIA_ERR_NO_DEVICE, "plan hints: device 1 (GPU) requested but no "
                          "CUDA device is available%s",
#ifdef ADIA_HAVE_CUDA
                          ""
#else
                          " (adia was built without CUDA)"
#endif
        );
    r->device = h->device == 1 || (h->device == -1 && n > 0);
    r->device_auto = h->device == -1;
    if (h->bandwidth_gbs > 0) {
        r->bandwidth_gbs = h->bandwidth_gbs;
        return ADIA_OK;
    }
    r->bandwidth_measured = 1;
    /* a GPU's: measured when the model first needs it (adia__plan_bandwidth);
     * the device planner never does (issue 28: no cost the user did not ask for) */
    if (r->device) return ADIA_OK;
    return adia__plan_cpu_bandwidth_from(&r->bandwidth_gbs, &r->bandwidth_from);
}

adia_status adia__plan_bandwidth(plan_hints *r)
{
    if (r->bandwidth_gbs > 0) return ADIA_OK;
#ifdef ADIA_HAVE_CUDA
    if (r->device) return adia__plan_gpu_bandwidth(&r->bandwidth_gbs);
#endif
    return adia__plan_cpu_bandwidth_from(&r->bandwidth_gbs, &r->bandwidth_from);
}

/* ------------------------------------------------------- byte counts */

/* Saturating arithmetic: a count past INT64_MAX / 2 means "too big to
 * predict" (the format's own build would report the overflow). */
#define TOO_BIG (INT64_MAX / 2)
static int64_t smul(int64_t a, int64_t b)
{
    int64_t r;
    return adia_mul_i64(a, b, &r) && r < TOO_BIG ? r : TOO_BIG;
}
static int64_t sadd(int64_t a, int64_t b)
{
    int64_t r;
    return adia_add_i64(a, b, &r) && r < TOO_BIG ? r : TOO_BIG;
}

/* Distinct offsets per block of B rows, in one pass: slots = sum K_b*len_b,
 * offsets = sum K_b; groups counts runs of blocks whose offset sets differ
 * (an order-free hash of the set): an upper bound of the core's groups. */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A thread's set of the offsets seen in the current block: stamps over
 * the offset range (a band's width: cache-resident), or, where that range
 * is wide (an unstructured matrix: rows + cols slots, each stamp a cache
 * miss -- 40% of random:1000000,7's planning), a hash table a few times
 * the largest block's nonzeros.  Entries stamped with block b + 1 are
 * this block's: neither needs clearing between blocks. */
typedef struct offset_set {
    int64_t *stamp;   /* span entries, or 2 per table slot (stamp, offset) */
    int64_t omin;
    uint64_t mask;    /* table slots - 1; 0: stamps over the range */
} offset_set;

/* Add offset o to block b's set: 1 if it was not in it. */
static int set_add(offset_set *s, int64_t o, int64_t b)
{
    if (!s->mask) {
        if (s->stamp[o - s->omin] == b + 1) return 0;
        s->stamp[o - s->omin] = b + 1;
        return 1;
    }
    for (uint64_t i = ((uint64_t)o * 0x9e3779b97f4a7c15ull >> 32) & s->mask;; i = (i + 1) & s->mask) {
        int64_t *e = s->stamp + 2 * i;
        if (e[0] != b + 1) {   /* a free slot for this block: o is new */
            e[0] = b + 1, e[1] = o;
            return 1;
        }
        if (e[1] == o) return 0;
    }
}

/* Block b's distinct offsets K and their hash (mix64 summed: any order).
 * A row with the offsets of the row before adds none: it is skipped, as
 * the analysis' map says (repeat) or by comparing (count_blocks was the
 * model's largest pass on lap3d7:160). */
static void block_offsets(const adia_csr *A, const uint8_t *repeat, int32_t B, int64_t b,
                          offset_set *set, int64_t *K, uint64_t *h)
{
    const int64_t r0 = b * B, r1 = r0 + B < A->rows ? r0 + B : A->rows;
    int64_t k = 0;
    uint64_t sum = 0;
    for (int64_t r = r0; r < r1; r++) {
        if (r > r0 && (repeat ? repeat[r] != 0
                              : adia__csr_same_offsets(A, (int32_t)r - 1, (int32_t)r)))
            continue;
        for (int64_t j = A->rowptr[r]; j < A->rowptr[r + 1]; j++) {
            const int64_t o = (int64_t)A->colind[j] - r;
            if (!set_add(set, o, b)) continue;
            k++;
            sum += mix64((uint64_t)(o + A->rows - 1));
        }
    }
    *K = k;
    *h = sum;
}

/* Slots of a hash table for blocks of B rows: a power of two at least
 * twice the nonzeros of the fullest block. */
static uint64_t table_slots(const adia_csr *A, int32_t B, int64_t nb)
{
    int64_t most = 1;
    for (int64_t b = 0; b < nb; b++) {
        const int64_t r0 = b * B, r1 = r0 + B < A->rows ? r0 + B : A->rows;
        const int64_t n = A->rowptr[r1] - A->rowptr[r0];
        most = n > most ? n : most;
    }
    uint64_t slots = 16;
    while (slots < 2 * (uint64_t)most) slots *= 2;
    return slots;
}

/* The blocks on threads, each with its offset set (stamps over the range
 * as many threads as fit the one array over rows + cols that
 * model_peak_bytes allows, or a hash table each).  Then the runs, in order. */
static adia_status count_blocks(const adia_csr *A, const adia_features *f,
                                const uint8_t *repeat, int32_t B, adia_block_count *c)
{
    memset(c, 0, sizeof *c);
    /* every offset lies in [-lower, upper] (f is A's own analysis): no
     * pass over the rows for the range, which cost 12% of the planning */
    const int64_t omin = -(int64_t)f->lower_bandwidth, omax = f->upper_bandwidth;
    const int64_t span = omax - omin + 1, nb = ((int64_t)A->rows + B - 1) / B;
    const uint64_t slots = span > (1 << 15) ? table_slots(A, B, nb) : 0;   /* narrow: stamps */
    const int hashed = slots && (uint64_t)span > 8 * slots;
    int64_t fit = ((int64_t)A->rows + A->cols) / span;
    const int nt = hashed || fit >= adia__threads() ? adia__threads() : fit < 1 ? 1 : (int)fit;
    const int64_t each = hashed ? 2 * (int64_t)slots : span;   /* int64 entries a thread */
    int64_t *stamp = adia__calloc((size_t)(each * nt), sizeof *stamp, "plan: offset stamps");
    int64_t *K = adia__alloc((size_t)nb + 1, sizeof *K, "plan: offsets per block");
    uint64_t *h = adia__alloc((size_t)nb + 1, sizeof *h, "plan: offsets per block");
    if (!stamp || !K || !h) {
        free(stamp), free(K), free(h);
        return ADIA_ERR_NO_MEMORY;
    }
#pragma omp parallel num_threads(nt) if (nt > 1 && A->nnz > 200000)
    {
        offset_set set = {stamp + each * omp_get_thread_num(), omin, hashed ? slots - 1 : 0};
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nb; b++) block_offsets(A, repeat, B, b, &set, &K[b], &h[b]);
    }
    for (int64_t b = 0; b < nb; b++) {
        const int64_t r0 = b * B, r1 = r0 + B < A->rows ? r0 + B : A->rows;
        c->blocks++;
        c->slots = sadd(c->slots, smul(K[b], r1 - r0));
        c->offsets += K[b];
        if (K[b] > c->kmax) c->kmax = K[b];
        if (b == 0 || K[b] != K[b - 1] || h[b] != h[b - 1]) {
            c->groups++;
            c->group_offsets += K[b];
        }
    }
    free(stamp), free(K), free(h);
    return ADIA_OK;
}

static int cmp_len_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* len[0..n) in descending order: a counting sort when the lengths span
 * few values (nearly always: a window's rows differ by a few entries),
 * else qsort. */
static void sort_desc(int64_t *len, int64_t n)
{
    enum { SPAN = 64 };
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        lo = len[i] < lo ? len[i] : lo;
        hi = len[i] > hi ? len[i] : hi;
    }
    if (n == 0 || hi - lo >= SPAN) {
        qsort(len, (size_t)n, sizeof *len, cmp_len_desc);
        return;
    }
    int64_t count[SPAN] = {0};
    for (int64_t i = 0; i < n; i++) count[len[i] - lo]++;
    int64_t at = 0;
    for (int64_t v = hi - lo; v >= 0; v--)
        for (int64_t k = 0; k < count[v]; k++) len[at++] = lo + v;
}

static int64_t row_len(const adia_csr *A, int64_t i) { return A->rowptr[i + 1] - A->rowptr[i]; }

/* SELL-C-sigma slots: rows sorted by length in windows of sigma, slices of
 * C rows padded to their longest (as sell.c).  -1 for parameters sell.c
 * refuses.  Windows on threads, each sorted in a scratch of sigma lengths
 * of its thread's own (no array over all the rows: 33 MB at 4 M rows,
 * touched afresh at every plan); a sorted slice's longest row is its
 * first.  The sum fits: at most rows + C slots of at most cols each. */
static adia_status sell_slots(const adia_csr *A, const adia_format_params *p,
                              int64_t *slots, int64_t *slices)
{
    int64_t C = adia_param(p->sell_c, 32), sigma = p->sell_sigma;
    if (sigma <= 0) sigma = C >= 256 ? C : (256 + C - 1) / C * C;
    *slots = *slices = -1;
    if (sigma != 1 && sigma % C) return ADIA_OK;
    const int64_t rows = A->rows;
    int64_t total = 0;
    if (sigma == 1) {   /* no sorting: each slice's longest row in place */
#pragma omp parallel for reduction(+ : total) schedule(static) num_threads(adia__threads()) \
    if (rows > 65536)
        for (int64_t s0 = 0; s0 < rows; s0 += C) {
            int64_t wmax = 0;
            for (int64_t q = s0; q < rows && q < s0 + C; q++)
                wmax = row_len(A, q) > wmax ? row_len(A, q) : wmax;
            total += wmax * C;
        }
    } else {
        const int64_t windows = (rows + sigma - 1) / sigma, W = sigma < rows ? sigma : rows;
        const int nt = windows < adia__threads() ? (int)(windows > 0 ? windows : 1)
                                                 : adia__threads();
        int64_t *scratch = adia__alloc((size_t)(W * nt) + 1, sizeof *scratch,
                                       "plan: row lengths of SELL's windows");
        if (!scratch) return ADIA_ERR_NO_MEMORY;
#pragma omp parallel num_threads(nt) reduction(+ : total) if (rows > 65536)
        {
            int64_t *len = scratch + W * omp_get_thread_num();
#pragma omp for schedule(static)
            for (int64_t w = 0; w < windows; w++) {
                const int64_t w0 = w * sigma, n = rows - w0 < sigma ? rows - w0 : sigma;
                for (int64_t i = 0; i < n; i++) len[i] = row_len(A, w0 + i);
                sort_desc(len, n);
                for (int64_t s0 = 0; s0 < n; s0 += C) total += len[s0] * C;
            }
        }
        free(scratch);
    }
    *slots = total < TOO_BIG ? total : TOO_BIG;
    *slices = (rows + C - 1) / C;
    return ADIA_OK;
}

/* The model pass at its peak: one int64 offset stamp per diagonal slot
 * (count_blocks; the stamps of the two block sizes are not held at once),
 * or SELL's row lengths, fewer. */
static int64_t model_peak_bytes(const adia_csr *A)
{
    return adia_sat_mul((int64_t)A->rows + A->cols, sizeof(int64_t));
}

adia_status adia__plan_check_budget(const adia_csr *A, const char *func)
{
    int64_t analysis = adia__analyze_peak_bytes(A->rows, A->cols, A->nnz);
    int64_t model = model_peak_bytes(A);
    char what[192];
    snprintf(what, sizeof what, "%s: planning a %d x %d matrix (analysis and cost model over "
             "%lld diagonal slots)", func, (int)A->rows, (int)A->cols,
             (long long)A->rows + A->cols);
    return adia__budget_check(analysis > model ? analysis : model, what);
}

/* What every format's storage prediction reads: the features and the
 * counts of one pass per row-block size and of SELL's slices. */
static adia_status model_input(const adia_csr *A, const adia_features *f,
                               const uint8_t *repeat, const plan_hints *h, adia_model_input *in)
{
    memset(in, 0, sizeof *in);
    in->A = A;
    in->f = f;
    in->p = &h->params;
    in->vtype = h->vtype;
    int32_t B = adia_param(h->params.block_rows, 256), hack = adia_param(h->params.hack, 128);
    ADIA_TRY(count_blocks(A, f, repeat, B, &in->block));
    if (hack == B) in->hack = in->block;
    else ADIA_TRY(count_blocks(A, f, repeat, hack, &in->hack));
    return sell_slots(A, &h->params, &in->sell_slots, &in->sell_slices);
}

static int64_t model_steps(const adia_model_input *in, adia_model_steps k)
{
    return k == ADIA_STEPS_N_DIAG ? in->f->n_diag : k == ADIA_STEPS_HACK ? in->hack.kmax
         : k == ADIA_STEPS_BLOCK ? in->block.kmax : in->f->row_max;
}

/* ------------------------------------------------------------- model */

double adia__plan_gpu_efficiency(const adia_format_ops *ops, const plan_hints *h)
{
    const adia_gpu_ops *g = ops->gpu;
    return h->nondeterministic && g && g->kernel_nondet && g->eff_nondet > ops->model.eff_gpu
               ? g->eff_nondet : ops->model.eff_gpu;
}

static int cmp_total(const void *a, const void *b)
{
    const adia_plan_candidate *x = a, *y = b;
    return (x->total_ms > y->total_ms) - (x->total_ms < y->total_ms);
}

/* The candidates of `in` ranked by total time: every format with a model
 * (a GPU plan: and a GPU table), or those named in only[] alone (NULL-
 * terminated; NULL: all).  Conversion: passes over the master CSR and the
 * storage written at build_gbs x build_fraction, plus the upload over PCIe
 * for a GPU plan built on the host (upload != 0). */
static void score(const adia_model_input *in, const plan_hints *h, double build_gbs, int upload,
                  const char *const *only, adia_plan_candidate *out, int *n)
{
    const adia_csr *A = in->A;
    int64_t vec = adia__vector_bytes(A->rows, A->cols, h->vtype);
    double csr_read = ((double)A->rows + 1) * 8 + (double)A->nnz * 12;   /* master, double */
    const double gbs = h->bandwidth_gbs > 0 ? h->bandwidth_gbs : PLAN_GPU_ASSUMED_GBS;
    *n = 0;
    for (int i = 0; i < adia_format_count() && *n < ADIA_PLAN_MAX_CANDIDATES; i++) {
        const adia_format_ops *ops = adia__format_ops_at(i);
        const adia_format_model *m = &ops->model;
        if (!m->storage || (h->device && !ops->gpu)) continue;
        int listed = !only;
        for (int k = 0; only && only[k]; k++) listed |= !strcmp(only[k], ops->name);
        if (!listed) continue;
        int exact = 0;
        int64_t storage = m->storage(in, &exact);
        if (storage < 0 || storage >= TOO_BIG) continue;
        adia_plan_candidate *c = &out[(*n)++];
        memset(c, 0, sizeof *c);
        snprintf(c->format, sizeof c->format, "%s", ops->name);
        c->storage_bytes = storage;
        c->bytes = storage + vec;
        c->exact = exact;
        int measured;
        c->efficiency = h->device ? adia__plan_gpu_efficiency(ops, h) :
                                    adia__plan_cpu_efficiency(ops, A, &measured);
        /* GB/s = 1e6 bytes per ms */
        double stream_ms = (double)c->bytes / (gbs * 1e6 * c->efficiency);
        if (h->device)
            c->spmv_ms = 1e-3 * (m->base_us + fmax(m->step_us * (double)model_steps(in, m->steps),
                                                   1e3 * stream_ms));
        else
            c->spmv_ms = stream_ms + m->launches * cpu_overhead_ms;
        c->convert_ms = (m->passes * csr_read + (double)storage) /
                        (build_gbs * build_fraction * 1e6);
        if (upload) c->convert_ms += (double)storage / (pcie_gbs * 1e6);
        c->total_ms = c->convert_ms + (double)h->calls * c->spmv_ms;
    }
    qsort(out, (size_t)*n, sizeof *out, cmp_total);
}

adia_status adia__plan_model(const adia_csr *A, const adia_features *f, const uint8_t *repeat,
                            const plan_hints *h, adia_plan_candidate *out, int *n)
{
    adia_model_input in;
    ADIA_TRY(model_input(A, f, repeat, h, &in));
    double host_gbs = h->bandwidth_gbs;
    if (h->device) ADIA_TRY(adia__plan_cpu_bandwidth(&host_gbs));
    score(&in, h, host_gbs, h->device, NULL, out, n);
    return ADIA_OK;
}

adia_status adia__plan_model_rows(int32_t rows, int32_t cols, int64_t nnz, int64_t row_max,
                                  int64_t sell_slots, int64_t sell_slices, const plan_hints *h,
                                  adia_plan_candidate *out, int *n)
{
    static const char *const rows_only[] = {"csr", "ell", "sell", NULL};
    const adia_csr A = {.rows = rows, .cols = cols, .nnz = nnz, .vtype = ADIA_DOUBLE};
    adia_features f;
    memset(&f, 0, sizeof f);
    f.rows = rows;
    f.cols = cols;
    f.nnz = nnz;
    f.row_max = (int32_t)(row_max < INT32_MAX ? row_max : INT32_MAX);
    adia_model_input in;
    memset(&in, 0, sizeof in);
    in.A = &A;
    in.f = &f;
    in.p = &h->params;
    in.vtype = h->vtype;
    in.sell_slots = sell_slots;
    in.sell_slices = sell_slices;
    const double gbs = h->bandwidth_gbs > 0 ? h->bandwidth_gbs : PLAN_GPU_ASSUMED_GBS;
    score(&in, h, gbs, 0, rows_only, out, n);
    return ADIA_OK;
}

adia_status adia_plan_candidates(const adia_matrix *A, const adia_plan_hints *h,
                                 adia_plan_candidate *out, int max, int *n)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_plan_candidates"));
    if (!n || (max > 0 && !out))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_plan_candidates: NULL argument");
    *n = 0;
    plan_hints r;
    adia_features f;
    adia_plan_candidate all[ADIA_PLAN_MAX_CANDIDATES];
    int count;
    ADIA_TRY(adia__plan_resolve_hints(h, &r));
    ADIA_TRY(adia__plan_bandwidth(&r));
    ADIA_TRY(adia__plan_check_budget(&A->csr, "adia_plan_candidates"));
    ADIA_TRY(adia_matrix_analyze(A, NULL, &f));
    ADIA_TRY(adia__plan_model(&A->csr, &f, NULL, &r, all, &count));
    if (max <= 0 && !out) {
        *n = count;
        return ADIA_OK;
    }
    for (int i = 0; i < count && i < max; i++) out[(*n)++] = all[i];
    return ADIA_OK;
}

/* ----------------------------------------------------------- hashing */

/* plan_hash.h's hash: every entry mixed with its position, the terms
 * summed (mod 2^64) on threads, the same bits whatever their number.  Plan
 * files of version 1 kept a serial chain of dependent multiplies: about
 * 50 ms of adia_plan_create for lap3d7:120's 13.7 M entries on 2 cores,
 * more than the plan's analysis. */
uint64_t adia__plan_structure_hash(const adia_csr *A)
{
    uint64_t sr = 0, sc = 0;
    const int par = A->nnz > 65536;
#pragma omp parallel for reduction(+ : sr) schedule(static) if (par) num_threads(adia__threads())
    for (int64_t i = 0; i <= A->rows; i++) sr += adia__hash_row(i, A->rowptr[i]);
#pragma omp parallel for reduction(+ : sc) schedule(static) if (par) num_threads(adia__threads())
    for (int64_t j = 0; j < A->nnz; j++) sc += adia__hash_col(j, A->colind[j]);
    return adia__hash_combine(A->rows, A->cols, A->nnz, sr, sc);
}

/* The value update's hash (plan_hash.h), the same way. */
uint64_t adia__plan_update_hash(const adia_csr *A)
{
    uint64_t sr = 0, sc = 0;
    const int par = A->nnz > 65536;
#pragma omp parallel for reduction(+ : sr) schedule(static) if (par) num_threads(adia__threads())
    for (int64_t i = 0; i <= A->rows; i++) sr += adia__uhash_row(i, A->rowptr[i]);
#pragma omp parallel for reduction(+ : sc) schedule(static) if (par) num_threads(adia__threads())
    for (int64_t j = 0; j < A->nnz; j++) sc += adia__uhash_col(j, A->colind[j]);
    return adia__hash_combine(A->rows, A->cols, A->nnz, sr, sc);
}

uint64_t adia__plan_structure_hash_v1(const adia_csr *A)
{
    uint64_t h = mix64(((uint64_t)(uint32_t)A->rows << 32) ^ (uint32_t)A->cols);
    h = mix64(h ^ (uint64_t)A->nnz);
    for (int64_t i = 0; i <= A->rows; i++) h = mix64(h ^ (uint64_t)A->rowptr[i]) + (uint64_t)i;
    for (int64_t j = 0; j < A->nnz; j++) h = mix64(h ^ (uint32_t)A->colind[j]) + (uint64_t)j;
    return h;
}
