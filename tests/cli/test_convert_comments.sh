# test_convert_comments.sh -- `adia convert` keeps the header comments of a
# Matrix Market input (issue 27, item 9): in order, as written from their
# '%', into .mtx and .mtx.gz, for convert F F and from standard input, with
# one "% written by adia" line however often a file is converted, and a
# header of more than 64 KiB of comments kept up to that with a line saying
# the rest was left out.
. "$(dirname "$0")/lib.sh"
need_python

cat >"$TMP/c.mtx" <<'EOF'
%%MatrixMarket matrix coordinate real symmetric
%-------------------------------------------------
% name: test/c
   % an indented comment, 100% kept

% written by adia 0.0.1
%-------------------------------------------------
3 3 3
1 1 4
2 1 -1
3 3 4
EOF
comments() { grep '^%' "$1" | grep -v '^%%MatrixMarket' | grep -v '^% written by adia'; }
expected=$(printf '%s\n' '%-------------------------------------------------' '% name: test/c' \
           '% an indented comment, 100% kept' '%-------------------------------------------------')
expect 0 convert "$TMP/c.mtx" "$TMP/d.mtx"
check "convert F G: the comments, in order" test "$(comments "$TMP/d.mtx")" = "$expected"
check "convert F G: one 'written by' line" test "$(grep -c '^% written by adia' "$TMP/d.mtx")" = 1
check "convert F G: the banner first" sh -c "head -1 '$TMP/d.mtx' | grep -q '^%%MatrixMarket matrix coordinate real general$'"
check "convert F G: 4 entries (symmetric expanded)" sh -c "grep -q '^3 3 4$' '$TMP/d.mtx'"
expect 0 convert "$TMP/d.mtx" "$TMP/d.mtx"
check "convert F F: the comments kept" test "$(comments "$TMP/d.mtx")" = "$expected"
check "convert F F: still one 'written by' line" test "$(grep -c '^% written by adia' "$TMP/d.mtx")" = 1
expect 0 convert "$TMP/d.mtx" "$TMP/e.mtx.gz"
check "convert F G.gz: the comments kept" sh -c "gzip -dc '$TMP/e.mtx.gz' >'$TMP/e.mtx'"
check "convert F G.gz: the same comments" test "$(comments "$TMP/e.mtx")" = "$expected"
# from standard input too
"$TOOL" convert - "$TMP/f.mtx" <"$TMP/c.mtx" >/dev/null 2>&1
check "convert - G: the comments kept" test "$(comments "$TMP/f.mtx")" = "$expected"
# a header of more than 64 KiB of comments is kept up to that, then said
python3 - "$TMP/big.mtx" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("%%MatrixMarket matrix coordinate real general\n")
    f.writelines("%% comment line %d %s\n" % (i, "x" * 60) for i in range(2000))
    f.write("1 1 1\n1 1 2\n")
PY
expect 0 convert "$TMP/big.mtx" "$TMP/big2.mtx"
check "a huge header: at most 64 KiB of it kept" test "$(grep '^%' "$TMP/big2.mtx" | wc -c)" -le 66000
check "a huge header: its first line kept" grep -q '^% comment line 0 ' "$TMP/big2.mtx"
check "a huge header: the cut said" grep -q '^% (further header comments of the input left out)$' "$TMP/big2.mtx"
expect 0 info "$TMP/big2.mtx"

finish
