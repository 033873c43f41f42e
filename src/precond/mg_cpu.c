/* mg_cpu.c -- the multigrid cycle's vector kernels on host doubles
 * (OpenMP): the same numerics as mg_gpu.cu, kernel for kernel. */
#include "mg.h"

#define PARALLEL_ROWS 20000

static adia_status cpu_smooth(const mg_state *S, const mg_level *L, mg_step st, double bs,
                              const void *bv, void *xv, void *stream)
{
    (void)S, (void)stream;
    const double *s = L->s, *t = L->t, *b = bv;
    double *x = xv, *d = L->d;
    const int64_t n = L->rows;
#pragma omp parallel for schedule(static) if (n > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        const double xo = st.zero_x ? 0.0 : x[i];
        double dx = st.c2 * (s[i] * (bs * b[i] - (st.zero_x ? 0.0 : t[i])));
        if (st.c1 != 0) dx += st.c1 * (st.d_is_x ? xo : d[i]);
        if (st.keep_d) d[i] = dx;
        x[i] = xo + dx;
    }
    return ADIA_OK;
}

static adia_status cpu_restrict(const mg_state *S, const mg_level *L, const mg_level *Lc,
                                double bs, const void *bv, void *stream)
{
    (void)S, (void)stream;
    const double *b = bv, *t = L->t;
    double *bc = Lc->b;
    const int64_t nx = L->n[0], nxy = nx * L->n[1];
#pragma omp parallel for schedule(static) if (Lc->rows > PARALLEL_ROWS / 8) num_threads(adia__threads())
    for (int64_t I = 0; I < Lc->rows; I++) {
        const int64_t ci[3] = {I % Lc->n[0], I / Lc->n[0] % Lc->n[1],
                               I / ((int64_t)Lc->n[0] * Lc->n[1])};
        double sum = 0;
        for (int c = 0; c < 3; c++) {
            int32_t fz, fy, fx;
            double wz, wy, wx;
            if (!mg_child(Lc->coarsened[2], (int32_t)ci[2], L->n[2], (int32_t)Lc->shift, c, &fz, &wz))
                continue;
            for (int bb = 0; bb < 3; bb++) {
                if (!mg_child(Lc->coarsened[1], (int32_t)ci[1], L->n[1], 0, bb, &fy, &wy)) continue;
                for (int a = 0; a < 3; a++) {
                    if (!mg_child(Lc->coarsened[0], (int32_t)ci[0], L->n[0], 0, a, &fx, &wx)) continue;
                    const int64_t i = fx + nx * fy + nxy * fz;
                    sum += wx * wy * wz * (bs * b[i] - t[i]);
                }
            }
        }
        bc[I] = sum;
    }
    return ADIA_OK;
}

static adia_status cpu_prolong(const mg_state *S, const mg_level *L, const mg_level *Lc,
                               void *xv, void *stream)
{
    (void)S, (void)stream;
    const double *xc = Lc->x;
    double *x = xv;
    const int64_t cx0 = Lc->n[0], cxy = cx0 * Lc->n[1];
#pragma omp parallel for schedule(static) if (L->rows > PARALLEL_ROWS) num_threads(adia__threads())
    for (int64_t i = 0; i < L->rows; i++) {
        const int64_t fi[3] = {i % L->n[0], i / L->n[0] % L->n[1],
                               i / ((int64_t)L->n[0] * L->n[1])};
        double sum = 0;
        for (int z = 0; z < 2; z++) {
            int32_t cz, cy, cx;
            double wz, wy, wx;
            if (!mg_parent(Lc->coarsened[2], (int32_t)fi[2], Lc->n[2], (int32_t)Lc->shift, z, &cz,
                           &wz))
                continue;
            for (int y = 0; y < 2; y++) {
                if (!mg_parent(Lc->coarsened[1], (int32_t)fi[1], Lc->n[1], 0, y, &cy, &wy)) continue;
                for (int a = 0; a < 2; a++) {
                    if (!mg_parent(Lc->coarsened[0], (int32_t)fi[0], Lc->n[0], 0, a, &cx, &wx)) continue;
                    sum += wx * wy * wz * xc[cx + cx0 * cy + cxy * cz];
                }
            }
        }
        x[i] += sum;
    }
    return ADIA_OK;
}

static adia_status cpu_coarse(const mg_state *S, const mg_level *L, double bs, const void *bv,
                              void *xv, void *stream)
{
    (void)S, (void)stream;
    const double *a = L->ainv, *b = bv;
    double *x = xv;
    const int64_t n = L->rows;
#pragma omp parallel for schedule(static) if (n > 256) num_threads(adia__threads())
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t j = 0; j < n; j++) s += a[i * n + j] * b[j];
        x[i] = bs * s;
    }
    return ADIA_OK;
}

const mg_kernels adia__mg_cpu_kernels = {
    .smooth = cpu_smooth,
    .restrict_residual = cpu_restrict,
    .prolong = cpu_prolong,
    .coarse = cpu_coarse,
};
