/* dist_matrix.c -- creating a distributed matrix (from a generator spec, a
 * Matrix Market file or the caller's blocks), its queries and its SpMV.
 * Every step that can fail on one process ends in adia__dist_agree, so an
 * error anywhere is returned everywhere before the next collective call. */
#include "dist.h"

#include <math.h>

/* The rows [starts[r], starts[r + 1]) of every rank from each one's
 * (first, rows): they must follow each other and cover 0..n-1. */
static adia_status gather_starts(adia_dist_matrix *D)
{
    int64_t mine[2] = {D->first, D->rows}, *all = adia__dist_alloc(2 * (size_t)D->size,
                                                                    sizeof *all, "row blocks");
    D->starts = adia__dist_alloc((size_t)D->size + 1, sizeof *D->starts, "row blocks");
    adia_status s = adia__dist_agree(D->comm, all && D->starts ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    if (s != ADIA_OK) {
        free(all);
        return s;
    }
    MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, D->comm);
    for (int r = 0; r < D->size && s == ADIA_OK; r++) {
        D->starts[r] = all[2 * r];
        int64_t expect = r ? all[2 * r - 2] + all[2 * r - 1] : 0;
        if (all[2 * r] != expect || all[2 * r + 1] < 1)
            s = adia_set_error(ADIA_ERR_DIMENSION, "the row blocks do not tile the matrix: rank %d "
                               "holds rows %lld + %lld, expected to start at %lld with at least "
                               "one row", r, (long long)all[2 * r], (long long)all[2 * r + 1],
                               (long long)expect);
    }
    D->starts[D->size] = all[2 * D->size - 2] + all[2 * D->size - 1];
    if (s == ADIA_OK && D->starts[D->size] != D->n)
        s = adia_set_error(ADIA_ERR_DIMENSION, "the row blocks cover rows 0..%lld of a matrix of "
                           "%lld rows", (long long)D->starts[D->size] - 1, (long long)D->n);
    free(all);
    return s;   /* the same on every process: all saw the same blocks */
}

/* hints.device checked, then resolved alike on every process. */
static adia_status select_device(adia_dist_matrix *D, const adia_plan_hints *hints)
{
    int device = hints ? hints->device : 0;
    adia_status s = device < -1 || device > 1
                        ? adia_set_error(ADIA_ERR_INVALID_ARG, "hints.device %d: 0 (CPU), 1 (GPU) "
                                         "or -1 (the GPU if every process has one)", device)
                        : ADIA_OK;
    DIST_TRY(adia__dist_agree(D->comm, s));
    return device ? adia__dist_device_select(D, device) : ADIA_OK;
}

adia_plan_hints adia__dist_block_hints(const adia_dist_matrix *D, const adia_plan_hints *hints)
{
    adia_plan_hints h = {.device = 0};
    if (hints) h = *hints;
    h.device = D->gpu >= 0;
    h.vtype = ADIA_DOUBLE;   /* the local x and y are double */
    return h;
}

/* Local checks of adia_dist_create's arguments (agreed by the caller). */
static adia_status check_block(const adia_dist_matrix *D, const adia_matrix *local)
{
    if (!local) return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_create: local is NULL");
    if (D->n < 1 || adia_matrix_cols(local) != D->n)
        return adia_set_error(ADIA_ERR_DIMENSION, "adia_dist_create: the block has %d columns, "
                              "the matrix is %lld x %lld", adia_matrix_cols(local),
                              (long long)D->n, (long long)D->n);
    return ADIA_OK;
}

/* The local x, the halo plan and the device side of a block whose plan
 * was made with status s, nnz its nonzeros. */
static adia_status finish(adia_dist_matrix *D, adia_status s, int64_t nnz)
{
    if (s == ADIA_OK) {
        D->x_local = adia__dist_alloc((size_t)D->local_cols + 1, sizeof *D->x_local, "local x");
        if (!D->x_local) s = ADIA_ERR_NO_MEMORY;
    }
    DIST_TRY(adia__dist_agree(D->comm, s));
    DIST_TRY(adia__dist_halo_setup(D));
    adia__dist_phase(D, "dist: halo planned");
    if (D->gpu >= 0) DIST_TRY(adia__dist_device_setup(D));
    adia__dist_phase(D, "dist: device set up");
    MPI_Allreduce(&nnz, &D->nnz, 1, MPI_INT64_T, MPI_SUM, D->comm);
    return ADIA_OK;
}

