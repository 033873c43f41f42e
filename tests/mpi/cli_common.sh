# cli_common.sh -- sourced by the CLI tests under mpirun (cli_mpi.sh,
# cli_mpi_gpu.sh), after `adia=$1; shift; launch=("$@")`: a temporary
# folder, run NP ARGS..., fail MESSAGE, rel_diff FILE FILE, le A B.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
run() { local np=$1; shift; timeout 120 "${launch[@]}" "$np" "$adia" "$@"; }
# max |a - b| / max |a| of two vector files (array format, one value a line)
rel_diff() {
    awk 'FNR == 1 { f++ } /^%/ || NF != 1 { next } f == 1 { a[FNR] = $1; next }
         { d = a[FNR] - $1; if (d < 0) d = -d; if (d > m) m = d
           v = a[FNR]; if (v < 0) v = -v; if (v > s) s = v }
         END { printf "%.3g\n", (s > 0 ? m / s : m) }' "$1" "$2"
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
