#!/usr/bin/env bash
# A restarted podman container's leftovers (Debian 12's podman 4.3, rootful,
# runc, an image of busybox alone; tests/integration/podman_lib.sh).
#   1. What podman does with its own /dev/shm across a restart: it mounts a
#      new tmpfs (userdata/shm) at each start and unmounts it when the
#      container stops, so a segment of the first run is gone in the second:
#      a restart of a plain `podman run --shm-size` container leaves nothing
#      behind. Checked here, since it is why the rest needs a volume.
#   2. A /dev/shm that outlives the container, the emptyDir shape: a tmpfs the
#      test mounts (at a kubelet-shaped volume directory below its own tmpfs)
#      bound at /dev/shm (-v DIR:/dev/shm). The container's first run writes
#      torch segments named after its pids (pid 1 holds one, a child writes
#      one and exits) and is killed (podman kill). Restarted (podman start,
#      at least 3 s after the leftovers' last change, waited for on the
#      clock), the same command runs as pid 1 of a new pid namespace: it
#      holds one new segment and writes another under pid 1 too. The first
#      run's segments are orphans left by an earlier run, the second run's
#      are not; clean --pid removes only the first run's.
# The test's own namespace has the volume only at its directory, and its
# /dev/shm is another tmpfs (in_shm_ns): no process but the container's has
# the volume at /dev/shm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman_lib.sh"
podman_need
need /usr/bin/python3
test_ns 16m -- "$@"
podman_start restart-podman

VOL=$SHMTEST_TMP/var/lib/kubelet/pods/0b6f3e2a-restart/volumes/kubernetes.io~empty-dir/dshm
mkdir -p "$VOL" "$OUT/ctl" || fail "cannot make $VOL"
mount -t tmpfs -o size=32m,mode=1777 tmpfs "$VOL" || fail "cannot mount the volume's tmpfs"
on_exit "umount -l '$VOL' 2>/dev/null; true"

T0=$SECONDS
podman_image sh sleep dd touch cat
ok "podman image imported in $((SECONDS - T0)) s"

# restart NAME: podman kill, then BETWEEN (eval'd, if set) once the first
# process is gone, then podman start; sets PID to the new first process.
restart() {
    local old
    old=$(podman_pid "$1")
    pm kill "$1" >/dev/null 2>"$OUT/$1.err" || fail "podman kill $1 failed: $(cat "$OUT/$1.err")"
    wait_for "[ ! -d /proc/$old ] && [ \"\$(pm inspect -f '{{.State.Running}}' $1)\" = false ]" 30 ||
        fail "container $1 did not stop"
    eval "${BETWEEN:-:}"
    pm start "$1" >/dev/null 2>"$OUT/$1.err" || fail "podman start $1 failed: $(cat "$OUT/$1.err")"
    PID=$(podman_pid "$1")
    [ "$PID" != "$old" ] || fail "container $1 has its old first process"
}

# 1. podman's own /dev/shm: mounted at userdata/shm while the container runs,
# unmounted once it stops, a new tmpfs at the next start. Each run says
# whether it found the file an earlier run wrote.
podman_run probe --shm-size 8m "$PODMAN_IMAGE" sh -c \
    '{ [ -e /dev/shm/torch_1_1 ] && echo kept || echo fresh; } >/dev/shm/found && echo x >/dev/shm/torch_1_1 && exec sleep 1000'
PID=$(podman_pid probe)
wait_for "[ -e /proc/$PID/root/dev/shm/torch_1_1 ]" 10 || fail "probe did not write its segment"
SHMDIR=" $STORE/overlay-containers/$(cat "$OUT/probe.id")/userdata/shm "
grep -qF "$SHMDIR" /proc/self/mountinfo || fail "podman's userdata/shm of probe is not mounted"
BETWEEN="wait_for '! grep -qF \"\$SHMDIR\" /proc/self/mountinfo' 10 || fail 'podman kept userdata/shm of the stopped probe mounted'"
restart probe
BETWEEN=
wait_for "[ -e /proc/$PID/root/dev/shm/torch_1_1 ]" 10 || fail "probe's second run did not write its segment"
assert_eq "$(cat "/proc/$PID/root/dev/shm/found")" fresh \
    "podman unmounts a stopped container's /dev/shm and mounts a new one at its start: a restart leaves nothing there"
