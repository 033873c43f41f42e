#!/usr/bin/env python3
"""Would multigrid by aggregating consecutive rows pay on SPD matrices
without a grid?  (issue 30, item 3: "where it pays, measured").  A probe in
SciPy, not adia's code: PCG iterations to rtol 1e-8 (b = A * ones, x0 = 0)
with Jacobi, and with one V(1,1)-cycle of a hierarchy whose coarse levels
aggregate blocks of m consecutive rows:

  plain     P = piecewise constant over the blocks (A_c = P' A P keeps A's
            band, narrowed m times: a diagonal matrix again);
  smoothed  P = (I - 4/3 D^-1 A / lambda_max) P0 (smoothed aggregation; A_c's
            band is A's widened twice over, then narrowed m times);

Chebyshev smoothing (degree 2 on [lmax/5, lmax] of D^-1 A, as adia's mg),
coarsening until 64 rows or fewer, a dense solve there.  m = the half
bandwidth + 1 (blocks at least as wide as A's reach) or 2.  One line per
matrix and variant; the set-up is not timed (a probe of iterations: an
iteration count that does not fall well below Jacobi's cannot repay a
set-up).

    python3 bench/aggregation-probe.py [FILE.mtx ...]   # default: the built-in problems
"""
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def biharmonic_1d(n):
    """1D fourth difference (offsets -2..2: 1 -4 6 -4 1), clamped ends: SPD."""
    return sp.diags([1.0, -4.0, 6.0, -4.0, 1.0], [-2, -1, 0, 1, 2], shape=(n, n),
                    format="csr") + sp.diags([1.0] + [0.0] * (n - 2) + [1.0], 0, format="csr")


def beam_1d(n):
    """Two unknowns a node (deflection, slope) of a 1D Euler-Bernoulli beam,
    cubic Hermite elements, both ends clamped: SPD, offsets -3..3."""
    h = 1.0 / (n + 1)
    ke = np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                   [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]]) / h**3
    m = 2 * (n + 2)
    A = sp.lil_matrix((m, m))
    for e in range(n + 1):
        idx = [2 * e, 2 * e + 1, 2 * e + 2, 2 * e + 3]
        for a in range(4):
            for b in range(4):
                A[idx[a], idx[b]] += ke[a, b]
    keep = np.arange(2, m - 2)   # clamped: the end nodes' unknowns removed
    return sp.csr_matrix(A)[keep][:, keep]


def half_bandwidth(A):
    C = A.tocoo()
    return int(np.max(np.abs(C.row - C.col))) if C.nnz else 0


def lambda_max(A, dinv, steps=10):
    v = np.random.default_rng(7).uniform(-1, 1, A.shape[0])
    q = 0.0
    for _ in range(steps):
        w = dinv * (A @ v)
        q = float(v @ w) / float(v @ v)
        v = w / np.linalg.norm(w)
    return 1.1 * q


def cheb(A, dinv, lmax, b, x, degree=2):
    """Chebyshev smoothing on [lmax/5, lmax] of D^-1 A, from x."""
    lmin = lmax / 5
    theta, delta = (lmax + lmin) / 2, (lmax - lmin) / 2
    sigma = theta / delta
    rho = 1 / sigma
    r = dinv * (b - A @ x)
    d = r / theta
    for _ in range(degree):
        x = x + d
        r = dinv * (b - A @ x)
        rho_new = 1 / (2 * sigma - rho)
        d = rho_new * rho * d + 2 * rho_new / delta * r
        rho = rho_new
    return x


def hierarchy(A, m, smoothed):
    levels = []
    while A.shape[0] > 64:
        n = A.shape[0]
        dinv = 1 / A.diagonal()
        lmax = lambda_max(A, dinv)
        nc = (n + m - 1) // m
        P = sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) // m)), shape=(n, nc))
        if smoothed:
            P = P - (4 / 3 / lmax) * sp.diags(dinv) @ (A @ P)
        Ac = (P.T @ A @ P).tocsr()
        levels.append((A, dinv, lmax, P))
        A = Ac
    return levels, np.linalg.inv(A.toarray())


def vcycle(levels, coarse_inv, b, l=0):
    if l == len(levels):
        return coarse_inv @ b
    A, dinv, lmax, P = levels[l]
    x = cheb(A, dinv, lmax, b, np.zeros_like(b))
    x = x + P @ vcycle(levels, coarse_inv, P.T @ (b - A @ x), l + 1)
    return cheb(A, dinv, lmax, b, x)


def pcg_iterations(A, M):
    b = A @ np.ones(A.shape[0])
    n = [0]
    kw = {"rtol": 1e-8} if "rtol" in spla.cg.__code__.co_varnames else {"tol": 1e-8}
    _, info = spla.cg(A, b, M=M, maxiter=20000, callback=lambda _: n.__setitem__(0, n[0] + 1),
                      **kw)
    return n[0] if info == 0 else f">{n[0]} (info {info})"


def probe(name, A):
    A = sp.csr_matrix(A, dtype=np.float64)
    k = half_bandwidth(A)
    dinv = 1 / A.diagonal()
    jac = pcg_iterations(A, spla.LinearOperator(A.shape, matvec=lambda r: dinv * r))
    line = f"{name}: {A.shape[0]} rows, half bandwidth {k}; PCG + Jacobi {jac}"
    for m in sorted({2, k + 1}):
        for smoothed in (False, True):
            levels, cinv = hierarchy(A, m, smoothed)
            M = spla.LinearOperator(A.shape, matvec=lambda r, L=levels, C=cinv: vcycle(L, C, r))
            nnz = sum(L[0].nnz for L in levels) / A.nnz if levels else 1
            line += (f"; m={m} {'smoothed' if smoothed else 'plain'} ({len(levels) + 1} levels, "
                     f"operator complexity {nnz:.2f}): {pcg_iterations(A, M)}")
    print(line, flush=True)


def main():
    files = sys.argv[1:]
    if files:
        for f in files:
            probe(f.rsplit("/", 1)[-1].split(".")[0], scipy.io.mmread(f))
        return
    for n in (1000, 10000):
        probe(f"biharmonic1d:{n}", biharmonic_1d(n))
    for n in (1000, 10000):
        probe(f"beam1d:{n}", beam_1d(n))
    probe("lap1d:10000 (a grid: adia's mg takes it)",
          sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(10000, 10000), format="csr"))


if __name__ == "__main__":
    main()
