/* registry.c -- the preconditioner kinds: a new kind is one file plus one
 * line here. */
#include "precond.h"

#include <string.h>

extern const adia_precond_ops adia__precond_none, adia__precond_jacobi, adia__precond_cheb,
    adia__precond_mg, adia__precond_agg;

#define MAX_KINDS 16
static const adia_precond_ops *kinds[MAX_KINDS] = {
    &adia__precond_none,
    &adia__precond_jacobi,
    &adia__precond_cheb,
    &adia__precond_mg,
    &adia__precond_agg,
};

const adia_precond_ops *adia__precond_find(const char *name)
{
    for (int i = 0; i < MAX_KINDS && kinds[i]; i++)
        if (name && strcmp(kinds[i]->name, name) == 0) return kinds[i];
    return NULL;
}

const char *adia__precond_list(void)
{
    static char buf[256];
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < MAX_KINDS && kinds[i]; i++) {
        size_t l = strlen(kinds[i]->name);
        if (k + l + 3 >= sizeof buf) break;
        if (k) buf[k++] = ',', buf[k++] = ' ';
        memcpy(buf + k, kinds[i]->name, l + 1);
        k += l;
    }
    return buf;
}

adia_status adia__precond_register(const adia_precond_ops *ops)
{
    if (!ops || !ops->name || !ops->setup || !ops->apply)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia__precond_register: a kind needs a name, "
                          "setup and apply");
    int i = 0;
    for (; i < MAX_KINDS && kinds[i]; i++)
        if (strcmp(kinds[i]->name, ops->name) == 0) break;
    if (i == MAX_KINDS)
        return adia__error(ADIA_ERR_NO_MEMORY, "adia__precond_register: %d kinds at most",
                          MAX_KINDS);
    kinds[i] = ops;
    return ADIA_OK;
}
