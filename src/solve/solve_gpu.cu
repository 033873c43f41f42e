/* solve_gpu.cu -- CG, BiCGSTAB and GMRES resident on the device: the
 * workspace and its set-up, the scaled norm and the true residual, one
 * solve from the norm of b to the report, and the entry points
 * (solve_internal.h).  The methods' kernels are in cg_gpu.cu,
 * bicgstab_gpu.cu and gmres_gpu.cu, the graph and the host loop in
 * solve_graph.cu; what they share in solve_gpu.cuh. */
#include "solve_gpu.cuh"
#include "../cuda/codegen.h"
#include "../formats/diag_core.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <atomic>
#include <new>
#include <vector>

/* Host doubles to the device in the plan's type (below). */
static adia_status upload(const double *h, int64_t n, adia_value_type vt, void *d);

namespace adia__gpu_solve {
namespace {

/* ------------------------------------------------------- scaled norm */

/* max |v_i| into st->norm_max (NaN if any v_i is NaN) */
template <typename T>
__global__ void norm_max_kernel(const T *v, int64_t n, double *partial, state *st)
{
    double m[1] = {0};
    GRID_LOOP(i, n) m[0] = adia__reduce::nan_max(m[0], fabs((double)v[i]));
    if (adia__reduce::grid_reduce<1, true>(m, partial, &st->count)) st->norm_max = m[0];
}

/* e with max = f 2^e, f in [0.5, 1): the norm's scale is 2^-e. */
__device__ inline int norm_exponent(double max)
{
    int e;
    frexp(max, &e);
    return e;
}

/* ||v|| = 2^e sqrt(sum (v_i 2^-e)^2) (the CPU's nrm2, solve.c): no
 * overflow or underflow on the way, and a power of two scales exactly.
 * 2^-e is applied as two normal factors: for a subnormal max (below
 * 2^-1022) 1 / max and 2^-e are Inf, and made the norm of 16 x 1e-320 --
 * or of a b with one 1e-310 entry and zeros -- Inf or NaN.  The result
 * itself is Inf where ||v|| exceeds the range of double. */
struct norm_finish {
    __device__ void operator()(state *st, const double *v) const
    {
        const double m = st->norm_max;
        const bool as_is = !(m > 0) || !isfinite(m);   /* 0, Inf or NaN */
        st->norm_m = as_is ? m : sqrt(v[0]);
        st->norm_e = as_is ? 0 : norm_exponent(m);
        st->norm = ldexp(st->norm_m, st->norm_e);
    }
};

template <typename T>
__global__ void norm_sum_kernel(const T *v, int64_t n, double *partial, state *st)
{
    const double m = st->norm_max;
    if (!(m > 0) || !isfinite(m)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) norm_finish()(st, nullptr);
        return;
    }
    const int e = norm_exponent(m), half = -e / 2;
    const double d1 = ldexp(1.0, half), d2 = ldexp(1.0, -e - half);
    double s[1] = {0};
    GRID_LOOP(i, n) {
        double t = ((double)v[i] * d1) * d2;
        s[0] += t * t;
    }
    reduce_finish<1>(s, partial, st, norm_finish());
}

/* r = b 2^-eb - r (r holds A x on entry; eb: the scaling of b, 0 none) */
template <typename T>
__global__ void residual_kernel(const T *b, T *r, int64_t n, int eb)
{
    if (eb == 0) GRID_LOOP(i, n) r[i] = b[i] - r[i];
    else GRID_LOOP(i, n) r[i] = (T)ldexp((double)b[i], -eb) - r[i];
}

/* x = x 2^k (exact unless it leaves the range); check: the first row whose
 * result is not finite into st->xbad, the first that lost bits (fell below
 * the normal range and rounded) into st->xlost (both start at n). */
template <typename T>
__global__ void scale_kernel(T *x, int64_t n, int k, bool check, state *st)
{
    GRID_LOOP(i, n) {
        const double v = ldexp((double)x[i], k);
        const T t = (T)v;
        if (check && !isfinite((double)t)) atomicMin(&st->xbad, (long long)i);
        if (check && k < 0 && ldexp((double)t, -k) != (double)x[i])
            atomicMin(&st->xlost, (long long)i);
        x[i] = t;
    }
}

/* ------------------------------------------------------------ host side */

/* The status an operator's processes all go on with (one process: s): a
 * failure of one alone (device memory) must stop all, or the others
 * would wait for it in a reduction. */
static adia_status agreed(const adia__solve_comm *c, adia_status s)
{
    return c->agree ? c->agree(c->ctx, s) : s;
}

/* Vectors each method keeps beside x and b. */
static int64_t vectors_needed(adia_solver m, bool jacobi, bool stage, bool flex, int restart)
{
    /* CG: r p w(=q) s (+ d u, or u for a stage); BiCGSTAB: r r0 p v(=q) t
     * (+ d ph sh, or ph sh); GMRES: w(=r) z(=p) q (the stage's output) (+ d)
     * and the m + 1 basis vectors (flexible: + Z, m vectors) */
    if (m == ADIA_SOLVE_GMRES) return 3 + jacobi + (int64_t)restart + 1 + (flex ? restart : 0);
    return m == ADIA_SOLVE_CG ? 4 + 2 * jacobi + stage : 5 + 3 * jacobi + 2 * stage;
}

static adia_status check_device_memory(size_t bytes)
{
    size_t free_b = 0, total_b = 0;
    ADIA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (bytes <= free_b) return ADIA_OK;
    return adia__error(ADIA_ERR_NO_MEMORY, "GPU solver vectors need %.1f MB, the device has %.1f MB "
                      "free", bytes / 1e6, free_b / 1e6);
}

/* Blocks of NT threads that stay resident on one SM for every kernel of
 * the method: the grid is that many per SM, so each kernel runs in one
 * wave (a grid-stride loop with a second, partial wave of blocks takes
 * nearly twice as long as one).  Asked once per device and type: the
 * queries took 0.9-1.9 ms of every solve's set-up (H200, 2026-11-27). */
enum { CACHED_DEVICES = 64 };

template <typename T>
int resident_blocks(int dev)
{
    static std::atomic<int> cached[CACHED_DEVICES];   /* 0: not asked yet */
    const bool cache = dev >= 0 && dev < CACHED_DEVICES;
    if (cache && cached[dev].load(std::memory_order_relaxed) > 0)
        return cached[dev].load(std::memory_order_relaxed);
    const kernel_list lists[] = {
        cg_kernels<T>(), bicg_kernels<T>(), gm_kernels<T>(),
        {{(const void *)residual_kernel<T>, (const void *)norm_max_kernel<T>,
          (const void *)norm_sum_kernel<T>}, 3}};
    int fewest = 8;
    for (const kernel_list &l : lists)
        for (int i = 0; i < l.count; i++) {
            int nb = 0;
            if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, l.k[i], NT, 8 * 1024) ==
                    cudaSuccess && nb > 0 && nb < fewest)
                fewest = nb;
        }
    cudaGetLastError();
    if (cache) cached[dev].store(fewest, std::memory_order_relaxed);
    return fewest;
}

