/* dist_device_none.c -- what adia_mpi built without CUDA has instead of
 * the device path (dist_device.c): hints.device -1 is the CPU, 1 is
 * ADIA_ERR_NO_DEVICE, no matrix is ever a device matrix. */
#include "dist.h"

adia_status adia__dist_device_select(adia_dist_matrix *D, int device)
{
    adia_status s = device == 1 ? adia_set_error(ADIA_ERR_NO_DEVICE, "hints.device 1: adia_mpi "
                                                 "was built without CUDA")
                                : ADIA_OK;
    return adia__dist_agree(D->comm, s);
}

adia_status adia__dist_device_setup(adia_dist_matrix *D)
{
    (void)D;
    return adia_set_error(ADIA_ERR_INTERNAL, "adia__dist_device_setup without CUDA");
}

void adia__dist_device_free(adia_dist_matrix *D) { (void)D; }

const char *adia__dist_reduce_name(const adia_dist_matrix *D)
{
    (void)D;
    return "mpi";
}

void adia__dist_trace_write(adia_dist_matrix *D) { (void)D; }

adia_status adia__dist_peer_check(adia_dist_matrix *D)
{
    (void)D;
    return ADIA_OK;
}

adia_status adia__dist_device_block(const adia_dist_matrix *D, const adia_plan_hints *hints,
                                    adia_plan **plan)
{
    (void)D, (void)hints;
    *plan = NULL;
    return ADIA_ERR_UNSUPPORTED;
}

adia_status adia__dist_device_spmv_host(adia_dist_matrix *D, double alpha, const double *x,
                                        double beta, double *y)
{
    (void)D, (void)alpha, (void)x, (void)beta, (void)y;
    return adia_set_error(ADIA_ERR_INTERNAL, "adia__dist_device_spmv_host without CUDA");
}

adia_status adia__dist_device_operator(dist_op *o, adia_operator *op)
{
    (void)o, (void)op;
    return adia_set_error(ADIA_ERR_INTERNAL, "adia__dist_device_operator without CUDA");
}

adia_status adia_dist_spmv_device(adia_dist_matrix *D, double alpha, const double *d_x,
                                  double beta, double *d_y, void *stream)
{
    (void)alpha, (void)beta, (void)stream;
    DIST_TRY(adia__dist_check_vectors(D, d_x, d_y, "adia_dist_spmv_device"));
    return adia_set_error(ADIA_ERR_NO_DEVICE, "adia_dist_spmv_device: adia_mpi was built without "
                          "CUDA");
}

adia_status adia__dist_fill_block(adia_dist_matrix *D, const char *spec,
                                  const adia_plan_hints *hints)
{
    (void)D, (void)spec, (void)hints;
    return adia_set_error(ADIA_ERR_INTERNAL, "adia__dist_fill_block without CUDA");
}

adia_status adia__dist_nccl_moves(adia_dist_matrix *D, const dist_move *m, int n, void *stream)
{
    (void)D, (void)m, (void)n, (void)stream;
    return adia_set_error(ADIA_ERR_INTERNAL, "adia__dist_nccl_moves without CUDA");
}

int adia__dist_nccl_active(const adia_dist_matrix *D)
{
    (void)D;
    return 0;
}

int adia__dist_device_offsets(const adia_dist_matrix *D, int64_t *off, int most)
{
    (void)D, (void)off, (void)most;
    return -1;
}

adia_status adia__dist_device_slab(const adia_dist_matrix *D, const adia_plan_hints *hints,
                                   int64_t rows, int64_t below, const int64_t *b, int nb,
                                   adia_status (*exchange)(void *ctx, double *v), void *ctx,
                                   adia_plan **plan)
{
    (void)D, (void)hints, (void)rows, (void)below, (void)b, (void)nb, (void)exchange, (void)ctx;
    *plan = NULL;
    return adia_set_error(ADIA_ERR_INTERNAL, "adia__dist_device_slab without CUDA");
}

adia_status adia__dist_nccl_broadcasts(adia_dist_matrix *D, const dist_move *m, int n,
                                       void *stream)
{
    (void)D, (void)m, (void)n, (void)stream;
    return adia_set_error(ADIA_ERR_INTERNAL, "adia__dist_nccl_broadcasts without CUDA");
}
