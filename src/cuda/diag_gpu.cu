/* diag_gpu.cu -- the GPU side of the diagonal core (diag_core.h), shared by
 * dia, hdi, brcsd1, brcsd2 and crsd: upload, the generic kernel
 * (diag_kernel.cuh), the generated kernel (codegen.c) and, for CRSD, a
 * second pass over the scatter points; the diagonal (Jacobi's) read from
 * the pieces' offset-0 slots.
 *
 * CRSD's scatter points are added after the main kernel by the shared
 * row-sorted COO pass (coo_rows.cuh): only their rows, a thread per row, no
 * atomics: deterministic. */
#include "codegen.h"
#include "diagonal.cuh"
#include "diag_build.h"
#include "diag_stage.cuh"

#include <string.h>

#include <vector>

namespace {

struct diag_dev {
    adia_gpu_head head;
    adia_value_type vt;
    const adia_diag *host;            /* the format's impl (codegen input)  */
    adia_diag_args args;              /* device pointers                    */
    void *structure;                  /* the one allocation of args' structure
                                         arrays (copy_structure)            */
    adia_coo_rows scatter;            /* CRSD scatter points, else empty    */
    adia_codegen_kernel *gen;         /* NULL until GENERATED is selected   */
    adia_codegen_kernel *gen_dot;     /* its fused-dot variant, NULL until a
                                         solver asks for it                 */
    /* A generated kernel arriving from a background compile (issue 28,
     * item 4), [0] the plain product's, [1] the fused sums' (dot): the
     * job (NULL: none started), its kernel once loaded (NULL before:
     * the generic kernel runs) and who took the load.  Written once
     * each, through atomics: a call only reads them or publishes the
     * arrival (codegen_arrived). */
    int background;                   /* 1: bg[0] replaces the generic kernel */
    adia_codegen_mode mode;           /* how the dot variant comes           */
    adia_codegen_job *job[2];
    adia_codegen_kernel *bg[2];
    int claimed[2], started[2];
    /* What the generated kernels may cost to compile (ms) and still repay:
     * the plan's calls times what they save (adia__gpu_diag_generate);
     * INFINITY for a kernel selected by name.  A fused-sums variant not in
     * the cache and dearer than that is declined once (dot_declined): the
     * generic kernel computes the sums. */
    double repay_ms;
    int dot_declined;
    int warp_rows;                    /* R of the warp kernels, 0: unaligned */
    int latency;                      /* L of adia_diag_warp_latency, the plain
                                         product's kernel (few rows, wide
                                         groups: diag_kernel.cuh); 0: not it */
    int rows_asked;                   /* parameter R (0: chosen)            */
    unsigned stage;                   /* blocks of the staged kernel, the
                                         product's kernel (diag_stage.cuh); 0: not it */
    int interleave;                   /* parameter interleave (ADIA_INTERLEAVE_*) */
};

/* The few-row kernel's loads a round for groups of up to `widest`
 * diagonals: none up to ADIA_DIAG_LATENCY_DIAGONALS, 8 where rounds of 16
 * would leave the last with 8 or fewer (17-24, 33-40, ...), else 16
 * (measured: diag_kernel.cuh). */
int latency_loads(int32_t widest)
{
    if (widest <= ADIA_DIAG_LATENCY_DIAGONALS) return 0;
    const int32_t last = widest % 16;
    return widest > 16 && last >= 1 && last <= 8 ? 8 : 16;
}

/* The staged kernel (diag_stage.cuh) and its dynamic shared memory. */
template <typename T, bool DOT>
constexpr auto stage_kernel = adia_diag_stage<T, ADIA_STAGE_S, ADIA_STAGE_DEPTH, DOT>;
template <typename T>
constexpr unsigned stage_bytes = adia_stage_bytes<T, ADIA_STAGE_S, ADIA_STAGE_DEPTH>();

/* Blocks of the staged kernel's launch for D, or 0 where the warp kernels
 * run.  It needs pieces that start at multiples of its tile and rows in
 * order (no chunk order); by default also a Hopper GPU (the bulk copies),
 * double values and at least 2 tiles for each block the SMs hold at once,
 * which is then the grid.  With fewer tiles a block's first copies are not
 * hidden behind earlier tiles (a tile a block ran 1.3-1.4x slower than the
 * warp kernels on lap3d7:256 and lap2d5:2048); in float (copies of 512
 * bytes a diagonal, the warp kernels at 4 rows a thread) lap3d7:160 ran
 * 5-16% slower (H200, 2026-11-28).  (A library built only for an older
 * target and run on Hopper through the PTX JIT runs the kernel's fallback
 * loads: correct, not faster; build for sm_90, ADIA_CUDA_ARCHS.)
 * stage=off: never;
 * stage=force: wherever the layout allows, on any GPU, on a grid of a
 * third of the tiles (tests: each block walks tiles, buffers wrap). */
unsigned stage_blocks(const adia_diag *D, const adia_diag_args &a, adia_value_type vt, int mode)
{
    if (mode == ADIA_STAGE_OFF || a.chunk_order || D->rows == 0) return 0;
    for (int32_t p = 0; p < D->n_pieces; p++)
        if (D->piece_start[p] % ADIA_STAGE_TILE) return 0;
    const unsigned tiles = (unsigned)((D->rows + ADIA_STAGE_TILE - 1) / ADIA_STAGE_TILE);
    if (mode == ADIA_STAGE_FORCE) return (tiles + 2) / 3;
    int dev = 0, major = 0, sms = 0, per = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = vt == ADIA_DOUBLE
                ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, stage_kernel<double, false>,
                                                                ADIA_STAGE_THREADS, stage_bytes<double>)
                : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, stage_kernel<float, false>,
                                                                ADIA_STAGE_THREADS, stage_bytes<float>);
    if (e != cudaSuccess) {
        cudaGetLastError();   /* a query's own error: the warp kernels run */
        return 0;
    }
    const unsigned resident = (unsigned)per * (unsigned)sms;
    return major >= 9 && vt == ADIA_DOUBLE && resident > 0 && tiles >= 2 * resident ? resident : 0;
}

