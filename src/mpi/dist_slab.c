/* dist_slab.c -- multigrid across the processes: libadia's mg given an
 * adia_slab_comm (adia.h).  Where every process's rows are whole planes of
 * the matrix's grid, each process plans its planes and up to GHOSTS of
 * each neighbour's (their rows fetched once, columns outside dropped), and the
 * callbacks move a level's planes: MPI on host arrays, NCCL on device
 * arrays (queued on the solver's stream: the cycle stays in its graph).
 * The hierarchy, its numerics and why a slab gives the whole grid's
 * answer are libadia's (src/precond/mg_slab.c). */
#include "dist.h"

#include <stdio.h>

#define GHOSTS 3            /* adia_slab_comm's: planes each side (mg.c: with 3
                               a V-cycle exchanges once before and once after
                               each level's smoothing; with 2, twice after) */
#define SLAB_LEVELS 32      /* MG_MAX_LEVELS */

typedef struct slab_level {
    int64_t plane, nz, z0, z1, zs, ze;
    int64_t *all;           /* every process's z0, z1, zs, ze */
} slab_level;

struct dist_slab {
    adia_dist_matrix *D;
    adia_slab_comm comm;
    slab_level lev[SLAB_LEVELS];
};

/* ---------------------------------------------------------- callbacks */

static void sum(void *ctx, double *v, int count)
{
    dist_slab *c = ctx;
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, c->D->comm);
}

static void sum_u64(void *ctx, uint64_t *v, int count)
{
    dist_slab *c = ctx;
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_UINT64_T, MPI_SUM, c->D->comm);
}

static void max(void *ctx, double *v, int count)
{
    dist_slab *c = ctx;
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_MAX, c->D->comm);
}

static adia_status agree(void *ctx, adia_status s)
{
    dist_slab *c = ctx;
    return adia__dist_agree(c->D->comm, s);
}

static adia_status layout(void *ctx, int level, int64_t plane, int64_t nz, int64_t z0, int64_t z1,
                          int64_t zs, int64_t ze)
{
    dist_slab *c = ctx;
    if (level < 0 || level >= SLAB_LEVELS)
        return adia_set_error(ADIA_ERR_INVALID_ARG, "slab layout: level %d", level);
    slab_level *L = &c->lev[level];
    free(L->all);
    *L = (slab_level){plane, nz, z0, z1, zs, ze, NULL};
    L->all = adia__dist_alloc(4 * (size_t)c->D->size, sizeof *L->all, "slab layout");
    adia_status s = L->all ? ADIA_OK : ADIA_ERR_NO_MEMORY;
    if (s == ADIA_OK && (ze - zs) * plane > INT32_MAX)   /* one message per range: an int */
        s = adia_set_error(ADIA_ERR_DIMENSION, "mg across processes: level %d holds %lld rows "
                           "here, more than 2^31 - 1", level, (long long)((ze - zs) * plane));
    s = adia__dist_agree(c->D->comm, s);
    if (s != ADIA_OK) return s;
    const int64_t mine[4] = {z0, z1, zs, ze};
    MPI_Allgather(mine, 4, MPI_INT64_T, L->all, 4, MPI_INT64_T, c->D->comm);
    return ADIA_OK;
}

/* The moves of one exchange of level L, for this process (rank me):
 * receives of its ghost planes from their owners, sends of its own planes
 * to those that hold them as ghosts; below before above on both sides, so
 * that messages between two processes pair up in order. */
