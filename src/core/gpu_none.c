/* gpu_none.c -- the GPU entry points of a build without CUDA: no devices,
 * no GPU format slots (the registry leaves them NULL).  Replaced by src/cuda when nvcc is available. */
#include "internal.h"
#include <string.h>

adia_status adia_gpu_device_count(int *count)
{
    if (!count) return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_device_count: count is NULL");
    *count = 0;
    return ADIA_OK;
}

adia_status adia_gpu_init(void) { return ADIA_OK; }

adia_status adia__gpu_check_free(int64_t bytes, const char *what)
{
    (void)bytes;
    return adia__error(ADIA_ERR_NO_DEVICE, "%s: adia was built without CUDA", what);
}

adia_status adia__gpu_fence(const char *what)
{
    (void)what;
    return ADIA_OK;
}

adia_status adia_format_build_brcsd2_device(int32_t rows, int32_t cols, int64_t nnz,
                                            const int64_t *d_rowptr, const int32_t *d_colind,
                                            const double *d_values,
                                            const adia_format_params *p, adia_value_type vt,
                                            adia_format **out)
{
    (void)rows; (void)cols; (void)nnz; (void)d_rowptr; (void)d_colind; (void)d_values;
    (void)p; (void)vt;
    if (out) *out = NULL;
    return adia__error(ADIA_ERR_NO_DEVICE,
                      "adia_format_build_brcsd2_device: adia was built without CUDA");
}

adia_status adia_plan_create_device_csr(const adia_device_csr *A, const adia_plan_hints *hints,
                                        adia_plan **plan)
{
    (void)A; (void)hints;
    if (plan) *plan = NULL;
    return adia__error(ADIA_ERR_NO_DEVICE,
                      "adia_plan_create_device_csr: adia was built without CUDA");
}

adia_status adia_plan_create_device_dia(const adia_device_dia *A, const adia_plan_hints *hints,
                                        adia_plan **plan)
{
    (void)A; (void)hints;
    if (plan) *plan = NULL;
    return adia__error(ADIA_ERR_NO_DEVICE,
                      "adia_plan_create_device_dia: adia was built without CUDA");
}

adia_status adia_plan_device_dia(const adia_plan *plan, int64_t *offsets, int max_diag,
                                 adia_device_dia *A)
{
    (void)plan; (void)offsets; (void)max_diag;
    if (A) memset(A, 0, sizeof *A);
    return adia__error(ADIA_ERR_NO_DEVICE, "adia_plan_device_dia: adia was built without CUDA");
}

adia_status adia_stencil_fill_device(const char *spec, int64_t first, int64_t count,
                                     void *values, adia_value_type vt, void *stream)
{
    (void)spec; (void)first; (void)count; (void)values; (void)vt; (void)stream;
    return adia__error(ADIA_ERR_NO_DEVICE, "adia_stencil_fill_device: adia was built without CUDA");
}

size_t adia__gpu_dot_work_bytes(int64_t rows)
{
    (void)rows;
    return 0;
}

adia_status adia__gpu_spmv_sums(adia_format *F, double alpha, const void *x, void *y,
                                const void *xd, const void *z, double *out, void *work,
                                void *stream)
{
    (void)F; (void)alpha; (void)x; (void)y; (void)xd; (void)z; (void)out; (void)work;
    (void)stream;
    return adia__error(ADIA_ERR_NO_DEVICE, "adia_spmv_sums_async: adia was built without CUDA");
}
