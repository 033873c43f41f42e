# test_demo.sh -- `adia demo` runs, checks every product and picks the
# paper's type for each generated matrix (I, II, III).
. "$(dirname "$0")/lib.sh"

expect 0 demo
check "demo prints the table header" stdout_has "t_csr"
check "lap2d5 is type I" grep -qE '^lap2d5:512 +[0-9]+ +[0-9]+ +I ' "$OUT"
check "type2 is type II" grep -qE '^type2:[0-9]+ +[0-9]+ +[0-9]+ +II ' "$OUT"
check "type3 is type III" grep -qE '^type3:[0-9,.]+ +[0-9]+ +[0-9]+ +III ' "$OUT"
check "real matrices are in the table" grep -qE '^(orsreg_1|watt__1)' "$OUT"
check "no row failed" sh -c "! grep -q error '$OUT'"
finish
