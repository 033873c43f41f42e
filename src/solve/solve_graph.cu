/* solve_graph.cu -- the GPU solver's iteration loop (solve_gpu.cuh): one
 * iteration's kernels captured once as a graph and replayed until the
 * device says stop, and the host loop around it (GMRES's cycles, the
 * final state). */
#include "solve_gpu.cuh"

namespace adia__gpu_solve {
namespace {

/* One iteration's kernels on the solver's stream (captured into the graph). */
template <typename T>
adia_status iteration(solve_run<T> &R)
{
    if (R.a->method == ADIA_SOLVE_GMRES) {
        ADIA_TRY(adia__gm_step(&R.method));
    } else if (R.a->method == ADIA_SOLVE_CG) {
        ADIA_TRY(adia__cg_iteration(&R.method));
    } else {
        ADIA_TRY(adia__bicg_iteration(&R.method));
    }
    return adia_cuda_check(cudaGetLastError(), "GPU solver iteration");
}

/* The iteration loop as one graph: a WHILE node (CUDA 12.4+) whose body
 * is one iteration, repeated on the device until the last kernel of an
 * iteration says stop -- no host round trip and no work after the stop.
 * Where conditional nodes are not available (older driver), a chunk of
 * iterations is captured instead and replayed until the state says stop;
 * then the SpMVs of the chunk's remaining iterations still run. */
static int chunk_size(int64_t n) { return n < (1 << 20) ? 32 : 8; }

template <typename T>
adia_status capture_iterations(solve_run<T> &R, cudaGraph_t body, cudaGraph_t whole, int count)
{
    cudaError_t e = body ? cudaStreamBeginCaptureToGraph(R.w.stream, body, nullptr, nullptr, 0,
                                                         cudaStreamCaptureModeThreadLocal)
                         : cudaStreamBeginCapture(R.w.stream, cudaStreamCaptureModeThreadLocal);
    ADIA_TRY(adia_cuda_check(e, "GPU solver graph capture"));
    adia_status s = ADIA_OK;
    int before = R.spmvs;
    for (int i = 0; i < count && s == ADIA_OK; i++) s = iteration(R);
    R.graph_spmvs = R.spmvs - before;
    R.spmvs = before;
    cudaGraph_t g = body;
    e = cudaStreamEndCapture(R.w.stream, &g);
    if (s == ADIA_OK) s = adia_cuda_check(e, "GPU solver graph capture");
    /* the graph that holds the body: a WHILE node's body alone cannot be
     * instantiated (cudaErrorNotSupported, every solve fell back to
     * chunks until 2026-11-27); an operator's kernels keep their streams'
     * priorities (a halo's transfer scheduled ahead of the product's
     * blocks) */
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaGraphInstantiate(&R.w.exec, body ? whole : g,
                                                 cudaGraphInstantiateFlagUseNodePriority),
                            "GPU solver graph");
    if (g && !body) cudaGraphDestroy(g);
    return s;
}

template <typename T>
adia_status capture_while(solve_run<T> &R)
{
    cudaGraph_t g = nullptr;
    if (cudaGraphCreate(&g, 0) != cudaSuccess) return ADIA_ERR_UNSUPPORTED;
    cudaGraphNodeParams np = {};
    np.type = cudaGraphNodeTypeConditional;
    np.conditional.type = cudaGraphCondTypeWhile;
    np.conditional.size = 1;
    cudaGraphNode_t node;
    adia_status s = ADIA_ERR_UNSUPPORTED;
    if (cudaGraphConditionalHandleCreate(&np.conditional.handle, g, 1,
                                         cudaGraphCondAssignDefault) == cudaSuccess &&
        cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &np) == cudaSuccess) {
        R.w.cond = np.conditional.handle;
        R.w.use_cond = true;
        s = capture_iterations(R, np.conditional.phGraph_out[0], g, 1);
        if (s != ADIA_OK) R.w.use_cond = false;
    }
    cudaGetLastError();   /* an unsupported conditional node is not an error here */
    cudaGraphDestroy(g);
    return s;
}

/* Whether an attempt worked on every process (an operator's processes
 * must all take the same way, or their collectives would not meet); a
 * failed capture leaves nothing behind. */
template <typename T>
bool everywhere(solve_run<T> &R, adia_status s)
{
    double failed = s != ADIA_OK;
    if (R.comm->max) R.comm->max(R.comm->ctx, &failed, 1);
    if (failed == 0) return true;
    if (R.w.exec) cudaGraphExecDestroy(R.w.exec);
    R.w.exec = nullptr;
    R.w.use_cond = false;
    cudaGetLastError();
    return false;
}

} // namespace

/* The loop as one WHILE graph, else chunks of iterations as a plain
 * graph, else (an operator that waits on the host, or a capture that
 * failed) no graph: iterate() launches iteration by iteration. */
template <typename T>
void capture(solve_run<T> &R)
{
    int graph = R.op->device_graph;
    if (R.M && R.M->ops->graph < graph) graph = R.M->ops->graph;   /* what M's apply queues */
    if (graph >= 2 && everywhere(R, capture_while(R))) return;
    if (graph >= 1) everywhere(R, capture_iterations(R, nullptr, nullptr, chunk_size(R.n)));
}

/* Run the graph until the device stops (GMRES: cycle by cycle, x updated
 * and the residual recomputed between cycles); *st is the final state. */
template <typename T>
adia_status iterate(solve_run<T> &R, state *st)
{
    for (;;) {
        ADIA_TRY(read_state(R, "GPU solver: its state"));
        *st = *R.w.host;
        if (R.a->method == ADIA_SOLVE_GMRES && (st->status != RUNNING || st->j >= st->m)) {
            ADIA_TRY(adia__gm_end_cycle(&R.method));
            ADIA_TRY(adia_cuda_check(cudaGetLastError(), "GPU GMRES update"));
            if (st->status != RUNNING) return ADIA_OK;
            ADIA_TRY(adia__gm_begin_cycle(&R.method));   /* restart: the loop reads its state */
            ADIA_TRY(adia_cuda_check(cudaGetLastError(), "GPU GMRES cycle"));
            continue;
        }
        if (st->status != RUNNING) return ADIA_OK;
        if (!R.w.exec) {   /* no graph: one iteration, its products counted as they go */
            ADIA_TRY(iteration(R));
            continue;
        }
        ADIA_CUDA_TRY(cudaGraphLaunch(R.w.exec, R.w.stream));
        if (!R.w.use_cond) R.spmvs += R.graph_spmvs;   /* WHILE: counted per iteration */
    }
}

template void capture<double>(solve_run<double> &);
template void capture<float>(solve_run<float> &);
template adia_status iterate<double>(solve_run<double> &, state *);
template adia_status iterate<float>(solve_run<float> &, state *);

} // namespace adia__gpu_solve
