"""Preconditioners (adia_precond): adia.precond, adia.Precond, and how
adia.solve takes them (_solve_precond)."""

from typing import Optional

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator as _LinearOperator

from . import _adia
from ._core import Plan, _cupy, _is_cupy_array, _int_arg, _str_arg, plan

__all__ = ["Precond", "precond"]

_MG_ONLY = ("grid", "cycle", "smoother", "sweeps", "max_levels")


class Precond(_LinearOperator):
    """A preconditioner M ~ A^-1 (adia_precond) built once on a Plan of A
    and reused: ``adia.solve(P, b, precond=M)`` with the Plan ``P`` it was
    made on (``M.plan``).  Made by :func:`adia.precond`.

    A ``scipy.sparse.linalg.LinearOperator`` whose product is z = M r
    (``M @ r``, ``M.matvec(r)``): SciPy's solvers take it as their ``M=``.
    A CPU preconditioner takes and returns NumPy arrays; a GPU one CuPy
    arrays (on CuPy's current stream), and :meth:`aslinearoperator` gives a
    cupyx LinearOperator for cupyx's solvers.  Its plan must stay open
    while it is used (closing the plan makes it unusable); closing the
    Precond frees it now, and a plan made for it by adia.precond(A, ...).
    """

    def __init__(self, _handle, _plan, _owns_plan=False):
        if not isinstance(_handle, _adia._Precond):
            raise TypeError("use adia.precond(plan, ...) to make a Precond")
        self._h = _handle
        self._plan = _plan
        self._owns_plan = _owns_plan
        self._gpu = _plan.device == "gpu"
        super().__init__(dtype=_plan.dtype, shape=_plan.shape)

    @property
    def kind(self) -> str:
        """"none", "jacobi", "cheb", "mg" or "agg" (for "auto": the kind it made)."""
        return self._h.kind

    @property
    def setup_ms(self) -> float:
        """The set-up's wall clock in ms (adia_precond_create)."""
        return self._h.setup_ms

    @property
    def plan(self) -> Plan:
        """The Plan it was made on (pass it as adia.solve's A)."""
        if self._plan is None:
            raise ValueError("the preconditioner is closed")
        return self._plan

    @property
    def device(self) -> str:
        return "gpu" if self._gpu else "cpu"

    @property
    def closed(self) -> bool:
        return self._h.closed

    def explain(self) -> str:
        """What it is (adia_precond_explain): kind, set-up, and for mg the
        hierarchy (levels, rows, stencils, complexity, launches per cycle)."""
        return self._h.explain()

    def close(self) -> None:
        """Free it now (and the plan adia.precond made for it); later use
        raises ValueError."""
        self._h.close()
        p, self._plan = self._plan, None
        if self._owns_plan and p is not None:
            p.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self) -> str:
        if self._h.closed:
            return "<adia.Precond (closed)>"
        return (f"<adia.Precond {self.kind} {self.shape[0]}x{self.shape[1]} "
                f"device={self.device} dtype={self.dtype}>")

    # -- z = M r
    def matvec(self, r):
        """z = M r for r of shape (n,) or (n, 1) (a new array, same shape)."""
        xp = self._array_module()
        if sp.issparse(r):
            r = r.toarray()
        if self._gpu and not _is_cupy_array(r):
            raise TypeError("a GPU preconditioner takes CuPy arrays (cupy.asarray(r))")
        r = xp.asarray(r)
        n = self.shape[0]
        column = r.ndim == 2 and r.shape[1] == 1
        if not (r.ndim == 1 or column) or r.shape[0] != n:
            raise ValueError(f"r must have shape ({n},) or ({n}, 1), got {r.shape}")
        if r.dtype.kind == "c":
            raise TypeError("complex vectors are not supported")
        r = xp.ascontiguousarray(r.reshape(-1), dtype=self.dtype)
        z = xp.empty(n, dtype=self.dtype)
        if self._gpu:
            self._h.apply_ptr(r.data.ptr, z.data.ptr, xp.cuda.get_current_stream().ptr)
        else:
            self._h.apply(r, z)
        return z.reshape(-1, 1) if column else z

    def _array_module(self):
        if not self._gpu:
            return np
        cp = _cupy()
        if cp is None:
            raise ImportError("a GPU preconditioner takes CuPy arrays: install cupy")
        return cp

    def matmat(self, R):
        """M @ R for R of shape (n, k): one apply per column."""
        R = self._array_module().asarray(R)
        if R.ndim != 2 or R.shape[0] != self.shape[0]:
            raise ValueError(f"R must have shape ({self.shape[0]}, k), got {R.shape}")
        return self._matmat(R)

    def dot(self, r):
        """M @ r for a vector or a 2-D array (column by column); with a
        scalar or another LinearOperator, SciPy's scaled or product
        operator.  (SciPy's own would turn a CuPy array into NumPy.)"""
        if isinstance(r, _LinearOperator) or np.isscalar(r):
            return super().dot(r)
        if getattr(r, "ndim", 1) == 2 and r.shape[1] != 1:
            return self.matmat(r)
        return self.matvec(r)

    def __matmul__(self, r):
        if np.isscalar(r):
            raise ValueError("Scalar operands are not allowed, use '*' instead")
        return self.dot(r)

    def __call__(self, r):
        return self.dot(r)

    def _matvec(self, r):
        return self.matvec(r)

    def _matmat(self, R):
        xp = self._array_module()
        Z = xp.empty((self.shape[0], R.shape[1]), dtype=self.dtype)
        for j in range(R.shape[1]):
            Z[:, j] = self.matvec(R[:, j])
        return Z

    def aslinearoperator(self):
        """A CPU preconditioner is a scipy LinearOperator already (returned
        as is); a GPU one gives a cupyx.scipy.sparse.linalg.LinearOperator
        calling it, for cupyx's solvers (their M=)."""
        if not self._gpu:
            return self
        self._array_module()
        from cupyx.scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, dtype=self.dtype)


