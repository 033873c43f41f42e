#!/usr/bin/env python3
"""GPU plans of matrices that are not diagonal ones (issue 28, item 1):
the device route (the CSR uploaded once, csr / ell / sell built and
chosen on the GPU) beside the host route it replaces (ADIA_GPU_SETUP=host:
host analysis, host builds, each candidate uploaded) and beside CuPy.

For each matrix and chooser, each route in a fresh process (a user's
run; CUDA started on a small matrix before the clock):
  adia.plan(A_scipy, device="gpu", expected_calls=CALLS, chooser=...)  wall ms
  the chosen format, and its product y = A x on CuPy vectors (median of
  20 batches of 10, CUDA events)
and CuPy's cupyx.scipy.sparse.csr_matrix(A) (its upload, wall ms) with
its product (cuSPARSE), the same way.  A markdown table to stdout, one
JSON object per measurement after it.

    python3 bench/plan-rows.py
    python3 bench/plan-rows.py --specs random:4000000,7 --calls 1000
"""
import argparse
import json
import os
import subprocess
import sys

DEFAULT_SPECS = ["random:4000000,7", "powerlaw:2000000,2,2000", "random:1000000,33"]

CHILD = r"""
import json, sys, time
import numpy as np, cupy as cp, cupyx.scipy.sparse as cps
import adia
spec, route, chooser, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
A = adia.generate(spec).tocsr()
x = cp.asarray(np.random.default_rng(1).random(A.shape[1]))
cp.cuda.runtime.deviceSynchronize()
warm = adia.plan(adia.generate("random:1000,5"), device="gpu")   # CUDA and the library started
warm.close()

def product_ms(f):
    f()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    t = []
    for _ in range(20):
        s.record()
        for _ in range(10):
            f()
        e.record()
        e.synchronize()
        t.append(cp.cuda.get_elapsed_time(s, e) / 10)
    return float(np.median(t))

out = {"spec": spec, "route": route, "chooser": chooser, "calls": calls, "nnz": int(A.nnz)}
if route == "cupy":
    t0 = time.perf_counter()
    G = cps.csr_matrix(A)
    cp.cuda.runtime.deviceSynchronize()
    out["setup_ms"] = (time.perf_counter() - t0) * 1e3
    out["format"] = "cuSPARSE csr"
    out["spmv_ms"] = product_ms(lambda: G @ x)
else:
    t0 = time.perf_counter()
    P = adia.plan(A, device="gpu", expected_calls=calls, chooser=chooser)
    cp.cuda.runtime.deviceSynchronize()
    out["setup_ms"] = (time.perf_counter() - t0) * 1e3
    out["format"] = P.format
    y = cp.empty(A.shape[0])
    out["spmv_ms"] = product_ms(lambda: P.matvec(x, out=y))
    ref = cps.csr_matrix(A) @ x
    out["max_rel_err"] = float(cp.abs(P.matvec(x) - ref).max() / cp.abs(ref).max())
    out["explain"] = [l for l in P.explain().splitlines()
                      if "setup (ms)" in l or "row formats" in l or "analysis" in l][:4]
print(json.dumps(out))
"""


def run(spec, route, chooser, calls):
    env = dict(os.environ)
    env.pop("ADIA_GPU_SETUP", None)
    if route == "adia-host":
        env["ADIA_GPU_SETUP"] = "host"
    p = subprocess.run([sys.executable, "-c", CHILD, spec, route, chooser, str(calls)], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"spec": spec, "route": route, "chooser": chooser, "error": p.stderr[-800:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", default=";".join(DEFAULT_SPECS),
                    help="matrices, ';'-separated generator specs")
    ap.add_argument("--choosers", default="model,measure")
    ap.add_argument("--calls", type=int, default=1000)
    a = ap.parse_args()
    rows = []
    for spec in a.specs.split(";"):
        rows.append(run(spec, "cupy", "-", a.calls))
        for chooser in a.choosers.split(","):
            for route in ("adia-device", "adia-host"):
                rows.append(run(spec, route, chooser, a.calls))
    print("| matrix | route | chooser | format | setup ms | SpMV ms | setup + %d SpMV ms |"
          % a.calls)
    print("| --- | --- | --- | --- | ---: | ---: | ---: |")
    for r in rows:
        if "error" in r:
            print("| %s | %s | %s | error | | | |" % (r["spec"], r["route"], r["chooser"]))
            continue
        print("| %s | %s | %s | %s | %.1f | %.4f | %.1f |" % (
            r["spec"], r["route"], r["chooser"], r["format"], r["setup_ms"], r["spmv_ms"],
            r["setup_ms"] + a.calls * r["spmv_ms"]))
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