/* Layout, halo plan, local plan and the local x of a block that checked. */
static adia_status build(adia_dist_matrix *D, const adia_matrix *L, const adia_plan_hints *hints)
{
    DIST_TRY(select_device(D, hints));
    adia_matrix *local = NULL;
    adia_status s = adia__dist_layout(D, L, &local);
    if (s == ADIA_OK) s = adia__dist_plan_parts(D, local, hints);
    adia_matrix_destroy(local);
    return finish(D, s, adia_matrix_nnz(L));
}

/* A handle for rows [first, first + rows) of an n x n matrix on comm. */
static adia_dist_matrix *new_matrix(MPI_Comm comm, int64_t n, int64_t first, int64_t rows)
{
    adia_dist_matrix *D = calloc(1, sizeof *D);
    if (!D) {
        adia_set_error(ADIA_ERR_NO_MEMORY, "allocating a distributed matrix failed");
        return NULL;
    }
    D->magic = DIST_MAGIC;
    D->comm = comm;
    D->gpu = -1;
    MPI_Comm_rank(comm, &D->rank);
    MPI_Comm_size(comm, &D->size);
    D->n = n;
    D->first = first;
    D->rows = rows;
    return D;
}

adia_status adia_dist_create(MPI_Comm comm, int64_t n, int64_t first, const adia_matrix *local,
                             const adia_plan_hints *hints, adia_dist_matrix **out)
{
    if (!out) return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_create: out is NULL");
    *out = NULL;
    adia_dist_matrix *D = new_matrix(comm, n, first, local ? adia_matrix_rows(local) : 0);
    adia_status s = D ? check_block(D, local) : ADIA_ERR_NO_MEMORY;
    s = adia__dist_agree(comm, s);
    if (s == ADIA_OK) s = gather_starts(D);
    if (s == ADIA_OK) s = build(D, local, hints);
    if (s != ADIA_OK) {
        adia_dist_destroy(D);
        return s;
    }
    *out = D;
    return ADIA_OK;
}

/* Balanced rows of this rank for an n x m matrix from a source named what,
 * in whole planes of `plane` rows where there are at least as many planes
 * as processes (a grid: each block a slab, a grid of its own for a
 * block preconditioner's multigrid), else by rows. */
static adia_status balanced_rows(MPI_Comm comm, const char *what, int64_t n, int64_t m,
                                 int64_t plane, int64_t *first, int64_t *count)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (n != m)
        return adia_set_error(ADIA_ERR_INVALID_ARG, "%s is %lld x %lld: a distributed matrix is "
                              "square", what, (long long)n, (long long)m);
    if (size > n)
        return adia_set_error(ADIA_ERR_INVALID_ARG, "%s has %lld rows, fewer than the %d processes "
                              "(each holds at least one row)", what, (long long)n, size);
    const int64_t planes = plane > 1 && n % plane == 0 ? n / plane : 0;
    if (planes >= size) {
        *first = planes * rank / size * plane;
        *count = planes * (rank + 1) / size * plane - *first;
        return ADIA_OK;
    }
    *first = n * rank / size;
    *count = n * (rank + 1) / size - *first;
    return ADIA_OK;
}

/* The plane of a generator spec's grid (adia_matrix_generate_plane), or 1. */
static int64_t spec_plane(const char *spec)
{
    int64_t plane = 1;
    if (adia_matrix_generate_plane(spec, &plane) != ADIA_OK) {
        adia_clear_error();
        plane = 1;
    }
    return plane;
}

/* The reader of one source: its shape with out NULL, else rows first.. */
typedef adia_status (*rows_fn)(const char *source, int64_t first, int64_t count, int64_t *rows,
                               int64_t *cols, adia_matrix **out);

/* The plane of the grid every process's rows (L, from row first) lie on:
 * the likeliest of their offsets' grids (adia__dist_grids), 1 where there
 * is none; the same on every process. */
