#!/usr/bin/env bash
# PID reuse (in a private pid namespace, so that reap sees only this test's
# processes): reap records an orphaned worker (pid and start time); while it
# is paused before signalling (SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL) the worker
# dies and its pid is handed to a new, innocent process (ns_last_pid in a
# private pid namespace). reap must see a different process and refuse:
# the newcomer lives, the refusal is reported, exit 3.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need setsid
test_ns 64m --pid -- "$@"
[ -w /proc/sys/kernel/ns_last_pid ] || _lib_missing "a writable /proc/sys/kernel/ns_last_pid"
_lib_tmp

SCENE_PREFIX=setsid scene_start --workers 1 --per-worker 1 --modes named --stuck-orphan
stuck=$(manifest_pids stuck)
kill -KILL "$SCENE_PID"
wait_reparented "$stuck" "$SCENE_PID" || fail "the stuck worker was not re-parented"

out_file=$SHMTEST_TMP/reap.out
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL=3 "$SHMWATCH_HOOKED" reap --yes \
    --timeout 1 --log "$SHMTEST_TMP/actions.log" >"$out_file" 2>&1 &
reap_pid=$!
wait_for "grep -q 'Orphaned workers to end' $out_file" 20 || fail "no plan: $(cat "$out_file")"
grep -q "^  pid $stuck " "$out_file" || fail "the stuck worker is not in the plan"

# The worker dies and is reaped (we are pid 1 here); its pid goes to a newcomer.
kill -KILL "$stuck"
pid_to_newcomer "$stuck"
newcomer=$NEWCOMER
: >"$GATE"

rc=0
wait "$reap_pid" || rc=$?
out=$(cat "$out_file")
echo "$out"
assert_eq "$rc" 3 "reap exits 3"
grep -q "^refused  *pid $stuck (shmscene)  pid $stuck is now a different process (sleep, started after the scan): not signalled" <<<"$out" ||
    fail "the refusal is not reported"
stays_false '! kill -0 "$newcomer" 2>/dev/null || [ "$(cat /proc/$newcomer/comm 2>/dev/null)" != sleep ]' 0.5 ||
    fail "the newcomer was signalled"
ok "a pid taken by a new process is not signalled"
