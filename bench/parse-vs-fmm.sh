#!/usr/bin/env bash
# parse-vs-fmm.sh -- reading Matrix Market FILES (not text in memory):
# adia_matrix_read_mtx (what convert, info and spmv FILE do; bench_parse
# FILE, triplets to the checked CSR) beside fast_matrix_market's read_coo
# (the reader behind scipy.io.mmread; triplets only), at 1 and 2 threads,
# page cache warm, best of RUNS fresh processes each, same run (issue 20).
# Then writing them: adia_matrix_write_mtx of the matrix read from each
# uncompressed file (temporary file, fsync, rename) beside fmm's write_coo
# of its triplets (plain write, no fsync; the fsync it would need to be as
# safe is timed apart), both writing the shortest decimal that reads back
# exactly (adia: Ryu; fmm: Dragonbox, its default precision), to files
# next to the inputs.
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
# know --read-only) timed in the same run, in two more columns (reading
# only); WHAT (default "read write"): which tables.
set -uo pipefail
BUILD=${1:-build}
shift || true
RUNS=${RUNS:-3}
WHAT=${WHAT:-read write}
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
[[ " $WHAT " == *" read "* ]] && {
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
}

# seconds of one fast_matrix_market write_coo of the triplets of $1 to $2
# at $3 threads (after a 1-entry one, as for reading), then the same plus
# an fsync of $2, and its MB; $2 is removed
fmm_write() {
    "$VENV/bin/python" - "$1" "$2" "$3" <<'EOF'
import io, os, sys, time, fast_matrix_market as fmm
src, out, par = sys.argv[1], sys.argv[2], int(sys.argv[3])
(v, (i, j)), shape = fmm.read_coo(src, parallelism=par)
fmm.write_coo(io.BytesIO(), (v[:1], (i[:1], j[:1])), shape, parallelism=par)
t = time.perf_counter()
fmm.write_coo(out, (v, (i, j)), shape, parallelism=par)
t1 = time.perf_counter()
fd = os.open(out, os.O_RDONLY)
os.fsync(fd)
os.close(fd)
print(f"{t1 - t:.4f} {time.perf_counter() - t:.4f} {os.path.getsize(out) / 1e6:.1f}")
os.remove(out)
EOF
}

# "seconds MB" of one adia_matrix_write_mtx of the matrix in $1 to $2 at $3
# threads (bench_parse reads $1 first, untimed, and removes $2)
adia_write() {
    "$BUILD/bench_parse" "$1" --write "$2" --runs 1 --threads "$3" 2>/dev/null |
        awk '$1 == "write_mtx" { t = $5; mb = $3 } END { print (t ? t : "-"), (mb ? mb : "-") }'
}

[[ " $WHAT " == *" write "* ]] && {
echo
echo "Writing (adia: temporary file + fsync + rename; fmm: plain write, then fsync timed apart):"
echo
echo "| file | threads | adia s | adia MB | adia MB/s | fmm s | fmm + fsync s | fmm MB | fmm MB/s | adia / fmm speed | adia / (fmm + fsync) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for f in "${files[@]}"; do
    [[ "$f" == *.gz ]] && continue   # fmm writes no gzip
    cat "$f" >/dev/null
    for t in 1 2; do
        a= m= ms= amb= mmb=
        for _ in $(seq "$RUNS"); do
            read -r at amb < <(adia_write "$f" "$TMP/adia-write-$$.mtx" "$t")
            read -r mt mst mmb < <(fmm_write "$f" "$TMP/fmm-write-$$.mtx" "$t")
            a=$(min "$a" "$at") m=$(min "$m" "$mt") ms=$(min "$ms" "$mst")
        done
        awk -v f="$(basename "$f")" -v t="$t" -v a="$a" -v am="$amb" -v m="$m" -v ms="$ms" -v mm="$mmb" 'BEGIN {
            printf "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f, t, a, am,
                   (a > 0 ? sprintf("%.0f", am / a) : "-"), m, ms, mm, (m > 0 ? sprintf("%.0f", mm / m) : "-"),
                   (a > 0 && m > 0 ? sprintf("%.2fx", m / a) : "-"), (a > 0 && ms > 0 ? sprintf("%.2fx", ms / a) : "-") }'
    done
done
}