template <typename T, bool DOT>
adia_status stage_launch(unsigned n, const adia_diag_args &a, T alpha, T beta, const T *x, T *y,
                         const adia_dot_work &dw, cudaStream_t st)
{
    stage_kernel<T, DOT><<<n, ADIA_STAGE_THREADS, stage_bytes<T>, st>>>(a, alpha, beta, x, y, dw);
    return adia__gpu_launch_check("diagonal staged kernel");
}

void diag_free(void *p)
{
    diag_dev *d = (diag_dev *)p;
    if (!d) return;
    cudaFree(d->structure);   /* every structure array (copy_structure) */
    cudaFree(const_cast<void *>(d->args.data));
    adia__coo_rows_free(&d->scatter);
    adia__codegen_free(d->gen);
    adia__codegen_free(d->gen_dot);
    for (int v = 0; v < 2; v++) {
        adia__codegen_job_release(d->job[v]);   /* never waits for a running compile */
        adia__codegen_free(d->bg[v]);
    }
    free(d);
}

/* chunk_piece[c] = piece holding row c*32, last entry n_pieces-1. */
adia_status chunk_map(const adia_diag *D, int **out, int64_t *n)
{
    int64_t chunks = ((int64_t)D->rows + ADIA_DIAG_CHUNK - 1) / ADIA_DIAG_CHUNK;
    int *m = (int *)adia__alloc((size_t)chunks + 1, sizeof *m, "chunk map");
    if (!m) return ADIA_ERR_NO_MEMORY;
    int p = 0;
    for (int64_t c = 0; c < chunks; c++) {
        int64_t r = c * ADIA_DIAG_CHUNK;
        while (p + 1 < D->n_pieces && D->piece_start[p + 1] <= r) p++;
        m[c] = p;
    }
    m[chunks] = D->n_pieces > 0 ? D->n_pieces - 1 : 0;
    *out = m;
    *n = chunks + 1;
    return ADIA_OK;
}

/* The warp kernels' piece descriptors (diag_kernel.cuh, adia_warp_locate). */
adia_status piece_descs(const adia_diag *D, int **out)
{
    int *q = (int *)adia__alloc((size_t)D->n_pieces, 8 * sizeof *q, "piece descriptors");
    if (!q) return ADIA_ERR_NO_MEMORY;
    for (int32_t p = 0; p < D->n_pieces; p++) {
        int *e = q + 8 * (size_t)p;
        uint64_t data = (uint64_t)D->piece_data[p];
        int32_t g = D->piece_group[p];
        e[0] = (int)(uint32_t)data;
        e[1] = (int)(uint32_t)(data >> 32);
        e[2] = D->piece_start[p];
        e[3] = D->piece_start[p + 1] - D->piece_start[p];
        e[4] = g;
        e[5] = D->group_start[g];
        e[6] = D->group_start[g + 1] - D->group_start[g];
        e[7] = 0;
    }
    *out = q;
    return ADIA_OK;
}

/* Far diagonals: the chunk order that keeps x in L2 (adia_diag_chunk).
 * Rows r and r + D read the same x when two diagonals lie D apart; with the
 * rows in order, everything streamed through L2 in between (values, y, the
 * rest of x: row_bytes a row) evicts x before its second read once
 * D * row_bytes exceeds L2.  The matrix's offsets are cut into clusters of
 * offsets less than that far apart.  When there are two or more and their
 * centres are evenly spaced D apart (k coupled fields: offsets near
 * multiples of n/k), runs of chunks D rows apart are made to run side by
 * side: run j of period q is chunks q*P + j*run ... (P = D / unit chunks),
 * all periods' run j before run j + 1.  Unevenly spaced far diagonals
 * (type III: random far offsets) keep the row order: there the order made
 * every kernel 5-12% slower (H200, 2026-11-22).  *order stays NULL when
 * nothing is far (every stencil and band we have).
 * parameter interleave=off turns it off (measurements), =force takes L2 as
 * 4 KB and runs of one chunk (tests: small matrices get the order).  Runs
 * of 64, 2048 and 16384 rows measured the same on type II. */
constexpr int RUN_ROWS = 2048;

int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* D in rows, 0 when no diagonals are far or the clusters are uneven. */
int64_t far_distance(const int *sorted, int64_t n, double near)
{
    int64_t lo = sorted[0], prev = 0, gap_min = 0, gap_max = 0;
    int clusters = 0;
    for (int64_t k = 1; k <= n; k++) {
        if (k < n && sorted[k] - sorted[k - 1] <= near) continue;
        int64_t centre = (lo + (int64_t)sorted[k - 1]) / 2;
        if (clusters++ > 0) {
            int64_t gap = centre - prev;
            gap_min = clusters == 2 || gap < gap_min ? gap : gap_min;
            gap_max = gap > gap_max ? gap : gap_max;
        }
        prev = centre;
        if (k < n) lo = sorted[k];
    }
    return clusters >= 2 && gap_max - gap_min <= near ? gap_min : 0;
}

