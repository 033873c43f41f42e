/* diagonal_none.c -- the device diagonal in a build without CUDA: no
 * format is ever on a device, so adia__format_diagonal never comes here;
 * a direct call is told why. */
#include "internal.h"
#include "formats/diag_core.h"

adia_status adia__format_diagonal_gpu(const adia_format *F, void *d_dev, adia_value_type vt,
                                      void *stream)
{
    (void)F; (void)d_dev; (void)vt; (void)stream;
    return adia__error(ADIA_ERR_NO_DEVICE, "format diagonal (GPU): adia was built without CUDA");
}

adia_status adia__format_diagonal_download(const adia_format *F, double *d_host)
{
    (void)F; (void)d_host;
    return adia__error(ADIA_ERR_NO_DEVICE, "format diagonal (GPU): adia was built without CUDA");
}

adia_status adia__gpu_diag_set_data(void *dev, const adia_diag *D)
{
    (void)dev; (void)D;
    return adia__error(ADIA_ERR_NO_DEVICE, "diagonal values to the device: adia was built without CUDA");
}

adia_status adia__gpu_diag_refill(void *dev, const adia_device_csr *A,
                                  const unsigned long long *gate, unsigned long long *count)
{
    (void)dev; (void)A; (void)gate; (void)count;
    return adia__error(ADIA_ERR_NO_DEVICE, "diagonal refill on the device: adia was built without CUDA");
}
