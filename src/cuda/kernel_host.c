/* kernel_host.c -- choosing a format's GPU kernel variant and launch
 * width: plain C on top of the device-struct header (gpu_head.h), built in
 * every configuration (without CUDA the upload reports "no device"). */
#include "internal.h"
#include "gpu_head.h"

static const char *const kernel_names[] = {"auto", "generic", "generated",
                                           "scalar", "vector", "adaptive", "cusparse",
                                           "cusparse-alg1"};
enum { N_KERNELS = sizeof kernel_names / sizeof *kernel_names };

const char *adia_gpu_kernel_name(adia_gpu_kernel k)
{
    return (int)k >= 0 && (int)k < N_KERNELS ? kernel_names[k] : "?";
}

adia_status adia_gpu_kernel_parse(const char *name, adia_gpu_kernel *k)
{
    if (!name || !k) return adia__error(ADIA_ERR_INVALID_ARG, "adia_gpu_kernel_parse: NULL argument");
    for (int i = 0; i < N_KERNELS; i++)
        if (!strcmp(name, kernel_names[i])) {
            *k = (adia_gpu_kernel)i;
            return ADIA_OK;
        }
    return adia__error(ADIA_ERR_INVALID_ARG,
                      "unknown GPU kernel '%s' (auto generic generated scalar vector adaptive "
                      "cusparse cusparse-alg1)", name);
}

int adia_gpu_kernel_is_deterministic(adia_gpu_kernel k)
{
    return k != ADIA_KERNEL_CSR_CUSPARSE_ALG1;
}

static adia_status uploaded_head(adia_format *F, const char *func, adia_gpu_head **h)
{
    if (!F || F->magic != ADIA_MAGIC_FORMAT)
        return adia__error(ADIA_ERR_INVALID_HANDLE, "%s: not a live format handle", func);
    ADIA_TRY(adia_format_upload(F));
    *h = F->dev;
    return ADIA_OK;
}

adia_status adia_format_set_kernel(adia_format *F, adia_gpu_kernel k)
{
    adia_gpu_head *h = NULL;
    ADIA_TRY(uploaded_head(F, "adia_format_set_kernel", &h));
    if (k == ADIA_KERNEL_AUTO) k = h->auto_kernel;
    if ((int)k < 0 || (int)k >= N_KERNELS || !(h->allowed & (1u << k)))
        return adia__error(ADIA_ERR_UNSUPPORTED, "format %s has no GPU kernel '%s'",
                          F->ops->name, adia_gpu_kernel_name(k));
    if (k == h->kernel) return ADIA_OK;
    return h->select(F->dev, k);
}

adia_gpu_kernel adia_format_kernel(const adia_format *F)
{
    if (!F || F->magic != ADIA_MAGIC_FORMAT || !F->dev) return ADIA_KERNEL_AUTO;
    return ((const adia_gpu_head *)F->dev)->kernel;
}

adia_status adia_format_set_threads(adia_format *F, int threads)
{
    adia_gpu_head *h = NULL;
    ADIA_TRY(uploaded_head(F, "adia_format_set_threads", &h));
    if (threads < 32 || threads > 1024 || threads % 32)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "adia_format_set_threads: %d threads per block (want a multiple "
                          "of 32 in 32..1024)", threads);
    h->block = threads;
    return ADIA_OK;
}
