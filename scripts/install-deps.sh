#!/bin/sh
# Install the Debian packages the build and its tests need (pkg-config: the
# install test), if any is missing; and, if it can, Open MPI, which only
# adia_mpi (distributed runs) and its tests need, and librsb, which only
# bench_cpu_spmv's comparison column needs: the core build goes on without
# them.  Without root (and without sudo), print the one command that
# would install them.  --required (what `make demo` runs): only the packages
# the build needs; the optional ones are named, not installed.
set -e
need="" want=""
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in cmake make gcc pkg-config zlib1g-dev libpng-dev; do
    have "$pkg" || need="$need $pkg"
done
for pkg in libopenmpi-dev openmpi-bin librsb-dev; do
    have "$pkg" || want="$want $pkg"
done
if [ "${1:-}" = "--required" ] && [ -n "$want" ]; then
    command -v dpkg-query >/dev/null 2>&1 &&
        echo "adia: optional, not installed now (make deps installs them):$want" >&2
    want=""
fi
[ -z "$need$want" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    [ -z "$need" ] && exit 0
    echo "adia: please install:$need (no apt-get on this machine)" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo"
    elif [ -n "$need" ]; then
        echo "adia: missing packages; run: sudo apt-get install -y$need$want" >&2
        exit 1
    else
        echo "adia: optional, for distributed runs (adia_mpi) and the librsb benchmark: sudo apt-get install -y$want" >&2
        exit 0
    fi
fi
$SUDO apt-get update -qq
[ -z "$need" ] || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$need
[ -z "$want" ] || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$want ||
    echo "adia: optional packages not installed: building without adia_mpi or the librsb benchmark" >&2