static int exchange_moves(const slab_level *L, int me, int size, double *v, dist_move *m)
{
    const int64_t *a = L->all;
    int n = 0;
    for (int q = 0; q < size; q++) {
        if (q == me) continue;
        const int64_t q0 = a[4 * q], q1 = a[4 * q + 1];
        /* mine from q: my ghost ranges [zs, z0) and [z1, ze) within q's own */
        const int64_t gr[2][2] = {{L->zs, L->z0}, {L->z1, L->ze}};
        for (int g = 0; g < 2; g++) {
            const int64_t lo = gr[g][0] > q0 ? gr[g][0] : q0, hi = gr[g][1] < q1 ? gr[g][1] : q1;
            if (lo < hi)
                m[n++] = (dist_move){q, 0, v + (lo - L->zs) * L->plane, NULL, (hi - lo) * L->plane};
        }
        /* q's ghost ranges within my own planes */
        const int64_t qr[2][2] = {{a[4 * q + 2], q0}, {q1, a[4 * q + 3]}};
        for (int g = 0; g < 2; g++) {
            const int64_t lo = qr[g][0] > L->z0 ? qr[g][0] : L->z0;
            const int64_t hi = qr[g][1] < L->z1 ? qr[g][1] : L->z1;
            if (lo < hi)
                m[n++] = (dist_move){q, 1, v + (lo - L->zs) * L->plane, NULL, (hi - lo) * L->plane};
        }
    }
    return n;
}

/* The moves of a gather: this process's own planes to every other, theirs
 * into all, its own copied (peer me). */
static int gather_moves(const slab_level *L, int me, int size, const double *v, double *all,
                        dist_move *m)
{
    const int64_t *a = L->all;
    const double *own = v + (L->z0 - L->zs) * L->plane;
    const int64_t count = (L->z1 - L->z0) * L->plane;
    int n = 0;
    for (int q = 0; q < size; q++) {
        const int64_t qc = (a[4 * q + 1] - a[4 * q]) * L->plane;
        if (q == me) {
            if (count) m[n++] = (dist_move){me, 0, all + L->z0 * L->plane, own, count};
            continue;
        }
        if (qc) m[n++] = (dist_move){q, 0, all + a[4 * q] * L->plane, NULL, qc};
        if (count) m[n++] = (dist_move){q, 1, (double *)own, NULL, count};
    }
    return n;
}

/* The moves on the host: MPI, every one posted (a count fits an int:
 * layout refused larger planes). */
