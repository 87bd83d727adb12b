# The cache discipline of the debootstrapped roots the tests use
# (rootfs.sh: Debian 13 with PyTorch 2.6; bookworm.sh: a bare Debian 12),
# sourced by both. A root lives outside the checkout so a fresh clone reuses
# it; it is built in a sibling directory and renamed into place with its stamp
# written last, so it is complete or absent; a stamp for another recipe means
# a rebuild; a lock beside it makes a second run wait for the first.
#
# The caller sets ROOT (where), NAME (for messages), WANT (the stamp's first
# line: everything the recipe depends on; root_mirror gives the mirror part)
# and defines root_ready (its own check that the tree is usable), then:
#   root_begin "$@"     handles --check and usage; exits printing $ROOT when it
#                       is built; else returns holding the lock, with NEW, LOG
#                       and START set and NEW removed
#   root_debootstrap SUITE    minbase into $NEW (log $LOG)
#   root_finish LINE...       moves $NEW to $ROOT, writes the stamp (WANT,
#                             then each LINE), prints $ROOT

STAMP=.shmwatch-root

die() {
    echo "$NAME: $*" >&2
    exit 1
}

# The Debian mirror apt uses here: the first URI of a source that serves a
# Debian suite (not -security, not a third-party repository);
# $SHMWATCH_DEBIAN_MIRROR wins, deb.debian.org is the last resort.
root_mirror() {
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

root_complete() {
    [ -f "$ROOT/$STAMP" ] && [ "$(head -n 1 "$ROOT/$STAMP")" = "$WANT" ] && root_ready
}

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

root_begin() {
    if [ "${1:-}" = --check ]; then
        root_complete
        exit
    fi
    [ $# -eq 0 ] || die "usage: $NAME [--check]"
    if root_complete; then
        echo "$ROOT"
        exit 0
    fi
    [ "$(id -u)" -eq 0 ] || die "building $ROOT needs root"
    command -v debootstrap >/dev/null || die "debootstrap is not installed (tests/deps.sh)"
    command -v flock >/dev/null || die "flock is not installed (util-linux)"
    mkdir -p "$(dirname "$ROOT")"
    exec {_root_lock}>"$ROOT.lock"
    if ! flock -n "$_root_lock"; then
        echo "$NAME: waiting for another build of $ROOT" >&2
        flock "$_root_lock"
    fi
    if root_complete; then # built by the run we waited for
        echo "$ROOT"
        exit 0
    fi
    NEW=$ROOT.new
    LOG=$ROOT.log
    START=$(date +%s)
    remove_tree "$NEW"
    : >"$LOG"
}

root_debootstrap() {
    local suite=$1 mirror
    mirror=$(root_mirror)
    echo "$NAME: building $ROOT ($suite minbase from $mirror); log: $LOG" >&2
    if ! debootstrap --variant=minbase "$suite" "$NEW" "$mirror" >>"$LOG" 2>&1; then
        tail -n 20 "$LOG" >&2
        die "debootstrap failed (log: $LOG)"
    fi
    echo "$NAME: debootstrap done in $(($(date +%s) - START)) s" >&2
}

root_finish() {
    local line
    remove_tree "$ROOT"
    mv "$NEW" "$ROOT"
    {
        echo "$WANT"
        for line in "$@"; do echo "$line"; done
        echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - START)) s"
    } >"$ROOT/$STAMP.tmp"
    mv "$ROOT/$STAMP.tmp" "$ROOT/$STAMP"
    echo "$NAME: built $ROOT in $(($(date +%s) - START)) s" >&2
    echo "$ROOT"
}
