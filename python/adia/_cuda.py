"""The CUDA runtime libraries of a CUDA build of adia.

A CUDA build of the extension needs, besides the NVIDIA driver (libcuda,
never bundled), the CUDA runtime libraries of the CUDA major version it was
built with -- libcudart, libcusparse (which needs libnvJitLink) and libnvrtc
(adia._build.CUDA_LIBRARIES lists their sonames).  They are looked for, in
this order:

1. NVIDIA's runtime wheels (``pip install "adia[cuda13]"``: nvidia-cuda-runtime,
   nvidia-cusparse, nvidia-nvjitlink, nvidia-cuda-nvrtc), in the ``nvidia/``
   folder of any sys.path entry (CUDA 13: ``nvidia/cu13/lib``; CUDA 12:
   ``nvidia/<library>/lib``): each found is loaded by its path before the
   extension is imported, as CuPy and PyTorch do, so a machine with the
   driver and no toolkit runs adia;
2. the toolkit the extension was built with (its RPATH);
3. the dynamic loader's usual search (LD_LIBRARY_PATH, ldconfig).

``ADIA_CUDA_PRELOAD=0`` skips step 1.  A CPU-only build needs none of them.
"""

import ctypes
import os
import sys
from typing import Dict, List, Optional

try:
    from . import _build
except ImportError:   # a source tree without a build: nothing known
    _build = None

#: soname -> path of the libraries loaded from the wheels at import
preloaded: Dict[str, str] = {}


def cuda_version() -> Optional[str]:
    """The CUDA toolkit version the extension was built with, or None."""
    return getattr(_build, "CUDA", None)


def needed() -> List[str]:
    """Sonames of the CUDA libraries the extension needs, in load order."""
    return list(getattr(_build, "CUDA_LIBRARIES", []) or [])


def wheel_lib_dirs(major: Optional[int] = None, paths=None) -> List[str]:
    """The library folders of NVIDIA's runtime wheels under each entry of
    paths (default sys.path): nvidia/cu<major>/lib first, then
    nvidia/*/lib (the CUDA 12 wheels' layout)."""
    dirs: List[str] = []
    for base in (sys.path if paths is None else paths):
        root = os.path.join(base or os.curdir, "nvidia")
        if not os.path.isdir(root):
            continue
        first = [f"cu{major}"] if major else []
        try:
            others = sorted(d for d in os.listdir(root) if d not in first)
        except OSError:
            continue
        for d in first + others:
            lib = os.path.join(root, d, "lib")
            if os.path.isdir(lib) and lib not in dirs:
                dirs.append(lib)
    return dirs


def find_wheel_libraries(sonames, dirs) -> Dict[str, str]:
    """soname -> the first file of that name in dirs, for those found."""
    found = {}
    for so in sonames:
        for d in dirs:
            p = os.path.join(d, so)
            if os.path.isfile(p):
                found[so] = p
                break
    return found


def preload() -> Dict[str, str]:
    """Load the needed CUDA libraries found in NVIDIA's wheels, by path and
    in order, so that importing the extension finds them already loaded
    (the loader matches a DT_NEEDED entry by soname).  Returns and records
    soname -> path of those loaded; a library that fails to load is left to
    the later steps."""
    libs = needed()
    if not libs or os.environ.get("ADIA_CUDA_PRELOAD", "1") == "0":
        return {}
    version = cuda_version() or ""
    major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else None
    for so, path in find_wheel_libraries(libs, wheel_lib_dirs(major)).items():
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        preloaded[so] = path
    return dict(preloaded)


def loaded() -> Dict[str, Optional[str]]:
    """soname -> the path each needed CUDA library was actually loaded from
    in this process (None: not loaded), read from /proc/self/maps (Linux)."""
    libs = needed()
    out: Dict[str, Optional[str]] = {so: None for so in libs}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                name = os.path.basename(path)
                for so in libs:
                    if out[so] is None and (name == so or name.startswith(so + ".")):
                        out[so] = path
    except OSError:
        pass
    return out


def import_error(e: ImportError) -> ImportError:
    """The ImportError of an extension whose CUDA libraries are missing,
    saying what it needs and how to get it."""
    libs = needed()
    if not libs or not any(so.split(".so")[0] in str(e) for so in libs):
        return e
    major = (cuda_version() or "?").split(".")[0]
    return ImportError(
        f"{e}: this adia was built with CUDA {cuda_version()} and needs the NVIDIA driver and "
        f"the CUDA runtime libraries {', '.join(libs)}: pip install 'adia[cuda{major}]' "
        "(NVIDIA's runtime wheels), or a CUDA toolkit of that major version on "
        "LD_LIBRARY_PATH; or reinstall adia CPU-only (ADIA_CUDA=OFF pip install ...)")
