/* cusparse_util.h -- cuSPARSE statuses as adia_status, with the vendor's
 * name and text kept in the message (the csr format's cusparse kernel and
 * the benchmark's reference). */
#ifndef ADIA_CUSPARSE_UTIL_H
#define ADIA_CUSPARSE_UTIL_H

#include "internal.h"

#include <cusparse.h>

static inline adia_status adia_cusparse_check(cusparseStatus_t s, const char *what)
{
    if (s == CUSPARSE_STATUS_SUCCESS) return ADIA_OK;
    return adia__error(ADIA_ERR_CUSPARSE, "%s: %s (%s)", what, cusparseGetErrorString(s),
                      cusparseGetErrorName(s));
}
#define ADIA_CUSPARSE_TRY(call) ADIA_TRY(adia_cusparse_check((call), #call))

#endif
