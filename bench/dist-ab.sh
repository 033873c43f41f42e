#!/usr/bin/env bash
# dist-ab.sh -- A/B of environment variants of the distributed device CG
# (issue 31), side by side in one run: for each P, each variant solves the
# 3D 7-point Laplacian of EDGE^3 rows per process, REPS times, variants
# interleaved (so that clock or thermal drift hits them alike).
#
# usage: bench/dist-ab.sh EDGE "P..." VARIANT...
#   VARIANT: space-separated NAME=VALUE settings, e.g.
#            "ADIA_DIST_ENDS=after ADIA_DIST_REDUCE=nccl" (the old path)
#            "" (the defaults)
# environment: ADIA (default build-rel/adia), MPIRUN, MPI_ARGS (as in
# dist-scaling.sh), REPS (default 3), ARGS (more `adia solve` arguments,
# e.g. "--method bicgstab"), CMD (default solve; spmv times the
# distributed product alone, its "time_ms").  Warms the kernel cache first.  P = 1 is the
# single-process solver (the baseline of weak scaling; variants unused); for spmv also the
# one-process distributed path (`--dist`, NCCL: the products captured in a CUDA graph and
# timed by events, as at P > 1 and as the single-process product).
# Prints a markdown table: CG ms/it of each repetition, their median, and
# the ratio to the first variant's median.
set -uo pipefail
EDGE=$1
RANKS=$2
shift 2
ADIA=${ADIA:-build-rel/adia}
MPIRUN=${MPIRUN:-mpirun}
MPI_ARGS=${MPI_ARGS:-}
REPS=${REPS:-3}
CMD=${CMD:-solve}
FIELD=ms_per_iter
[ "$CMD" = spmv ] && FIELD=time_ms
# the same solver at every P: one process's CG default is --precond auto
if [ "$CMD" = solve ]; then
    case " ${ARGS:-} " in *" --precond "*|*" --jacobi "*) ;; *) ARGS="${ARGS:-} --precond none" ;; esac
fi
json() { sed -n "s/.*\"$1\":\([-0-9.e+a-z]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "nan"}'; }

# solve P SPEC VARIANT: the JSON line of one run
solve() {
    local p=$1 spec=$2 var=$3 xs=() kv
    for kv in $var; do xs+=(-x "$kv"); done
    # shellcheck disable=SC2086
    if [ "$p" = 1 ] && [ "$var" = "--dist" ]; then
        # shellcheck disable=SC2086
        ADIA_DIST_TRANSPORT=nccl "$ADIA" "$CMD" --gen "$spec" --device gpu --json --dist \
            ${ARGS:-} 2>>/tmp/dist-ab.stderr | tail -1
        return
    fi
    if [ "$p" = 1 ]; then
        # shellcheck disable=SC2086
        "$ADIA" "$CMD" --gen "$spec" --device gpu --json ${ARGS:-} 2>>/tmp/dist-ab.stderr | tail -1
        return
    fi
    # shellcheck disable=SC2086
    $MPIRUN $MPI_ARGS "${xs[@]}" -np "$p" "$ADIA" "$CMD" --gen "$spec" --device gpu --json \
        ${ARGS:-} 2>>/tmp/dist-ab.stderr | tail -1
}

echo "# $(date -u '+%F %T UTC'); $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l); $($MPIRUN --version 2>/dev/null | head -1); edge $EDGE; $CMD ${ARGS:-}"
echo
echo "| P | variant | $FIELD (each run) | median | vs first | iterations | transport, sums |"
echo "| ---: | --- | --- | ---: | ---: | ---: | --- |"
# shellcheck disable=SC2086
$ADIA solve --gen "lap3d7:$EDGE" --device gpu ${ARGS:-} >/dev/null 2>&1   # kernel cache
for p in $RANKS; do
    spec="lap3d7:${EDGE}x${EDGE}x$((EDGE * p))"
    times=() its=() red=()
    vars=("$@")
    [ "$p" = 1 ] && vars=("")   # one process: no variant applies
    [ "$p" = 1 ] && [ "$CMD" = spmv ] && vars=("" "--dist")
    for v in "${vars[@]}"; do solve "$p" "$spec" "$v" >/dev/null; done   # warm (page cache, NCCL)
    for ((r = 0; r < REPS; r++)); do
        k=0
        for v in "${vars[@]}"; do
            out=$(solve "$p" "$spec" "$v")
            times[k]+="$(echo "$out" | json "$FIELD") "
            its[k]=$(echo "$out" | json iterations)
            red[k]="$(echo "$out" | sed -n 's/.*"transport":"\([a-z-]*\)".*/\1/p'), $(echo "$out" | sed -n 's/.*"reduce":"\([a-z-]*\)".*/\1/p')"
            k=$((k + 1))
        done
    done
    first="" k=0
    for v in "${vars[@]}"; do
        m=$(echo "${times[k]}" | tr ' ' '\n' | grep . | median)
        [ -n "$first" ] || first=$m
        printf "| %s | %s | %s | %s | %s | %s | %s |\n" "$p" "${v:-defaults}" "${times[k]}" "$m" \
            "$(awk -v a="$m" -v b="$first" 'BEGIN { printf "%.3f", a / b }')" "${its[k]}" "${red[k]}"
        k=$((k + 1))
    done
done
