#!/usr/bin/env bash
# A container whose /dev/shm tmpfs is covered by a later mount (a bind over
# /dev; a tmpfs over /dev, where the path leads nowhere): its path now leads
# to another file system, or none. The node view must
# say that plainly ("another mount covers it"), never that its live process
# "has exited", and never list or remove the files the path leads to now.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 16m --pid -- "$@"
_lib_tmp

mkdir -p "$SHMTEST_TMP/fakedev/shm"
echo precious >"$SHMTEST_TMP/fakedev/shm/precious"
touch -d '2 days ago' "$SHMTEST_TMP/fakedev/shm/precious"
unshare -m --propagation private bash -c '
    mount -t tmpfs -o size=2m tmpfs /dev/shm || exit 1
    : >/dev/shm/real
    mount --bind "$1/fakedev" /dev || exit 1
    : >"$1/ready"
    exec sleep 300' _ "$SHMTEST_TMP" </dev/null >/dev/null 2>&1 &
CTR=$!
on_exit "kill -KILL $CTR 2>/dev/null; wait $CTR 2>/dev/null; true"
wait_for "[ -e $SHMTEST_TMP/ready ]" 30 || fail "the namespace did not start"
export CTR

"$SHMWATCH" --all --json >"$SHMTEST_TMP/all.json" || fail "--all --json exited $?"
json_check "$SHMTEST_TMP/all.json" "not [w for w in j['warnings'] if 'exited' in w]" \
    "no live namespace is said to have exited" \
    "[w for w in j['warnings'] if 'another mount covers it' in w] != []" \
    "the covered mount is said to be covered" \
    "not [s for s in j['segments'] if s['name'] == 'precious']" \
    "the file the covered path leads to is not listed"
rc=0
"$SHMWATCH" clean --all --all-unheld --min-age 1h --yes >"$SHMTEST_TMP/clean.out" 2>&1 || rc=$?
[ "$(cat "$SHMTEST_TMP/fakedev/shm/precious")" = precious ] || fail "clean --all removed the file the covered path leads to"
! grep -q exited "$SHMTEST_TMP/clean.out" || fail "clean --all says a live namespace exited: $(cat "$SHMTEST_TMP/clean.out")"
ok "clean --all leaves the covering file system alone (exit $rc)"

# A tmpfs mounted over /dev, where no shm directory is: the covered path
# leads nowhere, and the mount is still shown, covered, never "exited".
unshare -m --propagation private bash -c '
    mount -t tmpfs -o size=2m tmpfs /dev/shm || exit 1
    head -c 4096 /dev/zero >/dev/shm/real
    exec 3</dev/shm/real
    mount -t tmpfs -o size=1m tmpfs /dev || exit 1
    : >"$1/ready2"
    exec sleep 300' _ "$SHMTEST_TMP" </dev/null >/dev/null 2>&1 &
CTR2=$!
on_exit "kill -KILL $CTR2 2>/dev/null; wait $CTR2 2>/dev/null; true"
wait_for "[ -e $SHMTEST_TMP/ready2 ]" 30 || fail "the second namespace did not start"
dev2=$(awk '$5 == "/dev/shm" { d = $3 } END { print d }' "/proc/$CTR2/mountinfo") # its own, the last
[ -n "$dev2" ] || fail "the second namespace shows no /dev/shm in its mountinfo"
export DEV2=$dev2
"$SHMWATCH" --all --json >"$SHMTEST_TMP/all2.json" || fail "--all --json exited $?"
json_check "$SHMTEST_TMP/all2.json" "[m['size_known'] for m in j['mounts'] if m['id'] == env['DEV2']] == [False]" \
    "the mount under a tmpfs over /dev is shown, its size unknown" \
    "not [w for w in j['warnings'] if 'exited' in w and env['DEV2'] in w]" \
    "it is never said to have exited" \
    "[w for w in j['warnings'] if 'another mount covers it' in w] != []" \
    "it is said to be covered"
