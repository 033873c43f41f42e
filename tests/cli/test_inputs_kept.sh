# test_inputs_kept.sh -- an output that names an input is refused before
# any work (exit 2, both named, the input untouched), whatever the name: the
# same path, "./" in front, a symbolic link, a hard link (same device and
# inode); standard input is given to one input at most; spy, spmm and bench
# check their output's suffix as the other commands do.  `convert F F`
# stays allowed: it rewrites the same matrix (README, test_safe_output.sh).
. "$(dirname "$0")/lib.sh"

TOOL=$(cd "$(dirname "$TOOL")" && pwd)/$(basename "$TOOL")   # absolute: the test runs in $TMP
cd "$TMP" || exit 1
"$TOOL" gen lap2d5:6 -o A.mtx >/dev/null
"$TOOL" spmv A.mtx -o b.mtx >/dev/null   # a 36-entry vector
cp A.mtx A.orig
cp b.mtx b.orig
ln -s A.mtx link.mtx
ln A.mtx hard.mtx
same_file() { cmp -s "$1" "$2"; }
# refused CODE DESC ARGS...: exit CODE, "the same file" named, A and b kept
refused() {
    local desc=$1; shift
    expect 2 "$@"
    check "$desc: the message says the same file" stderr_has "(the same file)"
    check "$desc: the matrix is untouched" same_file A.mtx A.orig
    check "$desc: the vector is untouched" same_file b.mtx b.orig
}

# ------------------------------------------ outputs that are inputs
refused "spmv -o FILE" spmv A.mtx -o A.mtx
check "spmv: both arguments named" stderr_has "output -o 'A.mtx' is the input FILE 'A.mtx'"
refused "spmv -o ./FILE" spmv A.mtx -o ./A.mtx
refused "spmv -o symlink" spmv A.mtx -o link.mtx
refused "spmv -o hard link" spmv A.mtx -o hard.mtx
refused "spmv -o X" spmv A.mtx -x b.mtx -o b.mtx
check "spmv: -x named" stderr_has "is the input -x 'b.mtx'"
refused "spmv --gen -o X" spmv --gen lap2d5:6 -x b.mtx -o b.mtx
refused "solve -o FILE" solve A.mtx -o A.mtx
refused "solve -o B" solve A.mtx -b b.mtx -o b.mtx
check "solve: -b named" stderr_has "is the input -b 'b.mtx'"
refused "solve -o X0" solve A.mtx --x0 b.mtx -o b.mtx
check "solve: --x0 named" stderr_has "is the input --x0 'b.mtx'"
refused "spmm -o A" spmm A.mtx A.mtx -o A.mtx
refused "spmm --gen-a -o B" spmm --gen-a lap2d5:6 A.mtx -o hard.mtx
check "spmm: B named" stderr_has "is the input B 'A.mtx'"
ln -s A.mtx pic.png
refused "spy -o symlink to FILE" spy A.mtx -o pic.png
refused "bench --plot FILE" bench A.mtx --plot pic.png
refused "bench --json-append FILE" bench A.mtx --json-append A.mtx
expect 2 bench A.mtx --plot out.png --json-append out.png
check "bench: two outputs in one file refused" stderr_has "are the same file"

# the same names, other files: allowed
expect 0 spmv A.mtx -x b.mtx -o y.mtx
check "spmv into another file" test -s y.mtx
expect 0 solve A.mtx -b b.mtx -o x.mtx
check "solve into another file" test -s x.mtx
expect 0 spy A.mtx -o A.png
check "spy into another file" test -s A.png
# convert F F rewrites the same matrix (documented as safe)
expect 0 convert A.mtx A.mtx
expect 0 info A.mtx --json
check "convert F F keeps the matrix" stdout_has '"nnz":156,'

# ------------------------------------------ standard input once
for args in "spmv - -x -" "solve - -b -" "solve --gen lap2d5:6 -b - --x0 -" "spmm - -"; do
    expect 2 $args </dev/null
    check "$args: standard input twice is named" stderr_has "standard input ('-') is given for both"
done
"$TOOL" spmv - -x b.mtx --json <A.mtx >"$OUT" 2>"$ERR"
check "one input from standard input works" test $? -eq 0

# ------------------------------------------ output suffixes
expect 2 spy A.mtx -o A.txt
check "spy: bad suffix named" stderr_has "'A.txt': a picture's name must end in .png"
check "spy: nothing written for a bad suffix" test ! -e A.txt
expect 2 spy A.mtx -o out.mtx
check "spy: a matrix name is no picture" test ! -e out.mtx
expect 2 spmm A.mtx A.mtx -o C.txt
check "spmm: bad suffix named" stderr_has "C.txt"
check "spmm: nothing written for a bad suffix" test ! -e C.txt
expect 2 bench A.mtx --plot plot.txt
check "bench: bad --plot suffix named" stderr_has "plot.txt"
expect 0 spmm A.mtx A.mtx -o C.bin
expect 0 info C.bin --json
check "spmm -o C.bin writes the binary format" stdout_has '"rows":36,'
finish
