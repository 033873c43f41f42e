/* plan_hash.h -- the structure hashes of a plan (plan files; value
 * updates), one definition for the host (adia__plan_structure_hash,
 * plan_model.c, threads) and the device (plan_update_gpu.cu): a wrapping
 * sum of independent terms, each an element of rowptr or colind mixed
 * with its position, so any order of summation gives the same bits and
 * the pass runs at the memory's throughput (a chain g = mix(g ^ x) waits
 * for each multiply: on lap3d7:64 it took 3x the refill).  Plain C,
 * usable from CUDA. */
#ifndef ADIA_PLAN_HASH_H
#define ADIA_PLAN_HASH_H

#include <stdint.h>

#if defined(__CUDACC__)
#define ADIA_HASH_FN static inline __host__ __device__
#else
#define ADIA_HASH_FN static inline
#endif

/* splitmix64's finaliser. */
ADIA_HASH_FN uint64_t adia__hash_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
/* Term of row pointer i (its value v). */
ADIA_HASH_FN uint64_t adia__hash_row(int64_t i, int64_t v)
{
    return adia__hash_mix((uint64_t)v ^ ((uint64_t)i << 40));
}
/* Term of entry j (column c). */
ADIA_HASH_FN uint64_t adia__hash_col(int64_t j, int32_t c)
{
    return adia__hash_mix(((uint64_t)j << 32 | (uint32_t)c) ^ 0x5851f42d4c957f2dull);
}
/* The hash of a rows x cols matrix of nnz entries from the two sums. */
ADIA_HASH_FN uint64_t adia__hash_combine(int32_t rows, int32_t cols, int64_t nnz, uint64_t sum_rows,
                                         uint64_t sum_cols)
{
    uint64_t h = adia__hash_mix(((uint64_t)(uint32_t)rows << 32) ^ (uint32_t)cols) ^
                 adia__hash_mix((uint64_t)nnz);
    return adia__hash_mix(h ^ adia__hash_mix(sum_rows) ^ adia__hash_mix(sum_cols + 1));
}

/* The value update's hash (adia_plan_update_values checks the pattern on
 * every update, so its cost is paid each time, not once as a plan
 * file's): the same sums of independent terms, each term one 64-bit
 * multiply between xor-shifts (a bijection of its input: any single
 * change of an element changes the sum) where the file hash's splitmix
 * takes two.  That mixing held the device pass at 60% of the SMs and 33%
 * of DRAM (79-83 us on lap3d7:160, H200, ncu 2026-11-27).  The file hash
 * stays as plan files store it; both end in adia__hash_combine. */
ADIA_HASH_FN uint64_t adia__uhash_mix(uint64_t x)
{
    x = (x ^ (x >> 32)) * 0xd6e8feb86659fd93ull;
    return x ^ (x >> 29);
}
ADIA_HASH_FN uint64_t adia__uhash_row(int64_t i, int64_t v)
{
    return adia__uhash_mix((uint64_t)v ^ ((uint64_t)i << 40) ^ 0x2545f4914f6cdd1dull);
}
ADIA_HASH_FN uint64_t adia__uhash_col(int64_t j, int32_t c)
{
    return adia__uhash_mix(((uint64_t)j << 32 | (uint32_t)c) ^ ((uint64_t)j >> 32) ^
                           0x5851f42d4c957f2dull);
}

#endif
