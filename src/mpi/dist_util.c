/* dist_util.c -- agreeing on errors across processes, handle checks,
 * checked allocation; rows as a CSR: read back from the parts, shipped
 * between the processes. */
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

/* ---------------------------------------------------------- rows */

void adia__dist_rows_free(dist_rows *r)
{
    free(r->rowptr);
    free(r->col);
    free(r->val);
    memset(r, 0, sizeof *r);
}

adia_status adia__dist_cols32(const dist_rows *r, int64_t cols, const char *what, int32_t **out)
{
    *out = NULL;
    if (cols > INT32_MAX)
        return adia_set_error(ADIA_ERR_DIMENSION, "%s: %lld columns, more than a 32-bit index "
                              "holds (2^31 - 1)", what, (long long)cols);
    int32_t *c = adia__dist_alloc((size_t)r->nnz, sizeof *c, what);
    if (!c) return ADIA_ERR_NO_MEMORY;
    for (int64_t e = 0; e < r->nnz; e++) {
        if (r->col[e] < 0 || r->col[e] >= cols) {
            free(c);
            return adia_set_error(ADIA_ERR_INTERNAL, "%s: column %lld outside the %lld columns",
                                  what, (long long)r->col[e], (long long)cols);
        }
        c[e] = (int32_t)r->col[e];
    }
    *out = c;
    return ADIA_OK;
}

/* ------------------------------------------- the parts read back as rows */

/* The global column of local x position j (the intervals ascend). */
static int64_t global_col(const adia_dist_matrix *D, int64_t j)
{
    int lo = 0, hi = D->niv - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (D->iv[mid].pos <= j) lo = mid;
        else hi = mid - 1;
    }
    return D->iv[lo].start + (j - D->iv[lo].pos);
}

/* Column c of part p's plan in cols' numbering; -1: dropped.  A part on
 * the owned x numbers its columns from this process's first row; the
 * others by the local x, where this process's rows sit at own_pos. */
static int64_t map_col(const adia_dist_matrix *D, const dist_part *p, dist_cols cols, int64_t c)
{
    if (cols == DIST_COLS_GLOBAL) return p->x_own ? D->first + c : global_col(D, c);
    const int64_t own = p->x_own ? c : c - D->own_pos;
    return own >= 0 && own < D->rows ? own : -1;   /* -1: another process's row */
}

/* Part p's rows appended to out: its entries kept by map_col after those
 * of the parts before it (at most cap in all), rowptr[row0 + 1 ..] set.
 * The plan's CSR is made for this and freed before the next part's. */
static adia_status append_part(const adia_dist_matrix *D, const dist_part *p, dist_cols cols,
                               int64_t cap, dist_rows *out)
{
    adia_matrix *M = NULL;
    DIST_TRY(adia_format_to_matrix(adia_plan_format(p->plan), &M));
    adia_csr_view v;
    adia_status s = adia_matrix_csr(M, &v);
    for (int32_t i = 0; s == ADIA_OK && i < v.rows; i++) {
        for (int64_t e = v.rowptr[i]; s == ADIA_OK && e < v.rowptr[i + 1]; e++) {
            const int64_t c = map_col(D, p, cols, v.colind[e]);
            if (c < 0) continue;
            if (out->nnz == cap) {
                s = adia_set_error(ADIA_ERR_INTERNAL, "the parts hold more nonzeros than they "
                                   "count");
                break;
            }
            out->col[out->nnz] = c;
            out->val[out->nnz++] = v.values[e];
        }
        out->rowptr[p->row0 + i + 1] = out->nnz;
    }
    adia_matrix_destroy(M);
    return s;
}

/* Sized once by the nonzeros the parts count: every entry kept at most
 * (DIST_COLS_OWN drops some), no reallocation while the parts are read. */
adia_status adia__dist_read_rows(const adia_dist_matrix *D, dist_cols cols, dist_rows *out)
{
    memset(out, 0, sizeof *out);
    int64_t cap = 0;
    for (int k = 0; k < D->nparts; k++) cap += adia_format_nnz(adia_plan_format(D->part[k].plan));
    out->rows = D->rows;
    out->rowptr = calloc((size_t)D->rows + 1, sizeof *out->rowptr);
    out->col = malloc(((size_t)cap + 1) * sizeof *out->col);
    out->val = malloc(((size_t)cap + 1) * sizeof *out->val);
    adia_status s = out->rowptr && out->col && out->val
                        ? ADIA_OK
                        : adia_set_error(ADIA_ERR_NO_MEMORY, "rank %d: its %lld rows (%lld "
                                         "nonzeros) read back from the parts: out of memory",
                                         D->rank, (long long)D->rows, (long long)cap);
    for (int k = 0; k < D->nparts && s == ADIA_OK; k++)
        s = append_part(D, &D->part[k], cols, cap, out);
    if (s != ADIA_OK) adia__dist_rows_free(out);
    return s;
}

