#define _DEFAULT_SOURCE   /* sysconf(_SC_AVPHYS_PAGES) */
/* error.c -- status strings, the thread-local last-error message, checked
 * allocation. */
#include "internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

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
adia_status adia_error(adia_status code, const char *fmt, ...)
{
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    return code;
}

/* Physical memory the system can still give (Linux MemAvailable; else
 * free pages; else unknown = SIZE_MAX). */
static size_t available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb > 0) return kb > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kb * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0 && (size_t)pages <= SIZE_MAX / (size_t)page)
        return (size_t)pages * (size_t)page;
    return SIZE_MAX;
}

/* Large requests are checked against the memory actually available first:
 * Linux grants almost any malloc/calloc lazily and then kills the process
 * while the pages are written (a padded format of an unstructured matrix
 * can ask for 100 GB).  Below ADIA_BIG_ALLOC the check is not worth its
 * /proc read. */
#define ADIA_BIG_ALLOC ((size_t)256 << 20)

/* count x size bytes, checked for overflow and (from ADIA_BIG_ALLOC) against
 * the memory available; 0 after recording the error. */
static int request_bytes(size_t count, size_t size, const char *what, size_t *bytes)
{
    if (!adia_mul_size(count, size, bytes)) {
        adia_error(ADIA_ERR_OVERFLOW, "allocating %s: %zu x %zu bytes overflows",
                   what, count, size);
        return 0;
    }
    if (*bytes < ADIA_BIG_ALLOC) return 1;
    size_t avail = available_bytes();
    if (*bytes <= avail) return 1;
    adia_error(ADIA_ERR_NO_MEMORY, "allocating %s: %.1f GB requested, %.1f GB of memory available",
               what, *bytes / 1e9, avail / 1e9);
    return 0;
}

static void *allocated(void *p, const char *what, size_t bytes)
{
    if (!p) adia_error(ADIA_ERR_NO_MEMORY, "allocating %s: %zu bytes failed", what, bytes);
    return p;
}

void *adia_alloc(size_t count, size_t size, const char *what)
{
    size_t bytes;
    if (!request_bytes(count, size, what, &bytes)) return NULL;
    return allocated(malloc(bytes ? bytes : 1), what, bytes);
}

void *adia_calloc(size_t count, size_t size, const char *what)
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

int64_t adia_vector_bytes(int32_t rows, int32_t cols, adia_value_type vt)
{
    return ((int64_t)cols + 2 * (int64_t)rows) * (int64_t)adia_value_size(vt);
}
