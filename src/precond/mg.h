/* mg.h -- the geometric multigrid preconditioner (kind "mg"), shared by
 * its files:
 *   mg.c          setup (the phases in order), the cycle driver, apply,
 *                 explain, the operations table
 *   mg_grid.c     the grid: found from A's offsets or given, every nonzero
 *                 checked against it; the finest level's stencil
 *   mg_galerkin.c coarse grids, A_c = R A P in stencil form (the device's
 *                 kernel adds the host's terms in the host's order), a
 *                 level's CSR
 *   mg_smooth.c   smoother set-up (diagonals, eigenvalue bound), the dense
 *                 coarsest solve (Cholesky, explicit inverse)
 *   mg_cpu.c      the cycle's vector kernels on the host (OpenMP)
 *   mg_gpu.cu     the same on the device (mg_gpu_none.c without CUDA)
 *   mg_device.c   the set-up of a GPU plan on the device, phase by phase;
 *                 its kernels in mg_setup_gpu.cu (mg_setup_gpu_none.c)
 *
 * Grid points are numbered x fastest: row i = x + nx (y + ny z).  A level
 * keeps its operator as a stencil of up to 27 points, point p = (dx+1) +
 * 3 (dy+1) + 9 (dz+1), coefficient of point p at row i in coef[p][i] (NULL
 * where the point is absent on every row), and as an adia_plan (level 0:
 * the user's).  Coarse point c of a coarsened direction lies on fine point
 * 2c (cell-vertex), so n fine points give (n + 1) / 2; a direction of one
 * point is not coarsened.  The stencils (host arrays, or device arrays in
 * the device set-up) live only during setup. */
#ifndef ADIA_MG_H
#define ADIA_MG_H

#include "precond.h"

#include <math.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_POINTS 27
#define MG_MAX_LEVELS 32
/* Coarsening stops at this many unknowns or fewer; the coarsest level is
 * solved by an explicit dense inverse (a gemv per cycle).  128: the
 * host's Cholesky and inverse of 512 rows (8^3) took 23-96 ms of a 137 ms
 * device set-up of lap3d7:256 (H200, 2026-11-27), n^3 work, while one more
 * level costs about ten graph nodes a cycle (a few microseconds); at 64 a
 * convection-diffusion grid (95x63) stops at 6x4 and its V-cycle factor
 * goes from 0.087 to 0.75 (coarse grids too coarse for its convection). */
#define MG_COARSE_ROWS 128
/* A 3D grid coarsens on down to this: lap3d7:160's 5^3 = 125 rows took
 * its host inverse 1.1 ms of a 9-10 ms set-up (H200, 2026-11-27), where
 * 3^3 takes a hundredth of it and one more level a few graph nodes; the
 * convection-diffusion grid above is 2D. */
#define MG_COARSE_ROWS_3D 64
/* The largest coarsest level accepted (a max_levels that stops early, or a
 * grid that cannot coarsen): the dense inverse holds rows^2 values. */
#define MG_DENSE_MAX 4096
/* "auto" makes mg only where the grid's longest edge has this many points:
 * CG + Jacobi takes about 2 iterations per point of it (lap3d7 64/160/256:
 * 158/368/581), and below that they cost less than mg's set-up and cycles
 * (H200, 2026-11-27: lap3d7:64 jacobi 50 ms in all against mg's 86,
 * lap3d7:160 275 against 99; CPU: lap2D_5pt_n100 4.7 ms against 6.0). */
#define MG_AUTO_MIN_EDGE 128

typedef enum mg_smoother { MG_CHEB = 0, MG_JACOBI, MG_L1JACOBI } mg_smoother;

/* Which directions a level coarsens (adia__mg_coarse_grid), from its
 * couplings (mg_row_coupling): FULL every direction of more than one
 * point (the first multigrid); SEMI only the most strongly coupled one
 * (hypre PFMG's rule, one direction per level); AUTO every direction
 * coupled at least 1/MG_SEMI_FACTOR as strongly as the strongest -- all
 * three on an isotropic level (full coarsening, as before), the strong
 * ones alone on an anisotropic level (semicoarsening). */
typedef enum mg_coarsening { MG_COARSEN_AUTO = 0, MG_COARSEN_FULL, MG_COARSEN_SEMI } mg_coarsening;
/* Measured (PCG iterations to 1e-8, aniso3d:48,EPS, CPU, 2026-11-27):
 * factor 2 gives 6 at EPS = 0.5 / 0.3 / 0.2 / 0.1 / 0.05 / 0.01 / 0.001;
 * factor 4 gives 9 at 0.5 (coarsened fully), 8 gives 14 at 0.2, 16 gives
 * 18 at 0.1.  Isotropic levels (lap3d7, vardiff3d, jump3d) coarsen fully
 * under any factor. */
#define MG_SEMI_FACTOR 2.0

/* Host stencil of one level (setup only). */
typedef struct mg_stencil {
    int32_t n[3];
    int64_t rows;
    double *coef[MG_POINTS];  /* rows values each, or NULL (point absent) */
    void *block;              /* a device stencil: the one allocation that
                                 holds its words and arrays (a lent one's:
                                 its words; host stencils: NULL)          */
    int lent;                 /* its arrays are a plan's diagonals        */
} mg_stencil;

