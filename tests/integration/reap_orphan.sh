#!/usr/bin/env bash
# reap against real leftovers: the main process of a job is SIGKILLed and one
# of its workers, stuck and ignoring SIGTERM, survives as an orphan; a
# process keeps a zombie child and counts the SIGCHLD it receives. reap ends
# the worker with SIGKILL once the timeout has passed, sends the zombie's
# parent SIGCHLD, logs both; then the worker's named segment is an orphan
# that clean removes.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setsid /usr/bin/python3
# A private pid namespace: reap must see only this test's processes.
test_ns 64m --pid -- "$@"
_lib_tmp

SCENE_PREFIX=setsid scene_start --workers 1 --per-worker 2 --modes named,fd --stuck-orphan
stuck=$(manifest_pids stuck)
[ -n "$stuck" ] || fail "the scene has no stuck worker"
kill -KILL "$SCENE_PID"
wait_reparented "$stuck" "$SCENE_PID" || fail "the stuck worker was not re-parented"

# A parent that never reaps its child and counts the SIGCHLD it gets after.
count=$SHMTEST_TMP/sigchld.count
zombie_parent "$count"
parent=$ZOMBIE_PARENT
zombie=$ZOMBIE
before=$(cat "$count")

"$SHMWATCH" --json >"$SHMTEST_TMP/snap.json"
json_check "$SHMTEST_TMP/snap.json" "any(p['pid'] == $stuck and p['role'] == 'orphan_worker' for p in j['processes']) and any(p['pid'] == $zombie and p['role'] == 'zombie' for p in j['processes'])" \
    "the scan sees the orphaned worker and the zombie"

log=$SHMTEST_TMP/actions.log
t0=$(date +%s%N)
rc=0
out=$("$SHMWATCH" reap --yes --timeout 1.5 --log "$log" 2>&1) || rc=$?
t1=$(date +%s%N)
echo "$out"
assert_eq "$rc" 0 "reap exits 0"
grep -q "^killed  *pid $stuck (shmscene)  ignored SIGTERM for 1.5 s; ended by SIGKILL" <<<"$out" ||
    fail "the stuck worker's end is not reported"
[ $(((t1 - t0) / 1000000)) -ge 1500 ] || fail "SIGKILL came before the 1.5 s timeout"
wait_for "gone $stuck" 5 || fail "the stuck worker is still alive"
ok "the orphaned worker that ignores SIGTERM is SIGKILLed after the timeout"
grep -q "	signal TERM,KILL	pid $stuck (shmscene)	owner=0	bytes=0	killed	" "$log" ||
    fail "the kill is not in the action log"

wait_for "[ \"\$(cat $count)\" -gt $before ]" 5 || fail "the zombie's parent got no SIGCHLD"
ok "the zombie's parent received SIGCHLD ($before -> $(cat "$count"))"
grep -q "^zombie  *pid $zombie (python3)  already dead (a zombie).*parent pid $parent (python3) was sent SIGCHLD but does not reap it" <<<"$out" ||
    fail "the zombie is not explained"
grep -q "	signal CHLD	pid $parent (python3)	owner=0	bytes=0	sent	" "$log" ||
    fail "the SIGCHLD is not in the action log"
[ -d "/proc/$parent" ] || fail "the zombie's parent (not an orphaned worker) was ended"
ok "the zombie is explained and its parent, not a stuck worker, is left running"

# What the worker held is garbage now.
out=$("$SHMWATCH" clean --yes --log "$log" 2>&1) || fail "clean after reap exited $?"
grep -q "^removed  *.*/torch_${stuck}_0 " <<<"$out" || fail "the worker's segment was not cleaned: $out"
ok "the dead worker's segment is cleaned"

# A job whose main leads no process group (a script without job control
# started it: the script's shell leads the group, and lives on). SIGKILLed,
# the main leaves its named stuck worker orphaned while that leader runs:
# reap says what proves the orphan (its name, and a parent that is not its
# main), never that the leader is gone.
printf '%s\n' '"$@" &' 'wait' 'exec sleep 600' >"$SHMTEST_TMP/lead.sh"
SCENE_PREFIX="setsid bash $SHMTEST_TMP/lead.sh" scene_start --workers 1 --per-worker 1 \
    --modes named --stuck-orphan --worker-comm pt_data_worker
main=$(manifest_pids main)
stuck=$(manifest_pids stuck)
leader=$(awk '{ sub(/.*\) /, ""); print $3 }' "/proc/$stuck/stat")
assert_eq "$leader" "$SCENE_PID" "the job's shell leads the stuck worker's process group"
kill -KILL "$main"
wait_reparented "$stuck" "$main" || fail "the stuck worker was not re-parented"
[ -d "/proc/$leader" ] || fail "the process group's leader $leader is gone"
out=$("$SHMWATCH" reap --dry-run 2>&1) || fail "reap --dry-run exited $?: $out"
grep -qE "^  pid $stuck \(pt_data_worker\) uid 0  orphaned worker: a DataLoader worker by its name whose parent, pid [0-9]+ \([^)]*\), is not its main$" <<<"$out" ||
    fail "reap does not say what proves the orphan (its leader $leader lives): $out"
ok "the orphan whose group leader lives: $(grep -F "pid $stuck (" <<<"$out" | head -n 1)"
"$SHMWATCH" reap --yes --timeout 0.2 >/dev/null 2>&1 || fail "reap --yes exited $?"
wait_for "gone $stuck" 5 || fail "the stuck worker is still alive"

# A live job's main started by a script that has exited (`nohup python
# train.py &` in a script): reparented, holding its torch segment, the leader
# of its process group (the script's shell) gone. An orphaned worker without
# a worker's name or signals looks the same, so this proves no orphan: the
# main is a holder, reap never names it, and reap --yes leaves it running.
cat >"$SHMTEST_TMP/main.py" <<'PY'
import os, sys, time
fd = os.open("/dev/shm/torch_%d_1" % os.getpid(), os.O_CREAT | os.O_RDWR, 0o600)
os.ftruncate(fd, 4096)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
PY
setsid bash -c '/usr/bin/python3 "$1" "$2" & exit 0' bash "$SHMTEST_TMP/main.py" "$SHMTEST_TMP/main.pid"
wait_for '[ -s "$SHMTEST_TMP/main.pid" ]' 10 || fail "the script's job did not start"
live=$(cat "$SHMTEST_TMP/main.pid")
on_exit "kill -KILL $live 2>/dev/null"
pgid=$(awk '{ sub(/.*\) /, ""); print $3 }' "/proc/$live/stat")
[ "$pgid" != "$live" ] || fail "the job's main leads its own process group"
wait_for "[ ! -d /proc/$pgid ] || gone $pgid" 10 || fail "the script $pgid did not exit"
"$SHMWATCH" --json >"$SHMTEST_TMP/live.json"
json_check "$SHMTEST_TMP/live.json" "[p['role'] for p in j['processes'] if p['pid'] == $live] == ['holder'] and j['totals']['orphan_workers'] == 0" \
    "the live main whose launching script exited is a holder, not an orphaned worker"
out=$("$SHMWATCH" reap --dry-run 2>&1) || fail "reap --dry-run exited $?: $out"
grep -q "pid $live " <<<"$out" && fail "reap would end the live main $live: $out"
"$SHMWATCH" reap --yes --timeout 0.2 >/dev/null 2>&1 || fail "reap --yes exited $?"
kill -0 "$live" 2>/dev/null || fail "reap --yes ended the live main $live"
ok "reap leaves a live main whose launching script exited alone"
