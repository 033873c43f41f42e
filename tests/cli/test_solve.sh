# test_solve.sh -- `adia solve`: CG and BiCGSTAB converge on the planner's
# format to the known solution (ones), a fixed format is used when given,
# not converging exits 1 with the reason, bad options exit 2.
. "$(dirname "$0")/lib.sh"
need_python

expect 0 solve --gen lap2d5:40 --json
check "json keys" json_keys matrix method format converged iterations residual error time_ms spmv_ms spmvs stop
check "cg converges" test "$(json_get converged)" = True
check "cg: error below 1e-6" python3 -c "import sys; sys.exit(0 if $(json_get error) < 1e-6 else 1)"
check "cg: residual within rtol" python3 -c "import sys; sys.exit(0 if $(json_get residual) <= 1e-8 else 1)"

expect 0 solve --gen band:2000,3 --method bicgstab --jacobi --rtol 1e-10 --json
check "bicgstab + jacobi converges" test "$(json_get converged)" = True
check "bicgstab: rtol 1e-10 met" python3 -c "import sys; sys.exit(0 if $(json_get residual) <= 1e-10 else 1)"

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
# rtol below machine precision: stagnation is not success
expect 1 solve --gen lap2d5:20 --rtol 1e-30 --max-iter 2000
check "stagnation: did not converge" stderr_has "did not converge"

# usage errors
expect 2 solve
check "no matrix: says so" stderr_has "no matrix"
expect 2 solve --gen lap2d5:10 --method gmres
check "bad method named" stderr_has "gmres"
expect 2 solve --gen lap2d5:10 --rtol 2
check "bad rtol" stderr_has "--rtol"
expect 2 solve --gen lap2d5:10 --max-iter 0
expect 2 solve --gen lap2d5:10 --format nosuch
expect 2 solve /nonexistent/matrix.mtx
check "missing file named" stderr_has "/nonexistent/matrix.mtx"
finish
