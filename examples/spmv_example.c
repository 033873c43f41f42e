/* spmv_example.c -- the C API in a few lines: build a matrix from COO
 * triplets, store it as DIA (CSR if DIA is unavailable), multiply, clean up.
 * Every call returns adia_status; adia_last_error() says what went wrong. */
#include <adia.h>
#include <stdio.h>

int main(void)
{
    /* 4 x 4 tridiagonal matrix: 2 on the diagonal, -1 beside it */
    int32_t row[] = {0, 0, 1, 1, 1, 2, 2, 2, 3, 3};
    int32_t col[] = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3};
    double val[] = {2, -1, -1, 2, -1, -1, 2, -1, -1, 2};
    double x[] = {1, 2, 3, 4}, y[4];
    adia_matrix *A = NULL;
    adia_format *F = NULL;
    adia_status s = adia_matrix_create_coo(4, 4, 10, row, col, val, ADIA_DOUBLE, &A);
    if (s == ADIA_OK && adia_format_build(A, "dia", NULL, ADIA_DOUBLE, &F) != ADIA_OK)
        s = adia_format_build(A, "csr", NULL, ADIA_DOUBLE, &F);   /* fallback */
    if (s == ADIA_OK) s = adia_format_spmv(F, 1.0, x, 0.0, y);    /* y = A*x */
    if (s == ADIA_OK)
        printf("%s: y = [%g %g %g %g]\n", adia_format_name(F), y[0], y[1], y[2], y[3]);
    else
        fprintf(stderr, "error: %s: %s\n", adia_status_string(s), adia_last_error());
    adia_format_destroy(F);
    adia_matrix_destroy(A);
    /* the exact answer is [0 0 0 5]: a test, not only an example */
    return s == ADIA_OK && y[0] == 0 && y[1] == 0 && y[2] == 0 && y[3] == 5 ? 0 : 1;
}
