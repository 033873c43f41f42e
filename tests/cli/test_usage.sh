# test_usage.sh -- usage errors exit 2 with a message, --help exits 0,
# malformed files exit 1 naming file and line.
. "$(dirname "$0")/lib.sh"

expect 2
expect 2 no-such-command
check "unknown command is named" stderr_has "no-such-command"
expect 0 --help
check "--help lists demo" stdout_has "demo"

# --help on every subcommand that `adia --help` lists
commands=$("$TOOL" --help | sed -n '/^commands:/,$p' | awk 'NR > 1 {print $1}')
check "--help lists commands" test -n "$commands"
for c in $commands; do
    expect 0 "$c" --help
    check "$c --help prints usage" stdout_has "usage"
    expect 2 "$c" --no-such-option
    check "$c: unknown option is named" stderr_has "--no-such-option"
done

# missing input files: exit 1 (a failed operation, as a malformed file is;
# only wrong arguments are usage errors), the message names the path --
# the matrix of every command and the vectors alike
for c in info spmv solve codegen "spy -o $TMP/p.png"; do
    expect 1 $c "$TMP/missing.mtx"
    check "$c names the missing file" stderr_has "$TMP/missing.mtx"
done
expect 1 convert "$TMP/missing.mtx" "$TMP/out.mtx"
check "convert names the missing file" stderr_has "$TMP/missing.mtx"
check "convert: nothing written for a missing input" test ! -e "$TMP/out.mtx"
expect 1 spmm "$TMP/missing.mtx" --gen-b lap2d5:4
check "spmm names the missing file" stderr_has "$TMP/missing.mtx"
expect 1 spmv --gen lap2d5:4 -x "$TMP/missing.mtx"
check "spmv names the missing x" stderr_has "$TMP/missing.mtx"
expect 1 solve --gen lap2d5:4 -b "$TMP/missing.mtx"
check "solve names the missing b" stderr_has "$TMP/missing.mtx"
expect 2 info
expect 2 convert only-one-argument.mtx
expect 2 gen

# bad values
expect 2 spmv --format no-such-format --gen lap2d5:4
check "unknown format is named" stderr_has "no-such-format"
check "unknown format lists csr" stderr_has "csr"
expect 2 spmv --device tpu --gen lap2d5:4
expect 2 spmv --runs zero --gen lap2d5:4
expect 2 spmv --runs 0 --gen lap2d5:4
expect 2 spmv --params nokey=3 --gen lap2d5:4
check "bad --params key is named" stderr_has "nokey"
expect 2 info --params B=-1 --gen lap2d5:4
# out-of-range --params are usage errors (exit 2) on every command that
# takes them: negative, above the matrix's cap (max(2 x extent, 1024)),
# or refused by the format asked for
expect 2 codegen --params B=-3 --gen lap2d5:30
for cmd in "spmv" "spmv --format brcsd1" "info" "codegen" "spy -o $TMP/p.png --overlay brcsd1"; do
    expect 2 $cmd --params B=100000 --gen lap2d5:30
    check "$cmd: the cap is named" stderr_has "B=100000 too large: the row block must be at most max(2 x rows, 1024) = 1800"
done
expect 2 spmv --format sell --params sigma=100 --gen lap2d5:30
check "a value the format refuses is named" stderr_has "sigma=100 is not a multiple of C=32"
expect 0 spmv --format brcsd1 --params B=1800 --gen lap2d5:30
expect 2 info --gen lap2d5:4 "$TMP/also-a-file.mtx"
expect 2 gen lap2d5:4 -o "$TMP/out.txt"
check "bad output suffix is named" stderr_has "out.txt"
check "nothing written for a bad suffix" test ! -e "$TMP/out.txt"
expect 2 convert "$0" "$TMP/out.csv"
expect 2 demo extra-argument

# a file that exists but is malformed: exit 1, message names file and line 4
bad=$TMP/bad.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 x 1.0\n' >"$bad"
for c in info spmv; do
    expect 1 "$c" "$bad"
    check "$c: malformed file is named" stderr_has "bad.mtx"
    check "$c: malformed line is named" stderr_has "4"
