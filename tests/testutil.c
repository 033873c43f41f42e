/* testutil.c -- see testutil.h */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#include "testutil.h"

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#include "cuda/diag_build.h"
#endif

#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int test_passed, test_failed;

int test_end(const char *file)
{
    const char *base = strrchr(file, '/');
    printf("%s: %d passed, %d failed\n", base ? base + 1 : file, test_passed,
           test_failed);
    return test_failed ? 1 : 0;
}

int test_contains(const char *haystack, const char *needle)
{
    return haystack && needle && strstr(haystack, needle) != NULL;
}

double test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 4503599627370496.0 - 1.0;
}

void test_rand_vector(uint64_t *state, double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) v[i] = test_rand(state);
}

void test_same_bytes(const char *label, const char *what, const void *a, const void *b,
                     int64_t n, size_t sz)
{
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz)) bad = i;
    CHECK(bad < 0, "%s: %s differs first at index %lld (of %lld)", label, what, (long long)bad,
          (long long)n);
}

double test_rel_err(const double *a, const double *b, int64_t n)
{
    double num = 0, den = 1e-300;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) != isnan(b[i])) return NAN;
        if (isnan(b[i])) continue;
        double d = fabs(a[i] - b[i]);
        if (d > num) num = d;
        if (fabs(b[i]) > den) den = fabs(b[i]);
    }
    return num / den;
}

adia_matrix *test_random_matrix(uint64_t seed, int32_t rows, int32_t cols,
                                double density)
{
    uint64_t st = seed * 2654435761u + 1;
    int64_t cap = (int64_t)(density * rows * cols) + 1;
    int32_t *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    int64_t n = 0;
    for (int64_t k = 0; k < cap && rows > 0 && cols > 0; k++) {
        int32_t i = (int32_t)((test_rand(&st) + 1) / 2 * rows);
        if (i % 7 == 3) continue; /* some empty rows */
        r[n] = i < rows ? i : rows - 1;
        int32_t j = (int32_t)((test_rand(&st) + 1) / 2 * cols);
        c[n] = j < cols ? j : cols - 1;
        v[n] = test_rand(&st);
        n++;
    }
    adia_matrix *A = NULL;
    if (adia_matrix_create_coo(rows, cols, n, r, c, v, ADIA_DOUBLE, &A) != ADIA_OK)
        fprintf(stderr, "test_random_matrix: %s\n", adia_last_error());
    free(r);
    free(c);
    free(v);
    return A;
}

adia_matrix *test_generate(const char *spec)
{
    adia_matrix *A = NULL;
    adia_status s = adia_matrix_generate(spec, &A);
    CHECK(s == ADIA_OK, "generate %s: %s", spec, adia_last_error());
    return A;
}

adia_plan *test_plan_fixed(const adia_matrix *A, const char *format, adia_value_type vt,
                           int device)
{
    adia_plan *P = NULL;
    adia_plan_hints h = {.expected_calls = 100, .vtype = vt, .device = device,
                         .chooser = ADIA_CHOOSE_FIXED, .format = format};
    adia_status s = adia_plan_create(A, &h, &P);
    CHECK(s == ADIA_OK, "%s plan %s (%s): %s", device ? "GPU" : "CPU", format,
          adia_value_type_name(vt), adia_last_error());
    return s == ADIA_OK ? P : NULL;
}

double test_solve_known(const adia_matrix *A, adia_plan *P, const adia_operator *op,
                        const adia_solve_options *o, uint64_t seed, adia_solve_info *info,
                        adia_status *status)
{
    int32_t n = adia_matrix_rows(A);
    double *xs = malloc((size_t)n * sizeof *xs), *b = malloc((size_t)n * sizeof *b),
           *x = calloc((size_t)n, sizeof *x);
    double err = INFINITY, num = 0, den = 0;
    test_rand_vector(&seed, xs, n);
    *status = adia_matrix_spmv(A, 1.0, xs, 0.0, b);
    if (*status == ADIA_OK)
        *status = op ? adia_solve_operator(op, b, x, o, info) : adia_solve(A, P, b, x, o, info);
    for (int32_t i = 0; *status == ADIA_OK && i < n; i++) {
        num += (x[i] - xs[i]) * (x[i] - xs[i]);
        den += xs[i] * xs[i];
    }
    if (*status == ADIA_OK) err = sqrt(num / den);
    free(xs);
    free(b);
    free(x);
    return err;
}

