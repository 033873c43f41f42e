"""adia from Python in a few lines: plan an SpMV, solve, look at the matrix.

Run: python python/examples/quickstart.py [OUTDIR]   (OUTDIR: where the
sparsity picture goes; default: a temporary folder)
"""
import os
import sys
import tempfile

import numpy as np
import scipy.sparse as sp

import adia

# Any scipy.sparse matrix works; adia.generate builds test matrices.
A = adia.generate("lap2d5:100")                 # 2D Laplacian, 10000 rows
print("matrix:", A.shape, A.nnz, "nonzeros")

# Plan once for many products: adia analyses A and picks a storage format.
P = adia.plan(A, expected_calls=1000)           # device="gpu" for CuPy arrays
x = np.random.default_rng(0).standard_normal(A.shape[1])
y = P @ x                                       # planned SpMV, NumPy in and out
assert np.allclose(y, A @ x)
print("format:", P.format)
print(P.explain().splitlines()[0])

# In place, no allocation: y = 2 A x + y
P.matvec(x, out=y, alpha=2.0, beta=1.0)

# Solve A x = b with CG on the plan (or pass A itself).
b = A @ np.ones(A.shape[0])
x, info = adia.solve(P, b, method="cg", rtol=1e-10, maxiter=2000)
print(f"cg: {info.iterations} iterations, residual {info.residual:.2e}, {info.stop}")
assert info.converged and np.allclose(x, 1.0, atol=1e-6)

# The plan is a LinearOperator for SciPy's solvers too.
from scipy.sparse.linalg import gmres  # noqa: E402

x2, flag = gmres(P, b, restart=50, maxiter=100)

# What the planner thinks of a matrix, and its picture.
print(adia.analyze(sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(1000, 1000))))
outdir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
png = adia.spy(adia.generate("type2:20000"), os.path.join(outdir, "type2.png"), overlay="brcsd1")
print("picture:", png)