adia_status interleave_order(const adia_diag *D, int unit, int mode, int **order, int *n_out)
{
    *order = NULL;
    *n_out = 0;
    int64_t terms = D->group_start[D->n_groups];
    if (mode == ADIA_INTERLEAVE_OFF || terms < 2 || D->rows == 0) return ADIA_OK;
    int dev = 0, l2 = 4096;
    if (mode != ADIA_INTERLEAVE_FORCE) {
        ADIA_CUDA_TRY(cudaGetDevice(&dev));
        ADIA_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    }
    int *o = (int *)adia__alloc((size_t)terms, sizeof *o, "offsets (chunk order)");
    if (!o) return ADIA_ERR_NO_MEMORY;
    memcpy(o, D->offsets, (size_t)terms * sizeof *o);
    qsort(o, (size_t)terms, sizeof *o, cmp_int);
    double vs = (double)adia_value_size(D->vtype);
    double row_bytes = vs * ((double)D->piece_data[D->n_pieces] / D->rows + 2.0);
    int64_t dist = far_distance(o, terms, l2 / row_bytes);
    free(o);
    int64_t chunks = ((int64_t)D->rows + unit - 1) / unit, P = (dist + unit / 2) / unit;
    if (dist == 0 || P < 1 || P >= chunks) return ADIA_OK;
    bool forced = mode == ADIA_INTERLEAVE_FORCE;      /* tests: runs of one chunk */
    int64_t run = (forced ? unit : RUN_ROWS) / unit;
    run = run < 1 ? 1 : run > P ? P : run;
    int *m = (int *)adia__alloc((size_t)chunks, sizeof *m, "chunk order");
    if (!m) return ADIA_ERR_NO_MEMORY;
    int64_t at = 0;
    for (int64_t j = 0; j < P; j += run)
        for (int64_t q = 0; q * P + j < chunks; q++)
            for (int64_t c = q * P + j; c < q * P + j + run && c < (q + 1) * P && c < chunks; c++)
                m[at++] = (int)c;
    *order = m;
    *n_out = (int)chunks;
    return at == chunks ? ADIA_OK
                        : adia__error(ADIA_ERR_INTERNAL, "chunk order covers %lld of %lld chunks",
                                     (long long)at, (long long)chunks);
}

adia_status diag_select(void *p, adia_gpu_kernel k)
{
    diag_dev *d = (diag_dev *)p;
    d->background = 0;   /* an explicit choice overrides a background arrival */
    if (k == ADIA_KERNEL_GENERATED && !d->gen)
        ADIA_TRY(adia__codegen_compile(d->host, d->vt, d->rows_asked, 0, &d->gen));
    d->head.kernel = k;
    return ADIA_OK;
}

/* Everything to the device; the data only when the device does not hold
 * it already (d->args.data set: the GPU build's output, adopted). */
/* The host arrays of the structure, laid end to end (each at a multiple
 * of 256 bytes, as cudaMalloc would place them) in one device allocation
 * by one copy: the plan of an mg level took eight cudaMalloc and eight
 * copies, 55 us of its 0.27 ms set-up (H200, 2026-11-28), and as many
 * cudaFree when it went. */
struct structure_part {
    void **dst;        /* the device pointer to set (NULL where n is 0) */
    const void *src;
    int64_t n;
    size_t size;
};

adia_status copy_structure(const structure_part *part, int count, void **block)
{
    size_t at[16], total = 0;
    for (int k = 0; k < count; k++) {
        size_t bytes;
        if (part[k].n < 0 || !adia_mul_size((size_t)part[k].n, part[k].size, &bytes) ||
            total > SIZE_MAX - bytes - 256)
            return adia__error(ADIA_ERR_OVERFLOW, "diagonal structure: %lld elements overflow",
                               (long long)part[k].n);
        at[k] = total;
        total += (bytes + 255) / 256 * 256;
    }
    std::vector<char> host(total);
    for (int k = 0; k < count; k++)
        if (part[k].n > 0) memcpy(host.data() + at[k], part[k].src, (size_t)part[k].n * part[k].size);
    *block = NULL;
    if (total > 0) {
        ADIA_TRY(adia_cuda_check(cudaMalloc(block, total), "diagonal structure"));
        const adia_status s = adia_cuda_check(
            cudaMemcpy(*block, host.data(), total, cudaMemcpyHostToDevice), "diagonal structure");
        if (s != ADIA_OK) {
            cudaFree(*block);
            *block = NULL;
            return s;
        }
    }
    for (int k = 0; k < count; k++)
        *part[k].dst = part[k].n > 0 ? (char *)*block + at[k] : NULL;
    return ADIA_OK;
}

