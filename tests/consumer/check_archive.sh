#!/usr/bin/env bash
# The static library puts only adia_ names into a user's link: every global
# symbol libadia.a defines is adia_* (the public API) or adia__* (internal),
# besides what compilers name on their own -- OpenMP's locks of our named
# critical sections (.gomp_critical_user_adia_*), AddressSanitizer's ODR
# indicators (__odr_asan.adia_*), C++ names of the CUDA host
# code that are adia-prefixed (_Z<n>adia_...) or in an anonymous namespace
# (_GLOBAL__N_, kernel stubs included), and weak symbols (template and NVTX
# instances, which a user's own copy overrides).
# usage: check_archive.sh LIBADIA_A
set -euo pipefail
lib=$1
command -v nm >/dev/null || { echo "no nm: skipped"; exit 77; }
bad=$(nm --defined-only -g "$lib" | awk 'NF >= 3 && $2 ~ /^[TDBRGSC]$/ {print $3}' | sort -u |
      grep -vE '^(adia_|\.gomp_critical_user_adia_|_Z[0-9]+adia_|__odr_asan\.adia_)' | grep -v '_GLOBAL__N_' || true)
n=$(nm --defined-only -g "$lib" | awk 'NF >= 3 && $2 ~ /^[TDBRGSC]$/' | wc -l)
if [ -n "$bad" ]; then
    echo "global symbols of $(basename "$lib") without the adia_ / adia__ prefix:"
    echo "$bad" | sed 's/^/  /'
    exit 1
fi
echo "$n global symbols in $(basename "$lib"), all adia_ / adia__"
