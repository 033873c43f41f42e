#!/usr/bin/env bash
# cpu-spmv.sh -- the CPU SpMV table (bench_cpu_spmv) of the generated suite
# at DRAM-bound sizes and of the shared real matrices, at 1 and 2 threads,
# each pass twice so the spread of a shared machine shows.
#
#   bench/cpu-spmv.sh BUILD_DIR OUT.md
#
# The planner's CPU calibration is made in a fresh cache folder first (its
# time is not in any row), as a user's first large plan makes it.
set -euo pipefail
build=${1:?usage: cpu-spmv.sh BUILD_DIR OUT.md}
out=${2:?usage: cpu-spmv.sh BUILD_DIR OUT.md}
suite=(lap2d5:1000 lap3d7:100 lap3d27:100 band:1000000,10 type2:2000000
       type3:1000000,41,0.35 random:1000000,16 powerlaw:1000000,2,10000)
# the real matrices adia reads (complex ones are refused)
real=()
for f in /work/shared/matrices/*.mtx; do
    head -c 200 "$f" | head -1 | grep -qi complex || real+=("$f")
done
export ADIA_CACHE_DIR
ADIA_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$ADIA_CACHE_DIR"' EXIT
{
    echo "# CPU SpMV, $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)," \
         "$(nproc) cores, $(git -C "$(dirname "$0")" rev-parse --short HEAD)"
    echo
    for t in 1 2; do
        for pass in 1 2; do
            echo "## $t thread(s), pass $pass, generated suite"
            echo
            OMP_NUM_THREADS=$t "$build/bench_cpu_spmv" "${suite[@]}"
            echo
        done
        echo "## $t thread(s), shared real matrices"
        echo
        OMP_NUM_THREADS=$t "$build/bench_cpu_spmv" "${real[@]}"
        echo
    done
} | tee "$out"