static int64_t rows_plane(MPI_Comm comm, int64_t n, int64_t first, const adia_matrix *L)
{
    int64_t off[DIST_GRID_OFFSETS];
    int k = 0;
    adia_csr_view v;
    if (adia_matrix_csr(L, &v) != ADIA_OK) k = -1;
    for (int32_t i = 0; k >= 0 && i < v.rows; i++)
        for (int64_t e = v.rowptr[i]; k >= 0 && e < v.rowptr[i + 1]; e++) {
            const int64_t o = (int64_t)v.colind[e] - (first + i);
            int seen = 0;
            for (int q = 0; q < k && !seen; q++) seen = off[q] == o;
            if (!seen && k == DIST_GRID_OFFSETS) k = -1;
            else if (!seen) off[k++] = o;
        }
    int32_t g[1][3];
    int c = 0;
    if (adia__dist_grids(comm, n, off, k, g, 1, &c) != ADIA_OK) {
        adia_clear_error();   /* no memory for the search: split by rows */
        return 1;
    }
    return c == 1 ? (int64_t)g[0][0] * g[0][1] : 1;
}

/* The rows of L (from first) in each process's new block [nfirst,
 * nfirst + ncount), as ranges of L's rows (span: every process's nfirst,
 * ncount). */
static void new_ranges(int size, int64_t first, int64_t rows, const int64_t *span, int64_t *range)
{
    for (int q = 0; q < size; q++) {
        const int64_t q0 = span[2 * q], q1 = span[2 * q] + span[2 * q + 1];
        range[2 * q] = (first > q0 ? first : q0) - first;
        range[2 * q + 1] = (first + rows < q1 ? first + rows : q1) - first;   /* <=: none */
    }
}

/* L's columns widened for adia__dist_ship_rows (its rows carry 64-bit
 * columns); NULL after an error. */
static int64_t *wide_cols(const adia_csr_view *v)
{
    int64_t *c = adia__dist_alloc((size_t)v->nnz, sizeof *c, "moving the rows to whole planes");
    for (int64_t e = 0; c && e < v->nnz; e++) c[e] = v->colind[e];
    return c;
}

/* The new block of ncount rows x n columns from the rows got, narrowed
 * back to int32 columns. */
static adia_status new_block(const dist_rows *got, int64_t ncount, int64_t n, adia_matrix **out)
{
    if (got->rows != ncount)
        return adia_set_error(ADIA_ERR_INTERNAL, "moving the rows to whole planes: %lld rows got "
                              "for a block of %lld", (long long)got->rows, (long long)ncount);
    int32_t *col = NULL;
    DIST_TRY(adia__dist_cols32(got, n, "moving the rows to whole planes", &col));
    adia_status s = adia_matrix_create_csr((int32_t)ncount, (int32_t)n, got->nnz, got->rowptr,
                                           col, got->val, ADIA_DOUBLE, out);
    free(col);
    return s;
}

/* L's rows (from first) moved where the new split puts them: rows
 * [nfirst, nfirst + ncount) here, from every process whose old block
 * meets that (the boundaries move by less than a plane); *out the new
 * block. */
static adia_status move_rows(MPI_Comm comm, int64_t n, int64_t first, const adia_matrix *L,
                             int64_t nfirst, int64_t ncount, adia_matrix **out)
{
    int size;
    MPI_Comm_size(comm, &size);
    adia_csr_view v;
    adia_status s = adia_matrix_csr(L, &v);
    int64_t *span = adia__dist_alloc(2 * (size_t)size, sizeof *span, "the new row blocks");
    int64_t *range = adia__dist_alloc(2 * (size_t)size, sizeof *range, "the new row blocks");
    int64_t *col = s == ADIA_OK ? wide_cols(&v) : NULL;
    if (s == ADIA_OK && (!span || !range || !col)) s = ADIA_ERR_NO_MEMORY;
    s = adia__dist_agree(comm, s);
    dist_rows got;
    memset(&got, 0, sizeof got);
    if (s == ADIA_OK) {
        const int64_t mine[2] = {nfirst, ncount};
        MPI_Allgather(mine, 2, MPI_INT64_T, span, 2, MPI_INT64_T, comm);
        new_ranges(size, first, v.rows, span, range);
        s = adia__dist_ship_rows(comm, v.rows, v.rowptr, col, v.values, range, &got);
    }
    free(span), free(range), free(col);
    if (s == ADIA_OK) s = adia__dist_agree(comm, new_block(&got, ncount, n, out));
    adia__dist_rows_free(&got);
    return s;
}

