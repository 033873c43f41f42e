#!/usr/bin/env bash
# The CPU cost model's calibration file (src/plan/plan_cpu.c): a CPU plan of
# a DRAM-sized matrix measures the machine once and writes the file; a
# damaged or foreign file is measured again and rewritten, never trusted,
# and the plan still works (the product is checked against the reference).
ADIA=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export ADIA_CACHE_DIR=$dir
# one calibration file per thread count, and the count follows the load
# (docs/threads.md): one thread keeps every plan on the same file
export OMP_NUM_THREADS=1
fail=0
plan() { "$ADIA" spmv --gen lap2d5:1000 --device cpu --calls 10 2>&1; }
out=$(plan) || { echo "FAILED: first plan: $out"; exit 1; }
f=$(ls "$dir"/cpu-*.txt 2>/dev/null | head -1)
[ -n "$f" ] || { echo "FAILED: no calibration file in $dir"; exit 1; }
head -1 "$f" | grep -q "^adia-cpu-calibration 3$" || { echo "FAILED: header: $(head -1 "$f")"; fail=1; }
grep -q "^format csr " "$f" || { echo "FAILED: no csr efficiency in $f"; fail=1; }
for damage in "garbage" "adia-cpu-calibration 3
threads 1
bandwidth_gbs -5
probe_rows 5 7 27" "$(head -4 "$f")"; do
    printf '%s\n' "$damage" > "$f"
    out=$(plan) || { echo "FAILED: plan after a damaged file: $out"; fail=1; }
    case "$out" in *"max relative error"*": ok"*) ;; *) echo "FAILED: product not checked ok: $out"; fail=1 ;; esac
    head -1 "$f" | grep -q "^adia-cpu-calibration 3$" && grep -q "^format csr " "$f" ||
        { echo "FAILED: damaged file not rewritten: $(head -3 "$f")"; fail=1; }
done
[ $fail -eq 0 ] && echo "test_cpu_calibration.sh: passed"
exit $fail
