/* mg_testutil.h -- what the multigrid's host tests share (test_mg_semi.c,
 * test_mg_slab.c): a generated matrix's stencil on the grid found from
 * its offsets. */
#ifndef ADIA_MG_TESTUTIL_H
#define ADIA_MG_TESTUTIL_H

#include "testutil.h"
#include "precond/mg.h"

/* S: the stencil of the generated matrix spec (host); 0 on failure (a
 * failed check). */
static int host_stencil(const char *spec, mg_stencil *S)
{
    adia_matrix *A = test_generate(spec);
    if (!A) return 0;
    int32_t n[3];
    const int zero[3] = {0, 0, 0};
    adia_status s = adia__mg_grid(&A->csr, zero, n);
    if (s == ADIA_OK) s = adia__mg_stencil_from_csr(&A->csr, n, S);
    CHECK(s == ADIA_OK, "%s: stencil: %s", spec, adia_last_error());
    adia_matrix_destroy(A);
    return s == ADIA_OK;
}

#endif
