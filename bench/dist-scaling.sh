#!/usr/bin/env bash
# dist-scaling.sh -- weak and strong scaling of the distributed SpMV and CG
# iteration (issues 18 and 19): `adia spmv` and `adia solve` under
# mpirun -np P for each P, --json, one markdown table.
#
#   weak    3D 7-point Laplacian with EDGE x EDGE x (EDGE * P) rows: EDGE^3
#           rows per process whatever P; efficiency = t(1) / t(P)
#   strong  the EDGE x EDGE x (EDGE * max P) problem on every P;
#           efficiency = t(1) / (P t(P))
#
# usage: bench/dist-scaling.sh [EDGE [RANKS...]]     (default: 160, 1 2 4)
# environment:
#   ADIA      the tool (default build/adia)
#   MPIRUN    (default mpirun)
#   MPI_ARGS  extra mpirun arguments, e.g. as root in a container:
#             "--allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none"
#   MODES     which tables (default "weak strong")
#   DEVICE    cpu or gpu (default: what the tool picks); gpu: each process's
#             block on one GPU (node rank modulo the devices), the halo by
#             NCCL between distinct GPUs, CG with its vectors on the device;
#             P = 1 is the single-process solver (the baseline), "1 --dist"
#             the distributed path in one process
# Prints the table; exit status 1 if a run failed or did not converge.
set -uo pipefail
EDGE=${1:-160}
shift || true
RANKS=${*:-1 2 4}
ADIA=${ADIA:-build/adia}
MPIRUN=${MPIRUN:-mpirun}
MPI_ARGS=${MPI_ARGS:-}
DEV=${DEVICE:+--device $DEVICE}
MAXP=$(for p in $RANKS; do echo "$p"; done | sort -n | tail -1)
STATUS=0

# json KEY: the number after "KEY": in the JSON line on stdin
json() { sed -n "s/.*\"$1\":\([-0-9.e+]*\).*/\1/p"; }

# run P CMD SPEC [ARGS...]: the JSON line of one run ("" on failure), the
# second of two: the first fills the kernel cache (a structure's generated
# kernels are compiled at its first run, inside the timed solve)
run() {
    local p=$1 cmd=$2 spec=$3 out
    shift 3
    # shellcheck disable=SC2086
    $MPIRUN $MPI_ARGS -np "$p" "$ADIA" "$cmd" --gen "$spec" --json $DEV "$@" >/dev/null 2>&1
    # shellcheck disable=SC2086
    out=$($MPIRUN $MPI_ARGS -np "$p" "$ADIA" "$cmd" --gen "$spec" --json $DEV "$@" 2>/dev/null | tail -1)
    case "$out" in *'"converged":false'*|"") STATUS=1 ;; esac
    echo "$out"
}

echo "# $(date -u '+%F %T UTC'); $($MPIRUN --version 2>/dev/null | head -1); edge $EDGE; ranks $RANKS; $ADIA"
echo
echo "| scaling | P | matrix | rows per rank | setup s | SpMV ms | CG ms/it | iterations | comm share (CG) | SpMV eff. | CG eff. |"
echo "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for mode in ${MODES:-weak strong}; do
    s1="" c1=""
    # P = 1 is the single-process tool; "1d" the distributed path in one
    # process (--dist: its own overhead, no halo)
    for p in $(for q in $RANKS; do [ "$q" = 1 ] && echo 1 1d || echo "$q"; done); do
        extra=""
        [ "$p" = 1d ] && p=1 && extra=--dist
        [ "$mode" = weak ] && z=$((EDGE * p)) || z=$((EDGE * MAXP))
        spec="lap3d7:${EDGE}x${EDGE}x${z}"
        sj=$(run "$p" spmv "$spec" $extra)
        cj=$(run "$p" solve "$spec" $extra --precond none)   # CG alone (one process's default: auto)
        sm=$(echo "$sj" | json time_ms)
        cm=$(echo "$cj" | json ms_per_iter)
        it=$(echo "$cj" | json iterations)
        cs=$(echo "$cj" | json comm_share)
        su=$(echo "$cj" | json setup_ms)
        [ -z "$s1" ] && s1=$sm && c1=$cm
        eff() {  # t1 tp p mode
            awk -v a="$1" -v b="$2" -v p="$3" -v m="$4" 'BEGIN {
                if (a == "" || b == "" || b == 0) { print "-"; exit }
                printf "%.0f%%", 100 * (m == "weak" ? a / b : a / (p * b)) }'
        }
        num() { awk -v v="$1" -v f="$2" 'BEGIN { if (v == "") print "-"; else printf f, v }'; }
        printf "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n" "$mode" "$p${extra:+ $extra}" "$spec" \
            $((EDGE * EDGE * z / p)) "$(awk -v v="$su" 'BEGIN { if (v == "") print "-"; else printf "%.2f", v / 1e3 }')" "$(num "$sm" %.4f)" "$(num "$cm" %.4f)" "${it:--}" \
            "$(num "$cs" %.2f)" "$(eff "$s1" "$sm" "$p" "$mode")" "$(eff "$c1" "$cm" "$p" "$mode")"
    done
done
exit $STATUS
