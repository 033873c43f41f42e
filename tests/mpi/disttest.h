/* disttest.h -- what the MPI tests share: the test vector and the error
 * of a distributed vector against the whole reference. */
#ifndef ADIA_DISTTEST_H
#define ADIA_DISTTEST_H

#include <math.h>
#include <mpi.h>
#include <stdint.h>

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

#endif
