#!/usr/bin/env bash
# The JSON outputs and doc/shmwatch.1 say the same (tests/integration/
# doc_schema.py): every field that the snapshot, plan --json and why --json
# write is named in the section that documents it (JSON SNAPSHOT, PLAN,
# WHY), and every field of the section's schema block is there with the type
# or the values it is documented with ((int|null), (bool), "ok"|"warn", ...).
# The scene fills every object the blocks show (a DataLoader group with its
# holders, orphans, unheld files, a zombie, a budget with a loader; a worker
# killed while shmwatch record runs, for why), and a System V segment, in an
# IPC namespace of its own, fills the snapshot's sysv list.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
# A private pid namespace: only this test's processes are reported.
test_ns 64m --pid -- "$@"
MANPAGE=$SRCDIR/doc/shmwatch.1
[ -r "$MANPAGE" ] || fail "cannot read $MANPAGE"
unshare -i true 2>/dev/null || _lib_missing "a private IPC namespace (unshare -i)"

scene_start --workers 2 --per-worker 4 --orphans 2 --unheld 1 --zombies 1
hold_new_file /dev/shm/in_use_outside
# shmwatch runs beside a System V segment of its own IPC namespace, attached
# by the process that made it, so that the namespace ends with the test.
snap=$SHMTEST_TMP/snap.json
unshare -i /usr/bin/python3 -c '
import ctypes, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(0x5eed, 65536, 0o1600)
if shmid < 0 or libc.shmat(shmid, None, 0) in (None, ctypes.c_void_p(-1).value):
    sys.exit("cannot make a System V segment: errno %d" % ctypes.get_errno())
with open(sys.argv[2], "w") as out:
    sys.exit(subprocess.run([sys.argv[1], "--json"], stdout=out).returncode)
' "$SHMWATCH" "$snap" || fail "shmwatch --json beside a System V segment exited $?"

schema() { # SECTION JSONFILE [--names-only]
    /usr/bin/python3 "$SRCDIR/tests/integration/doc_schema.py" "$MANPAGE" "$@" || exit 1
}
schema "JSON SNAPSHOT" "$snap"
"$SHMWATCH" --json --pid "$SCENE_PID" >"$SHMTEST_TMP/pid.json" || fail "shmwatch --json --pid exited $?"
schema "JSON SNAPSHOT" "$SHMTEST_TMP/pid.json"

"$SHMWATCH" plan -b 32 -s 3x224x224,1:int64 -w 4 -m 8g --shm-size 2g --json \
    >"$SHMTEST_TMP/plan.json" || fail "shmwatch plan --json exited $?"
schema PLAN "$SHMTEST_TMP/plan.json"
"$SHMWATCH" plan --observe "$SCENE_PID" --json >"$SHMTEST_TMP/observe.json" ||
    fail "shmwatch plan --observe --json exited $?"
schema PLAN "$SHMTEST_TMP/observe.json" --names-only

# why: a recording in which a worker of the scene is killed.
store=$SHMTEST_TMP/rec
"$SHMWATCH" record --dir "$store" --interval 0.2 2>"$SHMTEST_TMP/record.err" &
recorder=$!
on_exit "kill -TERM $recorder 2>/dev/null; wait $recorder 2>/dev/null"
# shellcheck disable=SC2016 # wait_for evaluates it
wait_for '[ -n "$(store_records "$store" "r.get(\"schema\") == 1")" ]' 30 ||
    fail "the recorder wrote no snapshot: $(cat "$SHMTEST_TMP/record.err")"
worker=$(manifest_pids worker | head -n 1)
kill -KILL "$worker"
exits() { store_records "$store" "r[\"event\"] == \"exit\" and r[\"pid\"] == $worker"; }
# shellcheck disable=SC2016 # wait_for evaluates it
wait_for '[ -n "$(exits)" ]' 30 || fail "the recording has no exit of worker $worker"
# and two snapshots after it, the last of which shows what it left behind
end=$(exits | /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["time"])')
after() { store_records "$store" "r.get(\"schema\") == 1 and r[\"time\"] > \"$end\""; }
# shellcheck disable=SC2016 # wait_for evaluates it
wait_for '[ "$(after | wc -l)" -ge 2 ]' 30 || fail "the recording has no snapshots after worker $worker's end"
kill -TERM "$recorder"
wait "$recorder" || fail "the recorder exited $? on SIGTERM: $(cat "$SHMTEST_TMP/record.err")"
rc=0
"$SHMWATCH" why --dir "$store" --json >"$SHMTEST_TMP/why.json" || rc=$?
[ "$rc" -eq 4 ] || fail "shmwatch why --json exited $rc, expected 4 (a worker was killed)"
schema WHY "$SHMTEST_TMP/why.json"
