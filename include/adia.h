/*
 * adia.h -- the one public header of adia, sparse kernels for diagonal
 * sparse matrices (stencils, banded, finite-element, structured sparse).
 *
 * Conventions
 *  - Every function that can fail returns adia_status (0 = success,
 *    negative = error); adia_last_error() then holds a thread-local message
 *    saying what went wrong and where.  The library never exits or aborts.
 *  - Row and column indices are 32-bit, counts of nonzeros 64-bit.
 *  - Values are double or float (adia_value_type, a run-time enum).  The
 *    master matrix (adia_matrix) always holds doubles; a storage format
 *    (adia_format) is built from it in either precision.
 *  - Handles are opaque and carry a magic word, so a freed or foreign
 *    handle is reported as ADIA_ERR_INVALID_HANDLE instead of crashing.
 *  - Section markers ("== module ==") say which source folder implements
 *    the declarations below them.
 */
#ifndef ADIA_H
#define ADIA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* the library is compiled with hidden visibility: export what is declared here */
#if defined(ADIA_BUILDING_LIBRARY) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ADIA_VERSION_MAJOR 0
#define ADIA_VERSION_MINOR 1
#define ADIA_VERSION_PATCH 0
#define ADIA_VERSION_STRING "0.1.0"

/* ====================================================== errors (src/core) */

typedef enum adia_status {
    ADIA_OK = 0,
    ADIA_ERR_INVALID_ARG = -1,     /* NULL pointer, bad parameter value      */
    ADIA_ERR_NO_MEMORY = -2,       /* host or device allocation failed, or a
                                      host request above the memory available
                                      (checked from 256 MB: Linux would grant it
                                      and kill the process later)             */
    ADIA_ERR_OVERFLOW = -3,        /* a size computation would overflow      */
    ADIA_ERR_IO = -4,              /* cannot open / read / write a file      */
    ADIA_ERR_PARSE = -5,           /* malformed input file                   */
    ADIA_ERR_UNSUPPORTED = -6,     /* feature or format slot not available   */
    ADIA_ERR_DIMENSION = -7,       /* shapes do not agree                    */
    ADIA_ERR_INVALID_HANDLE = -8,  /* NULL, freed or uninitialised handle    */
    ADIA_ERR_INVALID_MATRIX = -9,  /* CSR/COO arrays violate invariants      */
    ADIA_ERR_NO_DEVICE = -10,      /* no CUDA device / built without CUDA    */
    ADIA_ERR_CUDA = -11,           /* CUDA runtime or driver error           */
    ADIA_ERR_CUSPARSE = -12,       /* cuSPARSE error                         */
    ADIA_ERR_NVRTC = -13,          /* run-time compilation failed            */
    ADIA_ERR_INTERNAL = -14        /* a bug in adia: please report           */
} adia_status;

/* Short fixed text for a status code ("out of memory", ...). */
const char *adia_status_string(adia_status s);
/* Thread-local message of the last error raised on this thread: what went
 * wrong and where (file, line, value).  Never NULL; "" when none. */
const char *adia_last_error(void);
/* Forget the last error of this thread. */
void adia_clear_error(void);
/* Record a message (printf format) as this thread's last error and return
 * code: for libraries built on adia (adia_mpi) that report through
 * adia_last_error() as adia does. */
