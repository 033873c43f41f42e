#!/usr/bin/env bash
# The static library puts only adia names into a user's link: every global
# symbol libadia.a (or libadia_mpi.a) defines is either a function declared
# in the public headers or an internal adia__* name -- so a new internal
# function with the public prefix (adia_foo) fails here.  Names compilers
# make on their own are reduced to the name they stand for and held to the
# same rule: OpenMP's locks of named critical sections
# (.gomp_critical_user_<name>), AddressSanitizer's ODR indicators
# (__odr_asan.<name>) and C++ names of CUDA host functions (_Z<len><name>...).
# Skipped: C++ names in an anonymous namespace (_GLOBAL__N_, kernel stubs
# included, local to their file) and weak symbols (template and NVTX
# instances, which a user's own copy overrides).
# usage: check_archive.sh LIB.a [HEADER...]   (default: include/adia*.h)
set -euo pipefail
lib=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- "$here"/../../include/adia*.h
command -v nm >/dev/null || { echo "no nm: skipped"; exit 77; }

# The public API: the adia_ names the headers declare as functions,
# comments removed first (a header comment may mention other names).
public=$(cat "$@" | ${CC:-cc} -fpreprocessed -dD -E -x c - 2>/dev/null |
         grep -oE '\badia_[A-Za-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u)
[ -n "$public" ] || { echo "no public functions found in $*"; exit 1; }

# The name a symbol stands for (empty: skipped).
base_name() {
    local s=$1
    case $s in
        *_GLOBAL__N_*) return ;;
        .gomp_critical_user_*) s=${s#.gomp_critical_user_} ;;
        __odr_asan.*) s=${s#__odr_asan.} ;;
    esac
    if [[ $s =~ ^_Z([0-9]+)(.*)$ ]]; then
        s=${BASH_REMATCH[2]:0:${BASH_REMATCH[1]}}
    fi
    echo "$s"
}

syms=$(nm --defined-only -g "$lib" | awk 'NF >= 3 && $2 ~ /^[TDBRGSC]$/ {print $3}' | sort -u)
bad=""
n=0
for s in $syms; do
    n=$((n + 1))
    b=$(base_name "$s")
    [ -n "$b" ] || continue
    case $b in adia__?*) continue ;; esac
    grep -qxF -- "$b" <<<"$public" || bad="$bad  $s"$'\n'
done
if [ -n "$bad" ]; then
    echo "global symbols of $(basename "$lib") that are neither adia__* nor declared in $*:"
    printf '%s' "$bad"
    exit 1
fi
echo "$n global symbols in $(basename "$lib"): public API ($(wc -l <<<"$public") functions in the headers) or adia__*"