/* ------------------------------------------- the plan's parked memory */

void release_parked(adia__solve_parked *h)
{
    parked_memory *p = (parked_memory *)h;
    p->mem.release();
    delete p;
}

/* The memory parked in slot, taken (nobody else gets it), where it is on
 * device dev and holds what this solve needs; else NULL (what was parked
 * is freed: its memory goes back before this solve allocates its own). */
parked_memory *take_parked(adia__solve_parked **slot, int dev, size_t vec, size_t partial,
                           size_t small, int64_t dot_rows)
{
    if (!slot) return nullptr;
    parked_memory *p = (parked_memory *)__atomic_exchange_n(slot, nullptr, __ATOMIC_ACQ_REL);
    if (!p) return nullptr;
    const solve_memory &m = p->mem;
    const bool fits = p->device == dev && m.vec_bytes >= vec && m.partial_bytes >= partial &&
                      m.small_bytes >= small && (dot_rows < 0 || m.dot_rows == dot_rows);
    if (fits) return p;
    release_parked(&p->head);
    return nullptr;
}

/* The workspace's memory and stream into slot for the next solve (into
 * an empty slot only: a solve beside this one may have parked first). */
void park(workspace &w, adia__solve_parked **slot, int dev)
{
    if (!slot) return;
    parked_memory *p = new (std::nothrow) parked_memory{{release_parked}, dev, w};
    if (!p) return;   /* freed by the destructor, as without a slot */
    static_cast<solve_memory &>(w) = solve_memory{};   /* the plan's now */
    adia__solve_parked *none = nullptr;
    if (!__atomic_compare_exchange_n(slot, &none, &p->head, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        release_parked(&p->head);
}

template <typename T>
adia_status setup(solve_run<T> &R)
{
    const adia_solve_gpu_args *a = R.a;
    const bool jac = a->inv_diag || a->d_inv_diag, stage = R.M != nullptr;
    const bool gm = a->method == ADIA_SOLVE_GMRES;
    R.m = gm ? a->restart : 0;
    const int64_t k = vectors_needed(a->method, jac, stage, R.flex, R.m);
    size_t bytes = (size_t)k * (size_t)R.n * sizeof(T);
    int sms = 0, dev = 0;
    ADIA_CUDA_TRY(cudaGetDevice(&dev));
    ADIA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int64_t blocks = (R.n + NT - 1) / NT, wave = (int64_t)resident_blocks<T>(dev) * sms;
    R.grid = (unsigned)(blocks < wave ? (blocks > 0 ? blocks : 1) : wave);
    /* gm_dots runs m + 2 of these side by side: fewer blocks each */
    R.dot_grid = R.grid < 2u * sms ? R.grid : 2u * sms;
    size_t partial = gm ? (size_t)(R.m + 2) * R.dot_grid : 2;
    if (partial < 2 * (size_t)R.grid) partial = 2 * (size_t)R.grid;
    size_t small = gm ? ((size_t)R.m + 1) * (R.m + 6) + 1 : 0;
    R.w.vec_bytes = bytes ? bytes : 1;
    R.w.partial_bytes = partial * sizeof(double);
    R.w.small_bytes = small * sizeof(double);
    R.w.dot_rows = gm ? -1 : R.n;
    /* a plan's earlier solve left what this one needs: nothing allocated */
    if (parked_memory *p = take_parked(a->park, dev, R.w.vec_bytes, R.w.partial_bytes,
                                       R.w.small_bytes, R.w.dot_rows)) {
        static_cast<solve_memory &>(R.w) = p->mem;
        delete p;
    } else {
        ADIA_TRY(check_device_memory(bytes + (partial + small) * sizeof(double) + sizeof(state)));
        ADIA_CUDA_TRY(cudaMalloc(&R.w.vec, R.w.vec_bytes));
        ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.partial, R.w.partial_bytes));
        if (gm) ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.small, R.w.small_bytes));
        ADIA_CUDA_TRY(cudaMalloc((void **)&R.w.st, sizeof(state)));
        ADIA_CUDA_TRY(cudaStreamCreateWithFlags(&R.w.stream, cudaStreamNonBlocking));
    }
    if (gm) {
        ADIA_CUDA_TRY(cudaMemsetAsync(R.w.small, 0, R.w.small_bytes, R.w.stream));
        double *q = R.w.small;
        const size_t m1 = (size_t)R.m + 1;
        /* H, c (m + 2), hcol, cs, sn, g, y */
        R.sm = {q, q + m1 * (R.m + 5), q + m1 * R.m, q + m1 * (R.m + 1), q + m1 * (R.m + 2),
                q + m1 * (R.m + 3), q + m1 * (R.m + 4)};
    }
    state zero = {};
    zero.split = R.split;   /* the norm of b is taken before start() */
    ADIA_CUDA_TRY(cudaMemcpyAsync(R.w.st, &zero, sizeof zero, cudaMemcpyHostToDevice, R.w.stream));
    T *v = (T *)R.w.vec;
    R.x = (T *)a->d_x;
    R.b = (T *)a->d_b;
    R.r = v;
    R.p = v + R.n;
    R.q = v + 2 * R.n;               /* BiCGSTAB: v */
    R.d = R.r0 = R.ph = R.sh = R.t = R.V = nullptr;
    R.u = R.r;
    R.s = nullptr;
    int64_t next = 3;
    if (a->method == ADIA_SOLVE_CG) R.s = v + next++ * R.n;
    if (a->method == ADIA_SOLVE_BICGSTAB) {
        R.r0 = v + next++ * R.n;
        R.t = v + next++ * R.n;
    }
    if (jac) {
        R.d = v + next++ * R.n;
        if (a->method == ADIA_SOLVE_CG) R.u = v + next++ * R.n;
        if (a->method == ADIA_SOLVE_BICGSTAB) {
            R.ph = v + next++ * R.n;
            R.sh = v + next++ * R.n;
        }
        const adia_value_type vt = sizeof(T) == sizeof(double) ? ADIA_DOUBLE : ADIA_FLOAT;
        if (a->d_inv_diag)   /* a GPU plan's: copied and scaled by 2^ea there */
            ADIA_TRY(adia__precond_convert_gpu(a->d_inv_vt, vt, R.n, 1 / a->a_scale,
                                               a->d_inv_diag, R.d, R.w.stream));
        else   /* doubles as they are: a converted copy cost 30-40 ms of set-up
                * at 4.1 M rows (ADIA_PHASES, H200) */
            ADIA_TRY(::upload(a->inv_diag, R.n, vt, R.d));
    } else if (stage && a->method == ADIA_SOLVE_CG) {
        R.u = v + next++ * R.n;      /* M r, apart from r */
    } else if (stage && a->method == ADIA_SOLVE_BICGSTAB) {
        R.ph = v + next++ * R.n;     /* M p and M s, apart from p and s */
        R.sh = v + next++ * R.n;
    } else if (a->method == ADIA_SOLVE_BICGSTAB) {
        R.ph = R.p;                  /* no preconditioner: ph = p, sh = s */
        R.sh = R.r;
    }
    R.gz = stage ? R.q : R.p;        /* GMRES: p holds V_j, q = M V_j */
    R.Z = nullptr;
    if (gm) R.V = v + next * R.n;
    if (gm && R.flex) R.Z = R.V + (int64_t)(R.m + 1) * R.n;
    R.fused = R.op->sums_fused;
    R.method = {gpu_kernels<T>(), &R, jac, stage, R.flex};
    if (gm) return ADIA_OK;
    /* the operator's sums work: laid out for these rows, as the solver's own */
    if (R.op->apply_sums_device && R.op->sums_work_bytes > adia__gpu_dot_work_bytes(R.n))
        return adia__error(ADIA_ERR_INTERNAL, "GPU solver: the operator's sums need %zu bytes of "
                          "work, the solver's hold %zu", R.op->sums_work_bytes,
                          adia__gpu_dot_work_bytes(R.n));
    ADIA_TRY(adia__gpu_dot_work_alloc(R.n, &R.w.dots, &R.w.dot_mem, R.w.stream));
    return ADIA_OK;
}

} // namespace