adia_status adia_set_error(adia_status code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ================================================ memory budget (src/core) */

/* One budget for the host memory an operation may take at its peak.  Every
 * operation whose memory scales with its input (reading a file, generating,
 * converting, building a format, products, planning, drawing) computes its
 * whole peak from the header, spec or size before any work and refuses with
 * ADIA_ERR_NO_MEMORY naming both figures ("reading F needs 17.2 GB, budget
 * 12.0 GB") when it does not fit.  The default budget is half the memory
 * the system can still give at the time of the check (Linux MemAvailable):
 * Linux grants almost any allocation and kills the process later, so this
 * check is what turns an absurd request into an error.  The budget is per
 * process; the CLI sets it with --memory SIZE. */
adia_status adia_set_memory_budget(int64_t bytes);   /* <= 0: the default    */
int64_t adia_memory_budget(void);                    /* bytes in force now   */
int64_t adia_memory_available(void);                 /* MemAvailable, bytes  */

/* ===================================================== threads (src/core) */

/* The most threads one OpenMP region of the library starts: this many per
 * processor (omp_get_num_procs).  A larger OMP_NUM_THREADS or
 * omp_set_num_threads is clamped to it: OpenMP tries to start every thread
 * asked for, and OMP_NUM_THREADS=100000 crashed inside libgomp.  Explicit
 * thread counts above it (adia_spgemm_options.threads) are refused with
 * ADIA_ERR_INVALID_ARG; the CLI refuses such an OMP_NUM_THREADS.  Regions
 * also leave cores that other processes keep busy alone (docs/threads.md). */
#define ADIA_THREADS_PER_PROC 4
int adia_thread_limit(void);                         /* ADIA_THREADS_PER_PROC x processors */
int adia_threads(void);   /* threads a parallel region starts now (load included) */

/* ======================================================= types (src/core) */

typedef enum adia_value_type { ADIA_DOUBLE = 0, ADIA_FLOAT = 1 } adia_value_type;

/* Size in bytes of one value of type t (8 or 4). */
size_t adia_value_size(adia_value_type t);
const char *adia_value_type_name(adia_value_type t);

/* A read-only view of CSR arrays (row pointers 64-bit, columns 32-bit). */
typedef struct adia_csr_view {
    int32_t rows, cols;
    int64_t nnz;
    const int64_t *rowptr;   /* rows + 1 entries, rowptr[0] = 0           */
    const int32_t *colind;   /* nnz entries, sorted and unique in each row */
    const double *values;    /* nnz entries                                */
} adia_csr_view;

/* ====================================================== matrix (src/core) */

/* The master matrix: CSR with double values, validated (columns sorted and
 * unique within each row, all indices in range).  Rectangular allowed. */
typedef struct adia_matrix adia_matrix;

/* Copy CSR arrays into a new matrix.  values may be double or float (vt;
 * any other value type is ADIA_ERR_INVALID_ARG, in adia_matrix_create_coo
 * too).  The arrays must be valid CSR: rowptr monotone, columns in range;
 * columns may be unsorted and duplicated -- they are sorted and duplicates
 * summed. */
adia_status adia_matrix_create_csr(int32_t rows, int32_t cols, int64_t nnz,
                                   const int64_t *rowptr, const int32_t *colind,
                                   const void *values, adia_value_type vt,
                                   adia_matrix **out);
/* Copy COO triplets (0-based) into a new matrix; duplicates are summed (as
 * Matrix Market specifies), order does not matter. values may be NULL
 * (pattern: every value 1). */
adia_status adia_matrix_create_coo(int32_t rows, int32_t cols, int64_t nnz,
                                   const int32_t *row, const int32_t *col,
                                   const void *values, adia_value_type vt,
                                   adia_matrix **out);
void adia_matrix_destroy(adia_matrix *A);          /* NULL is fine */
adia_status adia_matrix_copy(const adia_matrix *A, adia_matrix **out);
adia_status adia_matrix_transpose(const adia_matrix *A, adia_matrix **out);
/* Export as COO triplets (0-based, row-major order); arrays allocated with
 * malloc, freed by the caller with free(). */
adia_status adia_matrix_to_coo(const adia_matrix *A, int32_t **row,
                               int32_t **col, double **values);
/* The CSR arrays of A, valid as long as A lives. */
adia_status adia_matrix_csr(const adia_matrix *A, adia_csr_view *view);
int32_t adia_matrix_rows(const adia_matrix *A);
int32_t adia_matrix_cols(const adia_matrix *A);
int64_t adia_matrix_nnz(const adia_matrix *A);
/* A short name (file name without folder and suffix, or generator spec). */
const char *adia_matrix_name(const adia_matrix *A);
adia_status adia_matrix_set_name(adia_matrix *A, const char *name);
/* Exact equality of structure and values (bitwise for values). */
int adia_matrix_equal(const adia_matrix *A, const adia_matrix *B);

/* Reference SpMV with OpenMP: y = alpha*A*x + beta*y, in double.
 * beta == 0 overwrites y (NaN/Inf in y are not propagated). */
adia_status adia_matrix_spmv(const adia_matrix *A, double alpha,
                             const double *x, double beta, double *y);

/* ============================================= Matrix Market I/O (src/io) */

/* Read a Matrix Market file (coordinate real/integer/pattern, general/
 * symmetric/skew-symmetric, or array real/integer general/symmetric/
 * skew-symmetric), gzip-compressed or not (recognised by content; the gzip
 * data is verified).  path "-" is standard input; pipes and FIFOs work
 * (read once, streamed).  Symmetric storage is expanded.  Complex files are
 * refused with ADIA_ERR_UNSUPPORTED ("complex matrices are not supported");
 * a read whose peak memory exceeds the budget with ADIA_ERR_NO_MEMORY
 * before any work.  Errors name file, line, value (docs/matrix-market.md). */
adia_status adia_matrix_read_mtx(const char *path, adia_matrix **out);
/* Rows [first, first + count) of a Matrix Market file, as a count x cols
 * matrix with the file's column indices (row i is the file's row first +
 * i): what one process of a distributed run holds (adia_mpi.h).  The file
 * is streamed as adia_matrix_read_mtx streams it and only these rows'
 * entries are kept (with symmetric storage, also the entries whose mirror
 * lands in them), so the rest of the matrix is never held; the checks of
 * the whole file (declared count, truncation, both triangles of a pair in
 * these rows) stay.  *rows and *cols (either may be NULL) get the whole
 * matrix's shape; with out NULL only they are filled, from the header.  A
 * range outside the matrix is ADIA_ERR_DIMENSION naming both. */
adia_status adia_matrix_read_mtx_rows(const char *path, int64_t first, int64_t count,
                                      int64_t *rows, int64_t *cols, adia_matrix **out);
/* Parse Matrix Market text held in memory (name is used in messages). */
adia_status adia_matrix_parse_mtx(const char *text, size_t len,
                                  const char *name, adia_matrix **out);
/* Write coordinate real general (17 significant digits: exact round trip);
 * gzip-compressed if the name ends in .gz. */
adia_status adia_matrix_write_mtx(const adia_matrix *A, const char *path);
/* Binary format (see docs/binary-format.md): header + raw CSR arrays,
 * loads at disk speed. */
adia_status adia_matrix_write_bin(const adia_matrix *A, const char *path);
adia_status adia_matrix_read_bin(const char *path, adia_matrix **out);
/* Either of the two, chosen by content (binary magic, also inside gzip) --
 * what the CLI uses.  path "-" is standard input; pipes and FIFOs work
 * (the first bytes are peeked, nothing is reopened). */
adia_status adia_matrix_load(const char *path, adia_matrix **out);

/* Dense vectors.  Matrix Market files: `array real|integer general` of
 * n x 1 (or 1 x n), or `coordinate real|integer|pattern general` of n x 1
 * (entries not given are 0); gzip by content; "-" reads standard input.
 * Written as `array real general` n x 1 with 17 significant digits (exact
 * round trip; NaN and infinities as "nan", "inf", "-inf", which the readers
 * take back), through a temporary file renamed over path only when
 * complete; gzip-compressed if the name ends in .gz.  *x is malloc'd
 * (free()); errors name file, line, value. */
adia_status adia_vector_read_mtx(const char *path, int32_t *n, double **x);
adia_status adia_vector_write_mtx(const char *path, int32_t n, const double *x);

/* Every file adia writes (matrices, vectors, pictures, plans) goes to a
 * temporary ".NAME.XXXXXX" in the target's folder, renamed over the target
 * only when complete, so a failure leaves the old file as it was (devices
 * and pipes, which cannot be replaced, are written directly).  For a
 * handler of the signals that end a process (the CLI catches SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGPIPE and SIGXFSZ): removes the temporaries
 * being written right now (async-signal-safe: unlink() only).  A write
 * still running afterwards fails at its commit. */
void adia_remove_temporary_files(void);

/* ==================================================== generators (src/gen) */

/* Build a matrix from a generator spec, deterministic for a given seed
 * (own xorshift random numbers, independent of the thread count):
 *   lap2d5:NX[xNY]      2D 5-point Laplacian (4 / -1), natural ordering
 *   lap2d9:NX[xNY]      2D 9-point (8 / -1)
 *   lap3d7:N[xNYxNZ]    3D 7-point (6 / -1)
 *   lap3d27:N[xNYxNZ]   3D 27-point (26 / -1)        Laplacians are SPD
 *   band:N,BW           offsets -BW..BW (BW < N), random values in [-1,1),
 *                       diagonal = sum |off-diagonal| + 1
 *   type2:N             type II: an s x 2s grid, 5-point (two s x s fields
 *                       joined along an edge) + coupling at offsets +-s*s;
 *                       2*s*s rows, the largest <= N; diagonal 5, others -1
 *   type3:N,K,FILL      type III (N >= 8192, K >= 3): full main, K-1 more
 *                       (half with |o| <= N/64, half N/8 <= |o| <= N/2)
 *                       broken by zero runs of 1024 rows so that the DIA
 *                       fill (nnz / in-matrix length of the diagonals) is
 *                       about FILL in (0,1], + 3 scatter points (offsets
 *                       +-(N-2), N-3: alone on their diagonal)
 *   randdiag:N,K,SPREAD main + K-1 distinct random offsets |o| <= SPREAD,
 *                       full diagonals; values as band
 *   random:N,AVG        unstructured: row lengths uniform in 1..2*AVG-1,
 *                       one column drawn in each of `length` equal strata
 *                       of [0,N) (the one holding i replaced by i); values
 *                       as band
 *   powerlaw:N,MIN,MAX  as random, row lengths ceil(MIN/u) (u uniform in
 *                       (0,1]) capped at MAX: P(length > L) = MIN/L
 * optional ",sym" after the numbers of band, randdiag and type3: the
 * symmetric positive definite variant (each offset o also at -o with the
 * same zero sections, A(i,j) = A(j,i), diagonal = sum |off-diagonal| + 1);
 * optional ",seed=S" at the end of any spec (default 1).  All numbers are
 * positive integers <= INT32_MAX (FILL a real); anything else, too many
 * rows, more than 2^36 possible nonzeros (N x number of diagonals) or K
 * larger than the diagonals available is ADIA_ERR_INVALID_ARG
 * with a message naming the spec.  CSR is built in place (row lengths
 * first), so 1e8 nonzeros need about 1.2 GB.  The matrix is named spec. */
adia_status adia_matrix_generate(const char *spec, adia_matrix **out);
/* Rows [first, first + count) of the matrix of spec, as a count x cols
 * matrix with the whole matrix's column indices (row i is row first + i,
 * the same entries as in adia_matrix_generate's matrix): nothing outside
 * these rows is built, so a process of a distributed run (adia_mpi.h)
 * holds only its block.  *rows and *cols (either may be NULL) get the
 * whole matrix's shape; with out NULL only they are filled (no rows
 * built).  A range outside the matrix is ADIA_ERR_DIMENSION. */
adia_status adia_matrix_generate_rows(const char *spec, int64_t first, int64_t count,
                                      int64_t *rows, int64_t *cols, adia_matrix **out);
/* One line (or a few) per generator kind, for --help texts. */
const char *adia_generator_help(void);
/* *rows_per_plane: the rows of one plane of a grid spec's slowest
 * dimension (lap2d5 / lap2d9 / vardiff2d: one grid line, NX; lap3d7,
 * lap3d27, aniso3d, jump3d, vardiff3d: NX NY): the unit a distributed
 * matrix splits such a grid by (adia_mpi.h), so that each block is a
 * grid of its own.  A kind without a grid, or a grid of one line:
 * ADIA_ERR_UNSUPPORTED. */
adia_status adia_matrix_generate_plane(const char *spec, int64_t *rows_per_plane);

/* The Laplacians (lap2d5, lap2d9, lap3d7, lap3d27) by their diagonals, for
 * diagonal storage with no CSR on the way (a problem too large for one
 * GPU, split over several: adia_mpi.h).  Each size <= INT32_MAX, the grid
 * at most 2^62 points: 64-bit rows.  *n = rows of the (square) matrix,
 * *ndiag = its diagonals that can hold entries (at most
 * ADIA_STENCIL_MAX_DIAGONALS), offsets (room for that many): those
 * diagonals, ascending, o = column - row; any of the three may be NULL.
 * Other kinds: ADIA_ERR_UNSUPPORTED (adia_matrix_generate_rows builds
 * them). */
#define ADIA_STENCIL_MAX_DIAGONALS 27
adia_status adia_stencil_diagonals(const char *spec, int64_t *n, int *ndiag, int64_t *offsets);
/* Rows [first, first + count) of that matrix filled on the GPU into
 * values (device, ndiag x count values of vt): the entry of row first + i
 * on diagonal k at values[k count + i], 0 where the neighbour is outside
 * the grid -- adia_matrix_generate's entries, nothing else.  Queued on
 * stream (a cudaStream_t; NULL: the default stream).  Rows outside the
 * matrix: ADIA_ERR_DIMENSION; no device or a CPU-only build:
 * ADIA_ERR_NO_DEVICE.  adia_plan_create_device_dia plans the result. */
adia_status adia_stencil_fill_device(const char *spec, int64_t first, int64_t count,
                                     void *values, adia_value_type vt, void *stream);
/* The same on the host, in double (values: ndiag x count, host): the
 * entries of a block of rows with no CSR, e.g. to check a product on a
 * block too large for one (adia_mpi's check of a filled block). */
adia_status adia_stencil_fill(const char *spec, int64_t first, int64_t count, double *values);

/* ================================================ analysis (src/analyze) */

/* The paper's matrix types: I (DIA), II (far diagonals: BRCSD-I),
 * III (long zero sections / scatter points: BRCSD-II).  The search engine:
 *   I   p_offset == 0 and p_zero <= alpha (ties count as I; see analyze.c)
 *   II  p_offset > 0, no long zero section, no scatter point
 *   III everything else. */
typedef enum adia_matrix_type {
    ADIA_TYPE_I = 1,
    ADIA_TYPE_II = 2,
    ADIA_TYPE_III = 3
} adia_matrix_type;
const char *adia_matrix_type_name(adia_matrix_type t);   /* "I", "II", "III" */

/* Search-engine thresholds; a value <= 0 means the default. */
typedef struct adia_search_params {
    double Z;          /* delta = ceil(rows / Z) (default 100)                */
    double alpha;      /* p_zero threshold (default (1 - 1/K) / Z)            */
    int32_t B;         /* row block: long zero section = run of >= B zeros
                          on one diagonal, within its in-matrix extent
                          (default 256)                                      */
} adia_search_params;

/* Features of a matrix: the paper's Table 1 symbols and the row statistics
 * an inspector needs.  Computed in O(nnz) time, O(n_diag + rows) memory. */
typedef struct adia_features {
    int32_t rows, cols;
    int64_t nnz;
    /* Table 1 */
    int64_t n_diag;            /* distinct diagonals (offsets col - row)       */
    double delta;              /* ceil(rows / Z), as the paper's Table 4       */
    int64_t n_offset;          /* diagonals with |offset| > delta              */
    double p_offset;           /* n_offset / n_diag                            */
    int64_t n_elem;            /* DIA elements: n_diag * rows (padding incl.)  */
    int64_t n_zero;            /* n_elem - nnz                                 */
    double p_zero;             /* n_zero / n_elem                              */
    double alpha;              /* threshold used                               */
    int label_lz;              /* has a long zero section                      */
    int label_s;               /* has a scatter point                          */
    int64_t n_long_zero;       /* number of long zero sections                 */
    int64_t n_scatter;         /* scatter points: nonzeros alone on their diag */
    double dia_fill;           /* nnz / sum of in-matrix lengths of diagonals  */
    double dense_diag_share;   /* share of nnz on diagonals >= 50% full        */
    /* (no nonzeros: dia_fill = dense_diag_share = 1, p_offset = p_zero = 0) */
    /* rows */
    int32_t row_min, row_max;  /* entries per row (0 when no rows)             */
    double row_mean, row_var;  /* population variance                         */
    int32_t empty_rows;
    int32_t lower_bandwidth;   /* max(row - col) over nonzeros (0 if none)     */
    int32_t upper_bandwidth;   /* max(col - row)                               */
    /* values */
    int64_t nan_count, inf_count;
    /* search engine */
    adia_matrix_type type;
    char format[16];           /* format the type implies: dia/brcsd1/brcsd2   */
} adia_features;

adia_status adia_matrix_analyze(const adia_matrix *A, const adia_search_params *p,
                                adia_features *f);

/* ======================================================= formats (src/formats) */

/* Parameters of every format; a value <= 0 means "the format's default".
 * Parsed from "key=value,key=value" by adia_format_params_parse.  Bounded
 * by the matrix at build: a value above max(its extent, 1024) -- rows for
 * B eta hack seg C sigma r group strip streams, columns for width c pad,
 * the longer side for qt -- is refused with ADIA_ERR_INVALID_ARG naming
 * the parameter, the value and the bound. */
typedef struct adia_format_params {
    int32_t block_rows;      /* B: row block / threads per block (BRCSD, DIA)  */
    int32_t eta;             /* BRCSD-I: minimum distance of piece points      */
    int32_t hack;            /* HDI: rows per hack                             */
    int32_t segment;         /* CRSD: rows per segment (2, 4, 8)               */
    int32_t ell_width;       /* ELL: fixed width (<=0: longest row)            */
    int32_t sell_c;          /* SELL-C-sigma: slice height C                   */
    int32_t sell_sigma;      /* SELL-C-sigma: sorting window sigma             */
    int32_t bcsr_r, bcsr_c;  /* BCSR block size r x c                          */
    int32_t row_group;       /* row-grouped CSR: rows per group                */
    int32_t strip;           /* CMRS: strip height                             */
    int32_t qt_size;         /* quad-tree CSR: leaf (density) size             */
    int32_t streams;         /* streamed CSR/BCSR: number of streams           */
    int32_t pad;             /* padded CSR / BCSR-16: row padding multiple     */
    /* GPU kernel tuning (read at upload; 0 = the library's choice):      */
    int32_t gpu_kernel;      /* kernel: an adia_gpu_kernel (by name in text:
                                kernel=generated), the upload's variant    */
    int32_t tpr;             /* tpr: csr vector kernel threads per row,
                                2, 4, 8, 16 or 32 (else from row lengths)   */
    int32_t rows_per_thread; /* R: diagonal warp kernels' rows per thread,
                                1, 2 or 4 (a cap; else chosen by value type) */
    int32_t interleave;      /* interleave: diagonal kernels' chunk order for
                                far diagonals: 1 off (rows in order), 2 forced
                                (L2 taken as 4 KB: tests); 0 when it pays    */
    int32_t stage;           /* stage: diagonal kernels' values staged in
                                shared memory by bulk copies (Hopper): 1 off,
                                2 forced (tests); 0 when it pays            */
} adia_format_params;

/* Fill p with "use the default" everywhere. */
void adia_format_params_default(adia_format_params *p);
/* Parse "B=256,eta=256,C=32,sigma=256,r=2,c=2,..." into p (keys: B eta hack
 * seg width C sigma r c group strip qt streams pad kernel tpr R interleave
 * stage; kernel takes a name of adia_gpu_kernel_name, interleave and stage
 * also off / force).
 * A tuning value out of its set is ADIA_ERR_INVALID_ARG (also at build). */
adia_status adia_format_params_parse(adia_format_params *p, const char *text);
/* The checks every build makes first, for a rows x cols matrix, before
 * any work: a tuning value out of its set, or a given size above its
 * matrix cap (max(2 x the extent it divides, 1024)), is
 * ADIA_ERR_INVALID_ARG naming the parameter, its value and the bound.
 * adia_plan_create checks its hints' parameters so too. */
adia_status adia_format_params_check(const adia_format_params *p, int32_t rows, int32_t cols);

/* A matrix stored in one format, in one precision, maybe also on a GPU. */
typedef struct adia_format adia_format;

/* Number of registered formats and their stable command-line names
 * ("csr", "coo", ..., "dia", "hdi", "brcsd1", "brcsd2", "crsd"). */
int adia_format_count(void);
const char *adia_format_name_at(int i);
/* Is this name registered? */
int adia_format_exists(const char *name);
/* Type questions, answered by the format's operations table (0 for a name
 * that is not registered):
 *  - is_diagonal: stored in the diagonal core (row pieces over offset
 *    groups: dia, hdi, brcsd1, brcsd2, crsd) -- what adia_codegen_source
 *    and the spy overlay accept;
 *  - has_gpu: has a GPU kernel in this build (0 everywhere without CUDA);
 *  - gpu_kernels: bit (1u << k) for each adia_gpu_kernel k that
 *    adia_format_set_kernel accepts (0: one kernel, no choice). */
int adia_format_is_diagonal(const char *name);
int adia_format_has_gpu(const char *name);
unsigned adia_format_gpu_kernels(const char *name);

adia_status adia_format_build(const adia_matrix *A, const char *name,
                              const adia_format_params *p, adia_value_type vt,
                              adia_format **out);
void adia_format_destroy(adia_format *F);        /* NULL is fine; frees GPU copy too */
const char *adia_format_name(const adia_format *F);
adia_value_type adia_format_value_type(const adia_format *F);
int32_t adia_format_rows(const adia_format *F);
int32_t adia_format_cols(const adia_format *F);
int64_t adia_format_nnz(const adia_format *F);      /* nonzeros of its matrix */
/* Back to the master form; exact (values converted back from float if the
 * format is single precision). */
adia_status adia_format_to_matrix(const adia_format *F, adia_matrix **out);
/* Stored explicit zeros beyond the matrix's nonzeros (padding). */
int64_t adia_format_padded_zeros(const adia_format *F);
/* Bytes one SpMV moves through memory: every stored array read once, x read
 * once, y read (if beta != 0) and written once. */
int64_t adia_format_bytes(const adia_format *F);
/* Bytes the format's arrays occupy. */
int64_t adia_format_storage_bytes(const adia_format *F);
/* CPU SpMV with OpenMP: y = alpha*A*x + beta*y; x, y of the format's value
 * type (double* or float*). */
adia_status adia_format_spmv(const adia_format *F, double alpha, const void *x,
                             double beta, void *y);

/* ==================================================== pictures (src/picture) */

/* Options of the sparsity picture; zero-filled (or NULL) means defaults. */
typedef struct adia_spy_options {
    int size;                        /* longest image side in pixels, 8..8192
                                        (<= 0: 800)                           */
    const char *overlay;             /* NULL, or a diagonal format name ("dia",
                                        "hdi", "brcsd1", "brcsd2", "crsd"):
                                        draw its row pieces and offset groups */
    const adia_format_params *params;/* parameters of the overlay format      */
    const char *caption;             /* NULL: name, rows x cols, nnz, type    */
    void (*progress)(double fraction, void *user); /* NULL, or called while
                                        binning with fraction in [0, 1]       */
    void *progress_user;
} adia_spy_options;

/* Write the sparsity picture of A as an RGB PNG: nonzeros binned into a
 * pixel grid (at most size^2 32-bit counters, whatever nnz), log-scaled
 * light-to-dark blue, a frame, a caption line and a legend with the counts;
 * a matrix smaller than the picture gets an integer square of pixels per
 * entry.  With an overlay, piece boundaries are horizontal lines (red where
 * the offset group changes, orange for other piece boundaries) and a band
 * left of the plot changes colour with the offset group.  An unwritable path
 * is ADIA_ERR_IO naming it (checked before any work). */
adia_status adia_matrix_spy_png(const adia_matrix *A, const char *path,
                                const adia_spy_options *opt);

/* ================================================== GPU (src/cuda) */

/* Number of usable CUDA devices; 0 (and ADIA_OK) when built without CUDA or
 * when no device/driver is present. */
adia_status adia_gpu_device_count(int *count);
/* Start CUDA in this process now: the driver and the current device's
 * context (0.2-0.4 s on an H200 host, measured 2026-11-27), which the
 * first GPU call would otherwise pay.  Call it on a thread of your own
 * while the matrix is read or assembled, so that the two overlap.
 * ADIA_OK, doing nothing, when built without CUDA or without a device. */
adia_status adia_gpu_init(void);
/* Copy the format to the current device (once; repeated calls are no-ops).
 * Before any device allocation, its device bytes (storage, the per-row
 * arrays an upload adds, the x and y of a product) are compared with the
 * device's free memory (cudaMemGetInfo): ADIA_ERR_NO_MEMORY with both
 * figures when they do not fit (the planner then tries its next format). */
adia_status adia_format_upload(adia_format *F);
/* y = alpha*A*x + beta*y on the device; d_x, d_y device pointers of the
 * format's value type; stream is a cudaStream_t (NULL: default stream).
 * Uploads first if needed. */
adia_status adia_format_spmv_gpu(adia_format *F, double alpha, const void *d_x,
                                 double beta, void *d_y, void *stream);
/* BRCSD-II built ON THE GPU from a CSR matrix already in device memory
 * (rows + 1 int64 row pointers, int32 columns ascending in each row, double
 * values; the matrix stays untouched): for solvers that assemble on the
 * device.  The analysis (which diagonals each piece keeps) and the
 * conversion run on the GPU; the format comes back uploaded -- its device
 * data is the conversion's output, not copied again -- and every format
 * operation works: the data is copied to the host on its first host use
 * (to a matrix, a CPU product), not before.
 * p->block_rows (key B): rows per piece, default 256.  Bad columns give
 * ADIA_ERR_INVALID_MATRIX naming the row; no device: ADIA_ERR_NO_DEVICE. */
adia_status adia_format_build_brcsd2_device(int32_t rows, int32_t cols, int64_t nnz,
                                            const int64_t *d_rowptr, const int32_t *d_colind,
                                            const double *d_values,
                                            const adia_format_params *p, adia_value_type vt,
                                            adia_format **out);

/* GPU kernel variants.  AUTO: the upload picks (csr: from row statistics;
 * diagonal formats: the generic kernel -- generating one costs an NVRTC
 * compile, so it is chosen explicitly).  The format parameter kernel=
 * (adia_format_params.gpu_kernel) overrides AUTO at upload (benchmarks);
 * tpr= forces the threads per row of the csr vector kernel. */
typedef enum adia_gpu_kernel {
    ADIA_KERNEL_AUTO = 0,
    ADIA_KERNEL_GENERIC = 1,       /* diagonal: offsets read from memory       */
    ADIA_KERNEL_GENERATED = 2,     /* diagonal: per-matrix NVRTC kernel        */
    ADIA_KERNEL_CSR_SCALAR = 3,    /* csr: one thread per row                  */
    ADIA_KERNEL_CSR_VECTOR = 4,    /* csr: 2..32 threads per row (default 16)  */
    ADIA_KERNEL_CSR_ADAPTIVE = 5,  /* csr: row blocks (CSR-Adaptive)           */
    ADIA_KERNEL_CSR_CUSPARSE = 6,  /* csr: cusparseSpMV (CSR ALG2, deterministic;
                                      a 32-bit copy of the row pointers, made
                                      when chosen; under 2^31 nonzeros)       */
    ADIA_KERNEL_CSR_CUSPARSE_ALG1 = 7 /* csr: cusparseSpMV CSR ALG1, faster on
                                      irregular rows but NOT deterministic: its
                                      sums end in atomic additions whose order
                                      changes from run to run, so y may differ
                                      in its last bits between two runs of the
                                      same product.  Never chosen by the
                                      upload's AUTO nor by a planner without
                                      adia_plan_hints.nondeterministic = 1;
                                      as cusparse otherwise                   */
} adia_gpu_kernel;
/* "auto", "generic", "generated", "scalar", "vector", "adaptive", "cusparse",
 * "cusparse-alg1". */
const char *adia_gpu_kernel_name(adia_gpu_kernel k);
/* Parse one of those names; ADIA_ERR_INVALID_ARG otherwise. */
adia_status adia_gpu_kernel_parse(const char *name, adia_gpu_kernel *k);
/* 1 when kernel k gives the same bits on every run of the same product
 * (every kernel but ADIA_KERNEL_CSR_CUSPARSE_ALG1), 0 otherwise. */
int adia_gpu_kernel_is_deterministic(adia_gpu_kernel k);
/* Upload F if needed and switch its GPU kernel to k (AUTO: the upload's
 * choice).  GENERATED compiles (or fetches from the cache) the per-matrix
 * kernel; on failure the format keeps its kernel and ADIA_ERR_NVRTC is
 * returned with the compiler log available from adia_codegen_log().
 * A variant the format lacks: ADIA_ERR_UNSUPPORTED. */
adia_status adia_format_set_kernel(adia_format *F, adia_gpu_kernel k);
/* The kernel F's GPU SpMV uses now (AUTO before upload). */
adia_gpu_kernel adia_format_kernel(const adia_format *F);
/* Upload F if needed and set the threads per block of its row kernels
 * (multiple of 32 in 32..1024; default 256). */
adia_status adia_format_set_threads(adia_format *F, int threads);

/* ------------------------------------------- code generator (src/cuda) */

/* CUDA source of the kernel generated for a diagonal-family format (dia,
 * hdi, brcsd1, brcsd2, crsd): each offset group's offsets as literal
 * constants, the diagonal loop unrolled (paper Fig. 11).  *source is
 * malloc'd (free()).  Needs no device and works in CPU-only builds.
 * ADIA_ERR_UNSUPPORTED for non-diagonal formats or more groups/offsets than
 * the generator accepts (then the generic kernel is used). */
adia_status adia_codegen_source(const adia_format *F, char **source);
/* NVRTC log of the last compile on this thread ("" if none). */
const char *adia_codegen_log(void);

/* ------------------------------------------ device information (src/cuda) */

typedef struct adia_gpu_info {
    char name[256];
    int cc_major, cc_minor;
    int driver_version, runtime_version;  /* e.g. 13000 */
    int sm_count;
    int64_t l2_bytes, global_bytes;
} adia_gpu_info;
adia_status adia_gpu_get_info(adia_gpu_info *info);

/* Streaming-read bandwidth of the current device in GB/s (1e9 bytes/s):
 * a read-only reduction over `bytes` bytes (0: 2 GiB, reduced to fit in a
 * quarter of the free memory), median of runs. */
adia_status adia_gpu_read_bandwidth(size_t bytes, int runs, double *gbps);

/* ================================ diagonal matrix products (src/spmm) */

/* C = op(A) * op(B) (or C += op(A) * op(B)) with A, B held as diagonals
 * (seed 004).  Output diagonals are the sums oa + ob of the input offsets
 * inside the output's extent, known before any numeric work; each output
 * diagonal is the sum, over the pairs (oa, ob) with oa + ob = oc in
 * ascending oa, of elementwise products of shifted input diagonals.  No hash
 * tables, no floating-point atomics: results are bitwise reproducible for
 * any thread count (and the GPU sums in the same order without FMA).
 * op = ADIA_OP_T reads diagonal o of X as diagonal -o of X^T: no transpose
 * is formed.  C holds every entry of its diagonals inside the matrix (exact
 * zeros included), so its nnz is known in advance; padded zeros of the
 * inputs multiply as zeros (an Inf/NaN input value next to a padded zero
 * turns that product into NaN, as in any diagonal method). */
typedef enum adia_op { ADIA_OP_N = 0, ADIA_OP_T = 1 } adia_op;
typedef enum adia_device { ADIA_DEVICE_CPU = 0, ADIA_DEVICE_GPU = 1 } adia_device;
typedef enum adia_spgemm_algo {
    ADIA_SPGEMM_AUTO = 0,  /* CPU: CDM for square matrices whose pairs of
                            diagonals overlap on nearly all rows (narrow
                            bands: pairs * n <= 1.25 * multiplications),
                            else HM; GPU: HM                               */
    ADIA_SPGEMM_HM = 1,    /* HM diagonals, any compatible shapes            */
    ADIA_SPGEMM_CDM = 2    /* compact diagonals, square matrices, CPU only   */
} adia_spgemm_algo;

/* What a product will be and cost; filled before any numeric work. */
typedef struct adia_spgemm_info {
    int32_t rows, cols;      /* of C                                         */
    int64_t n_diag;          /* output diagonals                            */
    int64_t nnz;             /* entries C holds (in-matrix diagonal lengths) */
    int64_t nnz_bound;       /* upper bound of C's true nonzeros: sum over k
                                of the entries in column k of op(A) times
                                those in row k of op(B) (+ an accumulated
                                C's entries); nnz far above it means the
                                diagonals of C are mostly zeros            */
    int64_t n_pairs;         /* pairs (oa, ob) with oa + ob on C             */
    int64_t flops;           /* 2 * multiplications                         */
    int64_t peak_bytes;      /* host memory the product needs at most       */
    int64_t device_bytes;    /* device memory of the GPU path               */
    adia_spgemm_algo algorithm;/* what was (would be) run                     */
    double time_ms;          /* adia_spgemm only: numeric phase (GPU: kernel,
                                CUDA events), structure and copies excluded */
    double device_ms;        /* adia_spgemm on the GPU only: what a caller whose
                                operands already live on the device pays, as
                                cusparseSpGEMM is timed (device CSR in, device
                                C out): host structure phase (output diagonals,
                                pairs, kernel tiles) + upload of those small
                                arrays + allocation of C + kernel, host wall
                                clock around a synchronised region          */
    double device_setup_ms;  /* part of device_ms: the host structure phase,
                                the kernel's structure, its upload and the
                                launch set-up                                */
    double device_alloc_ms;  /* part of device_ms: allocation of C (and of
                                the kernel's structure, in the same block)   */
    double transfer_ms;      /* adia_spgemm on the GPU only: upload of A and B
                                (and of C when accumulating), download of C  */
    int32_t gpu_tile_rows;   /* GPU: rows of a tile of the shared-memory tiled
                                kernel; 0 = the streaming kernel ran         */
} adia_spgemm_info;

typedef struct adia_spgemm_options {
    adia_device device;      /* default CPU                                  */
    adia_spgemm_algo algorithm;/* default AUTO                                 */
    int accumulate;          /* C += op(A) op(B) into the existing *C (its
                                diagonals are kept and joined)               */
    int threads;             /* CPU threads; <= 0 OpenMP default, 1 serial;
                                more than 4 x the processors: ADIA_ERR_INVALID_ARG */
    int64_t max_bytes;       /* refuse with ADIA_ERR_NO_MEMORY when the peak
                                estimate exceeds the process memory budget
                                (adia_memory_budget) or, if > 0 and smaller,
                                this                                         */
    double max_fill;         /* refuse with ADIA_ERR_UNSUPPORTED, before any
                                numeric work, when C's diagonal storage (nnz)
                                exceeds max_fill x nnz_bound + max(rows, cols)
                                of C: a product that is not diagonal would be
                                densified (e.g. two random matrices: 9 million
                                entries stored for 61 thousand nonzeros).
                                <= 0 or NaN: 4 (C's diagonals are then at least
                                25% nonzeros, or short); INFINITY: no limit  */
    adia_spgemm_info *info;    /* optional: filled by adia_spgemm                */
    int gpu_kernel;          /* GPU: 0 the automatic choice, 1 the shared-
                                memory tiled kernel (ADIA_ERR_UNSUPPORTED when
                                its tile does not fit), 2 the streaming one  */
} adia_spgemm_options;

void adia_spgemm_options_default(adia_spgemm_options *opt);
/* Shape check (ADIA_ERR_DIMENSION naming both shapes), output diagonals,
 * nnz and memory of op(A) * op(B), without numeric work.  offsets (may be
 * NULL) receives the n_diag output offsets ascending, malloc'd: free().
 * opt may be NULL (defaults); accumulate is ignored here. */
adia_status adia_spgemm_structure(adia_op opA, const adia_matrix *A, adia_op opB,
                                  const adia_matrix *B, const adia_spgemm_options *opt,
                                  adia_spgemm_info *info, int32_t **offsets);
/* C = op(A) * op(B): *C receives a new matrix; with opt->accumulate, *C must
 * be an existing matrix of the product's shape and is updated in place.
 * Fails before any numeric work, and before the list of pairs is built,
 * with ADIA_ERR_UNSUPPORTED when C's diagonals would be mostly zeros
 * (opt->max_fill; the message gives nnz, the bound and the density),
 * ADIA_ERR_NO_MEMORY when the peak estimate exceeds the memory budget
 * (max_bytes; "needs X, budget Y"), ADIA_ERR_NO_DEVICE for the GPU without
 * a device. */
adia_status adia_spgemm(adia_op opA, const adia_matrix *A, adia_op opB,
                        const adia_matrix *B, adia_matrix **C,
                        const adia_spgemm_options *opt);

/* ===================================================== planner (src/plan) */

/* Inspector-executor SpMV (as oneMKL's and cuSPARSE's): adia_plan_create
 * analyses A once (adia_matrix_analyze), chooses a format, builds it and
 * uploads it to the GPU; adia_spmv then runs y = alpha*A*x + beta*y as often
 * as needed with no allocation.  The plan holds its own copy of A's data in
 * the chosen format: A may be destroyed after adia_plan_create. */
typedef struct adia_plan adia_plan;

typedef enum adia_chooser {
    ADIA_CHOOSE_MODEL = 0,  /* least predicted time: bytes moved / bandwidth
                               (GPU: or the latency of the entries a thread
                               walks, whichever is larger) + launch overhead
                               + conversion time / calls                     */
    ADIA_CHOOSE_RULES,      /* the paper's search engine (features.format)   */
    ADIA_CHOOSE_MEASURE,    /* build the model's best 4 and CSR, time each on
                               the device (GPU: with each of its kernels --
                               those that are not bitwise reproducible only
                               with hints nondeterministic = 1),
                               keep the fastest (spmv + conversion / calls);
                               worth it from ADIA_PLAN_MEASURE_CALLS         */
    ADIA_CHOOSE_FIXED       /* hints->format, no choice                      */
} adia_chooser;
const char *adia_chooser_name(adia_chooser c);   /* "model", "rules", ... */

/* Expected calls from which measuring pays (`adia spmv` measures then). */
#define ADIA_PLAN_MEASURE_CALLS 1000

/* Hints; zero-filled (or NULL) means: 1 call, double, CPU, the process memory
 * budget, the model chooser, default format parameters, bandwidth measured. */
typedef struct adia_plan_hints {
    int64_t expected_calls;            /* <= 0: unknown, counted as 1       */
    adia_value_type vtype;             /* of the plan's x and y             */
    int device;                        /* 0 CPU, 1 GPU, -1 GPU if one exists */
    int64_t memory_budget;             /* bytes of format storage: narrows the
                                          process budget (adia_memory_budget),
                                          never widens it; <= 0: that budget */
    adia_chooser chooser;
    const char *format;                /* ADIA_CHOOSE_FIXED: a format name  */
    const adia_format_params *params;  /* NULL: defaults (used by every
                                          candidate: B, hack, C, sigma ...) */
    double bandwidth_gbs;              /* device memory bandwidth in GB/s for
                                          the model; <= 0: ADIA_CPU_BANDWIDTH,
                                          else measured once per machine and
                                          kept in the cache folder (a CPU
                                          plan; a GPU's: once per process)   */
    int nondeterministic;              /* 0 (default): only kernels whose y is
                                          the same bits on every run of the same
                                          product (every one adia has but csr's
                                          cusparse-alg1).  1: the planner may
                                          also choose a GPU kernel whose y can
                                          differ in its last bits from run to
                                          run -- cuSPARSE CSR ALG1, whose row
                                          sums end in atomic additions in no
                                          fixed order: faster on irregular rows
                                          (1.22x on a power-law matrix, H200).
                                          The model rates it at its own
                                          efficiency, MEASURE times it beside
                                          the format's other kernels; a CPU
                                          plan is the same either way.  Only
                                          for a caller who accepts results that
                                          are not bitwise reproducible (a
                                          solver's iteration count may then
                                          change between runs).  Not kept by
                                          adia_plan_save: a loaded plan is
                                          reproducible.  Other values:
                                          ADIA_ERR_INVALID_ARG                 */
} adia_plan_hints;

/* One candidate of the model: what it predicts for one format without
 * building it (bytes from the features and one O(nnz) pass over A). */
typedef struct adia_plan_candidate {
    char format[16];
    int64_t storage_bytes;   /* predicted bytes of the format's arrays      */
    int64_t bytes;           /* predicted bytes one SpMV moves (arrays + x, y) */
    int exact;               /* 1: the bytes are what adia_format_bytes will
                                say; 0: an estimate (brcsd1, brcsd2 groups) */
    double efficiency;       /* fraction of the bandwidth the kernel reaches */
    double spmv_ms;          /* CPU: bytes / (bandwidth * efficiency) + launch;
                                GPU: base + max(steps * latency, bytes /
                                (bandwidth * efficiency)), steps = entries
                                one thread walks (plan_model.c)             */
    double convert_ms;       /* build (+ upload) time, predicted            */
    double total_ms;         /* convert_ms + expected_calls * spmv_ms        */
} adia_plan_candidate;

/* The model's candidates for A under hints h (device resolved as in
 * adia_plan_create), best (least total_ms) first: up to max written to out,
 * *n = how many were written (out may be NULL with max 0: *n = the count). */
adia_status adia_plan_candidates(const adia_matrix *A, const adia_plan_hints *h,
                                 adia_plan_candidate *out, int max, int *n);

/* Analyse, choose, build, upload.  Device 1 without a usable GPU is
 * ADIA_ERR_NO_DEVICE; device -1 then falls back to the CPU.  A format whose
 * predicted storage exceeds memory_budget, or whose build or upload runs out
 * of memory, is skipped for the next candidate and finally CSR (recorded in
 * adia_plan_explain); when no format fits, ADIA_ERR_NO_MEMORY. */
adia_status adia_plan_create(const adia_matrix *A, const adia_plan_hints *hints,
                             adia_plan **plan);
/* adia_plan_create of the caller's host CSR arrays (as
 * adia_matrix_create_csr takes them), read during the call only: where
 * they are canonical (columns ascending and unique in every row) with
 * double values nothing is copied -- the matrix adia_matrix_create_csr
 * would make first is 1.4 GB at lap3d7:256, 208-252 ms of its solve from
 * SciPy (38-55 ms at 160^3; H200's host, 2026-11-28) --, else they are
 * copied and sorted as
 * adia_matrix_create_csr does.  name: what adia_plan_explain calls the
 * matrix (NULL: nothing).  The plan keeps no reference to the arrays;
 * adia_solve takes it with A NULL. */
adia_status adia_plan_create_csr(int32_t rows, int32_t cols, int64_t nnz, const int64_t *rowptr,
                                 const int32_t *colind, const void *values, adia_value_type vt,
                                 const char *name, const adia_plan_hints *hints,
                                 adia_plan **plan);
/* A CSR matrix in device memory, as CuPy, cuSPARSE and most GPU codes hold
 * it: rows + 1 row pointers of 32 or 64 bits (rowptr[0] = 0), int32
 * columns ascending within each row, values in double or float. */
typedef struct adia_device_csr {
    int32_t rows, cols;
    int64_t nnz;
    const void *rowptr;
    int rowptr_bits;                   /* 32 or 64                          */
    const int32_t *colind;
    const void *values;
    adia_value_type values_type;       /* ADIA_DOUBLE or ADIA_FLOAT          */
} adia_device_csr;

/* A GPU plan straight from a CSR matrix in device memory: the analysis and
 * the conversion run on the GPU and the matrix never goes through the host
 * on the way in (the format's data is copied to the host only when a host
 * operation needs it -- save, back to a matrix -- so every plan operation
 * works; Jacobi's diagonal is read on the device, n values come back).  The
 * planner chooses among the formats the GPU builds (dia, hdi, brcsd2) by
 * the bytes one product moves; a matrix whose diagonal storage would hold
 * more than 3 slots per nonzero is not a diagonal matrix: it is copied to
 * the host and planned by adia_plan_create (adia_plan_explain says so).
 * hints->device is not read (the plan is on the GPU); hints->format (FIXED)
 * may name dia, hdi or brcsd2.  A is left untouched; bad columns are
 * ADIA_ERR_INVALID_MATRIX naming the row; no device: ADIA_ERR_NO_DEVICE. */
adia_status adia_plan_create_device_csr(const adia_device_csr *A, const adia_plan_hints *hints,
                                        adia_plan **plan);
/* A matrix by its diagonals in device memory, as DIA stores it. */
typedef struct adia_device_dia {
    int32_t rows, cols;
    int32_t ndiag;
    const int64_t *offsets;            /* host: ndiag, ascending, o = column
                                          - row, -rows < o < cols         */
    void *values;                      /* device: ndiag x rows; diagonal k
                                          of row i at values[k rows + i];
                                          slots whose column is outside
                                          [0, cols) are ignored (stored 0) */
    adia_value_type values_type;       /* ADIA_DOUBLE or ADIA_FLOAT          */
    int adopt;                         /* 1: the plan takes values over (a
                                          cudaMalloc'd array of the plan's
                                          value type, freed with the plan,
                                          or by this call when it fails):
                                          no copy, for a matrix that fills
                                          most of the GPU; 0: copied       */
} adia_device_dia;
/* A GPU plan in format dia straight from A (no analysis: the diagonals
 * are given; adia_stencil_fill_device makes them).  The nonzeros are
 * counted on the device.  hints as adia_plan_create_device_csr (format:
 * dia or unset); many expected calls choose the generated kernel.  Bad
 * offsets are ADIA_ERR_INVALID_ARG naming the first; no device:
 * ADIA_ERR_NO_DEVICE. */
adia_status adia_plan_create_device_dia(const adia_device_dia *A, const adia_plan_hints *hints,
                                        adia_plan **plan);
/* The diagonals of a GPU plan whose format keeps them on the device as dia
 * does (dia: one piece, no scatter points), lent as *A: values the plan's
 * own device array (valid while the plan lives; not to be written or
 * freed), adopt 0, offsets written into the caller's offsets[max_diag].
 * What reads a plan's entries on the device starts here, e.g. a block of
 * it: adia_plan_create_device_dia copies them (slots outside its cols
 * zeroed).  Another format, or a CPU plan: ADIA_ERR_UNSUPPORTED saying
 * why (adia_format_to_matrix reads any plan); more than max_diag
 * diagonals: ADIA_ERR_INVALID_ARG; a CPU-only build: ADIA_ERR_NO_DEVICE. */
adia_status adia_plan_device_dia(const adia_plan *plan, int64_t *offsets, int max_diag,
                                 adia_device_dia *A);
/* y = alpha*A*x + beta*y.  CPU plans: x, y host pointers of the plan's value
 * type; GPU plans: device pointers (default stream, returns when queued --
 * synchronise before reading y).  x overlapping y is ADIA_ERR_INVALID_ARG.
 * No allocation, no analysis: the hot path is the format's kernel. */
adia_status adia_spmv(adia_plan *plan, double alpha, const void *x, double beta,
                      void *y);
/* The same on a cudaStream_t (GPU plans; NULL = default stream).  A CPU plan
 * ignores stream and runs synchronously. */
adia_status adia_spmv_async(adia_plan *plan, double alpha, const void *d_x,
                            double beta, void *d_y, void *stream);
/* The product of a GPU solver's iteration: y = alpha A x on a GPU plan
 * (device pointers of the plan's value type, queued on stream as
 * adia_spmv_async) with five sums over the plan's rows i, in double,
 * ADDED to out[0..ADIA_SPMV_SUMS) (device):
 *   out[0] += xd_i y_i   out[1] += z_i xd_i   out[2] += z_i z_i
 *   out[3] += y_i y_i    out[4] += z_i y_i
 * xd: each row's own entry of x -- NULL for x itself (a square plan); for
 * a plan of rows [r0, r1) of a larger matrix, the caller's x from row r0
 * -- and z a companion vector (NULL: xd).  CG's u'Au, r'u, r'r and
 * BiCGSTAB's r0'v, t's, t't come out of the product that makes Au, v or
 * t.  The diagonal formats take the sums in the product's epilogue (no
 * vector read twice); others in a pass of their own.  Added, not stored,
 * so the parts of a product cut by rows sum in one place: zero out first.
 * Deterministic (fixed order, no atomics on values).  work: device memory
 * of adia_spmv_sums_work_bytes(plan) bytes for this plan alone (its layout
 * follows the plan's rows), zeroed once before its first use (it is left
 * zeroed), not used by two calls in flight at once.
 * Errors: a CPU plan (ADIA_ERR_UNSUPPORTED), NULL pointers, x and y
 * overlapping, rows > cols, or a non-square plan without xd. */
#define ADIA_SPMV_SUMS 5
size_t adia_spmv_sums_work_bytes(const adia_plan *plan);   /* 0: not a GPU plan */
adia_status adia_spmv_sums_async(adia_plan *plan, double alpha, const void *d_x, void *d_y,
                                 const void *d_xd, const void *d_z, double *d_out, void *d_work,
                                 void *stream);
/* What the plan chose and why, as text (type, candidates with predicted
 * times, conversion cost, break-even calls against CSR, warnings);
 * truncated to len - 1 characters.  ADIA_OK even when truncated. */
adia_status adia_plan_explain(const adia_plan *plan, char *buf, size_t len);
/* Save the choice (format, parameters, value type, device, chooser) with a
 * hash of A's structure (not its values: new values, same structure, may
 * reuse the plan).  adia_plan_load builds that format for A without analysis
 * or choosing; a different structure is ADIA_ERR_INVALID_ARG ("made for
 * another matrix"), a malformed file ADIA_ERR_PARSE (parsed strictly: each
 * key once, each value whole -- no trailing text, no number out of range --
 * errors naming file, line and key; a folder is ADIA_ERR_IO), a GPU plan on
 * a machine without a GPU ADIA_ERR_NO_DEVICE.  The file's format is built
 * or the load fails naming the file and the format (out of the memory
 * budget: ADIA_ERR_NO_MEMORY): never another format.  adia_plan_save
 * replaces only a plan file: a path naming an existing file that is not one
 * (the matrix, a vector) is ADIA_ERR_INVALID_ARG and the file stays. */
adia_status adia_plan_save(const adia_plan *plan, const char *path);
adia_status adia_plan_load(const adia_matrix *A, const char *path, adia_plan **plan);
/* Values change, structure stays (time stepping, nonlinear iterations,
 * parameter sweeps): new values of A -- the same rows, columns and pattern
 * (rowptr and column indices, explicit zeros included) as the matrix the
 * plan was made for -- refill the plan's format in place.  The plan keeps
 * its format, parameters, upload and generated kernels (they hold the
 * structure, never a value); a GPU plan made on the device is refilled
 * too.  The pattern is checked before anything is written: a different
 * one is ADIA_ERR_INVALID_ARG naming the first row that differs (and the
 * plan is untouched), another shape ADIA_ERR_DIMENSION.  A value that is
 * zero, or becomes zero, stays an entry of the pattern (adia_format_to_matrix
 * gives it back).  The diagonal formats (dia, hdi, brcsd1, brcsd2, crsd)
 * write the values into their slots, then a GPU plan copies its data array
 * up once; other formats rebuild their storage from A and swap it in.
 * The first update also checks against the plan's structure hash (one
 * serial pass; a plan made on the device computes it once from its
 * format); later ones use a threaded hash.  A preconditioner made from the
 * plan keeps the values it was made with.  adia_plan_update_values_device_csr
 * takes A in device memory (as adia_plan_create_device_csr; CPU or GPU
 * plans): a GPU plan in a diagonal format (CRSD without scatter points),
 * csr, ell or sell, whose pattern an earlier update has checked, is
 * refilled on the device -- A's structure hashed there (one read of rowptr
 * and colind), its values written into the slots (one pass), nothing
 * through the host;
 * other formats, a diagonal format given values with zeros among them (its
 * zero lists are kept on the host) and the first update copy A to the host
 * once and go as above. */
adia_status adia_plan_update_values(adia_plan *plan, const adia_matrix *A);
adia_status adia_plan_update_values_device_csr(adia_plan *plan, const adia_device_csr *A);
/* Frees the plan and its format (host and device).  NULL is fine.  A plan
 * used after destroy is ADIA_ERR_INVALID_HANDLE as long as its memory was not
 * reused by another allocation (the magic word is cleared before free; no
 * guarantee after reuse -- as for every handle). */
void adia_plan_destroy(adia_plan *plan);

/* Accessors; on an invalid handle: "", -1, NaN, NULL. */
const char *adia_plan_format_name(const adia_plan *plan);
int adia_plan_device(const adia_plan *plan);             /* 0 CPU, 1 GPU    */
adia_chooser adia_plan_chooser(const adia_plan *plan);
adia_value_type adia_plan_value_type(const adia_plan *plan);
int32_t adia_plan_rows(const adia_plan *plan);           /* length of y     */
int32_t adia_plan_cols(const adia_plan *plan);           /* length of x     */
double adia_plan_predicted_ms(const adia_plan *plan);    /* model, per SpMV */
double adia_plan_measured_ms(const adia_plan *plan);     /* NaN unless MEASURE */
/* The plan's format (owned by the plan; for adia_format_* queries). */
adia_format *adia_plan_format(const adia_plan *plan);

/* ==================================== iterative solvers (src/solve) */

/* Krylov solvers on top of a plan: every product with A is adia_spmv on
 * the planner's format, so a solver's many SpMVs run in the format the
 * planner picked for that many calls.  CPU plans in double; GPU plans in
 * double or float: there every vector stays on the device, the scalars
 * too (the stopping test runs on the device; the host looks once per chunk
 * of iterations, replayed as a CUDA graph), and sums are in double. */
typedef enum adia_solver {
    ADIA_SOLVE_CG = 0,        /* conjugate gradients: A symmetric positive definite */
    ADIA_SOLVE_BICGSTAB = 1,  /* BiCGSTAB: any nonsingular A                        */
    ADIA_SOLVE_GMRES = 2      /* restarted GMRES(m): any nonsingular A; the residual
                                 norm falls monotonically within a cycle          */
} adia_solver;
const char *adia_solver_name(adia_solver m);   /* "cg", "bicgstab", "gmres" */

typedef struct adia_solve_options {
    adia_solver method;       /* default CG                                     */
    int max_iter;             /* <= 0: 1000                                     */
    double rtol;              /* stop at ||b - A x|| <= rtol ||b||; <= 0: 1e-8   */
    int jacobi;               /* 1: diagonal (Jacobi) preconditioner            */
    int device;               /* plan NULL: 0 CPU (default), 1 GPU, -1 GPU if
                                 one is usable                                  */
    int restart;              /* GMRES: basis vectors per cycle, <= 0: 30       */
    struct adia_precond *precond; /* z = M r at every iteration; NULL: jacobi
                                 decides.  Not owned.  A plan solve: made on its
                                 plan (adia_precond_create).  An operator solve
                                 (adia_solve_operator[_device]): made on a
                                 square plan of the op->n rows held here, on
                                 the solve's device (CPU plan: CPU solve) -- on
                                 several processes each M is its own block's
                                 (block Jacobi: CG needs each one SPD)         */
} adia_solve_options;

typedef struct adia_solve_info {
    int iterations;
    int converged;            /* 1: the true residual met rtol (finite), x finite */
    double residual;          /* ||b - A x|| / ||b|| of the returned x, computed
                                 afresh (not the recurrence); 0 when b = 0;
                                 NaN/Inf when A or the iteration overflowed     */
    double time_ms;           /* the iterations alone, SpMVs included: from the
                                 method's first kernel (r0 = b - A x0) to its
                                 stop, restarts and the true-residual check
                                 of each stop included; 0 when b = 0        */
    double setup_ms;          /* the rest of the call's wall clock, so that
                                 setup_ms + time_ms is the call's total:
                                 before the first iteration the checks, a
                                 plan made for the call (plan NULL), the
                                 scaling, Jacobi's diagonal, workspace
                                 allocation, uploads, NVRTC compiles and the
                                 GPU's graph capture and instantiation; after
                                 the stop the download of x and its checks.
                                 A GPU solve that runs without a graph (an
                                 operator's device_graph 0) compiles a
                                 generated kernel in its first iteration:
                                 there it counts in time_ms.  >= 0        */
    double spmv_ms;           /* of which in SpMV (CPU; NaN on the GPU, where
                                 the iteration runs as one graph)               */
    int spmvs;                /* products with A                                */
    double bytes_per_iter;    /* GPU: bytes one iteration moves (the format's
                                 SpMV bytes and the vector passes); 0 on the CPU */
    double floor_bytes_per_iter; /* GPU: the least any implementation of the
                                 method moves (matrix once per product, dot
                                 products fused): time / bytes at the read
                                 bandwidth is the floor; 0 on the CPU           */
    char format[16];          /* the plan's format                              */
    char stop[128];           /* why it stopped: "converged", "iteration limit reached",
                                 "breakdown: ..." (e.g. p'Ap <= 0: A is not SPD,
                                 a dot product overflowed), "non-finite residual
                                 at iteration k" (NaN/Inf in A), "the recurrence
                                 converged, the true residual did not ..."      */
    char fallback[192];       /* "" or why the solve ran again: opt->precond was
                                 made by kind "auto" and became mg, and its
                                 solve stopped short (a matrix that is not SPD,
                                 a grid mg does not suit) -- then adia_solve
                                 and adia_plan_solve solve again from x0 with
                                 Jacobi (opt->jacobi), and the other fields
                                 are that solve's: the default must not fail
                                 where Jacobi converges                        */
} adia_solve_info;

void adia_solve_options_default(adia_solve_options *opt);
/* The products with A that a solve is likely to make: the expected_calls
 * of its plan, made before the preconditioner (which needs the plan).
 * max_iter iterations (BiCGSTAB: two products each) + 2; but with mg --
 * precond "mg", or "auto" where A's offsets suggest a grid of 128 points
 * an edge or more (auto's rule; the grid itself is checked only when the
 * preconditioner is made) -- the 25 iterations mg takes at most on the
 * grids it suits, each with its cycle's products on A's plan.  A plan for
 * max_iter calls measures its candidate formats, which a 6-iteration solve
 * never repays: CPU (2 cores, 2026-11-28) lap3d7:128's plan 1040 ms for
 * 1002 calls against 124 ms for 102, lap2d5:1024's 337 against 44, the
 * solves alike.  precond: NULL or a kind (adia_precond_options.kind, or
 * "auto"). */
adia_status adia_solve_expected_calls(const adia_matrix *A, adia_solver method, int max_iter,
                                      const char *precond, int64_t *calls);
/* Solve A x = b; x holds the initial guess on entry (zeros are fine) and
 * the last iterate on return.  plan: a plan of A (CPU: double; GPU: b and
 * x are moved to the device once and x back at the end), or NULL (one is
 * made on opt->device with max_iter expected calls -- the planner measures
 * candidates when that is many -- and destroyed).  A may be NULL when plan
 * is given: the plan's matrix is then A (a GPU plan's scale and Jacobi
 * diagonal read on the device, nothing of A on the host: the caller need
 * not keep a copy of the matrix it planned; a CPU plan's matrix made from
 * its format for the call).  Not converging (max_iter
 * reached, a breakdown, a non-finite residual) is not an error: ADIA_OK with
 * info->converged 0 and the reason in info->stop.  Scale-safe: the methods
 * (CPU and GPU) run on A and b scaled by powers of two, and norms are
 * scaled (as dnrm2), so A and b times 1e200 or 1e-170 give the same x, and
 * a b whose norm exceeds the range of double (16 x 1e308) or whose entries
 * are subnormal is solved as well.  converged is judged on the x returned:
 * an x out of the range of double is "non-finite solution", one whose
 * entries fall below its normal range and lose bits is converged only if
 * its own residual meets rtol (else the stop says "x underflows").
 * Errors: NULL arguments, a non-square A, a plan of another shape, a CPU
 * plan in float, Jacobi with a zero diagonal entry
 * (the message names the row), opt->precond made on another plan (or the
 * call given no plan) or beside opt->jacobi (ADIA_ERR_INVALID_ARG; CG
 * with a kind that varies: ADIA_ERR_UNSUPPORTED), NaN/Inf in b or x, an
 * rtol so small that rtol ||b|| rounds to 0, an x0 whose scaled copy overflows (x0 |A| / ||b||
 * beyond the range of double).  opt NULL: defaults; info may be NULL. */
adia_status adia_solve(const adia_matrix *A, adia_plan *plan, const double *b, double *x,
                       const adia_solve_options *opt, adia_solve_info *info);
/* Solve with a plan alone (no host matrix), for callers whose vectors live
 * where the plan does.  GPU plan: b and x are device arrays of the plan's
 * value type (x: initial guess in, solution out), the work is ordered
 * after what is queued on stream (a cudaStream_t; NULL: the default
 * stream) and the call returns when x is ready; nothing crosses to the
 * host but a few scalars.  The Jacobi diagonal is read from the plan's
 * format, max |A| on the device (the diagonal formats; others from the
 * plan's matrix, once).  Scale-safe as adia_solve, by the same rule: the
 * methods run on A and b scaled by powers of two (b where it is read, x
 * in place and back), so b = 16 x 1e308 or 16 x 1e-320 is solved, and x
 * out of range or with entries that lost bits is judged as there.  CPU
 * plan: b and x are host doubles, as adia_solve on the plan's matrix.
 * A GPU solve on a plan (here, or adia_solve given the plan) leaves its
 * device workspace -- 4 to 10 vectors of the plan's rows (GMRES: m + 4 to
 * 2m + 5) -- with the plan for the plan's next solve, which then allocates
 * nothing; adia_plan_destroy frees it.  Errors and info as adia_solve. */
adia_status adia_plan_solve(adia_plan *plan, const void *b, void *x,
                            const adia_solve_options *opt, adia_solve_info *info, void *stream);

/* ==================================== preconditioners (src/precond) */

/* M ~ A^-1, built once from a plan of A and applied by the solvers at
 * every iteration as a stage of its own: z = M r.  Kinds are modules
 * behind one table (src/precond/registry.c):
 *   "none"    z = r
 *   "jacobi"  z = D^-1 r, D the diagonal of A (the solvers fuse it into
 *             their vector passes)
 *   "cheb"    a Chebyshev polynomial in D^-1 A (any SPD matrix: the
 *             interval from power steps and Gershgorin's discs)
 *   "mg"      geometric multigrid on the grid found from A's offsets (or
 *             given in grid), a symmetric V or W cycle: SPD for CG; or an
 *             F cycle (on each coarse level an F-cycle, then a V-cycle from
 *             its answer: not symmetric, so CG refuses it)
 *   "agg"     multigrid by smoothed aggregation of consecutive rows
 *             (P = (I - 4/3 D^-1 A / lmax) P0 over pairs of rows, A_c =
 *             P' A P, banded again) for SPD A that no grid suits: high-
 *             order 1D operators (biharm1d), beams; a symmetric V-cycle,
 *             SPD for CG; CPU plans (a GPU plan: ADIA_ERR_UNSUPPORTED);
 *             takes degree (its Chebyshev smoother's) and max_levels
 *   "auto"    what suits A: mg where A lies on a grid whose longest edge
 *             has 128 points or more (smaller ones: Jacobi's iterations cost
 *             less than mg's set-up) and, on a GPU plan, the device reads
 *             its storage (a diagonal format) -- on a CPU plan a grid 2
 *             points wide (a strip: a band of reach 2 such as biharm1d)
 *             goes to agg instead --, else jacobi where its diagonal has no
 *             zero, else none; adia_precond_kind names the kind made,
 *             adia_precond_explain why the others were not
 * The preconditioner lives where its plan does (CPU or GPU, the plan's
 * value type) and keeps a pointer to it: destroy it before the plan. */
typedef struct adia_precond adia_precond;

typedef struct adia_precond_options {
    const char *kind;         /* NULL: "jacobi"                                 */
    int grid[3];              /* mg: points per dimension, x fastest (row i =
                                 x + nx (y + ny z)); all 0: found from A's
                                 offsets; unused dimensions 1               */
    char cycle;               /* mg: 'v' (0: 'v'), 'w' or 'f' (not for CG)     */
    const char *smoother;     /* mg: "jacobi", "l1jacobi" or "cheb" (NULL: the
                                 kind's default)                               */
    int sweeps;               /* mg: smoothing steps before and after (<= 0: 1
                                 with the Chebyshev smoother, else 2)          */
    int degree;               /* Chebyshev steps (<= 0: cheb 4, mg's smoother 2) */
    int max_levels;           /* mg: <= 0: until the coarse grid is small      */
    int float_levels;         /* mg on a GPU plan in double: which levels are
                                 stored in float (ADIA_FLOAT_LEVELS_*, below);
                                 the solver stays in double (its residuals, x
                                 and stopping test) */
    /* mg across processes (NULL: one process): the plan holds this
     * process's slab of the grid (see adia_slab_comm), grid its size. */
    const struct adia_slab_comm *slab;
} adia_precond_options;

/* adia_precond_options.float_levels.  A level in float moves half the
 * bytes a cycle; its Galerkin product and estimate are still computed in
 * double.  ALL and COARSE are one process's GPU plan's (a CPU plan or a
 * slab refuses them; a float plan's levels are float anyway). */
enum {
    ADIA_FLOAT_LEVELS_DEFAULT = 0,  /* COARSE on one process's GPU plan in
                                       double, else NONE                       */
    ADIA_FLOAT_LEVELS_ALL = 1,      /* every level, the finest a float copy of
                                       the plan's matrix, r and z converted     */
    ADIA_FLOAT_LEVELS_COARSE = 2,   /* the coarse levels; the finest is the
                                       plan itself, in double                 */
    ADIA_FLOAT_LEVELS_NONE = 3      /* every level in the plan's type          */
};

/* Multigrid across processes (adia_mpi's, or any caller's): the grid of
 * the whole matrix, nx x ny x nz points (x fastest), is split by planes
 * (z) among the processes.  Each owns planes [z0, z1) and its plan holds
 * the rows of planes [zs, ze): its own and up to `ghosts` (at least 2) of
 * its neighbours' below and above ("ghost" planes, ze = min(nz, z1 +
 * ghosts), zs = max(0, z0 - ghosts)), columns renumbered from plane zs and
 * those outside dropped; adia_precond_options.grid is {nx, ny, ze - zs}.  libadia builds the
 * hierarchy slab by slab -- every level's Galerkin product, smoother and
 * transfers on the process's planes and ghost planes, which the callbacks
 * below fill from their owners -- and gathers a level onto every process
 * once it is small, where a one-process mg solves it.  r and z of
 * adia_precond_apply are the own rows (planes [z0, z1)).  Every callback
 * is collective: all processes call it in the same order. */
typedef struct adia_slab_comm {
    int64_t nz, z0, z1, zs;
    int ghosts;               /* every level's, each side: 2..8 (3: fewest
                                 exchanges a V-cycle, mg.c)             */
    void *ctx;
    /* v[0..count) (host) summed over the processes, in place */
    void (*sum)(void *ctx, double *v, int count);
    void (*sum_u64)(void *ctx, uint64_t *v, int count);
    /* v[0..count) (host) the largest over the processes, in place (the
     * finest level's Gershgorin bound: a max, which no sum gives) */
    void (*max)(void *ctx, double *v, int count);
    /* The status every process goes on with (an error of any, on all). */
    adia_status (*agree)(void *ctx, adia_status s);
    /* Level `level`'s layout, once at set-up before its exchanges or
     * gathers: this process holds planes [zs, ze) of the level's nz planes
     * of `plane` values each and owns [z0, z1) (possibly none). */
    adia_status (*layout)(void *ctx, int level, int64_t plane, int64_t nz, int64_t z0,
                          int64_t z1, int64_t zs, int64_t ze);
    /* v: the level's planes [zs, ze) held here (doubles; device 1: device
     * memory, queued on stream, a cudaStream_t).  exchange: the planes held
     * but not owned filled from their owners; gather: every process's own
     * planes into all (the level's nz planes). */
    adia_status (*exchange)(void *ctx, int level, double *v, int device, void *stream);
    adia_status (*gather)(void *ctx, int level, const double *v, double *all, int device,
                          void *stream);
} adia_slab_comm;

/* The grids (points per dimension, x fastest) a matrix of `rows` rows
 * with the given diagonal offsets (j - i, any sign and order, repeats
 * allowed) may be a stencil on, likeliest first: at most max of them into
 * grid; their count (0: none).  mg's own search, for callers that split
 * the grid (adia_mpi) before any plan exists. */
int adia_grid_candidates(int64_t rows, const int64_t *offsets, int count, int32_t (*grid)[3],
                         int max);

void adia_precond_options_default(adia_precond_options *opt);
/* Build M for the square plan (CPU or GPU) with opt (NULL: defaults).  The
 * matrix is read from the plan's format.  Errors: an unknown kind (the
 * message lists the kinds), a plan that does not suit the kind (Jacobi: a
 * zero diagonal entry, naming the row; mg: a matrix not on the grid), no
 * memory. */
adia_status adia_precond_create(adia_plan *plan, const adia_precond_options *opt,
                                adia_precond **M);
/* z = M r.  GPU: device arrays of the plan's value type, queued on stream
 * (a cudaStream_t, NULL: the default stream); CPU: host doubles (stream
 * ignored).  r and z must not overlap. */
adia_status adia_precond_apply(adia_precond *M, const void *r, void *z, void *stream);
const char *adia_precond_kind(const adia_precond *M);   /* "" on a bad handle */
/* What M is (kind, levels, rows and diagonals per level, setup time) as
 * text, truncated to len - 1 characters.  mg also times its cycle level by
 * level here, running six cycles from each level down on its own arrays
 * (a few milliseconds; not while M is applied on another thread). */
adia_status adia_precond_explain(const adia_precond *M, char *buf, size_t len);
void adia_precond_destroy(adia_precond *M);   /* NULL is fine */

/* A matrix-free operator for adia_solve_operator: the CPU methods of
 * adia_solve on an A that the caller applies, with the caller's way of
 * combining partial results.  What a distributed solver plugs in
 * (adia_mpi.h: each process holds n rows of every vector, apply exchanges
 * what it needs, sum and max are MPI_Allreduce); for one process sum, max
 * and agree are NULL.  Every decision of the methods is taken on combined
 * values, so the processes stay in step. */
typedef struct adia_operator {
    int64_t n;                 /* rows of the vectors held by this process   */
    int64_t first;             /* global index of the first (for messages)   */
    /* y = alpha A x on the rows held here (x: the n values held here).  Its
     * errors must be the same on every process; one that may fail alone
     * fills y with NaN instead (every process then stops on the next
     * combined value) and reports the error after the solve. */
    adia_status (*apply)(void *ctx, double alpha, const double *x, double *y);
    void (*sum)(void *ctx, double *v, int count);   /* v[k] = sum over processes */
    void (*max)(void *ctx, double *v, int count);   /* v[k] = max over processes */
    /* The status every process goes on with: an error of any process,
     * with its message, on all (NULL: s as is). */
    adia_status (*agree)(void *ctx, adia_status s);
    const double *diag;        /* A(i,i) of the rows held here (Jacobi), or NULL */
    double max_abs;            /* max |A(i,j)| of the rows held here: the scale
                                  (adia_solve's power-of-two scaling)          */
    void *ctx;                 /* handed to the callbacks                    */
    /* The GPU methods (adia_solve_options.device 1: b and x stay host
     * arrays, moved to the device once, as adia_solve with a GPU plan):
     * apply, sum and max again on device doubles, queued on stream (a
     * cudaStream_t), with apply's rule for errors.  apply_sums_device
     * (may be NULL): apply_device with the sums of adia_spmv_sums_async
     * (z, out as there) added to out -- the solver's dot products fused
     * into the product; NULL: a pass of their own.  sum_device and
     * max_device NULL: one process (every reduction then finishes in the
     * kernel that makes it). */
    adia_status (*apply_device)(void *ctx, double alpha, const double *x, double *y,
                                void *stream);
    adia_status (*apply_sums_device)(void *ctx, double alpha, const double *x, double *y,
                                     const double *z, double *out, void *stream);
    void (*sum_device)(void *ctx, double *v, int count, void *stream);
    void (*max_device)(void *ctx, double *v, int count, void *stream);
    /* What the device callbacks queue, and so how the iterations run:
     * 0: they wait on the host (MPI on host copies): each iteration is
     *    launched from the host, which reads the stop test after it;
     * 1: they only queue work (NCCL included): chunks of iterations are
     *    replayed as a CUDA graph;
     * 2: they queue only kernels, memsets and copies: the whole loop is
     *    one graph, a device-side WHILE node (as with a plan). */
    int device_graph;
    double apply_bytes;        /* bytes one apply moves: info->bytes_per_iter
                                  (0: unknown, reported as 0)               */
} adia_operator;

/* Solve A x = b with A given by op: b and x are the n rows held here (x:
 * initial guess in, solution out); options, info, the scale-safe norms and
 * "converged only from the true residual" as adia_solve (info->format is
 * ""; spmv_ms is the time in op->apply on the CPU, NaN on the GPU).
 * opt->device 1 runs adia_solve's GPU methods on op's device callbacks
 * (every vector on the device, double; -1: there when apply_device is
 * set and a GPU is usable); 0 the CPU methods on op->apply.
 * opt->precond: z = M r at every iteration, M made on a square plan of the
 * op->n rows held here on the solve's device (CPU plan: the CPU methods;
 * GPU plan: the GPU's), else ADIA_ERR_DIMENSION / ADIA_ERR_INVALID_ARG,
 * agreed by every process; Jacobi is opt->jacobi, from op->diag. */
adia_status adia_solve_operator(const adia_operator *op, const double *b, double *x,
                                const adia_solve_options *opt, adia_solve_info *info);
/* The same with b and x on the device (op->n doubles each; x: initial
 * guess in, solution out): the GPU methods on op's device callbacks, the
 * work ordered after what is queued on stream (a cudaStream_t; NULL: the
 * default stream), returning when x is ready; nothing crosses to the host
 * but a few scalars (and Jacobi's diagonal, from op->diag).  Scale-safe
 * as adia_solve_operator, by the same rule (op->max_abs, every process's
 * largest, scales A; b and x on the device as adia_plan_solve's).
 * opt->device is ignored.  Errors as adia_solve_operator; NaN/Inf in b or
 * x: ADIA_ERR_INVALID_ARG; no device: ADIA_ERR_NO_DEVICE. */
adia_status adia_solve_operator_device(const adia_operator *op, const double *d_b, double *d_x,
                                       const adia_solve_options *opt, adia_solve_info *info,
                                       void *stream);

#ifdef __cplusplus
}
#endif
#if defined(ADIA_BUILDING_LIBRARY) && defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif /* ADIA_H */
