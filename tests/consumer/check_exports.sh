#!/usr/bin/env bash
# The shared library exports exactly the public API: every dynamic symbol
# it defines is a function declared in include/adia.h, and every function
# declared there is exported.
# usage: check_exports.sh LIBADIA_SO ADIA_H [CC]
set -euo pipefail
lib=$1 header=$2 cc=${3:-cc}
command -v nm >/dev/null || { echo "no nm: skipped"; exit 77; }
exported=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u)
# the header's function names, comments removed by the preprocessor; not
# function pointer types ((*adia_x)(...)) nor the return type of a function
# pointer member (adia_status (*apply)(...))
declared=$("$cc" -E -P -x c "$header" |
          sed -E 's/adia_[A-Za-z0-9_]+[[:space:]]*\([[:space:]]*\*/(*/g' |
          sed -E 's/\([[:space:]]*\*[[:space:]]*adia_[A-Za-z0-9_]*[[:space:]]*\)//g' |
          grep -oE '(^|[^A-Za-z0-9_])adia_[A-Za-z0-9_]+[[:space:]]*\(' |
          grep -oE 'adia_[A-Za-z0-9_]+' | sort -u)
fail=0
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
if [ -n "$extra" ]; then
    echo "exported but not declared in $header:"; echo "$extra" | sed 's/^/  /'; fail=1
fi
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [ -n "$missing" ]; then
    echo "declared in $header but not exported:"; echo "$missing" | sed 's/^/  /'; fail=1
fi
echo "$(echo "$exported" | wc -l) symbols exported by $(basename "$lib"), $(echo "$declared" | wc -l) functions declared"
exit $fail
