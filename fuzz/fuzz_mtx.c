/* fuzz_mtx.c -- libFuzzer target: arbitrary bytes through the Matrix Market
 * parser.  It must return a status (never crash, hang or leak) and either a
 * valid matrix or none. */
#include "adia.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adia_matrix *A = NULL;
    adia_status s = adia_matrix_parse_mtx((const char *)data, size, "fuzz.mtx", &A);
    if (s != ADIA_OK && A != NULL) __builtin_trap();   /* no partial matrix */
    adia_matrix_destroy(A);
    return 0;
}