/* r = b - A x, queued. */
template <typename T>
adia_status residual(solve_run<T> &R)
{
    ADIA_TRY(spmv(R, R.x, R.r));
    residual_kernel<T><<<R.grid, NT, 0, R.w.stream>>>(R.b, R.r, R.n, R.eb);
    return ADIA_OK;
}

template adia_status residual<double>(solve_run<double> &);
template adia_status residual<float>(solve_run<float> &);

/* ----------------------------------------------- the GPU's kernel table */

namespace {

template <typename T>
adia_status k_precond(void *run, solve_vec r, solve_vec z)
{
    solve_run<T> &R = *(solve_run<T> *)run;
    return precond(R, vec(R, r), vec(R, z));
}

template <typename T>
adia_status k_product_sums(void *run, solve_vec x, solve_vec y, solve_vec z)
{
    solve_run<T> &R = *(solve_run<T> *)run;
    return spmv_dot(R, vec(R, x), vec(R, y), z == SV_NONE ? nullptr : vec(R, z));
}

template <typename T>
adia_status k_product(void *run, solve_vec x, solve_vec y)
{
    solve_run<T> &R = *(solve_run<T> *)run;
    return spmv(R, vec(R, x), vec(R, y));
}

/* A kernel of the table that takes the run alone. */
#define RUN_ONLY(name, f)               \
    template <typename T>               \
    adia_status name(void *run)         \
    {                                   \
        return f(*(solve_run<T> *)run); \
    }
RUN_ONLY(k_residual, residual)
RUN_ONLY(k_cg_start, cg_start_kernels)
RUN_ONLY(k_cg_step, cg_step_kernels)
RUN_ONLY(k_bicg_start, bicg_start_kernels)
RUN_ONLY(k_bicg_direction, bicg_direction_kernels)
RUN_ONLY(k_bicg_half, bicg_half_kernels)
RUN_ONLY(k_bicg_update, bicg_update_kernels)
RUN_ONLY(k_gm_cycle_start, gm_cycle_start_kernels)
RUN_ONLY(k_gm_next_basis, gm_next_basis_kernels)
RUN_ONLY(k_gm_orthogonalize, gm_orthogonalize_kernels)
RUN_ONLY(k_gm_givens, gm_givens_kernels)
RUN_ONLY(k_gm_keep_z, gm_keep_z_kernels)
RUN_ONLY(k_gm_update_x, gm_update_x_kernels)
RUN_ONLY(k_gm_combine, gm_combine_kernels)
RUN_ONLY(k_add_q, add_q_kernels)
#undef RUN_ONLY

} // namespace

