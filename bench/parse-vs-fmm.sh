#!/usr/bin/env bash
# parse-vs-fmm.sh -- reading Matrix Market FILES (not text in memory):
# adia_matrix_read_mtx (what convert, info and spmv FILE do; bench_parse
# FILE, triplets to the checked CSR) beside fast_matrix_market's read_coo
# (the reader behind scipy.io.mmread; triplets only), at 1 and 2 threads,
# page cache warm, best of RUNS, same run (issue 20).
#
# usage: bench/parse-vs-fmm.sh [BUILD_DIR] [FILE.mtx ...]
#   BUILD_DIR  with adia and bench_parse (default build)
#   FILEs      besides the generated ones: band, random, 27-point stencil
#              of 80-440 MB (made in $TMPDIR once, kept between runs)
# environment: RUNS (default 3), VENV (default $TMPDIR/adia-fmm-venv: made
# with `python3 -m venv` and `pip install fast_matrix_market` if missing).
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
for spec in band:1000000,5 random:1000000,8 lap3d27:50; do
    f="$TMP/adia-parse-$(echo "$spec" | tr ':,' '__').mtx"
    [ -s "$f" ] || "$BUILD/adia" gen "$spec" -o "$f" >/dev/null || exit 1
    files+=("$f")
done

# seconds of fast_matrix_market's read_coo, best of RUNS
fmm() {
    "$VENV/bin/python" - "$1" "$2" "$RUNS" <<'EOF'
import sys, time, fast_matrix_market as fmm
path, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
best = float("inf")
for _ in range(runs):
    t = time.perf_counter()
    fmm.read_coo(path, parallelism=threads)
    best = min(best, time.perf_counter() - t)
print(f"{best:.4f}")
EOF
}

# seconds of adia_matrix_read_mtx at $2 threads, best of RUNS (bench_parse
# --read-only reads the file RUNS times at 1 and 2 threads)
adia_read() {
    "$BUILD/bench_parse" "$1" --read-only --runs "$RUNS" 2>/dev/null |
        awk -v t="$2T" '$1 == "read_mtx" && $2 == t { print $5; found = 1 } END { if (!found) print "-" }'
}

echo "# $(date -u '+%F %T UTC'); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); fast_matrix_market $("$VENV/bin/python" -c 'import fast_matrix_market as f; print(f.__version__)'); load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| file | MB | threads | adia s | adia MB/s | fmm s | fmm MB/s | adia / fmm speed |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for f in "${files[@]}"; do
    mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')
    cat "$f" >/dev/null   # page cache warm for both
    for t in 1 2; do
        a=$(adia_read "$f" "$t")
        m=$(fmm "$f" "$t")
        awk -v f="$(basename "$f")" -v mb="$mb" -v t="$t" -v a="$a" -v m="$m" 'BEGIN {
            printf "| %s | %s | %d | %s | %s | %s | %s | %s |\n", f, mb, t, a,
                   (a > 0 ? sprintf("%.0f", mb / a) : "-"), m, (m > 0 ? sprintf("%.0f", mb / m) : "-"),
                   (a > 0 && m > 0 ? sprintf("%.2fx", m / a) : "-") }'
    done
done
