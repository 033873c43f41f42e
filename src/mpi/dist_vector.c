/* dist_vector.c -- whole vectors on one rank to the processes' rows and
 * back (MPI_Scatterv / MPI_Gatherv), and vector files read or written by
 * rank 0: vectors are O(n), so one process may hold a whole one. */
#include "dist.h"

/* Counts and displacements of every rank's rows (int: a block's rows are
 * 32-bit; the displacements must be too). */
static adia_status layout(const adia_dist_matrix *D, int **count, int **displ)
{
    *count = adia__dist_alloc(2 * (size_t)D->size, sizeof **count, "vector layout");
    if (!*count) return ADIA_ERR_NO_MEMORY;
    *displ = *count + D->size;
    if (D->n > INT32_MAX)
        return adia_set_error(ADIA_ERR_OVERFLOW, "a whole vector of %lld values does not fit "
                              "MPI's int displacements", (long long)D->n);
    for (int r = 0; r < D->size; r++) {
        (*count)[r] = (int)(D->starts[r + 1] - D->starts[r]);
        (*displ)[r] = (int)D->starts[r];
    }
    return ADIA_OK;
}

/* One MPI_Scatterv (gather 0) or MPI_Gatherv (gather 1), arguments agreed. */
static adia_status move(const adia_dist_matrix *D, int root, const double *from, double *to,
                        int gather, const char *func)
{
    DIST_TRY(adia__dist_check(D, func));
    int *count = NULL, *displ = NULL;
    adia_status s = root < 0 || root >= D->size
                        ? adia_set_error(ADIA_ERR_INVALID_ARG, "%s: root %d of %d ranks", func,
                                         root, D->size)
                    : (!from && (gather || D->rank == root)) || (!to && (!gather || D->rank == root))
                        ? adia_set_error(ADIA_ERR_INVALID_ARG, "%s: a vector is NULL", func)
                        : layout(D, &count, &displ);
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK && gather)
        MPI_Gatherv(from, (int)D->rows, MPI_DOUBLE, to, count, displ, MPI_DOUBLE, root, D->comm);
    else if (s == ADIA_OK)
        MPI_Scatterv(from, count, displ, MPI_DOUBLE, to, (int)D->rows, MPI_DOUBLE, root, D->comm);
    free(count);
    return s;
}

adia_status adia_dist_scatter(const adia_dist_matrix *D, int root, const double *full,
                              double *local)
{
    return move(D, root, full, local, 0, "adia_dist_scatter");
}

adia_status adia_dist_gather(const adia_dist_matrix *D, int root, const double *local,
                             double *full)
{
    return move(D, root, local, full, 1, "adia_dist_gather");
}

/* Rank 0's vector file, its length checked against n. */
static adia_status read_root(const adia_dist_matrix *D, const char *path, double **full)
{
    int32_t n = 0;
    adia_status s = adia_vector_read_mtx(path, &n, full);
    if (s == ADIA_OK && n != D->n)
        s = adia_set_error(ADIA_ERR_DIMENSION, "%s has %d entries, the matrix %lld rows", path,
                           (int)n, (long long)D->n);
    return s;
}

adia_status adia_dist_vector_read_mtx(const adia_dist_matrix *D, const char *path,
                                      double **local)
{
    DIST_TRY(adia__dist_check(D, "adia_dist_vector_read_mtx"));
    double *full = NULL;
    adia_status s = !path || !local ? adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_vector_"
                                                     "read_mtx: path or local is NULL")
                    : !(*local = adia__dist_alloc((size_t)D->rows, sizeof **local, "vector"))
                        ? ADIA_ERR_NO_MEMORY
                    : D->rank == 0 ? read_root(D, path, &full) : ADIA_OK;
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK) s = adia_dist_scatter(D, 0, full, *local);
    free(full);
    if (s != ADIA_OK && local) {
        free(*local);
        *local = NULL;
    }
    return s;
}

adia_status adia_dist_vector_write_mtx(const adia_dist_matrix *D, const char *path,
                                       const double *local)
{
    DIST_TRY(adia__dist_check(D, "adia_dist_vector_write_mtx"));
    double *full = NULL;
    adia_status s = !path || !local ? adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_vector_"
                                                     "write_mtx: path or local is NULL")
                    : D->rank == 0 && !(full = adia__dist_alloc((size_t)D->n, sizeof *full,
                                                                "whole vector"))
                        ? ADIA_ERR_NO_MEMORY
                        : ADIA_OK;
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK) s = adia_dist_gather(D, 0, local, full);
    if (s == ADIA_OK && D->rank == 0) s = adia_vector_write_mtx(path, (int32_t)D->n, full);
    free(full);
    return adia__dist_agree(D->comm, s);
}
