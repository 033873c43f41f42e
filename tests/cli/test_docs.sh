# test_docs.sh -- docs/cli.md shows the tool as it is: the command list of
# `adia --help` and, under each "### adia COMMAND", the text `adia COMMAND
# --help` prints, line for line.
. "$(dirname "$0")/lib.sh"
need_python
DOC=$(dirname "$0")/../../docs/cli.md
[ -f "$DOC" ] || { echo "SKIPPED: $DOC not found"; exit 77; }

python3 - "$TOOL" "$DOC" >"$OUT" 2>&1 <<'EOF'
import difflib, re, subprocess, sys
tool, doc = sys.argv[1], open(sys.argv[2]).read()
bad = 0
def compare(what, documented, printed):
    global bad
    if documented.strip() == printed.strip():
        print("ok", what)
        return
    bad += 1
    print("DIFFERS", what)
    for line in difflib.unified_diff(documented.strip().splitlines(), printed.strip().splitlines(),
                                     "docs/cli.md", "the tool", lineterm="", n=0):
        print("   ", line)
helped = subprocess.run([tool, "--help"], capture_output=True, text=True).stdout
listed = re.search(r"```\ncommands:\n(.*?)```", doc, re.S)
compare("adia --help commands", listed.group(1) if listed else "", helped.split("commands:\n")[-1])
commands = [l.split()[0] for l in helped.split("commands:\n")[-1].splitlines() if l.strip()]
for cmd in commands:
    block = re.search(r"### adia %s\n\n```\n(.*?)```" % re.escape(cmd), doc, re.S)
    printed = subprocess.run([tool, cmd, "--help"], capture_output=True, text=True).stdout
    compare("adia %s --help" % cmd, block.group(1) if block else "(no section)", printed)
sys.exit(1 if bad else 0)
EOF
rc=$?
cat "$OUT"
check "docs/cli.md shows every --help as the tool prints it" test "$rc" -eq 0
finish
