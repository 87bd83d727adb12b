#!/usr/bin/env bash
# A killed file_system job: SIGKILL the main process, its workers and their
# torch_shm_managers (each in a session of its own, so a kill of the job's
# process group misses them: they are found through their parent and killed
# by pid), as an OOM kill or a container stop does. Every named segment stays
# behind. shmwatch must call each of them an orphan of its dead creator, and
# `shmwatch clean --yes` must free the mount completely.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
test_ns 64m -- "$@"

torch_fs_job 3
torch_kill_job
ok "main $MAIN, workers $WORKER_PIDS and managers $MANAGER_PIDS killed"

left=$(ls /dev/shm | grep '^torch_' | sort)
[ "$(echo "$left" | wc -l)" -ge $((2 * HELD)) ] || fail "too few files left: $left"
used=$(fs_used_bytes /dev/shm)
[ "$used" -gt 0 ] || fail "nothing left in the mount"
ok "$(echo "$left" | wc -l) torch files ($used bytes) are left behind"

snap killed
f=$SHMTEST_TMP/killed.json
LEFT=$(printf '%s\n' "$left" | "$PY" -c 'import sys; print(sorted(l.strip() for l in sys.stdin if l.strip()))')
json_check "$f" "sorted(s['name'] for s in j['segments'] if s['state'] == 'orphan') == $LEFT" \
    "every leftover file is an orphan" \
    "all(s['kind'] == 'torch' and s['creator_pid'] in $WORKERS and s['creator_alive'] is False and s['holders'] == [] and s['group'] is None for s in j['segments'] if s['state'] == 'orphan')" \
    "each orphan names its dead worker as creator and has no holder" \
    "j['totals']['orphans'] == len($LEFT) and j['mounts'][0]['orphan_bytes'] == j['mounts'][0]['used_bytes'] == $used" \
    "all of the mount's used bytes are orphans" \
    "all(g['main_pid'] != $MAIN for g in j['groups']) and not [p for p in j['processes'] if p['pid'] in [$MAIN] + $WORKERS and p['role'] != 'zombie']" \
    "the dead job has no group and no live process"
grep -q '^ORPHANS' "$SHMTEST_TMP/killed.txt" || fail "the text report has no ORPHANS section"
ok "the text report lists the orphans"

# Dry run first: the plan names every file and removes none.
log=$SHMTEST_TMP/actions.log
rc=0
"$SHMWATCH" clean --dry-run --log "$log" >"$SHMTEST_TMP/dry.txt" 2>&1 || rc=$?
assert_eq "$rc" 0 "clean --dry-run exits 0"
for n in $left; do
    grep -qF "$n" "$SHMTEST_TMP/dry.txt" || fail "clean --dry-run does not name $n: $(head -c 1500 "$SHMTEST_TMP/dry.txt")"
done
assert_eq "$(ls /dev/shm | grep -c '^torch_')" "$(echo "$left" | wc -l)" "clean --dry-run removes nothing"

rc=0
"$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/clean.txt" 2>&1 || rc=$?
assert_eq "$rc" 0 "clean --yes exits 0 ($(tail -n 1 "$SHMTEST_TMP/clean.txt"))"
assert_eq "$(ls -A /dev/shm)" "" "the mount is empty"
assert_eq "$(fs_used_bytes /dev/shm)" 0 "its used bytes are 0"
snap cleaned
json_check "$SHMTEST_TMP/cleaned.json" "j['segments'] == [] and j['mounts'][0]['used_bytes'] == 0 and j['totals']['orphans'] == 0" \
    "shmwatch sees an empty mount"
[ -s "$log" ] && grep -qF "$(echo "$left" | head -n 1)" "$log" || fail "the action log does not record the unlinks"
ok "every unlink is in the action log"