double test_scaled_residual(const adia_matrix *A, const double *b, const double *x, int e)
{
    int32_t n = adia_matrix_rows(A);
    double *bs = malloc((size_t)n * sizeof *bs + 8), *xs = malloc((size_t)n * sizeof *xs + 8),
           *r = malloc((size_t)n * sizeof *r + 8), num = 0, den = 0;
    for (int32_t i = 0; i < n; i++) {
        bs[i] = ldexp(b[i], -e);
        xs[i] = ldexp(x[i], -e);
    }
    adia_status s = adia_matrix_spmv(A, 1.0, xs, 0.0, r);
    for (int32_t i = 0; i < n; i++) {
        num += (bs[i] - r[i]) * (bs[i] - r[i]);
        den += bs[i] * bs[i];
    }
    free(bs);
    free(xs);
    free(r);
    return s == ADIA_OK ? sqrt(num) / sqrt(den) : INFINITY;
}

int test_cg_ones(const adia_matrix *A, adia_plan *P, adia_solve_options o, double tol, double *ms)
{
    const int32_t n = adia_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b + 8), *x = calloc((size_t)n + 1, sizeof *x);
    for (int32_t i = 0; i < n; i++) x[i] = 1;
    CHECK_OK(adia_matrix_spmv(A, 1.0, x, 0.0, b));
    memset(x, 0, (size_t)n * sizeof *x);
    adia_solve_info info;
    int its = -1;
    if (adia_solve(A, P, b, x, &o, &info) == ADIA_OK && info.converged) {
        const double res = test_scaled_residual(A, b, x, 0);
        CHECK(res <= tol, "CG said converged at %d iterations, own residual %g > %g",
              info.iterations, res, tol);
        its = info.iterations;
        if (ms) *ms = info.time_ms;
    }
    free(b), free(x);
    return its;
}

adia_matrix *test_diag_matrix(uint64_t seed, int32_t m, int32_t n, int nd, const int32_t *off,
                              double fill, double shift, double (*special)(int32_t, int32_t))
{
    int64_t cap = 1;
    for (int d = 0; d < nd; d++) cap += (m < n ? m : n);
    int32_t *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    uint64_t st = seed * 7919 + 3;
    int64_t k = 0;
    for (int d = 0; r && c && v && d < nd; d++)
        for (int32_t i = off[d] < 0 ? -off[d] : 0; i < m && i + off[d] < n; i++) {
            if ((test_rand(&st) + 1) / 2 >= fill) continue;
            double x = test_rand(&st), sp = special ? special(i, i + off[d]) : 0;
            r[k] = i;
            c[k] = i + off[d];
            v[k++] = sp != 0 ? sp : (x == 0 ? 0.5 : x) + shift;
        }
    adia_matrix *A = NULL;
    if (!r || !c || !v || adia_matrix_create_coo(m, n, k, r, c, v, ADIA_DOUBLE, &A) != ADIA_OK)
        fprintf(stderr, "test_diag_matrix: %s\n", r && c && v ? adia_last_error() : "out of memory");
    free(r);
    free(c);
    free(v);
    return A;
}

void test_coo_add(test_coo *m, int64_t r, int64_t c, double v)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->r = realloc(m->r, (size_t)m->cap * sizeof *m->r);
        m->c = realloc(m->c, (size_t)m->cap * sizeof *m->c);
        m->v = realloc(m->v, (size_t)m->cap * sizeof *m->v);
        if (!m->r || !m->c || !m->v) {
            fprintf(stderr, "test_coo_add: out of memory\n");
            exit(1);
        }
    }
    m->r[m->n] = (int32_t)r;
    m->c[m->n] = (int32_t)c;
    m->v[m->n++] = v;
}

