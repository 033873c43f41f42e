import os
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def shared_matrices_dir():
    """../shared/matrices beside the repository (or $ADIA_SHARED_MATRICES)."""
    d = os.environ.get("ADIA_SHARED_MATRICES")
    p = pathlib.Path(d) if d else ROOT.parent / "shared" / "matrices"
    return p if p.is_dir() else None


def _cupy_device():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        import adia

        if not adia.gpu_available():
            return None
        return cupy
    except Exception:
        return None


@pytest.fixture(scope="session")
def cupy():
    cp = _cupy_device()
    if cp is None:
        pytest.skip("needs CuPy, a CUDA device and adia built with CUDA")
    return cp


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
