#!/usr/bin/env python3
"""PyAMG's PCG iteration counts beside adia's mg (issue 30, item 6: "PyAMG
(CPU) for the iteration counts"), in one run on the CPU.

The same problems as bench/precond-table.py: b = A * ones, x0 = 0, CG to
rtol 1e-8 (SciPy's cg with PyAMG's V-cycle as its preconditioner, once
with smoothed aggregation and once with Ruge-Stueben, both at PyAMG's
defaults), and adia.solve(A, b, precond="mg") on the CPU.  Iteration
counts are the comparison; the set-up and solve seconds are the machine's
(a small CPU), printed for what they are.  PyAMG is not a dependency of
adia: without it the script says so and stops.

    python3 bench/pyamg-iterations.py                      # the issue's shapes at 64
    python3 bench/pyamg-iterations.py --specs lap3d7:100,aniso3d:100
"""
import argparse
import datetime
import inspect
import platform
import sys
import time

import numpy as np

SPECS = ["lap3d7:64", "lap3d27:64", "lap2d5:512", "aniso3d:64", "jump3d:64"]


def cg_iterations(A, b, M, rtol, maxiter):
    """SciPy's cg with M: (iterations, relative true residual, seconds)."""
    from scipy.sparse.linalg import cg
    count = [0]

    def callback(xk):
        count[0] += 1
    kw = {"rtol": rtol} if "rtol" in inspect.signature(cg).parameters else {"tol": rtol}
    t0 = time.perf_counter()
    x, info = cg(A, b, M=M, maxiter=maxiter, callback=callback, **kw)
    t = time.perf_counter() - t0
    res = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
    return count[0], res, t, info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--specs", default=",".join(SPECS))
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--maxiter", type=int, default=500)
    args = ap.parse_args()
    try:
        import pyamg
    except ImportError as e:
        print(f"pyamg-iterations: PyAMG not available ({e}), nothing to measure")
        return 0
    import adia

    print(f"# PyAMG {pyamg.__version__} beside adia's mg, CPU, "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{platform.processor() or platform.machine()}")
    print(f"CG, b = A * ones, x0 = 0, rtol {args.rtol:g}; seconds on this machine\n")
    print("| matrix | rows | solver | set-up s | iterations | solve s | residual |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for spec in args.specs.split(","):
        A = adia.generate(spec).tocsr()
        b = A @ np.ones(A.shape[0])
        rows = []
        for name, make in (("PyAMG smoothed aggregation", pyamg.smoothed_aggregation_solver),
                           ("PyAMG Ruge-Stueben", pyamg.ruge_stuben_solver)):
            t0 = time.perf_counter()
            ml = make(A)
            setup = time.perf_counter() - t0
            its, res, t, _ = cg_iterations(A, b, ml.aspreconditioner(cycle="V"), args.rtol,
                                           args.maxiter)
            rows.append((name, setup, its, t, res))
        t0 = time.perf_counter()
        P = adia.plan(A, device="cpu", expected_calls=200)
        M = adia.precond(P, "mg")
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        x, info = adia.solve(P, b, rtol=args.rtol, maxiter=args.maxiter, precond=M)
        t = time.perf_counter() - t0
        res = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
        rows.append(("adia mg (V-cycle, CG)", setup, info.iterations, t, res))
        M.close()
        P.close()
        for name, setup, its, t, res in rows:
            print(f"| {spec} | {A.shape[0]} | {name} | {setup:.2f} | {its} | {t:.2f} | "
                  f"{res:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