template <typename T>
const solve_kernels *gpu_kernels()
{
    static const solve_kernels k = {.residual = k_residual<T>, .precond = k_precond<T>,
                                    .product_sums = k_product_sums<T>,
                                    .cg_start = k_cg_start<T>, .cg_step = k_cg_step<T>,
                                    .bicg_start = k_bicg_start<T>,
                                    .bicg_direction = k_bicg_direction<T>,
                                    .bicg_half = k_bicg_half<T>,
                                    .bicg_update = k_bicg_update<T>,
                                    .product = k_product<T>,
                                    .gm_cycle_start = k_gm_cycle_start<T>,
                                    .gm_next_basis = k_gm_next_basis<T>,
                                    .gm_orthogonalize = k_gm_orthogonalize<T>,
                                    .gm_givens = k_gm_givens<T>,
                                    .gm_keep_z = k_gm_keep_z<T>,
                                    .gm_update_x = k_gm_update_x<T>,
                                    .gm_combine = k_gm_combine<T>, .add_q = k_add_q<T>};
    return &k;
}

template const solve_kernels *gpu_kernels<double>();
template const solve_kernels *gpu_kernels<float>();

namespace {

/* r = b - A x, then the method's start kernel (state reset, first test). */
template <typename T>
adia_status start(solve_run<T> &R, double tol2, int max_iter)
{
    state init = {};
    init.tol2 = tol2;
    init.max_iter = max_iter;
    init.m = R.m;
    init.split = R.split;
    ADIA_CUDA_TRY(cudaMemcpyAsync(R.w.st, &init, sizeof init, cudaMemcpyHostToDevice, R.w.stream));
    if (R.a->method == ADIA_SOLVE_GMRES) {
        ADIA_TRY(adia__gm_begin_cycle(&R.method));
    } else {   /* products replayed after a stop added to the sums unread */
        ADIA_CUDA_TRY(cudaMemsetAsync(R.w.dots.out, 0, SOLVE_NDOT * sizeof(double),
                                      R.w.stream));
        ADIA_TRY(R.a->method == ADIA_SOLVE_CG ? adia__cg_begin(&R.method)
                                              : adia__bicg_begin(&R.method));
    }
    return adia_cuda_check(cudaGetLastError(), "GPU solver start");
}

/* max |v_i| (NaN if any is) over every process into st->norm_max, queued. */
template <typename T>
void queue_max(solve_run<T> &R, const T *v)
{
    norm_max_kernel<T><<<R.grid, NT, 0, R.w.stream>>>(v, R.n, R.w.partial, R.w.st);
    if (R.split) R.comm->max_device(R.comm->ctx, &R.w.st->norm_max, 1, R.w.stream);
}

/* ||v|| without overflow or underflow (NaN if v holds a NaN). */
template <typename T>
adia_status norm(solve_run<T> &R, const T *v, double *out)
{
    queue_max(R, v);
    norm_sum_kernel<T><<<R.grid, NT, 0, R.w.stream>>>(v, R.n, R.w.partial, R.w.st);
    ADIA_TRY(finish(R, 1, norm_finish()));
    ADIA_CUDA_TRY(cudaGetLastError());
    ADIA_TRY(read_state(R, "GPU solver: a norm"));
    *out = R.w.host->norm;
    return ADIA_OK;
}

/* ||b - A x|| of the current x, in r. */
template <typename T>
adia_status true_residual(solve_run<T> &R, double *out)
{
    ADIA_TRY(residual(R));
    ADIA_CUDA_TRY(cudaGetLastError());
    return norm(R, R.r, out);
}

/* Bytes one iteration moves as these kernels run it, and the floor: the
 * matrix once per product plus the fewest vector passes with every dot
 * product fused into a neighbouring kernel (fmt: storage + the product's
 * x and y).  CG 11 passes: the product's u and w, then r p w s x read and
 * p s x r written; Jacobi adds d, u and the product's read of r.
 * BiCGSTAB 20: two products with r0 / s read by their sums, direction 4,
 * half 3, update 7.  A format without the fused sums (fused false) reads
 * x, y (and z) again after each product.  GMRES: the mean over a cycle's
 * steps of one Gram-Schmidt pass (dots j + 2, update j + 3) and the next
 * basis vector (3), floor the same less the separate dot pass of w (j + 1
 * passes saved per step when dots fuse with the update: not possible in
 * classical Gram-Schmidt, so the floor counts them).  second_passes: the
 * share of steps whose Gram-Schmidt ran twice (||w|| fell below 0.7 of
 * its length: on every step of a 3D Poisson matrix, ratio 0.40-0.48), each
 * a second pass over the basis the floor does not count. */
static void bytes_per_iteration(const adia_solve_gpu_args *a, bool fused, double vs,
                                double second_passes, adia_solve_info *info)
{
    const double n = (double)a->op->n, jac = a->inv_diag || a->d_inv_diag ? 1 : 0;
    if (a->M) return;   /* the stage's bytes are its own, not known here: 0 */
    /* the operator's bytes: its matrix and one pass each of x and y */
    const double fmt = a->op->apply_bytes, store = a->op->storage_bytes;
    if (!(fmt > 0)) return;   /* unknown: 0 */
    if (a->method == ADIA_SOLVE_CG) {
        info->bytes_per_iter = fmt + (9 + 3 * jac + (fused ? 0 : 2 + jac)) * vs * n;
        info->floor_bytes_per_iter = store + 11 * vs * n;
    } else if (a->method == ADIA_SOLVE_BICGSTAB) {
        info->bytes_per_iter = 2 * fmt + (16 + 4 * jac + (fused ? 0 : 4)) * vs * n;
        info->floor_bytes_per_iter = 2 * store + 20 * vs * n;
    } else {
        double mean_j = (a->restart - 1) / 2.0, pass = 2 * mean_j + 5;
        info->bytes_per_iter = fmt + (pass * (1 + second_passes) + 3 + jac) * vs * n;
        info->floor_bytes_per_iter = store + (2 * mean_j + 7) * vs * n;
    }
}

/* As the CPU solver: when the recurrence says converged but the true
 * residual does not, or BiCGSTAB's (r0, r) or (r0, A p) is 0, restart
 * from the true residual (at most 3 times). */
enum { SOLVE_RESTARTS = 3 };

/* e with 2^(e-1) <= v < 2^e (v > 0 finite), else 0: solve.c's pow2_exponent */
static int pow2_exponent(double v)
{
    int e = 0;
    if (v > 0 && isfinite(v)) frexp(v, &e);
    return e;
}

/* ea of the operator's scale a_scale = 2^-ea */
static int a_exponent(const adia_solve_gpu_args *a)
{
    return 1 - pow2_exponent(a->a_scale);
}

/* x = x 2^k on the device, queued; check: with the state's flags read
 * back (a wait). */
template <typename T>
adia_status scale_x(solve_run<T> &R, int k, bool check)
{
    cudaStream_t s = R.w.stream;
    if (check) {
        const long long n = R.n;
        ADIA_CUDA_TRY(cudaMemcpyAsync(&R.w.st->xbad, &n, sizeof n, cudaMemcpyHostToDevice, s));
        ADIA_CUDA_TRY(cudaMemcpyAsync(&R.w.st->xlost, &n, sizeof n, cudaMemcpyHostToDevice, s));
    }
    if (k != 0 || check) scale_kernel<T><<<R.grid, NT, 0, s>>>(R.x, R.n, k, check, R.w.st);
    ADIA_CUDA_TRY(cudaGetLastError());
    return check ? read_state(R, "GPU solver: scaling x") : ADIA_OK;
}

/* max |x_i| (NaN if any is), every process's: one pass and a wait. */
template <typename T>
adia_status max_abs_x(solve_run<T> &R, double *out)
{
    queue_max(R, R.x);
    ADIA_CUDA_TRY(cudaGetLastError());
    ADIA_TRY(read_state(R, "GPU solver: max |x|"));
    *out = R.w.host->norm_max;
    return ADIA_OK;
}

/* A device entry's scaling (adia_solve_gpu_args.scale), solve.c's rule:
 * with ||b|| = m 2^e (from the scaled norm: it may exceed the range of
 * double), eb makes ||b 2^-eb|| lie in [0.5, 1), x0 is checked and scaled
 * by 2^(ea-eb) in place; *bnorm becomes the scaled system's. */
template <typename T>
adia_status scale_start(solve_run<T> &R, double *bnorm)
{
    const state &h = *R.w.host;   /* norm(b)'s state, copied back */
    R.eb = h.norm_e + pow2_exponent(h.norm_m);
    *bnorm = ldexp(h.norm_m, h.norm_e - R.eb);
    const int ea = a_exponent(R.a);
    double xmax = 0;
    ADIA_TRY(max_abs_x(R, &xmax));
    if (!isfinite(xmax))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: x (the initial guess) holds a "
                          "non-finite value");
    if (xmax > 0 && pow2_exponent(xmax) + ea - R.eb > 1024)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: the initial guess is out of scale "
                          "with b and A (max |x0| = %g, ||b|| = %.3g x 2^%d, A scaled by 2^%d): "
                          "x0 |A| / ||b|| overflows a double; start from x0 = 0", xmax, *bnorm,
                          R.eb, -ea);
    return scale_x(R, ea - R.eb, false);
}

