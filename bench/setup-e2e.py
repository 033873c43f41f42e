#!/usr/bin/env python3
"""Time to solution from where the user's matrix is (issue 28, item 7).

For each matrix: b = A * ones, x0 = 0, CG to rtol (default 1e-8), every
path timed as a user waits for it -- everything synchronised, x back where
the user wants it (on the host for the SciPy and file paths, in CuPy for
the CuPy ones):

  cupy         cupyx.scipy.sparse.csr_matrix(A) (the upload) + cupyx cg; CuPy's
               kernels compiled beforehand on a small matrix (they depend on
               the dtype, not the size); x.get()
               (both Python paths start CUDA on a small matrix before their
               clock: the process's CUDA start is in neither; the CLI's is
               in its wall time, overlapped with the read)
  adia-scipy   adia.plan(A_scipy, device="gpu", expected_calls) + adia.solve
               with a NumPy b; x a NumPy array
  adia-cupy    adia.plan(A_cupy, device="gpu", expected_calls) + adia.solve
               with a CuPy b; x in CuPy (A_cupy and b made before the clock)
  cli          `adia solve FILE.bin --device gpu --json` (the file written by
               `adia gen` beforehand), wall clock of the process

each cold (an empty ADIA_CACHE_DIR: no generated kernel, no CPU bandwidth
figure on disk) and then warm (the same folder again).  Every measurement
is a fresh process, as a user's run is: no in-memory cache carries over.
Setup is split where adia reports it: read (the CLI's file, read and
checked), CUDA wait (the CLI's wait after the read for CUDA's start), upload,
analysis, build, compile (adia_plan_explain's "setup (ms)" line), the
solve's own setup (workspace, dot-kernel compile, graph capture) and its
iterations.  A markdown table goes to stdout, one JSON object per
measurement to --json (default: stdout after the table).

    python3 bench/setup-e2e.py                       # the issue's table, GPU
    python3 bench/setup-e2e.py --specs lap3d7:160 --paths adia-scipy,cli
    python3 bench/setup-e2e.py --precond mg          # adia's paths with multigrid
    ADIA_UPLOAD=pinned python3 bench/setup-e2e.py    # pinned staging (compare)
    ADIA_GPU_SETUP=host python3 bench/setup-e2e.py   # the old host planning
    python3 bench/setup-e2e.py --specs ../shared/matrices/X.mtx.gz  # a file as the matrix
    python3 bench/setup-e2e.py --device cpu --specs lap3d7:20   # no GPU: SciPy cg,
                                                     # adia on the CPU, the CLI

A path whose module is missing (no CuPy, no adia package) is reported as
skipped with the reason, not an error.  The environment variables
ADIA_UPLOAD and ADIA_GPU_SETUP are passed through to every run and printed
in the header, so two runs of this script compare the settings.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_SPECS = ["lap3d7:160", "lap3d7:256", "lap2d5:2048", "type3:4000000,21,0.34,sym"]
PATHS = ["cupy", "adia-scipy", "adia-cupy", "cli"]
SETUP_KEYS = ["upload", "analysis", "build", "compile"]


# ------------------------------------------------------------ one run

def parse_setup(text):
    """The parts of adia_plan_explain's line "setup (ms): upload U (N bytes,
    how), analysis A, build B, compile C" as a dict (empty if absent: a plan
    made on the host has no such line)."""
    out = {}
    m = re.search(r"setup \(ms\): upload ([0-9.eE+-]+) \((\d+) bytes, ([^)]*)\), analysis "
                  r"([0-9.eE+-]+), build ([0-9.eE+-]+), measure ([0-9.eE+-]+), compile "
                  r"([0-9.eE+-]+)", text or "")
    if m:
        out = {"upload_ms": float(m.group(1)), "upload_bytes": int(m.group(2)),
               "upload_how": m.group(3), "analysis_ms": float(m.group(4)),
               "build_ms": float(m.group(5)), "measure_ms": float(m.group(6)),
               "compile_ms": float(m.group(7))}
    k = re.search(r"^kernel: (.*)$", text or "", re.M)
    if k:
        out["kernel"] = k.group(1)
    return out


def tol_kw(fn, rtol):
    import inspect
    return {"rtol": rtol} if "rtol" in inspect.signature(fn).parameters else {"tol": rtol}


def run_cupy(A, b, args):
    """CuPy's path (GPU) or SciPy's cg (--device cpu)."""
    import numpy as np
    if args.device == "cpu":
        from scipy.sparse.linalg import cg
        count = [0]
        t0 = time.perf_counter()
        x, flag = cg(A, b, maxiter=args.maxiter, callback=lambda _: count.__setitem__(0, count[0] + 1),
                     **tol_kw(cg, args.rtol))
        t1 = time.perf_counter()
        res = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
        return {"label": "scipy cg", "total_ms": (t1 - t0) * 1e3, "solve_ms": (t1 - t0) * 1e3,
                "iterations": count[0], "residual": res, "converged": flag == 0}
    import cupy as cp
    import cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import cg
    # CuPy's kernels compiled on a small matrix of the same dtype first
    import scipy.sparse as sp
    small = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(1000, 1000), format="csr")
    cg(csp.csr_matrix(small), cp.ones(1000), maxiter=5, **tol_kw(cg, args.rtol))
    cp.cuda.Device().synchronize()
    count = [0]
    t0 = time.perf_counter()
    dA = csp.csr_matrix(A)
    db = cp.asarray(b)
    cp.cuda.Device().synchronize()
    t1 = time.perf_counter()
    x, flag = cg(dA, db, maxiter=args.maxiter, callback=lambda _: count.__setitem__(0, count[0] + 1),
                 **tol_kw(cg, args.rtol))
    xh = x.get()
    t2 = time.perf_counter()
    res = float(np.linalg.norm(b - A @ xh) / np.linalg.norm(b))
    return {"label": "cupy upload + cg", "total_ms": (t2 - t0) * 1e3, "upload_ms": (t1 - t0) * 1e3,
            "solve_ms": (t2 - t1) * 1e3, "iterations": count[0], "residual": res,
            "converged": flag == 0}


def run_adia(A, b, args, from_cupy):
    """adia.plan + adia.solve from the SciPy matrix or from a CuPy copy."""
    import numpy as np
    import adia
    if from_cupy:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        M, rhs = csp.csr_matrix(A), cp.asarray(b)   # the user's data, on the device already
        cp.cuda.Device().synchronize()
        sync = cp.cuda.Device().synchronize
    else:
        M, rhs, sync = A, b, (lambda: None)
    # as CuPy's path: CUDA started and the kernels loaded on a small matrix
    # first (the process's CUDA start, 0.2-0.4 s, is outside both clocks)
    import scipy.sparse as sp
    small = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(1000, 1000), format="csr")
    adia.solve(adia.plan(small, device=args.device), np.ones(1000), maxiter=5)
    t0 = time.perf_counter()
    P = adia.plan(M, device=args.device, expected_calls=args.calls)
    t1 = time.perf_counter()
    pre = None if args.precond == "none" else args.precond
    x, info = adia.solve(P, rhs, rtol=args.rtol, maxiter=args.maxiter, precond=args.precond)
    sync()
    t2 = time.perf_counter()
    xh = x.get() if hasattr(x, "get") else np.asarray(x)
    res = float(np.linalg.norm(b - A @ xh) / np.linalg.norm(b))
    out = {"label": "adia from " + ("CuPy" if from_cupy else "SciPy") +
                    ("" if pre is None else " + " + pre),
           "total_ms": (t2 - t0) * 1e3, "plan_ms": (t1 - t0) * 1e3, "solve_ms": (t2 - t1) * 1e3,
           "solve_setup_ms": info.setup_ms, "iterations_ms": info.time_ms,
           "iterations": info.iterations, "residual": res, "converged": bool(info.converged),
           "format": P.format}
    out.update(parse_setup(P.explain()))
    return out


def worker(args):
    """One measurement in this (fresh) process: print one JSON line."""
    try:
        import numpy as np
        import adia
        A = (adia.read_mtx(args.spec) if os.path.isfile(args.spec)
             else adia.generate(args.spec)).tocsr()
    except ImportError as e:
        print(json.dumps({"skipped": f"no adia Python package ({e})"}))
        return 0
    b = A @ np.ones(A.shape[0])
    try:
        if args.one == "cupy":
            r = run_cupy(A, b, args)
        else:
            r = run_adia(A, b, args, from_cupy=args.one == "adia-cupy")
    except ImportError as e:
        r = {"skipped": f"missing module ({e})"}
    print(json.dumps(r))
    return 0


# ------------------------------------------------------- orchestration

def run_cli(spec, binfile, args, env):
    cmd = [args.adia, "solve", binfile, "--device", args.device, "--json", "--rtol",
           str(args.rtol), "--max-iter", str(args.maxiter)]
    cmd += ["--precond", args.precond]   # CG's own default is auto
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    if p.returncode not in (0, 1):
        return {"error": f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    try:
        d = json.loads(p.stdout)
    except ValueError:
        return {"error": f"{' '.join(cmd)}: not JSON: {p.stdout[-300:]}"}
    out = {"label": "adia solve FILE.bin" + ("" if args.precond == "none" else " --precond " +
                                             args.precond),
           "total_ms": wall, "process_wall_ms": wall, "precond_setup_ms": d.get("precond_setup_ms"),
           "cli_wall_ms": d.get("wall_ms"), "read_ms": d.get("read_ms"),
           "read_bytes": d.get("read_bytes"), "cuda_wait_ms": d.get("cuda_wait_ms"),
           "plan_ms": d.get("plan_ms"), "solve_setup_ms": d.get("solve_setup_ms"),
           "iterations_ms": d.get("time_ms"), "iterations": d.get("iterations"),
           "residual": d.get("residual"), "converged": d.get("converged"),
           "format": d.get("format")}
    out.update(parse_setup(d.get("plan_setup", "")))
    return out


def run_python(path, spec, args, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--one", path, "--spec", spec,
           "--device", args.device, "--rtol", str(args.rtol), "--maxiter", str(args.maxiter),
           "--calls", str(args.calls), "--precond", args.precond]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": f"{path}: exit {p.returncode}: {(p.stderr or p.stdout).strip()[-400:]}"}
    return json.loads(lines[-1])


def measure(path, spec, binfile, cache, args):
    env = dict(os.environ, ADIA_CACHE_DIR=cache)
    if path == "cli":
        return run_cli(spec, binfile, args, env)
    if path == "adia-cupy" and args.device == "cpu":
        return {"skipped": "a CuPy matrix needs the GPU"}
    return run_python(path, spec, args, env)


def header(args):
    dev = "cpu run"
    if args.device == "gpu":
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                "--format=csv,noheader"], capture_output=True, text=True)
            dev = q.stdout.strip().splitlines()[0] if q.returncode == 0 else "GPU (nvidia-smi failed)"
        except (OSError, IndexError):
            dev = "GPU (no nvidia-smi)"
    commit = "?"
    try:
        q = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           cwd=os.path.dirname(os.path.abspath(__file__)))
        commit = q.stdout.strip() or "?"
    except OSError:
        pass
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "device": dev, "host": platform.node(), "commit": commit,
            "ADIA_UPLOAD": os.environ.get("ADIA_UPLOAD", "pageable (default)"),
            "ADIA_GPU_SETUP": os.environ.get("ADIA_GPU_SETUP", "device (default)"),
            "rtol": args.rtol, "maxiter": args.maxiter, "expected_calls": args.calls,
            "precond": args.precond}


def fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def table(rows):
    cols = ["matrix", "path", "cache", "total ms", "read", "CUDA wait", "upload", "analysis", "build",
            "measure", "compile", "plan ms", "solve setup", "iterations ms", "iters", "residual", "format"]
    print("| " + " | ".join(cols) + " |")
    print("| " + " | ".join("---" if i < 3 else "---:" for i in range(len(cols))) + " |")
    for r in rows:
        if "skipped" in r or "error" in r:
            why = r.get("skipped") or "ERROR " + r["error"]
            print(f"| {r['spec']} | {r['path']} | {r['cache']} | {why} |" + " |" * (len(cols) - 4))
            continue
        cells = [r["spec"], r.get("label", r["path"]), r["cache"], fmt(r.get("total_ms")), fmt(r.get("read_ms")),
                 fmt(r.get("cuda_wait_ms")), fmt(r.get("upload_ms")), fmt(r.get("analysis_ms")), fmt(r.get("build_ms")),
                 fmt(r.get("measure_ms")), fmt(r.get("compile_ms")), fmt(r.get("plan_ms")), fmt(r.get("solve_setup_ms")),
                 fmt(r.get("iterations_ms")), fmt(r.get("iterations")),
                 f"{r['residual']:.1e}" if isinstance(r.get("residual"), float) else "-",
                 (r.get("format") or "-") + (f" ({r['kernel']})" if r.get("kernel") else "")]
        print("| " + " | ".join(str(c) for c in cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--specs", default=",".join(DEFAULT_SPECS),
                    help="generator specs, ';'-separated if a spec has commas "
                         "(default: the issue's four)")
    ap.add_argument("--paths", default=",".join(PATHS), help="of " + ", ".join(PATHS))
    ap.add_argument("--device", default="gpu", choices=["gpu", "cpu"])
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--precond", default="none",
                    help="adia's paths and the CLI's: none (default here: CuPy's cg has none; "
                         "adia's CG default is auto), jacobi, cheb, mg or auto (made in the "
                         "timed solve); CuPy's cg stays without one")
    ap.add_argument("--maxiter", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=1000,
                    help="expected_calls of the Python plans (the issue's table: 1000)")
    ap.add_argument("--adia", default=None, help="the adia program (default: build/adia, "
                    "else adia on PATH)")
    ap.add_argument("--json", default=None, help="write the JSON lines here (default: stdout)")
    ap.add_argument("--keep", default=None, help="folder for the .bin files (default: a "
                    "temporary one, removed)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)   # worker mode
    ap.add_argument("--spec", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return worker(args)

    specs = [s for s in (args.specs.split(";") if ";" in args.specs else split_specs(args.specs)) if s]
    paths = [p for p in args.paths.split(",") if p]
    bad = [p for p in paths if p not in PATHS]
    if bad:
        ap.error(f"unknown path(s) {', '.join(bad)}: of {', '.join(PATHS)}")
    if args.adia is None:
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "adia")
        args.adia = here if os.access(here, os.X_OK) else (shutil.which("adia") or here)

    head = header(args)
    print(f"# Time to solution, {head['date']}, {head['device']} ({head['host']}), commit "
          f"{head['commit']}")
    print(f"b = A * ones, x0 = 0, CG, rtol {args.rtol:g}, maxiter {args.maxiter}, expected_calls "
          f"{args.calls}; ADIA_UPLOAD {head['ADIA_UPLOAD']}, ADIA_GPU_SETUP "
          f"{head['ADIA_GPU_SETUP']}; times in ms, each a fresh process\n")
    work = args.keep or tempfile.mkdtemp(prefix="adia-setup-e2e-")
    os.makedirs(work, exist_ok=True)
    rows = []
    try:
        for spec in specs:
            binfile = os.path.join(work, re.sub(r"[^A-Za-z0-9_.-]", "_", spec) + ".bin")
            if "cli" in paths and not os.path.exists(binfile):
                # a file (a shared real matrix): its .bin by `adia convert`
                make = ([args.adia, "convert", spec, binfile] if os.path.isfile(spec)
                        else [args.adia, "gen", spec, "-o", binfile])
                g = subprocess.run(make, capture_output=True, text=True)
                if g.returncode != 0:
                    sys.exit(f"setup-e2e: {' '.join(make[1:2])} {spec}: {g.stderr.strip()}")
            for path in paths:
                cache = tempfile.mkdtemp(prefix="adia-cache-", dir=work)   # empty: cold
                for state in ("cold", "warm"):
                    r = measure(path, spec, binfile, cache, args)
                    r.update({"spec": spec, "path": path, "cache": state})
                    rows.append(r)
                    print(f"  {spec} {path} {state}: "
                          f"{r.get('skipped') or r.get('error') or fmt(r.get('total_ms')) + ' ms'}",
                          file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    table(rows)
    lines = [json.dumps(dict(head, kind="header"))] + [json.dumps(r) for r in rows]
    if args.json:   # a temporary file renamed once complete: an old file survives a failure
        tmp = f"{args.json}.tmp{os.getpid()}"
        with open(tmp, "w") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(tmp, args.json)
    else:
        print()
        print("\n".join(lines))
    failed = [r for r in rows if "error" in r]
    return 1 if failed else 0


def split_specs(text):
    """Specs separated by commas, a spec's own commas kept: a new spec starts
    at a word followed by ':' (type3:4000000,21,0.34,sym,lap2d5:64 is two)."""
    out = []
    for part in text.split(","):
        if re.match(r"^[A-Za-z][A-Za-z0-9_]*:", part) or not out:
            out.append(part)
        else:
            out[-1] += "," + part
    return out


if __name__ == "__main__":
    sys.exit(main())
