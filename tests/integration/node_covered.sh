#!/usr/bin/env bash
# A container whose /dev/shm tmpfs is covered by a later mount (here a bind
# over /dev): its path now leads to another file system. The node view must
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
