#!/usr/bin/env bash
# cli_mpi.sh -- `adia spmv` and `adia solve` under mpirun, distributed with
# no extra flag (and in one process with --dist): the same solution and
# product as the serial tool, the
# --json keys of a distributed run, vector files through rank 0, and clear
# errors (not hangs) for a vector of the wrong length, more processes than
# rows and commands that do not run distributed.
# usage: cli_mpi.sh ADIA MPIEXEC [FLAGS...] NUMPROC_FLAG
set -euo pipefail
adia=$1
shift
launch=("$@")
# shellcheck source=cli_common.sh
source "$(dirname "$0")/cli_common.sh"

# solve: serial and 3 processes, x written by both
"$adia" solve --gen lap2d5:40 --jacobi --rtol 1e-11 -o "$tmp/xs.mtx" >/dev/null
out=$(run 3 solve --gen lap2d5:40 --jacobi --rtol 1e-11 -o "$tmp/xd.mtx")
echo "$out"
grep -q "3 processes" <<<"$out" || fail "solve under mpirun -np 3 did not run distributed"
d=$(rel_diff "$tmp/xs.mtx" "$tmp/xd.mtx")
le "$d" 1e-8 || fail "distributed solution differs from the serial one by $d"

# --dist: the same path in one process, without a launcher
json=$("$adia" solve --gen lap2d5:40 --jacobi --rtol 1e-11 --dist --json -o "$tmp/x1.mtx")
echo "$json"
grep -q '"ranks":1' <<<"$json" && grep -q '"converged":true' <<<"$json" || fail "solve --dist"
d=$(rel_diff "$tmp/xs.mtx" "$tmp/x1.mtx")
le "$d" 1e-8 || fail "one-process distributed solution differs from the serial one by $d"

# --json: ranks, rows per rank, halo bytes, time per iteration, communication share
json=$(run 2 solve --gen type2:5000 --method bicgstab --json)
echo "$json"
for key in '"ranks":2' '"rows_per_rank_min":' '"rows_per_rank_max":' '"halo_bytes_per_spmv":' \
           '"ms_per_iter":' '"solve_setup_ms":' '"wall_ms":' '"comm_share":' '"converged":true'; do
    grep -q "$key" <<<"$json" || fail "solve --json lacks $key"
done
[ "$(grep -c . <<<"$json")" = 1 ] || fail "more than one line (only rank 0 prints)"

# --precond mg: one multigrid across the processes (slabs; block Jacobi
# with ADIA_DIST_MG=block), both in fewer iterations than Jacobi's, slabs
# in as few as one process's mg; --grid refused there
its() { sed -n 's/.*"iterations":\([0-9]*\).*/\1/p'; }
json=$(run 2 solve --gen lap3d7:16x16x32 --precond mg --json)
echo "$json"
grep -q '"precond":"mg"' <<<"$json" && grep -q '"converged":true' <<<"$json" &&
    grep -q '"precond_setup_ms":' <<<"$json" && grep -q '"precond_scope":"slabs"' <<<"$json" ||
    fail "solve --precond mg under mpirun"
its_mg=$(its <<<"$json")
its_1=$("$adia" solve --gen lap3d7:16x16x32 --precond mg --json | its)
json=$(ADIA_DIST_MG=block run 2 solve --gen lap3d7:16x16x32 --precond mg --json)
grep -q '"precond_scope":"blocks"' <<<"$json" || fail "ADIA_DIST_MG=block: $json"
its_b=$(its <<<"$json")
its_j=$(run 2 solve --gen lap3d7:16x16x32 --jacobi --json | its)
[ "$((2 * its_b))" -lt "$its_j" ] && [ "$its_mg" -le "$((its_1 + 1))" ] ||
    fail "mg: slabs $its_mg iterations (one process $its_1), blocks $its_b, Jacobi $its_j"
