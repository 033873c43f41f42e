#!/usr/bin/env python3
"""dist-trace.py -- where a distributed device iteration's time goes, from
the stamps adia_mpi writes with ADIA_DIST_TRACE=FOLDER (src/mpi/dist_trace.c).

usage: bench/dist-trace.py FOLDER [LABEL]

For every trace file FOLDER/trace-N.RANK.tsv: the stamps in time order; the
product's stream's stamps (product, bands, interior, join, ends,
reduce_start, reduce_end) cut its time into segments named "from -> to",
the halo's stream gives "halo (its stream)" (with nccl the ends then run
there, beside the interior, until the join) and the halo's start after
the product's.  Prints one markdown table per file: median, mean, 90th
percentile and count of each segment in microseconds.  The segment
"reduce_end -> product" is the method's own work between products (CG: the
vector pass and the sums' reset), and at the end of a chunk of iterations
the host's stop check and the next graph launch: its mean above its median
is that cost spread over the iterations.  Each stamp adds about one kernel
launch to the segment it ends.
"""
import glob
import os
import statistics
import sys

MAIN = {"product", "bands", "interior", "join", "ends", "reduce_start", "reduce_end"}


def segments(stamps):
    """{segment name: [microseconds]} of one file's stamps (tag, ns)."""
    out = {}
    last = None
    halo0 = None
    product = None
    for tag, t in sorted(stamps, key=lambda s: s[1]):
        if tag in MAIN:
            if last is not None:
                out.setdefault(f"{last[0]} -> {tag}", []).append((t - last[1]) / 1e3)
            if tag == "product":
                if product is not None:
                    out.setdefault("product -> next product", []).append((t - product) / 1e3)
                product = t
            last = (tag, t)
        elif tag == "halo_start":
            halo0 = t
            if product is not None:
                out.setdefault("halo starts after product", []).append((t - product) / 1e3)
        elif tag == "halo_end" and halo0 is not None:
            out.setdefault("halo (its stream)", []).append((t - halo0) / 1e3)
            halo0 = None
    return out


def table(path, label):
    stamps = []
    with open(path) as f:
        for line in f:
            tag, ns = line.split("\t")
            stamps.append((tag, int(ns)))
    seg = segments(stamps)
    print(f"\n### {label}{os.path.basename(path)}: {len(stamps)} stamps\n")
    print("| segment | median us | mean us | p90 us | count |")
    print("| --- | ---: | ---: | ---: | ---: |")
    order = ["product -> bands", "bands -> interior", "interior -> join", "join -> ends",
             "ends -> reduce_start", "reduce_start -> reduce_end", "reduce_end -> product",
             "reduce_end -> reduce_start", "ends -> product", "halo starts after product",
             "halo (its stream)", "product -> next product"]
    names = [n for n in order if n in seg] + sorted(n for n in seg if n not in order)
    for n in names:
        v = sorted(seg[n])
        if len(v) < 3:
            continue
        p90 = v[min(len(v) - 1, int(0.9 * len(v)))]
        print(f"| {n} | {statistics.median(v):.1f} | {statistics.fmean(v):.1f} | {p90:.1f} | {len(v)} |")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    label = sys.argv[2] + ": " if len(sys.argv) > 2 else ""
    files = sorted(glob.glob(os.path.join(sys.argv[1], "trace-*.tsv")))
    if not files:
        sys.exit(f"{sys.argv[1]}: no trace-*.tsv files")
    for p in files:
        table(p, label)


if __name__ == "__main__":
    main()
