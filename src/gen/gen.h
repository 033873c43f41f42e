/* gen.h -- what the generator files share: the row-callback builder and the
 * seeded random numbers.
 *
 * Every generator describes its matrix as "the sorted entries of row i",
 * computed from i alone.  adia__gen_build() calls it twice per row -- once to
 * count (col/val NULL), once to fill straight into the final CSR arrays --
 * so no generator ever holds COO triplets or a sort, rows are filled in
 * parallel, and the result does not depend on the number of threads. */
#ifndef ADIA_GEN_H
#define ADIA_GEN_H

#include "internal.h"
#include "stencil.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gen_rows gen_rows;
struct gen_rows {
    int32_t rows, cols;
    int32_t max_row;          /* upper bound of entries in one row */
    /* Entries of row i in increasing column order; returns how many.  col
     * and val are NULL in the counting pass, else have room for max_row. */
    int32_t (*row)(const gen_rows *g, int32_t i, int32_t *col, double *val);
    /* Nonzeros of rows [first, first + rows) from the description alone,
     * without visiting the rows (closed forms: O(diagonals)); -1 where the
     * kind cannot say.  NULL: never known (random row lengths). */
    int64_t (*count)(const gen_rows *g, int32_t first, int32_t rows);
    int32_t min_row;          /* fewest entries a row holds (a lower bound) */
    const void *ctx;          /* the generator's own description */
    uint64_t seed;
};

typedef struct gen_args gen_args;
/* Count, allocate and fill the CSR arrays of rows [a->row_first,
 * a->row_first + a->row_count) of g (all rows when row_count < 0); the matrix is named a->spec.
 * The memory budget is checked before any row is visited, with the
 * nonzeros g->count gives (else rows x g->min_row, a lower bound), and
 * again with the counted ones before the CSR is allocated.
 * Stores g's whole shape through a->rows_out, a->cols_out when given; with
 * out NULL that is all it does (the shape of a spec, no rows built). */
adia_status adia__gen_build(const gen_rows *g, const gen_args *a, adia_matrix **out);

/* xorshift64* seeded through splitmix64 from (seed, stream): independent
 * deterministic streams, e.g. one per row, so parallel fills agree. */
typedef struct gen_rng { uint64_t s; } gen_rng;
gen_rng adia__gen_rng_init(uint64_t seed, uint64_t stream);
uint64_t adia__gen_rng_next(gen_rng *r);
/* Uniform double in [0, 1). */
double adia__gen_rng_unit(gen_rng *r);
/* Uniform integer in [0, n), n > 0. */
uint64_t adia__gen_rng_below(gen_rng *r, uint64_t n);

/* Most possible nonzeros (rows x longest row) a generator builds (820 GB
 * of CSR): rejects specs like band:2000000000,1000000000 before they run
 * for hours. */
#define GEN_MAX_NNZ ((int64_t)1 << 36)

/* Parsed spec handed to a kind's builder. */
struct gen_args {
    const char *spec;         /* the whole spec, for messages and the name */
    int count;                /* numbers given */
    int64_t num[4];           /* integer arguments, all > 0 */
    double real;              /* the one real argument: type3, bandr FILL; aniso3d EPS; jump3d C */
    uint64_t seed;
    int sym;                  /* ",sym": symmetric positive definite variant */
    int64_t row_first, row_count;   /* rows to build (row_count < 0: all of them) */
    int64_t *rows_out, *cols_out;   /* NULL, or where the whole shape goes */
};

/* Builders of the kinds (gen_grid.c, gen_diag.c); out NULL: the shape only
 * (adia__gen_build). */
adia_status adia__gen_lap2d5(const gen_args *a, adia_matrix **out);
adia_status adia__gen_bandh(const gen_args *a, adia_matrix **out);
adia_status adia__gen_bandr(const gen_args *a, adia_matrix **out);
/* The diffusion operators on grids (gen_pde.c). */
adia_status adia__gen_aniso3d(const gen_args *a, adia_matrix **out);
adia_status adia__gen_jump3d(const gen_args *a, adia_matrix **out);
adia_status adia__gen_vardiff2d(const gen_args *a, adia_matrix **out);
adia_status adia__gen_vardiff3d(const gen_args *a, adia_matrix **out);
adia_status adia__gen_biharm1d(const gen_args *a, adia_matrix **out);
adia_status adia__gen_lap2d9(const gen_args *a, adia_matrix **out);
adia_status adia__gen_lap3d7(const gen_args *a, adia_matrix **out);
adia_status adia__gen_lap3d27(const gen_args *a, adia_matrix **out);
adia_status adia__gen_type2(const gen_args *a, adia_matrix **out);
adia_status adia__gen_band(const gen_args *a, adia_matrix **out);
adia_status adia__gen_randdiag(const gen_args *a, adia_matrix **out);
adia_status adia__gen_type3(const gen_args *a, adia_matrix **out);
adia_status adia__gen_random(const gen_args *a, adia_matrix **out);     /* adia__gen_random.c */
adia_status adia__gen_powerlaw(const gen_args *a, adia_matrix **out);

/* The stencil of a Laplacian kind (gen_grid.c); other kinds:
 * ADIA_ERR_UNSUPPORTED.  64-bit sizes, at most 2^62 points. */
adia_status adia__gen_stencil(const char *kind, const gen_args *a, adia_stencil *s);
/* The distinct diagonals of s that can hold entries, ascending (off), and
 * the stencil points on each (points: bit p for point p): a point leaving
 * a dimension of size 1 holds none, and on a side of 2 two points may
 * share a diagonal (never a row: one of them is outside).  Returns how
 * many (gen_grid.c). */
int adia__stencil_diagonals(const adia_stencil *s, int64_t off[STENCIL_MAX_POINTS],
                            uint32_t points[STENCIL_MAX_POINTS]);
/* The stencil of a spec (gen_spec.c): parsed, then adia__gen_stencil. */
adia_status adia__gen_parse_stencil(const char *spec, adia_stencil *s);
/* The stencil fills' arguments checked (func names the caller): spec a
 * Laplacian, rows [first, first + count) in the matrix, values not NULL
 * when count > 0; then the stencil, its diagonals and their points. */
adia_status adia__stencil_fill_args(const char *func, const char *spec, int64_t first,
                                    int64_t count, const void *values, adia_stencil *s,
                                    int64_t off[STENCIL_MAX_POINTS],
                                    uint32_t points[STENCIL_MAX_POINTS], int *ndiag);

#ifdef __cplusplus
}
#endif
#endif