adia_matrix *test_coo_matrix(test_coo *m)
{
    adia_matrix *A = NULL;
    adia_status s = adia_matrix_create_coo(m->rows, m->cols, m->n, m->r, m->c, m->v, ADIA_DOUBLE, &A);
    CHECK(s == ADIA_OK, "test_coo_matrix %d x %d, %lld entries: %s", (int)m->rows, (int)m->cols,
          (long long)m->n, adia_last_error());
    free(m->r);
    free(m->c);
    free(m->v);
    memset(m, 0, sizeof *m);
    return A;
}

#ifdef ADIA_HAVE_CUDA
void *test_gpu_upload(const double *h, int64_t n, int fl)
{
    size_t vs = fl ? 4 : 8;
    void *t = malloc((size_t)n * vs + 8), *d = NULL;
    if (!t) return NULL;
    for (int64_t i = 0; i < n; i++) if (fl) ((float *)t)[i] = (float)h[i]; else ((double *)t)[i] = h[i];
    if (cudaMalloc(&d, (size_t)n * vs + 8) != cudaSuccess ||
        cudaMemcpy(d, t, (size_t)n * vs, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(d);
        d = NULL;
    }
    free(t);
    return d;
}

void *test_gpu_copy(const void *h, size_t bytes)
{
    void *d = NULL;
    cudaError_t e = cudaMalloc(&d, bytes ? bytes : 1);
    if (e == cudaSuccess && bytes) e = cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    CHECK(e == cudaSuccess, "device copy of %zu bytes: %s", bytes, cudaGetErrorString(e));
    if (e == cudaSuccess) return d;
    cudaFree(d);
    return NULL;
}

int test_gpu_csr_upload(const adia_matrix *A, adia_gpu_csr *g)
{
    adia_csr_view v;
    memset(g, 0, sizeof *g);
    if (!A) return 0;
    const adia_status s = adia_matrix_csr(A, &v);
    CHECK(s == ADIA_OK, "the matrix's CSR: %s", adia_last_error());
    if (s != ADIA_OK) return 0;
    *g = (adia_gpu_csr){v.rows, v.cols, v.nnz,
                        test_gpu_copy(v.rowptr, ((size_t)v.rows + 1) * sizeof *v.rowptr),
                        test_gpu_copy(v.colind, (size_t)v.nnz * sizeof *v.colind),
                        test_gpu_copy(v.values, (size_t)v.nnz * sizeof *v.values)};
    return g->rowptr && g->colind && g->values;
}

void test_gpu_csr_free(adia_gpu_csr *g)
{
    cudaFree((void *)g->rowptr);
    cudaFree((void *)g->colind);
    cudaFree((void *)g->values);
    memset(g, 0, sizeof *g);
}

int test_gpu_download(double *h, const void *d, int64_t n, int fl)
{
    size_t vs = fl ? 4 : 8;
    void *t = malloc((size_t)n * vs + 8);
    int ok = t && cudaMemcpy(t, d, (size_t)n * vs, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (int64_t i = 0; ok && i < n; i++) h[i] = fl ? ((float *)t)[i] : ((double *)t)[i];
    free(t);
    return ok ? 0 : -1;
}

double test_gpu_plan_error(adia_plan *P, const adia_matrix *A)
{
    const int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    const int fl = adia_plan_value_type(P) == ADIA_FLOAT;
    double *x = malloc((size_t)n * 8 + 8), *y = calloc((size_t)m + 1, 8),
           *ref = malloc((size_t)m * 8 + 8);
    uint64_t seed = 11;
    for (int32_t j = 0; x && j < n; j++) x[j] = fl ? (float)test_rand(&seed) : test_rand(&seed);
    void *dx = x ? test_gpu_upload(x, n, fl) : NULL, *dy = y ? test_gpu_upload(y, m, fl) : NULL;
    double err = INFINITY;
    if (dx && dy && y && ref && adia_spmv(P, 1.0, dx, 0.0, dy) == ADIA_OK &&
        cudaDeviceSynchronize() == cudaSuccess && test_gpu_download(y, dy, m, fl) == 0 &&
        adia_matrix_spmv(A, 1.0, x, 0.0, ref) == ADIA_OK)
        err = m > 0 ? test_rel_err(y, ref, m) : 0;
    cudaFree(dx);
    cudaFree(dy);
    free(x), free(y), free(ref);
    return err;
}

adia_status test_gpu_format_spmv(adia_format *F, double alpha, const double *x, double beta,
                                 double *y)
{
    int32_t m = adia_format_rows(F), n = adia_format_cols(F);
    int fl = adia_format_value_type(F) == ADIA_FLOAT;
    void *dx = test_gpu_upload(x, n, fl), *dy = test_gpu_upload(y, m, fl);
    adia_status s = ADIA_ERR_CUDA;
    if (dx && dy) {
        s = adia_format_spmv_gpu(F, alpha, dx, beta, dy, NULL);
        if (s == ADIA_OK && (cudaDeviceSynchronize() != cudaSuccess || test_gpu_download(y, dy, m, fl)))
            s = ADIA_ERR_CUDA;
    }
    cudaFree(dx);
    cudaFree(dy);
    return s;
}

#endif

static double dot_n(const double *a, const double *b, int32_t n)
{
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* z = M r, r and z host doubles; device: through the GPU (1 when done). */
static int precond_apply_host(adia_precond *M, const double *r, double *z, int32_t n, int device)
{
    if (!device) return adia_precond_apply(M, r, z, NULL) == ADIA_OK;
#ifdef ADIA_HAVE_CUDA
    void *dr = test_gpu_upload(r, n, 0), *dz = test_gpu_upload(r, n, 0);
    int ok = dr && dz && adia_precond_apply(M, dr, dz, NULL) == ADIA_OK &&
             cudaDeviceSynchronize() == cudaSuccess && test_gpu_download(z, dz, n, 0) == 0;
    cudaFree(dr);
    cudaFree(dz);
    return ok;
#else
    (void)z;
    return 0;
#endif
}

void test_precond_spd(adia_precond *M, int32_t n, int device, uint64_t seed, const char *label)
{
    double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
    double *mx = malloc((n + 1) * sizeof *mx), *my = malloc((n + 1) * sizeof *my);
    for (int trial = 0; trial < 3 && x && y && mx && my; trial++) {
        test_rand_vector(&seed, x, n);
        test_rand_vector(&seed, y, n);
        CHECK(precond_apply_host(M, x, mx, n, device), "%s: apply: %s", label, adia_last_error());
        CHECK(precond_apply_host(M, y, my, n, device), "%s: apply: %s", label, adia_last_error());
        const double a = dot_n(x, my, n), b = dot_n(y, mx, n);
        const double xx = dot_n(x, mx, n), yy = dot_n(y, my, n);
        CHECK(fabs(a - b) <= 1e-12 * sqrt(fabs(xx * yy)), "%s: x'My %.17g, y'Mx %.17g", label, a,
              b);
        CHECK(xx > 0 && yy > 0, "%s: x'Mx %g, y'My %g: not positive", label, xx, yy);
    }
    free(x), free(y), free(mx), free(my);
}

adia_matrix *test_rounded(const adia_matrix *A, adia_value_type vt)
{
    adia_csr_view v;
    adia_matrix *R = NULL;
    if (adia_matrix_csr(A, &v) != ADIA_OK) return NULL;
    float *f = vt == ADIA_FLOAT ? malloc(((size_t)v.nnz + 1) * sizeof *f) : NULL;
    for (int64_t i = 0; f && i < v.nnz; i++) f[i] = (float)v.values[i];
    adia_status s = vt == ADIA_FLOAT ? (f ? adia_matrix_create_csr(v.rows, v.cols, v.nnz, v.rowptr,
                                                                  v.colind, f, ADIA_FLOAT, &R)
                                          : ADIA_ERR_NO_MEMORY)
                                     : adia_matrix_copy(A, &R);
    if (s != ADIA_OK) fprintf(stderr, "test_rounded: %s\n", adia_last_error());
    free(f);
    return R;
}

adia_matrix *test_dense_matrix(int32_t rows, int32_t cols, const double *a)
{
    int64_t cap = (int64_t)rows * cols + 1;
    int32_t *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    int64_t n = 0;
    for (int32_t i = 0; i < rows; i++)
        for (int32_t j = 0; j < cols; j++)
            if (a[(int64_t)i * cols + j] != 0) {
                r[n] = i;
                c[n] = j;
                v[n++] = a[(int64_t)i * cols + j];
            }
    adia_matrix *A = NULL;
    if (adia_matrix_create_coo(rows, cols, n, r, c, v, ADIA_DOUBLE, &A) != ADIA_OK)
        fprintf(stderr, "test_dense_matrix: %s\n", adia_last_error());
    free(r);
    free(c);
    free(v);
    return A;
}

const char *test_shared_dir(void)
{
    static const char *dir = "../shared/matrices";
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

const char *test_shared_path(const char *name)
{
    static char buf[1024];
    const char *dir = test_shared_dir();
    if (!dir) return NULL;
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

double test_format_spmv_error(const adia_format *F, const adia_matrix *A,
                              uint64_t seed, double alpha, double beta)
{
    int32_t m = adia_matrix_rows(A), n = adia_matrix_cols(A);
    int fl = adia_format_value_type(F) == ADIA_FLOAT;
    double *x = malloc(((size_t)n + 1) * sizeof *x);
    double *y0 = calloc((size_t)m + 1, sizeof *y0);   /* calloc: m = 0 leaves it unwritten */
    double *ref = malloc(((size_t)m + 1) * sizeof *ref);
    double *got = malloc(((size_t)m + 1) * sizeof *got);
    void *xt = malloc(((size_t)n + 1) * 8), *yt = malloc(((size_t)m + 1) * 8);
    if (!x || !y0 || !ref || !got || !xt || !yt) {
        fprintf(stderr, "test_format_spmv_error: out of memory\n");
        free(x); free(y0); free(ref); free(got); free(xt); free(yt);
        return INFINITY;
    }
    uint64_t st = seed + 17;
    test_rand_vector(&st, x, n);
    test_rand_vector(&st, y0, m);
    if (fl) { /* the reference sees the same rounded inputs */
        for (int32_t j = 0; j < n; j++) x[j] = (float)x[j];
        for (int32_t i = 0; i < m; i++) y0[i] = (float)y0[i];
    }
    memcpy(ref, y0, (size_t)m * sizeof *ref);
    adia_matrix_spmv(A, alpha, x, beta, ref);
    for (int32_t j = 0; j < n; j++)
        if (fl) ((float *)xt)[j] = (float)x[j]; else ((double *)xt)[j] = x[j];
    for (int32_t i = 0; i < m; i++)
        if (fl) ((float *)yt)[i] = (float)y0[i]; else ((double *)yt)[i] = y0[i];
    double err = INFINITY;
    if (adia_format_spmv(F, alpha, xt, beta, yt) == ADIA_OK) {
        for (int32_t i = 0; i < m; i++)
            got[i] = fl ? ((float *)yt)[i] : ((double *)yt)[i];
        err = test_rel_err(got, ref, m);
    } else {
        fprintf(stderr, "spmv %s: %s\n", adia_format_name(F), adia_last_error());
    }
    free(x); free(y0); free(ref); free(got); free(xt); free(yt);
    return err;
}

int test_rows_equal(const adia_matrix *A, int64_t first, const adia_matrix *P)
{
    adia_csr_view a, p;
    if (adia_matrix_csr(A, &a) != ADIA_OK || adia_matrix_csr(P, &p) != ADIA_OK) return 0;
    if (p.cols != a.cols || first < 0 || first + p.rows > a.rows) {
        fprintf(stderr, "rows %lld.. (%d x %d) do not fit in %d x %d\n", (long long)first,
                p.rows, p.cols, a.rows, a.cols);
        return 0;
    }
    for (int32_t i = 0; i < p.rows; i++) {
        int64_t ka = a.rowptr[first + i], n = p.rowptr[i + 1] - p.rowptr[i];
        int same = a.rowptr[first + i + 1] - ka == n;
        for (int64_t k = 0; same && k < n; k++)
            same = a.colind[ka + k] == p.colind[p.rowptr[i] + k] &&
                   !memcmp(&a.values[ka + k], &p.values[p.rowptr[i] + k], sizeof(double));
        if (!same) {
            fprintf(stderr, "row %lld differs\n", (long long)(first + i));
            return 0;
        }
    }
    return 1;
}

double test_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
