#!/usr/bin/env bash
# cpu-spmv.sh -- the CPU SpMV table (bench_cpu_spmv) of the generated suite
# at DRAM-bound sizes and of the shared real matrices, at 1 and 2 threads,
# each pass twice so the spread of a shared machine shows; then the loaded
# case: the diagonal matrices at 2 threads idle and with one core kept busy
# by a busy loop this script starts (issue 20, item 5), in the same run, and
# the loaded / idle ratio of each.
#
#   bench/cpu-spmv.sh BUILD_DIR OUT.md [PARTS]
#
# PARTS: which tables, any of "1 2 loaded" (1 thread, 2 threads, the
# loaded case; default all), so that the 2-thread and loaded tables can be
# run again in a quiet stretch of a shared machine.
#
# The planner's CPU calibration is made in a fresh cache folder first (its
# time is not in any row), as a user's first large plan makes it.  Each
# table says the load average before it.
set -euo pipefail
build=${1:?usage: cpu-spmv.sh BUILD_DIR OUT.md [PARTS]}
out=${2:?usage: cpu-spmv.sh BUILD_DIR OUT.md [PARTS]}
parts=" ${3:-1 2 loaded} "
suite=(lap2d5:1000 lap3d7:100 lap3d27:100 band:1000000,10 type2:2000000
       type3:1000000,41,0.35 random:1000000,16 powerlaw:1000000,2,10000)
diagonal=(lap3d7:100 lap3d27:100 band:1000000,10 type2:2000000 type3:1000000,41,0.35)
# the real matrices adia reads (complex ones are refused)
real=()
for f in /work/shared/matrices/*.mtx; do
    head -c 200 "$f" | head -1 | grep -qi complex || real+=("$f")
done
export ADIA_CACHE_DIR
ADIA_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$ADIA_CACHE_DIR"' EXIT

load() { echo "Load average before this table: $(cut -d' ' -f1-3 /proc/loadavg)."; echo; }
table() {   # table THREADS SPEC...: bench_cpu_spmv's rows at THREADS threads
    local t=$1
    shift
    load
    OMP_NUM_THREADS=$t "$build/bench_cpu_spmv" "$@"
    echo
}
# loaded_ratios IDLE LOADED: matrix, best and plain csr idle / loaded, ratios
loaded_ratios() {
    echo "| matrix | best ms idle | best ms loaded | loaded / idle | plain csr ms idle | plain csr ms loaded | loaded / idle |"
    echo "| --- | --- | --- | ---: | ---: | ---: | ---: |"
    awk -F'|' 'FNR == NR && /^\| [a-z]/ && $2 != " matrix " { best[$2] = $9; plain[$2] = $8; next }
               /^\| [a-z]/ && ($2 in best) && $2 != " matrix " {
                   split(best[$2], bi, " "); split($9, bl, " ")
                   printf "|%s| %s | %s | %.2f | %.3f | %.3f | %.2f |\n", $2, best[$2], $9,
                          bl[2] / bi[2], plain[$2], $8, $8 / plain[$2] }' "$1" "$2"
}

{
    echo "# CPU SpMV, $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)," \
         "$(nproc) cores, $(git -C "$(dirname "$0")" rev-parse --short HEAD)"
    echo
    for t in 1 2; do
        [[ $parts == *" $t "* ]] || continue
        for pass in 1 2; do
            echo "## $t thread(s), pass $pass, generated suite"
            echo
            table "$t" "${suite[@]}"
        done
        echo "## $t thread(s), shared real matrices"
        echo
        table "$t" "${real[@]}"
    done
    [[ $parts == *" loaded "* ]] || exit 0
    idle=$(mktemp) loaded=$(mktemp)
    echo "## 2 threads, idle"
    echo
    table 2 "${diagonal[@]}" | tee "$idle"
    echo "## 2 threads, one core kept busy by another process"
    echo
    (while :; do :; done) &
    busy=$!
    trap 'kill "$busy"' EXIT   # this block runs in its own shell (the pipe)
    sleep 1   # the library samples the load every 100 ms
    table 2 "${diagonal[@]}" | tee "$loaded"
    kill "$busy"
    trap - EXIT
    echo "## Loaded / idle, 2 threads"
    echo
    loaded_ratios "$idle" "$loaded"
    echo
    rm -f "$idle" "$loaded"
} | tee "$out"
