#!/usr/bin/env bash
# docker run --ipc=host (or -v /dev/shm:/dev/shm, a hostIPC pod) in a real
# container: a file_system DataLoader writes into a /dev/shm it shares with the
# host from a pid namespace of its own, so the pid in each segment's name is
# the container's and names nobody (or somebody else) on the host. Watched from
# the host while it runs, none of its segments is an orphan or has a dead
# creator, and clean --yes removes nothing, over several scans. Killed while a
# neighbour container still shares the mount, its leftovers are unheld, not
# orphans: clean leaves them, and clean --all-unheld removes them.
# The shared mount is the test's private tmpfs, never the host's /dev/shm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need
test_ns 64m -- "$@"
IMG=$DOCKER_IMAGE_TORCH
W=/opt/shmwatch-workload # the workload, inside
log=$SHMTEST_TMP/actions.log

docker_start
docker_image_torch
on_exit '[ "$rc" -eq 0 ] || docker_dump'

# A neighbour that shares the mount and outlives the job, as a second
# container (or the host's own processes) would.
docker_run_shared_shm neighbour "$IMG" sleep 900
# The job holds 3 batches and waits on a stdin that never closes; its
# workers fill the prefetch queue, file_system batches that nobody holds
# between the worker's send and the main process's receive.
docker_run_shared_shm job -v "$SRCDIR/tests/torch:$W:ro" "$IMG" sh -c \
    "sleep 900 | exec python3 $W/workload.py --strategy file_system --workers 2 --prefetch-factor 2 --batch-size 4 --shape 3x64x64 --hold-batches 3"
wait_for 'dk logs job 2>/dev/null | grep -q "^READY "' 120 ||
    fail "the job did not hold its batches: $(dk logs job 2>&1 | tail -n 5)"
JOB_PID=$(docker_pid job)
[ "$(readlink "/proc/$JOB_PID/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] ||
    fail "the job runs in the test's own pid namespace"
ok "a file_system DataLoader runs in a container of its own pid namespace, sharing the test's /dev/shm"

# While it runs: several scans, each a snapshot and a clean --yes.
for i in 1 2 3; do
    j=$SHMTEST_TMP/live.$i.json
    "$SHMWATCH" --json >"$j" || fail "shmwatch --json exited $?"
    json_check "$j" "len([s for s in j['segments'] if s['name'].startswith('torch_')]) > 0" \
        "scan $i: the job's torch segments are seen" \
        "[s['name'] for s in j['segments'] if s['state'] == 'orphan' or s['creator_alive'] is False] == []" \
        "scan $i: none is an orphan or said to have a dead creator"
    before=$(find /dev/shm -maxdepth 1 -name 'torch_*' | sort)
    "$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/clean.$i.txt" 2>&1 ||
        fail "clean --yes exited $? while the job runs: $(tail -n 3 "$SHMTEST_TMP/clean.$i.txt")"
    grep -q '^removed' "$SHMTEST_TMP/clean.$i.txt" &&
        fail "clean removed a live job's segment: $(grep '^removed' "$SHMTEST_TMP/clean.$i.txt")"
    for f in $before; do
        # A batch the job itself consumed may go; none may go by clean's hand.
        if [ ! -e "$f" ] && grep -qF "$f" "$log" 2>/dev/null; then
            fail "clean logged the removal of $f"
        fi
    done
    ok "scan $i: clean --yes removes nothing of the live job"
    [ "$i" = 3 ] || sleep 1 # the scans a second apart; none after the last
done

# Killed (docker kill: the container's whole pid namespace, its shm manager
# included), with the neighbour still sharing the mount.
dk kill job >/dev/null || fail "docker kill failed"
wait_for '! kill -0 '"$JOB_PID"' 2>/dev/null' 30 || fail "the job's init $JOB_PID did not die"
left=$(find /dev/shm -maxdepth 1 -name 'torch_*' | wc -l)
[ "$left" -gt 0 ] || fail "the killed job left no torch_* file (nothing to test)"
"$SHMWATCH" --json >"$SHMTEST_TMP/killed.json" || fail "shmwatch --json exited $?"
json_check "$SHMTEST_TMP/killed.json" "all(s['state'] == 'unheld' for s in j['segments'] if s['name'].startswith('torch_')) and len([s for s in j['segments'] if s['name'].startswith('torch_')]) == $left" \
    "killed: its $left leftovers are unheld, not orphans (the mount is shared with another pid namespace)"
"$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/clean.killed.txt" 2>&1 ||
    fail "clean --yes exited $?: $(tail -n 3 "$SHMTEST_TMP/clean.killed.txt")"
assert_eq "$(find /dev/shm -maxdepth 1 -name 'torch_*' | wc -l)" "$left" "clean --yes leaves them"
"$SHMWATCH" clean --yes --all-unheld --min-age 0 --log "$log" >"$SHMTEST_TMP/clean.unheld.txt" 2>&1 ||
    fail "clean --all-unheld exited $?: $(tail -n 3 "$SHMTEST_TMP/clean.unheld.txt")"
assert_eq "$(find /dev/shm -maxdepth 1 -name 'torch_*' | wc -l)" 0 "clean --yes --all-unheld removes them"
assert_eq "$(grep -c '^removed' "$SHMTEST_TMP/clean.unheld.txt")" "$left" "one removal printed for each"
