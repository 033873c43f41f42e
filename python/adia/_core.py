"""The adia Python API (see adia/__init__.py for the overview)."""

import dataclasses
import math
import numbers
import os
import warnings
from typing import Any, Dict, List, Optional

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator as _LinearOperator

from . import _adia
from ._errors import Error  # noqa: F401  (registers the exception classes)
from ._errors import ERR_UNSUPPORTED, InvalidArgumentError, UnsupportedError

__all__ = [
    "Plan",
    "SolveInfo",
    "Analysis",
    "plan",
    "load_plan",
    "solve",
    "analyze",
    "spy",
    "generate",
    "read_mtx",
    "write_mtx",
    "read_vector",
    "write_vector",
    "gpu_available",
    "formats",
]

_DEVICES = {"cpu": 0, "gpu": 1, "cuda": 1}


# ------------------------------------------------------------------ helpers

def _cupy():
    """The cupy module, or None when it cannot be imported."""
    try:
        import cupy  # noqa: WPS433

        return cupy
    except Exception:  # ImportError, or a broken CUDA installation
        return None


def _is_cupy_array(x) -> bool:
    return type(x).__module__.split(".")[0] == "cupy"


def _is_cupy_sparse(A) -> bool:
    return type(A).__module__.startswith("cupyx.scipy.sparse")


def gpu_available() -> bool:
    """True when adia was built with CUDA, a device is usable and CuPy imports."""
    try:
        if _adia.gpu_device_count() <= 0:
            return False
    except Error:
        return False
    return _cupy() is not None


def formats() -> List[str]:
    """Names of the storage formats adia knows ("csr", "dia", "brcsd1", ...)."""
    return list(_adia.format_names())


def _value_dtype(dtype) -> str:
    d = np.dtype(dtype)
    if d == np.float64:
        return "float64"
    if d == np.float32:
        return "float32"
    raise TypeError(f"dtype must be float64 or float32, got {d}")


def _to_csr(A):
    """A as a scipy CSR matrix with real values (no copy when it is one);
    a cupyx.scipy.sparse matrix is copied to the host (CPU plans, solves
    given a matrix: GPU plans of one stay on the device, _device_plan)."""
    if _is_cupy_sparse(A):
        A = A.get()
    if not sp.issparse(A):
        if _is_cupy_array(A):
            A = A.get()
        arr = np.asarray(A)
        if arr.ndim != 2:
            raise ValueError(f"expected a sparse matrix or a 2-D array, got {arr.ndim} dimensions")
        A = sp.csr_matrix(arr)
    A = A.tocsr()
    if np.iscomplexobj(A.data):
        raise TypeError("complex matrices are not supported")
    return A


def _matrix(A):
    """An adia master matrix (_adia._Matrix) holding a copy of A, named
    after A's type (_matrix_name)."""
    if isinstance(A, _adia._Matrix):
        return A
    m = _adia.matrix_from_csr(*_csr_arrays(A))
    m.set_name(_matrix_name(A))
    return m


def _csr_arrays(A):
    """A (anything _to_csr takes) as the C library's CSR arguments: rows,
    cols, int64 row pointers, int32 columns, float64 or float32 values --
    A's own arrays where they have those types (no copy)."""
    A = _to_csr(A)
    rows, cols = A.shape
    if rows > 2**31 - 1 or cols > 2**31 - 1:
        raise ValueError(f"matrix shape {A.shape} out of range: adia indices are 32-bit")
    indptr = np.ascontiguousarray(A.indptr, dtype=np.int64)
    indices = A.indices
    if indices.dtype != np.int32:
        if indices.size and (indices.min() < 0 or indices.max() >= cols):
            raise ValueError("column index out of range")
        indices = indices.astype(np.int32)
    indices = np.ascontiguousarray(indices)
    data = A.data
    if data.dtype not in (np.float64, np.float32):
        data = data.astype(np.float64)
    data = np.ascontiguousarray(data)
    return rows, cols, indptr, indices, data


def _to_scipy(m) -> sp.csr_matrix:
    indptr = np.empty(m.rows + 1, dtype=np.int64)
    indices = np.empty(m.nnz, dtype=np.int32)
    data = np.empty(m.nnz, dtype=np.float64)
    m.copy_to(indptr, indices, data)
    return sp.csr_matrix((data, indices, indptr), shape=(m.rows, m.cols))


def _device_code(device: str) -> int:
    if device == "auto":
        return 1 if gpu_available() else 0
    try:
        return _DEVICES[device]
    except (KeyError, TypeError):
        raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}") from None


_INT64_MAX = 2**63 - 1
_INT32_MAX = 2**31 - 1


