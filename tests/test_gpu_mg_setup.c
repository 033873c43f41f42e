/* test_gpu_mg_setup.c -- the multigrid set-up on the device (mg_device.c,
 * mg_setup_gpu.cu) against its host twin, level by level: the grid check
 * and the points present, the finest stencil read from dia / hdi / brcsd2
 * plans (exact; a double dia plan lends its diagonals, the others are
 * copied), every level's couplings (the coarsening rule's input: equal
 * integers, so the same directions halve; aniso3d coarsens xy, aniso3d
 * with z strong z alone), every Galerkin level (1e-14 relative to the level's
 * largest coefficient), the eigenvalue estimate (1e-12; level 0's bound and
 * steps exactly, also through the slab callbacks), the smoothers' scaling,
 * each level's DIA plan against the host stencil's product; float plans
 * against the host twin of the float-rounded matrix; the errors of
 * a matrix off its grid and of a zero diagonal word for word the host's;
 * explain says where the set-up ran. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#ifdef ADIA_HAVE_CUDA
#include <cuda_runtime.h>
#include "precond/mg.h"
#endif

#ifndef ADIA_HAVE_CUDA
int main(void) { TEST_SKIP("built without CUDA"); }
#else

/* max |a - b| over the level, relative to the largest |b|; -1 when the
 * points present differ. */
static double stencil_diff(const mg_stencil *a, const mg_stencil *b)
{
    double big = 0, err = 0;
    for (int p = 0; p < MG_POINTS; p++) {
        if (!a->coef[p] != !b->coef[p]) return -1;
        for (int64_t i = 0; b->coef[p] && i < b->rows; i++) {
            big = fmax(big, fabs(b->coef[p][i]));
            err = fmax(err, fabs(a->coef[p][i] - b->coef[p][i]));
        }
    }
    return big > 0 ? err / big : err;
}

static int download(const mg_stencil *d, mg_stencil *h)
{
    adia_status s = adia__mg_gpu_download(d, h);
    CHECK(s == ADIA_OK, "download: %s", adia_last_error());
    return s == ADIA_OK;
}

/* Level l's DIA plan on the device against the host stencil's product. */
static void check_plan(const char *what, int l, const mg_stencil *d, const mg_stencil *h,
                       adia_value_type vt)
{
    int64_t off[MG_POINTS];
    adia_device_dia dd = {.rows = (int32_t)h->rows, .cols = (int32_t)h->rows, .offsets = off,
                          .values_type = vt, .adopt = 1};
    CHECK_OK(adia__mg_gpu_to_dia(d, vt, off, &dd.ndiag, &dd.values));
    adia_plan_hints hints = {.expected_calls = 1, .vtype = vt, .device = 1,
                             .chooser = ADIA_CHOOSE_FIXED, .format = "dia"};
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create_device_dia(&dd, &hints, &P));
    if (!P) return;
    const int64_t n = h->rows;
    const int fl = vt == ADIA_FLOAT;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *yr = malloc(n * sizeof *yr);
    uint64_t seed = 3 + (uint64_t)l;
    test_rand_vector(&seed, x, n);
    adia__mg_stencil_apply(h, x, yr);
    void *dx = test_gpu_upload(x, n, fl), *dy = test_gpu_upload(x, n, fl);
    CHECK_OK(adia_spmv(P, 1.0, dx, 0.0, dy));
    if (cudaDeviceSynchronize() == cudaSuccess && test_gpu_download(y, dy, n, fl) == 0) {
        const double err = test_rel_err(y, yr, n);
        CHECK(err < (fl ? 1e-5 : 1e-13), "%s level %d: plan product error %g", what, l, err);
    }
    cudaFree(dx), cudaFree(dy);
    free(x), free(y), free(yr);
    adia_plan_destroy(P);
}

/* One process's slab callbacks (the estimate's: sums and max as they are,
 * no ghost planes to fill). */
static void one_sum(void *ctx, double *v, int count) { (void)ctx, (void)v, (void)count; }
static adia_status one_agree(void *ctx, adia_status s) { (void)ctx; return s; }
static adia_status one_exchange(void *ctx, int level, double *v, int device, void *stream)
{
    (void)ctx, (void)level, (void)v, (void)device, (void)stream;
    return ADIA_OK;
}
static const adia_slab_comm one = {.sum = one_sum, .max = one_sum, .agree = one_agree,
                                   .exchange = one_exchange};

