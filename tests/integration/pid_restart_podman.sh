#!/usr/bin/env bash
# A restarted podman container's leftovers (Debian 12's podman 4.3, rootful,
# runc, the cgroupfs manager, no network, an image of busybox alone made
# offline; the test's own storage, named by a storage.conf bind-mounted on
# /etc/containers in the test's private mount namespace, as node_podman.sh
# does).
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
need_root
need_unshare
need podman runc busybox tar /usr/bin/python3
test_ns 16m -- "$@"

# The outputs (--all shows every container of the machine): on disk.
OUT=$(mktemp -d /var/tmp/shmwatch-restart-podman.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $OUT"
STORE=$OUT/storage
RUNROOT=$(mktemp -d /run/shmwatch-podman.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $RUNROOT"
mkdir -p "$STORE" "$OUT/etc-containers" /etc/containers || fail "cannot make directories"
cp -a /etc/containers/. "$OUT/etc-containers/" 2>/dev/null || true
cat >"$OUT/etc-containers/storage.conf" <<CONF
# The test's own storage (tests/integration/pid_restart_podman.sh).
[storage]
driver = "overlay"
graphroot = "$STORE"
runroot = '$RUNROOT'
CONF
[ -f "$OUT/etc-containers/policy.json" ] ||
    echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$OUT/etc-containers/policy.json"
mount --bind "$OUT/etc-containers" /etc/containers || fail "cannot bind the test's /etc/containers"
on_exit 'umount -l /etc/containers 2>/dev/null || true'

VOL=$SHMTEST_TMP/var/lib/kubelet/pods/0b6f3e2a-restart/volumes/kubernetes.io~empty-dir/dshm
mkdir -p "$VOL" "$OUT/ctl" || fail "cannot make $VOL"
mount -t tmpfs -o size=32m,mode=1777 tmpfs "$VOL" || fail "cannot mount the volume's tmpfs"
on_exit "umount -l '$VOL' 2>/dev/null; true"

# pm ARGS...: podman as the hybrid cgroup layout needs it (runc, cgroupfs;
# its state below the test's run root).
pm() {
    timeout 60 podman --runtime runc --cgroup-manager=cgroupfs --events-backend none \
        --tmpdir "$RUNROOT/libpod" "$@"
}
# On exit every container is removed (its processes killed), also when the
# test fails; conmon's exit command (podman container cleanup, its command
# line naming the run root) is waited for; then the mounts podman made below
# the test's directories are taken off.
pm_cleanup() {
    pm rm -f -t 0 --all >/dev/null 2>&1 || pm rm -f -t 0 --all >/dev/null 2>&1
    local f m
    for f in "$RUNROOT"/overlay-containers/*/userdata/conmon.pid "$RUNROOT"/overlay-containers/*/userdata/pidfile; do
        [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
    done
    # shellcheck disable=SC2046 # a list of pids
    wait_for '! pgrep -f -- "$RUNROOT" >/dev/null' 10 || kill -KILL $(pgrep -f -- "$RUNROOT") 2>/dev/null
    for m in $(awk -v a="$OUT/" -v b="$RUNROOT/" \
        '{ if (index($5, a) == 1 || index($5, b) == 1) print $5 }' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null
    done
    return 0
}
on_exit pm_cleanup

T0=$SECONDS
IMG=localhost/shmwatch-test/busybox:1
ROOTFS=$OUT/rootfs
mkdir -p "$ROOTFS"/{bin,tmp,proc,sys,dev,etc,ctl}
cp "$(command -v busybox)" "$ROOTFS/bin/busybox" || fail "cannot copy busybox"
for t in sh sleep dd touch cat; do ln -s busybox "$ROOTFS/bin/$t"; done
tar -C "$ROOTFS" -c . | pm import - "$IMG" >/dev/null || fail "podman import failed"
ok "podman image imported in $((SECONDS - T0)) s"

# run NAME ARGS...: a detached container.
run() {
    local name=$1
    shift
    pm run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
        --name "$name" "$@" >"$OUT/$name.id" 2>"$OUT/$name.err" ||
        fail "podman run $name failed: $(tail -n 3 "$OUT/$name.err")"
}
# pid NAME: the host pid of the container's first process.
pid() {
    local p
    p=$(pm inspect -f '{{.State.Pid}}' "$1") && [ "${p:-0}" -gt 0 ] || fail "container $1 has no process"
    echo "$p"
}
# restart NAME: podman kill, then podman start once TIME_OK says the clock
# is far enough; sets PID to the new first process, once it is another one.
restart() {
    local old
    old=$(pid "$1")
    pm kill "$1" >/dev/null 2>"$OUT/$1.err" || fail "podman kill $1 failed: $(cat "$OUT/$1.err")"
    wait_for "[ ! -d /proc/$old ] && [ \"\$(pm inspect -f '{{.State.Running}}' $1)\" = false ]" 30 ||
        fail "container $1 did not stop"
    eval "${TIME_OK:-:}"
    pm start "$1" >/dev/null 2>"$OUT/$1.err" || fail "podman start $1 failed: $(cat "$OUT/$1.err")"
    PID=$(pid "$1")
    [ "$PID" != "$old" ] || fail "container $1 has its old first process"
}

# 1. podman's own /dev/shm: a new tmpfs at each start.
# Each run says whether it found the file an earlier run wrote.
run probe --shm-size 8m "$IMG" sh -c \
    '{ [ -e /dev/shm/torch_1_1 ] && echo kept || echo fresh; } >/dev/shm/found && echo x >/dev/shm/torch_1_1 && exec sleep 1000'
PID=$(pid probe)
wait_for "[ -e /proc/$PID/root/dev/shm/torch_1_1 ]" 10 || fail "probe did not write its segment"
restart probe
wait_for "[ -e /proc/$PID/root/dev/shm/torch_1_1 ]" 10 || fail "probe's second run did not write its segment"
assert_eq "$(cat "/proc/$PID/root/dev/shm/found")" fresh "podman's /dev/shm of a restarted container is empty"
ok "podman mounts a new tmpfs at /dev/shm at each start: a restart leaves nothing behind there"
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
run job -m 300m -v "$VOL:/dev/shm" -v "$OUT/ctl:/ctl" "$IMG" sh -c "$JOB"
wait_for "[ -e $OUT/ctl/ready.1 ]" 10 || fail "the first run did not write its segments: $(pm logs job 2>&1 | tail -n 3)"
PID1=$(pid job)
assert_eq "$(stat -L -c %d "/proc/$PID1/root/dev/shm")" "$(stat -c %d "$VOL")" "the container's /dev/shm is the volume"
child=$(cat "$OUT/ctl/child")
OLD=(torch_1_10 torch_1_11 "torch_${child}_12")
NEW=(torch_1_20 torch_1_21)
written=$(cd "$VOL" && stat -c '%Y %Z' "${OLD[@]}" | tr ' ' '\n' | sort -n | tail -n 1) ||
    fail "the first run's segments are not all there: $(ls "$VOL")"
echo 2 >"$OUT/ctl/run"
TIME_OK="wait_for '[ \$(date +%s) -gt $((written + 3)) ]' 10 || fail 'the clock did not move'"
restart job
wait_for "[ -e $OUT/ctl/ready.2 ]" 10 || fail "the second run did not write its segments: $(pm logs job 2>&1 | tail -n 3)"
ok "podman kill + start: the second run (host pid $PID) holds torch_1_20, wrote torch_1_21; the first left ${OLD[*]}"

"$SHMWATCH" --pid "$PID" --json --orphan-min-age 2 >"$OUT/pid.json" || fail "--pid --json exited $?"
export CHILD=$child
json_check "$OUT/pid.json" \
    "sorted((s['name'], s['state']) for s in j['segments']) == sorted([('torch_1_10', 'orphan'), ('torch_1_11', 'orphan'), ('torch_%s_12' % env['CHILD'], 'orphan'), ('torch_1_20', 'in_use'), ('torch_1_21', 'unheld')])" \
    "the first run's segments are orphans, the second run's held one in use and its batch in flight unheld"
json_check "$OUT/pid.json" \
    "any('An earlier run of this container left 3.0 MiB of orphans' in a and 'clean them first' in a for a in j['budget']['advice'])" \
    "the budget says how much the leftovers hold and to clean them first"

"$SHMWATCH" clean --pid "$PID" --yes --orphan-min-age 2 >"$OUT/clean.txt" 2>&1 ||
    fail "clean --pid exited $?: $(cat "$OUT/clean.txt")"
for s in "${OLD[@]}"; do
    grep -F "  /dev/shm/$s (in job) " "$OUT/clean.txt" |
        grep -q 'orphan: held by nobody, left by an earlier run of its container (restarted at ' ||
        fail "clean --pid does not give $s as left by an earlier run: $(cat "$OUT/clean.txt")"
    [ ! -e "$VOL/$s" ] || fail "$s is still there: $(cat "$OUT/clean.txt")"
done
[ "$(grep -c '^removed ' "$OUT/clean.txt")" -eq "${#OLD[@]}" ] ||
    fail "clean removed other than the ${#OLD[@]} leftovers: $(cat "$OUT/clean.txt")"
for s in "${NEW[@]}"; do
    [ -e "$VOL/$s" ] || fail "$s of the running container is gone: $(cat "$OUT/clean.txt")"
done
ok "clean --pid removed the first run's ${#OLD[@]} segments and kept the second run's"
ok "done in $((SECONDS - T0)) s"
