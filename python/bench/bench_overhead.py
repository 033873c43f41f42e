"""Per-call overhead of the Python binding: P.matvec(x, out=y).

The target: at most 5 us over the C call.  On a 1 x 1 matrix the C call
itself (adia_spmv on a CPU plan) is a few tens of nanoseconds, so the time
of P.matvec(x, out=y) per call is the binding's overhead, up to that.  For
comparison the script also times an empty Python method call and SciPy's
A @ x on the same matrix.  With CuPy and a device, the same for a GPU plan
(adia_spmv_async on CuPy's current stream): the per-call time there is the
host-side cost of issuing one product (a kernel launch included), measured
with the stream synchronised only at the end of each batch.

    OMP_NUM_THREADS=1 python python/bench/bench_overhead.py [--calls N]

(one thread: a 1 x 1 product should not wake an OpenMP team; with more
threads the C call itself costs the team's wake-up)
"""
import argparse
import timeit

import numpy as np
import scipy.sparse as sp

import adia


def per_call_us(stmt, number, repeat=7, setup=None):
    t = timeit.Timer(stmt, setup=setup or "pass")
    return min(t.repeat(repeat=repeat, number=number)) / number * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200000)
    args = ap.parse_args()
    n = args.calls

    A = sp.csr_matrix(np.array([[2.0]]))
    P = adia.plan(A, device="cpu")
    x = np.ones(1)
    y = np.empty(1)
    P.matvec(x, out=y)
    assert y[0] == 2.0

    class Empty:
        def matvec(self, x, out=None):
            return out

    e = Empty()
    rows = [
        ("P.matvec(x, out=y)  [CPU plan, 1 x 1]", per_call_us(lambda: P.matvec(x, out=y), n)),
        ("P @ x (allocates y) [CPU plan, 1 x 1]", per_call_us(lambda: P @ x, n)),
        ("P._p.spmv(x, y, 1, 0, 0) [binding only]", per_call_us(lambda: P._p.spmv(x, y, 1.0, 0.0, 0), n)),
        ("empty Python method call", per_call_us(lambda: e.matvec(x, out=y), n)),
        ("scipy A @ x         [1 x 1]", per_call_us(lambda: A @ x, n // 4)),
    ]

    if adia.gpu_available():
        import cupy as cp

        G = adia.plan(A, device="gpu")
        gx = cp.ones(1)
        gy = cp.empty(1)
        G.matvec(gx, out=gy)
        cp.cuda.get_current_stream().synchronize()
        assert float(gy[0]) == 2.0

        def batch(k=1000):
            for _ in range(k):
                G.matvec(gx, out=gy)
            cp.cuda.get_current_stream().synchronize()

        rows.append(("P.matvec(x, out=y)  [GPU plan, CuPy, 1 x 1]",
                     per_call_us(batch, max(n // 20000, 5)) / 1000))
        dA = __import__("cupyx.scipy.sparse", fromlist=["csr_matrix"]).csr_matrix(A)

        def batch_cupyx(k=1000):
            for _ in range(k):
                dA @ gx
            cp.cuda.get_current_stream().synchronize()

        rows.append(("cupyx A @ x         [1 x 1]", per_call_us(batch_cupyx, max(n // 20000, 5)) / 1000))
    else:
        rows.append(("GPU plan", float("nan")))
        print("(no GPU part: needs CuPy, a device and adia built with CUDA)")

    print(f"{'what':<48}{'us/call':>10}")
    for name, us in rows:
        print(f"{name:<48}{us:>10.3f}")
    print("target: P.matvec(x, out=y) <= 5 us over the C call (CPU and GPU)")


if __name__ == "__main__":
    main()
