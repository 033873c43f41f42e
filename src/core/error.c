/* error.c -- status strings, the thread-local last-error message, checked
 * allocation. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

const char *adia_status_string(adia_status s)
{
    switch (s) {
    case ADIA_OK: return "success";
    case ADIA_ERR_INVALID_ARG: return "invalid argument";
    case ADIA_ERR_NO_MEMORY: return "out of memory";
    case ADIA_ERR_OVERFLOW: return "size overflow";
    case ADIA_ERR_IO: return "input/output error";
    case ADIA_ERR_PARSE: return "parse error";
    case ADIA_ERR_UNSUPPORTED: return "unsupported";
    case ADIA_ERR_DIMENSION: return "dimension mismatch";
    case ADIA_ERR_INVALID_HANDLE: return "invalid handle";
    case ADIA_ERR_INVALID_MATRIX: return "invalid matrix";
    case ADIA_ERR_NO_DEVICE: return "no CUDA device";
    case ADIA_ERR_CUDA: return "CUDA error";
    case ADIA_ERR_CUSPARSE: return "cuSPARSE error";
    case ADIA_ERR_NVRTC: return "NVRTC error";
    case ADIA_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *adia_last_error(void) { return last_error; }

void adia_clear_error(void) { last_error[0] = '\0'; }

adia_status adia_error(adia_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

void *adia_alloc(size_t count, size_t size, const char *what)
{
    size_t bytes;
    if (!adia_mul_size(count, size, &bytes)) {
        adia_error(ADIA_ERR_OVERFLOW, "allocating %s: %zu x %zu bytes overflows",
                   what, count, size);
        return NULL;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        adia_error(ADIA_ERR_NO_MEMORY, "allocating %s: %zu bytes failed", what,
                   bytes);
    return p;
}

void *adia_calloc(size_t count, size_t size, const char *what)
{
    size_t bytes;
    if (!adia_mul_size(count, size, &bytes)) {
        adia_error(ADIA_ERR_OVERFLOW, "allocating %s: %zu x %zu bytes overflows",
                   what, count, size);
        return NULL;
    }
    void *p = calloc(bytes ? count : 1, bytes ? size : 1);
    if (!p)
        adia_error(ADIA_ERR_NO_MEMORY, "allocating %s: %zu bytes failed", what,
                   bytes);
    return p;
}

size_t adia_value_size(adia_value_type t) { return t == ADIA_FLOAT ? 4 : 8; }

const char *adia_value_type_name(adia_value_type t)
{
    return t == ADIA_FLOAT ? "float" : "double";
}

int64_t adia_vector_bytes(int32_t rows, int32_t cols, adia_value_type vt)
{
    return ((int64_t)cols + 2 * (int64_t)rows) * (int64_t)adia_value_size(vt);
}
