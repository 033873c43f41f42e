/* disttest.h -- what the MPI tests share: the test vector, the error of a
 * distributed vector against the whole reference, the devices of all
 * processes. */
#ifndef ADIA_DISTTEST_H
#define ADIA_DISTTEST_H

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* x_i from the global index alone: the same on any number of processes. */
static inline double xval(int64_t i)
{
    return sin(0.37 * (double)i + 1.0) + 0.25 * (double)(i % 5);
}

/* max over processes of max |a_i - ref_i| / max |ref| (ref: whole vector). */
static inline double dist_err(const double *a, const double *ref_local, int64_t rows,
                              const double *ref, int64_t n)
{
    double m[2] = {0, 0};
    for (int64_t i = 0; i < rows; i++)
        if (!(fabs(a[i] - ref_local[i]) <= m[0])) m[0] = fabs(a[i] - ref_local[i]);
    for (int64_t i = 0; i < n; i++)
        if (fabs(ref[i]) > m[1]) m[1] = fabs(ref[i]);
    MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m[0] / (m[1] > 0 ? m[1] : 1);
}

/* CUDA devices every process sees (the fewest over the processes; 0
 * without CUDA): the GPU tests run only where all have one. */
static inline int dist_devices(void)
{
    int n = 0;
#ifdef ADIA_HAVE_CUDA
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
#endif
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return n;
}

#endif
