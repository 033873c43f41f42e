#!/usr/bin/env python3
"""Preconditioners side by side (issue 30, item 6): `adia solve --gen SPEC
--precond K --json` for each matrix and kind, CG, b = A * ones, x0 = 0,
rtol 1e-8, each run twice in a fresh process and the second kept (the
first fills the kernel cache: a generated kernel's compile is a one-off
per structure and machine, reported apart by setup-e2e.py).

Columns: the preconditioner's set-up, the solve's own set-up (vectors,
graph capture), iterations, the iterations' time, and their total; the
same run's CG + Jacobi beside each, and the ratio of totals.  A markdown
table to stdout, one JSON object per run to --json.

    python3 bench/precond-table.py                       # the issue's matrices
    python3 bench/precond-table.py --specs lap3d7:64 --kinds jacobi,mg --device cpu
    python3 bench/precond-table.py --specs ../shared/matrices/nos7.mtx,... --kinds jacobi,cheb,mg,auto

A spec that names a file is solved from it (b = A * ones); its row is
named after the file.  A kind the matrix refuses (mg off a grid) is a row
saying why.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

SPECS = ["lap3d7:64", "lap3d7:160", "lap3d7:256", "lap3d27:128", "lap2d5:2048",
         "aniso3d:160", "jump3d:160"]
KINDS = ["jacobi", "cheb", "mg"]


def run(adia, spec, kind, device, maxiter):
    src = [spec] if os.path.exists(spec) else ["--gen", spec]   # a file, or a generator
    cmd = [adia, "solve", *src, "--device", device, "--precond", kind, "--json",
           "--max-iter", str(maxiter)]
    out = None
    for _ in range(2):   # the second: the kernel cache filled by the first
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 1):
            return {"failed": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
        try:
            out = json.loads(p.stdout)
        except ValueError:
            return {"failed": (p.stderr.strip() or f"not JSON: {p.stdout}")[-300:]}
    return out


def cell(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--specs", default=",".join(SPECS))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--device", default="gpu", choices=["gpu", "cpu"])
    ap.add_argument("--maxiter", type=int, default=5000)
    ap.add_argument("--adia", default="build-rel/adia" if os.path.exists("build-rel/adia")
                    else "build/adia")
    ap.add_argument("--json", default=None, help="write one JSON object per run here")
    args = ap.parse_args()
    rows = []
    for spec in args.specs.split(","):
        for kind in args.kinds.split(","):
            r = run(args.adia, spec, kind, args.device, args.maxiter)
            name = os.path.basename(spec).split(".")[0] if os.path.exists(spec) else spec
            r.update({"spec": name, "kind": kind})
            rows.append(r)
            print(f"  {spec} {kind}: {r.get('failed') or r.get('wall_ms')}", file=sys.stderr)
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        os.replace(tmp, args.json)
    q = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                       capture_output=True, text=True) if args.device == "gpu" else None
    dev = q.stdout.strip().splitlines()[0] if q and q.returncode == 0 and q.stdout else "CPU"
    print(f"# Preconditioners, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} "
          f"UTC, {dev}\n\nCG, b = A * ones, x0 = 0, rtol 1e-8, double; ms; the second of two "
          "runs (warm kernel cache); total = preconditioner set-up + solve set-up + "
          "iterations; vs jacobi = CG + Jacobi's total / this total\n")
    print("| matrix | precond | setup | solve setup | iterations | iterations ms | total | "
          "vs jacobi | converged |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    base = {}
    for r in rows:
        if "failed" in r:
            print(f"| {r['spec']} | {r['kind']} | ERROR {r['failed']} | | | | | | |")
            continue
        total = (r.get("precond_setup_ms") or 0) + (r.get("solve_setup_ms") or 0) + r["time_ms"]
        r["total_ms"] = total
        if r["kind"] == "jacobi":
            base[r["spec"]] = total
        ratio = base.get(r["spec"], float("nan")) / total
        print(f"| {r['spec']} | {r['kind']} | {cell(r.get('precond_setup_ms'))} | "
              f"{cell(r.get('solve_setup_ms'))} | {r['iterations']} | {cell(r['time_ms'])} | "
              f"{cell(total)} | {ratio:.2f} | {r['converged']} |")


if __name__ == "__main__":
    main()
