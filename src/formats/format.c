/* format.c -- the public adia_format_* wrappers: handle checks, the
 * operations table dispatch, parameter parsing. */
#include "internal.h"
#include "diag_core.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>

static adia_status check_format(const adia_format *F, const char *func)
{
    if (!F) return adia__error(ADIA_ERR_INVALID_HANDLE, "%s: format is NULL", func);
    if (F->magic != ADIA_MAGIC_FORMAT)
        return adia__error(ADIA_ERR_INVALID_HANDLE,
                          "%s: not a live format handle (freed or uninitialised)", func);
    return ADIA_OK;
}

static adia_status unsupported(const adia_format *F, const char *what)
{
    return adia__error(ADIA_ERR_UNSUPPORTED, "format %s does not support %s",
                      F->ops->name, what);
}

void adia_format_params_default(adia_format_params *p)
{
    if (p) memset(p, 0, sizeof *p);
}

/* Every parameter: its key=value name, its field, and the matrix extent
 * that bounds it -- a block, slice, group, strip or segment of more rows
 * than the matrix has (a width or padding of more columns) only adds
 * padding, and an absurd value (B=2000000000) would scale memory or GPU
 * launch sizes with nothing to gain.  The bound is twice the extent: a
 * block a little taller than the matrix (one piece for all rows) is a
 * natural choice and costs at most as much again.  Values up to PARAM_FLOOR pass on any
 * matrix: the formats' defaults (<= 256) and GPU block sizes (<= 1024)
 * must keep working on small matrices, where they cost little.  noun
 * words the error message. */
#define PARAM_FLOOR 1024
typedef enum { EXTENT_ROWS, EXTENT_COLS, EXTENT_SIDE } param_extent;
static const struct {
    const char *key, *noun;
    size_t field;
    param_extent extent;
} params[] = {
    {"B", "row block", offsetof(adia_format_params, block_rows), EXTENT_ROWS},
    {"eta", "piece distance", offsetof(adia_format_params, eta), EXTENT_ROWS},
    {"hack", "hack height", offsetof(adia_format_params, hack), EXTENT_ROWS},
    {"seg", "segment height", offsetof(adia_format_params, segment), EXTENT_ROWS},
    {"width", "width", offsetof(adia_format_params, ell_width), EXTENT_COLS},
    {"C", "slice height", offsetof(adia_format_params, sell_c), EXTENT_ROWS},
    {"sigma", "sorting window", offsetof(adia_format_params, sell_sigma), EXTENT_ROWS},
    {"r", "block size", offsetof(adia_format_params, bcsr_r), EXTENT_ROWS},
    {"c", "block size", offsetof(adia_format_params, bcsr_c), EXTENT_COLS},
    {"group", "row group", offsetof(adia_format_params, row_group), EXTENT_ROWS},
    {"strip", "strip height", offsetof(adia_format_params, strip), EXTENT_ROWS},
    {"qt", "leaf size", offsetof(adia_format_params, qt_size), EXTENT_SIDE},
    {"streams", "stream count", offsetof(adia_format_params, streams), EXTENT_ROWS},
    {"pad", "padding", offsetof(adia_format_params, pad), EXTENT_COLS},
    {"kernel", "GPU kernel", offsetof(adia_format_params, gpu_kernel), EXTENT_ROWS},
    {"tpr", "threads per row", offsetof(adia_format_params, tpr), EXTENT_ROWS},
    {"R", "rows per thread", offsetof(adia_format_params, rows_per_thread), EXTENT_ROWS},
    {"interleave", "chunk order", offsetof(adia_format_params, interleave), EXTENT_ROWS},
    {"stage", "staging", offsetof(adia_format_params, stage), EXTENT_ROWS},
};

/* The tuning parameters take a value from a set: 0 (the library's
 * choice) or one of these; message says which. */
