#!/usr/bin/env python3
"""CuPy's Krylov solvers on the problems bench_solve times adia on.

Same problem as bench_solve.c: the 3D 7-point (6 / -1) and 2D 5-point
(4 / -1) Laplacians in natural ordering, b = A * ones, x0 = 0, no
preconditioner, rtol 1e-8 (double) or 1e-5 (float), CSR (the only format
CuPy's solvers take a fast path for).  Time to solution is the best of 3
after a warm-up solve; the iteration count comes from the callback, which
CuPy calls once per iteration (GMRES: once per restart cycle, so the count
printed for it is cycles x restart, an upper bound).

    python3 bench/bench_solve_cupy.py [lap3d7:64 lap3d7:160 lap2d5:2048 ...]
"""
import inspect
import sys
import time

try:
    import cupy as cp
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
except ImportError as e:  # not an error: the machine has no CuPy
    print(f"bench_solve_cupy: CuPy not available ({e}), nothing to measure")
    sys.exit(0)


def laplacian(spec, dtype):
    kind, size = spec.split(":")
    n = int(size)

    def lap1(m):
        return csp.diags([-cp.ones(m - 1), 2 * cp.ones(m), -cp.ones(m - 1)], [-1, 0, 1],
                         format="csr", dtype=dtype)

    eye = csp.identity(n, format="csr", dtype=dtype)
    L = lap1(n)
    if kind == "lap2d5":
        A = csp.kron(eye, L) + csp.kron(L, eye)
    elif kind == "lap3d7":
        A = csp.kron(csp.kron(eye, eye), L) + csp.kron(csp.kron(eye, L), eye) + \
            csp.kron(csp.kron(L, eye), eye)
    else:
        raise SystemExit(f"unknown spec {spec}: lap2d5:N or lap3d7:N")
    return A.tocsr()


def tolerance_name(solver):
    """CuPy renamed tol to rtol (as SciPy did); use whichever it takes."""
    return "rtol" if "rtol" in inspect.signature(solver).parameters else "tol"


def timed(solver, A, b, rtol, **kw):
    count = [0]

    def cb(_):
        count[0] += 1

    kw[tolerance_name(solver)] = rtol
    solver(A, b, callback=cb, **kw)   # warm-up: kernels compiled, memory pooled
    cp.cuda.Device().synchronize()
    best, iters, x, info = float("inf"), 0, None, None
    for _ in range(3):
        count[0] = 0
        t0 = time.perf_counter()
        x, info = solver(A, b, callback=cb, **kw)
        cp.cuda.Device().synchronize()
        t = (time.perf_counter() - t0) * 1e3
        if t < best:
            best, iters = t, count[0]
    res = float(cp.linalg.norm(b - A @ x) / cp.linalg.norm(b))
    return best, iters, res, info


def main():
    specs = sys.argv[1:] or ["lap3d7:64", "lap3d7:160", "lap3d7:256", "lap2d5:2048"]
    dev = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    print(f"{dev['name'].decode()}, CuPy {cp.__version__}; b = A * ones, x0 = 0, no "
          f"preconditioner; best of 3 solves\n")
    print("| matrix | prec | method | rows | iterations | ms | ms/it | residual | info |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    methods = [("cg", cla.cg, {}), ("gmres", cla.gmres, {"restart": 30, "maxiter": 20000})]
    if hasattr(cla, "bicgstab"):
        methods.insert(1, ("bicgstab", cla.bicgstab, {}))
    for spec in specs:
        for dtype, rtol in ((cp.float64, 1e-8), (cp.float32, 1e-5)):
            A = laplacian(spec, dtype)
            b = A @ cp.ones(A.shape[0], dtype=dtype)
            for name, solver, kw in methods:
                kw = dict(kw)
                kw.setdefault("maxiter", 20000)
                if name == "gmres":
                    kw["maxiter"] = 20000 // 30
                ms, it, res, info = timed(solver, A, b, rtol, **kw)
                if name == "gmres":
                    it *= 30
                per = ms / it if it else float("nan")
                print(f"| {spec} | {'double' if dtype == cp.float64 else 'float'} | {name} | "
                      f"{A.shape[0]} | {it} | {ms:.3f} | {per:.4f} | {res:.1e} | {info} |",
                      flush=True)


if __name__ == "__main__":
    main()
