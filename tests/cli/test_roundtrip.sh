# test_roundtrip.sh -- gen / convert / info agree through .mtx, .mtx.gz and
# .bin: same size and nonzeros, and .mtx text survives a round trip exactly.
. "$(dirname "$0")/lib.sh"
need_python

spec="band:300,3,seed=7"
expect 0 gen "$spec" --json
nnz=$(json_get nnz)
check "band:300,3 has 300*7-12 nonzeros" test "$nnz" = 2088

for ext in mtx mtx.gz bin; do
    expect 0 gen "$spec" -o "$TMP/g.$ext"
    check "gen wrote g.$ext" test -s "$TMP/g.$ext"
    expect 0 info "$TMP/g.$ext" --json
    check "info g.$ext nnz" test "$(json_get nnz)" = "$nnz"
    check "info g.$ext rows" test "$(json_get rows)" = 300
done
check ".mtx.gz is gzip" sh -c "gzip -t '$TMP/g.mtx.gz'"

# mtx -> bin -> mtx.gz -> mtx: the text is identical to the original
expect 0 convert "$TMP/g.mtx" "$TMP/c.bin"
expect 0 convert "$TMP/c.bin" "$TMP/c.mtx.gz"
expect 0 convert "$TMP/c.mtx.gz" "$TMP/c.mtx"
check "mtx -> bin -> mtx.gz -> mtx is exact" cmp -s "$TMP/g.mtx" "$TMP/c.mtx"
check "gen .bin equals converted .bin" cmp -s "$TMP/g.bin" "$TMP/c.bin"
expect 0 info "$TMP/c.mtx" --json
check "converted nnz" test "$(json_get nnz)" = "$nnz"

# a shipped real matrix (symmetric expansion etc. is the reader's business)
data="$(dirname "$0")/../../data/orsreg_1.mtx"
if [ -f "$data" ]; then
    expect 0 convert "$data" "$TMP/o.bin"
    expect 0 info "$TMP/o.bin" --json
    check "orsreg_1 nnz through .bin" test "$(json_get nnz)" = 14133
fi
finish
