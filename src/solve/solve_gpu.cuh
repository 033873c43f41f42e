/* solve_gpu.cuh -- what the files of the GPU solver share: the solver's
 * state, one solve's workspace (solve_run), the device side of a
 * reduction's end, the operator and the preconditioner's stage as the
 * methods queue them, and the host functions one file calls in another.
 *
 * Every vector stays on the GPU; A is the operator's device product
 * (solve_internal.h: a plan's or an adia_operator's); the scalars (alpha,
 * beta, ...) live in device memory and are computed by the last block of
 * each reduction, so no iteration waits for the host.  The iteration loop
 * is one CUDA graph with a device-side WHILE node (solve_graph.cu); the
 * host waits once per solve.  An operator held by several processes (the
 * reductions' sum_device set) splits each reduction: the last block
 * stores this process's totals, the reductions sum them over the
 * processes on the stream, and a one-thread kernel finishes what the last
 * block would have (reduce_finish).
 * Reductions are deterministic (src/cuda/gpu_reduce.cuh).  Success is
 * judged on the true residual b - A x, recomputed at the end with a
 * scaled (overflow-free) norm (solve_gpu.cu).
 *
 * Files: solve_gpu.cu (workspace, setup, the operator, norms, the solve
 * and its report, the entry points), cg_gpu.cu, bicgstab_gpu.cu,
 * gmres_gpu.cu (each method's kernels and the host functions that queue
 * them), solve_graph.cu (the iteration captured as a graph, the host
 * loop).  Kernels stay local to their file; the host templates called
 * across files are instantiated there for double and float (explicit
 * instantiations at each file's end), so every kernel is compiled once. */
#ifndef ADIA_SOLVE_GPU_CUH
#define ADIA_SOLVE_GPU_CUH

#include "method.h"
#include "../cuda/gpu_common.h"
#include "../cuda/gpu_reduce.cuh"
#include "../precond/precond.h"

#include <math.h>