#ifdef __CUDACC__
#define MG_HD __host__ __device__
#else
#define MG_HD
#endif

/* A loop of a few trips, unrolled on the device so that what it indexes
 * by the loop variable stays in registers (the Galerkin product's small
 * arrays went to the stack, 288 bytes a thread) or is read at a constant
 * place (the stencil's arrays of a kernel parameter). */
#ifdef __CUDA_ARCH__
#define MG_UNROLL _Pragma("unroll")
#else
#define MG_UNROLL
#endif

static inline int32_t mg_longest_edge(const int32_t n[3])
{
    return n[0] > n[1] ? (n[0] > n[2] ? n[0] : n[2]) : (n[1] > n[2] ? n[1] : n[2]);
}

/* A strip: one direction 2 points wide, one long (at least
 * MG_AUTO_MIN_EDGE), the third 1 -- how a band of reach 2 with no grid of
 * its own (biharm1d's 1 -4 6 -4 1) fits mg's grid search.  mg coarsens
 * it as a plain pair aggregation first, which does not scale (CG + mg on
 * biharm1d:10000: 97,078 iterations; agg 542), so "auto" gives a strip
 * to agg (on genuine strips the two are level: lap2d5:2x50000 4 and 4
 * iterations, 2-core machine; on the H200 biharm1d:100000's mg stops at
 * 20,000 iterations, agg converges in 544: 2026-11-28). */
static inline int mg_strip(const int32_t n[3])
{
    int two = 0, one = 0;
    for (int d = 0; d < 3; d++) two += n[d] == 2, one += n[d] == 1;
    return two == 1 && one == 1 && mg_longest_edge(n) >= MG_AUTO_MIN_EDGE;
}

static inline MG_HD int mg_point(int dx, int dy, int dz)
{
    return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
}
static inline MG_HD int mg_dx(int p, int d)
{
    return (d == 0 ? p % 3 : d == 1 ? p / 3 % 3 : p / 9) - 1;
}

/* P and R = P^T along one direction, slot by slot, between a pair of
 * levels whose coarse point c lies on fine point 2c + s (c + s where the
 * direction is not coarsened; s: a slab's shift, mg_level.shift, z only,
 * else 0).  Callers walk the slots in order and skip those that are not
 * one: the same terms in the same order wherever they run, and on the
 * device the loops unroll with the slots in registers (packed into arrays
 * by a running count they went to the stack).  Coordinates are 32-bit (a
 * level's grid is a plan's: fewer than 2^31 rows), so is their arithmetic
 * on the device.
 *
 * Parents (P): slot e (0, 1) of the coarse points fine f interpolates
 * from -- fine 2c takes c (weight 1), fine 2c + 1 takes c and c + 1 (1/2
 * each); a direction not coarsened is the identity (slot 0).  A parent
 * off the coarse grid is not one: past the end, the Dirichlet boundary's
 * zero; outside a slab, read only by ghost planes, which an exchange
 * refills.  1: slot e is one, in *c and *w. */
static inline MG_HD int mg_parent(int coarsened, int32_t f, int32_t nc, int32_t s, int e,
                                  int32_t *c, double *w)
{
    const int32_t g = f - s;
    if (!coarsened || g % 2 == 0) {
        *c = coarsened ? g / 2 : g, *w = 1;
        if (e) return 0;
    } else {
        *c = (g - 1) / 2 + e, *w = 0.5;
    }
    return *c >= 0 && *c < nc;
}

/* Children (R): slot e (0, 1, 2) of the fine points coarse c restricts
 * from -- 2c - 1, 2c, 2c + 1 (weights 1/2, 1, 1/2), or c alone in slot 1
 * (weight 1) where the direction is not coarsened; those off the fine
 * grid (or the slab) are not. */
static inline MG_HD int mg_child(int coarsened, int32_t c, int32_t nf, int32_t s, int e,
                                 int32_t *f, double *w)
{
    const int d = e - 1;
    *f = (coarsened ? 2 * c : c) + s + d, *w = d ? 0.5 : 1;
    return (coarsened || d == 0) && *f >= 0 && *f < nf;
}

/* A level's coupling along direction d (the coarsening rule's input): the
 * sum over rows i of |a_ip| / |a_ii| over the stencil points p that move
 * along d (an edge or corner point counts for each direction it moves
 * along) -- scaled by the row's diagonal, so that a jump in the
 * coefficient does not let one region outvote the rest.  Each term is a
 * fixed-point integer (MG_COUPLING_BITS fraction bits, the ratio clamped
 * at MG_COUPLING_CLAMP): integer sums do not depend on their order, so the
 * host's OpenMP sum and the device's atomics give the same numbers, and
 * both set-ups pick the same directions.  Bound: 18 points x 2^31 rows x
 * 2^26 < 2^64.  Rows whose diagonal is zero or not finite add nothing
 * (the finest level's are refused before; coarse ones of an SPD A have
 * none). */