def _grid_arg(grid):
    """grid= as 3 points per dimension: None -> [0, 0, 0] (found from the
    offsets); 1 to 3 positive integers, the missing ones 1."""
    if grid is None:
        return [0, 0, 0]
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__") or not 1 <= len(grid) <= 3:
        raise ValueError(f"grid must be (nx,), (nx, ny) or (nx, ny, nz), got {grid!r}")
    g = [_int_arg("grid", v, 1, 2**31 - 1) for v in grid]
    return g + [1] * (3 - len(g))


def _opt_int(name, value, hi):
    return 0 if value is None else _int_arg(name, value, 1, hi)


# adia_precond_options.float_levels (ADIA_FLOAT_LEVELS_*): None the default
_FLOAT_LEVELS = {None: 0, True: 1, "all": 1, "coarse": 2, False: 3, "none": 3}


def _float_levels_arg(v):
    if v is not None and not isinstance(v, (bool, str)):
        raise TypeError("float_levels must be None, a bool or 'all', 'coarse', 'none', got "
                        f"{type(v).__name__}")
    if v not in _FLOAT_LEVELS:
        raise ValueError(f"float_levels must be 'all', 'coarse' or 'none', got {v!r}")
    return _FLOAT_LEVELS[v]


def _make_precond(P: Plan, kind: str, grid=None, cycle: str = "v",
                  smoother: Optional[str] = None, sweeps=None, degree=None, max_levels=None,
                  float_levels=None, _owns_plan=False) -> Precond:
    kind = _str_arg("kind", kind)
    cycle = _str_arg("cycle", cycle)
    if cycle not in ("v", "w", "f"):
        raise ValueError(f"cycle must be 'v', 'w' or 'f', got {cycle!r}")
    smoother = None if smoother is None else _str_arg("smoother", smoother)
    given = {"grid": grid is not None, "cycle": cycle != "v", "smoother": smoother is not None,
             "sweeps": sweeps is not None, "max_levels": max_levels is not None,
             "degree": degree is not None, "float_levels": float_levels is not None}
    if kind in ("none", "jacobi") and any(given.values()):
        names = ", ".join(k for k, v in given.items() if v)
        raise ValueError(f"kind {kind!r} takes no options, got {names} (grid, cycle, smoother, "
                         "sweeps, max_levels and float_levels are mg's; degree is cheb's and "
                         "mg's)")
    h = _adia.precond_create(P._p, kind, _grid_arg(grid), cycle, smoother or "",
                             _opt_int("sweeps", sweeps, 100), _opt_int("degree", degree, 100),
                             _opt_int("max_levels", max_levels, 64),
                             _float_levels_arg(float_levels))
    return Precond(h, P, _owns_plan)


