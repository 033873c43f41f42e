#define _DEFAULT_SOURCE   /* sysconf(_SC_AVPHYS_PAGES) */
/* budget.c -- the one memory budget: how many bytes of host memory one
 * operation may take at its peak.  Readers, generators, conversions,
 * products and the planner compute their whole peak before any work and ask
 * adia__budget_check; the checked allocator asks it for every large request.
 * Linux grants almost any malloc lazily and kills the process later, so the
 * check is the only place a too-large request can be refused cleanly. */
#include "internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static _Atomic int64_t budget_set;   /* 0: the default */

/* Half of what the system can give now: the peak estimates are estimates,
 * the page cache and other processes need room, and a budget of everything
 * turns a mistyped header into minutes of swapping before the refusal. */
static int64_t default_budget(void) { return adia_memory_available() / 2; }

/* Physical memory the system can still give (Linux MemAvailable; else
 * free pages; else unknown = INT64_MAX). */
int64_t adia_memory_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb > 0) return kb > (unsigned long long)(INT64_MAX / 1024) ? INT64_MAX : (int64_t)kb * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    int64_t bytes;
    if (pages > 0 && page > 0 && adia_mul_i64(pages, page, &bytes)) return bytes;
    return INT64_MAX;
}

adia_status adia_set_memory_budget(int64_t bytes)
{
    atomic_store(&budget_set, bytes > 0 ? bytes : 0);
    return ADIA_OK;
}

int64_t adia_memory_budget(void)
{
    int64_t b = atomic_load(&budget_set);
    return b > 0 ? b : default_budget();
}

/* "17.2 GB", "512.0 MB", "800 bytes", as the messages print sizes */
static void human(char *buf, size_t len, int64_t bytes)
{
    if (bytes >= 1000000000000) snprintf(buf, len, "%.1f TB", bytes / 1e12);
    else if (bytes >= 1000000000) snprintf(buf, len, "%.1f GB", bytes / 1e9);
    else if (bytes >= 1000000) snprintf(buf, len, "%.1f MB", bytes / 1e6);
    else if (bytes >= 1000) snprintf(buf, len, "%.1f kB", bytes / 1e3);
    else snprintf(buf, len, "%lld bytes", (long long)bytes);
}

adia_status adia__budget_check(int64_t bytes, const char *what)
{
    return adia__budget_check_limit(bytes, 0, NULL, what);
}

adia_status adia__budget_check_limit(int64_t bytes, int64_t limit, const char *limit_name,
                                     const char *what)
{
    int64_t set = atomic_load(&budget_set);
    int64_t budget = set > 0 ? set : default_budget();
    const char *source = set > 0 ? "set by adia_set_memory_budget / --memory"
                                 : "half the memory available now; change it with --memory";
    if (limit > 0 && limit < budget) {
        budget = limit;
        source = limit_name;
    }
    if (bytes >= 0 && bytes <= budget) return ADIA_OK;
    char need[32], have[32];
    if (bytes < 0) snprintf(need, sizeof need, "more than 9.2 EB");
    else human(need, sizeof need, bytes);
    human(have, sizeof have, budget);
    return adia__error(ADIA_ERR_NO_MEMORY, "%s needs %s, budget %s (%s)", what, need, have, source);
}

adia_status adia__device_memory_check(int64_t bytes, int64_t free_bytes, const char *what)
{
    if (bytes >= 0 && bytes <= free_bytes) return ADIA_OK;
    char need[32], have[32];
    if (bytes < 0) snprintf(need, sizeof need, "more than 9.2 EB");
    else human(need, sizeof need, bytes);
    human(have, sizeof have, free_bytes);
    return adia__error(ADIA_ERR_NO_MEMORY, "%s needs %s of device memory, %s free on the device",
                      what, need, have);
}
