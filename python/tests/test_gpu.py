"""GPU plans with CuPy arrays (skipped without CuPy, a device or a CUDA build)."""
import inspect

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import adia


def _tol_kw(fn, rtol):
    return {"rtol": rtol} if "rtol" in inspect.signature(fn).parameters else {"tol": rtol}


@pytest.mark.parametrize("spec", ["lap2d5:64", "type2:20000", "lap3d7:20", "random:2000,6"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gpu_spmv_cupy(cupy, spec, dtype):
    import cupyx.scipy.sparse as csp

    A = adia.generate(spec)
    P = adia.plan(A, expected_calls=100, device="gpu", dtype=dtype)
    assert P.device == "gpu"
    assert P.dtype == dtype
    x = cupy.random.standard_normal(A.shape[1]).astype(dtype)
    y = P @ x
    assert isinstance(y, cupy.ndarray) and y.dtype == dtype
    ref = csp.csr_matrix(A.astype(dtype)) @ x
    tol = 1e-12 if dtype == np.float64 else 1e-5
    scale = float(cupy.abs(ref).max())
    assert float(cupy.abs(y - ref).max()) <= tol * scale
    # in place with alpha, beta
    out = cupy.ones(A.shape[0], dtype=dtype)
    assert P.matvec(x, out=out, alpha=2.0, beta=-1.0) is out
    assert float(cupy.abs(out - (2 * ref - 1)).max()) <= 4 * tol * (scale + 1)


def test_gpu_stream_and_errors(cupy):
    A = adia.generate("lap2d5:100")
    P = adia.plan(A, device="gpu")
    x = cupy.ones(A.shape[1])
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        y = P @ x
        z = y * 2
    s.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(z), 2 * (A @ np.ones(A.shape[1])))
    with pytest.raises(TypeError, match="CuPy"):
        P @ np.ones(A.shape[1])
    with pytest.raises(ValueError, match="length"):
        P @ cupy.ones(3)
    with pytest.raises(TypeError, match="float64"):
        P.matvec(x.astype(cupy.float32), out=cupy.empty(A.shape[0]))
    with pytest.raises(ValueError, match="contiguous"):
        P.matvec(cupy.ones(2 * A.shape[1])[::2], out=cupy.empty(A.shape[0]))
    with pytest.raises(ValueError, match="overlap"):
        P.matvec(x, out=x)
    C = adia.plan(A, device="cpu")
    with pytest.raises(TypeError, match="NumPy"):
        C.matvec(x, out=np.empty(A.shape[0]))
    P.close()
    with pytest.raises(ValueError, match="closed"):
        P @ x


@pytest.mark.parametrize("spec,diagonal", [("type2:5000", True), ("lap3d7:16", True),
                                           ("random:3000,6", False)])
def test_gpu_plan_from_cupyx_sparse(cupy, spec, diagonal):
    """A CuPy CSR matrix is planned where it lies (adia_plan_create_device_csr)."""
    import cupyx.scipy.sparse as csp

    A = adia.generate(spec)
    dA = csp.csr_matrix(A)
    P = adia.plan(dA, device="gpu", expected_calls=100)
    assert P._p.matrix is None, "planned from the device CSR, no host matrix"
    assert (P.format in ("dia", "hdi", "brcsd2")) == diagonal, P.format
    assert "device memory" in P.explain()
    x = cupy.arange(A.shape[1], dtype=cupy.float64)
    np.testing.assert_allclose(cupy.asnumpy(P @ x), A @ np.arange(A.shape[1], dtype=float), rtol=1e-12)
    # int64 row pointers, float32 values, unsorted columns: the same product
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    order = np.lexsort((-A.indices, rows))            # each row's columns descending
    B = csp.csr_matrix((cupy.asarray(A.data[order], dtype=cupy.float32),
                        cupy.asarray(A.indices[order]), cupy.asarray(A.indptr, dtype=cupy.int64)),
                       shape=A.shape)
    Q = adia.plan(B, device="gpu")
    ref = A.astype(np.float32).astype(np.float64) @ np.arange(A.shape[1], dtype=float)
    np.testing.assert_allclose(cupy.asnumpy(Q @ x), ref, rtol=1e-12)
    # each row's first entry split in two (a repeated column): summed
    first = A.indptr[:-1][np.diff(A.indptr) > 0]
    data = np.insert(A.data, first, 0.25)
    data[first + np.arange(first.size) + 1] -= 0.25
    C = csp.csr_matrix((cupy.asarray(data), cupy.asarray(np.insert(A.indices, first, A.indices[first])),
                        cupy.asarray(A.indptr + np.searchsorted(first, A.indptr, side="left"))),
                       shape=A.shape)
    R = adia.plan(C, device="gpu")
    np.testing.assert_allclose(cupy.asnumpy(R @ x), A @ np.arange(A.shape[1], dtype=float),
                               rtol=1e-12, atol=1e-9)


def test_gpu_solve_from_cupyx_plan(cupy):
    import cupyx.scipy.sparse as csp

    A = adia.generate("lap3d7:20")
    P = adia.plan(csp.csr_matrix(A), device="gpu", expected_calls=1000)
    b = cupy.asarray(A @ np.ones(A.shape[0]))
    x, info = adia.solve(P, b, rtol=1e-10)
    assert isinstance(x, cupy.ndarray) and info.converged, info
    assert float(cupy.abs(x - 1).max()) < 1e-7
    xh, info_h = adia.solve(P, cupy.asnumpy(b), rtol=1e-10)   # host b: through the device
    assert isinstance(xh, np.ndarray) and info_h.converged
    np.testing.assert_allclose(xh, 1, atol=1e-7)


def test_gpu_plan_keeps_no_host_matrix(cupy):
    """A GPU plan of a SciPy matrix is made from its arrays in place and
    keeps no host copy: solves from NumPy take the plan as the matrix
    (adia_solve with A NULL), its transpose comes from its format, and
    changing the SciPy matrix afterwards changes nothing."""
    A = adia.generate("lap3d7:24")
    P = adia.plan(A, device="gpu", expected_calls=1000)
    assert P._p.matrix is None and "csr_matrix" in P.explain()
    b = A @ np.ones(A.shape[0])
    for kw in ({}, {"jacobi": True}, {"precond": "none"}, {"precond": "cheb"}):
        x, info = adia.solve(P, b, rtol=1e-10, maxiter=2000, **kw)
        assert isinstance(x, np.ndarray) and info.converged, (kw, info)
        assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b), kw
    x = cupy.arange(A.shape[0], dtype=cupy.float64)
    y = cupy.asnumpy(P @ x)
    A.data *= 2   # the plan read A's arrays while it was made, and no more
    np.testing.assert_array_equal(cupy.asnumpy(P @ x), y)
    R = adia.generate("random:3000,6")
    PR = adia.plan(R, device="gpu")
    xr = cupy.arange(R.shape[0], dtype=cupy.float64)
    np.testing.assert_allclose(cupy.asnumpy(PR.T @ xr), R.T @ cupy.asnumpy(xr), rtol=1e-12)