/* x back from the scaled system: x 2^(eb-ea), checked as solve.c does --
 * an entry out of range takes converged back, one that lost bits (below
 * the normal range) has the rounded x's own residual decide. */
template <typename T>
adia_status scale_back(solve_run<T> &R, double tol, double bnorm, adia_solve_info *info)
{
    const int k = R.eb - a_exponent(R.a);
    ADIA_TRY(scale_x(R, k, true));
    double any[2] = {(double)(R.w.host->xbad < R.n), (double)(R.w.host->xlost < R.n)};
    const long long bad = R.w.host->xbad, lost = R.w.host->xlost;
    if (R.comm->max) R.comm->max(R.comm->ctx, any, 2);   /* every process decides alike */
    if (!info->converged) return ADIA_OK;
    const int64_t first = R.op->first;
    if (any[0]) {
        info->converged = 0;
        if (bad < R.n) snprintf(info->stop, sizeof info->stop, "non-finite solution: x[%lld] is "
                                "out of the range of double", (long long)(first + bad));
        else snprintf(info->stop, sizeof info->stop, "non-finite solution on another process: "
                      "out of the range of double");
        return ADIA_OK;
    }
    if (!any[1]) return ADIA_OK;
    /* the rounded x on the scaled system (exact: 2^-k undoes the rounding's
     * scale), its residual there */
    ADIA_CUDA_TRY(cudaMemcpyAsync(R.p, R.x, R.n * sizeof(T), cudaMemcpyDeviceToDevice,
                                  R.w.stream));
    std::swap(R.x, R.p);
    adia_status s = scale_x(R, -k, false);
    double rnorm = NAN;
    if (s == ADIA_OK) s = true_residual(R, &rnorm);
    std::swap(R.x, R.p);
    ADIA_TRY(s);
    info->residual = rnorm / bnorm;
    info->converged = rnorm <= tol;
    char at[64] = "on another process";
    if (lost < R.n) snprintf(at, sizeof at, "x[%lld]", (long long)(first + lost));
    if (!info->converged)
        snprintf(info->stop, sizeof info->stop, "x underflows (%s): entries below the normal "
                 "range of double lost bits; true residual %.3g", at, info->residual);
    return ADIA_OK;
}

