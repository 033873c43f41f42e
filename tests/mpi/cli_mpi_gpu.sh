#!/usr/bin/env bash
# cli_mpi_gpu.sh -- `adia solve` and `adia spmv` with --device gpu under
# mpirun: each process's block on a GPU (every method's vectors there), the
# same solution as the serial CPU tool, --json naming the device and the
# halo's transport, a run out of iterations exiting 1.  Skipped (exit code
# 77) without a CUDA device.
# usage: cli_mpi_gpu.sh ADIA MPIEXEC [FLAGS...] NUMPROC_FLAG
set -euo pipefail
adia=$1
shift
launch=("$@")
# shellcheck source=cli_common.sh
source "$(dirname "$0")/cli_common.sh"

rc=0
err=$(run 2 spmv --gen lap2d5:10 --device gpu --runs 1 2>&1 >/dev/null) || rc=$?
if [ "$rc" -ne 0 ] && grep -qE "no usable CUDA device|built without CUDA" <<<"$err"; then
    echo "SKIPPED: no CUDA device"
    exit 77
fi
[ "$rc" -eq 0 ] || fail "spmv --device gpu under mpirun: rc $rc, '$err'"

# solve: the serial CPU tool and 2 processes on the GPU, x written by both
"$adia" solve --gen lap2d5:40 --jacobi --rtol 1e-11 --device cpu -o "$tmp/xs.mtx" >/dev/null
json=$(run 2 solve --gen lap2d5:40 --jacobi --rtol 1e-11 --device gpu -o "$tmp/xd.mtx" --json)
echo "$json"
for key in '"ranks":2' '"device":"gpu"' '"transport":"' '"converged":true' '"ms_per_iter":' \
           '"comm_share":'; do
    grep -q "$key" <<<"$json" || fail "solve --device gpu --json lacks $key"
done
grep -qE '"transport":"(staged|nccl|peer)"' <<<"$json" || fail "transport of a device matrix"
d=$(rel_diff "$tmp/xs.mtx" "$tmp/xd.mtx")
le "$d" 1e-8 || fail "device-distributed solution differs from the serial one by $d"

# BiCGSTAB and GMRES on the devices: the serial CPU tool's solution
for m in bicgstab gmres; do
    "$adia" solve --gen band:900,3 --method $m --rtol 1e-11 --device cpu -o "$tmp/xs-$m.mtx" >/dev/null
    json=$(run 2 solve --gen band:900,3 --method $m --rtol 1e-11 --device gpu -o "$tmp/xd-$m.mtx" --json)
    echo "$json"
    grep -q '"converged":true' <<<"$json" && grep -q "\"method\":\"$m\"" <<<"$json" ||
        fail "solve --method $m --device gpu"
    d=$(rel_diff "$tmp/xs-$m.mtx" "$tmp/xd-$m.mtx")
    le "$d" 1e-8 || fail "device $m solution differs from the serial one by $d"
done

# --dist on one GPU: every row interior (x read in place), the same x
json=$("$adia" solve --gen lap2d5:40 --jacobi --rtol 1e-11 --device gpu --dist --json -o "$tmp/x1.mtx")
echo "$json"
grep -q '"ranks":1' <<<"$json" && grep -q '"interior_rows_rank0":1600' <<<"$json" ||
    fail "solve --dist --device gpu"
d=$(rel_diff "$tmp/xs.mtx" "$tmp/x1.mtx")
le "$d" 1e-8 || fail "one-process device solution differs from the serial one by $d"

# spmv on 3 processes, checked against each block's CSR
json=$(run 3 spmv --gen lap3d7:12 --device gpu --json)
echo "$json"
grep -q '"pass":true' <<<"$json" || fail "spmv --device gpu check"
grep -q '"device":"gpu"' <<<"$json" || fail "spmv --json: device"

# out of iterations: exit 1, the reason said
rc=0
err=$(run 2 solve --gen lap2d5:40 --device gpu --max-iter 3 2>&1 >/dev/null) || rc=$?
[ "$rc" -eq 1 ] && grep -q "did not converge: iteration limit reached" <<<"$err" ||
    fail "3 iterations: rc $rc, '$err'"
echo "cli_mpi_gpu: ok"
