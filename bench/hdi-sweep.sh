#!/usr/bin/env bash
# hdi-sweep.sh -- wide bands with holes (issue 32, item 3): band width x
# fill, every diagonal kernel of adia (generic and generated), csr,
# cuSPARSE CSR ALG1/ALG2 and, when it is built, spGPU's HDIA (the peer),
# in one markdown table with each time over the floor and over the peer.
#
#   bench/hdi-sweep.sh [--build DIR] [--peer-build DIR] [--out DIR] [--rows N]
#                      [--runs N] [--quick] [--ks "K ..."] [--fills "F ..."]
#                      [--append] [--dry-run]
#   bench/hdi-sweep.sh --render FILE.jsonl     (the table of an earlier run)
#
# Matrices: bandr:N,K,FILL (band -K..K, each off-diagonal keeping FILL of its
# entries, 1-8 holes of random lengths at random places): K = 4 8 16 30 32
# (9, 17, 33, 61, 65 diagonals) x FILL = 0.3 0.5 0.7 0.9, N = 600000 rows
# (--rows); K = 30 at 0.5-0.9 is the issue's held-out case (61 diagonals,
# 600,000 rows; bandr has no far scatter points).  --quick: K = 8 30, FILL =
# 0.5 0.9; --ks / --fills: other lists (a sweep cut in parts, each part
# added to the same --out with --append; the table covers all parts).
# Each matrix is one run of bench_peer_hdia (DIR of bench/peer-hdia.sh,
# default build-peer) when it is built, else of `adia bench` (DIR of
# --build, default build-rel): the floor from that run's read bandwidth.
# Raw JSON lines and the table go to --out (default
# bench/results/hdi-sweep-DATE).  --dry-run prints the commands only.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-rel PEER_BUILD=$ROOT/build-peer OUT= ROWS=600000 RUNS=100
QUICK=0 DRY=0 RENDER= KS= FILLS= APPEND=0
FORMATS=dia,hdi,brcsd1,brcsd2,crsd,csr
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=${2:?}; shift 2 ;;
    --peer-build) PEER_BUILD=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --rows) ROWS=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --ks) KS=${2:?}; shift 2 ;;
    --fills) FILLS=${2:?}; shift 2 ;;
    --append) APPEND=1; shift ;;
    --dry-run) DRY=1; shift ;;
    --render) RENDER=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "hdi-sweep.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $ROWS =~ ^[0-9]+$ ]] && [ "$ROWS" -ge 1000 ] || { echo "hdi-sweep.sh: --rows: an integer >= 1000" >&2; exit 2; }
[[ $RUNS =~ ^[0-9]+$ ]] && [ "$RUNS" -ge 50 ] || { echo "hdi-sweep.sh: --runs: an integer >= 50" >&2; exit 2; }

