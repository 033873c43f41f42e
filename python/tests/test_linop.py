"""A Plan is a scipy.sparse.linalg.LinearOperator (issue 27): isinstance
holds; matvec, rmatvec, matmat, rmatmat, .T, .H, adjoint(), transpose(),
P * x, P @ X (2-D, column by column), P(x), SciPy's operator algebra, and
the SciPy solvers that need the transpose product (bicg, qmr, lsqr, lsmr).
The transpose is a plan of A^T made once and cached (the C library has no
transposed product)."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import adia

FORMATS = ["csr", "dia", "hdi", "brcsd1", "brcsd2", "crsd", "ell", "coo"]


def _tol():
    import inspect

    return "rtol" if "rtol" in inspect.signature(spla.bicg).parameters else "tol"


def _nonsym(n=300, seed=5):
    rng = np.random.default_rng(seed)
    return sp.diags([rng.uniform(-1, 1, n - 3), 5 + rng.uniform(0, 1, n), rng.uniform(-1, 1, n - 1),
                     rng.uniform(-0.5, 0.5, n - 17)], [-3, 0, 1, 17], format="csr")


def test_isinstance_and_scipy_helpers():
    A = adia.generate("lap2d5:8")
    P = adia.plan(A)
    assert isinstance(P, spla.LinearOperator)
    assert spla.aslinearoperator(P) is P
    assert P.aslinearoperator() is P
    assert P.shape == (64, 64) and P.dtype == np.float64 and P.ndim == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_rmatvec_and_transpose(fmt, rng):
    A = _nonsym()
    P = adia.plan(A, format=fmt)
    x = rng.standard_normal(A.shape[0])
    ref = A.T @ x
    np.testing.assert_allclose(P.rmatvec(x), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    T = P.T
    assert isinstance(T, adia.Plan) and T.shape == (A.shape[1], A.shape[0])
    assert T.format == fmt                    # a fixed format stays fixed
    assert P.T is T and T.T is P              # made once, cached, and back
    assert P.H is T and P.adjoint() is T and P.transpose() is T
    np.testing.assert_allclose(T @ x, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(P.H.matvec(x), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    # a column vector in, a column out
    assert P.rmatvec(x.reshape(-1, 1)).shape == (A.shape[1], 1)


def test_rectangular_transpose_and_planner_choice(rng):
    B = sp.random(70, 40, density=0.15, format="csr", random_state=3)
    P = adia.plan(B, expected_calls=50)
    T = P.T
    assert T.shape == (40, 70)
    assert T.chooser == P.chooser
    assert T.format in adia.formats()
    y = rng.standard_normal(70)
    np.testing.assert_allclose(P.rmatvec(y), B.T @ y, rtol=1e-12, atol=1e-13)
    Y = rng.standard_normal((70, 3))
    np.testing.assert_allclose(P.rmatmat(Y), B.T @ Y, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(P.T @ Y, B.T @ Y, rtol=1e-12, atol=1e-13)
    assert "^T" in T.explain().splitlines()[0]


def test_float32_transpose(rng):
    A = _nonsym(120)
    P = adia.plan(A, dtype=np.float32, format="dia")
    assert P.T.dtype == np.float32
    x = rng.standard_normal(120).astype(np.float32)
    np.testing.assert_allclose(P.rmatvec(x), A.T @ x.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_products_of_every_spelling(rng):
    A = _nonsym(90)
    P = adia.plan(A)
    x = rng.standard_normal(90)
    X = rng.standard_normal((90, 4))
    ref, REF = A @ x, A @ X
    np.testing.assert_allclose(P * x, ref, rtol=1e-12)
    np.testing.assert_allclose(P @ x, ref, rtol=1e-12)
    np.testing.assert_allclose(P(x), ref, rtol=1e-12)
    np.testing.assert_allclose(P.dot(x), ref, rtol=1e-12)
    for Xv in (X, np.asfortranarray(X), X.astype(np.float32), X.tolist(), sp.csr_matrix(X)):
        got = P @ Xv
        assert got.shape == (90, 4)
        np.testing.assert_allclose(got, REF, rtol=1e-6 if np.asarray(got).dtype != np.float64
                                   else 1e-12, atol=1e-6)
    np.testing.assert_allclose(P * X, REF, rtol=1e-12)
    np.testing.assert_allclose(P.matmat(X), REF, rtol=1e-12)
    np.testing.assert_allclose(P(X), REF, rtol=1e-12)
    assert (P @ X[:, :1]).shape == (90, 1)
    with pytest.raises(ValueError):
        P @ np.ones((50, 2))
    with pytest.raises(ValueError, match="Scalar"):
        P @ 2.0
    # in-place matvec through P(x, out=...)
    y = np.zeros(90)
    assert P(x, out=y) is y
    np.testing.assert_allclose(y, ref, rtol=1e-12)


def test_operator_algebra(rng):
    A = _nonsym(60)
    P = adia.plan(A)
    x = rng.standard_normal(60)
    np.testing.assert_allclose((2 * P) @ x, 2 * (A @ x), rtol=1e-12)
    np.testing.assert_allclose((P * 3) @ x, 3 * (A @ x), rtol=1e-12)
    np.testing.assert_allclose((P + P) @ x, 2 * (A @ x), rtol=1e-12)
    np.testing.assert_allclose((P @ P) @ x, A @ (A @ x), rtol=1e-12)
    np.testing.assert_allclose((P.T @ P) @ x, A.T @ (A @ x), rtol=1e-12)
    np.testing.assert_allclose((P @ P).rmatvec(x), A.T @ (A.T @ x), rtol=1e-12)


@pytest.mark.parametrize("solver", ["bicg", "qmr", "cgs"])
def test_scipy_solvers_needing_the_transpose(solver):
    A = _nonsym()
    P = adia.plan(A, expected_calls=500)
    xt = np.linspace(-1, 1, A.shape[0])
    b = A @ xt
    x, info = getattr(spla, solver)(P, b, maxiter=2000, **{_tol(): 1e-11})
    assert info == 0
    np.testing.assert_allclose(x, xt, atol=1e-8)


@pytest.mark.parametrize("solver", ["lsqr", "lsmr"])
def test_least_squares(solver):
    B = sp.random(80, 30, density=0.2, format="csr", random_state=7) + sp.eye(80, 30)
    P = adia.plan(B)
    xt = np.linspace(1, 2, 30)
    x = getattr(spla, solver)(P, B @ xt, atol=1e-14, btol=1e-14)[0]
    np.testing.assert_allclose(x, xt, atol=1e-8)


def test_loaded_plan_has_a_transpose(tmp_path, rng):
    A = _nonsym(200)
    P = adia.plan(A, format="brcsd2")
    P.save(tmp_path / "p.plan")
    Q = adia.load_plan(A, tmp_path / "p.plan")
    x = rng.standard_normal(200)
    np.testing.assert_allclose(Q.rmatvec(x), A.T @ x, rtol=1e-12, atol=1e-12)
    assert Q.T.format == "brcsd2"


def test_close_closes_the_transpose():
    P = adia.plan(_nonsym(50))
    T = P.T
    P.close()
    assert P.closed and T.closed
    with pytest.raises(ValueError, match="closed"):
        P.rmatvec(np.ones(50))