static adia_status check_tuning(const adia_format_params *p)
{
    if (p->gpu_kernel < 0 || p->gpu_kernel > ADIA_KERNEL_CSR_CUSPARSE_ALG1)
        return adia__error(ADIA_ERR_INVALID_ARG, "format parameters: kernel=%d is not a GPU kernel "
                          "(auto generic generated scalar vector adaptive cusparse cusparse-alg1)",
                          (int)p->gpu_kernel);
    int t = p->tpr;
    if (t && t != 2 && t != 4 && t != 8 && t != 16 && t != 32)
        return adia__error(ADIA_ERR_INVALID_ARG, "format parameters: tpr=%d must be 2, 4, 8, 16 "
                          "or 32", t);
    int R = p->rows_per_thread;
    if (R && R != 1 && R != 2 && R != 4)
        return adia__error(ADIA_ERR_INVALID_ARG, "format parameters: R=%d must be 1, 2 or 4", R);
    if (p->interleave < 0 || p->interleave > ADIA_INTERLEAVE_FORCE)
        return adia__error(ADIA_ERR_INVALID_ARG, "format parameters: interleave=%d must be 1 (off) "
                          "or 2 (force)", (int)p->interleave);
    if (p->stage < 0 || p->stage > ADIA_STAGE_FORCE)
        return adia__error(ADIA_ERR_INVALID_ARG, "format parameters: stage=%d must be 1 (off) "
                          "or 2 (force)", (int)p->stage);
    return ADIA_OK;
}

/* A value given by name: kernel=generated, interleave|stage=off|force; 0 if the
 * text is no name of key's (then it must be a number). */
static int named_value(const char *key, size_t klen, const char *v, size_t vlen, int32_t *out)
{
    char name[32];
    if (vlen >= sizeof name) return 0;
    memcpy(name, v, vlen);
    name[vlen] = 0;
    if (klen == 6 && !strncmp(key, "kernel", 6)) {
        adia_gpu_kernel k;
        if (adia_gpu_kernel_parse(name, &k) != ADIA_OK) {
            adia_clear_error();
            return 0;
        }
        *out = (int32_t)k;
        return 1;
    }
    if ((klen == 10 && !strncmp(key, "interleave", 10)) || (klen == 5 && !strncmp(key, "stage", 5))) {
        /* the same values: ADIA_INTERLEAVE_* = ADIA_STAGE_* */
        if (!strcmp(name, "off")) *out = ADIA_STAGE_OFF;
        else if (!strcmp(name, "force")) *out = ADIA_STAGE_FORCE;
        else return 0;
        return 1;
    }
    return 0;
}
enum { N_PARAMS = sizeof params / sizeof *params };
_Static_assert(ADIA_INTERLEAVE_OFF == ADIA_STAGE_OFF && ADIA_INTERLEAVE_FORCE == ADIA_STAGE_FORCE,
               "interleave and stage share their named values");

static int32_t *param_field(adia_format_params *p, const char *key, size_t len)
{
    for (int i = 0; i < N_PARAMS; i++)
        if (strlen(params[i].key) == len && !strncmp(params[i].key, key, len))
            return (int32_t *)((char *)p + params[i].field);
    return NULL;
}

/* The one bound check of every format's parameters, before any build: a
 * given value (> 0) may not exceed max(2 x its extent of the rows x cols
 * matrix, PARAM_FLOOR). */
static adia_status check_params(const adia_format_params *p, const char *fmt, int32_t rows,
                                int32_t cols)
{
    for (int i = 0; i < N_PARAMS; i++) {
        int32_t v = *(const int32_t *)((const char *)p + params[i].field);
        param_extent e = params[i].extent;
        int32_t extent = e == EXTENT_ROWS ? rows : e == EXTENT_COLS ? cols : rows > cols ? rows : cols;
        int64_t bound = 2 * (int64_t)extent > PARAM_FLOOR ? 2 * (int64_t)extent : PARAM_FLOOR;
        if (v <= bound) continue;
        return adia__error(ADIA_ERR_INVALID_ARG, "%s: %s=%d too large: the %s must be at most "
                          "max(2 x %s, %d) = %lld for this %d x %d matrix", fmt, params[i].key, (int)v,
                          params[i].noun, e == EXTENT_ROWS ? "rows" : e == EXTENT_COLS ? "columns"
                          : "rows, columns", PARAM_FLOOR, (long long)bound, (int)rows, (int)cols);
    }
    return ADIA_OK;
}

adia_status adia_format_params_check(const adia_format_params *p, int32_t rows, int32_t cols)
{
    if (!p) return adia__error(ADIA_ERR_INVALID_ARG, "adia_format_params_check: p is NULL");
    ADIA_TRY(check_tuning(p));
    return check_params(p, "format parameters", rows, cols);
}

