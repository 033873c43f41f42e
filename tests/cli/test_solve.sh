# test_solve.sh -- `adia solve`: CG, BiCGSTAB and GMRES converge on the
# planner's format to the known solution (ones), a fixed format is used when
# given, b and x0 come from files and x goes to one, not converging exits 1
# with the reason, bad options and mismatched vectors are errors.
. "$(dirname "$0")/lib.sh"
need_python

expect 0 solve --gen lap2d5:40 --json
check "json keys" json_keys matrix method device format converged iterations residual error solve_setup_ms time_ms ms_per_iter bytes_per_iter floor_ms_per_iter spmv_ms spmvs stop wall_ms read_ms cuda_wait_ms plan_ms plan_setup
# the solve's set-up apart from its iterations, both within the wall clock;
# ms_per_iter is of the iterations alone
check "solve_setup_ms, time_ms, wall_ms" python3 - "$OUT" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
s, t, w, it = d["solve_setup_ms"], d["time_ms"], d["wall_ms"], d["iterations"]
ok = (math.isfinite(s) and s >= 0 and t > 0 and it > 0 and s + t <= w and
      abs(d["ms_per_iter"] - t / it) <= 1e-9 * t)
# the read, the wait for CUDA and the plan, before the solve, within the
# wall clock too; a generated matrix has no file size
r, c, p = d["read_ms"], d["cuda_wait_ms"], d["plan_ms"]
ok = ok and r >= 0 and c >= 0 and p > 0 and r + c + p + s + t <= w and "read_bytes" not in d
sys.exit(0 if ok else "setup %r time %r wall %r ms_per_iter %r read %r wait %r plan %r" %
         (s, t, w, d["ms_per_iter"], r, c, p))
PY
check "cg converges" test "$(json_get converged)" = True
check "cg: error below 1e-6" python3 -c "import sys; sys.exit(0 if $(json_get error) < 1e-6 else 1)"
check "cg: residual within rtol" python3 -c "import sys; sys.exit(0 if $(json_get residual) <= 1e-8 else 1)"
expect 0 solve --gen lap2d5:40
check "text: set-up, iterations, wall" grep -qE "set-up [0-9.]+ ms, [0-9]+ iterations in [0-9.]+ ms \([0-9.]+ ms per iteration\); wall [0-9.]+ s" "$OUT"

expect 0 solve --gen band:2000,3 --method bicgstab --jacobi --rtol 1e-10 --json
check "bicgstab + jacobi converges" test "$(json_get converged)" = True
check "bicgstab: rtol 1e-10 met" python3 -c "import sys; sys.exit(0 if $(json_get residual) <= 1e-10 else 1)"

expect 0 solve --gen band:2000,3 --method gmres --restart 20 --jacobi --json
check "gmres(20) + jacobi converges" test "$(json_get converged)" = True
check "gmres: error below 1e-6" python3 -c "import sys; sys.exit(0 if $(json_get error) < 1e-6 else 1)"
expect 0 solve --gen lap2d5:30 --method gmres --restart 5 --max-iter 5000 --json
check "gmres(5) restarts and converges" test "$(json_get converged)" = True

# vectors from files: b = A * (1, 2, ..., n) written by spmv, solved back
"$TOOL" gen lap2d5:20 -o "$TMP/A.mtx" >/dev/null
python3 - "$TMP" <<'PY'
import sys
n = 400
with open(sys.argv[1] + "/xs.mtx", "w") as f:
    f.write("%%MatrixMarket matrix array real general\n" + "%d 1\n" % n)
    f.writelines("%d\n" % (i + 1) for i in range(n))
with open(sys.argv[1] + "/short.mtx", "w") as f:
    f.write("%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n")
with open(sys.argv[1] + "/zeros.mtx", "w") as f:
    f.write("%%MatrixMarket matrix array real general\n" + "%d 1\n" % n + "0\n" * n)
