"""Matrix Market round trips and the shared matrices."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import adia

from conftest import shared_matrices_dir


def test_matrix_round_trip(tmp_path):
    A = adia.generate("random:300,6")
    for name in ("a.mtx", "a.mtx.gz"):
        adia.write_mtx(A, tmp_path / name)
        B = adia.read_mtx(tmp_path / name)
        assert B.shape == A.shape
        assert (A != B).nnz == 0            # exact (17 digits)
    # scipy reads what adia writes, adia reads what scipy writes
    np.testing.assert_array_equal(scipy.io.mmread(str(tmp_path / "a.mtx")).toarray(), A.toarray())
    C = sp.random(20, 30, density=0.2, format="coo", random_state=2)
    scipy.io.mmwrite(str(tmp_path / "c.mtx"), C, symmetry="general")
    D = adia.read_mtx(tmp_path / "c.mtx")
    np.testing.assert_allclose(D.toarray(), C.toarray(), rtol=1e-15)


def test_symmetric_file_expanded(tmp_path):
    p = tmp_path / "s.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n")
    A = adia.read_mtx(p)
    assert A.nnz == 6
    assert (A != A.T).nnz == 0


def test_vector_round_trip(tmp_path):
    x = np.array([1.0, -2.5, 1e-300, np.pi, np.inf, -np.inf, np.nan, 0.0])
    adia.write_vector(x, tmp_path / "x.mtx")
    y = adia.read_vector(tmp_path / "x.mtx")
    assert y.dtype == np.float64 and y.flags.writeable
    np.testing.assert_array_equal(x, y)
    adia.write_vector([1, 2, 3], str(tmp_path / "x.mtx.gz"))
    np.testing.assert_array_equal(adia.read_vector(tmp_path / "x.mtx.gz"), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        adia.write_vector(np.ones((3, 3)), tmp_path / "m.mtx")


def test_writers_take_data_then_path(tmp_path, recwarn):
    """write_mtx(A, path) and write_vector(x, path): one order; the old
    write_vector(path, x) still works, with a DeprecationWarning naming the
    new order (issue 27)."""
    A = adia.generate("lap2d5:3")
    x = np.arange(5.0)
    adia.write_mtx(A, tmp_path / "a.mtx")
    adia.write_vector(x, tmp_path / "x.mtx")
    adia.write_vector(x=x, path=str(tmp_path / "k.mtx"))
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
    assert (adia.read_mtx(tmp_path / "a.mtx") != A).nnz == 0
    np.testing.assert_array_equal(adia.read_vector(tmp_path / "x.mtx"), x)
    np.testing.assert_array_equal(adia.read_vector(tmp_path / "k.mtx"), x)
    with pytest.warns(DeprecationWarning, match=r"write_vector\(x, path\)"):
        adia.write_vector(tmp_path / "old.mtx", x)
    np.testing.assert_array_equal(adia.read_vector(tmp_path / "old.mtx"), x)
    with pytest.warns(DeprecationWarning, match=r"write_vector\(x, path\)"):
        adia.write_vector(str(tmp_path / "old2.mtx"), [7, 8])
    np.testing.assert_array_equal(adia.read_vector(tmp_path / "old2.mtx"), [7.0, 8.0])
    # the same order for a matrix given the other way round: written, and said
    with pytest.warns(DeprecationWarning, match=r"write_mtx\(A, path\)"):
        adia.write_mtx(tmp_path / "b.mtx", A)
    assert (adia.read_mtx(tmp_path / "b.mtx") != A).nnz == 0
    with pytest.raises(TypeError, match="path"):
        adia.write_vector(x, 5)


def _shared(limit_nnz=2_000_000):
    d = shared_matrices_dir()
    if d is None:
        return []
    out = []
    for p in sorted(d.iterdir()):
        if p.suffix in (".mtx", ".gz") and p.stat().st_size < 40_000_000:
            out.append(p)
    return out


@pytest.mark.skipif(shared_matrices_dir() is None, reason="../shared/matrices is absent")
@pytest.mark.parametrize("path", _shared(), ids=lambda p: p.name)
def test_shared_matrix_spmv(path):
    try:
        ref = scipy.io.mmread(str(path))
    except Exception as e:  # a file SciPy cannot read: adia only
        ref = None
        print("scipy cannot read", path, e)
    try:
        A = adia.read_mtx(path)
    except adia.UnsupportedError:
        pytest.skip("not supported by adia (complex?)")
    if ref is not None:
        if np.iscomplexobj(ref.data if sp.issparse(ref) else ref):
            pytest.skip("complex")
        R = sp.csr_matrix(ref)
        assert R.shape == A.shape
        assert abs(R - A).max() <= 1e-12 * max(abs(R).max(), 1e-300)
    P = adia.plan(A, expected_calls=100)
    x = np.random.default_rng(0).standard_normal(A.shape[1])
    ref_y = A @ x
    np.testing.assert_allclose(P @ x, ref_y, rtol=1e-10, atol=1e-10 * (np.abs(ref_y).max() + 1e-300))


_LAPLACIANS = [p for p in _shared() if p.name.startswith(("lap2D", "lap3D", "Laplace"))]


@pytest.mark.skipif(not _LAPLACIANS, reason="../shared/matrices is absent")
@pytest.mark.parametrize("path", _LAPLACIANS, ids=lambda p: p.name)
def test_shared_laplacian_solve(path):
    import scipy.sparse.linalg as spla

    A = adia.read_mtx(path)
    b = A @ np.ones(A.shape[0])
    x, info = adia.solve(A, b, method="cg", rtol=1e-10, maxiter=5000)
    assert info.converged, info
    np.testing.assert_allclose(x, spla.spsolve(A.tocsc(), b), rtol=1e-6, atol=1e-6)
