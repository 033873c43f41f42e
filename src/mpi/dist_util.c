/* dist_util.c -- agreeing on errors across processes, handle checks,
 * checked allocation. */
#include "dist.h"

#include <limits.h>
#include <stdio.h>

/* One MPI_Allreduce finds the lowest failing rank; that rank's status and
 * message are broadcast, so every process returns the same error, and
 * rank 0 (which prints) can say what went wrong elsewhere. */
adia_status adia__dist_agree(MPI_Comm comm, adia_status s)
{
    int rank, size, mine, lowest;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mine = s != ADIA_OK ? rank : INT_MAX;
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm);
    if (lowest == INT_MAX) return ADIA_OK;
    struct {
        int status;
        char msg[960];
    } e = {.status = s};
    if (rank == lowest) snprintf(e.msg, sizeof e.msg, "%s", adia_last_error());
    MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, lowest, comm);
    if (size == 1) return (adia_status)e.status;
    if (!strncmp(e.msg, "rank ", 5))   /* agreed before: named already */
        return adia_set_error((adia_status)e.status, "%s", e.msg);
    return adia_set_error((adia_status)e.status, "rank %d: %s", lowest, e.msg);
}

/* With MPI's default error handler a failing call aborts first; a
 * communicator set to MPI_ERRORS_RETURN gets here. */
adia_status adia__dist_mpi(int rc, const char *call)
{
    if (rc == MPI_SUCCESS) return ADIA_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return adia_set_error(ADIA_ERR_IO, "%s failed: %.*s", call, len, text);
}

adia_status adia__dist_check(const adia_dist_matrix *D, const char *func)
{
    if (!D || D->magic != DIST_MAGIC)
        return adia_set_error(ADIA_ERR_INVALID_HANDLE, "%s: not a live distributed matrix "
                              "(NULL, freed or never created)", func);
    return ADIA_OK;
}

void *adia__dist_alloc(size_t count, size_t size, const char *what)
{
    size_t bytes = count && size > SIZE_MAX / count ? 0 : count * size;
    void *p = bytes || !count || !size ? malloc(bytes ? bytes : 1) : NULL;
    if (!p) adia_set_error(ADIA_ERR_NO_MEMORY, "allocating %s: %zu x %zu bytes failed", what,
                           count, size);
    return p;
}

void adia__dist_grid_planes(int32_t g[3])
{
    if (g[2] == 1 && g[1] > 1) g[2] = g[1], g[1] = 1;
    else if (g[2] == 1 && g[1] == 1) g[2] = g[0], g[0] = 1;
}

adia_status adia__dist_grids(MPI_Comm comm, int64_t n, const int64_t *off, int k,
                             int32_t (*g)[3], int max, int *count)
{
    int64_t mine[DIST_GRID_OFFSETS + 1] = {k > DIST_GRID_OFFSETS ? -1 : k};
    for (int e = 0; e < k && e < DIST_GRID_OFFSETS; e++) mine[1 + e] = off[e];
    int size;
    MPI_Comm_size(comm, &size);
    int64_t *all = adia__dist_alloc((size_t)size * (DIST_GRID_OFFSETS + 1), sizeof *all,
                                    "the processes' offsets");
    *count = 0;
    DIST_TRY(adia__dist_agree(comm, all ? ADIA_OK : ADIA_ERR_NO_MEMORY));
    MPI_Allgather(mine, DIST_GRID_OFFSETS + 1, MPI_INT64_T, all, DIST_GRID_OFFSETS + 1,
                  MPI_INT64_T, comm);
    int u = 0, many = 0;   /* their union, compacted in place */
    for (int q = 0; q < size; q++) {
        const int64_t *a = all + (size_t)q * (DIST_GRID_OFFSETS + 1);
        const int64_t c = a[0];
        many |= c < 0;
        for (int64_t e = 0; e < c; e++) all[u++] = a[1 + e];
    }
    *count = many ? -1 : adia_grid_candidates(n, all, u, g, max);
    for (int i = 0; i < *count; i++) adia__dist_grid_planes(g[i]);
    free(all);
    return ADIA_OK;
}