done
expect 1 convert "$bad" "$TMP/out.mtx"

# numbers: junk, overflow, NaN/Inf and meaningless values are usage errors
# naming the option, never replaced by a default
expect 2 spmv --runs 12x --gen lap2d5:4
check "trailing junk is named" stderr_has "12x"
expect 2 spmv --runs 99999999999999999999 --gen lap2d5:4
check "overflow is named" stderr_has "out of range"
expect 2 spmv --runs -5 --gen lap2d5:4
check "negative --runs gives the range" stderr_has "--runs must be in 1..1000000"
expect 2 spmv --seed -1 --gen lap2d5:4
expect 2 spmv --calls -1 --gen lap2d5:4
expect 2 solve --rtol nan --gen lap2d5:4
check "NaN is refused" stderr_has "finite number"
expect 2 solve --rtol inf --gen lap2d5:4
expect 2 solve --rtol -1e-8 --gen lap2d5:4
expect 2 solve --max-iter 0 --gen lap2d5:4
expect 2 spy --size -1 --gen lap2d5:4 -o "$TMP/s.png"
expect 2 info --Z nan --gen lap2d5:4
expect 2 info --alpha 2 --gen lap2d5:4
expect 2 info --B -3 --gen lap2d5:4
# threads: 1 .. 4 x processors (100000 used to crash inside OpenMP)
expect 2 spmm --threads 100000 --gen-a lap2d5:4 --gen-b lap2d5:4
check "--threads gives its range" stderr_has "--threads must be in 1.."
expect 2 spmm --threads -2 --gen-a lap2d5:4 --gen-b lap2d5:4
expect 0 spmm --threads 1 --gen-a lap2d5:4 --gen-b lap2d5:4
# 0 is a value like any other: outside the range, refused -- never taken
# for "not given" and replaced by the default
expect 2 solve --rtol 0 --gen lap2d5:4
check "--rtol 0 is refused with the range" stderr_has "--rtol must be in 1e-300..0.9, got 0"
expect 2 spmm --threads 0 --gen-a lap2d5:4 --gen-b lap2d5:4
check "--threads 0 is refused with the range" stderr_has "--threads must be in 1.."
expect 2 info --Z 0 --gen lap2d5:4
check "--Z 0 is refused" stderr_has "--Z must be > 0 and <= 1000000000, got 0"
expect 2 info --alpha 0 --gen lap2d5:4
check "--alpha 0 is refused" stderr_has "--alpha must be > 0 and <= 1, got 0"
expect 2 info --B 0 --gen lap2d5:4
check "--B 0 is refused" stderr_has "--B must be in 1..2147483647, got 0"
expect 2 spmv --calls 0 --gen lap2d5:4
check "--calls 0 is refused" stderr_has "--calls must be >= 1, got 0"
# given values are used (900 rows: delta = ceil(900 / Z))
expect 0 info --gen lap2d5:30 --json --Z 50 --alpha 0.5 --B 128
check "--Z 50 is used" stdout_has '"delta":18,'
check "--alpha 0.5 is used" stdout_has '"alpha":0.5,'
expect 0 info --gen lap2d5:30 --json
check "no --Z: the default 100" stdout_has '"delta":9,'
expect 0 solve --rtol 1e-6 --gen lap2d5:4 --json
expect 0 spmv --calls 1 --runs 1 --gen lap2d5:4 --json
check "--calls 1 is used" stdout_has '"chooser":"model"'
# OMP_NUM_THREADS above the library's limit (4 x processors) is refused
# before any work, naming the value and the limit (it crashed in libgomp)
limit=$((4 * $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)))   # nproc itself obeys OMP_NUM_THREADS
for cmd in "spmv --gen lap2d5:300" "spmm --gen-a lap2d5:30 --gen-b lap2d5:30" "solve --gen lap2d5:300"; do
    OMP_NUM_THREADS=100000 expect 2 $cmd
    check "OMP_NUM_THREADS=100000 ($cmd) names value and limit" \
        stderr_has "OMP_NUM_THREADS=100000 is more than the $limit threads"
