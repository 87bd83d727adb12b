#!/usr/bin/env bash
# An orphaned worker: a file_system job whose worker 0 is stuck in
# __getitem__ (sleeping, SIGTERM ignored) loses its main process to SIGKILL.
# The stuck worker is reparented and keeps its process group, whose leader is
# gone; its torch_shm_manager stays with it, and so do the named segments it
# made, which the main process held. shmwatch must call it orphan_worker, and
# `shmwatch reap --yes` must end it (SIGTERM is ignored: SIGKILL after the
# timeout), after which its manager frees its segments.
# The same with file_descriptor: the stuck worker then holds no torch segment
# and started no manager; only its process (libtorch loaded, torch's worker
# signal handlers) and its parent, which is not its main, tell what it is.
# And with the forkserver start method, whose forkserver (the main's child,
# the workers' parent) lives on when the main dies, as long as its workers do
# (they hold its pipe), and so do they: while the job lives reap offers none
# of its processes; once the main is killed, the workers are orphaned workers
# as forked ones are, and once reap has ended them the forkserver exits.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
# reap acts on every orphaned worker it can see: in a pid namespace of its own
# it sees only this test's processes (the dead main's orphans are
# reparented to this script, pid 1 here).
test_ns 64m --pid -- "$@"

torch_start --strategy file_system --start-method fork --workers 2 --hold-batches 2 \
    --stuck-worker --stuck-timeout 120
[ "$STUCK" != None ] && grep -q "^STUCK {.*\"pid\": $STUCK," "$TORCH_OUT" ||
    fail "worker 0 did not report being stuck: $(cat "$TORCH_OUT")"
torch_settle 2
STUCK_MANAGER=$(managers_of "$STUCK")
[ -n "$STUCK_MANAGER" ] || fail "the stuck worker $STUCK has no torch_shm_manager"
made=$(ls /dev/shm | grep -c "^torch_${STUCK}_")
[ "$made" -ge 2 ] || fail "the stuck worker made $made segments, expected its first batch"
ign=$(awk '$1 == "SigIgn:" { print $2 }' "/proc/$STUCK/status")
(((0x$ign >> 14) & 1)) || fail "worker $STUCK does not ignore SIGTERM (SigIgn $ign)"
ok "worker $STUCK is stuck with SIGTERM ignored, made $made segments, manager $STUCK_MANAGER"

kill -KILL "$MAIN"
torch_wait_exit 10
wait_reparented "$STUCK" "$MAIN" 5 || fail "worker $STUCK not reparented"
ok "main $MAIN killed; worker $STUCK lives on"

snap orphan
f=$SHMTEST_TMP/orphan.json
json_check "$f" "[(p['role'], p['group'], p['pgid']) for p in j['processes'] if p['pid'] == $STUCK] == [('orphan_worker', None, $MAIN)]" \
    "the stuck worker is an orphan_worker (its main $MAIN, the leader of its process group, is gone)" \
    "j['totals']['orphan_workers'] >= 1 and all(g['main_pid'] != $MAIN for g in j['groups'])" \
    "the orphan is counted and no group claims the dead main" \
    "[p['role'] for p in j['processes'] if p['pid'] == $STUCK_MANAGER] == ['shm_manager']" \
    "its torch_shm_manager is still a shm_manager" \
    "len([s for s in j['segments'] if s['creator_pid'] == $STUCK]) == $made and all(s['state'] == 'unheld' and s['creator_alive'] for s in j['segments'] if s['creator_pid'] == $STUCK)" \
    "its segments are unheld (their creator lives), not orphans"
grep -qE "orphan_worker +$STUCK " "$SHMTEST_TMP/orphan.txt" || fail "the text report does not show orphan_worker $STUCK"
ok "the text report shows the orphaned worker"

# What reap says proves a worker: PyTorch 1.13 names no worker, so its caught
# signals and libtorch do; 2.x names them pt_data_worker.
WORKER_PROOF='(python3\) uid 0  orphaned worker: a DataLoader worker by its caught signals and libtorch|pt_data_worker\) uid 0  orphaned worker: a DataLoader worker by its name)'
log=$SHMTEST_TMP/actions.log
rc=0
"$SHMWATCH" reap --dry-run --log "$log" >"$SHMTEST_TMP/dry.txt" 2>&1 || rc=$?
assert_eq "$rc" 0 "reap --dry-run exits 0"
grep -q "$STUCK" "$SHMTEST_TMP/dry.txt" || fail "reap --dry-run does not name $STUCK: $(cat "$SHMTEST_TMP/dry.txt")"
grep -qE "^  pid $STUCK \($WORKER_PROOF whose parent, pid 1 \([^)]*\), is not its main$" "$SHMTEST_TMP/dry.txt" ||
    fail "reap --dry-run does not say what proves the orphan: $(cat "$SHMTEST_TMP/dry.txt")"
