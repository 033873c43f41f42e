/* diagonal.cuh -- what the GPU tables' diagonal slots share (adia_gpu_ops
 * .diagonal: A(i,i) of every row written on the device in the caller's
 * value type, from the device storage alone): the choice of the storage's
 * and the output's types, and the read of row-sorted COO entries (the COO
 * format, HYB's overflow, CRSD's scatter points).  Included by
 * diag_gpu.cu, csr_gpu.cu and row_gpu.cu. */
#ifndef ADIA_DIAGONAL_CUH
#define ADIA_DIAGONAL_CUH

#include "coo_rows.cuh"

/* f(T(), O()) with T the storage's value type (st) and O the output's
 * (out): each slot's kernel is written once, for every pair. */
template <typename F>
adia_status adia_diagonal_types(adia_value_type st, adia_value_type out, F &&f)
{
    if (st == ADIA_DOUBLE) return out == ADIA_DOUBLE ? f(double(), double()) : f(double(), float());
    return out == ADIA_DOUBLE ? f(float(), double()) : f(float(), float());
}

/* d[r] = the value of entry (r, r) for each listed row r that holds one;
 * other rows untouched (the caller zeroes them first, or an earlier pass
 * wrote them: the entries listed here are not in that pass's storage). */
template <typename T, typename O>
__global__ void adia_coo_rows_diagonal(adia_coo_rows a, O *__restrict__ d)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.n) return;
    int r = a.row ? a.row[i] : (int)i;
    const T *v = (const T *)a.val;
    for (long long k = a.ptr[i]; k < a.ptr[i + 1] && a.col[k] <= r; k++)
        if (a.col[k] == r) d[r] = (O)v[k];
}

template <typename T, typename O>
adia_status adia_coo_rows_diagonal_run(const adia_coo_rows &a, O *d, cudaStream_t st)
{
    if (a.n == 0) return ADIA_OK;
    adia_coo_rows_diagonal<T, O><<<adia_gpu_blocks(a.n, 256), 256, 0, st>>>(a, d);
    return adia__gpu_launch_check("coo rows diagonal");
}

#endif