pm rm -f -t 0 probe >/dev/null 2>&1

# 2. The volume at /dev/shm. Run R (from /ctl/run) writes torch_1_R0, held
# by pid 1 (the shell), and torch_1_R1, written by pid 1 and not held (a
# batch in flight); in the first run a child writes torch_CHILD_R2 and
# exits. Then it sleeps, holding torch_1_R0.
JOB='r=$(cat /ctl/run)
dd if=/dev/zero of=/dev/shm/torch_1_${r}0 bs=1M count=2 2>/dev/null && exec 3</dev/shm/torch_1_${r}0
dd if=/dev/zero of=/dev/shm/torch_1_${r}1 bs=1M count=1 2>/dev/null
[ "$r" != 1 ] || sh -c "echo x >/dev/shm/torch_\$\$_${r}2 && echo \$\$ >/ctl/child"
touch /ctl/ready.$r
exec sleep 1000'
echo 1 >"$OUT/ctl/run"
podman_run job -m 300m -v "$VOL:/dev/shm" -v "$OUT/ctl:/ctl" "$PODMAN_IMAGE" sh -c "$JOB"
wait_for "[ -e $OUT/ctl/ready.1 ]" 10 || fail "the first run did not write its segments: $(pm logs job 2>&1 | tail -n 3)"
PID1=$(podman_pid job)
assert_eq "$(stat -L -c %d "/proc/$PID1/root/dev/shm")" "$(stat -c %d "$VOL")" "the container's /dev/shm is the volume"
child=$(cat "$OUT/ctl/child")
OLD=(torch_1_10 torch_1_11 "torch_${child}_12")
NEW=(torch_1_20 torch_1_21)
written=$(cd "$VOL" && stat -c '%Y %Z' "${OLD[@]}" | tr ' ' '\n' | sort -n | tail -n 1) ||
    fail "the first run's segments are not all there: $(ls "$VOL")"
echo 2 >"$OUT/ctl/run"
BETWEEN="wait_for '[ \$(date +%s) -gt $((written + 3)) ]' 10 || fail 'the clock did not move'"
restart job
wait_for "[ -e $OUT/ctl/ready.2 ]" 10 || fail "the second run did not write its segments: $(pm logs job 2>&1 | tail -n 3)"
ok "podman kill + start: the second run (host pid $PID) holds torch_1_20, wrote torch_1_21; the first left ${OLD[*]}"

"$SHMWATCH" --pid "$PID" --json --orphan-min-age 2 >"$OUT/pid.json" || fail "--pid --json exited $?"
export CHILD=$child
json_check "$OUT/pid.json" \
    "sorted((s['name'], s['state']) for s in j['segments']) == sorted([('torch_1_10', 'orphan'), ('torch_1_11', 'orphan'), ('torch_%s_12' % env['CHILD'], 'orphan'), ('torch_1_20', 'in_use'), ('torch_1_21', 'unheld')])" \
    "the first run's segments are orphans, the second run's held one in use and its batch in flight unheld" \
    \
    "any('An earlier run of this container left 3.0 MiB of orphans' in a and 'clean them first' in a for a in j['budget']['advice'])" \
    "the budget says how much the leftovers hold and to clean them first"

clean_earlier_run "$PID" job "$VOL" "${OLD[@]}" -- "${NEW[@]}"
ok "clean --pid removed the first run's ${#OLD[@]} segments and kept the second run's"
ok "done in $((SECONDS - T0)) s"
