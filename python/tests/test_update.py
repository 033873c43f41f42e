"""Plan.update: values change, structure stays (issue 28, item 6)."""
import numpy as np
import pytest
import scipy.sparse as sp

import adia


def _new_values(A, seed):
    B = A.copy()
    B.data = np.random.default_rng(seed).uniform(1.0, 2.0, B.nnz)
    return B


@pytest.mark.parametrize("fmt", ["dia", "hdi", "brcsd1", "brcsd2", "crsd", "csr", "ell", "sell"])
def test_update_cpu_matches_new_plan(fmt, rng):
    A = adia.generate("lap2d5:13x11")
    P = adia.plan(A, format=fmt)
    B = _new_values(A, 1)
    P.update(B)
    x = rng.standard_normal(A.shape[1])
    assert np.array_equal(P @ x, adia.plan(B, format=fmt) @ x)
    assert np.allclose(P @ x, B @ x, rtol=1e-13, atol=0)


def test_update_refuses_another_pattern():
    A = adia.generate("lap2d5:8")
    P = adia.plan(A, format="dia")
    C = A.tolil()
    C[3, 7] = 1.0                      # one entry added in row 3
    with pytest.raises(adia.InvalidArgumentError, match="at row 3 "):
        P.update(C.tocsr())
    with pytest.raises(adia.InvalidArgumentError):
        P.update(sp.identity(65, format="csr"))
    x = np.ones(A.shape[1])
    assert np.allclose(P @ x, A @ x)   # the plan is as it was


def test_update_solve_and_transpose_see_new_values():
    A = adia.generate("lap2d5:10")
    P = adia.plan(A, format="csr")
    _ = P.T                            # cached, then dropped by the update
    B = (A * 2.0).tocsr()
    P.update(B)
    x = np.arange(A.shape[1], dtype=float)
    assert np.allclose(P.T @ x, B.T @ x)
    b = B @ np.ones(A.shape[0])
    xs, info = adia.solve(P, b, rtol=1e-10)
    assert np.allclose(xs, 1.0, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_update_gpu_cupy(cupy, dtype):
    import cupyx.scipy.sparse as csp

    A = adia.generate("lap3d7:20")
    B = _new_values(A, 2)
    x = cupy.random.standard_normal(A.shape[1]).astype(dtype)
    for src in (A, csp.csr_matrix(A)):           # a host-made and a device-made plan
        P = adia.plan(src, expected_calls=100, device="gpu", dtype=dtype)
        for new in (B, csp.csr_matrix(B)):
            P.update(new)
            ref = adia.plan(B, expected_calls=100, device="gpu", dtype=dtype, format=P.format)
            assert bool(cupy.all(P @ x == ref @ x))
        C = A.tolil()
        C[0, 5] = 1.0
        with pytest.raises(adia.InvalidArgumentError, match="at row 0 "):
            P.update(csp.csr_matrix(C.tocsr()))