# The markdown table of JSON lines (bench_peer_hdia's or adia bench's).
render() {
  python3 - "$1" <<'EOF'
import json, re, sys
KERNELS = [(f, k) for f in ("dia", "hdi", "brcsd1", "brcsd2", "crsd") for k in ("generic", "generated")]
def rows_of(d):
    """(who, kernel, ms) of every checked row, whichever program wrote d."""
    out = []
    for r in d.get("results", []):
        if r.get("status") == "ok" and r.get("time_ms") is not None:
            out.append((r.get("who", r.get("format")), r["kernel"], r["time_ms"]))
    if "cusparse_alg1_ms" in d:   # adia bench keeps cuSPARSE apart
        out += [("cusparse", "csr-alg1", d["cusparse_alg1_ms"]),
                ("cusparse", "csr-alg2", d["cusparse_alg2_ms"])]
    return [o for o in out if o[2] is not None]
def fmt(x, d=2):
    return "-" if x is None else f"{x:.{d}f}"
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not lines:
    sys.exit("hdi-sweep.sh: no results in " + sys.argv[1])
first = lines[0]
print(f"{first.get('device', '?')}, {first.get('date', '?')}, {first.get('precision', 'double')}; "
      "each cell: time / floor (floor = 8 (nnz + 2 n) / B_read of the same run); "
      "adia best = fastest reproducible adia kernel")
head = ["matrix", "diags", "fill", "nnz", "floor ms", "peer ms", "peer/floor"]
head += [f"{f}/{k}" for f, k in KERNELS] + ["csr", "cuSP ALG1", "cuSP ALG2",
         "adia best", "best ms", "best/floor", "best/peer"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * 3 + "---:|" * (len(head) - 3))
for d in lines:
    m = re.match(r"bandr:(\d+),(\d+),([0-9.]+)", d["matrix"])
    diags, fill = (2 * int(m.group(2)) + 1, m.group(3)) if m else ("?", "?")
    fl = d["floor_ms"]
    rs = rows_of(d)
    def best(pred):
        c = [r for r in rs if pred(r)]
        return min(c, key=lambda r: r[2]) if c else None
    peer = best(lambda r: r[0] == "spgpu-hdia")
    adia = best(lambda r: r[0] not in ("spgpu-hdia", "cusparse") and r[1] != "cusparse-alg1")
    cells = [d["matrix"], str(diags), fill, str(d.get("nnz", "?")), fmt(fl, 4),
             fmt(peer and peer[2], 4), fmt(peer and peer[2] / fl)]
    for f, k in KERNELS:
        r = best(lambda r: r[0] == f and r[1] == k)
        cells.append(fmt(r and r[2] / fl))
    for pred in (lambda r: r[0] == "csr" and r[1] != "cusparse-alg1",
                 lambda r: r[1] == "csr-alg1", lambda r: r[1] == "csr-alg2"):
        r = best(pred)
        cells.append(fmt(r and r[2] / fl))
    cells += [adia and f"{adia[0]}/{adia[1]}" or "-", fmt(adia and adia[2], 4),
              fmt(adia and adia[2] / fl), fmt(adia and peer and adia[2] / peer[2])]
    print("| " + " | ".join(cells) + " |")
EOF
}

if [ -n "$RENDER" ]; then
  render "$RENDER"
  exit
fi

if [ "$QUICK" = 1 ]; then KS=${KS:-8 30} FILLS=${FILLS:-0.5 0.9}; fi
KS=${KS:-4 8 16 30 32} FILLS=${FILLS:-0.3 0.5 0.7 0.9}
for k in $KS; do [[ $k =~ ^[0-9]+$ ]] || { echo "hdi-sweep.sh: --ks: integers, got '$k'" >&2; exit 2; }; done
for f in $FILLS; do [[ $f =~ ^(0\.[0-9]+|1)$ ]] || { echo "hdi-sweep.sh: --fills: numbers in (0, 1], got '$f'" >&2; exit 2; }; done
OUT=${OUT:-$ROOT/bench/results/hdi-sweep-$(date -u +%Y-%m-%d)}
JSON=$OUT/sweep.jsonl
if [ -x "$PEER_BUILD/bench_peer_hdia" ]; then
  PROG=("$PEER_BUILD/bench_peer_hdia")
  WHO="bench_peer_hdia ($PEER_BUILD; the peer included)"
else
  PROG=("$BUILD/adia" bench)
  WHO="adia bench ($BUILD; no peer: build it with bench/peer-hdia.sh)"
fi
specs=()
for K in $KS; do for F in $FILLS; do specs+=("bandr:$ROWS,$K,$F"); done; done
if [ "$DRY" = 1 ]; then
  echo "# $WHO, ${#specs[@]} matrices, JSON lines to $JSON"
  for s in "${specs[@]}"; do
    echo "${PROG[*]} --gen $s --runs $RUNS --formats $FORMATS --json-append $JSON"
  done
  exit 0
fi
mkdir -p "$OUT"
[ "$APPEND" = 1 ] || : >"$JSON"
echo "# hdi-sweep: $WHO, ${#specs[@]} matrices, $(git -C "$ROOT" rev-parse --short HEAD)" | tee -a "$OUT/sweep.log"
STATUS=0
for s in "${specs[@]}"; do
  echo "== $s" | tee -a "$OUT/sweep.log"
  "${PROG[@]}" --gen "$s" --runs "$RUNS" --formats "$FORMATS" --json-append "$JSON" \
    >>"$OUT/sweep.log" 2>&1 || { echo "   FAILED (see sweep.log)"; STATUS=1; }
done
render "$JSON" | tee "$OUT/sweep.md"
exit $STATUS