static adia_status host_moves(const adia_dist_matrix *D, const dist_move *m, int n)
{
    MPI_Request req[4 * DIST_SLAB_MOVES + 1];
    for (int k = 0; k < n; k++) {
        req[k] = MPI_REQUEST_NULL;
        if (m[k].peer == D->rank) memcpy(m[k].at, m[k].from, (size_t)m[k].count * sizeof(double));
        else if (m[k].send)
            MPI_Isend(m[k].at, (int)m[k].count, MPI_DOUBLE, m[k].peer, 7, D->comm, &req[k]);
        else MPI_Irecv(m[k].at, (int)m[k].count, MPI_DOUBLE, m[k].peer, 7, D->comm, &req[k]);
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    return ADIA_OK;
}

static adia_status run_moves(dist_slab *c, const dist_move *m, int n, int device, void *stream)
{
    return device ? adia__dist_nccl_moves(c->D, m, n, stream) : host_moves(c->D, m, n);
}

static adia_status exchange(void *ctx, int level, double *v, int device, void *stream)
{
    dist_slab *c = ctx;
    dist_move m[4 * DIST_SLAB_MOVES];
    const int size = c->D->size;
    if (size > DIST_SLAB_MOVES) return ADIA_ERR_UNSUPPORTED;   /* refused at creation */
    return run_moves(c, m, exchange_moves(&c->lev[level], c->D->rank, size, v, m), device, stream);
}

/* Device arrays: one broadcast from each process of its own planes. */
static int broadcasts(const slab_level *L, int me, int size, const double *v, double *all,
                      dist_move *m)
{
    const int64_t *a = L->all;
    int n = 0;
    for (int q = 0; q < size; q++) {
        const int64_t qc = (a[4 * q + 1] - a[4 * q]) * L->plane;
        if (qc)
            m[n++] = (dist_move){q, 0, all + a[4 * q] * L->plane,
                                 q == me ? v + (L->z0 - L->zs) * L->plane : NULL, qc};
    }
    return n;
}

static adia_status gather(void *ctx, int level, const double *v, double *all, int device,
                          void *stream)
{
    dist_slab *c = ctx;
    dist_move m[2 * DIST_SLAB_MOVES + 1];
    const int size = c->D->size, me = c->D->rank;
    const slab_level *L = &c->lev[level];
    if (size > DIST_SLAB_MOVES) return ADIA_ERR_UNSUPPORTED;
    if (device) return adia__dist_nccl_broadcasts(c->D, m, broadcasts(L, me, size, v, all, m),
                                                  stream);
    return host_moves(c->D, m, gather_moves(L, me, size, v, all, m));
}

/* ------------------------------------------------------------ the grid */

/* The distinct offsets (col - row) of the own rows' CSR, at most `most`
 * (-1: more). */
static int csr_offsets(const adia_dist_matrix *D, const dist_rows *own, int64_t *off, int most)
{
    int k = 0;
    for (int64_t i = 0; i < own->rows && k >= 0; i++)
        for (int64_t e = own->rowptr[i]; e < own->rowptr[i + 1] && k >= 0; e++) {
            const int64_t o = own->col[e] - (D->first + i);
            int seen = 0;
            for (int q = 0; q < k && !seen; q++) seen = off[q] == o;
            if (!seen && k == most) k = -1;
            else if (!seen) off[k++] = o;
        }
    return k;
}

/* The grid of the whole matrix: opt's, else the likeliest of the
 * processes' offsets (k of them here, -1: too many) whose planes split the
 * rows as the processes do; ADIA_ERR_UNSUPPORTED (why) where there is
 * none.  Agreed. */
static adia_status find_grid(const adia_dist_matrix *D, const adia_precond_options *opt,
                             const int64_t *offsets, int k, int64_t g[3], char *why, size_t len)
{
    int32_t cand[8][3];
    int c = 0;
    if (opt->grid[0] > 0 || opt->grid[1] > 0 || opt->grid[2] > 0) {
        for (int d = 0; d < 3; d++) cand[0][d] = opt->grid[d] > 0 ? opt->grid[d] : 1;
        adia__dist_grid_planes(cand[0]);
        c = 1;
    } else {
        DIST_TRY(adia__dist_grids(D->comm, D->n, offsets, k, cand, 8, &c));
    }
    const int many = c < 0;
    for (int i = 0; i < c; i++) {
        const int64_t plane = (int64_t)cand[i][0] * cand[i][1];
        int whole = plane * cand[i][2] == D->n;
        for (int q = 0; q <= D->size && whole; q++) whole = D->starts[q] % plane == 0;
        for (int q = 0; q < D->size && whole; q++) whole = D->starts[q + 1] > D->starts[q];
        if (whole) {
            for (int d = 0; d < 3; d++) g[d] = cand[i][d];
            return ADIA_OK;
        }
    }
    snprintf(why, len, many ? "more than %d distinct offsets: not a stencil"
                            : c > 0 ? "the processes' rows are not whole planes (z) of grid "
                                  "%dx%dx%d, each at least one" : "no grid fits its offsets",
             many ? DIST_GRID_OFFSETS : c > 0 ? cand[0][0] : 0, c > 0 ? cand[0][1] : 0,
             c > 0 ? cand[0][2] : 0);
    return ADIA_ERR_UNSUPPORTED;
}

/* ---------------------------------------------------- the slab's plan */

/* The rows of this process's planes that each process q holds as ghost
 * planes: rows [range[2q], range[2q + 1]) of its own (none to itself).
 * Its planes lie wholly below or above q's, so they meet at most one of
 * q's ghost ranges -- below [zs, z0) or above [z1, ze) -- and one range a
 * process is enough.  z: every process's z0, z1, zs, ze. */
static void ghost_ranges(const adia_dist_matrix *D, int64_t plane, const int64_t *z,
                         int64_t *range)
{
    const int me = D->rank;
    const int64_t z0 = z[4 * me], z1 = z[4 * me + 1];   /* z0: D->first / plane */
    for (int q = 0; q < D->size; q++) {
        const int64_t g[2][2] = {{z[4 * q + 2], z[4 * q]}, {z[4 * q + 1], z[4 * q + 3]}};
        range[2 * q] = range[2 * q + 1] = 0;
        for (int h = 0; h < 2 && q != me; h++) {
            const int64_t lo = g[h][0] > z0 ? g[h][0] : z0, hi = g[h][1] < z1 ? g[h][1] : z1;
            if (lo < hi) range[2 * q] = (lo - z0) * plane, range[2 * q + 1] = (hi - z0) * plane;
        }
    }
}

/* The slab's CSR: its planes [zs, ze) in order -- the ghost rows got from
 * lower ranks (below its own planes), its own rows, those from higher
 * ranks -- with the columns inside the slab, numbered from plane zs. */
static adia_status slab_csr(const adia_dist_matrix *D, const dist_rows *own, const dist_rows *got,
                            int64_t plane, const int64_t *z, adia_matrix **out)
{
    const int me = D->rank;
    const int64_t zs = z[4 * me + 2], rows = (z[4 * me + 3] - zs) * plane, base = zs * plane;
    const int64_t below = (z[4 * me] - zs) * plane;
    if (got->rows != rows - own->rows)
        return adia_set_error(ADIA_ERR_INTERNAL, "rank %d: %lld ghost rows got for a slab of %lld "
                              "rows, %lld its own", me, (long long)got->rows, (long long)rows,
                              (long long)own->rows);
    int64_t *rowptr = calloc((size_t)rows + 1, sizeof *rowptr);
    int32_t *colind = malloc(((size_t)own->nnz + got->nnz + 1) * sizeof *colind);
    double *values = malloc(((size_t)own->nnz + got->nnz + 1) * sizeof *values);
    adia_status s = rowptr && colind && values
                        ? ADIA_OK
                        : adia_set_error(ADIA_ERR_NO_MEMORY, "rank %d: the ghost planes' rows: out "
                                         "of memory", me);
    int64_t nnz = 0;
    for (int64_t i = 0; s == ADIA_OK && i < rows; i++) {
        const int ownrow = i >= below && i < below + own->rows;
        const dist_rows *r = ownrow ? own : got;
        const int64_t at = ownrow ? i - below : i < below ? i : i - own->rows;
        for (int64_t e = r->rowptr[at]; e < r->rowptr[at + 1]; e++)
            if (r->col[e] >= base && r->col[e] < base + rows)
                colind[nnz] = (int32_t)(r->col[e] - base), values[nnz++] = r->val[e];
        rowptr[i + 1] = nnz;
    }
    if (s == ADIA_OK)
        s = adia_matrix_create_csr((int32_t)rows, (int32_t)rows, nnz, rowptr, colind, values,
                                   ADIA_DOUBLE, out);
    free(rowptr), free(colind), free(values);
    return s;
}

/* The slab's matrix: the rows of its ghost planes got from their owners
 * (adia__dist_ship_rows), around its own.  Agreed. */
static adia_status slab_matrix(const adia_dist_matrix *D, const dist_rows *own, int64_t plane,
                               const int64_t *z, adia_matrix **out)
{
    int64_t *range = adia__dist_alloc(2 * (size_t)D->size, sizeof *range, "the ghost ranges");
    DIST_TRY(adia__dist_agree(D->comm, range ? ADIA_OK : ADIA_ERR_NO_MEMORY));
    ghost_ranges(D, plane, z, range);
    dist_rows got;
    adia_status s = adia__dist_ship_rows(D->comm, own->rows, own->rowptr, own->col, own->val,
                                         range, &got);
    free(range);
    if (s == ADIA_OK) s = adia__dist_agree(D->comm, slab_csr(D, own, &got, plane, z, out));
    adia__dist_rows_free(&got);
    return s;
}

/* --------------------------------------------------------------- make */

/* Every process's offsets off[0..k) (k <= DIST_GRID_OFFSETS), ascending and
 * distinct, into b; their count. */
static int union_offsets(const adia_dist_matrix *D, const int64_t *off, int k, int64_t *b)
{
    int64_t mine[DIST_GRID_OFFSETS + 1] = {k};
    for (int e = 0; e < k; e++) mine[1 + e] = off[e];
    int64_t all[DIST_SLAB_MOVES * (DIST_GRID_OFFSETS + 1)];   /* size <= DIST_SLAB_MOVES */
    MPI_Allgather(mine, DIST_GRID_OFFSETS + 1, MPI_INT64_T, all, DIST_GRID_OFFSETS + 1,
                  MPI_INT64_T, D->comm);
    int n = 0;
    for (int q = 0; q < D->size; q++) {
        const int64_t *a = all + (size_t)q * (DIST_GRID_OFFSETS + 1);
        for (int e = 0; e < a[0]; e++) {
            int at = 0;
            while (at < n && b[at] < a[1 + e]) at++;
            if (at < n && b[at] == a[1 + e]) continue;
            memmove(b + at + 1, b + at, (size_t)(n - at) * sizeof *b);
            b[at] = a[1 + e], n++;
        }
    }
    return n;
}

/* GHOSTS, or rank 0's ADIA_DIST_MG_GHOSTS (2..8: measurements); agreed. */
static adia_status ghost_planes(const adia_dist_matrix *D, int *ghosts)
{
    const char *env = getenv("ADIA_DIST_MG_GHOSTS");
    adia_status s = ADIA_OK;
    *ghosts = GHOSTS;
    if (D->rank == 0 && env && *env) {
        char *end = NULL;
        const long v = strtol(env, &end, 10);
        if (*end || v < 2 || v > 8)
            s = adia_set_error(ADIA_ERR_INVALID_ARG, "ADIA_DIST_MG_GHOSTS=%s: 2 to 8", env);
        else *ghosts = (int)v;
    }
    MPI_Bcast(ghosts, 1, MPI_INT, 0, D->comm);
    return adia__dist_agree(D->comm, s);
}

/* The finest level's exchange (its layout made), for the slab's plan. */
static adia_status exchange_finest(void *ctx, double *v)
{
    return exchange(ctx, 0, v, 1, NULL);
}

void adia__dist_slab_free(dist_slab *c)
{
    if (!c) return;
    for (int l = 0; l < SLAB_LEVELS; l++) free(c->lev[l].all);
    free(c);
}

/* This process's planes of the finest level: own [z0, z1), held [zs, ze). */
typedef struct slab_planes {
    int64_t plane, nz, z0, z1, zs, ze;
} slab_planes;

/* The slab's plan: on the device from the parts' diagonals (device 1:
 * off[0..k) their offsets), else from the own rows' CSR and the ghost
 * planes' rows fetched by MPI.  Agreed. */
static adia_status slab_plan(adia_dist_matrix *D, dist_slab *c, const slab_planes *p, int device,
                             const int64_t *off, int k, const dist_rows *own, adia_plan **plan)
{
    /* mg's finest level: dia, as its coarse levels (no model, no
     * generated kernel to compile for some 100 products) */
    adia_plan_hints h = {.device = D->gpu >= 0 ? 1 : 0, .expected_calls = 100,
                         .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
    if (device) {
        DIST_TRY(layout(c, 0, p->plane, p->nz, p->z0, p->z1, p->zs, p->ze));
        int64_t b[DIST_SLAB_MOVES * DIST_GRID_OFFSETS];
        const int nb = union_offsets(D, off, k, b);
        return adia__dist_agree(D->comm, adia__dist_device_slab(D, &h, (p->ze - p->zs) * p->plane,
                                                                (p->z0 - p->zs) * p->plane, b, nb,
                                                                exchange_finest, c, plan));
    }
    const int64_t mine[4] = {p->z0, p->z1, p->zs, p->ze};
    int64_t *z = adia__dist_alloc(4 * (size_t)D->size, sizeof *z, "slab planes");
    adia_status s = adia__dist_agree(D->comm, z ? ADIA_OK : ADIA_ERR_NO_MEMORY);
    adia_matrix *A = NULL;
    if (s == ADIA_OK) {
        MPI_Allgather(mine, 4, MPI_INT64_T, z, 4, MPI_INT64_T, D->comm);
        s = slab_matrix(D, own, p->plane, z, &A);
    }
    if (s == ADIA_OK) s = adia__dist_agree(D->comm, adia_plan_create(A, &h, plan));
    adia_matrix_destroy(A);
    free(z);
    return s;
}

/* Why mg cannot run across D's processes (NULL: it may), agreed. */
static const char *unsuitable(const adia_dist_matrix *D)
{
    int k = D->size < 2 ? 1 : D->size > DIST_SLAB_MOVES ? 2
          : D->gpu >= 0 && !adia__dist_nccl_active(D) ? 3 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &k, 1, MPI_INT, MPI_MAX, D->comm);
    static const char *why[] = {NULL, "one process", "more than 64 processes",
                                "the device matrix's halo does not move by NCCL"};
    return why[k];
}

adia_status adia__dist_slab_precond(adia_dist_matrix *D, const adia_precond_options *opt,
                                    adia_plan **plan, adia_precond **M, dist_slab **ctx, char *why,
                                    size_t len)
{
    _Static_assert(DIST_SLAB_MOVES == 64, "unsuitable's words");
    *plan = NULL, *M = NULL, *ctx = NULL;
    const char *no = unsuitable(D);
    if (no) {
        snprintf(why, len, "%s", no);
        return ADIA_ERR_UNSUPPORTED;
    }
    /* the device route where every process's parts lend their diagonals
     * and its local x is one interval (a stencil's); else the host's */
    dist_rows own;
    memset(&own, 0, sizeof own);
    int64_t off[DIST_GRID_OFFSETS];
    int k = D->gpu >= 0 && D->niv == 1 ? adia__dist_device_offsets(D, off, DIST_GRID_OFFSETS)
                                       : -1;
    int device = k >= 0;
    MPI_Allreduce(MPI_IN_PLACE, &device, 1, MPI_INT, MPI_MIN, D->comm);
    adia_status s = ADIA_OK;
    if (!device) {
        s = adia__dist_agree(D->comm, adia__dist_read_rows(D, DIST_COLS_GLOBAL, &own));
        k = s == ADIA_OK ? csr_offsets(D, &own, off, DIST_GRID_OFFSETS) : -1;
    }
    int64_t g[3];
    int ghosts = GHOSTS;
    if (s == ADIA_OK) s = ghost_planes(D, &ghosts);
    if (s == ADIA_OK) s = find_grid(D, opt, off, k, g, why, len);
    dist_slab *c = s == ADIA_OK ? calloc(1, sizeof *c) : NULL;
    if (s == ADIA_OK)
        s = adia__dist_agree(D->comm, c ? ADIA_OK : adia_set_error(ADIA_ERR_NO_MEMORY, "slab"));
    if (s == ADIA_OK) {
        slab_planes p = {.plane = g[0] * g[1], .nz = g[2]};
        p.z0 = D->first / p.plane, p.z1 = (D->first + D->rows) / p.plane;
        p.zs = p.z0 > ghosts ? p.z0 - ghosts : 0;
        p.ze = p.z1 + ghosts < p.nz ? p.z1 + ghosts : p.nz;
        c->D = D;
        s = slab_plan(D, c, &p, device, off, k, &own, plan);
        if (s == ADIA_OK) {
            c->comm = (adia_slab_comm){.nz = p.nz, .z0 = p.z0, .z1 = p.z1, .zs = p.zs,
                                       .ghosts = ghosts, .ctx = c,
                                       .sum = sum, .sum_u64 = sum_u64, .max = max, .agree = agree,
                                       .layout = layout, .exchange = exchange, .gather = gather};
            adia_precond_options o = *opt;
            o.slab = &c->comm;
            o.grid[0] = (int)g[0], o.grid[1] = (int)g[1], o.grid[2] = (int)(p.ze - p.zs);
            s = adia__dist_agree(D->comm, adia_precond_create(*plan, &o, M));
        }
    }
    adia__dist_rows_free(&own);
    if (s != ADIA_OK) {
        adia_precond_destroy(*M);
        adia_plan_destroy(*plan);
        adia__dist_slab_free(c);
        *M = NULL, *plan = NULL;
        return s;
    }
    *ctx = c;
    return ADIA_OK;
}
