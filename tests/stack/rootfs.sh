#!/usr/bin/env bash
# Builds (once) and prints the path of a Debian 13 ("trixie") root holding
# python3-torch 2.6, for the tests that run the real DataLoader on PyTorch 2.x:
# by chroot (tests/integration/torch_lib.sh) and as a Docker image
# (tests/stack/docker.sh).
#
#   root=$(bash tests/stack/rootfs.sh)      # builds it if needed, prints its path
#   bash tests/stack/rootfs.sh --check      # exit 0 if it is built, 1 if not
#
# Cached at $SHMWATCH_TORCH_ROOT (default /var/cache/shmwatch-tests/
# trixie-torch) under the rules of root_lib.sh (a stamp for another recipe:
# suite, mirror, packages, means a rebuild). Needs root,
# debootstrap (tests/deps.sh) and the network the first time; a build takes
# some minutes (logged to $ROOT.log).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/root_lib.sh"

ROOT=${SHMWATCH_TORCH_ROOT:-/var/cache/shmwatch-tests/trixie-torch}
NAME=rootfs.sh
SUITE=trixie
PACKAGES=(python3-torch)
# Bump when the recipe below changes in a way that needs a rebuild.
RECIPE=1
WANT="recipe=$RECIPE suite=$SUITE mirror=$(root_mirror) packages=${PACKAGES[*]}"
root_ready() { [ -x "$ROOT/usr/bin/python3" ]; }

root_begin "$@"
root_debootstrap "$SUITE"

# Keep the root small: no documentation, no manual pages, no translations.
cat >"$NEW/etc/dpkg/dpkg.cfg.d/01-shmwatch-minimal" <<'CFG'
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/lintian/*
CFG
cp /etc/resolv.conf "$NEW/etc/resolv.conf" 2>/dev/null || true

# apt-get inside the root, in a private mount namespace so that its /proc
# mount goes away with it whatever happens.
if ! unshare -m --propagation private sh -c '
    mount -t proc proc "$1/proc" &&
    chroot "$1" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
        sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $2 && apt-get clean"
    ' sh "$NEW" "${PACKAGES[*]}" >>"$LOG" 2>&1; then
    tail -n 20 "$LOG" >&2
    die "installing ${PACKAGES[*]} in the root failed (log: $LOG)"
fi
rm -rf "$NEW"/var/lib/apt/lists/* "$NEW"/var/cache/apt/*.bin
# torch reads the CPUs in /proc and /sys when it is imported.
version=$(unshare -m --propagation private sh -c '
    mount -t proc proc "$1/proc" && mount --bind /sys "$1/sys" &&
    chroot "$1" /usr/bin/python3 -c "import torch; print(\"torch\", torch.__version__)"
    ' sh "$NEW" 2>>"$LOG") || die "import torch fails in the new root (log: $LOG)"
echo "$version" >>"$LOG"

root_finish "$version"