PY
# b = 0: x = 0 at once; the report names the plan's format and no per-
# iteration time (it printed "format  (cpu" and "nan ms per iteration")
expect 0 solve "$TMP/A.mtx" -b "$TMP/zeros.mtx" --device cpu
check "b = 0: the format is named" grep -qE "format [a-z0-9]+ \(cpu, double\)" "$OUT"
check "b = 0: no iterations needed" stdout_has "no iterations needed"
check "b = 0: no nan" sh -c "! grep -q nan '$OUT'"
expect 0 solve "$TMP/A.mtx" -b "$TMP/zeros.mtx" --device cpu --json
check "read_bytes: the file's size" test "$(json_get read_bytes)" = "$(wc -c <"$TMP/A.mtx" | tr -d ' ')"
check "b = 0: JSON names the format" test -n "$(json_get format)"
check "b = 0: no iteration time, a set-up" python3 -c "import sys; sys.exit(0 if $(json_get time_ms) == 0 and $(json_get solve_setup_ms) >= 0 else 1)"
expect 0 solve "$TMP/A.mtx" --device cpu --explain
check "explain: the read's bytes, time and rate first" sh -c "head -1 '$OUT' | grep -qE '^read: .*A\.mtx, [0-9.]+ MB read and checked in [0-9.]+ ms \([0-9.]+ GB/s\)'"
expect 0 spmv "$TMP/A.mtx" -x "$TMP/xs.mtx" -o "$TMP/b.mtx" --device cpu
expect 0 solve "$TMP/A.mtx" -b "$TMP/b.mtx" -o "$TMP/x.mtx" --rtol 1e-12 --device cpu
check "x written" test -s "$TMP/x.mtx"
check "x solves A x = b: x_i = i" python3 - "$TMP/x.mtx" <<'PY'
import sys
v = [float(l) for l in [l for l in open(sys.argv[1]) if l.strip() and not l.startswith("%")][1:]]
sys.exit(0 if len(v) == 400 and max(abs(x - (i + 1)) for i, x in enumerate(v)) < 1e-8 else 1)
PY
check "no error against ones with a given b" sh -c "! grep -q 'x - x\*' '$OUT'"
# x0 = the solution: converged at once
expect 0 solve "$TMP/A.mtx" -b "$TMP/b.mtx" --x0 "$TMP/x.mtx" --json --device cpu
check "x0 = solution: no iteration" test "$(json_get iterations)" = 0
# mismatched lengths and bad names
expect 1 solve "$TMP/A.mtx" -b "$TMP/short.mtx"
check "short b: both lengths named" stderr_has "has 3 entries, the matrix needs 400"
expect 1 solve "$TMP/A.mtx" --x0 "$TMP/short.mtx"
check "short x0 named" stderr_has "x0"
expect 2 solve "$TMP/A.mtx" -o "$TMP/x.txt"
check "bad output name" stderr_has "must end in .mtx"
expect 1 spmv "$TMP/A.mtx" -x "$TMP/short.mtx"
check "spmv: short x named" stderr_has "x '$TMP/short.mtx' has 3 entries"
# not converging with -o: the last iterate is still written, and said
expect 1 solve "$TMP/A.mtx" -b "$TMP/b.mtx" -o "$TMP/x3.mtx" --max-iter 3 --device cpu
check "last iterate written" test -s "$TMP/x3.mtx"
check "and said" stderr_has "the last iterate is written"

expect 0 solve --gen lap2d5:30 --format ell --json
check "--format ell is used" test "$(json_get format)" = ell