#define MG_COUPLING_BITS 24
#define MG_COUPLING_CLAMP 4.0
/* Row i's grid coordinates x[3] on S's grid. */
static inline MG_HD void mg_coords(const mg_stencil *S, int64_t i, int64_t x[3])
{
    /* 32-bit division where the rows allow (a plan's: always): on the
       device a 64-bit one costs several times as much */
    if (S->rows <= (int64_t)UINT32_MAX) {
        const uint32_t u = (uint32_t)i, n0 = (uint32_t)S->n[0], n1 = (uint32_t)S->n[1];
        x[0] = u % n0, x[1] = u / n0 % n1, x[2] = u / (n0 * n1);
    } else {
        x[0] = i % S->n[0], x[1] = i / S->n[0] % S->n[1], x[2] = i / ((int64_t)S->n[0] * S->n[1]);
    }
}

/* 1: stencil point p of the row at coordinates x lies on the grid (a point
 * outside is read nowhere: a lent diagonal's slot there may hold padding). */
static inline MG_HD int mg_inside(const mg_stencil *S, const int64_t x[3], int p)
{
    int in = 1;
    for (int e = 0; e < 3; e++) in &= x[e] + mg_dx(p, e) >= 0 && x[e] + mg_dx(p, e) < S->n[e];
    return in;
}

static inline MG_HD void mg_row_coupling(const mg_stencil *S, int64_t i, uint64_t c[3])
{
    const double d = fabs(S->coef[mg_point(0, 0, 0)][i]);
    if (!(d > 0) || !(d <= 1.7976931348623157e308)) return;   /* 0, inf or NaN */
    int64_t x[3];
    mg_coords(S, i, x);
    MG_UNROLL
    for (int p = 0; p < MG_POINTS; p++) {
        if (!S->coef[p] || p == mg_point(0, 0, 0) || !mg_inside(S, x, p)) continue;
        const double r = fabs(S->coef[p][i]) / d;   /* IEEE division: host = device */
        const uint64_t q = (uint64_t)((r < MG_COUPLING_CLAMP ? r : MG_COUPLING_CLAMP) *
                                      (double)(1ull << MG_COUPLING_BITS));
        for (int e = 0; e < 3; e++)
            if (mg_dx(p, e) != 0) c[e] += q;
    }
}

/* a + b c, never contracted into a fused multiply-add: the device's
 * Galerkin kernel then rounds as the host's (C11 does not contract), so
 * the levels it builds agree bit for bit -- the same points present, the
 * same nonzeros -- also where terms cancel. */
static inline MG_HD double mg_add_mul(double a, double b, double c)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, __dmul_rn(b, c));
#else
    return a + b * c;
#endif
}

/* 2^-m (0 <= m < 1023): a Galerkin term's weight, R's and P's halves
 * counted; exact, by its bits, the same on host and device. */