/* The method from x0 until it stops (restarts included), its true
 * residual, the report. */
template <typename T>
adia_status iterations(solve_run<T> &R, double tol, double bnorm, adia_solve_info *info)
{
    const adia_solve_gpu_args *a = R.a;
    const double t0 = adia__now_ms();
    state st = {};
    int done = 0, reorths = 0;
    double rnorm = NAN;
    for (int restart = 0; restart <= SOLVE_RESTARTS; restart++) {
        ADIA_TRY(start(R, tol * tol, a->max_iter - done));
        ADIA_TRY(iterate(R, &st));
        done += st.iter;
        reorths += st.reorths;
        if (R.w.use_cond) R.spmvs += st.iter * R.graph_spmvs;
        ADIA_TRY(true_residual(R, &rnorm));
        bool said = st.status == CONVERGED;
        /* BiCGSTAB's shadow residual became orthogonal: go on from the
         * true residual with a new one (the CPU's rule too) */
        bool shadow = a->method == ADIA_SOLVE_BICGSTAB && st.status == BREAKDOWN &&
                      st.broke != BROKE_OMEGA && isfinite(rnorm);
        info->converged = isfinite(rnorm) && rnorm <= tol;
        if (info->converged || !(said || shadow) || done >= a->max_iter) break;
    }
    info->time_ms = adia__now_ms() - t0;
    adia__phase("gpu: iterations, true residual");
    info->iterations = done;
    info->spmvs = R.spmvs;
    info->residual = rnorm / bnorm;
    bytes_per_iteration(a, R.fused, sizeof(T), done > 0 ? (double)reorths / done : 0, info);
    adia__solve_stop_reason(&st, a->method, info->stop, sizeof info->stop);
    if (st.status == CONVERGED && !info->converged)
        snprintf(info->stop, sizeof info->stop, isfinite(rnorm) ? "the recurrence converged, the "
                 "true residual did not (%.3g): lost accuracy" : "the true residual is not "
                 "finite (%g)", info->residual);
    /* a finite residual can hide a non-finite x: an entry whose column of
     * A is empty never reaches b - A x (a scaled x: checked on its way back) */
    double xmax = 0;
    if (info->converged && !a->scale) ADIA_TRY(max_abs_x(R, &xmax));
    if (!isfinite(xmax)) {
        info->converged = 0;
        snprintf(info->stop, sizeof info->stop, "non-finite solution (max |x_i| = %g)", xmax);
    }
    ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
    adia__phase("gpu: x checked");
    return ADIA_OK;
}

