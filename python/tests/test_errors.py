"""Bad inputs raise Python exceptions carrying adia's message; none crashes."""
import numpy as np
import pytest
import scipy.sparse as sp

import adia


@pytest.fixture
def P():
    return adia.plan(adia.generate("lap2d5:8"))


def test_exception_hierarchy():
    assert issubclass(adia.Error, RuntimeError)
    assert issubclass(adia.InvalidArgumentError, ValueError)
    assert issubclass(adia.InvalidArgumentError, adia.Error)
    assert issubclass(adia.ParseError, ValueError)
    assert issubclass(adia.OutOfMemoryError, MemoryError)
    assert issubclass(adia.AdiaIOError, OSError)
    assert issubclass(adia.NoDeviceError, adia.Error)


def test_wrong_length_x(P):
    with pytest.raises(ValueError, match="length 5, expected 64"):
        P @ np.ones(5)
    with pytest.raises(ValueError, match="out has length 63"):
        P.matvec(np.ones(64), out=np.empty(63))


def test_wrong_dtype_and_layout(P):
    with pytest.raises(TypeError, match="float64"):
        P.matvec(np.ones(64, dtype=np.float32), out=np.empty(64))
    with pytest.raises(TypeError, match="float64"):
        P.matvec(np.ones(64), out=np.empty(64, dtype=np.float32))
    with pytest.raises(ValueError, match="contiguous"):
        P.matvec(np.ones(128)[::2], out=np.empty(64))
    with pytest.raises(ValueError, match="one-dimensional"):
        P.matvec(np.ones((8, 8)), out=np.empty(64))
    with pytest.raises(TypeError, match="complex"):
        P @ np.ones(64, dtype=complex)
    with pytest.raises(ValueError):
        P @ np.ones((2, 2, 16))
    y = np.ones(64)
    with pytest.raises(ValueError, match="overlap"):
        P.matvec(y, out=y)
    with pytest.raises(ValueError, match="beta"):
        P.matvec(np.ones(64), beta=1.0)
    with pytest.raises(TypeError):
        P.matvec(np.ones(64), out=[0.0] * 64)


def test_readonly_out(P):
    y = np.empty(64)
    y.setflags(write=False)
    with pytest.raises((TypeError, ValueError)):
        P.matvec(np.ones(64), out=y)


def test_closed_plan(P):
    P.close()
    with pytest.raises(ValueError, match="closed"):
        P @ np.ones(64)
    with pytest.raises(ValueError, match="closed"):
        P.matvec(np.ones(64), out=np.empty(64))
    with pytest.raises(ValueError, match="closed"):
        P.explain()
    with pytest.raises(ValueError, match="closed"):
        adia.solve(P, np.ones(64))


def test_solve_bad_inputs(P):
    with pytest.raises(ValueError, match="square"):
        adia.solve(sp.random(5, 6, density=0.5, format="csr"), np.ones(5))
    b = np.ones(64)
    b[3] = np.nan
    with pytest.raises(ValueError, match=r"b\[3\] = nan") as e:
        adia.solve(P, b)
    assert isinstance(e.value, adia.Error) and e.value.status == -1
    with pytest.raises(ValueError, match="method"):
        adia.solve(P, np.ones(64), method="lu")
    with pytest.raises(ValueError, match="shape"):
        adia.solve(P, np.ones(63))
    with pytest.raises(ValueError, match="x0"):
        adia.solve(P, np.ones(64), x0=np.ones(3))
    with pytest.raises(ValueError, match="rtol"):
        adia.solve(P, np.ones(64), rtol=-1)
    with pytest.raises(ValueError, match="maxiter"):
        adia.solve(P, np.ones(64), maxiter=0)
    with pytest.raises(TypeError, match="complex"):
        adia.solve(P, np.ones(64, dtype=complex))
    Z = sp.eye(10, format="lil")
    Z[0, 0] = 0
    Z[0, 1] = 1
    with pytest.raises(ValueError, match="Jacobi"):
        adia.solve(Z, np.ones(10), jacobi=True)


def test_float32_cpu_plan_cannot_solve():
    Pf = adia.plan(adia.generate("lap2d5:8"), dtype=np.float32)
    with pytest.raises(adia.Error, match="double"):
        adia.solve(Pf, np.ones(64))


def test_plan_bad_arguments():
    A = adia.generate("lap2d5:8")
    with pytest.raises(ValueError, match="device"):
        adia.plan(A, device="tpu")
    with pytest.raises(TypeError, match="dtype"):
        adia.plan(A, dtype=np.int32)
    with pytest.raises(ValueError, match="unknown format"):
        adia.plan(A, format="nope")
    with pytest.raises(ValueError, match="chooser"):
        adia.plan(A, chooser="guess")
    with pytest.raises(ValueError):
        adia.plan(A, params="B=banana")
    with pytest.raises(TypeError, match="complex"):
        adia.plan(sp.eye(3, dtype=complex))
    with pytest.raises(ValueError):
        adia.plan(np.ones(3))
    with pytest.raises(TypeError):
        adia.Plan(None)


def test_no_device_without_gpu():
    if adia.gpu_available():
        pytest.skip("a GPU is usable here")
    A = adia.generate("lap2d5:8")
    try:
        adia.plan(A, device="gpu")
    except adia.NoDeviceError as e:
        assert e.status == -10
        assert "device" in str(e)
    # auto falls back to the CPU
    assert adia.plan(A, device="auto").device == "cpu"


def test_generate_bad_spec():
    with pytest.raises(ValueError, match="unknown kind"):
        adia.generate("nope:3")
    with pytest.raises(ValueError):
        adia.generate("lap2d5:-3")


def test_io_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        adia.read_mtx(tmp_path / "missing.mtx")
    with pytest.raises(FileNotFoundError):
        adia.read_vector(tmp_path / "missing.mtx")
    with pytest.raises(OSError):
        adia.write_mtx(sp.eye(3), tmp_path / "no" / "dir.mtx")
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 5 1.0\n")
    with pytest.raises(adia.ParseError, match="bad.mtx:3"):
        adia.read_mtx(bad)
    cplx = tmp_path / "c.mtx"
    cplx.write_text("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1.0 2.0\n")
    with pytest.raises(adia.UnsupportedError, match="complex"):
        adia.read_mtx(cplx)