/* Shape, this rank's balanced rows from the source (whole planes of
 * `plane` rows where it is a grid), the matrix.  A source that cannot say
 * its plane (a file: plane 0) is read by rows, and its rows then moved to
 * whole planes of the grid their offsets show: mg across the processes
 * needs them so (dist_slab.c). */
static adia_status from_rows(MPI_Comm comm, const char *source, rows_fn read, int64_t plane,
                             const adia_plan_hints *hints, adia_dist_matrix **out)
{
    if (!out) return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_mpi: out is NULL");
    *out = NULL;
    int64_t n = 0, m = 0, first = 0, count = 0;
    adia_status s = read(source, 0, 0, &n, &m, NULL);
    if (s == ADIA_OK) s = balanced_rows(comm, source, n, m, plane ? plane : 1, &first, &count);
    DIST_TRY(adia__dist_agree(comm, s));
    adia_matrix *L = NULL;
    DIST_TRY(adia__dist_agree(comm, read(source, first, count, NULL, NULL, &L)));
    const int64_t grid_plane = plane == 0 ? rows_plane(comm, n, first, L) : 1;
    int64_t nfirst = first, ncount = count;
    if (grid_plane > 1) balanced_rows(comm, source, n, n, grid_plane, &nfirst, &ncount);
    int moved = nfirst != first || ncount != count;
    MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT, MPI_MAX, comm);
    if (moved) {
        adia_matrix *W = NULL;
        s = move_rows(comm, n, first, L, nfirst, ncount, &W);
        adia_matrix_destroy(L);
        DIST_TRY(s);
        L = W, first = nfirst;
    }
    s = adia_dist_create(comm, n, first, L, hints, out);
    adia_matrix_destroy(L);
    return s;
}

/* A Laplacian on the GPUs: each process fills its block on its device
 * (dist_fill.c).  *done 0: the device resolved to the CPU on every process
 * (hints.device -1), nothing made: the caller builds through CSR. */
static adia_status fill_on_devices(MPI_Comm comm, const char *spec, int64_t n,
                                   const adia_plan_hints *hints, adia_dist_matrix **out, int *done)
{
    *done = 1;
    int64_t first = 0, count = 0;
    DIST_TRY(adia__dist_agree(comm, balanced_rows(comm, spec, n, n, spec_plane(spec), &first,
                                                  &count)));
    adia_dist_matrix *D = new_matrix(comm, n, first, count);
    adia_status s = adia__dist_agree(comm, D ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    if (s == ADIA_OK) s = gather_starts(D);
    if (s == ADIA_OK) s = select_device(D, hints);
    if (s == ADIA_OK && D->gpu < 0) {
        *done = 0;
        adia_dist_destroy(D);
        return ADIA_OK;
    }
    if (s == ADIA_OK) {
        adia__dist_phase(D, "dist: start");
        s = adia__dist_fill_block(D, spec, hints);
        if (s == ADIA_OK && (D->spec = adia__dist_alloc(strlen(spec) + 1, 1, "the spec")))
            memcpy(D->spec, spec, strlen(spec) + 1);
        else if (s == ADIA_OK)
            s = ADIA_ERR_NO_MEMORY;
        s = finish(D, s, s == ADIA_OK ? adia__dist_block_nnz(D) : 0);
    }
    if (s != ADIA_OK) {
        adia_dist_destroy(D);
        return s;
    }
    *out = D;
    return ADIA_OK;
}

adia_status adia_dist_generate(MPI_Comm comm, const char *spec, const adia_plan_hints *hints,
                               adia_dist_matrix **out)
{
    adia_status s = spec ? ADIA_OK : adia_set_error(ADIA_ERR_INVALID_ARG,
                                                     "adia_dist_generate: spec is NULL");
    if (s == ADIA_OK && !out) s = adia_set_error(ADIA_ERR_INVALID_ARG, "adia_mpi: out is NULL");
    DIST_TRY(adia__dist_agree(comm, s));
    *out = NULL;
    int64_t n = 0;
    int done = 0;
    /* a Laplacian for the GPUs never passes through CSR; the spec is the
     * same on every process, so is this branch */
    if (hints && hints->device && adia_stencil_diagonals(spec, &n, NULL, NULL) == ADIA_OK)
        DIST_TRY(fill_on_devices(comm, spec, n, hints, out, &done));
    adia_clear_error();
    return done ? ADIA_OK
                : from_rows(comm, spec, adia_matrix_generate_rows, spec_plane(spec), hints, out);
}

adia_status adia_dist_read_mtx(MPI_Comm comm, const char *path, const adia_plan_hints *hints,
                               adia_dist_matrix **out)
{
    adia_status s = !path ? adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_read_mtx: path is NULL")
                    : !strcmp(path, "-") ? adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_read_mtx: "
                                                          "every process reads the file: not "
                                                          "standard input")
                                         : ADIA_OK;
    DIST_TRY(adia__dist_agree(comm, s));
    return from_rows(comm, path, adia_matrix_read_mtx_rows, 0, hints, out);
}

