"""Planned SpMV against SciPy."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import adia

SPECS = ["lap2d5:24", "lap2d9:16x10", "lap3d7:8", "band:300,4", "type2:2000",
         "randdiag:500,6,40", "random:400,5", "powerlaw:300,2,40"]


@pytest.mark.parametrize("spec", SPECS)
def test_generate_is_scipy_csr(spec):
    A = adia.generate(spec)
    assert isinstance(A, sp.csr_matrix)
    assert A.dtype == np.float64
    assert A.has_sorted_indices
    A.check_format(full_check=True)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("calls", [1, 1000])
def test_spmv_matches_scipy(spec, calls, rng):
    A = adia.generate(spec)
    P = adia.plan(A, expected_calls=calls, device="cpu")
    assert P.shape == A.shape
    assert P.dtype == np.float64
    assert P.nnz == A.nnz
    assert P.format in adia.formats()
    x = rng.standard_normal(A.shape[1])
    ref = A @ x
    np.testing.assert_allclose(P @ x, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    # out=, alpha, beta: y = 2 A x - 0.5 y, in place
    y = rng.standard_normal(A.shape[0])
    want = 2 * ref - 0.5 * y
    got = P.matvec(x, out=y, alpha=2.0, beta=-0.5)
    assert got is y
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("fmt", adia.formats())
def test_fixed_formats(fmt, rng):
    A = adia.generate("type2:3000")
    P = adia.plan(A, format=fmt)
    assert P.format == fmt
    x = rng.standard_normal(A.shape[1])
    np.testing.assert_allclose(P @ x, A @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("conv", ["tocsr", "tocsc", "tocoo", "todia", "tolil", "toarray"])
def test_any_scipy_input(conv, rng):
    A = adia.generate("lap2d5:12")
    B = getattr(A, conv)()
    P = adia.plan(B)
    x = rng.standard_normal(A.shape[1])
    np.testing.assert_allclose(P @ x, A @ x, rtol=1e-13)


def test_unsorted_duplicates_int64_and_integer_values():
    # COO with duplicates (summed), int64 indices, integer values
    row = np.array([0, 0, 1, 2, 2, 2], dtype=np.int64)
    col = np.array([1, 1, 0, 2, 0, 2], dtype=np.int64)
    val = np.array([1, 2, 3, 4, 5, 6], dtype=np.int64)
    A = sp.coo_matrix((val, (row, col)), shape=(3, 3))
    P = adia.plan(A)
    x = np.array([1.0, 10.0, 100.0])
    np.testing.assert_array_equal(P @ x, A.toarray() @ x)


def test_rectangular(rng):
    A = sp.random(50, 80, density=0.1, format="csr", random_state=1)
    P = adia.plan(A)
    assert P.shape == (50, 80)
    x = rng.standard_normal(80)
    np.testing.assert_allclose(P @ x, A @ x, rtol=1e-12, atol=1e-14)


def test_float32_plan(rng):
    A = adia.generate("lap2d5:20")
    P = adia.plan(A, dtype=np.float32)
    assert P.dtype == np.float32
    x = rng.standard_normal(A.shape[1]).astype(np.float32)
    y = P @ x
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, A @ x.astype(np.float64), rtol=1e-5, atol=1e-5)
    # a float64 x is converted when no out= is given
    np.testing.assert_allclose(P @ x.astype(np.float64), y)


def test_shapes_column_and_matmat(rng):
    A = adia.generate("band:60,3")
    P = adia.plan(A)
    x = rng.standard_normal((60, 1))
    y = P @ x
    assert y.shape == (60, 1)
    X = rng.standard_normal((60, 4))
    np.testing.assert_allclose(P @ X, A @ X, rtol=1e-12)
    np.testing.assert_allclose(P.dot(x[:, 0]), (A @ x)[:, 0], rtol=1e-12)
    np.testing.assert_allclose(P @ list(x[:, 0]), (A @ x)[:, 0], rtol=1e-12)


@pytest.mark.skipif(not adia._adia._readonly_inputs, reason="built with nanobind 1 (refuses read-only arrays)")
def test_readonly_x(rng):
    A = adia.generate("lap2d5:10")
    P = adia.plan(A)
    x = rng.standard_normal(100)
    x.setflags(write=False)
    y = np.empty(100)
    P.matvec(x, out=y)
    np.testing.assert_allclose(y, A @ x)


def test_linear_operator(rng):
    A = adia.generate("lap2d5:20")
    P = adia.plan(A, expected_calls=500)
    b = rng.standard_normal(A.shape[0])
    # Plan duck-types a LinearOperator ...
    x, info = spla.cg(P, b, rtol=1e-10, maxiter=2000) if _has_rtol() else spla.cg(P, b, tol=1e-10, maxiter=2000)
    assert info == 0
    assert np.linalg.norm(A @ x - b) <= 1e-8 * np.linalg.norm(b)
    # ... and makes one
    L = P.aslinearoperator()
    assert isinstance(L, spla.LinearOperator)
    assert L.shape == A.shape and L.dtype == np.float64
    np.testing.assert_allclose(L @ b, A @ b, rtol=1e-12)
    x2, info2 = spla.gmres(L, b, restart=50, maxiter=200, **({"rtol": 1e-10} if _has_rtol() else {"tol": 1e-10}))
    assert info2 == 0


def _has_rtol():
    import inspect

    return "rtol" in inspect.signature(spla.cg).parameters


def test_explain_and_properties():
    A = adia.generate("lap2d5:64")
    P = adia.plan(A, expected_calls=1000)
    text = P.explain()
    assert "format " + P.format in text
    assert "1000 expected calls" in text
    assert "type II" in text  # offsets +-64 > delta = ceil(4096 / 100)
    assert P.device == "cpu"
    assert P.chooser == "model"
    assert P.predicted_ms > 0
    assert "format=" + P.format in repr(P)
    R = adia.plan(A, chooser="rules")
    assert R.chooser == "rules"


def test_plan_save_load(tmp_path, rng):
    A = adia.generate("type2:5000")
    P = adia.plan(A, format="brcsd1")
    P.save(tmp_path / "p.plan")
    Q = adia.load_plan(A, tmp_path / "p.plan")
    assert Q.format == "brcsd1"
    x = rng.standard_normal(A.shape[1])
    np.testing.assert_array_equal(P @ x, Q @ x)


def test_plan_save_never_replaces_data(tmp_path):
    """Plan.save onto the matrix file (any file that is not a plan) is
    refused and the file stays; a plan replaces a plan."""
    path = tmp_path / "A.mtx"
    A = adia.generate("lap2d5:8")
    adia.write_mtx(A, path)
    before = path.read_bytes()
    P = adia.plan(A, format="dia")
    with pytest.raises(ValueError, match="not an adia plan file"):
        P.save(path)
    assert path.read_bytes() == before
    P.save(tmp_path / "p.plan")
    P.save(tmp_path / "p.plan")
    assert adia.load_plan(A, tmp_path / "p.plan").format == "dia"


def test_context_manager_and_close():
    A = adia.generate("lap2d5:8")
    with adia.plan(A) as P:
        P @ np.ones(64)
    assert P.closed
    assert "closed" in repr(P)
    with pytest.raises(ValueError, match="closed"):
        P @ np.ones(64)
    P.close()  # twice is fine


def test_analyze():
    a = adia.analyze(adia.generate("band:2000,3"), expected_calls=100)
    assert a.type == "I"
    assert a.format == "dia"
    assert a.features["n_diag"] == 7
    assert a.features["rows"] == 2000
    assert a.features["lower_bandwidth"] == 3
    fmts = [c["format"] for c in a.candidates]
    assert "csr" in fmts and "dia" in fmts
    totals = [c["total_ms"] for c in a.candidates]
    assert totals == sorted(totals)
    assert "type I" in str(a)
    b = adia.analyze(adia.generate("type2:20000"))
    assert b.type == "II"
    assert b.format == "brcsd1"


def test_spy_png(tmp_path):
    A = adia.generate("type2:5000")
    p = tmp_path / "a.png"
    assert adia.spy(A, p, size=200) == p
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    q = tmp_path / "b.png"
    adia.spy(A, str(q), overlay="brcsd1", size=300, caption="type II")
    assert q.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError):
        adia.spy(A, tmp_path / "c.png", size=3)
    with pytest.raises(ValueError):
        adia.spy(A, tmp_path / "c.png", overlay="csr")


def test_threads_share_a_plan(rng):
    # large enough for the binding to release the GIL during the product
    import threading

    A = adia.generate("lap2d5:500")
    P = adia.plan(A)
    xs = [rng.standard_normal(A.shape[1]) for _ in range(4)]
    ys = [np.empty(A.shape[0]) for _ in range(4)]
    errors = []

    def work(i):
        try:
            for _ in range(5):
                P.matvec(xs[i], out=ys[i])
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(y, A @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fmt", adia.formats())
def test_padded_slots_never_multiply_x(fmt):
    """Issue 27: x = [1, 1, inf] with a 3 x 3 matrix whose third column is
    read only by padding (row 1, offset 1 in DIA) gave [2, nan, inf] in
    dia, hdi, brcsd1, brcsd2, pbcsr, hm and cdm; CSR gives [2, 1, inf]."""
    A = sp.csr_matrix(np.array([[1.0, 1, 0], [0, 1, 0], [0, 0, 1]]))
    x = np.array([1.0, 1.0, np.inf])
    np.testing.assert_array_equal(A @ x, [2, 1, np.inf])
    for dtype in (np.float64, np.float32):
        P = adia.plan(A, format=fmt, device="cpu", dtype=dtype)
        np.testing.assert_array_equal(P @ x.astype(dtype), np.array([2, 1, np.inf], dtype))
