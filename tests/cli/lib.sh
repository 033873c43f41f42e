# lib.sh -- what the CLI tests share (sourced; not a test itself).
# Each test_*.sh gets the tool's path as $1, counts checks, prints
# "N passed, N failed" last and exits 0 (all passed), 1 (a failure) or 77 (skip).
set -u
TOOL=${1:?usage: $0 PATH_TO_ADIA}
[ -x "$TOOL" ] || { echo "SKIPPED: $TOOL is not executable"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
OUT=$TMP/stdout
ERR=$TMP/stderr

fail() {
    failed=$((failed + 1))
    echo "FAILED: $*" >&2
}
check() { # check DESC COMMAND...: the command must succeed (a test condition)
    local desc=$1; shift
    if "$@"; then passed=$((passed + 1)); else fail "$desc"; fi
}
# run the tool, keeping stdout in $OUT and stderr in $ERR; sets RC
run() {
    "$TOOL" "$@" >"$OUT" 2>"$ERR"
    RC=$?
}
# expect CODE ARGS...: run the tool and check its exit code
expect() {
    local want=$1; shift
    run "$@"
    if [ "$RC" -eq "$want" ]; then
        passed=$((passed + 1))
    else
        fail "adia $* -> exit $RC, expected $want; stderr: $(head -c 400 "$ERR")"
    fi
}
stderr_has() { grep -qF -- "$1" "$ERR"; }
stdout_has() { grep -qF -- "$1" "$OUT"; }
# json_keys KEY...: $OUT is exactly one JSON object holding these keys
json_keys() {
    python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError as e:
    sys.exit("stdout is not one JSON object: %s" % e)
if not isinstance(d, dict):
    sys.exit("stdout is JSON but not an object")
missing = [k for k in sys.argv[1:] if k not in d]
if missing:
    sys.exit("missing keys %s" % missing)
' "$@" <"$OUT"
}
# json_get KEY: print one value of the JSON object in $OUT (nothing if absent)
json_get() {
    python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)[sys.argv[1]])
except (ValueError, KeyError, TypeError):
    pass
' "$1" <"$OUT"
}
# The registered formats, as the tool lists them for an unknown name.
formats() {
    "$TOOL" spmv --format no-such-format x 2>&1 >/dev/null | sed -n 's/.*registered formats: *//p'
}
# The registry's diagonal formats, in its order (codegen's refusal lists them).
diagonal_formats() {
    "$TOOL" codegen --gen lap2d5:2 --format no-such-format 2>&1 >/dev/null |
        sed -n 's/.*the diagonal formats are: *//p'
}
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
need_python() {
    command -v python3 >/dev/null || { echo "SKIPPED: python3 not found"; exit 77; }
}
