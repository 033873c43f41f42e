/* plan_update_none.c -- adia_plan_update_values_device_csr in a build
 * without CUDA: no device arrays to read. */
#include "plan_internal.h"

adia_status adia_plan_update_values_device_csr(adia_plan *plan, const adia_device_csr *A)
{
    (void)plan; (void)A;
    return adia__error(ADIA_ERR_NO_DEVICE, "adia_plan_update_values_device_csr: adia was built "
                       "without CUDA");
}

void adia__plan_update_free(adia_plan *P) { (void)P; }