# --grid: the whole matrix's grid (mg across the processes); a wrong one
# refused with the entry that does not fit it
json=$(run 2 solve --gen lap3d7:16x16x32 --precond mg --grid 16x16x32 --json)
grep -q '"precond_scope":"slabs"' <<<"$json" && [ "$(its <<<"$json")" = "$its_mg" ] ||
    fail "--grid 16x16x32 under mpirun: $json"
rc=0
err=$(run 2 solve --gen lap3d7:16x16x32 --precond mg --grid 16x32x16 2>&1 >/dev/null) || rc=$?
[ "$rc" -ne 0 ] && grep -q "not on a grid of 16x32" <<<"$err" ||
    fail "a wrong --grid under mpirun: rc $rc, '$err'"
rc=0
err=$(run 2 solve --gen lap3d7:16x16x32 --precond cheb --grid 16x16x32 2>&1 >/dev/null) || rc=$?
[ "$rc" -ne 0 ] && grep -q "grid under mpirun: mg's" <<<"$err" ||
    fail "--grid with cheb under mpirun: rc $rc, '$err'"

# spmv: x from a file (read by rank 0), y written; equal to the serial product
"$adia" solve --gen lap3d7:12 -o "$tmp/x.mtx" >/dev/null
"$adia" spmv --gen lap3d7:12 -x "$tmp/x.mtx" -o "$tmp/ys.mtx" >/dev/null
json=$(run 3 spmv --gen lap3d7:12 -x "$tmp/x.mtx" -o "$tmp/yd.mtx" --json)
echo "$json"
grep -q '"pass":true' <<<"$json" || fail "distributed spmv check"
grep -q '"ranks":3' <<<"$json" || fail "spmv --json lacks ranks"
d=$(rel_diff "$tmp/ys.mtx" "$tmp/yd.mtx")
le "$d" 1e-14 || fail "distributed y differs from the serial one by $d"

# a file matrix, each process streaming it
run 2 spmv data/orsreg_1.mtx | grep -q "2 processes" || fail "spmv of a file under mpirun"

# errors: exit 1 with the reason, on every process alike (no hang)
rc=0
err=$(run 3 solve --gen lap3d7:11 -b "$tmp/x.mtx" 2>&1 >/dev/null) || rc=$?
[ "$rc" -ne 0 ] && grep -q "1728 entries, the matrix 1331 rows" <<<"$err" ||
    fail "a b of the wrong length: rc $rc, '$err'"
rc=0
err=$(run 2 spmv --gen lap2d5:1 2>&1 >/dev/null) || rc=$?
[ "$rc" -ne 0 ] && grep -q "fewer than the 2 processes" <<<"$err" ||
    fail "more processes than rows: rc $rc, '$err'"
rc=0
err=$(run 2 gen lap2d5:4 -o "$tmp/a.mtx" 2>&1 >/dev/null) || rc=$?
[ "$rc" -ne 0 ] && grep -q "only spmv and solve run distributed" <<<"$err" ||
    fail "gen under mpirun: rc $rc, '$err'"
# a process bound to one processor (Open MPI's --bind-to core): with
# --device gpu rank 0 notes it on stderr (whatever the device then says),
# and not when unbound
if "${launch[0]}" --version 2>/dev/null | grep -q "Open MPI" && [ "$(nproc)" -ge 2 ]; then
    bind() { local b=$1; shift; timeout 120 "${launch[@]:0:${#launch[@]}-1}" --bind-to "$b" \
                 "${launch[-1]}" 2 "$adia" "$@"; }
    err=$(bind core solve --gen lap3d7:8 --device gpu 2>&1 >/dev/null) || true
    grep -q "bound to one processor.*--bind-to none" <<<"$err" ||
        fail "no note on a one-processor binding: '$err'"
    err=$(bind none solve --gen lap3d7:8 --device gpu 2>&1 >/dev/null) || true
    ! grep -q "bound to one processor" <<<"$err" || fail "a note without a binding: '$err'"
fi
echo "cli_mpi: ok"