def _int_arg(name: str, value, lo: int, hi: int) -> int:
    """value as an int in lo..hi: an integer (Python or NumPy) or a float
    with an integral value; TypeError for anything else (bool included),
    ValueError outside the range -- both naming the argument, before any
    value reaches the C library (whose arguments are fixed-width)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got a bool ({value!r})")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        v = int(value)
    elif isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    else:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} ({value!r})")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, got {v}")
    return v


def _float_arg(name: str, value) -> float:
    """value as a float: a real number (not a bool, a string, ...); TypeError otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    return float(value)


def _str_arg(name: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} ({value!r})")
    return value


def _expected_calls(value) -> int:
    """plan's and analyze's expected_calls: 0 (unknown: planned as 1) to 2**63 - 1."""
    return _int_arg("expected_calls", value, 0, _INT64_MAX)


def _matrix_name(A) -> str:
    """What adia_plan_explain calls a matrix given from Python (it has no
    file name): its type, e.g. "csr_matrix", "coo_array", "ndarray"."""
    t = type(A)
    return t.__name__ if t.__module__.split(".")[0] in ("scipy", "numpy", "cupyx", "cupy") \
        else "matrix"


# --------------------------------------------------------------------- Plan

def _unsupported(msg: str) -> UnsupportedError:
    e = UnsupportedError(msg)
    e.status = ERR_UNSUPPORTED
    return e