def precond(A, kind: str = "mg", grid=None, cycle: str = "v", smoother: Optional[str] = None,
            sweeps=None, degree=None, max_levels=None, device: Optional[str] = None,
            expected_calls: int = 1000, float_levels=None) -> Precond:
    """Build a preconditioner M ~ A^-1 (adia_precond_create), reusable
    across solves: ``adia.solve(M.plan, b, precond=M)``.

    A: a Plan (M lives where it does: CPU or GPU, its dtype), or a matrix
    as for adia.plan (then a plan is made on `device`, "cpu" by default,
    for `expected_calls` products, and owned by M: ``M.plan``).  kind:
    "none", "jacobi", "cheb" (Chebyshev polynomial in D^-1 A, any SPD A),
    "mg" (geometric multigrid on a structured grid), "agg" (multigrid by
    smoothed aggregation of consecutive rows, for SPD A that no grid suits;
    set up on the host; takes degree and max_levels) or "auto" (mg where
    A lies on a grid of 128 or more points along an edge -- agg on a
    strip 2 points wide --, else jacobi, else none: ``M.kind`` says
    which, and ``M.explain()`` why).  mg's options (auto passes them to mg):
    grid (nx, ny, nz) -- default: found from A's offsets --, cycle "v",
    "w" or "f" (not symmetric: GMRES or BiCGSTAB, not CG), smoother "cheb" (default),
    "jacobi" or "l1jacobi", sweeps (default 1 with cheb, 2 otherwise),
    max_levels; degree: cheb's (default 4) and mg's Chebyshev smoother's
    (default 2); float_levels: which of mg's levels a GPU plan in float64
    stores in float32 -- "all" (or True: the finest a float32 copy of the
    plan's matrix), "coarse" (the finest stays the plan), "none" (or
    False), None the library's default (a float32 level moves half the
    bytes; the solver stays in float64; a CPU plan refuses "all" and
    "coarse").  An option the kind does not take is a ValueError (the
    library's for cheb and mg, adia.InvalidArgumentError); a matrix that
    does not suit the kind (a zero diagonal entry, no grid) an adia.Error
    naming it.
    """
    if isinstance(A, Plan):
        if device is not None and device != A.device:
            raise ValueError(f"device={device!r} for a {A.device} plan: a Plan's preconditioner "
                             "lives where the plan does (leave device out)")
        return _make_precond(A, kind, grid, cycle, smoother, sweeps, degree, max_levels,
                             float_levels)
    P = plan(A, expected_calls=expected_calls, device=device or "cpu")
    try:
        return _make_precond(P, kind, grid, cycle, smoother, sweeps, degree, max_levels,
                             float_levels, _owns_plan=True)
    except BaseException:
        P.close()
        raise


def _solve_precond(A, precond, grid, jacobi, maxiter, device):
    """solve()'s preconditioner: (A, M, jacobi, owned) -- A a Plan when M is
    not None, M a Precond or None, owned what this call made (closed after
    the solve)."""
    if grid is not None and not (isinstance(precond, str) and precond in ("mg", "auto")):
        raise ValueError("grid= is mg's: give precond='mg' with it (or make the "
                         "preconditioner with adia.precond(..., grid=...))")
    if precond is not None and jacobi:
        raise ValueError(f"jacobi=True and precond={precond!r}: choose one "
                         "(precond='jacobi' is jacobi=True)")
    if precond is None or (isinstance(precond, str) and precond == "none"):
        return A, None, jacobi, []
    if isinstance(precond, Precond):
        if not isinstance(A, Plan) or precond._plan is None or precond._plan._p is not A._p:
            raise ValueError("precond= was made on another plan: pass the plan it was made on "
                             "(M.plan) as A")
        return A, precond, False, []
    if not isinstance(precond, str):
        raise TypeError("precond must be None, a kind ('none', 'jacobi', 'cheb', 'mg', 'auto') or an "
                        f"adia.Precond, got {type(precond).__name__} ({precond!r})")
    if precond == "jacobi":
        return A, None, True, []
    owned = []
    if not isinstance(A, Plan):
        A = plan(A, expected_calls=maxiter, device=device)
        owned.append(A)
    try:
        M = _make_precond(A, precond, grid=grid)
    except BaseException:
        for obj in owned:
            obj.close()
        raise
    return A, M, False, [M] + owned
