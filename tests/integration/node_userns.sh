#!/usr/bin/env bash
# A user's rootless container (its own user and mount namespaces, made
# without privilege) may bind any tmpfs it can reach, say the host's /run,
# at its /dev/shm: the node view then lists the host's files as that
# container's. Root's `clean --all --all-unheld` (and `clean --pid`) must
# never remove through that view a file whose owner the container's user
# namespace does not map (root's files here): refused, with the reason;
# the container's own file (its owner mapped) is still removed.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setpriv
test_ns 16m --pid -- "$@"
_lib_tmp
NOBODY=(setpriv --reuid nobody --regid nogroup --clear-groups)
"${NOBODY[@]}" unshare -Urm true 2>/dev/null ||
    _lib_missing "user namespaces made without privilege (unshare -Ur as nobody)"

# The host's /run: a tmpfs with root's files, old and held by nobody.
run=$SHMTEST_TMP/hostrun
mkdir "$run"
mount -t tmpfs -o size=1m,mode=1777 tmpfs "$run" || fail "cannot mount the host's tmpfs"
on_exit "umount -l '$run'"
mkdir "$run/lock"
echo precious >"$run/utmp"
echo x >"$run/lock/sub"
"${NOBODY[@]}" sh -c "echo mine >'$run/mine'" || fail "nobody cannot write its own file"
touch -d '2 days ago' "$run/utmp" "$run/lock/sub" "$run/mine"

start_ctr() {
    rm -f "$SHMTEST_TMP/ready"
    "${NOBODY[@]}" unshare -Urm --propagation private sh -c \
        'mount --bind "$1" /dev/shm && : >"$2" && exec sleep 300' _ "$run" "$SHMTEST_TMP/ready" \
        </dev/null >/dev/null 2>&1 &
    CTR=$!
    on_exit "kill -KILL $CTR 2>/dev/null; wait $CTR 2>/dev/null; true"
    wait_for "[ -e $SHMTEST_TMP/ready ]" 30 || fail "the rootless container did not start"
}
start_ctr
ok "a rootless container (pid $CTR) shows the host's tmpfs at its /dev/shm"

check() { # OUT RC WHAT
    local out=$1 rc=$2 what=$3
    echo "$out"
    assert_eq "$rc" 3 "$what exits 3 (root's files refused)"
    for f in utmp lock/sub; do
        grep -q "^refused  */dev/shm/$f (in pid $CTR)  owned by uid 0, which its container's user namespace does not map" <<<"$out" ||
            fail "$what: /dev/shm/$f is not refused as a file the container's user namespace does not map"
    done
    [ "$(cat "$run/utmp")" = precious ] && [ -e "$run/lock/sub" ] || fail "$what removed root's files of the host's tmpfs"
    grep -q "^removed  */dev/shm/mine (in pid $CTR)" <<<"$out" && [ ! -e "$run/mine" ] ||
        fail "$what did not remove the container's own file"
    ok "$what: root's files of the host's tmpfs kept, the container's own file removed"
}
rc=0
out=$("$SHMWATCH" clean --all --all-unheld --min-age 1h --yes 2>&1) || rc=$?
check "$out" "$rc" "clean --all"

"${NOBODY[@]}" sh -c "echo mine >'$run/mine'" && touch -d '2 days ago' "$run/mine"
rc=0
out=$("$SHMWATCH" clean --pid "$CTR" --all-unheld --min-age 1h --yes 2>&1) || rc=$?
check "$out" "$rc" "clean --pid"