kill -0 "$STUCK" 2>/dev/null || fail "reap --dry-run ended worker $STUCK"
ok "reap --dry-run names the worker and signals nothing"

rc=0
t0=$(date +%s%N)
"$SHMWATCH" reap --yes --timeout 1 --log "$log" >"$SHMTEST_TMP/reap.txt" 2>&1 || rc=$?
t1=$(date +%s%N)
assert_eq "$rc" 0 "reap --yes exits 0 ($(tail -n 1 "$SHMTEST_TMP/reap.txt"))"
gone "$STUCK" || fail "worker $STUCK is still alive after reap"
[ $(((t1 - t0) / 1000000)) -ge 900 ] || fail "reap took $(((t1 - t0) / 1000000)) ms: it did not wait the timeout after SIGTERM"
grep -q SIGKILL "$SHMTEST_TMP/reap.txt" || fail "reap does not report the SIGKILL: $(cat "$SHMTEST_TMP/reap.txt")"
ok "reap ended worker $STUCK with SIGKILL after the 1 s timeout"

wait_for '! ls /dev/shm | grep -q "^torch_${STUCK}_"' 10 ||
    fail "the stuck worker's segments are still there: $(ls /dev/shm)"
ok "its manager freed the worker's segments"
wait_for "gone $STUCK_MANAGER" 10 || fail "its manager $STUCK_MANAGER did not exit"
ok "its manager exited"
wait_for '[ "$(fs_used_bytes /dev/shm)" -eq 0 ]' 15 || fail "$(fs_used_bytes /dev/shm) bytes still used"
ok "the mount is empty"

# file_descriptor: nothing but the process itself shows it is a worker.
torch_start --strategy file_descriptor --start-method fork --workers 2 --hold-batches 2 \
    --stuck-worker --stuck-timeout 120
torch_settle
kill -KILL "$MAIN"
torch_wait_exit 10
wait_reparented "$STUCK" "$MAIN" 5 || fail "worker $STUCK not reparented"
snap fd
f=$SHMTEST_TMP/fd.json
json_check "$f" "not [s for s in j['segments'] if s['kind'] == 'torch' and any(h['pid'] == $STUCK for h in s['holders'])] and not [s for s in j['segments'] if s['creator_pid'] == $STUCK]" \
    "fd: the stuck worker holds and names no torch segment" \
    "[(p['role'], p['group']) for p in j['processes'] if p['pid'] == $STUCK] == [('orphan_worker', None)]" \
    "fd: the stuck worker is an orphan_worker all the same"
"$SHMWATCH" reap --dry-run >"$SHMTEST_TMP/dry-fd.txt" 2>&1 || fail "fd: reap --dry-run exited $?"
grep -qE "^  pid $STUCK \($WORKER_PROOF whose parent, pid 1 \([^)]*\), is not its main$" "$SHMTEST_TMP/dry-fd.txt" ||
    fail "fd: reap --dry-run does not say what proves the orphan: $(cat "$SHMTEST_TMP/dry-fd.txt")"
