/* bench_none.c -- the benchmarking entry points of a build without CUDA:
 * each reports that there is no device. */
#include "internal.h"

static adia_status no_device(const char *what)
{
    return adia__error(ADIA_ERR_NO_DEVICE, "%s: adia was built without CUDA", what);
}

adia_status adia_gpu_get_info(adia_gpu_info *info)
{
    (void)info;
    return no_device("adia_gpu_get_info");
}
adia_status adia_gpu_read_bandwidth(size_t bytes, int runs, double *gbps)
{
    (void)bytes; (void)runs; (void)gbps;
    return no_device("adia_gpu_read_bandwidth");
}
adia_status adia_gpu_check_spmv(adia_format *F, const adia_matrix *A, double alpha,
                                double beta, uint64_t seed, double *rel_err)
{
    (void)F; (void)A; (void)alpha; (void)beta; (void)seed; (void)rel_err;
    return no_device("adia_gpu_check_spmv");
}
adia_status adia_gpu_time_spmv(adia_format *F, int runs, adia_gpu_timing *t)
{
    (void)F; (void)runs; (void)t;
    return no_device("adia_gpu_time_spmv");
}
adia_status adia_gpu_time_spmv_x(adia_format *F, int runs, const void *x_host,
                                 void *y_host, adia_gpu_timing *t)
{
    (void)F; (void)runs; (void)x_host; (void)y_host; (void)t;
    return no_device("adia_gpu_time_spmv");
}
adia_status adia_gpu_time_call(adia_gpu_call fn, void *ctx, int runs, adia_gpu_timing *t)
{
    (void)fn; (void)ctx; (void)runs; (void)t;
    return no_device("adia_gpu_time_call");
}
adia_status adia_cusparse_time_spmv(const adia_matrix *A, adia_value_type vt, int alg,
                                    int runs, double *rel_err, adia_gpu_timing *t)
{
    (void)A; (void)vt; (void)alg; (void)runs; (void)rel_err; (void)t;
    return no_device("adia_cusparse_time_spmv");
}
