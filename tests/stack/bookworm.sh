#!/usr/bin/env bash
# Builds (once) and prints the path of a minimal Debian 12 ("bookworm") root,
# a bare system to install the .deb into (tests/integration/package.sh):
#
#   root=$(bash tests/stack/bookworm.sh)      # builds it if needed, prints its path
#   bash tests/stack/bookworm.sh --check      # exit 0 if it is built, 1 if not
#
# debootstrap --variant=minbase, nothing added, documentation kept (the test
# checks what the package installs there). Cached outside the checkout at
# $SHMWATCH_BOOKWORM_ROOT (default /var/cache/shmwatch-tests/bookworm); built
# in a sibling directory and renamed into place with its stamp written last,
# so it is complete or absent; a lock makes a second run wait for the first.
# Tests use it read-only (an overlay on top), so it stays bare.
# Mirror: $SHMWATCH_DEBIAN_MIRROR, else the one this machine's apt uses, else
# deb.debian.org. Needs root, debootstrap and the network the first time.
set -euo pipefail

ROOT=${SHMWATCH_BOOKWORM_ROOT:-/var/cache/shmwatch-tests/bookworm}
SUITE=bookworm
STAMP=.shmwatch-root
RECIPE=1

die() {
    echo "bookworm.sh: $*" >&2
    exit 1
}

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
WANT="recipe=$RECIPE suite=$SUITE variant=minbase mirror=$MIRROR"

complete() {
    [ -f "$ROOT/$STAMP" ] && [ "$(head -n 1 "$ROOT/$STAMP")" = "$WANT" ] && [ -x "$ROOT/usr/bin/apt-get" ]
}

if [ "${1:-}" = --check ]; then
    complete
    exit
fi
[ $# -eq 0 ] || die "usage: bookworm.sh [--check]"
if complete; then
    echo "$ROOT"
    exit 0
fi
[ "$(id -u)" -eq 0 ] || die "building $ROOT needs root"
command -v debootstrap >/dev/null || die "debootstrap is not installed (tests/deps.sh)"
mkdir -p "$(dirname "$ROOT")"
exec {lock}>"$ROOT.lock"
if ! flock -n "$lock"; then
    echo "bookworm.sh: waiting for another build of $ROOT" >&2
    flock "$lock"
fi
if complete; then
    echo "$ROOT"
    exit 0
fi

NEW=$ROOT.new
LOG=$ROOT.log
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
echo "bookworm.sh: building $ROOT ($SUITE minbase from $MIRROR); log: $LOG" >&2
if ! debootstrap --variant=minbase "$SUITE" "$NEW" "$MIRROR" >"$LOG" 2>&1; then
    tail -n 20 "$LOG" >&2
    die "debootstrap failed (log: $LOG)"
fi
rm -rf "$NEW"/var/cache/apt/archives/*.deb
remove_tree "$ROOT"
mv "$NEW" "$ROOT"
{
    echo "$WANT"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - start)) s"
} >"$ROOT/$STAMP.tmp"
mv "$ROOT/$STAMP.tmp" "$ROOT/$STAMP"
echo "bookworm.sh: built $ROOT in $(($(date +%s) - start)) s" >&2
echo "$ROOT"
