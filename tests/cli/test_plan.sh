# test_plan.sh -- `adia spmv` without --format uses the planner: --explain,
# --calls, --chooser, the JSON keys chooser and why, usage errors.
. "$(dirname "$0")/lib.sh"
need_python

expect 0 spmv --gen lap2d5:100 --calls 1 --device cpu --runs 2 --json
check "one call: csr (conversion does not pay)" test "$(json_get format)" = csr
check "spmv --json planner keys" json_keys format device time_ms max_rel_err chooser why
check "chooser model below 1000 calls" test "$(json_get chooser)" = model

expect 0 spmv --gen type3:8192,4,0.5 --chooser rules --device cpu --runs 2 --json
check "rules on type III: brcsd2" test "$(json_get format)" = brcsd2
check "rules why names the type" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert "type III" in d["why"], d["why"]
' <"$OUT"

expect 0 spmv --gen lap2d5:40 --calls 2000 --device cpu --runs 2 --json
check "measure from 1000 calls" test "$(json_get chooser)" = measure

expect 0 spmv --gen band:2000,3 --explain --device cpu --runs 2
check "explain marks the choice" stdout_has "<- chosen"
check "explain gives predicted times" stdout_has "SpMV ms"

expect 0 spmv --gen lap2d5:12 --format csr --runs 2 --json
check "--format: chooser fixed" test "$(json_get chooser)" = fixed

expect 2 spmv --gen lap2d5:12 --chooser best
check "bad chooser named" stderr_has "best"
expect 2 spmv --gen lap2d5:12 --format csr --chooser model
expect 2 spmv --gen lap2d5:12 --calls -3

if "$TOOL" spmv --gen lap2d5:12 --device gpu --runs 1 >/dev/null 2>&1; then
    echo "(a GPU is present: the no-device check is skipped)"
else
    expect 1 spmv --gen lap2d5:12 --device gpu --runs 1
    check "no device: clear message" stderr_has "no CUDA device"
fi
finish