void adia_dist_destroy(adia_dist_matrix *D)
{
    if (!D || D->magic != DIST_MAGIC) return;
    adia__dist_precond_free(D);   /* their plans live on D's device */
    adia__dist_device_free(D);
    adia__dist_halo_free(&D->halo);
    adia__dist_parts_free(D);
    free(D->starts);
    free(D->iv);
    free(D->x_local);
    free(D->diag);
    free(D->spec);
    D->magic = DIST_DEAD;
    free(D);
}

adia_status adia_dist_get_info(const adia_dist_matrix *D, adia_dist_info *info)
{
    DIST_TRY(adia__dist_check(D, "adia_dist_get_info"));
    if (!info) return adia_set_error(ADIA_ERR_INVALID_ARG, "adia_dist_get_info: info is NULL");
    memset(info, 0, sizeof *info);
    *info = (adia_dist_info){.ranks = D->size, .rank = D->rank, .n = D->n, .nnz = D->nnz,
                             .first = D->first, .rows = D->rows, .rows_min = D->n,
                             .local_cols = D->local_cols, .intervals = D->niv,
                             .from_offsets = D->from_offsets, .neighbours = D->halo.neighbours,
                             .halo_bytes = 8 * D->halo.recv_values,
                             .halo_bytes_all = D->halo_bytes_all, .halo_ms = D->halo_ms,
                             .reduce_ms = D->reduce_ms, .connect_ms = D->connect_ms,
                             .gpu = D->gpu};
    for (int k = 0; k < D->nparts; k++)
        if (D->part[k].x_own) info->interior_rows += D->part[k].rows;
    for (int r = 0; r < D->size; r++) {
        int64_t m = D->starts[r + 1] - D->starts[r];
        if (m < info->rows_min) info->rows_min = m;
        if (m > info->rows_max) info->rows_max = m;
    }
    snprintf(info->format, sizeof info->format, "%s", adia__dist_format(D));
    snprintf(info->transport, sizeof info->transport, "%s", D->halo.transport->name);
    snprintf(info->reduce, sizeof info->reduce, "%s", adia__dist_reduce_name(D));
    return ADIA_OK;
}

/* The arguments of a product, agreed: a NULL vector on one process must
 * not leave the others waiting for its halo. */
adia_status adia__dist_check_vectors(const adia_dist_matrix *D, const void *x, const void *y,
                                     const char *func)
{
    adia_status s = adia__dist_check(D, func);
    if (s != ADIA_OK) return s;   /* no communicator to agree on */
    if (!x || !y) s = adia_set_error(ADIA_ERR_INVALID_ARG, "%s: x or y is NULL", func);
    return adia__dist_agree(D->comm, s);
}

adia_status adia__dist_spmv_host(adia_dist_matrix *D, double alpha, const double *x, double beta,
                                 double *y)
{
    if (D->dev) return adia__dist_device_spmv_host(D, alpha, x, beta, y);
    return adia__dist_parts_spmv(D, alpha, x, beta, y);
}

adia_status adia_dist_spmv(adia_dist_matrix *D, double alpha, const double *x, double beta,
                           double *y)
{
    DIST_TRY(adia__dist_check_vectors(D, x, y, "adia_dist_spmv"));
    adia_status s = adia__dist_spmv_host(D, alpha, x, beta, y);
    /* The CPU block's adia_spmv cannot fail on arguments checked already;
     * a device's copies and kernels can (CUDA), on one process alone. */
    return D->dev ? adia__dist_agree(D->comm, s) : s;
}

