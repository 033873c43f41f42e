/* precond_gpu.h -- what the GPU preconditioner tests (test_gpu_cheb.c,
 * test_gpu_mg.c) share: z = alpha M r on the device from host doubles,
 * and the apply captured into a CUDA graph and replayed. */
#ifndef ADIA_TEST_PRECOND_GPU_H
#define ADIA_TEST_PRECOND_GPU_H

#include "testutil.h"
#include "precond/precond.h"   /* M->ops->apply: alpha */

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* z = alpha M r on the device with host doubles in and out (fl: the
 * plan's values in float); 1 when done. */
static int pg_apply(adia_precond *M, double alpha, const double *r, double *z, int64_t n, int fl)
{
    void *dr = test_gpu_upload(r, n, fl), *dz = test_gpu_upload(r, n, fl);
    int ok = dr && dz;
    if (ok) {
        adia_status s = alpha == 1 ? adia_precond_apply(M, dr, dz, NULL)
                                   : M->ops->apply(M, alpha, dr, dz, NULL);
        CHECK(s == ADIA_OK, "GPU apply: %s", adia_last_error());
        ok = s == ADIA_OK && cudaDeviceSynchronize() == cudaSuccess &&
             test_gpu_download(z, dz, n, fl) == 0;
    }
    cudaFree(dr);
    cudaFree(dz);
    return ok;
}

/* s without its "plan NAME, " words: a level's format is the planner's
 * choice for its device (CSR on the host, DIA on the GPU), not a
 * difference of the hierarchy. */
static void pg_drop_plans(char *s)
{
    for (char *p = strstr(s, "plan "); p; p = strstr(p + 1, "plan ")) {
        const size_t w = strcspn(p + 5, ", \n");   /* the name: one word */
        if (w > 0 && strncmp(p + 5 + w, ", ", 2) == 0) memmove(p, p + 7 + w, strlen(p + 7 + w) + 1);
    }
}

/* The same preconditioner on a CPU plan (Mc) and a GPU plan (Mg, fl: in
 * float) of one matrix of n rows: z = alpha M r agree within tol (alpha
 * 0.5 in double, 1 in float), and their explain texts agree from the
 * first `from` to the `to` after it (what both must have computed alike:
 * an interval, a hierarchy; the levels' formats aside).  label names a failure. */
static void pg_same_as_cpu(adia_precond *Mc, adia_precond *Mg, int32_t n, int fl, double tol,
                           const char *from, const char *to, const char *label)
{
    double *r = malloc(n * sizeof *r), *zc = malloc(n * sizeof *zc);
    double *zg = malloc(n * sizeof *zg);
    uint64_t seed = 17;
    test_rand_vector(&seed, r, n);
    const double alpha = fl ? 1.0 : 0.5;
    CHECK_OK(Mc->ops->apply(Mc, alpha, r, zc, NULL));
    if (pg_apply(Mg, alpha, r, zg, n, fl)) {
        const double err = test_rel_err(zg, zc, n);
        CHECK(err < tol, "%s %s: GPU vs CPU error %g", label, fl ? "float" : "double", err);
    }
    char bc[4096], bg[4096];
    CHECK_OK(adia_precond_explain(Mc, bc, sizeof bc));
    CHECK_OK(adia_precond_explain(Mg, bg, sizeof bg));
    pg_drop_plans(bc), pg_drop_plans(bg);
    const char *ic = strstr(bc, from), *ig = strstr(bg, from);
    const char *ec = ic ? strstr(ic, to) : NULL;
    CHECK(ic && ig && ec && strncmp(ic, ig, (size_t)(ec - ic)) == 0, "%s: explain from \"%s\"\n%s\n%s",
          label, from, bc, bg);
    free(r), free(zc), free(zg);
}

/* The apply of a double M (n rows) captured into a CUDA graph on a stream
 * of our own: replayed twice, each replay gives the direct apply's z;
 * prints the graph's nodes and explain under what. */
static void pg_graph_replay(adia_precond *M, int32_t n, const char *what)
{
    double *r = malloc(n * sizeof *r), *z1 = malloc(n * sizeof *z1), *z2 = malloc(n * sizeof *z2);
    uint64_t seed = 23;
    test_rand_vector(&seed, r, n);
    CHECK(pg_apply(M, 1.0, r, z1, n, 0), "direct apply");
    void *dr = test_gpu_upload(r, n, 0), *dz = test_gpu_upload(r, n, 0);
    cudaStream_t st = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "stream");
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture");
    CHECK_OK(adia_precond_apply(M, dr, dz, st));
    CHECK(cudaStreamEndCapture(st, &g) == cudaSuccess, "end capture: %s",
          cudaGetErrorString(cudaGetLastError()));
    CHECK(g && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess, "instantiate");
    for (int rep = 0; rep < 2 && ge; rep++) {
        cudaMemsetAsync(dz, 0xff, (size_t)n * sizeof(double), st);   /* NaN: z is written */
        CHECK(cudaGraphLaunch(ge, st) == cudaSuccess, "launch");
        CHECK(cudaStreamSynchronize(st) == cudaSuccess, "sync");
        CHECK(test_gpu_download(z2, dz, n, 0) == 0, "download");
        CHECK(test_rel_err(z2, z1, n) < 1e-14, "%s: graph replay %d: error %g", what, rep,
              test_rel_err(z2, z1, n));
    }
    size_t nodes = 0;
    if (g) cudaGraphGetNodes(g, NULL, &nodes);
    char buf[4096];
    CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
    printf("graph of %s: %zu nodes\n%s", what, nodes, buf);
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    if (st) cudaStreamDestroy(st);
    cudaFree(dr);
    cudaFree(dz);
    free(r), free(z1), free(z2);
}

#endif