static inline MG_HD double mg_half_pow(int m)
{
    const uint64_t u = (uint64_t)(1023 - m) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Start vector of the power iteration on D^-1 A, entry i in [-1, 1): a
 * counter-based hash of i (splitmix64's finaliser), so that the host and
 * the device make the same vector, each entry on its own (a sequential
 * generator cannot be run in parallel). */
static inline MG_HD double mg_start_value(int64_t i)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

/* Power steps of the eigenvalue estimate (host and device alike). */
#define MG_POWER_STEPS 10

/* The finest level's estimate (issue 30).  The user's stencil, where mg
 * suits it, has its top mode (lambda_max of D^-1 A) alternating in sign
 * from point to point -- a Laplacian's highest frequency -- so power steps
 * from the checkerboard (-1)^(x+y+z) reach lambda_max in a step or two,
 * and Gershgorin's bound G = max_i sum_j |a_ij| / |a_ii| >= lambda_max
 * certifies them: a Rayleigh quotient q is at most lambda_max (SPD A), so
 * once q >= MG_CERTIFY G, lambda_max lies in [q, G] and G is the bound,
 * not 1.1 q.  The steps stop there.  The Galerkin levels' top modes are no
 * checkerboards (couplings of both signs): the checkerboard's quotient
 * stalls far below lambda_max there (PCG 6 -> 25-772 iterations, CPU,
 * bench/results/mg-estimate-start-cpu-2026-11-27.txt), so they keep the
 * hash start; and so does level 0, for the usual MG_POWER_STEPS, after
 * MG_CHECKER_STEPS that did not certify (lap3d27: its top mode alternates
 * along one direction only, 1.385 against the checkerboard's 1.077). */
#define MG_CERTIFY 0.95
/* One step certified every 5- and 7-point Laplacian, jump3d, aniso3d and
 * vardiff case from 12 points an edge on (CPU, 2026-11-27), lap3d7:8 took 3;
 * a box stencil (lap2d9, lap3d27) is never certified and pays these steps
 * on top of the hash's. */
#define MG_CHECKER_STEPS 2
/* A little of the hash on the checkerboard, so that every mode is in the
 * start (the steps find the top one whichever it is). */
#define MG_CHECKER_NOISE 0.05

/* The checkerboard start at global row i of a grid nx x ny x any. */
static inline MG_HD double mg_checker_value(int64_t i, int32_t nx, int32_t ny)
{
    const int64_t x = i % nx, y = i / nx % ny, z = i / ((int64_t)nx * ny);
    const double h = mg_add_mul(1.0, MG_CHECKER_NOISE, mg_start_value(i));
    return (x + y + z) % 2 ? -h : h;
}

/* Row i's Gershgorin ratio sum_j |a_ij| / |a_ii| in the same order on the
 * host and the device (their maxima are then equal: a max is exact in any
 * order); a ratio that is not finite (a zero diagonal) is +inf, never NaN,
 * so that no comparison drops it. */
static inline MG_HD double mg_row_gershgorin(const mg_stencil *S, int64_t i)
{
    int64_t x[3];
    mg_coords(S, i, x);
    double sum = 0;
    for (int p = 0; p < MG_POINTS; p++)
        if (S->coef[p] && mg_inside(S, x, p)) sum += fabs(S->coef[p][i]);
    const double r = sum / fabs(S->coef[mg_point(0, 0, 0)][i]);
    return r <= 1.7976931348623157e308 ? r : INFINITY;
}

/* A level's estimate: the last quotient q, the bound (level 0's G; 0 on
 * the others: none), the power steps taken. */
typedef struct mg_estimate {
    double q, bound;
    int steps;
} mg_estimate;

/* 1: q is within MG_CERTIFY of a bound (never with bound 0). */
static inline MG_HD int mg_certified(double q, double bound)
{
    return bound > 0 && q >= MG_CERTIFY * bound;
}

typedef struct mg_level {
    int32_t n[3];
    int64_t rows;
    int coarsened[3];         /* 1: this level's direction d is the finer
                                 level's halved (P and R of the pair l-1, l) */
    uint64_t coupling[3];     /* this level's couplings (mg_row_coupling),
                                 which chose the next level's coarsened    */
    int points;               /* stencil points present                       */
    int64_t nnz;
    adia_plan *plan;          /* level 0: the user's (M->plan)                */
    int own_plan;
    double lmax;              /* bound on lambda_max(D^-1 A): 1.1 x estimate,
                                 at most the level's Gershgorin bound (level 0) */
    mg_estimate est;          /* what lmax came from (explain)                */
    double lmin;              /* Chebyshev: lower end of the target interval  */
    adia_value_type vtype;    /* of its plan and device arrays (host arrays:
                                 double): the plan's, or float
                                 (adia_precond_options.float_levels)      */
    /* Arrays where the plan lives (device memory of vtype, or host
     * doubles): smoother scaling s (Jacobi: omega / a_ii, L1: 1 / sum |a_ij|,
     * Chebyshev: 1 / a_ii); right-hand side b and solution x (level 0:
     * the caller's r and z, NULL here); t = A x; d: Chebyshev direction. */
    void *s, *b, *x, *t, *d;
    void *ainv;               /* coarsest level: rows x rows inverse, row-major */
    double galerkin_ms, plan_ms;   /* set-up of this level (l > 0)         */
    /* Across processes (mg_state.slab): the level's rows are planes [zs,
     * zs + n[2]) of its nz (z0, z1: the own ones); shift: its plane 0 lies
     * on the finer level's plane 2 x 0 + shift (z halved) or 0 + shift.
     * One process: zs = z0 = shift = 0, z1 = nz = n[2]. */
    int64_t nz, z0, z1, zs, shift;
} mg_level;

typedef struct mg_phase_ms {
    double grid, stencil, galerkin, plans, smoother, coarse, upload;
} mg_phase_ms;

/* Where the set-up ran and what it cost on the device (mg_device.c). */
typedef struct mg_setup_info {
    int on_device;            /* 1: the hierarchy was built on the device   */
    int lent;                 /* 1: the finest stencil is the plan's own
                                 diagonals (no copy)                        */
    char why_host[160];       /* a GPU plan set up on the host: the reason  */
    int kernels;              /* launches of the device set-up              */
    int syncs;                /* host synchronisations (small copies back)  */
    double bytes;             /* moved through device memory (a model)      */
} mg_setup_info;

typedef struct mg_state {
    int nlev;
    mg_level lev[MG_MAX_LEVELS];
    mg_smoother smoother;
    int sweeps, degree;
    char cycle;               /* 'v', 'w' or 'f' */
    mg_coarsening coarsening; /* ADIA_MG_COARSENING (full, semi, auto)  */
    int device;
    int float_levels;         /* ADIA_FLOAT_LEVELS_ALL, _COARSE or _NONE   */
    int mixed;                /* 1: level 0's vtype is not the plan's -- it is
                                 a copy in its vtype, with b and x of its own
                                 that r and z are converted into and out of */
    int grid_given;
    int galerkin0;            /* 1: level 0 is a Galerkin level (M->galerkin):
                                 its estimate is a coarse level's (mg.h) */
    int coarse_spd;           /* 1: Cholesky; 0: LU (A_c not SPD) */
    mg_phase_ms ms;
    int kernels, products;    /* launches per cycle: ours, adia_spmv_async */
    double cycle_bytes;       /* moved per cycle (a model, mg.c)            */
    mg_setup_info setup;
    /* Across processes: the callbacks (NULL: one process); the last level
     * is then gathered whole onto every process (full_b, full_x: its
     * whole grid) and solved by a one-process mg there (inner, on
     * inner_plan). */
    const adia_slab_comm *slab;
    adia_precond *inner;
    adia_plan *inner_plan;
    void *full_b, *full_x;
    int exchanges;            /* plane exchanges per cycle                   */
    void *work;               /* every level's b, x, t, d (mg.c, work_arrays) */
} mg_state;

/* ---- mg_grid.c */
/* The grid of the n x n matrix A: opt_grid if any entry is non-zero (the
 * others 1), else found from A's offsets; every nonzero checked. */
adia_status adia__mg_grid(const adia_csr *A, const int opt_grid[3], int32_t n[3]);
/* The stencil of A on grid n (checked by adia__mg_grid); a zero or
 * non-finite diagonal entry is an error naming the row and grid point. */
adia_status adia__mg_stencil_from_csr(const adia_csr *A, const int32_t n[3], mg_stencil *S);
/* The same two from a CPU plan's diagonal storage, read in place (no CSR
 * copy of the plan: most of the host set-up's grid phase); where
 * adia__mg_diag_readable(D): double values on the host, no scatter points
 * (CRSD's), square.  The same grid, the same stencil bits. */
struct adia_diag;
int adia__mg_diag_readable(const struct adia_diag *D);
adia_status adia__mg_grid_diag(const struct adia_diag *D, const int opt_grid[3], int32_t n[3]);
/* D's distinct stored |offsets| > 0, ascending, into off (room for
 * MG_MAX_OFFSETS; adia__mg_distinct_offsets' rule: -1 past them). */
int adia__mg_diag_offsets(const struct adia_diag *D, int64_t *off);
adia_status adia__mg_stencil_from_diag(const struct adia_diag *D, const int32_t n[3],
                                       mg_stencil *S);
void adia__mg_stencil_free(mg_stencil *S);
/* S as DIA on the host: ascending offsets (room for MG_POINTS), their
 * values (adia__alloc'd, diagonal k of row i at k rows + i, a point off
 * the grid 0) and how many are nonzero -- to_dia_kernel's on the device. */
adia_status adia__mg_host_dia(const mg_stencil *S, int64_t offsets[MG_POINTS], int *ndiag,
                              double **values, int64_t *nnz);

/* Where the grid search reads a matrix: its rows, its distinct |offsets|
 * > 0 (ascending; k = -1: more than MG_MAX_OFFSETS), the first row with a
 * nonzero that couples points not neighbours on grid n (rows if none), and
 * the error for such a row (the entry named).  The host's CSR and a GPU
 * plan's storage (mg_device.c) are the two sources. */
#define MG_MAX_OFFSETS 32
typedef struct mg_grid_source {
    int64_t rows;
    const int64_t *off;
    int k;
    adia_status (*bad_row)(void *ctx, const int32_t n[3], int64_t *bad);
    adia_status (*report)(void *ctx, const int32_t n[3], int64_t i);
    void *ctx;
} mg_grid_source;
/* The grid: opt_grid if any entry is non-zero (the others 1), else the
 * first candidate of the offsets on which every nonzero is a neighbour's. */
adia_status adia__mg_grid_find(const mg_grid_source *src, const int opt_grid[3], int32_t n[3]);
int adia__mg_distinct_offsets(const int64_t *list, int k, int64_t off[MG_MAX_OFFSETS]);
/* Grids the distinct |offsets| off[0..k) (ascending, > 0) of a matrix of
 * `rows` rows suggest, most likely first; at most max of them. */
int adia__mg_grid_candidates(int64_t rows, const int64_t *off, int k, int32_t cand[][3], int max);
/* 1: A's offsets suggest a grid whose longest edge is MG_AUTO_MIN_EDGE or
 * more -- where "auto" is likely to make mg (its grid not checked: a
 * guess for a plan's expected calls, adia_solve_expected_calls). */
int adia__mg_likely(const adia_csr *A);
/* What a solve with mg likely takes: at most this many iterations on the
 * grids it suits (6 on Laplacians, 18-24 with jumping coefficients), each
 * this many products on the finest level's plan besides the method's own
 * (a V-cycle's smoothing steps and residual). */
#define MG_LIKELY_ITERATIONS 25
#define MG_CYCLE_PRODUCTS 5
/* The messages of a matrix off grid n (return ADIA_ERR_INVALID_ARG):
 * A(i, j) = v couples points that are not neighbours; the diagonal
 * A(i, i) = v is zero or not finite. */
adia_status adia__mg_error_off_grid(const int32_t n[3], int64_t i, int64_t j, double v);
adia_status adia__mg_error_diagonal(const int32_t n[3], int64_t i, double v);

/* ---- mg_galerkin.c */
/* The coarsening rule, a pure function of the grid n and the level's
 * couplings c (mg_row_coupling summed over the rows): the coarse grid nc
 * and which directions halve (*coarsened). */
void adia__mg_coarse_grid(const int32_t n[3], const uint64_t c[3], mg_coarsening mode,
                          int32_t nc[3], int coarsened[3]);
/* The couplings of S (host; the device's twin: adia__mg_gpu_coupling). */
void adia__mg_coupling(const mg_stencil *S, uint64_t c[3]);
/* The same over rows [r0, r1) (a slab's own). */
void adia__mg_coupling_rows(const mg_stencil *S, int64_t r0, int64_t r1, uint64_t c[3]);
/* C = R A P on the coarse grid nc (A: the fine stencil). */
adia_status adia__mg_galerkin(const mg_stencil *A, const int32_t nc[3],
                              const int coarsened[3], mg_stencil *C);
/* The stencil's CSR (zeros dropped); points present and nnz. */
adia_status adia__mg_stencil_to_matrix(const mg_stencil *S, adia_matrix **out, int *points);
/* A stencil's DIA layout: the ascending distinct offsets of its points
 * (offsets[0..ndiag)); diagonal k holds the points pt[first[k] ..
 * first[k + 1]) -- several only on a grid 2 points wide, where points
 * share an offset (a row has at most one of them inside the grid). */
typedef struct mg_dia_map {
    int ndiag;
    int first[MG_POINTS + 1];
    int pt[MG_POINTS];
} mg_dia_map;
void adia__mg_dia_layout(const mg_stencil *S, int64_t offsets[MG_POINTS], mg_dia_map *m);
/* y = A x on the host (the eigenvalue estimate). */
void adia__mg_stencil_apply(const mg_stencil *S, const double *x, double *y);

/* ---- mg_slab.c: the hierarchy across processes (S->slab), where the
 * plan lives (a GPU plan's on the device, as mg_device.c's): level 0 from
 * the plan (its slab), coarse levels slab by slab, the last gathered and
 * given a one-process mg; every level's smoother. */
adia_status adia__mg_build_slab(adia_precond *M, mg_state *S, const adia_precond_options *o,
                                int max_levels);
/* The cycle's share: the last level solved from its gathered grid (x =
 * the inner mg's z on this process's planes, b as the level's). */
adia_status adia__mg_slab_coarse(const mg_state *S, const mg_level *L, const void *b, void *x,
                                 void *stream);
/* n values of the level's arrays: y = alpha x (host or device). */
adia_status adia__mg_copy(const mg_state *S, int64_t n, double alpha, const void *x, void *y,
                          void *stream);

/* 1: level l's estimate is the finest level's (mg.h: MG_CERTIFY). */
static inline int mg_fine_estimate(const mg_state *S, int l)
{
    return l == 0 && !S->galerkin0;
}

/* ---- mg_smooth.c */
/* The smoother's scaling (rows host doubles) and the level's estimate
 * and bounds (L->est, lmax, lmin) from its stencil; fine: the user's
 * level (the checkerboard start, Gershgorin's bound). */
adia_status adia__mg_smoother_setup(const mg_stencil *S, int fine, mg_smoother kind, double *s,
                                    mg_level *L);
/* The scaling s alone, of bound lmax (a slab's, whose estimate sums over
 * the processes: mg_slab.c). */
void adia__mg_smoother_scale(const mg_stencil *S, mg_smoother kind, double lmax, double *s);
/* The last Rayleigh quotient v'Av / v'Dv of power steps on D^-1 A (the
 * device's twin: adia__mg_gpu_estimate): MG_POWER_STEPS from
 * mg_start_value; fine: first up to MG_CHECKER_STEPS from mg_checker_value,
 * stopped once mg_certified by Gershgorin's bound, and only if not the
 * MG_POWER_STEPS from the hash (mg.h, at MG_CERTIFY). */
adia_status adia__mg_estimate(const mg_stencil *S, int fine, mg_estimate *e);
/* Gershgorin's bound of D^-1 A over rows [r0, r1): the largest
 * mg_row_gershgorin. */
double adia__mg_gershgorin(const mg_stencil *S, int64_t r0, int64_t r1);
/* The same on a slab (mg_slab.c; c NULL: one process, rows 0..rows): the
 * start vector of the global rows origin + i, the sums over rows [r0, r1)
 * added over the processes and the bound their max, each step's vector's
 * ghost planes exchanged (level's layout).  adia__mg_gpu_estimate_slab is
 * its device twin. */
adia_status adia__mg_estimate_slab(const mg_stencil *S, int64_t origin, int64_t r0, int64_t r1,
                                   const adia_slab_comm *c, int level, int fine, mg_estimate *e);
/* lmax, lmin of a level of `rows` rows from that estimate (q not
 * positive: the error that A is not positive definite); the Jacobi weight
 * of lmax. */
adia_status adia__mg_bounds(const mg_estimate *e, int64_t rows, double *lmax, double *lmin);
double adia__mg_jacobi_omega(const mg_stencil *S, double lmax);
/* The inverse of the dense matrix of S (rows^2 host doubles, row-major):
 * Cholesky, else (*spd = 0) LU with partial pivoting; singular: error. */
adia_status adia__mg_dense_inverse(const mg_stencil *S, double *inv, int *spd);
/* The same of a dense n x n matrix a0 (row-major, not changed). */
adia_status adia__dense_inverse(const double *a0, int64_t n, double *inv, int *spd);
/* ---- cheb.c: what cheb and agg read of an SPD A's host CSR.  diag: A's
 * diagonal (each checked positive and finite), *gershgorin: max_i sum_j
 * |a_ij| / a_ii, *est: the Rayleigh quotient v'Av / v'Dv after 10 power
 * steps on D^-1 A from a fixed pseudo-random start (checked positive);
 * kind names the preconditioner in messages. */
adia_status adia__precond_spd_bounds(const char *kind, const adia_matrix *A, double *diag,
                                     double *est, double *gershgorin);

/* One smoothing step: g = s (bs b - t), the new direction dx = c2 g + c1
 * d (d not read where c1 == 0), x += dx, d = dx where a later step reads
 * it.  Jacobi: c1 = 0, c2 = 1, no d.  Two passes a row fewer than "write
 * d, read d" in a Chebyshev sweep from x = 0 and one in any sweep (2 + 1
 * + 1 of a V-cycle level's 28 with degree 2): the last step's d is read
 * by no one, and after a first step from x = 0 the direction equals x
 * (the same bits), so the second step reads x for both. */
typedef struct mg_step {
    double c1, c2;
    int zero_x;               /* x (and t) enter as 0: neither is read     */
    int d_is_x;               /* the direction in is x (the step before
                                 started from x = 0): d not read           */
    int keep_d;               /* write d: a later step of the sweep reads it */
} mg_step;

/* Step k of a Chebyshev sweep of `degree` steps (Saad, Iterative Methods,
 * Alg. 12.1, D^-1 the inner preconditioner) on theta +- delta; from_zero:
 * the sweep starts from x = 0.  *rho: the recurrence's, set by step 0 and
 * carried from step to step. */
static inline mg_step mg_cheb_step(int k, int degree, double theta, double delta, int from_zero,
                                   double *rho)
{
    const double sigma = theta / delta;
    mg_step st = {.c1 = 0, .c2 = 1 / theta, .zero_x = from_zero && k == 0,
                  .d_is_x = from_zero && k == 1, .keep_d = k < degree - 1};
    if (k == 0) {
        *rho = 1 / sigma;
    } else {
        const double r = 1 / (2 * sigma - *rho);
        st.c1 = r * *rho;
        st.c2 = 2 * r / delta;
        *rho = r;
    }
    return st;
}

/* ---- the cycle's vector kernels (mg_cpu.c on host doubles, mg_gpu.cu on
 * device arrays of each level's type, mg_level.vtype).  bs scales b (the
 * caller's alpha, level 0). */
typedef struct mg_kernels {
    /* One step of L's smoother on x (mg_step), b scaled by bs. */
    adia_status (*smooth)(const mg_state *S, const mg_level *L, mg_step st, double bs,
                          const void *b, void *x, void *stream);
    /* Lc->b = R (bs b - L->t): the residual restricted in one pass. */
    adia_status (*restrict_residual)(const mg_state *S, const mg_level *L, const mg_level *Lc,
                                     double bs, const void *b, void *stream);
    /* x += P Lc->x. */
    adia_status (*prolong)(const mg_state *S, const mg_level *L, const mg_level *Lc, void *x,
                           void *stream);
    /* x = bs Ainv b (the coarsest level). */
    adia_status (*coarse)(const mg_state *S, const mg_level *L, double bs, const void *b,
                          void *x, void *stream);
} mg_kernels;

extern const mg_kernels adia__mg_cpu_kernels, adia__mg_gpu_kernels;

/* Level arrays on the device (mg_gpu.cu): n values of vt, zeroed or
 * uploaded from h (host doubles); freed by adia__precond_free_gpu. */
adia_status adia__mg_gpu_zeros(adia_value_type vt, int64_t n, void **out);

/* ---- the set-up on the device (mg_device.c drives it; the kernels are in
 * mg_setup_gpu.cu, mg_setup_gpu_none.c without CUDA).  A device stencil
 * is an mg_stencil whose coef are device arrays of doubles. */

/* A GPU plan's diagonal storage, read in place. */
typedef struct mg_dview {
    const void *dev;          /* the format's device handle               */
    adia_value_type vt;
    int32_t rows, cols;
    int noff;                 /* offsets stored, all groups                */
    const int32_t *offsets;   /* host: the format's (not owned)            */
    int32_t n_pieces;         /* 1: DIA's layout, diagonal k of row i at
                                 data0 + k rows + i                        */
    int64_t data0;
    unsigned long long *words;   /* device scratch, 3 words: the passes'
                                    results (adia__mg_gpu_view_free)      */
} mg_dview;
/* The view of plan's device storage; ADIA_ERR_UNSUPPORTED, with the
 * reason in why and no error set, when it cannot be read on the device. */
adia_status adia__mg_gpu_view(adia_plan *plan, mg_dview *v, char *why, size_t len);
/* Its scratch freed (a view not made, or freed: nothing). */
void adia__mg_gpu_view_free(mg_dview *v);
/* Every stored nonzero against grid n: *bad = the first row with one that
 * couples points that are not neighbours (rows if none), *mask = the
 * stencil points that hold a nonzero. */
adia_status adia__mg_gpu_check(const mg_dview *v, const int32_t n[3], int64_t *bad,
                               unsigned *mask);
/* Row i's first such entry: its column and value. */
adia_status adia__mg_gpu_bad_entry(const mg_dview *v, const int32_t n[3], int64_t i, int64_t *j,
                                   double *val);
/* The stencil of v on grid n (arrays for the points in mask and the
 * centre); *bad_diag: the first row whose diagonal entry is zero or not
 * finite (rows if none), that entry in *dval.  A double plan in one piece
 * whose every offset names one point of the grid lends its diagonals as
 * the arrays (S->lent: nothing copied; its block holds its words only). */
adia_status adia__mg_gpu_stencil(const mg_dview *v, const int32_t n[3], unsigned mask,
                                 mg_stencil *S, int64_t *bad_diag, double *dval);
/* adia__mg_coupling on the device (the same integers). */
adia_status adia__mg_gpu_coupling(const mg_stencil *S, uint64_t c[3]);
/* C = R A P (device stencils): a thread per coarse point, the host's row
 * (mg_galerkin.c) unrolled at compile time: its bits. */
adia_status adia__mg_gpu_galerkin(const mg_stencil *A, const int32_t nc[3],
                                  const int coarsened[3], mg_stencil *C);
/* S as DIA in vt: *ndiag ascending offsets (host, room for MG_POINTS), the
 * values (cudaMalloc'd, ndiag x rows: diagonal k of row i at k rows + i). */
adia_status adia__mg_gpu_to_dia(const mg_stencil *S, adia_value_type vt, int64_t *offsets,
                                int *ndiag, void **values);
/* adia__mg_estimate of the n stencils S[0..n) on the device (deterministic
 * sums), all at once, into est[0..n); fine: S[0] is the user's level. */
adia_status adia__mg_gpu_estimate(const mg_stencil *S, int n, int fine, mg_estimate *est);
/* The same on a slab (mg_slab.c): the start vector of the global rows
 * origin + i, the sums over rows [r0, r1) added over the processes (c) and
 * the bound their max, each step's vector's ghost planes exchanged
 * (level's layout). */
adia_status adia__mg_gpu_estimate_slab(const mg_stencil *S, int64_t origin, int64_t r0, int64_t r1,
                                      const adia_slab_comm *c, int level, int fine,
                                      mg_estimate *e);
/* adia__mg_gpu_coupling over rows [r0, r1) (a slab's own). */
adia_status adia__mg_gpu_coupling_rows(const mg_stencil *S, int64_t r0, int64_t r1, uint64_t c[3]);
/* A device stencil of grid n with zeroed arrays for the points in mask
 * (and the centre), in one allocation. */
adia_status adia__mg_gpu_stencil_zeros(mg_stencil *S, const int32_t n[3], unsigned mask);
/* The smoother's scaling (mg_smooth.c's, Jacobi weight omega) in vt. */
adia_status adia__mg_gpu_scaling(const mg_stencil *S, mg_smoother kind, double omega,
                                 adia_value_type vt, void **s);
/* A device stencil copied into a host one (small levels, tests). */
adia_status adia__mg_gpu_download(const mg_stencil *D, mg_stencil *H);
void adia__mg_gpu_stencil_free(mg_stencil *S);

/* ---- mg_device.c: the hierarchy of a GPU plan built on the device:
 * levels, plans, smoother scaling and bounds, the coarsest inverse (every
 * level's work arrays are mg.c's).  *done 0: the plan's storage cannot be
 * read there (S->setup.why_host says why): the host builds it. */
adia_status adia__mg_build_device(adia_precond *M, mg_state *S, const adia_precond_options *o,
                                  int max_levels, int *done);
/* Level C's plan from its device stencil (DIA taken over by the plan);
 * also the plan of a slab hierarchy's gathered level (C: its whole grid). */
adia_status adia__mg_device_level_plan(adia_precond *M, mg_state *S, mg_level *C,
                                       const mg_stencil *st);
/* "auto" where no grid the distinct |offsets| off[0..k) suggest (a grid
 * not given) has MG_AUTO_MIN_EDGE points an edge: adia__mg_repays' error
 * before the grid's check, a pass over the matrix that would only find a
 * grid mg does not repay on (CPU: 39 of auto's 40 ms on lap3d7:64). */
adia_status adia__mg_repays_early(adia_precond *M, int64_t rows, const int64_t *off, int k,
                                  const int opt_grid[3]);
/* Shared by both set-ups (mg.c): a level's grid; whether level L is
 * coarsened further; the coarsest level's size checked; a level plan's
 * hints. */
void adia__mg_set_grid(mg_level *L, const int32_t n[3]);
int adia__mg_coarsen_more(const mg_level *L);
/* 1: a grid of n[0] x n[1] x n[2] points coarsens no further (at most
 * MG_COARSE_ROWS, MG_COARSE_ROWS_3D on a 3D grid, rows: one process's and
 * the slabs' rule). */
int adia__mg_coarse_enough(const int64_t n[3]);
/* For kind "auto" (M->automatic): ADIA_ERR_UNSUPPORTED, saying why, where
 * grid n is too small for mg to repay its set-up (MG_AUTO_MIN_EDGE), or is
 * a strip (mg_strip: M->strip set, for agg). */
adia_status adia__mg_repays(adia_precond *M, const int32_t n[3]);
adia_status adia__mg_check_coarsest(const mg_state *S, int max_levels);
adia_plan_hints adia__mg_level_hints(const adia_precond *M, const mg_level *L);

#ifdef __cplusplus
}
#endif
#endif
