#!/usr/bin/env bash
# The node view on a node of many containers under a low fd limit
# (ulimit -n 256): 150 mount namespaces, each with its own tmpfs at
# /dev/shm holding one file. Every mount must be listed with its size and
# its file, none said to have "exited" (their processes all live) and no
# read fail with "Too many open files": shmwatch keeps open only the roots
# its fd limit has room for and re-opens the others one at a time.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need prlimit
# A private pid namespace: --all sees this test's namespaces besides the host's.
test_ns 16m --pid -- "$@"
_lib_tmp

N=150
PIDS=()
on_exit 'kill -KILL "${PIDS[@]}" 2>/dev/null; wait "${PIDS[@]}" 2>/dev/null; true'
for i in $(seq "$N"); do
    unshare -m --propagation private bash -c '
        mount -t tmpfs -o size=1m tmpfs /dev/shm || exit 1
        : >"/dev/shm/fdtest_$1" || exit 1
        : >"$2/ready.$1"
        exec sleep 300' _ "$i" "$SHMTEST_TMP" </dev/null >/dev/null 2>&1 &
    PIDS+=($!)
done
wait_for "[ \$(ls $SHMTEST_TMP | grep -c '^ready\\.') -eq $N ]" 30 ||
    fail "only $(ls "$SHMTEST_TMP" | grep -c '^ready\.') of $N namespaces started"
ok "$N mount namespaces, each with its own /dev/shm and one file"

snap=$SHMTEST_TMP/all.json
prlimit --nofile=256:256 "$SHMWATCH" --all --json >"$snap" 2>"$SHMTEST_TMP/all.err" ||
    fail "--all --json under 256 fds exited $?: $(head -c 300 "$SHMTEST_TMP/all.err")"
export N
json_check "$snap" "not [w for w in j['warnings'] if 'exited' in w or 'open files' in w]" \
    "no mount is said to have exited and no read ran out of fds" \
    "len([m for m in j['mounts'] if m['size_bytes'] == 1 << 20]) == int(env['N'])" \
    "every namespace's 1 MiB mount is listed with its size" \
    "sorted(s['name'] for s in j['segments'] if s['name'].startswith('fdtest_')) == sorted('fdtest_%d' % i for i in range(1, int(env['N']) + 1))" \
    "every namespace's file is listed"

prlimit --nofile=256:256 "$SHMWATCH" clean --all --all-unheld --min-age 0 --dry-run \
    >"$SHMTEST_TMP/clean.out" 2>&1 || fail "clean --all --dry-run under 256 fds exited $?: $(grep -v fdtest_ "$SHMTEST_TMP/clean.out" | head -c 600)"
! grep -E 'exited|open files' "$SHMTEST_TMP/clean.out" ||
    fail "clean --all says a live namespace exited or ran out of fds"
[ "$(grep -c '^would remove /dev/shm/fdtest_.*every check passed' "$SHMTEST_TMP/clean.out")" -eq "$N" ] ||
    fail "clean --all would not remove every namespace's file: $(grep -v '^would remove' "$SHMTEST_TMP/clean.out" | grep -m3 fdtest_)"
ok "clean --all under 256 fds: every namespace's file passes every check, through its own view"

# The dashboard keeps a view per gauge (pinned to the process it reads the
# mount through: its pidfd and root) open only while its fd limit has room:
# with 150 mounts under 200 fds it must keep at most about half (the scans
# need the rest).
. "$(dirname "$0")/tui_lib.sh"
TUI_PREFIX="prlimit --nofile=200:200" tui_start 120 30 --all
tui_wait '^\+[0-9]+ more mounts' 20
# Through two more scans and many gauge refreshes it never holds more than 120.
fds() { ls "/proc/$TUI_PID/fd" | wc -l; }
stays_false '[ "$(fds)" -gt 120 ]' 5 || { tui_dump; fail "the dashboard holds $(fds) fds of its 200 with $N mounts"; }
nfds=$(fds)
tui_gone 'cannot read the size' 5
tui_quit
ok "the node view's dashboard under 200 fds: $nfds fds held, every gauge read"

# The views kept closed for want of fds are still pinned: the first
# namespace's process killed between the plan and the unlinks is refused
# ("its container exited"), every other file removed through its own view.
HOOKED=${SHMWATCH_HOOKED:-$SHMWATCH}
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=3 prlimit --nofile=256:256 \
    "$HOOKED" clean --all --all-unheld --min-age 0 --yes >"$SHMTEST_TMP/yes.out" 2>&1 &
cl=$!
wait_for "grep -q 'to remove' $SHMTEST_TMP/yes.out" 10 || fail "clean --all --yes planned nothing"
victim=$(grep -m1 '/dev/shm/fdtest_1 (in pid ' "$SHMTEST_TMP/yes.out" | sed 's/.*(in pid \([0-9]*\)).*/\1/')
[ "$victim" = "${PIDS[0]}" ] || fail "fdtest_1 is not planned in its namespace's process ${PIDS[0]}: '$victim'"
kill -KILL "$victim"
wait "$victim" 2>/dev/null # reaped: gone, as the fixed pause let it be
: >"$GATE"
rc=0
wait "$cl" || rc=$?
assert_eq "$rc" 3 "clean --all --yes under 256 fds exits 3 (one namespace exited before its unlink)"
grep -q "^refused  */dev/shm/fdtest_1 (in pid $victim)  its container exited" "$SHMTEST_TMP/yes.out" ||
    fail "fdtest_1 is not refused as 'container exited': $(grep 'fdtest_1 ' "$SHMTEST_TMP/yes.out")"
[ "$(grep -c '^removed  */dev/shm/fdtest_' "$SHMTEST_TMP/yes.out")" -eq $((N - 1)) ] ||
    fail "not every other file was removed: $(grep -v '^removed' "$SHMTEST_TMP/yes.out" | grep -m3 fdtest_)"
for p in "${PIDS[@]:1:3}"; do
    [ -z "$(ls -A "/proc/$p/root/dev/shm")" ] || fail "namespace of $p still holds $(ls "/proc/$p/root/dev/shm")"
done
ok "the exited namespace's unlink is refused, the $((N - 1)) others' files removed in their own namespaces"
