# test_json.sh -- every --json output is exactly one JSON object with the
# stable keys scripts depend on.
. "$(dirname "$0")/lib.sh"
need_python

expect 0 gen lap2d5:12 -o "$TMP/a.mtx" --json
check "gen --json keys" json_keys rows cols nnz
check "gen --json rows" test "$(json_get rows)" = 144

expect 0 info --gen lap2d5:12 --json
check "info --json keys" json_keys rows cols nnz n_diag dia_fill type format formats
check "info --json n_diag of a 5-point stencil" test "$(json_get n_diag)" = 5
check "info --json type is I, II or III" grep -qE '"type":"(I|II|III)"' "$OUT"
check "info --json lists the registry's diagonal formats" python3 -c '
import json, sys
d = json.load(sys.stdin)
names = [f["name"] for f in d["formats"]]
assert names and names == sys.argv[1:], (names, sys.argv[1:])
for f in d["formats"]:
    assert "error" in f or all(k in f for k in ("padded_zeros", "storage_bytes", "spmv_bytes")), f
' $(diagonal_formats) <"$OUT"

expect 0 info "$TMP/a.mtx" --formats --json
check "info --formats --json has every format" python3 -c '
import json, sys
d = json.load(sys.stdin)
names = {f["name"] for f in d["formats"]}
want = set(sys.argv[1:])
assert want <= names, want - names
' $(formats) <"$OUT"

expect 0 spmv "$TMP/a.mtx" --format csr --json --runs 3
check "spmv --json keys" json_keys format device time_ms max_rel_err
check "spmv --json format" test "$(json_get format)" = csr
check "spmv --json device" test "$(json_get device)" = cpu -o "$(json_get device)" = gpu

expect 0 spmv --gen lap2d5:12 --json --runs 2 --device cpu
check "spmv --json (chosen format) keys" json_keys format device time_ms max_rel_err

expect 0 convert "$TMP/a.mtx" "$TMP/b.bin" --json
check "convert --json keys" json_keys rows cols nnz
finish