/* max |y - ref| and max |ref| over this process's rows; a NaN on one side
 * only counts as infinitely wrong. */
static void compare(const double *y, const double *ref, int64_t n, double out[2])
{
    out[0] = out[1] = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = isnan(y[i]) != isnan(ref[i]) ? INFINITY : y[i] == ref[i] ? 0 : fabs(y[i] - ref[i]);
        if (d > out[0]) out[0] = d;
        if (fabs(ref[i]) > out[1]) out[1] = fabs(ref[i]);
    }
}

/* ref = A x of a block filled from a Laplacian, by the stencil's rule
 * itself (adia_stencil_fill) on the local x, CHUNK rows at a time: no
 * CSR, and nothing shared with the device's fill or product. */
#define CHUNK ((int64_t)1 << 20)

static adia_status stencil_reference(adia_dist_matrix *D, double *ref)
{
    int64_t off[ADIA_STENCIL_MAX_DIAGONALS], L[ADIA_STENCIL_MAX_DIAGONALS];
    int nd = 0, has[ADIA_STENCIL_MAX_DIAGONALS];
    DIST_TRY(adia_stencil_diagonals(D->spec, NULL, &nd, off));
    for (int k = 0; k < nd; k++) has[k] = adia__dist_local_offset(D, off[k], &L[k]);
    const int64_t chunk = D->rows < CHUNK ? D->rows : CHUNK;
    double *val = adia__dist_alloc((size_t)(nd * chunk), sizeof *val, "stencil values");
    adia_status s = val ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    for (int64_t r0 = 0; r0 < D->rows && s == ADIA_OK; r0 += chunk) {
        const int64_t c = D->rows - r0 < chunk ? D->rows - r0 : chunk;
        s = adia_stencil_fill(D->spec, D->first + r0, c, val);
        for (int64_t i = 0; i < c && s == ADIA_OK; i++) {
            double sum = 0;
            for (int k = 0; k < nd; k++) {
                const double a = val[k * c + i];
                const int64_t at = r0 + i + L[k];
                if (a == 0) continue;
                if (!has[k] || at < 0 || at >= D->local_cols)
                    s = adia_set_error(ADIA_ERR_INTERNAL, "row %lld's offset %lld is outside the "
                                       "local x", (long long)(D->first + r0 + i), (long long)off[k]);
                else
                    sum += a * D->x_local[at];
            }
            ref[r0 + i] = sum;
        }
    }
    free(val);
    return s;
}

/* ref = A x part by part, each part's CSR freed before the next is made. */
static adia_status parts_reference(adia_dist_matrix *D, const double *x, double *ref)
{
    adia_status s = ADIA_OK;
    for (int k = 0; k < D->nparts && s == ADIA_OK; k++) {
        const dist_part *p = &D->part[k];
        adia_matrix *C = NULL;
        s = adia_format_to_matrix(adia_plan_format(p->plan), &C);
        if (s == ADIA_OK)
            s = adia_matrix_spmv(C, 1.0, p->x_own ? x : D->x_local, 0.0, ref + p->row0);
        adia_matrix_destroy(C);
    }
    return s;
}

adia_status adia_dist_check_spmv(adia_dist_matrix *D, const double *x, const double *y,
                                 double *rel_err)
{
    DIST_TRY(adia__dist_check_vectors(D, x, y, "adia_dist_check_spmv"));
    double *ref = adia__dist_alloc((size_t)D->rows, sizeof *ref, "reference y");
    adia_status s = adia__dist_agree(D->comm, ref ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    if (s == ADIA_OK) s = adia__dist_exchange(D, x);
    if (s == ADIA_OK) s = D->spec ? stencil_reference(D, ref) : parts_reference(D, x, ref);
    s = adia__dist_agree(D->comm, s);
    if (s == ADIA_OK) {
        double local[2] = {0, 0}, all[2];
        compare(y, ref, D->rows, local);
        MPI_Allreduce(local, all, 2, MPI_DOUBLE, MPI_MAX, D->comm);
        if (rel_err) *rel_err = all[0] / (all[1] > 0 ? all[1] : 1e-300);
    }
    free(ref);
    return s;
}
