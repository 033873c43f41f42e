#!/usr/bin/env python3
"""csr's GPU kernels side by side (the data behind csr's AUTO choice,
src/cuda/csr_gpu.cu choose_kernel): per matrix, each kernel forced
(adia.plan(A, device="gpu", format="csr", params="kernel=K")), y = A x on
CuPy vectors, median of 20 batches of 10 (CUDA events), and the kernel
AUTO picks.  One process; a markdown table.

    python3 bench/csr-kernels.py
    python3 bench/csr-kernels.py --specs "random:4000000,7;lap2d5:2048"
"""
import argparse

import cupy as cp
import numpy as np

import adia

DEFAULT = ["random:4000000,3", "random:4000000,7", "random:2000000,15", "random:1000000,33",
           "powerlaw:4000000,1,100", "powerlaw:2000000,2,2000", "randdiag:2000000,9,1000",
           "lap2d5:2048", "lap3d7:160", "lap3d27:100", "band:2000000,8"]
KERNELS = ["scalar", "vector", "adaptive", "cusparse"]


def product_ms(P, x, y):
    P.matvec(x, out=y)
    s, e = cp.cuda.Event(), cp.cuda.Event()
    t = []
    for _ in range(20):
        s.record()
        for _ in range(10):
            P.matvec(x, out=y)
        e.record()
        e.synchronize()
        t.append(cp.cuda.get_elapsed_time(s, e) / 10)
    return float(np.median(t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", default=";".join(DEFAULT))
    a = ap.parse_args()
    print("| matrix | rows | nnz/row | " + " | ".join(KERNELS) + " | AUTO | AUTO / best |")
    print("| --- | ---: | ---: |" + " ---: |" * len(KERNELS) + " --- | ---: |")
    for spec in a.specs.split(";"):
        A = adia.generate(spec).tocsr()
        x = cp.asarray(np.random.default_rng(1).random(A.shape[1]))
        y = cp.empty(A.shape[0])
        t = {}
        for k in KERNELS:
            with adia.plan(A, device="gpu", format="csr", params="kernel=" + k) as P:
                t[k] = product_ms(P, x, y)
        with adia.plan(A, device="gpu", format="csr") as P:
            name = [l.split(":", 1)[1].strip() for l in P.explain().splitlines()
                    if l.startswith("kernel:")][0]
            ta = product_ms(P, x, y)
        print("| %s | %d | %.1f | %s | %s | %.2f |" % (
            spec, A.shape[0], A.nnz / A.shape[0], " | ".join("%.4f" % t[k] for k in KERNELS),
            name, ta / min(t.values())))


if __name__ == "__main__":
    main()
