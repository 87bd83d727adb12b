#!/usr/bin/env bash
# A killed file_system job, recorded and explained: SIGKILL to its main
# process, its workers and their torch_shm_managers while `shmwatch record`
# runs, as an OOM kill or a container stop does. Every named batch stays
# behind. `shmwatch why` must tell the main's death with the orphans its job
# left (how many, how many bytes, since when), each manager's as "the shm
# manager died: its job's ... of batches are orphans since ...".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
. "$(dirname "$0")/why_lib.sh"
torch_need
record_need
test_ns 64m -- "$@"

torch_fs_job 3

record_start --interval 0.5
record_wait "r.get('schema') == 1 and any(g['main_pid'] == $MAIN and len(g['shm_managers']) == 3 for g in r['groups'])" 20 ||
    fail "the recording never showed the job with its 3 managers"
ok "the recording shows the job: main $MAIN, workers $WORKER_PIDS, managers $MANAGER_PIDS"

KILL_SENT=$(date +%s)
torch_kill_job
# The leftovers are orphans since the kill: between KILL_SENT and the moment
# the job was seen gone (KILLED_AT), however slow a loaded machine made that.
KILLED_AT=$(date +%s)
left=$(ls /dev/shm | grep -c '^torch_')
used=$(fs_used_bytes /dev/shm)
[ "$left" -ge 4 ] || fail "too few files left: $left"
record_wait "r.get('event') == 'exit' and r['pid'] == $MAIN" 20 || fail "no exit of the main in the recording"
# A snapshot after the deaths that shows the leftovers held by nobody.
record_wait "r.get('schema') == 1 and not r['groups'] and len([s for s in r['segments'] if s['state'] in ('orphan', 'unheld')]) == $left" 20 ||
    fail "no snapshot after the deaths shows the $left leftovers"
record_stop
ok "$left torch files ($used bytes) left behind, recorded"

why_run --json
assert_eq "$WHY_RC" 4 "why exits 4 ($(head -c 300 "$WHY_ERR"))"
j=$SHMTEST_TMP/why.json
cp "$WHY_OUT" "$j"
json_check "$j" "sorted(d['pid'] for d in j['deaths']) == sorted([$MAIN] + $WORKERS + [$(echo $MANAGER_PIDS | tr ' ' ,)]) and all(d['cause'] == 'signal' and d['signal'] == 'SIGKILL' for d in j['deaths'])" \
    "every process of the job: killed by SIGKILL" \
    "(lambda d: d['left_behind']['segments'] == $left and d['left_behind']['bytes'] == $used and $KILL_SENT - 1 <= __import__('calendar').timegm(__import__('time').strptime(d['left_behind']['since'][:19], '%Y-%m-%dT%H:%M:%S')) <= $KILLED_AT + 5 and 'orphans since' in d['diagnosis'])([d for d in j['deaths'] if d['pid'] == $MAIN][0])" \
    "the main's end: its job left $left segments ($used bytes), orphans since the kill" \
    "all('The shm manager died: its job\\'s ' in d['diagnosis'] and 'of batches are orphans since' in d['diagnosis'] for d in j['deaths'] if d['role'] == 'shm_manager') and len([d for d in j['deaths'] if d['role'] == 'shm_manager']) == 3" \
    "each shm manager's end in the guide's words"
why_run --pid "$MAIN"
assert_eq "$WHY_RC" 4 "why --pid of the main"
grep -q "^main $MAIN (python3): killed by SIGKILL at " "$WHY_OUT" || fail "the text: $(head -n 3 "$WHY_OUT")"
grep -q "^  left behind: $left segments, " "$WHY_OUT" || fail "the text has no leftovers: $(cat "$WHY_OUT")"
ok "the text: $(grep -m1 '^  left behind' "$WHY_OUT")"