adia_status diag_copy(diag_dev *d, const adia_diag *D)
{
    size_t vs = adia_value_size(D->vtype);
    int64_t terms = D->group_start[D->n_groups];
    adia_diag_args &a = d->args;
    int *map = NULL, *desc = NULL, *order = NULL;
    int64_t nmap = 0;
    adia_status s = chunk_map(D, &map, &nmap);
    if (s == ADIA_OK) s = piece_descs(D, &desc);
    if (s == ADIA_OK)
        s = interleave_order(D, 32 * (d->warp_rows > 0 ? d->warp_rows : 1), d->interleave, &order,
                             &a.n_chunks);
    if (s == ADIA_OK) {
        const structure_part part[] = {
            {(void **)&a.piece_start, D->piece_start, D->n_pieces + 1, 4},
            {(void **)&a.piece_group, D->piece_group, D->n_pieces, 4},
            {(void **)&a.piece_data, D->piece_data, D->n_pieces + 1, 8},
            {(void **)&a.group_start, D->group_start, D->n_groups + 1, 4},
            {(void **)&a.offsets, D->offsets, terms, 4},
            {(void **)&a.chunk_piece, map, nmap, 4},
            {(void **)&a.piece_desc, desc, (int64_t)D->n_pieces * 8, 4},
            {(void **)&a.chunk_order, order, order ? a.n_chunks : 0, 4},
        };
        s = copy_structure(part, (int)(sizeof part / sizeof *part), &d->structure);
    }
    free(map);
    free(desc);
    free(order);
    ADIA_TRY(s);
    if (!a.data)
        ADIA_TRY(adia__gpu_copy_in((void **)&a.data, D->data, D->piece_data[D->n_pieces], vs,
                                  "diagonal data"));
    return adia__coo_rows_upload(D->rows, D->n_scatter, D->scatter_row, D->scatter_col,
                                D->scatter_val, vs, 0, &d->scatter);
}

/* The device side of D; dev_data: its data already on the device (owned
 * from here on, freed on failure too), or NULL to upload D->data. */
adia_status diag_make(const adia_diag *D, adia_value_type vt, const adia_format_params *p,
                      void *dev_data, void **out)
{
    if (D->vtype != vt) {
        cudaFree(dev_data);
        return adia__error(ADIA_ERR_INTERNAL, "diagonal upload: value type mismatch");
    }
    diag_dev *d = (diag_dev *)adia__calloc(1, sizeof *d, "diagonal device struct");
    if (!d) {
        cudaFree(dev_data);
        return ADIA_ERR_NO_MEMORY;
    }
    d->args.data = dev_data;
    d->vt = vt;
    d->host = D;
    d->args.rows = D->rows;
    d->args.cols = D->cols;
    d->args.n_pieces = D->n_pieces;
    d->rows_asked = p->rows_per_thread;
    d->mode = ADIA_CODEGEN_SYNC;   /* an explicit GENERATED waits for its dot variant, as before;
                                      a plan's adia__gpu_diag_generate says otherwise */
    d->repay_ms = INFINITY;
    d->interleave = p->interleave;
    d->warp_rows = adia__codegen_rows_per_thread(D, vt, d->rows_asked);
    d->latency = d->warp_rows == 1 && D->rows <= ADIA_DIAG_LATENCY_ROWS
                     ? latency_loads(adia__diag_widest_group(D))
                     : 0;
    d->head.allowed = (1u << ADIA_KERNEL_GENERIC) | (1u << ADIA_KERNEL_GENERATED);
    d->head.auto_kernel = ADIA_KERNEL_GENERIC;
    d->head.kernel = ADIA_KERNEL_GENERIC;
    d->head.block = 256;
    d->head.select = diag_select;
    adia_status s = diag_copy(d, D);
    if (s == ADIA_OK) d->stage = stage_blocks(D, d->args, vt, p->stage);
    adia_gpu_kernel asked = (adia_gpu_kernel)p->gpu_kernel;   /* parameter kernel= */
    if (s == ADIA_OK && asked != ADIA_KERNEL_AUTO && (d->head.allowed & (1u << asked)))
        s = diag_select(d, asked);
    if (s != ADIA_OK) {
        diag_free(d);
        return s;
    }
    *out = d;
    return ADIA_OK;
}

adia_status diag_upload(const void *impl, adia_value_type vt, const adia_format_params *p, void **out)
{
    return diag_make((const adia_diag *)impl, vt, p, NULL, out);
}

/* Blocks of a launch with generated kernel g (NULL: the generic one). */
unsigned diag_grid(const diag_dev *d, const adia_codegen_kernel *g)
{
    int B = d->head.block;
    if (g) return adia__codegen_grid(g, &d->args, B);
    if (d->stage) return d->stage;
    int R = d->warp_rows > 0 ? d->warp_rows : 1;
    return adia_gpu_blocks((d->args.rows + R - 1) / R, B);
}

/* ------------------------------------------- generated kernel's arrival */

/* Is st being captured into a graph (or may it be: the query failed)?
 * Loading a library is not allowed during a capture. */
bool capturing(cudaStream_t st)
{
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(st, &cs) != cudaSuccess) {
        cudaGetLastError();   /* the query's own error, not the caller's */
        return true;
    }
    return cs != cudaStreamCaptureStatusNone;
}

/* The kernel of background compile v once it has arrived, else NULL (the
 * generic kernel runs).  The first call after the compile finishes, outside
 * a capture, loads it and publishes it: from then on every call uses it --
 * the switch is between two calls, never inside one.  A failed compile or
 * load leaves the generic kernel for good (codegen_state says so). */