# not converging: exit 1, the reason printed
expect 1 solve --gen lap2d5:40 --max-iter 3
check "iteration limit reported" stdout_has "iteration limit reached"
check "stderr says why it failed" stderr_has "did not converge: iteration limit reached"
expect 1 solve --gen lap2d5:40 --max-iter 3 --json
check "--json still one object when not converged" json_keys converged residual stop
check "--json says not converged" test "$(json_get converged)" = False
check "--json gives the reason" test "$(json_get stop)" = "iteration limit reached"
# b at the ends of the range (issue 27): ||b|| of 16 x 1e308 overflows,
# 16 x 1e-320 is subnormal.  Both said "converged" with x = 0 (exit 0);
# now the first is solved (x = A^-1 b, up to 1.67e308) and the second,
# whose x is subnormal (about 11 bits), is refused with its reason; one
# 1e-310 entry stopped on a "non-finite residual": solved.
"$TOOL" gen lap2d5:4 -o "$TMP/A16.mtx" >/dev/null
python3 - "$TMP" <<'PY'
import sys
def vec(name, v):
    with open(sys.argv[1] + "/" + name, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n" + "%d 1\n" % len(v))
        f.writelines("%r\n" % t for t in v)
vec("big.mtx", [1e308] * 16)
vec("sub.mtx", [1e-320] * 16)
vec("one.mtx", [0.0] * 5 + [1e-310] + [0.0] * 10)
PY
for m in cg bicgstab gmres; do
    for j in "" --jacobi; do
        expect 0 solve "$TMP/A16.mtx" -b "$TMP/big.mtx" --method $m $j --device cpu \
            -o "$TMP/xbig.mtx" --json
        check "b = 1e308, $m$j: converged" test "$(json_get converged)" = True
        check "b = 1e308, $m$j: x solves A x = b (scaled check)" python3 - "$TMP" <<'PY'
import math, sys
t = sys.argv[1]
def vec(name):
    v = [l for l in open(t + "/" + name) if l.strip() and not l.startswith("%")]
    return [float(s) for s in v[1:]]
def mat(name):
    rows = [l.split() for l in open(t + "/" + name) if l.strip() and not l.startswith("%")]
    return [(int(r) - 1, int(c) - 1, float(v)) for r, c, v in rows[1:]]
b, x = vec("big.mtx"), vec("xbig.mtx")
s = 2.0 ** -1024
r = [bi * s for bi in b]
for i, j, a in mat("A16.mtx"):
    r[i] -= a * (x[j] * s)
res = math.sqrt(sum(v * v for v in r)) / math.sqrt(sum((bi * s) ** 2 for bi in b))
sys.exit(0 if all(math.isfinite(v) and v > 1e307 for v in x) and res <= 1e-8 else 1)
PY
        expect 1 solve "$TMP/A16.mtx" -b "$TMP/sub.mtx" --method $m $j --device cpu --json
        check "b = 1e-320, $m$j: not converged" test "$(json_get converged)" = False
        check "b = 1e-320, $m$j: says x underflows" \
            sh -c 'case "$1" in "x underflows"*) exit 0 ;; esac; exit 1' - "$(json_get stop)"
        expect 0 solve "$TMP/A16.mtx" -b "$TMP/one.mtx" --method $m $j --device cpu --json
        check "b_5 = 1e-310, $m$j: converged" test "$(json_get converged)" = True
    done
done

# --precond: the jacobi kind is --jacobi (same iterations), none is no
# preconditioner; its options need it; an unknown kind names the kinds
expect 0 solve --gen lap2d5:40 --jacobi --device cpu --json
its_flag=$(json_get iterations)
expect 0 solve --gen lap2d5:40 --precond jacobi --device cpu --json
check "--precond jacobi: as --jacobi" test "$(json_get iterations)" = "$its_flag"
check "--precond jacobi: named" test "$(json_get precond)" = jacobi
expect 0 solve --gen lap2d5:40 --device cpu --json
its_none=$(json_get iterations)
expect 0 solve --gen lap2d5:40 --precond none --device cpu
check "--precond none: its set-up printed" grep -q "preconditioner none, set up in" "$OUT"
expect 0 solve --gen lap2d5:40 --precond none --device cpu --json
check "--precond none: as no preconditioner" test "$(json_get iterations)" = "$its_none"
expect 2 solve --gen lap2d5:10 --precond jacobi --jacobi
check "--precond with --jacobi refused" stderr_has "choose one"
expect 2 solve --gen lap2d5:10 --grid 4x4
check "--grid without --precond" stderr_has "need --precond"
expect 2 solve --gen lap2d5:10 --precond none --grid 4x0
check "bad --grid" stderr_has "--grid '4x0'"
expect 2 solve --gen lap2d5:10 --precond none --cycle x
check "bad --cycle" stderr_has "--cycle"
expect 0 solve --gen lap3d7:17 --precond mg --explain --device cpu
check "--explain: the plan and the hierarchy" sh -c 'grep -q "^plan: " "$1" && grep -q "^mg: " "$1" && grep -q "level 1: grid 9x9x9" "$1"' - "$OUT"
expect 0 solve --gen lap3d7:17 --precond mg --device cpu --json
check "mg: at most 8 iterations on lap3d7:17" test "$(json_get iterations)" -le 8
expect 1 solve --gen lap3d7:17 --precond mg --grid 16x17x17 --device cpu
check "mg: a grid that does not fit" stderr_has "16x17x17"
expect 1 solve --gen lap2d5:10 --precond nosuch --device cpu
check "unknown kind: the kinds listed" stderr_has "none, jacobi"

# --precond cheb: fewer CG iterations than Jacobi; --degree is cheb's and mg's
expect 0 solve --gen lap3d7:24 --jacobi --device cpu --json
its_jac=$(json_get iterations)
expect 0 solve --gen lap3d7:24 --precond cheb --device cpu --json
check "--precond cheb: converged" test "$(json_get converged)" = True
check "--precond cheb: fewer iterations than --jacobi ($its_jac)" test "$(json_get iterations)" -lt "$its_jac"
its_cheb=$(json_get iterations)
expect 0 solve --gen lap3d7:24 --precond cheb --degree 6 --device cpu --json
check "--degree 6: fewer iterations than the default 4 ($its_cheb)" test "$(json_get iterations)" -lt "$its_cheb"
expect 2 solve --gen lap2d5:10 --degree 3
check "--degree without --precond" stderr_has "need --precond"
expect 2 solve --gen lap2d5:10 --precond jacobi --degree 3
check "--degree with jacobi refused" stderr_has "--degree: cheb's and mg's"
expect 2 solve --gen lap2d5:10 --precond cheb --degree 101
check "--degree out of range" stderr_has "--degree"
expect 1 solve --gen lap2d5:10 --precond cheb --sweeps 2 --device cpu
check "cheb refuses mg's options" stderr_has "are mg's options"
expect 2 solve --gen lap2d5:10 --float-levels all
check "--float-levels without --precond" stderr_has "--float-levels: mg's"
expect 2 solve --gen lap2d5:10 --precond mg --float-levels half
check "--float-levels: a bad value named" stderr_has "all, coarse or none, not 'half'"
expect 1 solve --gen lap3d7:24 --precond mg --float-levels all --device cpu
check "--float-levels all on the CPU refused" stderr_has "float_levels is for one process's GPU plan"
expect 1 solve --gen lap3d7:24 --precond mg --float-levels coarse --device cpu
check "--float-levels coarse on the CPU refused" stderr_has "asked: the coarse levels in float"
expect 0 solve --gen lap3d7:24 --precond mg --float-levels none --device cpu
check "--float-levels none on the CPU" stdout_has "converged"

# CG's default preconditioner: auto (jacobi below 128 points an edge, mg
# from there), marked as the default; --precond none turns it off; where
# the mg it made stops short, Jacobi solves again from x0
expect 0 solve --gen lap3d7:12 --device cpu --json
check "CG's default on a small grid: jacobi" stdout_has '"precond":"jacobi"'
check "the default is said" stdout_has '"precond_default":true'
expect 0 solve --gen lap2d5:130 --device cpu --json
check "CG's default on a grid of 130 points an edge: mg" stdout_has '"precond":"mg"'
check "mg's iterations" stdout_has '"iterations":6,'
expect 0 solve --gen lap3d7:12 --device cpu --precond none --json
check "--precond none: none" stdout_has '"precond":"none"'
check "--precond none is no default" stdout_has '"precond_default":false'
expect 0 solve --gen lap3d7:12 --device cpu --method bicgstab --json
check "BiCGSTAB's default: none" stdout_has '"precond":"none"'
expect 1 solve --gen band:300,1 --device cpu
check "the default's mg stopped short: jacobi again" stdout_has "mg, stopped short after"
check "... and said so" stdout_has "solved again with jacobi"
check "... still not converged (not SPD)" stderr_has "did not converge"

# rtol below machine precision: stagnation is not success
expect 1 solve --gen lap2d5:20 --rtol 1e-30 --max-iter 2000
check "stagnation: did not converge" stderr_has "did not converge"

# usage errors
expect 2 solve
check "no matrix: says so" stderr_has "no matrix"
expect 2 solve --gen lap2d5:10 --method sor
check "bad method named" stderr_has "sor"
expect 2 solve --gen lap2d5:10 --method gmres --restart 0
check "bad restart" stderr_has "--restart"
expect 2 solve --gen lap2d5:10 --device tpu
expect 2 solve --gen lap2d5:10 --rtol 2
check "bad rtol" stderr_has "--rtol"
expect 2 solve --gen lap2d5:10 --max-iter 0
expect 2 solve --gen lap2d5:10 --format nosuch
expect 1 solve /nonexistent/matrix.mtx
check "missing file named" stderr_has "/nonexistent/matrix.mtx"
finish
