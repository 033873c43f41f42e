# test_newuser.sh -- what a new user reads first (issue 27, item 9): `adia
# --help` names every solve method and docs/cli.md lists the commands as the
# tool does; counts of one are singular ("after 1 iteration", "over 1 run");
# a long solve draws a progress line on a terminal's stderr and nothing on a
# pipe.  (convert's header comments: test_convert_comments.sh.)
. "$(dirname "$0")/lib.sh"
need_python
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# --help: the solve line names CG, BiCGSTAB and GMRES
expect 0 --help
check "--help: solve names GMRES" grep -qE '^  solve .*CG, BiCGSTAB or GMRES' "$OUT"
# docs/cli.md's command list is the tool's, line for line
sed -n '/^commands:$/,/^```$/p' "$ROOT/docs/cli.md" | sed '1d;$d' >"$TMP/doc-commands"
sed -n '/^commands:$/,$p' "$OUT" | sed '1d' >"$TMP/tool-commands"
check "docs/cli.md lists the commands as adia --help does" cmp -s "$TMP/doc-commands" "$TMP/tool-commands"

# singular counts
expect 0 solve --gen lap2d5:1 --device cpu
check "solve: 'after 1 iteration:'" stdout_has "after 1 iteration:"
check "solve: no '1 iterations'" sh -c "! grep -q ' 1 iterations' '$OUT'"
check "solve: no '1 nonzeros'" sh -c "! grep -q ' 1 nonzeros' '$OUT'"
"$TOOL" gen lap2d5:4 -o "$TMP/A.mtx" >/dev/null
expect 0 spmv "$TMP/A.mtx" -o "$TMP/y.mtx" --device cpu
check "spmv: 'over 20 runs'" stdout_has "over 20 runs,"
expect 0 spmv "$TMP/A.mtx" -x "$TMP/y.mtx" --device cpu
check "spmv -x: 'over 1 run,'" stdout_has "over 1 run,"
expect 1 solve "$TMP/A.mtx" -b "$TMP/y.mtx" --max-iter 1 --device cpu
check "solve --max-iter 1: 'after 1 iteration:'" stdout_has "iteration limit reached after 1 iteration:"
printf '%%%%MatrixMarket matrix array real general\n1 1\n1\n' >"$TMP/one.mtx"
expect 1 solve "$TMP/A.mtx" -b "$TMP/one.mtx"
check "a one-entry b: 'has 1 entry'" stderr_has "has 1 entry, the matrix needs 16"

# progress: a solve of a few seconds draws "solving (gmres, ...)" on a
# terminal's stderr (a pseudo-terminal here) and erases it; nothing when
# stderr is a file.
cat >"$TMP/pty.py" <<'PY'
import os, subprocess, sys
out, err = sys.argv[1], sys.argv[2]
master, slave = os.openpty()
with open(out, "w") as o:
    p = subprocess.Popen(sys.argv[3:], stdout=o, stderr=slave, stdin=subprocess.DEVNULL)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:   # EIO: the terminal's other side is closed
        break
    if not chunk:
        break
    data += chunk
p.wait()
open(err, "wb").write(data)
sys.exit(p.returncode)
PY
long_solve="solve --gen lap2d5:250 --method gmres --max-iter 2000 --format dia --device cpu"
OMP_NUM_THREADS=1 python3 "$TMP/pty.py" "$OUT" "$ERR" "$TOOL" $long_solve
rc=$?
check "long solve on a terminal: exit 1 (iteration limit)" test "$rc" = 1
check "long solve on a terminal: a progress line" grep -q 'solving (gmres, at most 2000 iterations) \[' "$ERR"
check "long solve on a terminal: the line counts seconds" grep -qE 'solving \(gmres[^]]*\] [1-9][0-9]*s' "$ERR"
check "long solve on a terminal: the report on stdout" stdout_has "iteration limit reached after 2000 iterations"
OMP_NUM_THREADS=1 "$TOOL" $long_solve >"$OUT" 2>"$ERR"
check "long solve, stderr a file: no progress line" sh -c "! grep -q 'solving' '$ERR'"
check "long solve, stderr a file: the reason only" test "$(wc -l <"$ERR")" = 1
finish
