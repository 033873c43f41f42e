#!/usr/bin/env bash
# solver-ab.sh -- per-iteration time of the GPU solvers, two builds side by
# side in one run (issue 29: "no regression, measured"): CG, BiCGSTAB and
# GMRES, with and without Jacobi, on lap3d7 at each EDGE, single process
# and the distributed path in one process (--dist), REPS runs of each
# build interleaved (old, new, old, new: clock or thermal drift hits both
# alike); the table keeps the lesser of each build's runs.
#
# usage: bench/solver-ab.sh OLD_ADIA NEW_ADIA [EDGE...]   (default 160 256)
# environment: REPS (default 2), MAX_ITER (default 200).
set -uo pipefail
OLD=$1
NEW=$2
shift 2
EDGES=${*:-160 256}
REPS=${REPS:-2}
MAX_ITER=${MAX_ITER:-200}
json() { sed -n "s/.*\"$1\":\([-0-9.e+a-z]*\).*/\1/p"; }
least() { sort -g | head -1 | awk '{printf "%.4f\n", $1}'; }

# run ADIA SPEC METHOD PRECOND PATH: ms per iteration of one solve
run() {
    local args=(solve --gen "$2" --device gpu --method "$3" --max-iter "$MAX_ITER" --json)
    [ "$4" = jacobi ] && args+=(--jacobi)
    [ "$5" = dist ] && args+=(--dist)
    ADIA_DIST_TRANSPORT=nccl "$1" "${args[@]}" 2>>/tmp/solver-ab.stderr | tail -1 | json ms_per_iter
}

echo "# $(date -u '+%F %T UTC'); $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); old $OLD, new $NEW; --max-iter $MAX_ITER, the lesser of $REPS runs each"
echo
echo "| lap3d7 | method | M | path | old ms/it | new ms/it | new/old |"
echo "|---|---|---|---|---:|---:|---:|"
for e in $EDGES; do
    spec=lap3d7:$e
    "$NEW" solve --gen "$spec" --device gpu >/dev/null 2>&1   # the kernel cache, warm
    for m in cg bicgstab gmres; do
        for pc in none jacobi; do
            for path in single dist; do
                o=() n=()
                for _ in $(seq "$REPS"); do
                    o+=("$(run "$OLD" "$spec" $m $pc $path)")
                    n+=("$(run "$NEW" "$spec" $m $pc $path)")
                done
                a=$(printf '%s\n' "${o[@]}" | least)
                b=$(printf '%s\n' "${n[@]}" | least)
                r=$(awk -v a="$a" -v b="$b" 'BEGIN {print (a > 0) ? sprintf("%.3f", b / a) : "nan"}')
                echo "| $e | $m | $pc | $path | $a | $b | $r |"
            done
        done
    done
done
