#!/usr/bin/env bash
# select-run.sh -- the planner accuracy report alone (faster than gpu-run.sh):
# build, the planner and GPU tests, then `adia bench --select` on every
# matrix of a folder and a few generated ones; summary per chooser.
# usage: bench/select-run.sh OUT_DIR [MATRICES_DIR]
OUTDIR=${1:?usage: $0 OUT_DIR [MATRICES_DIR]}
MATDIR=${2:-data}
mkdir -p "$OUTDIR"
REP=$OUTDIR/select.txt
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DADIA_BENCH=OFF >/dev/null &&
    cmake --build build-rel -j16 >"$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
ctest --test-dir build-rel -R "plan|gpu" --output-on-failure 2>&1 | tail -4
FORMATS=csr,coo,dia,hdi,brcsd1,brcsd2,crsd,ell,sell,hyb
ROW_FORMATS=csr,coo,ell,sell,hyb,crsd   # unstructured: no diagonal format fits
FULL=$OUTDIR/select-full.md              # every bench table, for calibration
: >"$FULL"
sel() { build-rel/adia bench "$@" --select --runs 50 2>/dev/null | tee -a "$FULL" | grep -E "^# (matrix|select)"; }
{
    for f in "$MATDIR"/*.mtx; do
        head -c 200 "$f" | head -1 | grep -qiE "complex|hermitian" && continue
        sel "$f" --formats $FORMATS
    done
    for g in lap2d5:2048 lap3d7:160 type2:4000000 type3:4000000,41,0.34 band:1000000,100 \
             lap2d5:100 lap3d7:20 band:20000,3 lap2d5:300 lap3d7:50 band:100000,10 \
             type3:200000,21,0.4 type2:200000; do
        sel --gen "$g" --formats $FORMATS
    done
    for g in random:2000000,16 powerlaw:2000000,2,10000 random:200000,8 powerlaw:200000,2,2000; do
        sel --gen "$g" --formats $ROW_FORMATS
    done
} >"$REP"
awk '/^# select / { n[$3]++; l = $NF + 0; if (l <= 10) w10[$3]++; if (l <= 3) w3[$3]++ }
     END { for (c in n) printf "%-8s %d matrices: within 10%%: %d (%.0f%%), within 3%%: %d (%.0f%%)\n",
           c, n[c], w10[c], 100 * w10[c] / n[c], w3[c], 100 * w3[c] / n[c] }' "$REP" | tee -a "$REP"
