/* error.c -- status strings, the thread-local last-error message, checked
 * allocation. */
#include "internal.h"

#include <stdarg.h>
#include <stdint.h>
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

/* Formatted into a local buffer first: callers may pass adia_last_error()
 * itself as an argument (wrapping a lower-level message). */
static adia_status set_error(adia_status code, const char *fmt, va_list ap)
{
    char msg[sizeof last_error];
    vsnprintf(msg, sizeof msg, fmt, ap);
    memcpy(last_error, msg, sizeof msg);
    return code;
}

adia_status adia__error(adia_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(code, fmt, ap);
    va_end(ap);
    return code;
}

/* The same for libadia_mpi, which cannot reach the internal name. */
adia_status adia_set_error(adia_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(code, fmt, ap);
    va_end(ap);
    return code;
}

/* Below ADIA_BIG_ALLOC a request is not worth the budget's /proc read; the
 * operations check their whole peak up front anyway. */
#define ADIA_BIG_ALLOC ((size_t)256 << 20)

/* count x size bytes, checked for overflow and (from ADIA_BIG_ALLOC) against
 * the memory budget (budget.c); 0 after recording the error. */
static int request_bytes(size_t count, size_t size, const char *what, size_t *bytes)
{
    if (!adia_mul_size(count, size, bytes)) {
        adia__error(ADIA_ERR_OVERFLOW, "allocating %s: %zu x %zu bytes overflows",
                   what, count, size);
        return 0;
    }
    if (*bytes < ADIA_BIG_ALLOC) return 1;
    char label[160];
    snprintf(label, sizeof label, "allocating %s", what);
    return adia__budget_check(*bytes > INT64_MAX ? INT64_MAX : (int64_t)*bytes, label) == ADIA_OK;
}

static void *allocated(void *p, const char *what, size_t bytes)
{
    if (!p) adia__error(ADIA_ERR_NO_MEMORY, "allocating %s: %zu bytes failed", what, bytes);
    return p;
}

void *adia__alloc(size_t count, size_t size, const char *what)
{
    size_t bytes;
    if (!request_bytes(count, size, what, &bytes)) return NULL;
    return allocated(malloc(bytes ? bytes : 1), what, bytes);
}

void *adia__calloc(size_t count, size_t size, const char *what)
{
    size_t bytes;
    if (!request_bytes(count, size, what, &bytes)) return NULL;
    return allocated(calloc(bytes ? count : 1, bytes ? size : 1), what, bytes);
}

size_t adia_value_size(adia_value_type t) { return t == ADIA_FLOAT ? 4 : 8; }

const char *adia_value_type_name(adia_value_type t)
{
    return t == ADIA_FLOAT ? "float" : "double";
}

int64_t adia__vector_bytes(int32_t rows, int32_t cols, adia_value_type vt)
{
    return ((int64_t)cols + 2 * (int64_t)rows) * (int64_t)adia_value_size(vt);
}
