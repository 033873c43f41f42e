# test_spmm.sh -- `adia spmm`: diagonal products run; a product whose
# diagonals would be mostly zeros (unstructured operands) is refused before
# any work with the predicted size and density, unless --allow-fill.
. "$(dirname "$0")/lib.sh"

expect 0 spmm --gen-a lap2d5:20 --gen-b lap2d5:20
check "reports C's entries and bound" stdout_has "at most"

expect 1 spmm --gen-a random:400,3 --gen-b random:400,3
check "refusal names the stored entries" stderr_has "would store"
check "refusal names the density" stderr_has "density of the diagonals at most"
check "refusal names the way out" stderr_has "--allow-fill"
expect 1 spmm --gen-a random:400,3 --gen-b random:400,3 -o "$TMP/c.mtx"
check "nothing written when refused" test ! -e "$TMP/c.mtx"

expect 0 spmm --gen-a random:400,3 --gen-b random:400,3 --allow-fill -o "$TMP/c.mtx"
check "--allow-fill runs the product" test -s "$TMP/c.mtx"

if command -v python3 >/dev/null; then
    expect 0 spmm --gen-a random:400,3 --gen-b random:400,3 --allow-fill --json
    check "JSON has nnz and its bound" json_keys nnz nnz_bound
    nnz=$(json_get nnz)
    bound=$(json_get nnz_bound)
    check "stored entries far above the bound" test "$nnz" -gt $((4 * bound))
fi
finish
