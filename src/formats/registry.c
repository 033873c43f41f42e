/* registry.c -- the one table of storage formats: adding a format is one
 * module file plus one line here (in the order `adia info` lists them). */
#include "internal.h"

/* One line per format; the list ends with the comment line. */
#define FORMATS(X) \
    X(csr) \
    X(coo) \
    X(csc) \
    X(ell) \
    X(hyb) \
    X(sell) \
    X(bcsr) \
    X(pbcsr) \
    X(pcsr) \
    X(rgcsr) \
    X(cmrs) \
    X(qcsr) \
    X(mqt) \
    X(scsr) \
    X(sbcsr) \
    X(dia) \
    X(hdi) \
    X(brcsd1) \
    X(brcsd2) \
    X(crsd) \
    X(hm) \
    X(cdm) \
    /* end of the list */

#define DECLARE(name) extern const adia_format_ops adia_format_##name;
FORMATS(DECLARE)
#define ENTRY(name) &adia_format_##name,
static const adia_format_ops *const registry[] = {FORMATS(ENTRY)};

int adia_format_count(void) { return (int)(sizeof registry / sizeof *registry); }

const char *adia_format_name_at(int i)
{
    return i >= 0 && i < adia_format_count() ? registry[i]->name : NULL;
}

const adia_format_ops *adia_format_ops_find(const char *name)
{
    for (int i = 0; name && i < adia_format_count(); i++)
        if (!strcmp(registry[i]->name, name)) return registry[i];
    return NULL;
}

int adia_format_exists(const char *name) { return adia_format_ops_find(name) != NULL; }
