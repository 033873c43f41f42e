"""adia.solve against cupyx.scipy.sparse.linalg.cg on a 3D Poisson system.

The 7-point Laplacian on an N^3 grid (default N = 160: 4.1 million rows,
28.6 million nonzeros), b = A * ones, the same rtol and maxiter for both.
Reported: iterations, the true relative residual ||b - A x|| / ||b||
(computed afresh on the device for both), and times in ms:
  plan   adia.plan (analysis, format choice, build, upload)
  solve  adia.solve on the GPU plan with a CuPy b (b moved to the host and
         back once: the C API takes host vectors), wall clock
  iter   adia's own iteration time (info.time_ms)
  cg     cupyx cg on a cupyx CSR matrix, wall clock after a warm-up run
         (CuPy's kernels compiled), stream synchronised
Without CuPy or a device, the same with adia on the CPU against SciPy's cg
(use a smaller --n there).

    python python/bench/bench_solve_cupy.py [--n 160] [--rtol 1e-8] [--maxiter 2000]
"""
import argparse
import inspect
import time

import numpy as np

import adia


def tol_kw(fn, rtol):
    return {"rtol": rtol} if "rtol" in inspect.signature(fn).parameters else {"tol": rtol}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=160)
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--maxiter", type=int, default=2000)
    ap.add_argument("--method", default="cg", choices=["cg", "bicgstab", "gmres"])
    ap.add_argument("--jacobi", action="store_true")
    args = ap.parse_args()

    t = time.perf_counter()
    A = adia.generate(f"lap3d7:{args.n}")
    print(f"lap3d7:{args.n}: {A.shape[0]} rows, {A.nnz} nonzeros (generated in "
          f"{(time.perf_counter() - t) * 1e3:.0f} ms)")
    gpu = adia.gpu_available()
    if gpu:
        import cupy as xp
        import cupyx.scipy.sparse as xsp
        from cupyx.scipy.sparse.linalg import cg

        def sync():
            xp.cuda.get_current_stream().synchronize()
    else:
        print("no CuPy/device/CUDA build: adia on the CPU against scipy.sparse.linalg.cg")
        xp = np
        import scipy.sparse as xsp
        from scipy.sparse.linalg import cg

        def sync():
            pass

    dA = xsp.csr_matrix(A)
    b = dA @ xp.ones(A.shape[0])

    def true_residual(x):
        return float(xp.linalg.norm(b - dA @ x) / xp.linalg.norm(b))

    rows = []
    # adia
    t = time.perf_counter()
    # the user's matrix where it lies: CuPy's CSR on the device (planned there), SciPy's on the host
    P = adia.plan(dA, expected_calls=args.maxiter, device="gpu" if gpu else "cpu")
    plan_ms = (time.perf_counter() - t) * 1e3
    adia.solve(P, b, method=args.method, rtol=args.rtol, maxiter=2)   # warm-up
    sync()
    t = time.perf_counter()
    x, info = adia.solve(P, b, method=args.method, rtol=args.rtol, maxiter=args.maxiter,
                         jacobi=args.jacobi)
    sync()
    solve_ms = (time.perf_counter() - t) * 1e3
    rows.append((f"adia {args.method} ({P.format}, {P.device})", info.iterations, true_residual(x),
                 solve_ms, info.time_ms, plan_ms, info.stop))

    # cupyx / scipy cg
    count = [0]

    def cb(_):
        count[0] += 1

    cg(dA, b, maxiter=2, **tol_kw(cg, args.rtol))                       # warm-up
    sync()
    t = time.perf_counter()
    xr, flag = cg(dA, b, maxiter=args.maxiter, callback=cb, **tol_kw(cg, args.rtol))
    sync()
    cg_ms = (time.perf_counter() - t) * 1e3
    rows.append(("cupyx cg (csr)" if gpu else "scipy cg (csr)", count[0], true_residual(xr), cg_ms,
                 float("nan"), 0.0, "converged" if flag == 0 else f"flag {flag}"))

    print(f"rtol {args.rtol:g}, maxiter {args.maxiter}")
    print(f"{'solver':<34}{'iters':>7}{'residual':>11}{'solve ms':>11}{'iter ms':>10}{'plan ms':>10}  stop")
    for name, it, res, ms, ims, pms, stop in rows:
        print(f"{name:<34}{it:>7}{res:>11.2e}{ms:>11.1f}{ims:>10.1f}{pms:>10.1f}  {stop}")
    print(f"speedup (cg wall / adia solve wall): {cg_ms / solve_ms:.2f}x; "
          f"with the plan made from the {'CuPy' if gpu else 'SciPy'} matrix: "
          f"{cg_ms / (solve_ms + plan_ms):.2f}x")


if __name__ == "__main__":
    main()
