# test_read_input.sh -- input from anywhere: "-" (standard input), a FIFO,
# process substitution, gzip and binary data through a pipe (detected by
# content, the stream read once), and the messages for a directory and a
# missing file.
. "$(dirname "$0")/lib.sh"
need_python

expect 0 gen "band:200,2,seed=3" -o "$TMP/m.mtx"
expect 0 info "$TMP/m.mtx" --json
nnz=$(json_get nnz)
check "the reference has nonzeros" test "${nnz:-0}" -gt 0
expect 0 gen "band:200,2,seed=3" -o "$TMP/m.mtx.gz"
expect 0 gen "band:200,2,seed=3" -o "$TMP/m.bin"

# same_nnz DESC: the last run succeeded with the reference's nonzeros
same_nnz() { check "$1" test "$(json_get nnz)" = "$nnz"; }

"$TOOL" info - --json <"$TMP/m.mtx" >"$OUT" 2>"$ERR"
check "info - < m.mtx exits 0" test $? -eq 0
same_nnz "stdin: text"
cat "$TMP/m.mtx.gz" | "$TOOL" info - --json >"$OUT" 2>"$ERR"
check "gzip through a pipe exits 0" test $? -eq 0
same_nnz "stdin: gzip by content"
cat "$TMP/m.bin" | "$TOOL" info - --json >"$OUT" 2>"$ERR"
check "binary through a pipe exits 0" test $? -eq 0
same_nnz "stdin: binary by content"

mkfifo "$TMP/fifo"
cat "$TMP/m.mtx.gz" >"$TMP/fifo" &
expect 0 info "$TMP/fifo" --json
wait
same_nnz "FIFO"
expect 0 info <(cat "$TMP/m.mtx") --json
same_nnz "process substitution"

expect 1 info "$TMP"
check "a directory is named as one" stderr_has "$TMP: is a directory"
# a binary matrix with a wrong magic number is named as one, not as a
# Matrix Market file missing its banner
"$TOOL" gen lap2d5:3 -o "$TMP/m.bin" >/dev/null
printf 'ADIABIN2' | dd of="$TMP/m.bin" conv=notrunc 2>/dev/null
expect 1 info "$TMP/m.bin"
check "a wrong binary magic is named" stderr_has "not an adia binary file of this version: magic number 'ADIABIN2'"
check "not as a missing banner" test -z "$(grep banner "$ERR")"
expect 1 info "$TMP/none.mtx"
check "a missing file says so" stderr_has "No such file or directory"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n' | "$TOOL" info - >"$OUT" 2>"$ERR"
check "truncated stdin fails" test $? -ne 0
check "truncated stdin names the line" stderr_has "<stdin>:3: file ends after 1 of 2 entries"
finish