adia_status adia_format_params_parse(adia_format_params *p, const char *text)
{
    if (!p || !text) return adia__error(ADIA_ERR_INVALID_ARG, "format parameters: NULL argument");
    const char *s = text;
    while (*s) {
        const char *eq = strchr(s, '=');
        const char *end = strchr(s, ',');
        if (!end) end = s + strlen(s);
        if (!eq || eq > end)
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "format parameters: expected key=value at '%.*s'",
                              (int)(end - s), s);
        int32_t *field = param_field(p, s, (size_t)(eq - s));
        if (!field)
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "format parameters: unknown key '%.*s' (known: B eta "
                              "hack seg width C sigma r c group strip qt streams pad "
                              "kernel tpr R interleave stage)",
                              (int)(eq - s), s);
        if (named_value(s, (size_t)(eq - s), eq + 1, (size_t)(end - eq - 1), field)) {
            s = *end ? end + 1 : end;
            continue;
        }
        char *stop;
        errno = 0;
        long v = strtol(eq + 1, &stop, 10);
        if (stop != end || stop == eq + 1 || errno || v <= 0 || v > INT32_MAX)
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "format parameters: '%.*s' needs a positive integer",
                              (int)(end - s), s);
        *field = (int32_t)v;
        s = *end ? end + 1 : end;
    }
    return check_tuning(p);
}

adia_status adia__format_build_impl(const adia_format_ops *ops, const adia_csr *A,
                                    const adia_format_params *p, adia_value_type vt, void **impl)
{
    if (ops->build) return ops->build(A, p, vt, impl);
    if (ops->diag.policy)
        return adia__diag_build_policy(ops->diag.policy, ops->diag.per_piece, A, p, vt, impl);
    return adia__error(ADIA_ERR_UNSUPPORTED, "format %s has no build", ops->name);
}

adia_status adia_format_build(const adia_matrix *A, const char *name,
                              const adia_format_params *p, adia_value_type vt,
                              adia_format **out)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_format_build"));
    if (!name || !out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_format_build: NULL argument");
    *out = NULL;
    adia_format *F = NULL;
    ADIA_TRY(adia__format_new(name, p, vt, A->csr.rows, A->csr.cols, A->csr.nnz, &F));
    adia_status s = adia__format_build_impl(F->ops, &A->csr, &F->params, vt, &F->impl);
    if (s == ADIA_OK && F->ops->zeros_apart) s = adia__zeros_collect(&A->csr, vt, &F->zeros);
    if (s != ADIA_OK) {
        adia_format_destroy(F);
        return s;
    }
    *out = F;
    return ADIA_OK;
}

adia_status adia__format_new(const char *name, const adia_format_params *p, adia_value_type vt,
                            int32_t rows, int32_t cols, int64_t nnz, adia_format **out)
{
    *out = NULL;
    if (vt != ADIA_DOUBLE && vt != ADIA_FLOAT)
        return adia__error(ADIA_ERR_INVALID_ARG, "format build: bad value type %d", (int)vt);
    const adia_format_ops *ops = adia__format_ops_find(name);
    if (!ops) return adia__error(ADIA_ERR_INVALID_ARG, "unknown format '%s'", name);
    if (p) ADIA_TRY(check_params(p, ops->name, rows, cols));
    if (p) ADIA_TRY(check_tuning(p));
    adia_format *F = adia__calloc(1, sizeof *F, "format handle");
    if (!F) return ADIA_ERR_NO_MEMORY;
    F->magic = ADIA_MAGIC_FORMAT;
    F->ops = ops;
    F->vtype = vt;
    F->rows = rows;
    F->cols = cols;
    F->nnz = nnz;
    if (p) F->params = *p;
    *out = F;
    return ADIA_OK;
}

void adia_format_destroy(adia_format *F)
{
    if (!F || F->magic != ADIA_MAGIC_FORMAT) return;
    if (F->dev) F->ops->gpu->destroy(F->dev);
    if (F->impl) F->ops->destroy(F->impl);
    adia__zeros_free(&F->zeros);
    F->magic = ADIA_MAGIC_DEAD;
    free(F);
}

const char *adia_format_name(const adia_format *F)
{
    return check_format(F, "adia_format_name") == ADIA_OK ? F->ops->name : "";
}
adia_value_type adia_format_value_type(const adia_format *F) { return F ? F->vtype : ADIA_DOUBLE; }
int32_t adia_format_rows(const adia_format *F) { return F ? F->rows : 0; }
int32_t adia_format_cols(const adia_format *F) { return F ? F->cols : 0; }
int64_t adia_format_nnz(const adia_format *F) { return F ? F->nnz : 0; }

/* One lock for the rare first host use of device-built formats. */
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;

