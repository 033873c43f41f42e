#!/usr/bin/env bash
# The install links as documented: install the already built tree into a
# temporary prefix, then build tests/consumer/main.c against it with
#   cc $(pkg-config --cflags --libs adia)            (libadia.so)
#   cc $(pkg-config --static --cflags --libs adia-static)   (libadia.a)
#   CMake: project(app C) + find_package(adia), adia::adia and adia::adia_static
# and run the four programs (no LD_LIBRARY_PATH: the .pc file and CMake give
# the rpath).  The library is not rebuilt.
# usage: run.sh BUILD_DIR [CC]
set -euo pipefail
build=$(cd "$1" && pwd)
cc=${2:-cc}
here=$(cd "$(dirname "$0")" && pwd)
pkgconfig=$(command -v pkg-config || command -v pkgconf || true)
[ -n "$pkgconfig" ] || { echo "no pkg-config: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/adia-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { echo "== $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'libadia.so' | head -n 1)")
[ -f "$libdir/libadia.a" ] && [ -f "$libdir/pkgconfig/adia.pc" ] && [ -f "$prefix/include/adia.h" ] ||
    { echo "incomplete install:"; find "$prefix" -type f; exit 1; }

unset LD_LIBRARY_PATH
export PKG_CONFIG_PATH=$libdir/pkgconfig
needs_adia() { readelf -d "$1" | grep -q 'NEEDED.*libadia\.so'; }

step "pkg-config --cflags --libs adia: $("$pkgconfig" --cflags --libs adia)"
"$cc" -std=c11 -Wall -o "$tmp/app_pc" "$here/main.c" $("$pkgconfig" --cflags --libs adia) -lm
needs_adia "$tmp/app_pc" || { echo "app_pc does not use libadia.so"; exit 1; }
"$tmp/app_pc"

step "pkg-config --static --cflags --libs adia-static: $("$pkgconfig" --static --cflags --libs adia-static)"
"$cc" -std=c11 -Wall -o "$tmp/app_pc_static" "$here/main.c" $("$pkgconfig" --static --cflags --libs adia-static) -lm
! needs_adia "$tmp/app_pc_static" || { echo "app_pc_static uses libadia.so"; exit 1; }
"$tmp/app_pc_static"

step "CMake: project(app C), find_package(adia)"
cmake -S "$here" -B "$tmp/app" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$tmp/app.log" 2>&1 || { cat "$tmp/app.log"; exit 1; }
cmake --build "$tmp/app" >>"$tmp/app.log" 2>&1 || { cat "$tmp/app.log"; exit 1; }
needs_adia "$tmp/app/app" || { echo "app does not use libadia.so"; exit 1; }
! needs_adia "$tmp/app/app_static" || { echo "app_static uses libadia.so"; exit 1; }
"$tmp/app/app"
"$tmp/app/app_static"
step "installed adia links by pkg-config and by CMake, shared and static"
