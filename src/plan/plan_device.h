/* plan_device.h -- what the planner's CUDA files share (C++ only): a
 * format built on the device made into a plan, and the device planner's
 * core, used by a CSR in device memory (plan_device.cu) and by a host
 * matrix uploaded once (plan_upload.cu). */
#ifndef ADIA_PLAN_DEVICE_H
#define ADIA_PLAN_DEVICE_H

#include "plan_internal.h"

/* Threads per block of the planner's own small kernels. */
constexpr int ADIA_PLAN_THREADS = 256;

/* F, built on the GPU since t0 (adia__now_ms), as the plan: the generated
 * kernel where many products are expected and repay its compile (see the
 * definition; spmv_ms: F's measured time, NaN if not measured); owns F
 * from the call on.  *kernel_ms: the kernel's choice (an NVRTC compile or
 * a cache load). */
adia_status adia__plan_adopt_device(adia_format *F, const plan_hints &h, const char *name,
                                    double t0, double spmv_ms, double *kernel_ms,
                                    adia_plan **plan);

/* The device planner on a CSR in device memory (any layout the public
 * adia_device_csr allows; checked by the caller): diagonals counted, the
 * format chosen (or the FIXED one) and built there, MEASURE's candidates
 * built from A and timed.  A matrix that is not a diagonal one, or whose
 * format exceeds the memory budget, gives ADIA_OK with *plan NULL and the
 * reason in why[len]: the caller plans it on the host. */
adia_status adia__plan_device_core(const adia_device_csr *A, const plan_hints &h,
                                   const char *name, adia_plan **plan, char *why, size_t len);

#endif
