#!/bin/sh
# Install the Debian packages the build and its tests need (pkg-config: the
# install test), if any is missing.  Without root (and without sudo), print
# the one command that would install them.
set -e
need=""
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in cmake make gcc pkg-config zlib1g-dev libpng-dev; do
    have "$pkg" || need="$need $pkg"
done
[ -z "$need" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "adia: please install:$need (no apt-get on this machine)" >&2
    exit 1
fi
if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$need
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$need
else
    echo "adia: missing packages; run: sudo apt-get install -y$need" >&2
    exit 1
fi
