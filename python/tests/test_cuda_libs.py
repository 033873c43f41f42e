"""Where a CUDA build finds its CUDA runtime libraries (issue 27, item 11):
NVIDIA's runtime wheels (the extra adia[cuda13]) first, loaded by path
before the extension as CuPy and PyTorch do, so that the driver alone is
enough; adia.build_info() says what was built and loaded.  The finder runs
on every build; loading from a wheel layout, and importing with the toolkit
hidden, need a CUDA build (and, for hiding it, root and unshare)."""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import adia
from adia import _cuda

from conftest import ROOT

CUDA_BUILD = adia.build_info()["cuda"] is not None


def test_build_info():
    info = adia.build_info()
    assert set(info) == {"version", "cuda", "cuda_libraries", "from_wheels"}
    assert info["version"] == adia.__version__
    if not CUDA_BUILD:
        assert info["cuda_libraries"] == {} and info["from_wheels"] == {}
        assert _cuda.needed() == []
        assert _cuda.preload() == {}
        return
    # a CUDA build: every library it needs is loaded from somewhere
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?", info["cuda"])
    names = [re.sub(r"\.so.*", "", so) for so in _cuda.needed()]
    assert names == ["libcudart", "libnvJitLink", "libcusparse", "libnvrtc"]
    assert all(info["cuda_libraries"].values()), info


def test_wheel_layouts_found_in_order(tmp_path):
    site_a, site_b = tmp_path / "a", tmp_path / "b"
    for d in (site_a / "nvidia" / "cu13" / "lib", site_b / "nvidia" / "cuda_runtime" / "lib",
              site_b / "nvidia" / "cusparse" / "lib", site_b / "nvidia" / "cu13" / "include"):
        d.mkdir(parents=True)
    for f in (site_a / "nvidia" / "cu13" / "lib" / "libcudart.so.13",
              site_b / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.13",
              site_b / "nvidia" / "cusparse" / "lib" / "libcusparse.so.12"):
        f.write_bytes(b"")
    dirs = _cuda.wheel_lib_dirs(13, paths=[str(site_a), str(site_b), str(tmp_path / "none")])
    assert dirs == [str(site_a / "nvidia" / "cu13" / "lib"),
                    str(site_b / "nvidia" / "cuda_runtime" / "lib"),
                    str(site_b / "nvidia" / "cusparse" / "lib")]
    found = _cuda.find_wheel_libraries(["libcudart.so.13", "libcusparse.so.12", "libnvrtc.so.13"], dirs)
    assert found == {"libcudart.so.13": str(site_a / "nvidia" / "cu13" / "lib" / "libcudart.so.13"),
                     "libcusparse.so.12": str(site_b / "nvidia" / "cusparse" / "lib" / "libcusparse.so.12")}


def test_the_extra_names_the_wheels():
    text = (ROOT / "pyproject.toml").read_text()
    m = re.search(r"^cuda13 = \[(.*?)\]", text, re.S | re.M)
    assert m, "pyproject.toml has no cuda13 extra"
    reqs = re.findall(r'"([^"]+)"', m.group(1))
    names = {re.split(r"[<>=!~ ]", r)[0] for r in reqs}
    assert names == {"nvidia-cuda-runtime", "nvidia-cusparse", "nvidia-nvjitlink", "nvidia-cuda-nvrtc"}
    assert "nvidia-cuda-runtime>=13.0,<14" in reqs and "nvidia-cusparse>=12.6,<13" in reqs
    if CUDA_BUILD:
        assert adia.build_info()["cuda"].split(".")[0] == "13", "the extra is for CUDA 13 builds"


def _toolkit_libdir():
    d = getattr(_cuda._build, "CUDA_TOOLKIT_LIBDIR", None)
    return os.path.realpath(d) if d else None


def _wheel_site(tmp_path, link):
    """A site folder laid out as NVIDIA's CUDA 13 wheels install it
    (nvidia/cu13/lib), holding the toolkit's own files (the wheels'
    content): hard links where the file system allows, else copies of
    the small ones and links."""
    lib = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    src = _toolkit_libdir()
    for so in _cuda.needed() + ["libnvrtc-builtins.so.13.0"]:
        p = os.path.join(src, so)
        if not os.path.exists(p):
            continue
        try:
            os.link(p, lib / so)
        except OSError:
            if not link:
                pytest.skip("cannot hard-link the toolkit's libraries here")
            os.symlink(p, lib / so)
    return tmp_path / "site", lib


def _python(code, env_extra, prefix=()):
    env = dict(os.environ, **env_extra)
    env.pop("LD_LIBRARY_PATH", None)
    return subprocess.run(list(prefix) + [sys.executable, "-c", textwrap.dedent(code)],
                          env=env, capture_output=True, text=True, cwd="/")


@pytest.mark.skipif(not CUDA_BUILD, reason="a CPU-only build needs no CUDA library")
def test_preloaded_from_the_wheels(tmp_path):
    site, lib = _wheel_site(tmp_path, link=True)
    code = """
        import adia, json
        print(json.dumps(adia.build_info()["from_wheels"]))
    """
    r = _python(code, {"PYTHONPATH": str(site)})
    assert r.returncode == 0, r.stderr
    import json

    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(got) == set(_cuda.needed())
    assert all(os.path.dirname(p) == str(lib) for p in got.values()), got
    r = _python(code, {"PYTHONPATH": str(site), "ADIA_CUDA_PRELOAD": "0"})
    assert r.returncode == 0 and json.loads(r.stdout.strip().splitlines()[-1]) == {}


def _can_hide():
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("mount"):
        return False
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(not CUDA_BUILD, reason="a CPU-only build needs no CUDA library")
@pytest.mark.skipif(not _can_hide(), reason="hiding the toolkit needs root and unshare -m")
def test_runs_without_the_toolkit(tmp_path):
    """The toolkit's library folder hidden (an empty folder mounted over it
    in a private mount namespace): the import fails, saying what it needs,
    without the wheels, and works, products included, with them."""
    site, lib = _wheel_site(tmp_path, link=False)   # hard links survive the hiding
    empty = tmp_path / "empty"
    empty.mkdir()
    hide = ["unshare", "-m", "sh", "-c",
            f'mount --bind "{empty}" "{_toolkit_libdir()}" && exec "$0" "$@"']
    code = """
        import adia, numpy as np
        A = adia.generate("lap2d5:10")
        y = adia.plan(A) @ np.ones(100)
        assert abs(y.sum() - (A @ np.ones(100)).sum()) < 1e-12
        print(sorted(set(map(str, adia.build_info()["cuda_libraries"].values()))))
    """
    installed = _cuda.find_wheel_libraries(_cuda.needed(), _cuda.wheel_lib_dirs(13))
    if not installed:   # with the wheels installed here the import works anyway
        r = _python(code, {"PYTHONPATH": ""}, hide)
        assert r.returncode != 0
        assert "pip install 'adia[cuda13]'" in r.stderr, r.stderr[-2000:]
    r = _python(code, {"PYTHONPATH": str(site)}, hide)
    assert r.returncode == 0, r.stderr[-2000:]
    assert str(lib) in r.stdout and _toolkit_libdir() not in r.stdout, r.stdout
