/* cache.c -- where adia keeps what it measured or compiled once per
 * machine (the NVRTC kernels, the CPU cost model's calibration):
 * $ADIA_CACHE_DIR, else ~/.cache/adia, made on first use. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdio.h>
#include <sys/stat.h>

bool adia__cache_path(const char *name, char *path, size_t len)
{
    const char *dir = getenv("ADIA_CACHE_DIR");
    char base[900];
    if (dir && *dir) {
        snprintf(base, sizeof base, "%s", dir);
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home) return false;
        snprintf(base, sizeof base, "%s/.cache", home);
        mkdir(base, 0755);
        snprintf(base, sizeof base, "%s/.cache/adia", home);
    }
    mkdir(base, 0755);
    int n = snprintf(path, len, "%s/%s", base, name);
    return n > 0 && (size_t)n < len;
}
