# test_spgemm.sh -- `adia spgemm` (alias `adia spmm`): diagonal products
# run; a product whose
# diagonals would be mostly zeros (unstructured operands) is refused before
# any work with the predicted size and density, unless --allow-fill; the
# memory budget (--memory) holds for products, checked before any work.
. "$(dirname "$0")/lib.sh"

expect 0 spgemm --gen-a lap2d5:20 --gen-b lap2d5:20
check "reports C's entries and bound" stdout_has "at most"

expect 1 spgemm --gen-a random:400,3 --gen-b random:400,3
check "refusal names the stored entries" stderr_has "would store"
check "refusal names the density" stderr_has "density of the diagonals at most"
check "refusal names the way out" stderr_has "--allow-fill"
expect 1 spgemm --gen-a random:400,3 --gen-b random:400,3 -o "$TMP/c.mtx"
check "nothing written when refused" test ! -e "$TMP/c.mtx"

expect 0 spgemm --gen-a random:400,3 --gen-b random:400,3 --allow-fill -o "$TMP/c.mtx"
check "--allow-fill runs the product" test -s "$TMP/c.mtx"

# the one budget: --memory refuses a product whose predicted peak exceeds it
expect 1 spgemm --gen-a lap2d5:200 --gen-b lap2d5:200 --memory 5M
check "refusal names the peak and the budget" stderr_has "needs 18.0 MB, budget 5.0 MB"
expect 0 spgemm --gen-a lap2d5:200 --gen-b lap2d5:200 --memory 40M
check "the peak it reports fits the budget" stdout_has "peak memory 18.0 MB"

# 10^9 pairs (powerlaw squared): refused by the fill check before the pair
# list is built -- fast, in small memory (it took 34 s and 8.4 GB)
start=$(date +%s%N)
expect 1 spgemm --gen-a powerlaw:20000,2,500 --gen-b powerlaw:20000,2,500 --transpose-a --memory 200M
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "powerlaw squared: the fill refusal" stderr_has "the product is not diagonal"
check "powerlaw squared refused in ${ms} ms (< 3000)" test "$ms" -lt 3000
expect 1 spgemm --gen-a powerlaw:20000,2,500 --gen-b powerlaw:20000,2,500 --allow-fill --memory 2G
check "with --allow-fill the budget refuses, counting the pairs" stderr_has "1075954827 pairs) needs 22.9 GB"

if command -v python3 >/dev/null; then
    expect 0 spgemm --gen-a random:400,3 --gen-b random:400,3 --allow-fill --json
    check "JSON has nnz and its bound" json_keys nnz nnz_bound
    nnz=$(json_get nnz)
    bound=$(json_get nnz_bound)
    check "stored entries far above the bound" test "$nnz" -gt $((4 * bound))
fi
# `spmm` is the old name: the same command, listed once under spgemm
expect 0 --help
check "--help lists spgemm and names its alias" grep -qE '^  spgemm .*alias: spmm' "$OUT"
check "--help has no line of its own for spmm" sh -c "! grep -qE '^  spmm ' '$OUT'"
expect 0 spmm --help
cp "$OUT" "$TMP/alias-help"
expect 0 spgemm --help
check "spmm --help is spgemm's" cmp -s "$TMP/alias-help" "$OUT"
expect 0 spmm --gen-a lap2d5:20 --gen-b lap2d5:20
check "spmm runs the product" stdout_has "at most"
finish