const adia_codegen_kernel *codegen_arrived(const diag_dev *cd, int v, cudaStream_t st)
{
    diag_dev *d = const_cast<diag_dev *>(cd);   /* the arrival is the one change a call makes */
    adia_codegen_kernel *k = __atomic_load_n(&d->bg[v], __ATOMIC_ACQUIRE);
    adia_codegen_job *job = __atomic_load_n(&d->job[v], __ATOMIC_ACQUIRE);
    if (k || !job || !adia__codegen_job_ready(job) || capturing(st)) return k;
    if (__atomic_exchange_n(&d->claimed[v], 1, __ATOMIC_ACQ_REL)) return NULL;   /* another call loads it */
    if (adia__codegen_job_load(job, &k) != ADIA_OK) {
        k = NULL;
        adia_clear_error();   /* the call goes on with the generic kernel */
    }
    __atomic_store_n(&d->bg[v], k, __ATOMIC_RELEASE);
    return k;
}

/* Start background compile v (once; a failure to start leaves the generic
 * kernel, as a failed compile does). */
void codegen_background(const diag_dev *cd, int v)
{
    diag_dev *d = const_cast<diag_dev *>(cd);
    if (__atomic_exchange_n(&d->started[v], 1, __ATOMIC_ACQ_REL)) return;
    adia_codegen_job *job = NULL;
    if (adia__codegen_start(d->host, d->vt, d->rows_asked, v, &job) != ADIA_OK) {
        adia_clear_error();
        __atomic_store_n(&d->claimed[v], 1, __ATOMIC_RELEASE);   /* nothing will arrive */
        return;
    }
    __atomic_store_n(&d->job[v], job, __ATOMIC_RELEASE);
}

/* The generated kernel a call of variant v (0 plain, 1 with the sums)
 * launches, or NULL for the generic one.  A selected generated kernel
 * (adia_format_set_kernel) is used as before; its dot variant compiles
 * when first asked, in the background unless the mode is SYNC.  A plan
 * in background mode runs the generic kernels until bg[0] arrives, then
 * the generated one (its dot variant starting then). */
adia_status gen_kernel(const diag_dev *cd, int v, cudaStream_t st,
                       const adia_codegen_kernel **g)
{
    diag_dev *d = const_cast<diag_dev *>(cd);
    *g = NULL;
    if (d->head.kernel == ADIA_KERNEL_GENERATED) {
        if (v == 0 || d->gen_dot) {
            *g = v ? d->gen_dot : d->gen;
            return ADIA_OK;
        }
        if (d->mode != ADIA_CODEGEN_BACKGROUND) {   /* the solver waits where it repays */
            if (d->dot_declined) return ADIA_OK;
            if (!(adia__codegen_estimate_ms(d->host, d->vt, d->rows_asked, 1) <= d->repay_ms) &&
                !adia__codegen_cached(d->host, d->vt, d->rows_asked, 1)) {
                d->dot_declined = 1;
                return ADIA_OK;
            }
            ADIA_TRY(adia__codegen_compile(d->host, d->vt, d->rows_asked, 1, &d->gen_dot));
            *g = d->gen_dot;
            return ADIA_OK;
        }
        codegen_background(d, 1);
        *g = codegen_arrived(d, 1, st);
        return ADIA_OK;
    }
    if (!d->background) return ADIA_OK;
    *g = codegen_arrived(d, 0, st);
    if (*g && v) {
        codegen_background(d, 1);
        *g = codegen_arrived(d, 1, st);
    }
    return ADIA_OK;
}

/* y = alpha A x + beta y; dw: also the fused sums (diag_kernel.cuh), by
 * the dot variant of the same kernel; g: the generated kernel, or NULL. */
template <typename T, bool DOT>
adia_status diag_launch(const diag_dev *d, const adia_codegen_kernel *g, T alpha, T beta,
                        const T *x, T *y, const adia_dot_work &dw, cudaStream_t st)
{
    int B = d->head.block;
    unsigned n = diag_grid(d, g);
    if (g) return adia__codegen_launch(g, &d->args, d->vt, alpha, beta, x, y, DOT ? &dw : NULL, B, st);
    if (d->stage) return stage_launch<T, DOT>(n, d->args, alpha, beta, x, y, dw, st);
    if (!DOT && d->latency == 16 && B <= 256)
        adia_diag_warp_latency<T, 16><<<n, B, 0, st>>>(d->args, alpha, beta, x, y);
    else if (!DOT && d->latency == 8 && B <= 256)
        adia_diag_warp_latency<T, 8><<<n, B, 0, st>>>(d->args, alpha, beta, x, y);
    else if (d->warp_rows == 4) adia_diag_warp<T, 4, DOT><<<n, B, 0, st>>>(d->args, alpha, beta, x, y, dw);
    else if (d->warp_rows == 2) adia_diag_warp<T, 2, DOT><<<n, B, 0, st>>>(d->args, alpha, beta, x, y, dw);
    else if (d->warp_rows == 1) {
        if constexpr (DOT) adia_diag_warp_dot_r1<T><<<n, B, 0, st>>>(d->args, alpha, beta, x, y, dw);
        else adia_diag_warp<T, 1, false><<<n, B, 0, st>>>(d->args, alpha, beta, x, y, dw);
    }
    else adia_diag_generic<T, DOT><<<n, B, 0, st>>>(d->args, alpha, beta, x, y, dw);
    return adia__gpu_launch_check(d->warp_rows > 0 ? "diagonal warp kernel" : "diagonal generic kernel");
}