ok "fd: reap says what proves it: $(grep -F "pid $STUCK (" "$SHMTEST_TMP/dry-fd.txt" | head -n 1)"
rc=0
"$SHMWATCH" reap --yes --timeout 1 --log "$log" >"$SHMTEST_TMP/reap-fd.txt" 2>&1 || rc=$?
assert_eq "$rc" 0 "fd: reap --yes exits 0 ($(tail -n 1 "$SHMTEST_TMP/reap-fd.txt"))"
gone "$STUCK" || fail "fd: worker $STUCK is still alive after reap"
ok "fd: reap ended worker $STUCK"
wait_for '[ "$(fs_used_bytes /dev/shm)" -eq 0 ]' 15 || fail "fd: $(fs_used_bytes /dev/shm) bytes still used"
ok "fd: the mount is empty"

# forkserver: the workers are the forkserver's children, not the main's.
torch_start --strategy file_descriptor --start-method forkserver --workers 2 --hold-batches 2 \
    --stuck-worker --stuck-timeout 120
torch_settle
FORKSERVER=$(ps -o ppid= -p "$STUCK" | tr -d ' ')
[ "$(ps -o ppid= -p "$FORKSERVER" | tr -d ' ')" = "$MAIN" ] && grep -q 'from multiprocessing.forkserver import main' "/proc/$FORKSERVER/cmdline" ||
    fail "forkserver: worker $STUCK's parent $FORKSERVER is not the main's forkserver"
snap live
json_check "$SHMTEST_TMP/live.json" "[(p['role'], p['group']) for p in j['processes'] if p['pid'] in [$MAIN] + $WORKERS] == [('main', $MAIN)] + [('worker', $MAIN)] * len($WORKERS) and j['totals']['orphan_workers'] == 0" \
    "forkserver: while the job lives, main $MAIN and its workers, no orphaned worker"
"$SHMWATCH" reap --dry-run >"$SHMTEST_TMP/dry-live.txt" 2>&1 || fail "forkserver: reap --dry-run exited $?"
grep -q "^Nothing to reap" "$SHMTEST_TMP/dry-live.txt" ||
    fail "forkserver: reap offers a live job's process: $(cat "$SHMTEST_TMP/dry-live.txt")"
assert_eq "$(tail -n 1 "$SHMTEST_TMP/dry-live.txt")" "Total: 0 would be signalled, 0 refused." \
    "forkserver: reap of nothing ends with its total"
ok "forkserver: reap offers nothing of the live job"
kill -KILL "$MAIN"
torch_wait_exit 10
wait_reparented "$FORKSERVER" "$MAIN" 5 || fail "forkserver: the forkserver $FORKSERVER not reparented"
# shellcheck disable=SC2086 # a list of pids
gone $FORKSERVER $WORKER_PIDS && fail "forkserver: the forkserver or a worker exited with the main"
snap forkserver
f=$SHMTEST_TMP/forkserver.json
json_check "$f" "all([(p['role'], p['group']) for p in j['processes'] if p['pid'] == w] == [('orphan_worker', None)] for w in $WORKERS) and not j['groups'] and [p['role'] for p in j['processes'] if p['pid'] == $FORKSERVER] in ([], ['holder'])" \
    "forkserver: the workers are orphan_workers once their main is gone, in no group; the forkserver has no DataLoader role"
"$SHMWATCH" reap --dry-run >"$SHMTEST_TMP/dry-forkserver.txt" 2>&1 || fail "forkserver: reap --dry-run exited $?"
for w in $WORKER_PIDS; do
    grep -qE "^  pid $w \($WORKER_PROOF whose parent, pid $FORKSERVER \([^)]*\), is not its main$" "$SHMTEST_TMP/dry-forkserver.txt" ||
        fail "forkserver: reap --dry-run does not say what proves orphan $w: $(cat "$SHMTEST_TMP/dry-forkserver.txt")"
done
grep -qE "^  pid $FORKSERVER " "$SHMTEST_TMP/dry-forkserver.txt" &&
    fail "forkserver: reap --dry-run offers the forkserver: $(cat "$SHMTEST_TMP/dry-forkserver.txt")"
ok "forkserver: reap offers the workers, saying what proves them"
rc=0
"$SHMWATCH" reap --yes --timeout 1 --log "$log" >"$SHMTEST_TMP/reap-forkserver.txt" 2>&1 || rc=$?
assert_eq "$rc" 0 "forkserver: reap --yes exits 0 ($(tail -n 1 "$SHMTEST_TMP/reap-forkserver.txt"))"
# shellcheck disable=SC2086 # a list of pids
gone $WORKER_PIDS || fail "forkserver: a worker is still alive after reap"
ok "forkserver: reap ended the workers"
wait_for "gone $FORKSERVER" 10 || fail "forkserver: the forkserver $FORKSERVER outlives its workers"
ok "forkserver: the forkserver exits once its workers are gone"
wait_for '[ "$(fs_used_bytes /dev/shm)" -eq 0 ]' 15 || fail "forkserver: $(fs_used_bytes /dev/shm) bytes still used"
ok "forkserver: the mount is empty"