template <typename T>
adia_status solve(const adia_solve_gpu_args *a, adia_solve_info *info)
{
    solve_run<T> R;
    R.a = a;
    R.n = a->op->n;
    R.op = a->op;
    R.comm = a->comm;
    R.split = a->comm->sum_device != nullptr;
    R.M = a->M;
    R.m_alpha = 1.0 / a->a_scale;   /* a power of two: exact */
    R.flex = R.M && R.M->ops->varies;
    R.spmvs = R.graph_spmvs = 0;
    adia_status s = R.n > INT32_MAX
                        ? adia__error(ADIA_ERR_DIMENSION, "adia_solve_operator: %lld rows on one "
                                      "process; the GPU methods take at most 2^31 - 1",
                                      (long long)R.n)
                        : setup(R);
    ADIA_TRY(agreed(a->comm, s));
    adia__phase("gpu: workspace");
    cudaStream_t user = (cudaStream_t)a->stream;
    ADIA_CUDA_TRY(cudaStreamSynchronize(user));   /* b and x are ready */
    /* and the set-up's memsets and uploads, queued on the legacy stream,
     * which the solver's non-blocking stream does not wait for (NULL:
     * that was the legacy stream) */
    if (user) ADIA_TRY(adia__gpu_fence("GPU solver set-up"));
    double bnorm = 0;
    ADIA_TRY(norm(R, R.b, &bnorm));
    adia__phase("gpu: ||b||");
    const double bmax = R.w.host->norm_max;   /* norm() copied the state back */
    if (!isfinite(bmax) || isnan(R.w.host->norm_m))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_solve: b holds a non-finite value");
    if (R.w.host->norm_m == 0) {   /* the solution is 0 */
        ADIA_CUDA_TRY(cudaMemsetAsync(R.x, 0, R.n * sizeof(T), R.w.stream));
        ADIA_CUDA_TRY(cudaStreamSynchronize(R.w.stream));
        info->converged = 1;
        snprintf(info->stop, sizeof info->stop, "b = 0: x = 0");
        return ADIA_OK;
    }
    R.eb = 0;
    if (a->scale) ADIA_TRY(scale_start(R, &bnorm));   /* bnorm in [0.5, 1) then */
    const double tol = a->rtol * bnorm;
    /* The iterations compare squared norms (r'r against (rtol ||b||)^2):
     * both squares must be normal doubles, or the test is Inf <= Inf or
     * never met.  The system is scaled (||b|| in [0.5, 1): here or in
     * solve.c), so only a tiny rtol or an unscaled b can miss it. */
    if (!(bnorm * bnorm <= DBL_MAX) || !(tol * tol >= DBL_MIN)) {
        if (a->scale) scale_x(R, R.eb - a_exponent(a), true);   /* x0 back, waited for */
        return adia__error(ADIA_ERR_INVALID_ARG, "GPU solver: ||b|| = %g (max |b_i| = %g), rtol "
                          "%g: (rtol ||b||)^2 must lie in the range of double (rtol ||b|| above "
                          "1.5e-154 on the system scaled to ||b|| ~ 1)", bnorm, bmax, a->rtol);
    }
    /* setup (the caller's setup_ms): the workspace above, the norm of b
     * and the capture, which instantiates the graph and runs the first
     * SpMV's host side (an NVRTC compile of a generated kernel); nothing is
     * queued (norm() synchronised), so the clock starts at the first
     * iteration's launch and stops after the last true residual */
    capture(R);
    adia__phase("gpu: graph captured");
    adia_status s2 = iterations(R, tol, bnorm, info);
    if (a->scale && s2 == ADIA_OK) s2 = scale_back(R, tol, bnorm, info);
    else if (a->scale) scale_x(R, R.eb - a_exponent(a), true);   /* x back all the same */
    int dev = 0;
    if (s2 == ADIA_OK && a->park && cudaStreamSynchronize(R.w.stream) == cudaSuccess &&
        cudaGetDevice(&dev) == cudaSuccess)
        park(R.w, a->park, dev);   /* idle: the next solve on the plan starts from it */
    (void)cudaGetLastError();
    return s2;
}

} // namespace
} // namespace adia__gpu_solve

extern "C" adia_status adia__solve_gpu(const adia_solve_gpu_args *a, adia_solve_info *info)
{
    info->spmv_ms = NAN;   /* not separable from the fused iteration */
    return a->op->vt == ADIA_FLOAT ? adia__gpu_solve::solve<float>(a, info)
                                : adia__gpu_solve::solve<double>(a, info);
}

/* Host doubles to the device in the plan's type: copied as they are for
 * a double plan, converted through a staging array for a float one. */