class Plan(_LinearOperator):
    """A planned SpMV y = alpha*A*x + beta*y (adia_plan): adia analysed A,
    chose a storage format for the expected number of calls and built it
    (on the GPU for a GPU plan).  Made by :func:`adia.plan`.

    A ``scipy.sparse.linalg.LinearOperator`` (``isinstance`` holds, SciPy's
    solvers take it): ``matvec``, ``rmatvec``, ``matmat``, ``rmatmat``,
    ``P @ x``, ``P * x``, ``P(x)``, ``P.dot(x)``, ``.T``, ``.H``,
    ``.adjoint()``, ``.transpose()``, and SciPy's operator algebra
    (``P @ Q``, ``2 * P``, ``P + Q``).  A 2-D operand of k columns is
    multiplied column by column (k SpMVs).

    The transpose: the C library has no transposed product, so ``P.T`` is a
    plan of A^T, made once on first use (adia_matrix_transpose, a CSR
    transpose of the plan's own copy of A, then planned like P: same
    device, dtype and hints, the same format when P's was fixed) and cached;
    its ``.T`` is P again.  It costs one conversion and the memory of a
    second plan; a GPU plan, which keeps no host copy of A, first brings its
    format to the host once.

    CPU plan: x and the results are NumPy arrays; GPU plan: CuPy arrays,
    and the products run on CuPy's current stream; :meth:`aslinearoperator`
    gives a CuPy LinearOperator for cupyx's solvers.  Arrays of the plan's
    dtype and contiguous pass without copies.
    """

    def __init__(self, _handle, *, _hints=None, _name=None):
        if not isinstance(_handle, _adia._Plan):
            raise TypeError("use adia.plan(A, ...) to make a Plan")
        self._p = _handle
        self._spmv = _handle.spmv
        super().__init__(dtype=np.dtype(_handle.dtype), shape=(_handle.rows, _handle.cols))
        self._gpu = _handle.device == 1
        self._cp = None
        self._hints = _hints     # what plan() was given (the transpose is planned alike)
        self._name = _name       # for explain() when the C matrix has none (device CSR)
        self._T = None           # the transposed plan, once made

    # -- properties
    @property
    def format(self) -> str:
        """The storage format the planner chose ("dia", "brcsd1", "csr", ...)."""
        return self._p.format

    @property
    def device(self) -> str:
        """"cpu" or "gpu"."""
        return "gpu" if self._p.device == 1 else "cpu"

    @property
    def nnz(self) -> int:
        return self._p.nnz

    @property
    def chooser(self) -> str:
        return self._p.chooser

    @property
    def predicted_ms(self) -> float:
        """The model's predicted time of one SpMV in ms."""
        return self._p.predicted_ms

    @property
    def closed(self) -> bool:
        return self._p.closed

    def explain(self) -> str:
        """What the plan chose and why (adia_plan_explain)."""
        text = self._p.explain()
        if text.startswith("plan:  (") and self._name:   # a matrix without a name
            text = "plan: " + self._name + text[len("plan: "):]
        return text

    def update(self, A) -> None:
        """Refill the plan with the values of A, a matrix of the same
        pattern as the one planned (adia_plan_update_values): the format,
        its upload and its kernels stay, only the values change (time
        stepping, nonlinear iterations, parameter sweeps).  A: as for
        :func:`adia.plan`; a cupyx.scipy.sparse matrix updates a GPU plan
        made from one without a host copy in Python.  A different pattern
        or shape raises adia.InvalidArgumentError naming the first row that
        differs, or the shapes (the plan is left as it was).
        Later products and solves use the new values; the cached transpose
        is dropped (made again on first use)."""
        if self._p.matrix is None and _is_cupy_sparse(A) and self._gpu:
            self._update_device(A)
        else:
            self._p.update(_matrix(A))
        T, self._T = self._T, None
        if T is not None:
            T._T = None
            T.close()

    def _update_device(self, A) -> None:
        def update(A, indptr, bits, indices):
            self._p.update_device_csr(int(A.shape[0]), int(A.shape[1]), int(A.nnz),
                                      indptr.data.ptr, bits, indices.data.ptr, A.data.data.ptr,
                                      _value_dtype(A.dtype))
        _canonical_retry(A, update)

    def save(self, path) -> None:
        """Save the choice (adia_plan_save); :func:`adia.load_plan` rebuilds it."""
        self._p.save(os.fspath(path))

    def close(self) -> None:
        """Free the plan and its format now (host and device), and its
        transpose's; later use raises ValueError."""
        T, self._T = self._T, None
        if T is not None:
            T._T = None
            T.close()
        self._p.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self) -> str:
        if self._p.closed:
            return "<adia.Plan (closed)>"
        return (f"<adia.Plan {self.shape[0]}x{self.shape[1]} nnz={self.nnz} "
                f"format={self.format} device={self.device} dtype={self.dtype}>")

    # -- products
    def _array_module(self):
        # not "_xp": SciPy's LinearOperator (1.18) sets an attribute of that
        # name in its __init__, which would hide the method
        if not self._gpu:
            return np
        if self._cp is None:
            self._cp = _cupy()
            if self._cp is None:
                raise ImportError("a GPU plan takes CuPy arrays: install cupy")
        return self._cp

    def _array(self, x, name="x"):
        """x as an array of this plan's device (NumPy, or CuPy for a GPU plan)."""
        if sp.issparse(x):
            x = x.toarray()
        if self._gpu and not _is_cupy_array(x):
            raise TypeError(f"a GPU plan takes CuPy arrays (cupy.asarray({name})); "
                            "make a CPU plan (device='cpu') for NumPy arrays")
        return self._array_module().asarray(x)

    def matvec(self, x, out=None, alpha=1.0, beta=0.0):
        """y = alpha*A*x + beta*y.

        x: shape (n,) or (n, 1).  out: the result array (shape (m,), the
        plan's dtype, contiguous, on the plan's device), written in place
        and returned; without it a new array is returned (beta must then be
        0).  With out given nothing is converted: x must have the plan's
        dtype too.
        """
        if out is not None:
            if self._gpu:
                self._gpu_spmv(x, out, alpha, beta)
            else:
                self._spmv(x, out, alpha, beta, 0)
            return out
        if beta != 0:
            raise ValueError("beta != 0 needs out= (the y to update)")
        xp = self._array_module()
        x = self._array(x)
        column = x.ndim == 2 and x.shape[1] == 1
        if x.ndim != 1 and not column:
            raise ValueError(f"x must have shape ({self.shape[1]},) or ({self.shape[1]}, 1), got {x.shape}")
        if x.dtype != self.dtype:
            if x.dtype.kind == "c":
                raise TypeError("complex vectors are not supported")
            x = x.astype(self.dtype)
        x = xp.ascontiguousarray(x.reshape(-1))
        y = xp.empty(self.shape[0], dtype=self.dtype)
        if self._gpu:
            self._gpu_spmv(x, y, alpha, 0.0)
        else:
            self._spmv(x, y, alpha, 0.0, 0)
        return y.reshape(-1, 1) if column else y

    def _gpu_spmv(self, x, out, alpha, beta):
        cp = self._array_module()
        stream = cp.cuda.get_current_stream().ptr
        if type(x) is not cp.ndarray or type(out) is not cp.ndarray:
            # another CUDA array (DLPack): checked by the binding
            self._spmv(x, out, alpha, beta, stream)
            return
        for name, a, n in (("x", x, self.shape[1]), ("out", out, self.shape[0])):
            if a.ndim != 1:
                raise ValueError(f"{name} must be one-dimensional, got {a.ndim} dimensions")
            if a.dtype != self.dtype:
                raise TypeError(f"{name} must be {self.dtype}, got {a.dtype}")
            if a.shape[0] != n:
                raise ValueError(f"{name} has length {a.shape[0]}, expected {n}")
            if not a.flags.c_contiguous:
                raise ValueError(f"{name} must be contiguous (stride 1)")
        self._p.spmv_ptr(x.data.ptr, out.data.ptr, alpha, beta, stream)

    def matmat(self, X):
        """A @ X for X of shape (n, k): one SpMV per column."""
        xp = self._array_module()
        X = self._array(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
        if X.shape[0] != self.shape[1]:
            raise ValueError(f"X must have {self.shape[1]} rows, got shape {X.shape}")
        Y = xp.empty((self.shape[0], X.shape[1]), dtype=self.dtype)
        for j in range(X.shape[1]):
            Y[:, j] = self.matvec(X[:, j])
        return Y

    def rmatvec(self, x):
        """A^T x (= A^H x: real values), by the transposed plan (see ``T``)."""
        return self.T.matvec(x)

    def rmatmat(self, X):
        """A^T @ X for X of shape (m, k), column by column."""
        return self.T.matmat(X)

    # what SciPy's LinearOperator calls
    def _matvec(self, x):
        return self.matvec(x)

    def _matmat(self, X):
        return self.matmat(X)

    def _rmatvec(self, x):
        return self.rmatvec(x)

    def _rmatmat(self, X):
        return self.rmatmat(X)

    def _transpose(self):
        if self._T is None:
            self._T = self._make_transpose()
        return self._T

    _adjoint = _transpose   # real values: A^H = A^T

    def _make_transpose(self):
        m = self._p.matrix   # also checks that the plan is open
        if m is None:   # a GPU plan: its format, downloaded once
            m = _adia.plan_matrix(self._p)
        h = dict(self._hints or {})
        calls = h.get("expected_calls", 1)
        chooser = h.get("chooser", "model")
        fixed = chooser == "fixed" or h.get("format")
        mt = _adia.matrix_transpose(m)
        handle = _adia.plan_create(mt, int(calls), self._p.device, str(self.dtype),
                                   "fixed" if fixed else chooser,
                                   self.format if fixed else "", h.get("params") or "",
                                   bool(h.get("nondeterministic", False)))
        T = Plan(handle, _hints=h, _name=(self._name or m.name or "matrix") + ".T")
        T._T = self
        return T

    def dot(self, x):
        """A @ x for a vector or a 2-D array x (column by column); with a
        scalar or another LinearOperator, SciPy's scaled or product operator."""
        if isinstance(x, _LinearOperator) or np.isscalar(x):
            return super().dot(x)
        x = self._array(x)
        if x.ndim == 1 or (x.ndim == 2 and x.shape[1] == 1):
            return self.matvec(x)
        if x.ndim == 2:
            return self.matmat(x)
        raise ValueError(f"expected a 1-D or 2-D array, got shape {x.shape}")

    def __matmul__(self, x):
        if np.isscalar(x):
            raise ValueError("Scalar operands are not allowed, use '*' instead")
        return self.dot(x)

    def __mul__(self, x):
        return self.dot(x)

    def __call__(self, x, out=None, alpha=1.0, beta=0.0):
        """P(x) = P @ x; with out=, alpha, beta: matvec's in-place update."""
        if out is not None or alpha != 1.0 or beta != 0.0:
            return self.matvec(x, out=out, alpha=alpha, beta=beta)
        return self.dot(x)

    def aslinearoperator(self):
        """A CPU plan is a scipy.sparse.linalg.LinearOperator already (returned
        as is); a GPU plan gives a cupyx.scipy.sparse.linalg.LinearOperator
        calling it (matvec, rmatvec, matmat, rmatmat), for cupyx's solvers."""
        if not self._gpu:
            return self
        self._array_module()
        from cupyx.scipy.sparse.linalg import LinearOperator

        kw = dict(matvec=self.matvec, rmatvec=self.rmatvec, matmat=self.matmat, dtype=self.dtype)
        try:
            return LinearOperator(self.shape, rmatmat=self.rmatmat, **kw)
        except TypeError:   # a CuPy whose LinearOperator has no rmatmat
            return LinearOperator(self.shape, **kw)


def plan(A, expected_calls: int = 1, device: str = "cpu", dtype=np.float64, *,
         chooser: str = "model", format: Optional[str] = None, params: Optional[str] = None,
         nondeterministic: bool = False) -> Plan:
    """Plan y = A x (adia_plan_create): analyse A once, choose a storage
    format for `expected_calls` products, build it (and upload it for the
    GPU).

    A: any scipy.sparse matrix or array (CSR, CSC, COO, DIA, ...; converted
    once to CSR), a dense 2-D array, or a cupyx.scipy.sparse matrix (on
    the GPU planned where it lies: analysis and conversion on the device,
    no host round trip; for a CPU plan copied to the host once).  device: "cpu" (NumPy vectors), "gpu" (CuPy
    vectors; adia.NoDeviceError without a device) or "auto" (the GPU when a
    device is usable and CuPy imports).  dtype: float64 or float32 (of x
    and y).  chooser: "model" (least predicted time), "rules" (the paper's
    search engine), "measure" (time the best candidates) or "fixed" with
    format= a format name (format= alone implies "fixed").  params: format
    parameters as "B=256,C=32,...".  nondeterministic: True lets a GPU
    plan use kernels whose y may differ in its last bits from run to run
    (cuSPARSE CSR ALG1, faster on irregular rows: MEASURE times it, MODEL
    rates csr at it); the default keeps every product bitwise
    reproducible.  expected_calls: an integer in 0..2**63 - 1 (0: unknown,
    planned as 1); anything else is a TypeError or ValueError naming it,
    before any work.

    A CPU plan keeps its own copy of A (the master CSR, which adia.solve
    reads); a GPU plan keeps only its format (A's arrays are read in place
    while it is made, not copied).
    """
    calls = _expected_calls(expected_calls)
    chooser = _str_arg("chooser", chooser)
    format = None if format is None else _str_arg("format", format)
    params = None if params is None else _str_arg("params", params)
    if not isinstance(nondeterministic, (bool, np.bool_)):
        raise TypeError("nondeterministic must be True or False, got %r" % (nondeterministic,))
    nondet = bool(nondeterministic)
    dev = _device_code(device)
    hints = {"expected_calls": calls, "chooser": chooser, "format": format, "params": params,
             "nondeterministic": nondet}
    if _is_cupy_sparse(A) and dev != 0 and gpu_available():
        return _device_plan(A, calls, dtype, chooser, format, params, hints)
    if dev != 0 and not isinstance(A, _adia._Matrix):
        # a GPU plan keeps no host copy of A: planned from A's own arrays
        # (adia_plan_create_csr), solved with adia_solve(NULL, plan)
        name = _matrix_name(A)
        handle = _adia.plan_create_csr(*_csr_arrays(A), name, calls, dev, _value_dtype(dtype),
                                       chooser, format or "", params or "", nondet)
        return Plan(handle, _hints=hints, _name=name)
    m = _matrix(A)
    handle = _adia.plan_create(m, calls, dev, _value_dtype(dtype),
                               chooser, format or "", params or "", nondet)
    return Plan(handle, _hints=hints, _name=m.name)


def _device_csr(A, canonical=False):
    """A cupyx.scipy.sparse matrix as adia_device_csr wants it: (A as CSR
    with real values in float64 or float32, row pointers, their width in
    bits, int32 columns); CuPy's stream synchronised, since adia reads A on
    its own.  canonical: duplicates summed and columns sorted first (else
    adia checks that each row's columns ascend, see _canonical_retry)."""
    cp = _cupy()
    A = A.tocsr()
    if A.dtype.kind == "c":
        raise TypeError("complex matrices are not supported")
    if A.dtype not in (np.float64, np.float32):
        A = A.astype(np.float64)
    if canonical and not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    indptr, indices = A.indptr, A.indices.astype(np.int32, copy=False)
    bits = 64 if indptr.dtype == np.int64 else 32
    if indptr.dtype not in (np.int32, np.int64):
        indptr, bits = indptr.astype(np.int64), 64
    cp.cuda.get_current_stream().synchronize()
    return A, indptr, bits, indices


def _canonical_retry(A, call):
    """call(_device_csr(A)) as A is, and only where adia refuses it (a
    row's columns not ascending, or repeated) once more with A's duplicates
    summed and columns sorted by CuPy.  adia checks the order on the device
    as it reads A; CuPy's own check (has_canonical_format) compiles a kernel
    of its own, 5.5 s on a machine's first use (H200, issue 28)."""
    try:
        return call(*_device_csr(A))
    except InvalidArgumentError:
        B = A.tocsr()
        if B.has_canonical_format:
            raise
    return call(*_device_csr(A, canonical=True))


def _device_plan(A, expected_calls, dtype, chooser, format, params, hints) -> Plan:
    """A GPU plan of a cupyx.scipy.sparse matrix without a host round trip
    (adia_plan_create_device_csr: analysis and conversion on the GPU).  The
    plan keeps no copy of A's CSR: A may change or go afterwards."""
    name = _matrix_name(A)

    def create(A, indptr, bits, indices):
        return _adia.plan_create_device_csr(
            int(A.shape[0]), int(A.shape[1]), int(A.nnz), indptr.data.ptr, bits, indices.data.ptr,
            A.data.data.ptr, _value_dtype(A.dtype), expected_calls, _value_dtype(dtype),
            chooser, format or "", params or "", bool(hints.get("nondeterministic", False)))
    return Plan(_canonical_retry(A, create), _hints=hints, _name=name)


def load_plan(A, path) -> Plan:
    """Rebuild a plan saved with Plan.save for A (same structure), without analysis."""
    m = _matrix(A)
    handle = _adia.plan_load(m, os.fspath(path))
    return Plan(handle, _hints={"chooser": "fixed"}, _name=m.name)


# -------------------------------------------------------------------- solve

@dataclasses.dataclass
class SolveInfo:
    """What adia.solve did (adia_solve_info)."""

    iterations: int
    converged: bool
    residual: float     #: ||b - A x|| / ||b|| of the returned x, computed afresh
    stop: str           #: why it stopped ("converged", "iteration limit reached", ...)
    time_ms: float      #: the iterations alone, SpMVs included (the first iteration's launch to the stop)
    setup_ms: float     #: the rest of the call: a plan made for it, workspace, uploads, compiles, graph capture
    spmv_ms: float      #: of which SpMV (CPU; NaN on the GPU)
    spmvs: int
    format: str         #: the plan's storage format
    method: str
    precond: str = ""   #: the preconditioner used: "none", "jacobi" or a kind (auto's choice)
    fallback: str = ""  #: the default's mg stopped short: why (then solved again with jacobi)


def solve(A, b, method: str = "cg", rtol: Optional[float] = None, maxiter: Optional[int] = None,
          x0=None, jacobi: bool = False, restart: Optional[int] = None, device: str = "cpu",
          precond=None, grid=None):
    """Solve A x = b with adia's Krylov solvers (adia_solve); returns (x, info).

    A: a Plan of A (its format and device are used; a GPU plan takes host
    vectors here, moved to the device once), or a matrix as for adia.plan
    (then a plan is made on `device` for `maxiter` calls and freed).
    b: NumPy or CuPy vector.  With a GPU plan and a CuPy b the solve stays
    on the device (adia_plan_solve on CuPy's current stream: no host copy,
    x returned as CuPy in the plan's dtype); otherwise b is read on the host
    (a CuPy b is copied once, and x returned as CuPy).  method: "cg" (A
    symmetric positive definite),
    "bicgstab" or "gmres" (restarted every `restart` vectors).  Stops at
    ||b - A x|| <= rtol ||b|| or after maxiter iterations; not converging
    is not an error: look at info.converged and info.stop.  rtol, maxiter
    and restart None: the library's one set of defaults
    (adia_solve_options_default: 1e-8, 1000, 30).  maxiter and restart:
    integers in 1..2**31 - 1; x0: shape (n,) or (n, 1); anything else is a
    TypeError or ValueError naming the argument.

    precond: None -- CG's default: "auto", and where the mg it made stops
    short, solved again with "jacobi" (info.fallback says why); the other
    methods: none --, "none" (no preconditioner), "jacobi" (as jacobi=True:
    the solvers' fused diagonal), "cheb" (Chebyshev polynomial in D^-1 A),
    "mg" (geometric multigrid; grid=(nx, ny, nz) when the offsets do not
    tell it), "agg" (multigrid by smoothed aggregation of consecutive rows:
    SPD A that no grid suits), "auto" (mg on a grid of 128 or more points along an edge
    -- agg on a strip 2 points wide --, else jacobi, else none)
    -- made for this call on A's plan (a plan is made on `device` when A
    is a matrix) and freed after -- or an :class:`adia.Precond` made by
    :func:`adia.precond` on the Plan given as A, reused across solves.
    jacobi=True with a precond, or grid= without precond="mg" or "auto",
    is a ValueError.
    """
    method = _str_arg("method", method)
    d_rtol, d_maxiter, d_restart = _adia.solve_defaults()
    rtol = _float_arg("rtol", d_rtol if rtol is None else rtol)
    maxiter = d_maxiter if maxiter is None else maxiter
    restart = d_restart if restart is None else restart
    maxiter = _int_arg("maxiter", maxiter, 1, _INT32_MAX)
    restart = _int_arg("restart", restart, 1, _INT32_MAX)
    from ._precond import _solve_precond   # _precond imports this module

    # CG's default: auto (mg on a large grid, else jacobi, else none)
    default = precond is None and grid is None and not jacobi and method == "cg"
    A, M, jacobi, owned = _solve_precond(A, "auto" if default else precond, grid, jacobi, maxiter,
                                         device)
    try:
        # where auto's mg stops short (a matrix that is not SPD, a grid mg
        # does not suit) the library solves again with Jacobi from x0
        # (info.fallback): the default must not fail where Jacobi converges
        x, info = _solve(A, b, method, rtol, maxiter, x0, jacobi, restart, device, M)
        info.precond = ("jacobi" if info.fallback or (jacobi and M is None) else
                        M.kind if M is not None else "none")
        return x, info
    finally:
        for obj in owned:   # the preconditioner first: it points to the plan
            obj.close()


def _solve(A, b, method, rtol, maxiter, x0, jacobi, restart, device, M):
    """solve() once its arguments and preconditioner are settled."""
    pc = None if M is None else M._h
    if isinstance(A, Plan):
        handle = A._p
        m = handle.matrix   # None: a GPU plan, its own matrix (adia_solve's A NULL)
        dev = handle.device
        n_rows, n_cols = A.shape
    else:
        handle = None
        m = _matrix(A)
        dev = _device_code(device)
        n_rows, n_cols = m.rows, m.cols
    if n_rows != n_cols:
        raise ValueError(f"solve needs a square matrix, got {n_rows} x {n_cols}")
    if method not in ("cg", "bicgstab", "gmres"):
        raise ValueError(f"method must be 'cg', 'bicgstab' or 'gmres', got {method!r}")
    on_gpu = _is_cupy_array(b)
    if on_gpu and handle is not None and dev == 1:
        return _solve_on_device(A, b, method, rtol, maxiter, x0, jacobi, restart, pc)
    bh = b.get() if on_gpu else b
    bh = np.asarray(bh)
    if bh.dtype.kind == "c":
        raise TypeError("complex right-hand sides are not supported")
    if bh.ndim == 2 and bh.shape[1] == 1:
        bh = bh.reshape(-1)
    if bh.ndim != 1 or bh.shape[0] != n_rows:
        raise ValueError(f"b must have shape ({n_rows},), got {bh.shape}")
    bh = np.ascontiguousarray(bh, dtype=np.float64)
    if x0 is None:
        x = np.zeros(n_rows)
    else:
        x0h = np.asarray(x0.get() if _is_cupy_array(x0) else x0)
        _check_vector_shape("x0", x0h.shape, n_rows)
        if x0h.dtype.kind == "c":
            raise TypeError("complex initial guesses are not supported")
        x = np.array(x0h, dtype=np.float64, copy=True).reshape(-1)
    if method not in ("cg", "bicgstab", "gmres"):
        raise ValueError(f"method must be 'cg', 'bicgstab' or 'gmres', got {method!r}")
    d = _adia.solve(m, handle, bh, x, method, float(rtol), int(maxiter), bool(jacobi), dev,
                    int(restart), pc)
    info = SolveInfo(**{f.name: d[f.name] for f in dataclasses.fields(SolveInfo) if f.name in d})
    if on_gpu:
        x = _cupy().asarray(x)
    return x, info


def _check_vector_shape(name, shape, n):
    """A vector of n entries: shape (n,) or (n, 1); ValueError otherwise
    (an (n/2, 2) array has n entries but is no vector)."""
    if tuple(shape) not in ((n,), (n, 1)):
        raise ValueError(f"{name} must have shape ({n},) or ({n}, 1), got {tuple(shape)}")


def _solve_on_device(P, b, method, rtol, maxiter, x0, jacobi, restart, pc=None):
    """solve() for a GPU plan and a CuPy b: device arrays of the plan's
    dtype, adia_plan_solve on CuPy's current stream."""
    cp = _cupy()
    n = P.shape[0]
    if b.ndim == 2 and b.shape[1] == 1:
        b = b.reshape(-1)
    if b.ndim != 1 or b.shape[0] != n:
        raise ValueError(f"b must have shape ({n},), got {b.shape}")
    if b.dtype.kind == "c":
        raise TypeError("complex right-hand sides are not supported")
    b = cp.ascontiguousarray(b, dtype=P.dtype)
    if x0 is None:
        x = cp.zeros(n, dtype=P.dtype)
    else:
        x0 = cp.asarray(x0)
        _check_vector_shape("x0", x0.shape, n)
        x = cp.array(x0, dtype=P.dtype, copy=True).reshape(-1)
    stream = cp.cuda.get_current_stream().ptr
    d = _adia.solve_ptr(P._p, b.data.ptr, x.data.ptr, method, float(rtol), int(maxiter),
                        bool(jacobi), int(restart), stream, pc)
    info = SolveInfo(**{f.name: d[f.name] for f in dataclasses.fields(SolveInfo) if f.name in d})
    return x, info


# ----------------------------------------------------------------- analysis

@dataclasses.dataclass
class Analysis:
    """adia.analyze's result: the paper's matrix type, the features
    (adia_features) and the planner's candidates, best first."""

    type: str                        #: "I", "II" or "III"
    format: str                      #: the format the type implies (dia/brcsd1/brcsd2)
    features: Dict[str, Any]
    candidates: List[Dict[str, Any]]

    def __str__(self) -> str:
        f = self.features
        lines = [f"{f['rows']} x {f['cols']}, nnz {f['nnz']}, {f['n_diag']} diagonals, "
                 f"type {self.type} -> {self.format}",
                 f"{'format':<10}{'spmv_ms':>12}{'convert_ms':>12}{'total_ms':>12}{'storage_MB':>12}"]
        for c in self.candidates:
            lines.append(f"{c['format']:<10}{c['spmv_ms']:>12.4g}{c['convert_ms']:>12.4g}"
                         f"{c['total_ms']:>12.4g}{c['storage_bytes'] / 1e6:>12.3f}")
        return "\n".join(lines)


def analyze(A, expected_calls: int = 1, device: str = "cpu", dtype=np.float64) -> Analysis:
    """Type, features (adia_matrix_analyze) and the planner's per-format
    predicted costs (adia_plan_candidates) for `expected_calls` products."""
    calls = _expected_calls(expected_calls)
    m = _matrix(A)
    d = _adia.analyze(m, calls, _device_code(device), _value_dtype(dtype))
    return Analysis(type=d["type"], format=d["format"], features=dict(d["features"]),
                    candidates=[dict(c) for c in d["candidates"]])


def spy(A, path, overlay: Optional[str] = None, size: int = 800, caption: Optional[str] = None,
        params: Optional[str] = None):
    """Write the sparsity picture of A as a PNG (adia_matrix_spy_png);
    overlay: a diagonal format ("dia", "hdi", "brcsd1", "brcsd2", "crsd")
    whose pieces and offset groups are drawn.  Returns path."""
    size = int(size)
    if not 8 <= size <= 8192:
        raise ValueError(f"size must be in 8..8192, got {size}")
    _adia.spy(_matrix(A), os.fspath(path), overlay or "", size, caption or "", params or "")
    return path


# ---------------------------------------------------------------------- I/O

def _check_readable(path) -> str:
    p = os.fspath(path)
    if p != "-" and not os.path.exists(p):
        raise FileNotFoundError(2, "No such file or directory", p)
    return p


def generate(spec: str) -> sp.csr_matrix:
    """A test matrix from a generator spec (adia_matrix_generate), e.g.
    "lap2d5:64", "lap3d7:32", "band:1000,5", "type2:20000";
    adia.generator_help() lists them."""
    return _to_scipy(_adia.generate(str(spec)))


def generator_help() -> str:
    return _adia.generator_help()


def read_mtx(path) -> sp.csr_matrix:
    """Read a Matrix Market file (or adia's binary format; gzip by content)
    as a scipy.sparse.csr_matrix.  Symmetric storage is expanded."""
    return _to_scipy(_adia.read_mtx(_check_readable(path)))


def _is_path(p) -> bool:
    return isinstance(p, (str, bytes, os.PathLike))


def _data_then_path(func: str, data_name: str, data, path):
    """(data, path) for the writers, whose order is the data, then where it
    goes (as spy(A, path) and Plan.save(path)); the old order of
    write_vector, (path, x), still works, with a DeprecationWarning."""
    if _is_path(data) and not _is_path(path):
        warnings.warn(f"adia.{func}(path, {data_name}) is deprecated: the order is "
                      f"adia.{func}({data_name}, path), as adia.write_mtx(A, path)",
                      DeprecationWarning, stacklevel=3)
        data, path = path, data
    if not _is_path(path):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    return data, os.fspath(path)


def write_mtx(A, path) -> None:
    """Write A as Matrix Market coordinate real general (exact round trip;
    gzip-compressed if the name ends in .gz).  The same order as
    write_vector(x, path): the data, then the path."""
    A, path = _data_then_path("write_mtx", "A", A, path)
    _adia.write_mtx(_matrix(A), path)


def read_vector(path) -> np.ndarray:
    """Read a dense vector from a Matrix Market file (array n x 1 or 1 x n,
    or coordinate n x 1) as a float64 NumPy array."""
    data = _adia.read_vector(_check_readable(path))
    return np.frombuffer(data, dtype=np.float64).copy()


def write_vector(x, path) -> None:
    """Write x as Matrix Market `array real general` n x 1 (exact round
    trip; gzip-compressed if the name ends in .gz).  The same order as
    write_mtx(A, path); the old order write_vector(path, x) still works and
    warns (DeprecationWarning)."""
    x, path = _data_then_path("write_vector", "x", x, path)
    if _is_cupy_array(x):
        x = x.get()
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("complex vectors are not supported")
    if x.ndim == 2 and 1 in x.shape:
        x = x.reshape(-1)
    if x.ndim != 1:
        raise ValueError(f"x must be a vector, got shape {x.shape}")
    _adia.write_vector(path, np.ascontiguousarray(x, dtype=np.float64))