/* Device estimate e against the host's h: the quotient to rounding (the
 * sums' order), the bound and the steps exactly. */
static void same_estimate(const char *what, int l, const char *how, const mg_estimate *e,
                          const mg_estimate *h)
{
    CHECK(fabs(e->q - h->q) <= 1e-12 * fabs(h->q) && e->bound == h->bound &&
              e->steps == h->steps, "%s level %d%s: estimate %.17g, bound %.17g, %d steps "
          "(device), %.17g, %.17g, %d (host)", what, l, how, e->q, e->bound, e->steps, h->q,
          h->bound, h->steps);
}

/* The estimate (alone and through the slab callbacks: level 0 from the
 * checkerboard) and every smoother's scaling of one level. */
static void check_smoother(const char *what, int l, const mg_stencil *d, const mg_stencil *h)
{
    mg_estimate ed, eh, es;
    CHECK_OK(adia__mg_gpu_estimate(d, 1, l == 0, &ed));
    CHECK_OK(adia__mg_estimate(h, l == 0, &eh));
    same_estimate(what, l, "", &ed, &eh);
    CHECK_OK(adia__mg_gpu_estimate_slab(d, 0, 0, h->rows, &one, l, l == 0, &es));
    same_estimate(what, l, " (slab)", &es, &eh);
    const int64_t n = h->rows;
    double *sh = malloc(n * sizeof *sh), *sd = malloc(n * sizeof *sd);
    for (int k = 0; k < 3; k++) {
        mg_level L = {.rows = n};
        CHECK_OK(adia__mg_smoother_setup(h, l == 0, (mg_smoother)k, sh, &L));
        void *s = NULL;
        CHECK_OK(adia__mg_gpu_scaling(d, (mg_smoother)k, adia__mg_jacobi_omega(h, L.lmax),
                                      ADIA_DOUBLE, &s));
        if (s && test_gpu_download(sd, s, n, 0) == 0)
            CHECK(test_rel_err(sd, sh, n) < 1e-12, "%s level %d smoother %d: error %g", what, l,
                  k, test_rel_err(sd, sh, n));
        cudaFree(s);
    }
    free(sh), free(sd);
}

/* The host twin's finest stencil of A (values rounded to float for a
 * float plan, as the plan stores them). */
static int host_fine(adia_matrix *A, int fl, int32_t n[3], mg_stencil *h)
{
    if (fl)
        for (int64_t k = 0; k < A->csr.nnz; k++)
            ((double *)A->csr.values)[k] = (double)(float)((double *)A->csr.values)[k];
    const int zero[3] = {0, 0, 0};
    CHECK_OK(adia__mg_grid(&A->csr, zero, n));
    adia_status s = adia__mg_stencil_from_csr(&A->csr, n, h);
    CHECK(s == ADIA_OK, "host stencil: %s", adia_last_error());
    return s == ADIA_OK;
}