done
OMP_NUM_THREADS=$((limit + 1)) expect 2 info --gen lap2d5:4
OMP_NUM_THREADS=4,100000 expect 2 info --gen lap2d5:4
OMP_NUM_THREADS=many expect 2 info --gen lap2d5:4
check "a non-number is named" stderr_has "OMP_NUM_THREADS='many' is not a positive thread count"
OMP_NUM_THREADS=$limit expect 0 spmv --gen lap2d5:300
OMP_NUM_THREADS=1,1 expect 0 info --gen lap2d5:4

# --memory SIZE on every command: sets the budget; a bad size is a usage error
expect 0 info --memory 1.5GB --gen lap2d5:4
expect 0 info --memory=4096 --gen lap2d5:4
expect 0 info --memory 2GiB --gen lap2d5:4
for bad_size in 12Q 0 -1G nan 1e30G ""; do
    expect 2 info --memory "$bad_size" --gen lap2d5:4
    check "bad --memory '$bad_size' is named" stderr_has "--memory needs a size"
done
expect 1 spmv --memory 100 --gen lap2d5:40
check "a tiny budget refuses the work, naming it" stderr_has "(1600 x 1600, 7840 nonzeros) needs 119.7 kB, budget 100 bytes"
# the budget bounds a whole operation, not each allocation: a header
# declaring an empty 10^7 x 10^7 matrix reads in 80 MB, but its analysis
# and planning need 240 MB in arrays of 80 MB (each under the per-allocation
# check) -- refused before they start, with the figure
printf '%%%%MatrixMarket matrix coordinate real general\n10000000 10000000 0\n' > "$TMP/empty.mtx"
for cmd in info spmv solve; do
    start=$(date +%s%N)
    expect 1 $cmd "$TMP/empty.mtx" --memory 200M
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    check "$cmd of an empty 10^7 x 10^7 matrix: the peak named" stderr_has "needs 240.0 MB, budget 200.0 MB"
    check "$cmd of an empty 10^7 x 10^7 matrix refused in $ms ms (< 3000)" test "$ms" -lt 3000
done
check "the planner's refusal says what" stderr_has "planning a 10000000 x 10000000 matrix"
expect 0 info "$TMP/empty.mtx" --memory 400M
# costs known from the arguments are checked before the work: spy's
# picture (from --size and the matrix's shape: a 201 MB canvas for a 16 x 16
# matrix at 8192), gen's matrix (from the spec: the nonzeros of a type3 are
# known without visiting its 10^8 rows, which took 5.8 s and 848 MB)
expect 1 spy --gen lap2d5:4 -o "$TMP/big.png" --size 8192 --memory 100K
check "spy: the picture's peak is named" stderr_has \
    "drawing a 8192 x 8192 picture (16 x 16 bins) of a 16 x 16 matrix needs 201.5 MB, budget 100.0 kB"
check "spy: nothing written" test ! -e "$TMP/big.png"
expect 0 spy --gen lap2d5:4 -o "$TMP/big.png" --size 1000 --memory 100M
start=$(date +%s%N)
expect 1 gen type3:100000000,41,0.35 --memory 12G
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "gen: the spec's nonzeros named" stderr_has \
    "(100000000 x 100000000, 1224116611 nonzeros) needs 16.3 GB, budget 12.0 GB"
check "gen of 10^8 rows refused in $ms ms (< 2000)" test "$ms" -lt 2000
# a vector's length is known from its header: one the matrix cannot take
# is refused before the file is read (here a header of 100000 entries over
# one value: refused for its length, not for being cut off)
printf '%%%%MatrixMarket matrix array real general\n100000 1\n1\n' > "$TMP/v.mtx"
for opt in "spmv -x" "solve -b" "solve --x0"; do
    expect 1 ${opt% *} --gen lap2d5:4 ${opt#* } "$TMP/v.mtx"
    check "$opt: the length from the header" stderr_has "'$TMP/v.mtx' has 100000 entries, the matrix needs 16"
done
expect 0 spmv --help
check "--help lists --memory" stdout_has "--memory SIZE"
finish