template <typename T>
adia_status diag_run(const diag_dev *d, const adia_codegen_kernel *g, T alpha, T beta,
                     const T *x, T *y, cudaStream_t st)
{
    ADIA_TRY((diag_launch<T, false>(d, g, alpha, beta, x, y, adia_dot_work{}, st)));
    return adia_coo_rows_run<T>(d->scatter, alpha, T(1), x, y, 256, st);
}

adia_status diag_spmv(const void *p, double alpha, const void *x, double beta, void *y,
                      void *stream)
{
    const diag_dev *d = (const diag_dev *)p;
    if (d->args.rows == 0) return ADIA_OK;
    cudaStream_t st = (cudaStream_t)stream;
    const adia_codegen_kernel *g = NULL;
    ADIA_TRY(gen_kernel(d, 0, st, &g));
    if (d->vt == ADIA_DOUBLE)
        return diag_run<double>(d, g, alpha, beta, (const double *)x, (double *)y, st);
    return diag_run<float>(d, g, (float)alpha, (float)beta, (const float *)x, (float *)y, st);
}

/* The product with the sums in its epilogue.  CRSD's scatter points are
 * added by a second pass, after which y is final: there (and for a grid
 * larger than the work holds) the sums take a pass of their own. */
adia_status diag_spmv_dot(const void *p, double alpha, const void *x, double beta, void *y,
                          const adia_dot_work *dw, void *stream)
{
    diag_dev *d = (diag_dev *)p;
    cudaStream_t st = (cudaStream_t)stream;
    const adia_codegen_kernel *g = NULL;
    ADIA_TRY(gen_kernel(d, 1, st, &g));
    if (d->scatter.n > 0 || d->args.rows == 0 || diag_grid(d, g) > dw->max_blocks) {
        ADIA_TRY(diag_spmv(p, alpha, x, beta, y, stream));
        return adia__gpu_dots(d->vt, x, y, d->args.rows, dw, stream);
    }
    if (d->vt == ADIA_DOUBLE)
        return diag_launch<double, true>(d, g, alpha, beta, (const double *)x, (double *)y, *dw, st);
    return diag_launch<float, true>(d, g, (float)alpha, (float)beta, (const float *)x, (float *)y,
                                    *dw, st);
}

/* The device's data into D (built on the device: D->data still NULL). */
adia_status diag_download(const void *p, void *impl)
{
    const diag_dev *d = (const diag_dev *)p;
    adia_diag *D = (adia_diag *)impl;
    int64_t n = D->piece_data[D->n_pieces];
    size_t vs = adia_value_size(D->vtype);
    void *h = adia__alloc((size_t)n, vs, "diagonal data (from the device)");
    if (!h) return ADIA_ERR_NO_MEMORY;
    adia_status s = n > 0 ? adia_cuda_check(cudaMemcpy(h, d->args.data, (size_t)n * vs,
                                                       cudaMemcpyDeviceToHost),
                                            "diagonal data to the host")
                          : ADIA_OK;
    if (s != ADIA_OK) {
        free(h);
        return s;
    }
    free(D->data);
    D->data = h;
    return ADIA_OK;
}

/* d[r] = A(r, r): the offset-0 slot of r's piece, 0 where the piece keeps
 * no offset 0 or column r is outside the matrix (rows >= cols). */
template <typename T, typename O>
__global__ void diag_diagonal_kernel(adia_diag_args a, O *__restrict__ d)
{
    int r = (int)((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= a.rows) return;
    T v = T(0);
    if (r < a.cols) {
        int p = adia_diag_piece(a, r), g = a.piece_group[p];
        int lo = a.group_start[g], hi = a.group_start[g + 1], end = hi;
        while (lo < hi) {   /* the group's offsets ascend */
            int mid = (lo + hi) >> 1;
            if (a.offsets[mid] < 0) lo = mid + 1; else hi = mid;
        }
        if (lo < end && a.offsets[lo] == 0) {
            int r0 = a.piece_start[p], len = a.piece_start[p + 1] - r0;
            v = ((const T *)a.data)[a.piece_data[p] + (long long)(lo - a.group_start[g]) * len +
                                    (r - r0)];
        }
    }
    d[r] = (O)v;
}

/* The pieces' diagonal, then CRSD's scatter points on it (their slots in
 * the pieces are padding). */
adia_status diag_diagonal(const void *p, void *out, adia_value_type vt, void *stream)
{
    const diag_dev *d = (const diag_dev *)p;
    if (d->args.rows == 0) return ADIA_OK;
    cudaStream_t st = (cudaStream_t)stream;
    return adia_diagonal_types(d->vt, vt, [&](auto t, auto o) {
        using T = decltype(t);
        using O = decltype(o);
        diag_diagonal_kernel<T, O><<<adia_gpu_blocks(d->args.rows, 256), 256, 0, st>>>(d->args,
                                                                                   (O *)out);
        ADIA_GPU_LAUNCH_TRY("diagonal core's diagonal");
        return adia_coo_rows_diagonal_run<T, O>(d->scatter, (O *)out, st);
    });
}

} // namespace

/* The GPU table of every diagonal format (the registry gives it to each
 * format with a partition policy): the core's kernels (generic,
 * generated); the formats with diag.piece_rows can also be built on the
 * device (diag_build.cu). */
