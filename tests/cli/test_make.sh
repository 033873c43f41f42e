# test_make.sh -- `make demo` builds the tool alone and says little (issue
# 27, item 10): run against a stand-in cmake that records its calls and
# prints what a real build prints (40 configure lines, 200 build lines), it
# configures, builds only the CMake target adia_cli, prints at most 30
# lines with the demo's output, keeps the whole log in BUILD/build.log,
# and on a failed build shows the end of that log and fails; `make test`
# still builds every target and runs ctest; `make -n demo` installs only
# the required packages.
. "$(dirname "$0")/lib.sh"
command -v make >/dev/null || { echo "SKIPPED: no make"; exit 77; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$TMP/bin"
cat >"$TMP/bin/cmake" <<'SH'
#!/bin/sh
echo "cmake $*" >>"$CALLS"
case "$1" in
-S) mkdir -p "$4" && : >"$4/CMakeCache.txt"
    i=0; while [ $i -lt 40 ]; do echo "-- configure line $i"; i=$((i + 1)); done
    echo "-- adia: CUDA parts ON"
    echo "-- adia: MPI parts (adia_mpi) ON"
    echo "-- adia: librsb for bench_cpu_spmv: ADIA_RSB_LIB-NOTFOUND" ;;
--build)
    i=0; while [ $i -le 99 ]; do
        printf '[%3d%%] Building C object CMakeFiles/x.dir/src/f%d.c.o\n' $i $i
        echo "some compiler remark $i"; i=$((i + 1)); done
    if [ -n "${FAIL:-}" ]; then echo "src/f99.c:1: error: broken"; exit 2; fi
    echo "[100%] Built target adia_cli"
    printf '#!/bin/sh\ni=1; while [ $i -le 8 ]; do echo "demo line $i"; i=$((i + 1)); done\n' >"$2/adia"
    chmod +x "$2/adia" ;;
esac
SH
printf '#!/bin/sh\necho "ctest $*" >>"$CALLS"\n' >"$TMP/bin/ctest"
chmod +x "$TMP/bin/cmake" "$TMP/bin/ctest"
export CALLS=$TMP/calls
mk() { PATH=$TMP/bin:$PATH make --no-print-directory -C "$ROOT" DEPS=true "$@"; }

: >"$CALLS"
mk demo BUILD="$TMP/b" >"$OUT" 2>"$ERR"
rc=$?
check "make demo: exit 0 (got $rc; $(tail -c 300 "$ERR"))" test "$rc" = 0
check "make demo: configured once" test "$(grep -c '^cmake -S' "$CALLS")" = 1
check "make demo: built the target adia_cli" grep -qE "^cmake --build $TMP/b --target adia_cli( |$)" "$CALLS"
check "make demo: built nothing else" test "$(grep -c '^cmake --build' "$CALLS")" = 1
check "make demo: at most 30 lines ($(cat "$OUT" "$ERR" | wc -l))" test "$(cat "$OUT" "$ERR" | wc -l)" -le 30
check "make demo: the demo's output" test "$(grep -c '^demo line' "$OUT")" = 8
check "make demo: what was found" stdout_has "CUDA parts ON"
check "make demo: progress to 100%" stdout_has "[100%]"
check "make demo: not the compiler's chatter" sh -c "! grep -q 'compiler remark' '$OUT'"
check "make demo: the whole log kept" test "$(grep -c 'compiler remark' "$TMP/b/build.log")" = 100
check "make demo: the configure log kept" test "$(grep -c 'configure line' "$TMP/b/configure.log")" = 40
# again: configured already, built again (make decides nothing itself)
: >"$CALLS"
mk demo BUILD="$TMP/b" >"$OUT" 2>"$ERR"
check "make demo again: not configured again" sh -c "! grep -q '^cmake -S' '$CALLS'"

# a failed build: the end of the log, exit non-zero, no demo
rm -rf "$TMP/c"
FAIL=1 mk demo BUILD="$TMP/c" >"$OUT" 2>"$ERR"
rc=$?
check "make demo, build fails: exit non-zero" test "$rc" != 0
check "make demo, build fails: the error shown" stdout_has "error: broken"
check "make demo, build fails: says so" stdout_has "build failed"
check "make demo, build fails: no demo run" sh -c "! grep -q '^demo line' '$OUT'"

# make test: every target, then ctest
: >"$CALLS"
mk test BUILD="$TMP/d" >"$OUT" 2>"$ERR"
check "make test: built everything" grep -qE "^cmake --build $TMP/d -j" "$CALLS"
check "make test: no --target" sh -c "! grep -q -- '--target' '$CALLS'"
check "make test: ran ctest" grep -q "^ctest --test-dir $TMP/d" "$CALLS"

# the packages: make demo asks only for the required ones, make test for all
PATH=$TMP/bin:$PATH make --no-print-directory -C "$ROOT" -n demo BUILD="$TMP/e" >"$OUT" 2>&1
check "make -n demo: install-deps.sh --required" stdout_has "install-deps.sh --required"
PATH=$TMP/bin:$PATH make --no-print-directory -C "$ROOT" -n test BUILD="$TMP/e" >"$OUT" 2>&1
check "make -n test: install-deps.sh, everything" grep -qE 'install-deps.sh *$' "$OUT"
finish
