#!/usr/bin/env bash
# dist-breakdown.sh -- where the distributed CG iteration's time goes on
# 1, 2 and 4 GPUs (issue 31): the CG time per iteration of each graph mode
# (ADIA_DIST_GRAPH=while, the default: one WHILE graph; chunks: plain
# graphs of a few iterations; none: iteration by iteration), without
# stamps, each run twice and the second kept (kernel cache, page cache),
# then the same runs with the device trace (ADIA_DIST_TRACE) and
# bench/dist-trace.py's table of each.
#
# usage: bench/dist-breakdown.sh OUT_DIR [EDGE [RANKS...]]   (160, 1 2 4)
# environment: ADIA (default build-rel/adia), MPIRUN, MPI_ARGS (as in
# dist-scaling.sh).  Warms the kernel cache first.  Writes OUT_DIR/breakdown.md.
set -uo pipefail
OUTDIR=$1
EDGE=${2:-160}
shift 2 2>/dev/null || shift $#
RANKS=${*:-1 2 4}
ADIA=${ADIA:-build-rel/adia}
MPIRUN=${MPIRUN:-mpirun}
MPI_ARGS=${MPI_ARGS:-}
MD=$OUTDIR/breakdown.md
mkdir -p "$OUTDIR"
json() { sed -n "s/.*\"$1\":\([-0-9.e+a-z]*\).*/\1/p"; }

# solve P SPEC [ARGS...]: the JSON line of one distributed device CG solve
solve() {
    local p=$1 spec=$2
    shift 2
    # shellcheck disable=SC2086
    $MPIRUN $MPI_ARGS -x ADIA_DIST_GRAPH -x ADIA_DIST_TRACE -x ADIA_DIST_TRANSPORT -np "$p" \
        "$ADIA" solve --gen "$spec" --device gpu --json --precond none "$@" 2>>"$OUTDIR/stderr.txt" | tail -1
}

row() {  # label json
    printf "| %s | %s | %s | %s | %s | %s |\n" "$1" "$(echo "$2" | json ms_per_iter)" \
        "$(echo "$2" | json iterations)" "$(echo "$2" | json converged)" \
        "$(echo "$2" | json setup_ms)" "$(echo "$2" | json connect_ms)" >>"$MD"
}

{
    echo "# $(date -u '+%F %T UTC'); $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l)"
    echo "$($MPIRUN --version 2>/dev/null | head -1); NCCL $(sed -n 's/#define NCCL_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' /usr/local/cuda/include/nccl.h 2>/dev/null | paste -sd.)"
    echo
    echo "| run | CG ms/it | iterations | converged | setup ms | NCCL connect ms |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
} >"$MD"
export ADIA_DIST_GRAPH="" ADIA_DIST_TRACE="" ADIA_DIST_TRANSPORT=""
solve 1 "lap3d7:$EDGE" >/dev/null   # kernel cache
for p in $RANKS; do
    spec="lap3d7:${EDGE}x${EDGE}x$((EDGE * p))"
    if [ "$p" = 1 ]; then
        $ADIA solve --gen "$spec" --device gpu --precond none >/dev/null
        row "P=1 single-process solver" "$($ADIA solve --gen "$spec" --device gpu --json --precond none | tail -1)"
        export ADIA_DIST_TRANSPORT=nccl   # one process: the NCCL path, reductions of one
        for mode in while chunks; do
            ADIA_DIST_GRAPH=$mode solve 1 "$spec" --dist >/dev/null
            row "P=1 --dist nccl $mode" "$(ADIA_DIST_GRAPH=$mode solve 1 "$spec" --dist)"
        done
        export ADIA_DIST_TRANSPORT=""
        continue
    fi
    for mode in while chunks none; do
        ADIA_DIST_GRAPH=$mode solve "$p" "$spec" >/dev/null
        row "P=$p $spec $mode" "$(ADIA_DIST_GRAPH=$mode solve "$p" "$spec")"
    done
done
for p in $RANKS; do
    spec="lap3d7:${EDGE}x${EDGE}x$((EDGE * p))"
    for mode in chunks while; do
        d=$OUTDIR/trace-p$p-$mode
        mkdir -p "$d"
        extra=""
        [ "$p" = 1 ] && extra=--dist
        row "P=$p $mode, traced" "$(ADIA_DIST_GRAPH=$mode ADIA_DIST_TRACE=$d ADIA_DIST_TRANSPORT=nccl solve "$p" "$spec" $extra)"
    done
done
for p in $RANKS; do
    for mode in chunks while; do
        python3 "$(dirname "$0")/dist-trace.py" "$OUTDIR/trace-p$p-$mode" "P=$p $mode" >>"$MD"
    done
done
cat "$MD"
tar czf "$OUTDIR/traces.tgz" -C "$OUTDIR" $(cd "$OUTDIR" && ls -d trace-p*) && rm -rf "$OUTDIR"/trace-p*