#define DIAG_KERNELS ((1u << ADIA_KERNEL_GENERIC) | (1u << ADIA_KERNEL_GENERATED))
extern "C" const adia_gpu_ops adia__gpu_diag = {
    .upload = diag_upload,
    .spmv = diag_spmv,
    .destroy = diag_free,
    .kernels = DIAG_KERNELS,
    .spmv_dot = diag_spmv_dot,
    .download = diag_download,
    .diagonal = diag_diagonal,
    .refill = adia__gpu_diag_refill,
};
extern "C" const adia_gpu_ops adia__gpu_diag_equal = {
    .upload = diag_upload,
    .spmv = diag_spmv,
    .destroy = diag_free,
    .kernels = DIAG_KERNELS,
    .spmv_dot = diag_spmv_dot,
    .build_device = adia__diag_build_device,   /* equal pieces: built on the device too */
    .download = diag_download,
    .diagonal = diag_diagonal,
    .refill = adia__gpu_diag_refill,
};

extern "C" adia_status adia__gpu_diag_adopt(const adia_diag *D, adia_value_type vt,
                                           const adia_format_params *p, void *dev_data, void **dev)
{
    return diag_make(D, vt, p, dev_data, dev);
}

extern "C" adia_status adia__gpu_diag_generate(adia_format *F, adia_codegen_mode mode,
                                              double repay_ms, char *how, size_t len)
{
    how[0] = '\0';
    adia_gpu_head *h = F && F->dev ? (adia_gpu_head *)F->dev : NULL;
    if (!h || h->select != diag_select)
        return adia__error(ADIA_ERR_UNSUPPORTED, "generated kernel: %s is not an uploaded "
                          "diagonal format", F ? F->ops->name : "(null)");
    diag_dev *d = (diag_dev *)F->dev;
    const bool always = mode == ADIA_CODEGEN_ALWAYS;
    if (always) mode = ADIA_CODEGEN_SYNC, repay_ms = INFINITY;   /* compile whatever the calls */
    d->mode = mode;
    if (mode == ADIA_CODEGEN_OFF) {
        snprintf(how, len, "generic kernel (ADIA_CODEGEN=off)");
        return ADIA_OK;
    }
    d->repay_ms = repay_ms;
    const bool cached = adia__codegen_cached(d->host, d->vt, d->rows_asked, 0);
    const double cost = adia__codegen_estimate_ms(d->host, d->vt, d->rows_asked, 0);
    if (!cached && mode == ADIA_CODEGEN_SYNC && !(cost <= repay_ms)) {
        snprintf(how, len, "generic kernel: the generated one is not in the cache, and its compile "
                 "(about %.0f ms) would not repay over the plan's calls (it saves about %.0f ms)",
                 cost, repay_ms);
        return ADIA_OK;
    }
    if (cached || mode == ADIA_CODEGEN_SYNC) {
        adia_status s = adia_format_set_kernel(F, ADIA_KERNEL_GENERATED);
        if (s != ADIA_OK) {
            snprintf(how, len, "generic kernel: %.280s", adia_last_error());
            adia_clear_error();
        } else {
            snprintf(how, len, "generated kernel (%s)",
                     cached ? "from the cache"
                            : always ? "compiled, ADIA_CODEGEN=always" : "compiled, ADIA_CODEGEN=sync");
        }
        return ADIA_OK;
    }
    d->background = 1;
    codegen_background(d, 0);
    snprintf(how, len, "generated kernel compiling in the background (not in the cache): the "
             "generic kernel runs until it is ready, the next call then switches");
    return ADIA_OK;
}

extern "C" const char *adia__gpu_diag_codegen_state(const adia_format *F)
{
    const adia_gpu_head *h = F && F->dev ? (const adia_gpu_head *)F->dev : NULL;
    if (!h || h->select != diag_select) return NULL;
    const diag_dev *d = (const diag_dev *)F->dev;
    if (h->kernel == ADIA_KERNEL_GENERATED) return "generated";
    if (!d->background) return "generic";
    if (__atomic_load_n(&d->bg[0], __ATOMIC_ACQUIRE)) return "generated (arrived from the background compile)";
    adia_codegen_job *job = __atomic_load_n(&d->job[0], __ATOMIC_ACQUIRE);
    if (!job || __atomic_load_n(&d->claimed[0], __ATOMIC_ACQUIRE))
        return "generic (the background compile failed)";
    return adia__codegen_job_ready(job) ? "generic until the next call (compile finished)"
                                        : "generic (compiling in the background)";
}

extern "C" const adia_diag_args *adia__gpu_diag_args(const adia_format *F)
{
    const adia_gpu_head *h = F && F->dev ? (const adia_gpu_head *)F->dev : NULL;
    if (!h || h->select != diag_select) return NULL;
    return &((const diag_dev *)F->dev)->args;
}

/* New values of D (refilled in place on the host, same structure as its
 * upload) into the device data: one copy of the data array, nothing else
 * changes -- the generated kernels hold the offsets, never a value.
 * CRSD's scatter points live in their own COO upload: not here. */
