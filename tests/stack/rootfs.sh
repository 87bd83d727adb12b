#!/usr/bin/env bash
# Builds (once) and prints the path of a Debian 13 ("trixie") root holding
# python3-torch 2.6, for the tests that run the real DataLoader on PyTorch 2.x:
# by chroot (tests/integration/torch_lib.sh) and as a Docker image
# (tests/stack/docker.sh).
#
#   root=$(bash tests/stack/rootfs.sh)      # builds it if needed, prints its path
#   bash tests/stack/rootfs.sh --check      # exit 0 if it is built, 1 if not
#
# The root lives in a cache outside the checkout, so a fresh clone (CI) reuses
# it: $SHMWATCH_TORCH_ROOT, by default /var/cache/shmwatch-tests/trixie-torch.
# It is built in a sibling directory and renamed into place with its stamp
# file written last, so a root is either complete or absent; a stamp for
# another recipe (suite, mirror, packages) means a rebuild. A lock beside it
# makes a second run wait for the first one's build instead of racing it.
#
# Mirror: $SHMWATCH_DEBIAN_MIRROR, else the one this machine's apt uses for
# Debian (/etc/apt/sources.list*), else deb.debian.org. Needs root,
# debootstrap (tests/deps.sh) and the network the first time; a build takes
# some minutes (logged to $ROOT.log).
set -euo pipefail

ROOT=${SHMWATCH_TORCH_ROOT:-/var/cache/shmwatch-tests/trixie-torch}
SUITE=trixie
PACKAGES=(python3-torch)
STAMP=.shmwatch-root
# Bump when the recipe below changes in a way that needs a rebuild.
RECIPE=1

die() {
    echo "rootfs.sh: $*" >&2
    exit 1
}

# The Debian mirror apt uses here: the first URI of a source that serves a
# Debian suite (not -security, not a third-party repository).
mirror() {
    if [ -n "${SHMWATCH_DEBIAN_MIRROR:-}" ]; then
        echo "$SHMWATCH_DEBIAN_MIRROR"
        return
    fi
    local uri
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /=/) { print $i; break } }' |
        grep -E '/debian/?$' | head -n 1 || true)
    [ -n "$uri" ] || uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '$1 == "URIs:" { for (i = 2; i <= NF; i++) print $i }' |
        grep -E '/debian/?$' | head -n 1 || true)
    echo "${uri:-http://deb.debian.org/debian}"
}

MIRROR=$(mirror)
WANT="recipe=$RECIPE suite=$SUITE mirror=$MIRROR packages=${PACKAGES[*]}"

complete() {
    [ -f "$ROOT/$STAMP" ] && [ "$(head -n 1 "$ROOT/$STAMP")" = "$WANT" ] &&
        [ -x "$ROOT/usr/bin/python3" ]
}

if [ "${1:-}" = --check ]; then
    complete
    exit
fi
[ $# -eq 0 ] || die "usage: rootfs.sh [--check]"

if complete; then
    echo "$ROOT"
    exit 0
fi

[ "$(id -u)" -eq 0 ] || die "building $ROOT needs root"
command -v debootstrap >/dev/null || die "debootstrap is not installed (tests/deps.sh)"
command -v flock >/dev/null || die "flock is not installed (util-linux)"
mkdir -p "$(dirname "$ROOT")"
exec {lock}>"$ROOT.lock"
if ! flock -n "$lock"; then
    echo "rootfs.sh: waiting for another build of $ROOT" >&2
    flock "$lock"
fi
if complete; then # built by the run we waited for
    echo "$ROOT"
    exit 0
fi

NEW=$ROOT.new
LOG=$ROOT.log

# Removes a directory tree that may hold a mount left by a killed build, never
# crossing into another file system.
remove_tree() {
    local d=$1 m
    [ -e "$d" ] || return 0
    for m in $(awk -v d="$d" '{ if (index($5, d "/") == 1) print $5 }' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
    rm -rf --one-file-system "$d"
}

remove_tree "$NEW"
start=$(date +%s)
echo "rootfs.sh: building $ROOT ($SUITE from $MIRROR with ${PACKAGES[*]}); log: $LOG" >&2
: >"$LOG"
if ! debootstrap --variant=minbase "$SUITE" "$NEW" "$MIRROR" >>"$LOG" 2>&1; then
    tail -n 20 "$LOG" >&2
    die "debootstrap failed (log: $LOG)"
fi
echo "rootfs.sh: debootstrap done in $(($(date +%s) - start)) s" >&2

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

remove_tree "$ROOT"
mv "$NEW" "$ROOT"
{
    echo "$WANT"
    echo "$version"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - start)) s"
} >"$ROOT/$STAMP.tmp"
mv "$ROOT/$STAMP.tmp" "$ROOT/$STAMP"
echo "rootfs.sh: built $ROOT ($version) in $(($(date +%s) - start)) s" >&2
echo "$ROOT"
