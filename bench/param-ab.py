#!/usr/bin/env python3
"""param-ab.py -- A/B of two format-parameter variants of the GPU products,
side by side in one run: every matrix of the generated suite (gpu-run.sh's)
and issue 32's bands with holes, `adia bench` under variant A and variant
B, interleaved, ROUNDS times (clock or thermal drift hits both alike).

  bench/param-ab.py [--adia build-rel/adia] [--adia-b build-x/adia]
                    [--specs "SPEC;SPEC --float"]
                    [--formats dia,hdi,...] [--rounds 2] [--runs 100]
                    [--budget-s 420] [--jsonl OUT] [--dry-run] A B
  bench/param-ab.py --render OUT.jsonl

A, B: format parameters as `--params` takes them ("" for the defaults),
e.g. `stage=off ""`: the warp kernels against the staged one (issue 32's
"the whole suite before and after in one run").  Prints a markdown table:
for each matrix, each format and kernel, the median time under A and B and
B / A, and the fastest of each variant (the planner's best candidate),
flagging B slower than A by more than 2%.  --jsonl keeps the raw `adia
bench --json` objects (each with "variant" and "spec" added) for
--render.  --budget-s: no run starts after that many seconds.  --adia-b:
variant B runs this binary instead (two builds side by side, e.g. a
compile-time variant of a kernel; A and B may then be the same
parameters).
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time

SUITE = [
    "lap2d5:2048", "lap2d5:2048 --float", "lap3d7:160", "lap3d7:160 --float", "lap3d27:128",
    "lap3d7:256", "type2:4000000", "type3:4000000,41,0.2", "type3:4000000,41,0.34",
    "type3:4000000,41,0.5", "type3:4000000,41,0.34,65536", "bandh:4000000,24,4096,200",
    "band:1000000,100", "bandr:600000,30,0.5", "bandr:600000,30,0.7", "bandr:600000,30,0.9",
    "bandr:600000,16,0.7", "bandr:600000,8,0.5", "bandr:600000,4,0.5",
]
SLOWER = 1.02   # B / A above this is flagged


def command(a, spec, params, binary):
    words = shlex.split(spec)
    cmd = [binary, "bench", "--gen", words[0], *words[1:], "--formats", a.formats,
           "--runs", str(a.runs), "--json"]
    return cmd + (["--params", params] if params else [])


def run_all(a):
    records, start = [], time.monotonic()
    out = open(a.jsonl, "w") if a.jsonl else None
    for spec in a.specs:
        for rnd in range(a.rounds):
            for name, params, binary in (("A", a.A, a.adia), ("B", a.B, a.adia_b or a.adia)):
                cmd = command(a, spec, params, binary)
                if a.dry_run:
                    print(" ".join(shlex.quote(w) for w in cmd))
                    continue
                if time.monotonic() - start > a.budget_s:
                    print(f"param-ab: budget of {a.budget_s} s spent, stopping before {spec}",
                          file=sys.stderr)
                    return records
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    print(f"param-ab: {' '.join(cmd)}: exit {p.returncode}: "
                          f"{p.stderr.strip()[-300:]}", file=sys.stderr)
                    continue
                rec = json.loads(p.stdout)
                rec.update(variant=name, params=params, binary=binary, spec=spec, round=rnd)
                records.append(rec)
                if out:
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
    return records


def times(records, spec, variant):
    """{(format, kernel): [ms, ...]} of the runs of spec under variant."""
    t = {}
    for r in records:
        if r["spec"] != spec or r["variant"] != variant:
            continue
        for x in r["results"]:
            if x.get("status") == "ok" and x.get("time_ms") is not None:
                t.setdefault((x["format"], x["kernel"]), []).append(x["time_ms"])
    return {k: statistics.median(v) for k, v in t.items()}


def render(records):
    specs = list(dict.fromkeys(r["spec"] for r in records))
    params = {r["variant"]: r["params"] for r in records}
    binary = {r["variant"]: r.get("binary", "") for r in records}
    if binary.get("A") != binary.get("B"):
        params = {v: f"{binary.get(v)} {params.get(v, '')}".strip() for v in ("A", "B")}
    head = records[0] if records else {}
    print(f"# param-ab: A = `{params.get('A', '')}` B = `{params.get('B', '')}`; "
          f"{head.get('device', '?')}, {head.get('date', '?')}; median ms of the rounds\n")
    print("| matrix | fastest A | fastest B | B / A | every kernel: A -> B ms (B / A) |")
    print("| --- | --- | --- | ---: | --- |")
    flagged = []
    for spec in specs:
        ta, tb = times(records, spec, "A"), times(records, spec, "B")
        if not ta or not tb:
            print(f"| {spec} | - | - | - | a variant has no result |")
            continue
        ka, kb = min(ta, key=ta.get), min(tb, key=tb.get)
        ratio = tb[kb] / ta[ka]
        if ratio > SLOWER:
            flagged.append(spec)
        cells = ", ".join(f"{f}/{k} {ta[(f, k)]:.4f} -> {tb[(f, k)]:.4f} ({tb[(f, k)] / ta[(f, k)]:.2f})"
                          for (f, k) in sorted(ta) if (f, k) in tb)
        mark = " **slower**" if ratio > SLOWER else ""
        print(f"| {spec} | {'/'.join(ka)} {ta[ka]:.4f} | {'/'.join(kb)} {tb[kb]:.4f} | "
              f"{ratio:.2f}{mark} | {cells} |")
    print(f"\nB's fastest slower than A's by more than {100 * (SLOWER - 1):.0f}%: "
          f"{', '.join(flagged) if flagged else 'none'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("A", nargs="?", default="stage=off")
    ap.add_argument("B", nargs="?", default="")
    ap.add_argument("--adia", default="build-rel/adia")
    ap.add_argument("--adia-b", help="variant B's binary (default: --adia)")
    ap.add_argument("--specs", help="';'-separated generator specs (default: the suite)")
    ap.add_argument("--formats", default="dia,hdi,brcsd1,brcsd2,crsd")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--jsonl")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--render", metavar="JSONL")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as f:
            render([json.loads(line) for line in f if line.strip()])
        return 0
    if a.rounds < 1 or a.runs < 50:
        ap.error("--rounds must be at least 1 and --runs at least 50 (adia bench's floor)")
    a.specs = [s.strip() for s in a.specs.split(";") if s.strip()] if a.specs else SUITE
    records = run_all(a)
    if not a.dry_run:
        render(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
