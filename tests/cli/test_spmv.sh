# test_spmv.sh -- `adia spmv` passes its check on every registered format,
# in double and single precision, and --device gpu fails cleanly without one.
. "$(dirname "$0")/lib.sh"
need_python

list=$(formats)
check "format list is not empty" test -n "$list"
spec="band:500,4,seed=3"
for f in $list; do
    for prec in "" --float; do
        expect 0 spmv --gen "$spec" --format "$f" $prec --runs 2 --device cpu --json
        check "$f $prec: passes" test "$(json_get pass)" = True
        check "$f $prec: reports its format" test "$(json_get format)" = "$f"
    done
done

# default format: the analysis' choice
expect 0 spmv --gen "$spec" --runs 2 --json
check "default format is registered" sh -c "echo ' $list ' | grep -qF ' $(json_get format) '"

# GPU: either it runs on the GPU or it says why not (exit 1)
run spmv --gen "$spec" --format csr --device gpu --runs 2 --json
if [ "$RC" -eq 0 ]; then
    check "--device gpu runs on the gpu" test "$(json_get device)" = gpu
else
    check "--device gpu without a device: exit 1" test "$RC" -eq 1
    check "--device gpu: says why" grep -qiE "no CUDA device|no GPU kernel" "$ERR"
fi
finish
