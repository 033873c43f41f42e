#!/usr/bin/env bash
# peer-hdia.sh -- spGPU's HDIA SpMV timed beside adia's kernels (issue 32).
#
#   bench/peer-hdia.sh [--source SRC] [--build DIR] [--] [bench_peer_hdia args]
#
# SRC: spGPU's sources as a git directory (a clone, or a bare mirror such as
# the one the fetch tool leaves: its HEAD is exported), a folder, a .tar.gz /
# .tgz / .zip archive, or an http(s) URL of such an archive.  They are
# copied into peer/spgpu/ (git-ignored: the peer's code never enters this
# repository) and given the one change CUDA 12 needs: its texture
# references are gone, so x is read with __ldg where the kernel fetched it
# through a texture.  Without --source an existing peer/spgpu/ is used.
# Then DIR (default build-peer) is configured with
# -DADIA_PEER_SPGPU=peer/spgpu and bench_peer_hdia is built; with arguments
# it is run, e.g.
#   bench/peer-hdia.sh --source /path/to/spgpu -- --gen bandr:600000,30,0.7
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEER=$ROOT/peer/spgpu
SOURCE= BUILD=$ROOT/build-peer
while [ $# -gt 0 ]; do
  case $1 in
    --source) SOURCE=${2:?--source needs a path or URL}; shift 2 ;;
    --build) BUILD=${2:?--build needs a folder}; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) break ;;
  esac
done

die() { echo "peer-hdia.sh: $*" >&2; exit 2; }

# SOURCE -> $PEER (replaced whole), by its kind.
copy_source() {
  local src=$1 tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  case $src in
    http://*|https://*)
      curl -fsSL "$src" -o "$tmp/archive" || die "cannot download $src"
      src=$tmp/archive ;;
  esac
  mkdir -p "$tmp/tree"
  if [ -d "$src" ] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1 &&
     [ "$(git -C "$src" rev-parse --is-bare-repository)" = true ]; then
    git -C "$src" archive HEAD | tar -x -C "$tmp/tree"
  elif [ -d "$src" ]; then
    cp -R "$src/." "$tmp/tree/"
  elif [ -f "$src" ] && unzip -tq "$src" >/dev/null 2>&1; then
    unzip -q "$src" -d "$tmp/tree"
  elif [ -f "$src" ]; then
    tar -xf "$src" -C "$tmp/tree" || die "$src: not a folder, git directory or archive"
  else
    die "$src: no such file or folder"
  fi
  # an archive may hold one top folder (spgpu-master/): the tree is below it
  local top
  top=$(find "$tmp/tree" -path '*/src/core/kernels/hdia_spmv_base.cuh' -print -quit)
  [ -n "$top" ] || die "$1: no src/core/kernels/hdia_spmv_base.cuh (not spGPU's sources?)"
  top=${top%/src/core/kernels/hdia_spmv_base.cuh}
  rm -rf "$PEER"
  mkdir -p "$(dirname "$PEER")"
  cp -R "$top" "$PEER"
}

# The one change: the texture reference of x (its declaration, bind and
# unbind, fetchTex) replaced by __ldg(x + column) in the kernel template.
patch_peer() {
  local base=$PEER/src/core/kernels/hdia_spmv_base.cuh
  local tmpl=$PEER/src/core/kernels/hdia_spmv_base_template.cuh
  grep -q '^// Texture cache management' "$base" || die "$base: the texture block was not found"
  sed -i -e '/^\/\/ Texture cache management/,/^}/c\
/* adia peer-hdia.sh: texture references are gone in CUDA 12; x through __ldg */\
#define bind_tex_x(x) ((void)0)\
#define unbind_tex_x(x) ((void)0)' "$base"
  sed -i -e 's/fetchTex (\(column[12]*\))/__ldg(x + \1)/g' "$tmpl"
  if grep -n 'tex1Dfetch\|fetchTex\|texture <' "$base" "$tmpl"; then
    die "texture uses left after the patch (above)"
  fi
}

if [ -n "$SOURCE" ]; then
  copy_source "$SOURCE"
  patch_peer
  echo "peer-hdia.sh: spGPU sources in $PEER (git-ignored), x through __ldg"
fi
[ -f "$PEER/src/core/kernels/hdia_spmv_base.cuh" ] ||
  die "no $PEER: give --source (spGPU: github.com/davidebarbieri/spgpu)"
git -C "$ROOT" check-ignore -q "$PEER" || die "$PEER is not git-ignored: refusing to build from it"

cmake -S "$ROOT" -B "$BUILD" -DADIA_PEER_SPGPU="$PEER" -DADIA_MPI=OFF >/dev/null
cmake --build "$BUILD" --target bench_peer_hdia -j"${JOBS:-$(nproc)}"
[ $# -eq 0 ] || exec "$BUILD/bench_peer_hdia" "$@"
