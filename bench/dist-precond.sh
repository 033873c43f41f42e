#!/usr/bin/env bash
# dist-precond.sh -- time to solution of a distributed solve with each
# preconditioner (issue 31 item 4, issue 30): CG on the 3D 7-point
# Laplacian with EDGE^3 rows per process (weak), b = A * ones, x0 = 0,
# rtol 1e-8, for each P and each --precond kind: iterations, the
# preconditioner's set-up (under mpirun mg runs across the processes,
# "slabs"; kind mg-block is mg on each process's own block, block Jacobi,
# as every other kind), the solve's set-up, the iterations' time and their
# sum.  P = 1 is the single-process solver (the kind on the whole matrix).
# Each run twice, the second kept (kernel cache, page cache, NCCL).
#
# usage: bench/dist-precond.sh [EDGE [RANKS...]]      (default: 160, 1 2 4)
# environment: ADIA (default build-rel/adia), MPIRUN, MPI_ARGS (as in
# dist-scaling.sh), KINDS (default "jacobi mg mg-block"), DEVICE (default gpu)
# Prints a markdown table; exit status 1 if a run failed or did not converge.
set -uo pipefail
EDGE=${1:-160}
shift || true
RANKS=${*:-1 2 4}
ADIA=${ADIA:-build-rel/adia}
MPIRUN=${MPIRUN:-mpirun}
MPI_ARGS=${MPI_ARGS:-}
KINDS=${KINDS:-jacobi mg mg-block}
DEVICE=${DEVICE:-gpu}
STATUS=0
json() { sed -n "s/.*\"$1\":\([-0-9.e+a-z]*\).*/\1/p"; }

# solve P SPEC KIND: the JSON line of the second of two runs
solve() {
    local p=$1 spec=$2 kind=$3 out cmd route=auto
    [ "$kind" = mg-block ] && kind=mg route=block
    cmd=("$ADIA" solve --gen "$spec" --device "$DEVICE" --precond "$kind" --json)
    export ADIA_DIST_MG=$route
    [ "$route" = auto ] && unset ADIA_DIST_MG
    # word splitting of the launcher and its arguments is meant
    # shellcheck disable=SC2206
    [ "$p" = 1 ] || cmd=($MPIRUN $MPI_ARGS -np "$p" ${ADIA_DIST_MG:+-x ADIA_DIST_MG} "${cmd[@]}")
    "${cmd[@]}" >/dev/null 2>&1
    out=$("${cmd[@]}" 2>/dev/null | tail -1)
    case "$out" in *'"converged":true'*) ;; *) STATUS=1 ;; esac
    echo "$out"
}

echo "# $(date -u '+%F %T UTC'); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); $($MPIRUN --version 2>/dev/null | head -1); edge $EDGE; $ADIA"
echo
echo "| P | precond | scope | iterations | precond set-up ms | solve set-up ms | iterations ms | ms/it | total ms |"
echo "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for p in $RANKS; do
    spec="lap3d7:${EDGE}x${EDGE}x$((EDGE * p))"
    for kind in $KINDS; do
        [ "$p" = 1 ] && [ "$kind" = mg-block ] && continue   # the same as mg
        j=$(solve "$p" "$spec" "$kind")
        ps=$(echo "$j" | json precond_setup_ms)
        ss=$(echo "$j" | json solve_setup_ms)
        [ -n "$ss" ] || ss=$(echo "$j" | json setup_ms)
        tm=$(echo "$j" | json time_ms)
        sc=$(echo "$j" | sed -n 's/.*"precond_scope":"\([a-z]*\)".*/\1/p')
        awk -v p="$p" -v k="$kind" -v sc="${sc:--}" -v it="$(echo "$j" | json iterations)" \
            -v ps="${ps:-0}" -v ss="${ss:-0}" -v tm="${tm:-nan}" \
            -v mi="$(echo "$j" | json ms_per_iter)" 'BEGIN {
            printf "| %s | %s | %s | %s | %.1f | %.1f | %.1f | %.4f | %.1f |\n", p, k, sc, it, ps,
                   ss, tm, mi, ps + ss + tm }'
    done
done
exit $STATUS
