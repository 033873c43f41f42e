"""python/examples/*.py run as tests."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, tmp_path):
    r = subprocess.run([sys.executable, str(path), str(tmp_path)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    if path.name == "quickstart.py":
        assert "format:" in r.stdout
        assert (tmp_path / "type2.png").read_bytes()[:4] == b"\x89PNG"


BENCH = pathlib.Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("script,args", [("bench_overhead.py", ["--calls", "2000"]),
                                         ("bench_solve_cupy.py", ["--n", "12"])])
def test_bench_scripts_run(script, args):
    r = subprocess.run([sys.executable, str(BENCH / script)] + args, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "P.matvec" in r.stdout or "converged" in r.stdout