namespace adia__gpu_solve {

using adia__reduce::NT;

/* The solver's state and its verdicts (method.h), in device memory. */
using state = solve_state;
enum status { RUNNING = SOLVE_RUNNING, CONVERGED = SOLVE_CONVERGED, LIMIT = SOLVE_LIMIT,
              BREAKDOWN = SOLVE_BREAKDOWN, NONFINITE = SOLVE_NONFINITE };

/* GMRES's short vectors (method.h), in device memory. */
using gm_small = solve_gm_small;

/* ------------------------------------------------------- device side */

#define GRID_LOOP(i, n) \
    for (int64_t i = blockIdx.x * (int64_t)NT + threadIdx.x; i < (n); i += (int64_t)gridDim.x * NT)

namespace {

/* A reduction's end: f(st, totals) in the last block -- or, split, the
 * totals into st->sums for the processes' sum, after which finish_kernel
 * runs f (host side: finish()).  f first checks what the kernel checked
 * before reducing (a split finish runs whether or not the kernel did). */
template <int NV, class F>
__device__ void reduce_finish(double (&v)[NV], double *partial, state *st, const F &f)
{
    if (!adia__reduce::grid_reduce<NV>(v, partial, &st->count)) return;
    if (!st->split) {
        f(st, v);
        return;
    }
    for (int j = 0; j < NV; j++) st->sums[j] = v[j];
}

template <class F>
__global__ void finish_kernel(state *st, F f)
{
    f(st, st->sums);
}

/* Stop test after the recurrence's ||r||^2 is known (one thread). */
__device__ inline void check_stop(state *st, double rr) { solve_check_stop(st, rr); }

/* The product's sums zeroed once every block has read them (one thread,
 * after the reduction's last arrival): the next product adds to 0. */
__device__ inline void zero_sums(double *dots)
{
    for (int j = 0; j < SOLVE_NDOT; j++) dots[j] = 0;
}

/* The graph's WHILE loop runs another iteration while this says 1; called
 * once per iteration, by one thread, after the status is final. */
__device__ inline void loop_again(bool use_cond, cudaGraphConditionalHandle h, const state *st)
{
    if (use_cond) cudaGraphSetConditional(h, st->status == RUNNING);
}

} // namespace

/* --------------------------------------------------------- host side */

/* The device memory and stream of one solve: what a workspace frees, or
 * leaves with its plan for the next solve (parked_memory). */
struct solve_memory {
    void *vec = nullptr;         /* k vectors of n values                    */
    double *partial = nullptr;   /* block sums: grid x 2 (GMRES: x (m + 2))  */
    double *small = nullptr;     /* GMRES: H and the short vectors            */
    void *dot_mem = nullptr;     /* CG, BiCGSTAB: the products' fused sums    */
    size_t vec_bytes = 0, partial_bytes = 0, small_bytes = 0;   /* as allocated */
    int64_t dot_rows = -1;       /* rows dot_mem is laid out for              */
    state *st = nullptr;
    cudaStream_t stream = nullptr;
    void release()               /* everything freed, nothing held */
    {
        if (stream) cudaStreamDestroy(stream);
        cudaFree(vec);
        cudaFree(small);
        cudaFree(dot_mem);
        cudaFree(partial);
        cudaFree(st);
        *this = solve_memory{};
    }
};

/* What a solve leaves with its plan (adia__solve_parked). */
struct parked_memory {
    adia__solve_parked head;     /* first: the plan frees it through head   */
    int device;
    solve_memory mem;
};

/* One solve's memory (freed by the destructor unless parked) and state. */
struct workspace : solve_memory {
    adia_dot_work dots = {};
    state host_state = {};       /* the host's copy of st: plain memory (a
                                    pinned one took 0.9-1.8 ms to allocate per
                                    solve; the copies wait on the stream anyway) */
    state *host = &host_state;
    workspace() = default;
    workspace(const workspace &) = delete;   /* host points into it; frees once */
    workspace &operator=(const workspace &) = delete;
    cudaGraphExec_t exec = nullptr;
    bool use_cond = false;       /* exec is a device-side WHILE loop         */
    cudaGraphConditionalHandle cond = 0;
    ~workspace()
    {
        if (exec) cudaGraphExecDestroy(exec);
        release();
    }
};

/* One solve's constant description, with the workspace's vectors. */
template <typename T>
struct solve_run {
    const adia_solve_gpu_args *a;
    int64_t n;
    unsigned grid;
    workspace w;
    int spmvs;                   /* products launched, graph replays included */
    int graph_spmvs;             /* products in one replay of the graph       */
    int m;                       /* GMRES: restart length                     */
    unsigned dot_grid;           /* GMRES: blocks per basis vector in gm_dots */
    gm_small sm;
    T *x, *b, *r, *p, *q, *d, *r0, *ph, *sh, *t, *V;
    T *u, *s;                    /* CG: D r or M r (= r without either), A p */
    T *gz;                       /* GMRES: the product's input, D V_j or M V_j */
    T *Z;                        /* FGMRES: Z_j = M V_j, m vectors            */
    const adia_precond *M;       /* the stage z = m_alpha M r, or NULL        */
    double m_alpha;              /* 1 / a_scale: M approximates A^-1          */
    bool flex;                   /* M varies: flexible GMRES                  */
    bool fused;                  /* the sums ride in the product's epilogue   */
    const adia__solve_op *op;    /* A                                          */
    const adia__solve_comm *comm; /* its reductions over the processes        */
    bool split;                  /* comm->sum_device: several processes       */
    solve_method method;         /* the method's view: the GPU's kernels, this */
    int eb = 0;                  /* b is scaled by 2^-eb where it is read      */
};

/* A vector the method names (method.h), as this solve's array. */
template <typename T>
T *vec(solve_run<T> &R, solve_vec v)
{
    switch (v) {
    case SV_X: return R.x;
    case SV_B: return R.b;
    case SV_R: return R.r;
    case SV_P: return R.p;
    case SV_Q: return R.q;
    case SV_S: return R.s;
    case SV_U: return R.u;
    case SV_R0: return R.r0;
    case SV_PH: return R.ph;
    case SV_SH: return R.sh;
    case SV_T: return R.t;
    default: return nullptr;
    }
}

/* A method's kernels of NT-thread blocks (host stubs), for the grid size
 * every one of them keeps resident (solve_gpu.cu, resident_blocks). */
struct kernel_list {
    const void *k[8];
    int count;
};

/* The device state into R.w.host: a wait for the solver's stream. */
template <typename T>
adia_status read_state(solve_run<T> &R, const char *what)
{
    ADIA_TRY(adia_cuda_check(cudaMemcpyAsync(R.w.host, R.w.st, sizeof(state),
                                             cudaMemcpyDeviceToHost, R.w.stream), what));
    return adia_cuda_check(cudaStreamSynchronize(R.w.stream), what);
}

/* y = A x, queued. */
template <typename T>
adia_status spmv(solve_run<T> &R, const T *x, T *y)
{
    R.spmvs++;
    return R.op->apply_device(R.op->ctx, R.a->a_scale, x, y, R.w.stream);
}

/* v[0..count) (device) summed over the processes, queued (one process:
 * nothing to do). */
template <typename T>
void combine(solve_run<T> &R, double *v, int count)
{
    if (R.split) R.comm->sum_device(R.comm->ctx, v, count, R.w.stream);
}

/* y = A x with the sums of adia_dot_work (companion z) in R.w.dots.out,
 * summed over the processes.  The operator ADDS its sums (a product cut
 * in parts sums them in one place): the kernel that reads them zeroes
 * them for the next product (zero_sums), which costs no node of its own
 * -- a memset before each product was up to 4% of a small grid's
 * iteration. */
template <typename T>
adia_status spmv_dot(solve_run<T> &R, const T *x, T *y, const T *z)
{
    adia_dot_work dw = R.w.dots;
    dw.z = z;
    cudaStream_t s = R.w.stream;
    if (R.op->apply_sums_device) {
        R.spmvs++;
        ADIA_TRY(R.op->apply_sums_device(R.op->ctx, R.a->a_scale, x, y, z, dw.out, dw.partial,
                                         s));
    } else {   /* a pass of their own, stored */
        ADIA_TRY(spmv(R, x, y));
        ADIA_TRY(adia__gpu_dots(R.op->vt, x, y, (int32_t)R.n, &dw, s));
    }
    combine(R, dw.out, ADIA_NDOT);
    return ADIA_OK;
}

/* A split reduction's end: the processes' sum of st->sums, then f. */
template <typename T, class F>
adia_status finish(solve_run<T> &R, int count, const F &f)
{
    if (!R.split) return ADIA_OK;
    combine(R, R.w.st->sums, count);
    finish_kernel<F><<<1, 1, 0, R.w.stream>>>(R.w.st, f);
    return adia_cuda_check(cudaGetLastError(), "GPU solver reduction");
}

/* z = M r (alpha 1 / a_scale), queued: the preconditioner's stage. */
template <typename T>
adia_status precond(solve_run<T> &R, const T *r, T *z)
{
    return R.M->ops->apply(R.M, R.m_alpha, r, z, R.w.stream);
}

/* Host functions one file calls in another (instantiated for double and
 * float where they are defined).  Each queues on R.w.stream and returns
 * the first failure; the caller checks the launches' cudaGetLastError. */

/* solve_gpu.cu: r = b - A x. */
template <typename T> adia_status residual(solve_run<T> &R);

/* cg_gpu.cu: the GPU's cg_start and cg_step (solve_kernels). */
template <typename T> adia_status cg_start_kernels(solve_run<T> &R);
template <typename T> adia_status cg_step_kernels(solve_run<T> &R);
template <typename T> kernel_list cg_kernels();
/* solve_gpu.cu: the GPU's table of kernels (method.h) for vectors of T. */
template <typename T> const solve_kernels *gpu_kernels();

/* bicgstab_gpu.cu: the GPU's bicg_start, _direction, _half, _update. */
template <typename T> adia_status bicg_start_kernels(solve_run<T> &R);
template <typename T> adia_status bicg_direction_kernels(solve_run<T> &R);
template <typename T> adia_status bicg_half_kernels(solve_run<T> &R);
template <typename T> adia_status bicg_update_kernels(solve_run<T> &R);
template <typename T> kernel_list bicg_kernels();

/* gmres_gpu.cu: the GPU's gm_* entries. */
template <typename T> adia_status gm_cycle_start_kernels(solve_run<T> &R);
template <typename T> adia_status gm_next_basis_kernels(solve_run<T> &R);
template <typename T> adia_status gm_orthogonalize_kernels(solve_run<T> &R);
template <typename T> adia_status gm_givens_kernels(solve_run<T> &R);
template <typename T> adia_status gm_keep_z_kernels(solve_run<T> &R);
template <typename T> adia_status gm_update_x_kernels(solve_run<T> &R);
template <typename T> adia_status gm_combine_kernels(solve_run<T> &R);
template <typename T> adia_status add_q_kernels(solve_run<T> &R);
template <typename T> kernel_list gm_kernels();

/* solve_graph.cu: the iteration captured as a graph (or none, where the
 * operator or M waits on the host); the loop until the device stops, *st
 * the final state. */
template <typename T> void capture(solve_run<T> &R);
template <typename T> adia_status iterate(solve_run<T> &R, state *st);

} // namespace adia__gpu_solve

#endif /* ADIA_SOLVE_GPU_CUH */
