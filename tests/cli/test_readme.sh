# test_readme.sh -- the README's first task runs as written (issue 27, item
# 9): every "$ adia ..." line of the block under "A first real task", in
# that order, in an empty folder, with adia = the tool under test; each
# succeeds and prints what the README shows it printing (its first words),
# and the files it names appear.  The tool path the README names is the one
# `make demo` builds, and the MPI example says what root needs.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
README=$ROOT/README.md
TOOL=$(cd "$(dirname "$TOOL")" && pwd)/$(basename "$TOOL")   # run from another folder

# the first fenced block after the heading
awk '/^## A first real task/ { f = 1; next }
     f && /^```/ { n++; if (n == 2) exit; next }
     f && n == 1' "$README" >"$TMP/block"
check "README: the first task's block found" test -s "$TMP/block"
sed -n 's/^\$ adia //p' "$TMP/block" | sed 's/ *#.*$//' >"$TMP/commands"
check "README: the first task has commands" test "$(wc -l <"$TMP/commands")" -ge 3

mkdir "$TMP/task"
i=0
while IFS= read -r args; do
    i=$((i + 1))
    # what the README shows this command printing: the next line of the block
    shown=$(awk -v want="$i" '/^\$ adia / { k++; if (k == want) { getline; print; exit } }' "$TMP/block")
    # shellcheck disable=SC2086  # the README's words, split as a shell would
    (cd "$TMP/task" && eval "\"\$TOOL\" $args") >"$OUT" 2>"$ERR"
    rc=$?
    check "README task: adia $args -> exit 0 (got $rc: $(head -c 300 "$ERR"))" test "$rc" = 0
    first=$(printf '%s\n' "$shown" | cut -d: -f1)
    check "README task: adia $args prints '$first: ...' as shown" stdout_has "$first:"
done <"$TMP/commands"
for f in $(grep -o -- '-o [^ ]*' "$TMP/commands" | cut -d' ' -f2); do
    check "README task: $f written" test -s "$TMP/task/$f"
done
check "README task: the solve converged" grep -q "converged after" "$TMP/block"

# the tool path: build/adia, as make demo builds it (BUILD ?= build)
check "Makefile: BUILD defaults to build" grep -qE '^BUILD \?= build$' "$ROOT/Makefile"
check "README: adia = build/adia" grep -qF '(`adia` = `build/adia`, what `make demo` builds' "$README"
check "README: no build-cpu/adia as the task's tool" sh -c "! grep -qF '(\`adia\` = \`build-cpu/adia\`)' '$README'"
# the MPI example: root needs --allow-run-as-root
check "README: mpirun as root needs --allow-run-as-root" grep -qF -- "--allow-run-as-root" "$README"
finish