/* ------------------------------------------------------- shipping rows */

/* A shipment's MPI_Alltoallv counts and displacements (MPI's ints) per
 * process: rows and values sent to it, packed in rank order, and received
 * from it into the result in rank order.  This process's rows for itself
 * [lo, hi) never pass through MPI: they are copied into their place among
 * the received (self's displacements). */
typedef struct ship {
    int size, me;
    int *srow, *sval, *dsr, *dsv, *rrow, *rval, *drr, *drv;   /* of one array, 8 x size */
    int64_t lo, hi;
    int64_t nsend, vsend;
} ship;

/* The sends: each range checked against the rows held here, counted, its
 * place in the packed buffers; the totals must fit MPI's ints. */
static adia_status ship_sends(ship *sh, int64_t rows, const int64_t *rowptr,
                              const int64_t *range)
{
    for (int q = 0; q < sh->size; q++) {
        const int64_t lo = range[2 * q + 1] > range[2 * q] ? range[2 * q] : 0;
        const int64_t hi = range[2 * q + 1] > range[2 * q] ? range[2 * q + 1] : 0;
        if (lo < 0 || hi > rows)
            return adia_set_error(ADIA_ERR_INTERNAL, "shipping rows [%lld, %lld) to rank %d: "
                                  "%lld rows here", (long long)lo, (long long)hi, q,
                                  (long long)rows);
        if (q == sh->me) {
            sh->lo = lo, sh->hi = hi;
            continue;
        }
        sh->dsr[q] = (int)sh->nsend, sh->dsv[q] = (int)sh->vsend;
        sh->nsend += hi - lo, sh->vsend += rowptr[hi] - rowptr[lo];
        if (sh->nsend > INT_MAX || sh->vsend > INT_MAX)
            return adia_set_error(ADIA_ERR_DIMENSION, "shipping rows: more than 2^31 - 1 rows or "
                                  "values to send (MPI's int counts)");
        sh->srow[q] = (int)(hi - lo), sh->sval[q] = (int)(rowptr[hi] - rowptr[lo]);
    }
    return ADIA_OK;
}

/* The receives (counts from MPI_Alltoall), self's rows in their place
 * among them, and *got sized for all. */
static adia_status ship_receives(ship *sh, const int64_t *rowptr, dist_rows *got)
{
    int64_t r = 0, v = 0;
    for (int q = 0; q < sh->size; q++) {
        sh->drr[q] = (int)r, sh->drv[q] = (int)v;
        r += q == sh->me ? sh->hi - sh->lo : sh->rrow[q];
        v += q == sh->me ? rowptr[sh->hi] - rowptr[sh->lo] : sh->rval[q];
        if (r > INT_MAX || v > INT_MAX)
            return adia_set_error(ADIA_ERR_DIMENSION, "shipping rows: more than 2^31 - 1 rows or "
                                  "values to receive (MPI's int counts)");
    }
    got->rows = r, got->nnz = v;
    got->rowptr = adia__dist_alloc((size_t)r + 1, sizeof *got->rowptr, "the rows shipped here");
    got->col = adia__dist_alloc((size_t)v, sizeof *got->col, "the rows shipped here");
    got->val = adia__dist_alloc((size_t)v, sizeof *got->val, "the rows shipped here");
    return got->rowptr && got->col && got->val ? ADIA_OK : ADIA_ERR_NO_MEMORY;
}

/* Lengths, columns and values of the rows to the others packed in rank
 * order: a range's columns and values are contiguous in the CSR. */
static void ship_pack(const ship *sh, const int64_t *rowptr, const int64_t *col, const double *val,
                      const int64_t *range, int64_t *slen, int64_t *scol, double *sv)
{
    for (int q = 0; q < sh->size; q++) {
        if (q == sh->me || !sh->srow[q]) continue;
        const int64_t lo = range[2 * q], at = rowptr[lo];
        for (int i = 0; i < sh->srow[q]; i++)
            slen[sh->dsr[q] + i] = rowptr[lo + i + 1] - rowptr[lo + i];
        memcpy(scol + sh->dsv[q], col + at, (size_t)sh->sval[q] * sizeof *scol);
        memcpy(sv + sh->dsv[q], val + at, (size_t)sh->sval[q] * sizeof *sv);
    }
}

/* Self's rows copied into their place among the received (lengths into
 * rowptr[1..] as MPI put the others'), then the lengths summed. */
