"""Arguments checked in Python, with the argument's name, before any work
(issue 27, item 5): expected_calls, maxiter, restart, rtol, method and the
shape of x0; the name a plan's explanation gives its matrix (item 9)."""
import numpy as np
import pytest
import scipy.sparse as sp

import adia


@pytest.fixture(scope="module")
def A():
    return adia.generate("lap2d5:10")


@pytest.mark.parametrize("fn", ["plan", "analyze"])
def test_expected_calls(A, fn):
    f = getattr(adia, fn)
    with pytest.raises(ValueError, match=r"expected_calls must be in 0\.\.9223372036854775807, got -1"):
        f(A, expected_calls=-1)
    with pytest.raises(TypeError, match="expected_calls must be an integer, got str"):
        f(A, expected_calls="x")
    with pytest.raises(ValueError, match="expected_calls must be in 0..9223372036854775807, got 1000000000000000000000000000000"):
        f(A, expected_calls=10**30)
    with pytest.raises(ValueError, match="expected_calls must be an integer, got 1.5"):
        f(A, expected_calls=1.5)
    with pytest.raises(TypeError, match="expected_calls must be an integer, got a bool"):
        f(A, expected_calls=True)
    with pytest.raises(TypeError, match="expected_calls"):
        f(A, expected_calls=None)
    # what is an integer is taken: Python, NumPy, an integral float, 0, the top
    for ok in (0, 7, np.int64(1000), np.int32(3), 1e3, 2**63 - 1):
        f(A, expected_calls=ok)


def test_nondeterministic(A):
    with pytest.raises(TypeError, match="nondeterministic must be True or False, got 1"):
        adia.plan(A, nondeterministic=1)
    with pytest.raises(TypeError, match="nondeterministic must be True or False, got 'yes'"):
        adia.plan(A, nondeterministic="yes")
    P = adia.plan(A, nondeterministic=True)   # a CPU plan: nothing to relax, same product
    x = np.arange(A.shape[1], dtype=float)
    np.testing.assert_array_equal(P @ x, adia.plan(A) @ x)


def test_expected_calls_reaches_the_planner(A):
    P = adia.plan(A, expected_calls=np.int64(1234))
    assert "1234 expected calls" in P.explain()


@pytest.mark.parametrize("given", ["matrix", "plan"])
def test_solve_counts(A, given):
    M = A if given == "matrix" else adia.plan(A, expected_calls=100)
    b = np.ones(A.shape[0])
    with pytest.raises(ValueError, match=r"maxiter must be in 1\.\.2147483647, got 1099511627776"):
        adia.solve(M, b, maxiter=2**40)
    with pytest.raises(ValueError, match=r"restart must be in 1\.\.2147483647, got 2147483648"):
        adia.solve(M, b, method="gmres", restart=2**31)
    with pytest.raises(ValueError, match="maxiter must be in 1..2147483647, got 0"):
        adia.solve(M, b, maxiter=0)
    with pytest.raises(ValueError, match="restart must be in 1..2147483647, got -5"):
        adia.solve(M, b, restart=-5)
    with pytest.raises(TypeError, match="maxiter must be an integer, got str"):
        adia.solve(M, b, maxiter="100")
    with pytest.raises(TypeError, match="rtol must be a real number, got str"):
        adia.solve(M, b, rtol="1e-8")
    with pytest.raises(TypeError, match="method must be a str"):
        adia.solve(M, b, method=3)
    x, info = adia.solve(M, b, maxiter=np.int64(500), restart=20.0, method="gmres")
    assert info.converged


@pytest.mark.parametrize("given", ["matrix", "plan"])
def test_x0_shape(A, given):
    M = A if given == "matrix" else adia.plan(A)
    n = A.shape[0]
    b = A @ np.ones(n)
    with pytest.raises(ValueError, match=r"x0 must have shape \(100,\) or \(100, 1\), got \(50, 2\)"):
        adia.solve(M, b, x0=np.zeros((n // 2, 2)))
    with pytest.raises(ValueError, match="x0 must have shape"):
        adia.solve(M, b, x0=np.zeros((1, n)))
    with pytest.raises(ValueError, match="x0 must have shape"):
        adia.solve(M, b, x0=np.zeros(n + 1))
    for x0 in (np.zeros(n), np.zeros((n, 1)), [0.0] * n):
        x, info = adia.solve(M, b, x0=x0)
        assert info.converged
        np.testing.assert_allclose(x, np.ones(n), atol=1e-6)


@pytest.mark.parametrize("make, name", [
    (lambda A: A, "csr_matrix"),
    (lambda A: A.tocoo(), "coo_matrix"),
    (lambda A: A.toarray(), "ndarray"),
    (lambda A: sp.csr_array(A), "csr_array"),
])
def test_explain_names_the_matrix(A, make, name):
    text = adia.plan(make(A)).explain()
    assert not text.startswith("plan:  ("), text
    assert text.startswith(f"plan: {name} (100 x 100, 460 nonzeros)"), text.splitlines()[0]