static void compare_levels(const char *spec, const char *format, adia_value_type vt)
{
    char what[128];
    snprintf(what, sizeof what, "%s %s %s", spec, format, vt == ADIA_FLOAT ? "float" : "double");
    adia_matrix *A = test_generate(spec);
    adia_plan *P = A ? test_plan_fixed(A, format, vt, 1) : NULL;
    mg_stencil h[MG_MAX_LEVELS], d[MG_MAX_LEVELS];
    memset(h, 0, sizeof h), memset(d, 0, sizeof d);
    int32_t n[3];
    mg_dview v = {.words = NULL};
    char why[160];
    if (!P || !host_fine(A, vt == ADIA_FLOAT, n, &h[0])) goto done;
    adia_status s = adia__mg_gpu_view(P, &v, why, sizeof why);
    CHECK(s == ADIA_OK, "%s: no device view: %s", what, why);
    if (s != ADIA_OK) goto done;
    int64_t bad, bad_diag;
    unsigned mask, hmask = 0;
    double dval;
    CHECK_OK(adia__mg_gpu_check(&v, n, &bad, &mask));
    for (int p = 0; p < MG_POINTS; p++) hmask |= (h[0].coef[p] != NULL) << p;
    CHECK(bad == v.rows && (mask | 1u << 13) == hmask, "%s: check: bad row %lld, points %x "
          "(host %x)", what, (long long)bad, mask, hmask);
    CHECK_OK(adia__mg_gpu_stencil(&v, n, mask, &d[0], &bad_diag, &dval));
    CHECK(bad_diag == v.rows, "%s: bad diagonal at %lld", what, (long long)bad_diag);
    {   /* no direction coarsened (the rule never asks it): refused, nothing left */
        mg_stencil none = {.rows = 0};
        const int not_coarsened[3] = {0, 0, 0};
        CHECK_ERR(adia__mg_gpu_galerkin(&d[0], d[0].n, not_coarsened, &none),
                  ADIA_ERR_INTERNAL, "no direction coarsened");
        CHECK(!none.block, "%s: the refused product's arrays kept", what);
    }
    int levels = 1;
    double worst = 0;
    for (int l = 0; l < MG_MAX_LEVELS - 1 && d[l].coef[13]; l++) {
        mg_stencil back;
        if (!download(&d[l], &back)) break;
        const double err = stencil_diff(&back, &h[l]);
        worst = fmax(worst, err);
        /* the device's Galerkin product runs the host's function: its bits */
        CHECK(err == 0, "%s level %d (%dx%dx%d): stencil error %g (-1: points differ)", what, l,
              h[l].n[0], h[l].n[1], h[l].n[2], err);
        adia__mg_stencil_free(&back);
        if (l > 0) check_plan(what, l, &d[l], &h[l], vt);
        check_smoother(what, l, &d[l], &h[l]);
        mg_level L = {.rows = h[l].rows};
        memcpy(L.n, h[l].n, sizeof L.n);
        if (!adia__mg_coarsen_more(&L)) break;
        int32_t nc[3];
        int coarsened[3], dco[3];
        uint64_t ch[3], cd[3];
        adia__mg_coupling(&h[l], ch);
        CHECK_OK(adia__mg_gpu_coupling(&d[l], cd));
        CHECK(memcmp(ch, cd, sizeof ch) == 0, "%s level %d: couplings %llu %llu %llu (host), "
              "%llu %llu %llu (device)", what, l, (unsigned long long)ch[0],
              (unsigned long long)ch[1], (unsigned long long)ch[2], (unsigned long long)cd[0],
              (unsigned long long)cd[1], (unsigned long long)cd[2]);
        int32_t dnc[3];
        adia__mg_coarse_grid(h[l].n, ch, MG_COARSEN_AUTO, nc, coarsened);
        adia__mg_coarse_grid(h[l].n, cd, MG_COARSEN_AUTO, dnc, dco);
        CHECK(memcmp(coarsened, dco, sizeof dco) == 0, "%s level %d: the rule differs", what, l);
        CHECK_OK(adia__mg_galerkin(&h[l], nc, coarsened, &h[l + 1]));
        CHECK_OK(adia__mg_gpu_galerkin(&d[l], nc, coarsened, &d[l + 1]));
        levels++;
    }
    /* every level's estimate at once (streams of their own): each the host's */
    mg_estimate ea[MG_MAX_LEVELS];
    CHECK_OK(adia__mg_gpu_estimate(d, levels, 1, ea));
    for (int l = 0; l < levels; l++) {
        mg_estimate eh;
        CHECK_OK(adia__mg_estimate(&h[l], l == 0, &eh));
        same_estimate(what, l, " (all levels at once)", &ea[l], &eh);
    }
    printf("%s: %d levels, largest stencil difference %.3g (relative), finest stencil %s\n",
           what, levels, worst, d[0].lent ? "the plan's diagonals" : "copied");
done:
    adia__mg_gpu_view_free(&v);
    for (int l = 0; l < MG_MAX_LEVELS; l++) {
        adia__mg_stencil_free(&h[l]);
        adia__mg_gpu_stencil_free(&d[l]);
    }
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

static void test_levels(void)
{
    static const char *specs[] = {"lap2d5:2001x1", "lap2d5:45x33", "lap2d9:41x30",
                                  "lap3d7:13x11x9", "lap3d7:16x8x12", "lap3d27:13x9x11",
                                  "lap3d7:2x3x400", "lap3d7:33", "vardiff3d:21", "vardiff2d:37",
                                  "jump3d:24", "aniso3d:19", "aniso3d:40",
                                  "aniso3d:33,0.01", "aniso3d:21,1000"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        compare_levels(specs[k], "dia", ADIA_DOUBLE);
    compare_levels("lap3d7:31x20x17", "hdi", ADIA_DOUBLE);
    compare_levels("vardiff3d:29", "brcsd2", ADIA_DOUBLE);
    compare_levels("lap3d7:33", "dia", ADIA_FLOAT);
    compare_levels("jump3d:24", "dia", ADIA_FLOAT);
}

static adia_precond *make_mg(adia_plan *P, int float_levels)
{
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    o.float_levels = float_levels;
    adia_precond *M = NULL;
    if (P) CHECK_OK(adia_precond_create(P, &o, &M));
    return M;
}

/* z = M r of the device-built hierarchy against the host-built one's
 * (variable coefficients, box stencils, odd sizes, 1D and 2D): to
 * round-off with every level in double, to float's rounding with the
 * default (the coarse levels in float). */
static void vcycle_parity(const char *spec)
{
    adia_matrix *A = test_generate(spec);
    adia_plan *Pc = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 0) : NULL;
    adia_plan *Pg = A ? test_plan_fixed(A, "dia", ADIA_DOUBLE, 1) : NULL;
    adia_precond *Mc = make_mg(Pc, ADIA_FLOAT_LEVELS_DEFAULT);
    adia_precond *Mg = make_mg(Pg, ADIA_FLOAT_LEVELS_NONE), *Mf = make_mg(Pg, ADIA_FLOAT_LEVELS_DEFAULT);
    if (Mc && Mg && Mf) {
        const int64_t n = adia_matrix_rows(A);
        double *r = malloc(n * sizeof *r), *zc = malloc(n * sizeof *zc);
        double *zg = malloc(n * sizeof *zg);
        uint64_t seed = 29;
        test_rand_vector(&seed, r, n);
        CHECK_OK(adia_precond_apply(Mc, r, zc, NULL));
        void *dr = test_gpu_upload(r, n, 0), *dz = test_gpu_upload(r, n, 0);
        CHECK_OK(adia_precond_apply(Mg, dr, dz, NULL));
        if (cudaDeviceSynchronize() == cudaSuccess && test_gpu_download(zg, dz, n, 0) == 0) {
            const double err = test_rel_err(zg, zc, n);
            printf("%s: V-cycle of the device-built hierarchy vs the host's: %.3g\n", spec, err);
            CHECK(err < 1e-11, "%s: V-cycle GPU vs CPU error %g", spec, err);
        }
        CHECK_OK(adia_precond_apply(Mf, dr, dz, NULL));
        if (cudaDeviceSynchronize() == cudaSuccess && test_gpu_download(zg, dz, n, 0) == 0) {
            const double err = test_rel_err(zg, zc, n);
            CHECK(err > 0 && err < 1e-5, "%s: V-cycle GPU (coarse levels in float) vs CPU error %g",
                  spec, err);
        }
        cudaFree(dr), cudaFree(dz);
        free(r), free(zc), free(zg);
    }
    adia_precond_destroy(Mc);
    adia_precond_destroy(Mg);
    adia_precond_destroy(Mf);
    adia_plan_destroy(Pc);
    adia_plan_destroy(Pg);
    adia_matrix_destroy(A);
}

static void test_vcycle(void)
{
    static const char *specs[] = {"vardiff3d:21", "vardiff2d:37", "jump3d:24", "aniso3d:19",
                                  "lap3d27:13x9x11", "lap2d5:2001x1", "lap3d7:31x20x17",
                                  "aniso3d:40", "aniso3d:21,1000"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) vcycle_parity(specs[k]);
}

/* adia_precond_create's error on plan P (NULL if it succeeds). */
static char *create_error(adia_plan *P, const int grid[3], int max_levels)
{
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = "mg";
    if (grid) memcpy(o.grid, grid, sizeof o.grid);
    o.max_levels = max_levels;
    adia_precond *M = NULL;
    adia_status s = adia_precond_create(P, &o, &M);
    adia_precond_destroy(M);
    if (s == ADIA_OK) return NULL;
    char *e = malloc(strlen(adia_last_error()) + 1);
    if (e) strcpy(e, adia_last_error());
    return e;
}

/* The device set-up fails as the host's, word for word. */
static void same_error(const char *what, adia_matrix *A, const int grid[3], int max_levels)
{
    adia_plan *Pc = test_plan_fixed(A, "dia", ADIA_DOUBLE, 0);
    adia_plan *Pg = test_plan_fixed(A, "dia", ADIA_DOUBLE, 1);
    char *ec = Pc ? create_error(Pc, grid, max_levels) : NULL;
    char *eg = Pg ? create_error(Pg, grid, max_levels) : NULL;
    CHECK(ec && eg && strcmp(ec, eg) == 0, "%s: host \"%s\", device \"%s\"", what,
          ec ? ec : "(none)", eg ? eg : "(none)");
    printf("%s: %s\n", what, eg ? eg : "(none)");
    free(ec), free(eg);
    adia_plan_destroy(Pc);
    adia_plan_destroy(Pg);
}

static void test_errors(void)
{
    adia_matrix *A = test_generate("lap3d7:9");
    if (A) {
        same_error("grid of the wrong size", A, (int[3]){10, 10, 10}, 0);
        same_error("entries off the given grid", A, (int[3]){27, 27, 1}, 0);
        same_error("entries off the given grid 9x81", A, (int[3]){9, 81, 0}, 0);
        adia_matrix_destroy(A);
    }
    A = test_generate("lap3d7:33");   /* one level of 35937 rows: too big to invert */
    if (A) same_error("one level too big", A, NULL, 1);
    adia_matrix_destroy(A);
    A = test_generate("band:300,3");   /* no grid fits: the likeliest named */
    if (A) same_error("band", A, NULL, 0);
    adia_matrix_destroy(A);
    test_coo m = {.rows = 30, .cols = 30};   /* a zero diagonal entry at 17 */
    for (int i = 0; i < 30; i++) {
        test_coo_add(&m, i, i, i == 17 ? 0.0 : 2.0);
        if (i > 0) test_coo_add(&m, i, i - 1, -1);
        if (i + 1 < 30) test_coo_add(&m, i, i + 1, -1);
    }
    A = test_coo_matrix(&m);
    if (A) same_error("zero diagonal", A, NULL, 0);
    adia_matrix_destroy(A);
    m = (test_coo){.rows = 12 * 10, .cols = 12 * 10};   /* 2D 12x10 + one far entry */
    for (int i = 0; i < 120; i++) {
        test_coo_add(&m, i, i, 4);
        if (i % 12) test_coo_add(&m, i, i - 1, -1);
        if (i % 12 < 11) test_coo_add(&m, i, i + 1, -1);
        if (i >= 12) test_coo_add(&m, i, i - 12, -1);
        if (i + 12 < 120) test_coo_add(&m, i, i + 12, -1);
        if (i == 70) test_coo_add(&m, i, i + 36, 0.25);
    }
    A = test_coo_matrix(&m);
    if (A) same_error("an entry off the found grid", A, (int[3]){12, 10, 1}, 0);
    adia_matrix_destroy(A);
}

/* explain: the set-up's place (device for diagonal formats; a CSR plan on
 * the host, with the reason). */
static void test_explain(void)
{
    adia_matrix *A = test_generate("lap3d7:40x33x35");
    static const char *formats[] = {"dia", "csr"};
    for (int f = 0; f < 2 && A; f++) {
        adia_plan *P = test_plan_fixed(A, formats[f], ADIA_DOUBLE, 1);
        adia_precond_options o;
        adia_precond_options_default(&o);
        o.kind = "mg";
        adia_precond *M = NULL;
        if (P) CHECK_OK(adia_precond_create(P, &o, &M));
        char buf[4096] = "";
        if (M) CHECK_OK(adia_precond_explain(M, buf, sizeof buf));
        CHECK(test_contains(buf, f == 0 ? "(on the device)" : "cannot be read on the device"),
              "%s: %s", formats[f], buf);
        if (f == 0)
            CHECK(test_contains(buf, "device setup:") &&
                      test_contains(buf, "read in place from the plan's diagonals"), "%s", buf);
        printf("%s", buf);
        adia_precond_destroy(M);
        adia_plan_destroy(P);
    }
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    TEST_NEED_DEVICE();
    test_levels();
    test_vcycle();
    test_errors();
    test_explain();
    return TEST_END();
}
#endif