static adia_status upload(const double *h, int64_t n, adia_value_type vt, void *d)
{
    if (vt == ADIA_DOUBLE)
        return adia_cuda_check(cudaMemcpy(d, h, n * sizeof(double), cudaMemcpyHostToDevice),
                               "GPU solver upload");
    std::vector<float> f(h, h + n);
    return adia_cuda_check(cudaMemcpy(d, f.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                           "GPU solver upload");
}

static adia_status download(const void *d, int64_t n, adia_value_type vt, double *h)
{
    if (vt == ADIA_DOUBLE)
        return adia_cuda_check(cudaMemcpy(h, d, n * sizeof(double), cudaMemcpyDeviceToHost),
                               "GPU solver download");
    std::vector<float> f(n);
    ADIA_TRY(adia_cuda_check(cudaMemcpy(f.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost),
                             "GPU solver download"));
    for (int64_t i = 0; i < n; i++) h[i] = f[i];
    return ADIA_OK;
}

/* v = v 2^e (exact, as the host's ldexp) */
static __global__ void scale_pow2_kernel(double *v, int64_t n, int e)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        v[i] = ldexp(v[i], e);
}

/* Host passes and PCIe copies are most of a host-vector solve's set-up
 * (e.g. lap3d7:256 on an H200: 134 MB a vector): b is scaled here rather
 * than copied and scaled on the host, and x0 = 0 is set, not uploaded. */
extern "C" adia_status adia__solve_gpu_host(const adia_solve_gpu_args *a, const double *b,
                                           double *x, adia_solve_info *info)
{
    const int64_t n = a->op->n;
    const adia_value_type vt = a->op->vt;
    size_t bytes = (size_t)n * adia_value_size(vt);
    void *d = nullptr;
    adia_status s = adia_cuda_check(cudaMalloc(&d, 2 * bytes + 1), "GPU solver b and x");
    adia_solve_gpu_args g = *a;
    g.d_b = d;
    g.d_x = (char *)d + bytes;
    g.stream = nullptr;
    if (s == ADIA_OK && a->b_exp != 0 && vt != ADIA_DOUBLE)
        s = adia__error(ADIA_ERR_INTERNAL, "GPU solver: b scaled on the device for a %s plan",
                        adia_value_type_name(vt));
    if (s == ADIA_OK) s = upload(b, n, vt, d);
    if (s == ADIA_OK && a->b_exp != 0 && n > 0) {
        const int64_t blocks = (n + 255) / 256;
        const unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
        scale_pow2_kernel<<<grid, 256>>>((double *)d, n, a->b_exp);
        s = adia_cuda_check(cudaGetLastError(), "GPU solver: scaling b");
    }
    if (s == ADIA_OK)
        s = a->x_zero ? adia_cuda_check(cudaMemset(g.d_x, 0, bytes), "GPU solver x0")
                      : upload(x, n, vt, g.d_x);
    s = adia__gpu_solve::agreed(a->comm, s);
    adia__phase("gpu: b, x0 uploaded");
    if (s == ADIA_OK) s = adia__solve_gpu(&g, info);
    if (s == ADIA_OK) s = download(g.d_x, n, vt, x);
    adia__phase("gpu: x downloaded");
    cudaFree(d);
    return s;
}


/* max |v_i| (NaN ignored: fmax) into *out as the bits of a double, >= 0
 * doubles ordering as their bits do */
template <typename T>
static __global__ void max_abs_kernel(const T *v, int64_t n, unsigned long long *out)
{
    double m = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        m = fmax(m, fabs((double)v[i]));
    for (int d = 16; d; d >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, d));
    if ((threadIdx.x & 31) == 0 && m > 0)
        atomicMax(out, (unsigned long long)__double_as_longlong(m));
}

/* A host scan of the CSR's values was a pass over 0.9 GB at lap3d7:256
 * before every solve; the plan's own array is on the device already. */
extern "C" adia_status adia__solve_plan_max_abs(const adia_plan *plan, double *big)
{
    const adia_format *F = adia_plan_format((adia_plan *)plan);
    const adia_diag *D = F ? adia__format_diag_structure(F) : nullptr;
    const adia_diag_args *g = F ? adia__gpu_diag_args(F) : nullptr;
    if (!D || !g || !g->data || D->n_scatter) return ADIA_ERR_UNSUPPORTED;
    const int64_t n = D->piece_data[D->n_pieces];   /* every slot: padding holds 0 */
    unsigned long long *d = nullptr, h = 0;
    ADIA_TRY(adia_cuda_check(cudaMalloc(&d, sizeof *d), "max |A| on the device"));
    adia_status s = adia_cuda_check(cudaMemset(d, 0, sizeof *d), "max |A| on the device");
    if (s == ADIA_OK && n > 0) {
        const int64_t blocks = (n + 255) / 256;
        const unsigned grid = (unsigned)(blocks < 4096 ? blocks : 4096);
        if (F->vtype == ADIA_DOUBLE) max_abs_kernel<<<grid, 256>>>((const double *)g->data, n, d);
        else max_abs_kernel<<<grid, 256>>>((const float *)g->data, n, d);
        s = adia_cuda_check(cudaGetLastError(), "max |A| on the device");
    }
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost),
                            "max |A| on the device");
    cudaFree(d);
    memcpy(big, &h, sizeof *big);
    return s;
}