extern "C" adia_status adia__gpu_diag_set_data(void *dev, const adia_diag *D)
{
    diag_dev *d = (diag_dev *)dev;
    if (d->scatter.n > 0 || d->vt != D->vtype || d->args.n_pieces != D->n_pieces)
        return adia__error(ADIA_ERR_INTERNAL, "diagonal values to the device: another layout");
    int64_t n = D->piece_data[D->n_pieces];
    if (n == 0) return ADIA_OK;
    ADIA_TRY(adia_cuda_check(cudaMemcpy(const_cast<void *>(d->args.data), D->data,
                                        (size_t)n * adia_value_size(D->vtype),
                                        cudaMemcpyHostToDevice),
                             "diagonal values to the device"));
    return adia__gpu_fence("diagonal values to the device");   /* landed before any product */
}

namespace {

/* New values straight into the device data, a thread per row, its
 * entries REFILL_BATCH at a time: the batch's columns and values are all
 * loaded before any is placed, so a thread keeps 2 x REFILL_BATCH loads in
 * flight (one entry at a time, each placement waiting for its loads, ran
 * at 62% of DRAM: 199 us on lap3d7:160, H200; a warp per 32 rows with
 * coalesced reads and shuffles to place them, 268 us).  The row's t-th
 * entry sits on its group's t-th offset or after it (offsets and columns
 * ascend), exactly there in a full row, else found by bisection; the
 * writes of a batch's entry across a warp's rows are one coalesced store
 * per diagonal.  Nothing is written unless *gate (the pattern check's
 * verdict).  count[0] += values that are zero in T, count[1] += entries on
 * no kept diagonal (a pattern the check let through: never, short of a
 * hash collision). */
constexpr int REFILL_BATCH = 8;
template <typename T, typename R, typename V>
__global__ void diag_refill_kernel(adia_diag_args a, const R *__restrict__ rowptr,
                                   const int *__restrict__ colind, const V *__restrict__ val,
                                   const unsigned long long *gate, unsigned long long *count)
{
    const int r = (int)((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= a.rows || !*gate) return;
    const int p = adia_diag_piece(a, r), g = a.piece_group[p];
    const int k0 = a.group_start[g], k1 = a.group_start[g + 1];
    const int r0 = a.piece_start[p], len = a.piece_start[p + 1] - r0;
    T *data = (T *)const_cast<void *>(a.data) + a.piece_data[p] + (r - r0);
    unsigned long long zeros = 0, bad = 0;
    const long long start = rowptr[r], end = rowptr[r + 1];
    int k = k0;   /* the last entry's offset index: the next one's lies after it */
    for (long long j0 = start; j0 < end; j0 += REFILL_BATCH) {
        int c[REFILL_BATCH];
        V v[REFILL_BATCH];
#pragma unroll
        for (int u = 0; u < REFILL_BATCH; u++) {
            c[u] = j0 + u < end ? __ldg(colind + j0 + u) : 0;
            v[u] = j0 + u < end ? __ldg(val + j0 + u) : V(0);
        }
#pragma unroll
        for (int u = 0; u < REFILL_BATCH; u++) {
            if (j0 + u >= end) break;
            const int o = c[u] - r;
            if (k < k1 && __ldg(a.offsets + k) != o) {
                int lo = k + 1, hi = k1;   /* the first offset >= o after k */
                while (lo < hi) {
                    const int mid = (lo + hi) >> 1;
                    if (__ldg(a.offsets + mid) < o) lo = mid + 1;
                    else hi = mid;
                }
                k = lo;
            }
            if (k >= k1 || __ldg(a.offsets + k) != o) {
                bad++;
                continue;
            }
            const T t = (T)v[u];
            data[(long long)(k - k0) * len] = t;
            zeros += t == T(0);
            k++;
        }
    }
    if (zeros) atomicAdd(count, zeros);
    if (bad) atomicAdd(count + 1, bad);
}

template <typename T, typename R, typename V>
adia_status diag_refill_run(const diag_dev *d, const adia_device_csr *A,
                            const unsigned long long *gate, unsigned long long *count)
{
    diag_refill_kernel<T, R, V><<<adia_gpu_blocks(d->args.rows, 256), 256>>>(
        d->args, (const R *)A->rowptr, A->colind, (const V *)A->values, gate, count);
    ADIA_GPU_LAUNCH_TRY("diagonal refill");
    return ADIA_OK;
}

template <typename T>
adia_status diag_refill_typed(const diag_dev *d, const adia_device_csr *A,
                              const unsigned long long *gate, unsigned long long *count)
{
    int fl = A->values_type == ADIA_FLOAT;
    if (A->rowptr_bits == 32)
        return fl ? diag_refill_run<T, int, float>(d, A, gate, count)
                  : diag_refill_run<T, int, double>(d, A, gate, count);
    return fl ? diag_refill_run<T, long long, float>(d, A, gate, count)
              : diag_refill_run<T, long long, double>(d, A, gate, count);
}

} // namespace

extern "C" adia_status adia__gpu_diag_refill(void *dev, const adia_device_csr *A,
                                            const unsigned long long *gate,
                                            unsigned long long *count)
{
    diag_dev *d = (diag_dev *)dev;
    if (d->scatter.n > 0 || A->rows != d->args.rows)
        return adia__error(ADIA_ERR_INTERNAL, "diagonal refill on the device: another layout");
    if (d->args.rows == 0) return ADIA_OK;
    return d->vt == ADIA_DOUBLE ? diag_refill_typed<double>(d, A, gate, count)
                                : diag_refill_typed<float>(d, A, gate, count);
}
