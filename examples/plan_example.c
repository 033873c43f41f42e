/* plan_example.c -- the planner in ten lines: say how often you will
 * multiply, let adia choose and build the format once, then multiply many
 * times (an iterative solver's loop).  adia_plan_explain says why. */
#include <adia.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    adia_matrix *A = NULL;
    adia_plan *P = NULL;
    adia_plan_hints hints = {.expected_calls = 1000};   /* zero = defaults (CPU, double) */
    static double x[10000], y[10000];
    char why[4096];
    adia_status s = adia_matrix_generate("lap2d5:100", &A);          /* 10000 x 10000 */
    if (s == ADIA_OK) s = adia_plan_create(A, &hints, &P);           /* analyse, choose, build */
    for (int i = 0; i < 10000; i++) x[i] = 1.0;
    for (int it = 0; s == ADIA_OK && it < 100; it++) s = adia_spmv(P, 1.0, x, 0.0, y);  /* y = A*x */
    if (s == ADIA_OK) s = adia_plan_explain(P, why, sizeof why);
    if (s == ADIA_OK) printf("%s", why);
    else fprintf(stderr, "error: %s: %s\n", adia_status_string(s), adia_last_error());
    /* a test too: the row sums of the Laplacian are 0 inside, 1 on edges, 2 in corners */
    int ok = s == ADIA_OK && y[0] == 2 && y[1] == 1 && y[101] == 0 && y[9999] == 2;
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
    return ok ? 0 : 1;
}
