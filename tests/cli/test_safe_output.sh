# test_safe_output.sh -- outputs are written safely: a failed or killed
# write (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ) leaves the old
# file as it was and no temporary (".NAME.XXXXXX") in its folder; `adia
# convert F F` keeps F; permissions are kept.
. "$(dirname "$0")/lib.sh"

MNT=$TMP/full
trap 'umount "$MNT" 2>/dev/null; rm -rf "$TMP"' EXIT

# no_temporaries DIR: DIR holds no dot file (the temporaries' names)
no_temporaries() { [ -z "$(ls -A "$1" | grep '^\.')" ]; }
# same_file A B: byte-identical
same_file() { cmp -s "$1" "$2"; }

# ---------------------------------------------- convert F F keeps F
mkdir "$TMP/same"
for ext in mtx mtx.gz bin; do
    f=$TMP/same/m.$ext
    expect 0 gen band:400,2,seed=3 -o "$f"
    cp "$f" "$TMP/m.$ext.orig"
    expect 0 convert "$f" "$f"
    check "convert $ext onto itself keeps the content" same_file "$f" "$TMP/m.$ext.orig"
    expect 0 info "$f" --json
    check "convert $ext onto itself: still readable" stdout_has '"nnz":1994,'
done
check "convert onto itself leaves no temporary" no_temporaries "$TMP/same"

# ---------------------------------------------- permissions
f=$TMP/same/m.mtx
chmod 640 "$f"
expect 0 gen band:50,1 -o "$f"
check "a replaced file keeps its permissions" test "$(stat -c %a "$f")" = 640
(umask 027 && "$TOOL" gen band:50,1 -o "$TMP/same/new.mtx" >/dev/null)
check "a new file gets 0666 less the umask" test "$(stat -c %a "$TMP/same/new.mtx")" = 640

# ---------------------------------------------- out of space
# full_case DIR RUNNER WHY: an old output in DIR survives `adia gen -o` and
# `adia convert` that run out of space (RUNNER runs the tool in the limited
# setting); exit 1, the message names the file and WHY, no temporary.
full_case() {
    local dir=$1 runner=$2 why=$3 out=$1/out.mtx
    "$TOOL" gen band:20,1 -o "$out" >/dev/null
    cp "$out" "$TMP/out.orig"
    "$runner" gen lap2d5:200 -o "$out" >"$OUT" 2>"$ERR"
    check "$why: gen -o exits 1" test $? -eq 1
    check "$why: gen -o names the file" stderr_has "writing $out: $why"
    "$runner" convert "$TMP/big.mtx" "$out" >"$OUT" 2>"$ERR"
    check "$why: convert exits 1" test $? -eq 1
    check "$why: convert names the file" stderr_has "writing $out: $why"
    check "$why: the old output survives" same_file "$out" "$TMP/out.orig"
    # the output as input too: convert F F that runs out of space keeps F
    cp "$TMP/big.mtx" "$dir/big.mtx" 2>/dev/null && {
        "$runner" convert "$dir/big.mtx" "$dir/big.mtx" >"$OUT" 2>"$ERR"
        check "$why: convert F F exits 1" test $? -eq 1
        check "$why: convert F F keeps F" same_file "$dir/big.mtx" "$TMP/big.mtx"
    }
    check "$why: no temporary left" no_temporaries "$dir"
}
expect 0 gen lap2d5:200 -o "$TMP/big.mtx"   # about 4 MB of text

# A real full file system where mounting is permitted (root in CI).
mkdir "$MNT"
if mount -t tmpfs -o size=256k tmpfs "$MNT" 2>/dev/null; then
    plain() { "$TOOL" "$@"; }
    full_case "$MNT" plain "No space left on device"
else
    echo "note: cannot mount a tmpfs here; the file-size limit case still runs"
fi

# Everywhere: a file-size limit (RLIMIT_FSIZE); with SIGXFSZ ignored a write
# past it fails with EFBIG.  64 KiB lets big.mtx be copied in only by cp
# running outside the limit.
limited() { (trap '' XFSZ; ulimit -f 64; exec "$TOOL" "$@"); }
mkdir "$TMP/lim"
full_case "$TMP/lim" limited "File too large"

# ---------------------------------------------- killed while writing
# kill_case SIGNAL: SIGNAL while the temporary is being written: the tool
# dies of that signal, removes the temporary, and F keeps its old content.
# If the tool was too quick to be caught, F must be the complete new matrix
# instead.  Job control on while starting it: a background job of a script
# would otherwise begin with SIGINT and SIGQUIT ignored.
kill_case() {
    local sig=$1 dir=$TMP/kill-$1 rc pid
    local f=$dir/F.mtx.gz
    mkdir "$dir"
    echo "old content" >"$f"
    cp "$f" "$TMP/F.orig"
    set -m
    (ulimit -c 0; exec "$TOOL" gen lap2d5:1000 -o "$f") >/dev/null 2>&1 &
    pid=$!
    set +m
    for _ in $(seq 600); do   # up to 30 s for the generator to start writing
        # writing has begun: a temporary appeared (or F itself changed)
        [ -n "$(ls -A "$dir" | grep '^\.')" ] && break
        same_file "$f" "$TMP/F.orig" || break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null   # no "Hangup" line from the shell
    rc=$?
    if [ "$rc" -eq $((128 + $(kill -l "$sig"))) ]; then
        check "SIG$sig: exit status says SIG$sig" true
        check "SIG$sig: F keeps its old content" same_file "$f" "$TMP/F.orig"
    else
        echo "note: gen finished before SIG$sig (exit $rc)"
        check "SIG$sig: finished: exit 0" test "$rc" -eq 0
        expect 0 info "$f" --json
        check "SIG$sig: finished: F is the complete new matrix" stdout_has '"nnz":4996000,'
    fi
    check "SIG$sig: no temporary left" no_temporaries "$dir"
}
for sig in TERM INT HUP QUIT PIPE; do kill_case "$sig"; done

# SIGXFSZ, not ignored: the write past the file-size limit raises it; the
# tool dies of it (no "File too large" to report), and still the temporary
# goes and the old output stays.  No core file (the default action's).
mkdir "$TMP/xfsz"
"$TOOL" gen band:20,1 -o "$TMP/xfsz/out.mtx" >/dev/null
cp "$TMP/xfsz/out.mtx" "$TMP/xfsz.orig"
{ (trap - XFSZ; ulimit -c 0; ulimit -f 64; exec "$TOOL" gen lap2d5:200 -o "$TMP/xfsz/out.mtx") \
    >/dev/null 2>&1; } 2>/dev/null
rc=$?
check "SIGXFSZ: the tool dies of it (exit $rc)" test "$rc" -eq $((128 + $(kill -l XFSZ)))
check "SIGXFSZ: the old output survives" same_file "$TMP/xfsz/out.mtx" "$TMP/xfsz.orig"
check "SIGXFSZ: no temporary left" no_temporaries "$TMP/xfsz"
finish
