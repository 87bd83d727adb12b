#!/usr/bin/env bash
# A pod's emptyDir ({medium: Memory}) as /dev/shm, on real Docker and
# PyTorch 2.6, restarted as the kubelet restarts a container: the volume is a
# tmpfs the test mounts at a kubelet-shaped volume directory
# (.../pods/UID/volumes/kubernetes.io~empty-dir/dshm, below the test's own
# tmpfs so that nothing of the machine's is touched) in the private mount
# namespace that the test's dockerd runs in, and bound into the container at
# /dev/shm (-v DIR:/dev/shm). The container runs under a kubepods cgroup
# parent (the pod's uid) and the test writes the kubelet's log entries
# (/var/log/pods/NS_POD_UID/CONTAINER/ and
# /var/log/containers/POD_NS_CONTAINER-ID.log, on a tmpfs over /var/log in
# that namespace) so that the pod is named.
#   1. A file_system DataLoader job holds its batches; docker kill ends it
#      (its pid namespace, torch_shm_manager included): its batches stay on
#      the volume, named after pids of a namespace that is gone.
#   2. docker start, at least 3 s after the leftovers' last change (waited
#      for on the clock): the same command, a new job, the same small pids.
#      --pid --json says every old batch is an orphan and none of the new
#      run's is; the budget says what the leftovers hold and to clean them
#      first. --all --json names the pod, its namespace and container, and its
#      mount's budget says the same.
#   3. clean --all --dry-run gives each old batch as "left by an earlier run
#      of trainer" and nothing else of the pod; clean --pid removes exactly
#      the old batches and every segment of the new run stays.
# The test's own namespace has the volume only at the kubelet path, and its
# /dev/shm is another tmpfs (in_shm_ns): no process but the container's has
# the volume at /dev/shm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need
need_unshare
need /usr/bin/python3
bash "$(dirname "$0")/../stack/rootfs.sh" --check || need debootstrap
test_ns 16m -- "$@"
IMG=$DOCKER_IMAGE_TORCH
W=/opt/shmwatch-workload # the workload, inside
T0=$SECONDS
# The outputs: --all shows every container of the machine (other tests' too).
OUT=$(mktemp -d /var/tmp/shmwatch-restart-docker.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $OUT"

POD_UID=5d0c9a1e-7b3f-4e26-8c41-2f6a9e0b7d13
VOL=$SHMTEST_TMP/var/lib/kubelet/pods/$POD_UID/volumes/kubernetes.io~empty-dir/dshm
mkdir -p "$VOL" || fail "cannot make $VOL"
mount -t tmpfs -o size=64m,mode=1777 tmpfs "$VOL" || fail "cannot mount the volume's tmpfs"
on_exit "umount -l '$VOL' 2>/dev/null; true"
mount -t tmpfs -o size=1m,mode=755 tmpfs /var/log || fail "cannot mount a tmpfs on /var/log"
on_exit 'umount -l /var/log 2>/dev/null; true'
PODLOG=/var/log/pods/ml_trainer-0_$POD_UID/trainer
mkdir -p "$PODLOG" /var/log/containers && : >"$PODLOG/0.log" || fail "cannot make $PODLOG"

docker_start
docker_image_torch
on_exit '[ "$rc" -eq 0 ] || docker_dump'
ok "dockerd ($DOCKER_DRIVER) and $IMG ready after $((SECONDS - T0)) s"

# The job: a DataLoader holding 2 batches (its workers prefetching more) until
# its stdin closes, which it never does; each start of the container runs it.
docker_run trainer --cgroup-parent "/kubepods/burstable/pod$POD_UID" -m 1g \
    -v "$VOL:/dev/shm" -v "$SRCDIR/tests/torch:$W:ro" "$IMG" sh -c \
    "sleep 900 | exec python3 $W/workload.py --strategy file_system --workers 2 --prefetch-factor 2 --batch-size 4 --shape 3x64x64 --hold-batches 2"
ID=$(dk inspect -f '{{.Id}}' trainer) || fail "no id for trainer"
ln -s "../pods/ml_trainer-0_$POD_UID/trainer/0.log" "/var/log/containers/trainer-0_ml_trainer-$ID.log" ||
    fail "cannot make the container's log link"
LOG=$(dk inspect -f '{{.LogPath}}' trainer) && [ -n "$LOG" ] || fail "no log path for trainer"
export ID POD_UID

# ready N: waits until the container's log has N READY lines (its Nth job
# holds its batches), then until the volume's listing has stayed the same for
# half a second (the workers' prefetching is over). The log is read where
# Docker's json-file driver writes it (its LogPath), which is cheaper to poll
# than docker logs.
ready() {
    local init
    init=$(docker_pid trainer)
    wait_for "[ \"\$(grep -c '\"log\":\"READY ' '$LOG')\" -ge $1 ] || [ ! -d /proc/$init ]" 120 &&
        [ "$(grep -c '"log":"READY ' "$LOG")" -ge "$1" ] ||
        fail "the job of start $1 did not hold its batches: $(dk logs trainer 2>&1 | tail -n 5)"
    local last='' same=0
    wait_for settled 15 || fail "the volume did not settle: $(ls "$VOL")"
}
# settled: true once the volume's listing (names, sizes, times) is the one of
# the last 25 calls.
settled() {
    local l
    l=$(ls -l --time-style=+%s.%N "$VOL")
    if [ "$l" = "$last" ]; then same=$((same + 1)); else same=0 last=$l; fi
    [ "$same" -ge 25 ]
}
ready 1
PID1=$(docker_pid trainer)
assert_eq "$(stat -L -c %d "/proc/$PID1/root/dev/shm")" "$(stat -c %d "$VOL")" \
    "the container's /dev/shm is the volume"
grep -q ' /dev/shm ' "/proc/$$/mountinfo" && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$VOL")" ] ||
    fail "the test's own /dev/shm is the volume"

# 1. The job killed with its pid namespace.
dk kill trainer >/dev/null || fail "docker kill failed"
wait_for "[ \"\$(dk inspect -f '{{.State.Running}}' trainer)\" = false ] && [ ! -d /proc/$PID1 ]" 30 ||
    fail "the container did not stop"
mapfile -t OLD < <(ls "$VOL")
[ "${#OLD[@]}" -ge 2 ] || fail "the killed job left fewer than 2 batches: ${OLD[*]}"
! printf '%s\n' "${OLD[@]}" | grep -qv '^torch_' ||
    fail "the killed job left other than torch segments: ${OLD[*]}"
ok "docker kill: the job's ${#OLD[@]} file_system batches stay on the volume"
written=$(cd "$VOL" && stat -c '%Y %Z' "${OLD[@]}" | tr ' ' '\n' | sort -n | tail -n 1)
wait_for "[ \$(date +%s) -gt $((written + 3)) ]" 10 || fail "the clock did not move"

# 2. The restart: a new job in a new pid namespace.
dk start trainer >/dev/null || fail "docker start failed"
ready 2
PID=$(docker_pid trainer)
NEW=()
for f in "$VOL"/*; do
    [[ " ${OLD[*]} " == *" ${f##*/} "* ]] || NEW+=("${f##*/}")
done
[ "${#NEW[@]}" -ge 2 ] || fail "the new job wrote fewer than 2 batches: $(ls "$VOL")"
ok "docker start: a new job (host pid $PID) holds its batches, ${#NEW[@]} segments, after $((SECONDS - T0)) s"
OLD_PY=$(printf '%s\n' "${OLD[@]}" | /usr/bin/python3 -c 'import sys; print(sorted(sys.stdin.read().split()))')
NEW_PY=$(printf '%s\n' "${NEW[@]}" | /usr/bin/python3 -c 'import sys; print(sorted(sys.stdin.read().split()))')

"$SHMWATCH" --pid "$PID" --json --orphan-min-age 2 >"$OUT/pid.json" || fail "--pid --json exited $?"
json_check "$OUT/pid.json" \
    "sorted(s['name'] for s in j['segments'] if s['state'] == 'orphan') == $OLD_PY" \
    "every batch of the killed run is an orphan" \
    \
    "all(s['state'] != 'orphan' for s in j['segments'] if s['name'] in $NEW_PY) and any(s['state'] == 'in_use' for s in j['segments'] if s['name'] in $NEW_PY)" \
    "no segment of the new run is, and the batches it holds are in use" \
    \
    "any('An earlier run of this container left' in a and 'clean them first' in a for a in j['budget']['advice'])" \
    "the budget says what the leftovers hold and to clean them first"

# The node view: the mount named by the pod.
"$SHMWATCH" --all --json --orphan-min-age 2 >"$OUT/all.json" || fail "--all --json exited $?"
MOUNT='[m for m in j["mounts"] if any(c["id"] == env["ID"] for c in m["containers"])]'
json_check "$OUT/all.json" \
    "len($MOUNT) == 1 and [(c['pod'], c['namespace'], c['name'], c['pod_uid']) for c in ${MOUNT}[0]['containers']] == [('trainer-0', 'ml', 'trainer', env['POD_UID'])]" \
    "--all: the volume's mount is the pod's (trainer-0 in ml, container trainer)" \
    \
    "sorted(s['name'] for s in j['segments'] if s['mount_id'] == ${MOUNT}[0]['id'] and s['state'] == 'orphan') == $OLD_PY" \
    "--all: the old batches are orphans there too" \
    \
    "any('An earlier run of this container left' in a and 'clean them first' in a for a in ${MOUNT}[0]['budget']['advice'])" \
    "--all: the mount's budget names the leftovers"

# 3. What clean would do across the node names the pod's container; clean
# --pid removes the old batches, and only them.
# The node's other mounts (tests beside this one) may hold what clean
# refuses (status 3); the pod's lines are checked below.
rc=0
"$SHMWATCH" clean --all --dry-run --orphan-min-age 2 >"$OUT/dry.txt" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "clean --all --dry-run exited $rc: $(tail -n 5 "$OUT/dry.txt")"
! grep -F '(in trainer)' "$OUT/dry.txt" | grep -q '^refused' ||
    fail "clean --all refuses something of trainer: $(grep -F '(in trainer)' "$OUT/dry.txt")"
for s in "${OLD[@]}"; do
    grep -F "  /dev/shm/$s (in trainer) " "$OUT/dry.txt" |
        grep -q 'orphan: held by nobody, left by an earlier run of trainer (restarted at ' ||
        fail "clean --all does not give $s as left by an earlier run of trainer: $(grep -F '(in trainer)' "$OUT/dry.txt")"
done
[ "$(grep -c '^  /dev/shm/.* (in trainer) ' "$OUT/dry.txt")" -eq "${#OLD[@]}" ] ||
    fail "clean --all would touch other than the leftovers in trainer: $(grep -F '(in trainer)' "$OUT/dry.txt")"
ok "clean --all: each leftover is of an earlier run of trainer, nothing else of it is touched"
clean_earlier_run "$PID" trainer "$VOL" "${OLD[@]}" -- "${NEW[@]}"
[ "$(dk inspect -f '{{.State.Running}}' trainer)" = true ] || fail "the new job stopped"
ok "clean --pid removed the ${#OLD[@]} leftovers, each of an earlier run, and kept the ${#NEW[@]} of the new run"
ok "done in $((SECONDS - T0)) s"
