/* fuzz_mtx.c -- libFuzzer target: arbitrary bytes through the Matrix Market
 * parser.  It must return a status (never crash, hang or leak) and either a
 * valid matrix or none.
 *
 * The parser bounds what it allocates for entries by the input length, but
 * a valid 30-byte file can declare an empty 2e9 x 2e9 matrix, whose CSR row
 * pointers alone take 16 GB: that is the matrix, not a bug.  Inputs whose
 * size line declares more than 2^20 rows or columns are therefore skipped
 * (found by a rough scan: the first line not starting with '%'). */
#include "adia.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_DIM (1 << 20)

static int dims_too_large(const char *d, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && d[e] != '\n') e++;
        size_t b = i;
        while (b < e && (d[b] == ' ' || d[b] == '\t' || d[b] == '\r')) b++;
        if (b < e && d[b] != '%') {
            char line[128];
            size_t len = e - b < sizeof line - 1 ? e - b : sizeof line - 1;
            memcpy(line, d + b, len);
            line[len] = '\0';
            char *p = line;
            for (int k = 0; k < 2; k++) {
                double v = strtod(p, &p);   /* rough: any huge number counts */
                if (v > FUZZ_MAX_DIM || v < -FUZZ_MAX_DIM) return 1;
            }
            return 0;
        }
        i = e + 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the library's own guard, under libFuzzer's 2 GB: a size line the
     * rough filter misreads (zeros past its 128 bytes: 0...0972903087 rows
     * once asked for 7.8 GB of row pointers) is refused with an error */
    static int budget_set;
    if (!budget_set) budget_set = adia_set_memory_budget((int64_t)512 << 20) == ADIA_OK;
    if (dims_too_large((const char *)data, size)) return 0;
    adia_matrix *A = NULL;
    adia_status s = adia_matrix_parse_mtx((const char *)data, size, "fuzz.mtx", &A);
    if (s != ADIA_OK && A != NULL) __builtin_trap();   /* no partial matrix */
    adia_matrix_destroy(A);
    return 0;
}
