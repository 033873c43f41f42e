/* stencil.h -- the Laplacian stencils of the generator (lap2d5, lap2d9,
 * lap3d7, lap3d27) as one rule read by the host's CSR builder (gen_grid.c)
 * and the GPU's diagonal fill (gen_device.cu), so both give the same
 * matrix entry for entry.  Grid points are numbered x fastest; a stencil
 * point (dx, dy, dz) is the diagonal o = dx + nx dy + nx ny dz, and row i
 * has an entry on it when the neighbour lies inside the grid.  64-bit
 * throughout: a grid split over several GPUs passes 2^31 points. */
#ifndef ADIA_STENCIL_H
#define ADIA_STENCIL_H

#include "adia.h"

#include <stdint.h>

#ifdef __CUDACC__
#define STENCIL_FN __host__ __device__ static inline
#else
#define STENCIL_FN static inline
#endif

#define STENCIL_MAX_POINTS ADIA_STENCIL_MAX_DIAGONALS   /* 3^3: a diagonal a point at most */

typedef struct adia_stencil {
    int64_t n[3];                          /* grid sizes (1 for absent dims) */
    int npts;
    int8_t pt[STENCIL_MAX_POINTS][3];      /* (dx, dy, dz), ascending diagonal */
    double center;                         /* value at (0,0,0); -1 elsewhere  */
} adia_stencil;

/* The diagonal of point p. */
STENCIL_FN int64_t adia__stencil_offset(const adia_stencil *s, int p)
{
    return s->pt[p][0] + s->n[0] * s->pt[p][1] + s->n[0] * s->n[1] * s->pt[p][2];
}

/* Grid coordinates of point i. */
STENCIL_FN void adia__stencil_coords(const adia_stencil *s, int64_t i, int64_t c[3])
{
    c[0] = i % s->n[0];
    c[1] = (i / s->n[0]) % s->n[1];
    c[2] = i / (s->n[0] * s->n[1]);
}

/* A(i, i + offset(p)) for the point with coordinates c: 0 where the
 * neighbour is outside the grid (no entry). */
STENCIL_FN double adia__stencil_value(const adia_stencil *s, const int64_t c[3], int p)
{
    int inside = 1, center = 1;
    for (int d = 0; d < 3; d++) {
        int64_t q = c[d] + s->pt[p][d];
        inside &= q >= 0 && q < s->n[d];
        center &= s->pt[p][d] == 0;
    }
    return !inside ? 0.0 : center ? s->center : -1.0;
}

/* A(row, row + o) on the diagonal o whose stencil points are the bits of
 * points (adia__stencil_diagonals): the sum of their values, of which at
 * most one is inside the grid. */
STENCIL_FN double adia__stencil_entry(const adia_stencil *s, uint32_t points, int64_t row)
{
    int64_t c[3];
    adia__stencil_coords(s, row, c);
    double v = 0;
    for (int p = 0; p < s->npts; p++)
        if (points >> p & 1u) v += adia__stencil_value(s, c, p);
    return v;
}

#endif
