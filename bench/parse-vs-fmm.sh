#!/usr/bin/env bash
# parse-vs-fmm.sh -- reading Matrix Market FILES (not text in memory):
# adia_matrix_read_mtx (what convert, info and spmv FILE do; bench_parse
# FILE, triplets to the checked CSR) beside fast_matrix_market's read_coo
# (the reader behind scipy.io.mmread; triplets only), at 1 and 2 threads,
# page cache warm, best of RUNS fresh processes each, same run (issue 20).
#
# usage: bench/parse-vs-fmm.sh [BUILD_DIR] [FILE.mtx ...]
#   BUILD_DIR  with adia and bench_parse (default build)
#   FILEs      besides the generated ones: band, random, 27-point stencil
#              of 50-375 MB, two small ones (3 and 27 MB), the stencil and
#              the random one gzip-compressed (made in $TMPDIR once, kept
#              between runs)
# environment: RUNS (default 3), VENV (default $TMPDIR/adia-fmm-venv: made
# with `python3 -m venv` and `pip install fast_matrix_market` if missing),
# BASE: another build dir (the code before a change; its bench_parse must
# know --read-only) timed in the same run, in two more columns.
set -uo pipefail
BUILD=${1:-build}
shift || true
RUNS=${RUNS:-3}
TMP=${TMPDIR:-/tmp}
VENV=${VENV:-$TMP/adia-fmm-venv}
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import fast_matrix_market" 2>/dev/null; then
    python3 -m venv "$VENV" && "$VENV/bin/pip" install -q fast_matrix_market numpy ||
        { echo "parse-vs-fmm: cannot make the fast_matrix_market venv"; exit 1; }
fi
files=("$@")
for spec in band:1000000,5 random:1000000,8 lap3d27:50 random:100000,8 lap3d27:20 lap3d27:50.gz random:1000000,8.gz; do
    f="$TMP/adia-parse-$(echo "${spec%.gz}" | tr ':,' '__').mtx${spec#"${spec%.gz}"}"
    [ -s "$f" ] || "$BUILD/adia" gen "${spec%.gz}" -o "$f" >/dev/null || exit 1
    files+=("$f")
done

# Every time is one read in a fresh process (what a program that reads a
# matrix pays, page faults of new memory included), best of RUNS; the
# readers take turns, so that a busy spell of the machine hits them alike.

# seconds of one fast_matrix_market read_coo of $1 at $2 threads (after a
# 1 x 1 one: the first call's set-up, 0.08 s, is not the reading's)
fmm() {
    "$VENV/bin/python" - "$1" "$2" <<'EOF'
import io, sys, time, fast_matrix_market as fmm
tiny = b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n"
fmm.read_coo(io.BytesIO(tiny), parallelism=int(sys.argv[2]))
t = time.perf_counter()
fmm.read_coo(sys.argv[1], parallelism=int(sys.argv[2]))
print(f"{time.perf_counter() - t:.4f}")
EOF
}

# seconds of one adia_matrix_read_mtx of $1 at $3 threads by the build in $2
adia_read() {
    "$2/bench_parse" "$1" --read-only --runs 1 --threads "$3" 2>/dev/null |
        awk '$1 == "read_mtx" { t = $5 } END { print t ? t : "-" }'
}

min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || a == "-" || (b != "-" && b < a)) ? b : a }'; }

echo "# $(date -u '+%F %T UTC'); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); fast_matrix_market $("$VENV/bin/python" -c 'import fast_matrix_market as f; print(f.__version__)'); load $(cut -d' ' -f1 /proc/loadavg)"
echo
base_head=${BASE:+" before s | after / before |"}
echo "| file | MB | threads | adia s | adia MB/s | fmm s | fmm MB/s | adia / fmm speed |$base_head"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${BASE:+" ---: | ---: |"}"
for f in "${files[@]}"; do
    bytes=$(stat -c %s "$f")
    [[ "$f" == *.gz ]] && bytes=$(gzip -dc "$f" | wc -c)   # MB of text, as for the others
    mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
    cat "$f" >/dev/null   # page cache warm for both
    for t in 1 2; do
        a= b= m=
        for _ in $(seq "$RUNS"); do
            a=$(min "$a" "$(adia_read "$f" "$BUILD" "$t")")
            [ -n "${BASE:-}" ] && b=$(min "$b" "$(adia_read "$f" "$BASE" "$t")")
            m=$(min "$m" "$(fmm "$f" "$t")")
        done
        awk -v f="$(basename "$f")" -v mb="$mb" -v t="$t" -v a="$a" -v m="$m" -v b="$b" 'BEGIN {
            printf "| %s | %s | %d | %s | %s | %s | %s | %s |", f, mb, t, a,
                   (a > 0 ? sprintf("%.0f", mb / a) : "-"), m, (m > 0 ? sprintf("%.0f", mb / m) : "-"),
                   (a > 0 && m > 0 ? sprintf("%.2fx", m / a) : "-")
            if (b != "") printf " %s | %s |", b, (a > 0 && b > 0 ? sprintf("%.2fx", b / a) : "-")
            printf "\n" }'
    done
done
