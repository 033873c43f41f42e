"""adia: sparse kernels for diagonal sparse matrices, from Python.

    import adia, numpy as np
    A = adia.generate("lap2d5:256")          # or any scipy.sparse matrix
    P = adia.plan(A, expected_calls=1000)    # analyse once, choose a format
    y = P @ np.ones(A.shape[1])              # planned SpMV (NumPy in and out)
    x, info = adia.solve(P, y, method="cg")  # Krylov solve on the plan

GPU plans (device="gpu") take and return CuPy arrays.  Errors of the C
library raise adia.Error (a RuntimeError) or its subclasses, which are also
ValueError, MemoryError or OSError where that fits.
"""

from . import _cuda

_cuda.preload()   # a CUDA build: its runtime libraries from NVIDIA's wheels, if installed
try:
    from . import _adia
except ImportError as _e:
    raise _cuda.import_error(_e) from _e
from ._errors import (
    AdiaIOError,
    Error,
    InvalidArgumentError,
    NoDeviceError,
    OutOfMemoryError,
    ParseError,
    SizeOverflowError,
    UnsupportedError,
)
from ._core import (
    Analysis,
    Plan,
    SolveInfo,
    analyze,
    formats,
    generate,
    generator_help,
    gpu_available,
    load_plan,
    plan,
    read_mtx,
    read_vector,
    solve,
    spy,
    write_mtx,
    write_vector,
)
from ._precond import Precond, precond

__version__ = _adia.__version__


def build_info() -> dict:
    """How this module was built and what it runs on: {"version", "cuda"
    (the CUDA toolkit version built with, or None for a CPU-only build),
    "cuda_libraries" (soname -> the path loaded in this process, None if
    not loaded), "from_wheels" (those taken from NVIDIA's runtime wheels)}.
    See adia/_cuda.py for where the CUDA libraries are looked for."""
    return {"version": __version__, "cuda": _cuda.cuda_version(),
            "cuda_libraries": _cuda.loaded(), "from_wheels": dict(_cuda.preloaded)}


__all__ = [
    "Analysis", "Plan", "Precond", "SolveInfo", "analyze", "build_info", "formats", "generate", "generator_help",
    "gpu_available", "load_plan", "plan", "precond", "read_mtx", "read_vector", "solve", "spy",
    "write_mtx", "write_vector", "Error", "InvalidArgumentError", "ParseError",
    "OutOfMemoryError", "AdiaIOError", "UnsupportedError", "NoDeviceError", "SizeOverflowError",
]