def test_gpu_linear_operator(cupy):
    from cupyx.scipy.sparse.linalg import LinearOperator, cg

    A = adia.generate("lap2d5:64")
    P = adia.plan(A, expected_calls=500, device="gpu")
    L = P.aslinearoperator()
    assert isinstance(L, LinearOperator)
    b = cupy.ones(A.shape[0])
    x, info = cg(L, b, maxiter=2000, **_tol_kw(cg, 1e-10))
    assert info == 0
    r = cupy.asnumpy(b) - A @ cupy.asnumpy(x)
    assert np.linalg.norm(r) <= 1e-8 * np.linalg.norm(cupy.asnumpy(b))


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
def test_gpu_solve_vs_cupyx_cg(cupy, method):
    import cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import cg

    A = adia.generate("lap3d7:24")
    P = adia.plan(A, expected_calls=500, device="gpu")
    b = cupy.ones(A.shape[0])
    x, info = adia.solve(P, b, method=method, rtol=1e-10, maxiter=2000)
    assert isinstance(x, cupy.ndarray)
    assert info.converged, info
    xr, flag = cg(csp.csr_matrix(A), b, maxiter=2000, **_tol_kw(cg, 1e-10))
    assert flag == 0
    assert float(cupy.abs(x - xr).max()) <= 1e-6 * float(cupy.abs(xr).max())
    # host vectors with a GPU plan work too (moved once)
    xh, info_h = adia.solve(P, np.ones(A.shape[0]), method=method, rtol=1e-10, maxiter=2000)
    assert isinstance(xh, np.ndarray) and info_h.converged
    np.testing.assert_allclose(xh, spla.spsolve(A.tocsc(), np.ones(A.shape[0])), rtol=1e-6)


def test_gpu_solve_without_plan(cupy):
    A = adia.generate("lap2d5:64")
    x, info = adia.solve(A, np.ones(A.shape[0]), device="gpu", rtol=1e-10)
    assert info.converged
    assert np.linalg.norm(A @ x - 1) <= 1e-9 * np.sqrt(A.shape[0])


def test_gpu_plan_nondeterministic(cupy):
    """nondeterministic=True lets MEASURE time cuSPARSE CSR ALG1 (its time in
    the explanation); the default never times it; products stay right."""
    import cupyx.scipy.sparse as csp

    A = adia.generate("powerlaw:30000,2,3000")
    x = cupy.random.standard_normal(A.shape[1])
    ref = csp.csr_matrix(A) @ x
    for nondet in (False, True):
        P = adia.plan(A, expected_calls=100000, device="gpu", chooser="measure",
                      nondeterministic=nondet)
        text = P.explain()
        assert ("cusparse-alg1" in text) == nondet, text
        y = P @ x
        assert float(cupy.abs(y - ref).max()) <= 1e-12 * float(cupy.abs(ref).max())
    D = adia.plan(csp.csr_matrix(A), expected_calls=100000, device="gpu", chooser="measure",
                  nondeterministic=True)   # from CuPy: the device planner, the same hint
    assert "cusparse-alg1" in D.explain()
    assert float(cupy.abs(D @ x - ref).max()) <= 1e-12 * float(cupy.abs(ref).max())