adia_status adia__format_host(const adia_format *F)
{
    if (!F->host_stale) return ADIA_OK;
    adia_format *W = (adia_format *)F;   /* a cache of the device's data */
    adia_status s = ADIA_OK;
    pthread_mutex_lock(&host_lock);
    if (W->host_stale) {
        s = W->ops->gpu && W->ops->gpu->download
                ? W->ops->gpu->download(W->dev, W->impl)
                : adia__error(ADIA_ERR_INTERNAL, "format %s: no way to its device data",
                             W->ops->name);
        if (s == ADIA_OK) W->host_stale = 0;
    }
    pthread_mutex_unlock(&host_lock);
    return s;
}

adia_status adia_format_to_matrix(const adia_format *F, adia_matrix **out)
{
    ADIA_TRY(check_format(F, "adia_format_to_matrix"));
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_format_to_matrix: out is NULL");
    if (!F->ops->to_csr) return unsupported(F, "conversion back to CSR");
    ADIA_TRY(adia__format_host(F));
    adia_csr c;
    ADIA_TRY(F->ops->to_csr(F->impl, &c));
    adia_status s = adia__zeros_merge(&F->zeros, &c);
    if (s != ADIA_OK) {
        adia__csr_free(&c);
        return s;
    }
    return adia__matrix_wrap(&c, out);
}

int64_t adia_format_padded_zeros(const adia_format *F)
{
    if (check_format(F, "adia_format_padded_zeros") != ADIA_OK || !F->ops->padded_zeros) return -1;
    return F->ops->padded_zeros(F->impl);
}

int64_t adia_format_bytes(const adia_format *F)
{
    /* every stored array read once, plus x and y: derived here once */
    if (check_format(F, "adia_format_bytes") != ADIA_OK || !F->ops->storage_bytes) return -1;
    return F->ops->storage_bytes(F->impl) + adia__vector_bytes(F->rows, F->cols, F->vtype);
}

int64_t adia_format_storage_bytes(const adia_format *F)
{
    if (check_format(F, "adia_format_storage_bytes") != ADIA_OK || !F->ops->storage_bytes) return -1;
    return F->ops->storage_bytes(F->impl);
}

int adia__format_sums_fused(const adia_format *F)
{
    return F->ops->gpu && F->ops->gpu->spmv_dot;
}

adia_status adia_format_spmv(const adia_format *F, double alpha, const void *x,
                             double beta, void *y)
{
    ADIA_TRY(check_format(F, "adia_format_spmv"));
    if ((!x && F->cols > 0) || (!y && F->rows > 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_format_spmv: x or y is NULL");
    if (!F->ops->spmv) return unsupported(F, "CPU SpMV");
    ADIA_TRY(adia__format_host(F));
    return F->ops->spmv(F->impl, alpha, x, beta, y);
}

adia_status adia_format_upload(adia_format *F)
{
    ADIA_TRY(check_format(F, "adia_format_upload"));
    if (F->dev) return ADIA_OK;
    int n = 0;
    ADIA_TRY(adia_gpu_device_count(&n));
    if (n == 0) return adia__error(ADIA_ERR_NO_DEVICE, "adia_format_upload: no CUDA device");
    const adia_gpu_ops *g = F->ops->gpu;
    if (!g) return unsupported(F, "the GPU (no GPU kernel)");
    /* refused while nothing is allocated (the planner then tries its next
     * candidate), not by a cudaMalloc half way or an out-of-memory later:
     * the storage, what an upload adds beside it (per-row arrays, one
     * int64 a row at most: COO's row ranges, CSR's row blocks, the diagonal
     * kernels' chunk order) and the x and y of every product (in
     * adia_format_bytes) */
    int64_t need = adia_sat_add(adia_format_bytes(F), 8 * ((int64_t)F->rows + 1));
    char what[96];
    snprintf(what, sizeof what, "adia_format_upload: %s of a %d x %d matrix", F->ops->name,
             (int)F->rows, (int)F->cols);
    ADIA_TRY(adia__gpu_check_free(need, what));
    ADIA_TRY(g->upload(F->impl, F->vtype, &F->params, &F->dev));
    return adia__gpu_fence(what);   /* complete for a product on any stream */
}

adia_status adia_format_spmv_gpu(adia_format *F, double alpha, const void *d_x,
                                 double beta, void *d_y, void *stream)
{
    ADIA_TRY(adia_format_upload(F));
    if ((!d_x && F->cols > 0) || (!d_y && F->rows > 0))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_format_spmv_gpu: x or y is NULL");
    return F->ops->gpu->spmv(F->dev, alpha, d_x, beta, d_y, stream);
}