static void ship_self(const ship *sh, const int64_t *rowptr, const int64_t *col, const double *val,
                      dist_rows *got)
{
    const int64_t at = rowptr[sh->lo], nv = rowptr[sh->hi] - at;
    for (int64_t i = sh->lo; i < sh->hi; i++)
        got->rowptr[1 + sh->drr[sh->me] + (i - sh->lo)] = rowptr[i + 1] - rowptr[i];
    memcpy(got->col + sh->drv[sh->me], col + at, (size_t)nv * sizeof *got->col);
    memcpy(got->val + sh->drv[sh->me], val + at, (size_t)nv * sizeof *got->val);
    got->rowptr[0] = 0;
    for (int64_t i = 0; i < got->rows; i++) got->rowptr[i + 1] += got->rowptr[i];
}

/* Packed, moved by three MPI_Alltoallv (lengths into got's rowptr[1..],
 * columns, values), self's added. */
static adia_status ship_move(MPI_Comm comm, const ship *sh, const int64_t *rowptr,
                             const int64_t *col, const double *val, const int64_t *range,
                             dist_rows *got)
{
    int64_t *slen = adia__dist_alloc((size_t)sh->nsend, sizeof *slen, "the rows to ship");
    int64_t *scol = adia__dist_alloc((size_t)sh->vsend, sizeof *scol, "the rows to ship");
    double *sv = adia__dist_alloc((size_t)sh->vsend, sizeof *sv, "the rows to ship");
    adia_status s = adia__dist_agree(comm, slen && scol && sv ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    if (s == ADIA_OK) {
        ship_pack(sh, rowptr, col, val, range, slen, scol, sv);
        MPI_Alltoallv(slen, sh->srow, sh->dsr, MPI_INT64_T, got->rowptr + 1, sh->rrow, sh->drr,
                      MPI_INT64_T, comm);
        MPI_Alltoallv(scol, sh->sval, sh->dsv, MPI_INT64_T, got->col, sh->rval, sh->drv,
                      MPI_INT64_T, comm);
        MPI_Alltoallv(sv, sh->sval, sh->dsv, MPI_DOUBLE, got->val, sh->rval, sh->drv, MPI_DOUBLE,
                      comm);
        ship_self(sh, rowptr, col, val, got);
    }
    free(slen), free(scol), free(sv);
    return s;
}

/* Counted (an MPI_Alltoall of rows and one of values, as the receivers
 * cannot know them), sized, then moved; agreed after each step that can
 * fail on one process, before the next collective. */
adia_status adia__dist_ship_rows(MPI_Comm comm, int64_t rows, const int64_t *rowptr,
                                 const int64_t *col, const double *val,
                                 const int64_t *range, dist_rows *got)
{
    memset(got, 0, sizeof *got);
    ship sh = {0};
    MPI_Comm_size(comm, &sh.size);
    MPI_Comm_rank(comm, &sh.me);
    int *cnt = calloc(8 * (size_t)sh.size, sizeof *cnt);
    adia_status s = cnt ? ADIA_OK : adia_set_error(ADIA_ERR_NO_MEMORY, "shipping rows: "
                                                   "the counts: out of memory");
    if (cnt) {
        const int P = sh.size;
        sh.srow = cnt, sh.sval = cnt + P, sh.dsr = cnt + 2 * P, sh.dsv = cnt + 3 * P;
        sh.rrow = cnt + 4 * P, sh.rval = cnt + 5 * P, sh.drr = cnt + 6 * P, sh.drv = cnt + 7 * P;
        s = ship_sends(&sh, rows, rowptr, range);
    }
    s = adia__dist_agree(comm, s);
    if (s == ADIA_OK) {
        MPI_Alltoall(sh.srow, 1, MPI_INT, sh.rrow, 1, MPI_INT, comm);
        MPI_Alltoall(sh.sval, 1, MPI_INT, sh.rval, 1, MPI_INT, comm);
        s = adia__dist_agree(comm, ship_receives(&sh, rowptr, got));
    }
    if (s == ADIA_OK) s = ship_move(comm, &sh, rowptr, col, val, range, got);
    free(cnt);
    if (s != ADIA_OK) adia__dist_rows_free(got);
    return s;
}

/* ---------------------------------------------------------- grids */

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

void adia__dist_phase(const adia_dist_matrix *D, const char *what)
{
    static int on = -1;
    static double last = 0;
    if (on < 0) on = getenv("ADIA_PHASES") != NULL;
    if (!on) return;
    const double now = MPI_Wtime() * 1e3;
    fprintf(stderr, "adia phase rank %d: %-32s %9.3f ms\n", D->rank, what,
            last > 0 ? now - last : 0.0);
    last = now;
}
