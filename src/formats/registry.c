/* registry.c -- the one list of storage formats: adding a format is its
 * module (one .c file, plus one .cu file if it has a GPU kernel; or one
 * partition policy in diag_formats.c) and one line here, in the order
 * `adia info` lists them.  The second column says where the format's GPU
 * side comes from: GPU its own .cu file (adia__gpu_<name>), CORE the
 * diagonal core's table (every format with a partition policy gets it),
 * CPU none: the one place that says which formats run on the GPU. */
#include "internal.h"
#include "diag_core.h"

#include <pthread.h>
#include <stdio.h>

#define FORMATS(X) \
    X(csr, GPU) \
    X(coo, GPU) \
    X(csc, CPU) \
    X(ell, GPU) \
    X(hyb, GPU) \
    X(sell, GPU) \
    X(bcsr, GPU) \
    X(pbcsr, CPU) \
    X(pcsr, CPU) \
    X(rgcsr, CPU) \
    X(cmrs, CPU) \
    X(qcsr, CPU) \
    X(mqt, CPU) \
    X(scsr, CPU) \
    X(sbcsr, CPU) \
    X(dia, CORE) \
    X(hdi, CORE) \
    X(brcsd1, CORE) \
    X(brcsd2, CORE) \
    X(crsd, CORE) \
    X(hm, CPU) \
    X(cdm, CPU) \
    /* end of the list */

#ifdef ADIA_HAVE_CUDA
#define GPU_DECLARE_GPU(name) extern const adia_gpu_ops adia__gpu_##name;
#define GPU_SLOT_GPU(name) &adia__gpu_##name
/* src/cuda/diag_gpu.cu: without and with the device build */
extern const adia_gpu_ops adia__gpu_diag, adia__gpu_diag_equal;
#else
#define GPU_DECLARE_GPU(name)
#define GPU_SLOT_GPU(name) NULL
#endif
#define GPU_DECLARE_CPU(name)
#define GPU_SLOT_CPU(name) NULL
#define GPU_DECLARE_CORE(name)
#define GPU_SLOT_CORE(name) NULL   /* resolve_all: from the policy */

#define DECLARE(name, side) extern const adia_format_ops adia__format_##name; GPU_DECLARE_##side(name)
FORMATS(DECLARE)
#define ENTRY(name, side) {&adia__format_##name, GPU_SLOT_##side(name)},
static const struct {
    const adia_format_ops *ops;
    const adia_gpu_ops *gpu;
} registry[] = {FORMATS(ENTRY)};
enum { N_FORMATS = sizeof registry / sizeof *registry };

/* The resolved tables: the module's slots, then the fallbacks. */
static adia_format_ops resolved[N_FORMATS];
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
/* The names, ", "-separated: all, diagonal core, the others. */
static char lists[3][N_FORMATS * 16];

static void list_add(char *list, const char *name)
{
    size_t at = strlen(list);
    snprintf(list + at, sizeof lists[0] - at, "%s%s", at ? ", " : "", name);
}

/* The diagonal core's GPU table for a format with a partition policy:
 * the one with the device build when its pieces are equal (piece_rows). */
static const adia_gpu_ops *core_gpu(const adia_format_ops *o)
{
#ifdef ADIA_HAVE_CUDA
    return o->diag.piece_rows ? &adia__gpu_diag_equal : &adia__gpu_diag;
#else
    (void)o;
    return NULL;
#endif
}

/* Every fallback of a NULL slot, in one place:
 *  - diag.policy set: the diagonal core fills the host slots (build stays
 *    NULL: format.c builds through the policy, adia__diag_build_policy)
 *    and the GPU table (core_gpu);
 *  - diagonal: the diagonal core's (policy) or the module's, else the
 *    reference through adia_format_to_matrix (adia__format_diagonal_ref);
 *  - gpu: the registry line's table (NULL: no GPU kernel, or no CUDA);
 *  - the optional GPU slots (gpu->spmv_dot, build_device, download,
 *    diagonal) stay NULL where the table has none: their callers fall
 *    back as adia_gpu_ops documents (internal.h). */
static void resolve_all(void)
{
    for (int i = 0; i < N_FORMATS; i++) {
        adia_format_ops o = *registry[i].ops;
        o.gpu = registry[i].gpu;
        if (o.diag.policy) {
            if (!o.to_csr) o.to_csr = adia__diag_op_to_csr;
            if (!o.check) o.check = adia__diag_op_check;
            if (!o.destroy) o.destroy = adia__diag_op_destroy;
            if (!o.padded_zeros) o.padded_zeros = adia__diag_op_padded_zeros;
            if (!o.storage_bytes) o.storage_bytes = adia__diag_op_storage_bytes;
            if (!o.spmv) o.spmv = adia__diag_op_spmv;
            if (!o.diagonal) o.diagonal = adia__diag_op_diagonal;
            if (!o.refill) o.refill = adia__diag_op_refill;
            if (!o.gpu) o.gpu = core_gpu(&o);
        }
        if (!o.diagonal) o.diagonal = adia__format_diagonal_ref;
        resolved[i] = o;
        list_add(lists[0], o.name);
        list_add(lists[o.diag.policy ? 1 : 2], o.name);
    }
}

int adia_format_count(void) { return N_FORMATS; }

const adia_format_ops *adia__format_ops_at(int i)
{
    if (i < 0 || i >= N_FORMATS) return NULL;
    pthread_once(&resolve_once, resolve_all);
    return &resolved[i];
}

const char *adia_format_name_at(int i)
{
    return i >= 0 && i < N_FORMATS ? registry[i].ops->name : NULL;
}

const adia_format_ops *adia__format_ops_find(const char *name)
{
    for (int i = 0; name && i < N_FORMATS; i++)
        if (!strcmp(registry[i].ops->name, name)) return adia__format_ops_at(i);
    return NULL;
}

int adia_format_exists(const char *name) { return adia__format_ops_find(name) != NULL; }

int adia_format_is_diagonal(const char *name)
{
    const adia_format_ops *o = adia__format_ops_find(name);
    return o && o->diag.policy;
}

int adia_format_has_gpu(const char *name)
{
    const adia_format_ops *o = adia__format_ops_find(name);
    return o && o->gpu;
}

unsigned adia_format_gpu_kernels(const char *name)
{
    const adia_format_ops *o = adia__format_ops_find(name);
    return o && o->gpu ? o->gpu->kernels : 0;
}

const char *adia__format_list(int diagonal)
{
    pthread_once(&resolve_once, resolve_all);
    return lists[diagonal < 0 ? 0 : diagonal ? 1 : 2];
}
