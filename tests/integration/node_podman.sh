#!/usr/bin/env bash
# The node view (--all) on real podman containers: Debian 12's podman 4.3,
# rootful, runc, the cgroupfs manager, no network, an image of busybox alone
# made offline (podman import). Its storage is the test's own: graph root and
# run root in temporary directories, named by a storage.conf bind-mounted on
# /etc/containers in the test's private mount namespace, which podman and
# shmwatch both read there.
#   1. A container run with --name swpod --shm-size 80m -m 300m holding a
#      segment of its /dev/shm: --all --json names it swpod (containers.json
#      in the graph root), runtime podman, its mount 80 MiB, its budget's
#      limit 300 MiB. The text report's heading names it too.
#   2. podman also mounts that tmpfs at .../userdata/shm in the namespace it
#      runs in (the host's, here the test's): that does not make the mount
#      shared. A torch segment named by a process of the container that has
#      exited is an orphan (pid evidence sound, one pid namespace), not
#      unheld.
#   3. The kept control: a second container sharing the first one's IPC
#      (--ipc container:X) has the same tmpfs at its /dev/shm: two pid
#      namespaces at /dev/shm, pid evidence shared, the dead creator's
#      segment unheld.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need podman runc busybox tar /usr/bin/python3
test_ns 64m -- "$@"

# The outputs (--all shows every container of the machine): on disk.
OUT=$(mktemp -d /var/tmp/shmwatch-node-podman.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $OUT"
STORE=$OUT/storage
RUNROOT=$(mktemp -d /run/shmwatch-podman.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $RUNROOT"
mkdir -p "$STORE" "$OUT/etc-containers" /etc/containers || fail "cannot make directories"
cp -a /etc/containers/. "$OUT/etc-containers/" 2>/dev/null || true
cat >"$OUT/etc-containers/storage.conf" <<CONF
# The test's own storage (tests/integration/node_podman.sh).
[storage]
driver = "overlay"
graphroot = "$STORE"
runroot = '$RUNROOT'
CONF
[ -f "$OUT/etc-containers/policy.json" ] ||
    echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$OUT/etc-containers/policy.json"
mount --bind "$OUT/etc-containers" /etc/containers || fail "cannot bind the test's /etc/containers"
on_exit 'umount -l /etc/containers 2>/dev/null || true'

# pm ARGS...: podman as the hybrid cgroup layout needs it (runc, cgroupfs;
# its state below the test's run root).
pm() {
    timeout 60 podman --runtime runc --cgroup-manager=cgroupfs --events-backend none \
        --tmpdir "$RUNROOT/libpod" "$@"
}
# On exit every container is removed (its processes killed), also when the
# test fails (a container another one depends on goes in a second round);
# then the mounts podman made below the test's directories are taken off.
# conmon's exit command (podman container cleanup, its command line naming
# the run root) is waited for: it unmounts and mounts in the test's storage.
pm_cleanup() {
    pm rm -f -t 0 --all >/dev/null 2>&1 || pm rm -f -t 0 --all >/dev/null 2>&1
    local f m
    for f in "$RUNROOT"/overlay-containers/*/userdata/conmon.pid "$RUNROOT"/overlay-containers/*/userdata/pidfile; do
        [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
    done
    wait_for '! pgrep -f -- "$RUNROOT" >/dev/null' 10 || kill -KILL $(pgrep -f -- "$RUNROOT") 2>/dev/null
    for m in $(awk -v a="$OUT/" -v b="$RUNROOT/" \
        '{ if (index($5, a) == 1 || index($5, b) == 1) print $5 }' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null
    done
    return 0
}
on_exit pm_cleanup

T0=$SECONDS
ROOTFS=$OUT/rootfs
mkdir -p "$ROOTFS"/{bin,tmp,proc,sys,dev,etc}
cp "$(command -v busybox)" "$ROOTFS/bin/busybox" || fail "cannot copy busybox"
for t in sh sleep dd touch; do ln -s busybox "$ROOTFS/bin/$t"; done
tar -C "$ROOTFS" -c . | pm import - localhost/shmwatch-test/busybox:1 >/dev/null ||
    fail "podman import failed"
ok "podman image imported in $((SECONDS - T0)) s"

# run NAME ARGS... -- CMD: a detached container of the image.
run() {
    local name=$1
    shift
    pm run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
        --name "$name" "$@" >"$OUT/$name.id" 2>"$OUT/$name.err" ||
        fail "podman run $name failed: $(tail -n 3 "$OUT/$name.err")"
}
# A child writes a torch segment named after its own pid and exits; the
# container's first process then holds /dev/shm/data (4 MiB) open and sleeps.
JOB='sh -c "echo x >/dev/shm/torch_\$\$_7_1"; dd if=/dev/zero of=/dev/shm/data bs=1M count=4 2>/dev/null; exec 3</dev/shm/data; touch /dev/shm/ready; exec sleep 1000'
run swpod --shm-size 80m -m 300m localhost/shmwatch-test/busybox:1 sh -c "$JOB"
run swctl-a --shm-size 16m localhost/shmwatch-test/busybox:1 sh -c "$JOB"
run swctl-b --ipc container:swctl-a localhost/shmwatch-test/busybox:1 sleep 1000
declare -A PID ID
for c in swpod swctl-a swctl-b; do
    PID[$c]=$(pm inspect -f '{{.State.Pid}}' "$c") && [ "${PID[$c]:-0}" -gt 0 ] ||
        fail "container $c has no process"
    ID[$c]=$(cat "$OUT/$c.id")
done
for c in swpod swctl-a; do
    wait_for "[ -e /proc/${PID[$c]}/root/dev/shm/ready ]" 10 || fail "container $c did not write its segments"
done
ok "three containers running after $((SECONDS - T0)) s"
export SWPOD=${ID[swpod]} SWCTL=${ID[swctl-a]} SWCTL_B=${ID[swctl-b]}

# The precondition of 2: podman's own mount of the tmpfs, here.
grep -q " $STORE/overlay-containers/$SWPOD/userdata/shm " /proc/self/mountinfo ||
    fail "podman's userdata/shm of swpod is not mounted in the namespace podman runs in"

"$SHMWATCH" --all --json --orphan-min-age 0 >"$OUT/all.json" || fail "--all --json exited $?"
# The mount whose containers include the container of id I.
MOUNT='(lambda i: [m for m in j["mounts"] if any(c["id"] == i for c in m["containers"])])'
json_check "$OUT/all.json" "len($MOUNT(env['SWPOD'])) == 1 and [c for c in $MOUNT(env['SWPOD'])[0]['containers']] and all(c['name'] == 'swpod' and c['runtime'] == 'podman' and c['containerd_namespace'] is None for c in $MOUNT(env['SWPOD'])[0]['containers'])" \
    "swpod: one mount, the container named swpod, runtime podman"
json_check "$OUT/all.json" "$MOUNT(env['SWPOD'])[0]['size_bytes'] == 80 * 1024 * 1024 and $MOUNT(env['SWPOD'])[0]['budget']['limit_bytes'] == 300 * 1024 * 1024 and $MOUNT(env['SWPOD'])[0]['cgroup']['limit_bytes'] == 300 * 1024 * 1024" \
    "swpod: its 80 MiB /dev/shm against its own 300 MiB limit"
json_check "$OUT/all.json" "$MOUNT(env['SWPOD'])[0]['pid_namespaces'] == 1 and $MOUNT(env['SWPOD'])[0]['pid_evidence'] == 'sound'" \
    "swpod: podman's mount at userdata/shm does not make it shared"
SEGS="(lambda i: [s for s in j['segments'] if s['mount_id'] == $MOUNT(i)[0]['id']])"
json_check "$OUT/all.json" "sorted((s['kind'], s['state']) for s in $SEGS(env['SWPOD']) if s['name'] != 'ready') == [('other', 'in_use'), ('torch', 'orphan')] and all(s['creator_alive'] is False for s in $SEGS(env['SWPOD']) if s['kind'] == 'torch')" \
    "swpod: the held segment in use, the exited job's torch segment an orphan"
json_check "$OUT/all.json" "len($MOUNT(env['SWCTL'])) == 1 and sorted(c['name'] for c in $MOUNT(env['SWCTL'])[0]['containers']) == ['swctl-a', 'swctl-b'] and $MOUNT(env['SWCTL'])[0]['pid_evidence'] == 'shared' and $MOUNT(env['SWCTL'])[0]['pid_namespaces'] == 2" \
    "control: a tmpfs at /dev/shm in two containers is shared"
json_check "$OUT/all.json" "[s['state'] for s in $SEGS(env['SWCTL']) if s['kind'] == 'torch'] == ['unheld'] and [s['note'] for s in $SEGS(env['SWCTL']) if s['kind'] == 'torch'][0]" \
    "control: the dead creator's segment there is unheld, with its reason"

"$SHMWATCH" --all --once >"$OUT/all.txt" || fail "--all --once exited $?"
grep -q "^== CONTAINER swpod (podman ${SWPOD:0:12}, " "$OUT/all.txt" ||
    fail "the text report does not name swpod: $(grep '^==' "$OUT/all.txt" | head -n 5)"
ok "the text report names swpod"

# clean --pid removes the orphan, and only it.
"$SHMWATCH" clean --pid "${PID[swpod]}" --yes --orphan-min-age 0 >"$OUT/clean.txt" 2>&1 ||
    fail "clean --pid exited $?: $(cat "$OUT/clean.txt")"
[ -z "$(ls "/proc/${PID[swpod]}/root/dev/shm" | grep '^torch_')" ] && [ -e "/proc/${PID[swpod]}/root/dev/shm/data" ] ||
    fail "clean --pid: $(ls "/proc/${PID[swpod]}/root/dev/shm")"
[ -n "$(ls "/proc/${PID[swctl-a]}/root/dev/shm" | grep '^torch_')" ] || fail "clean --pid touched another container"
ok "clean --pid removed swpod's orphan and kept its held segment and the control's"
ok "done in $((SECONDS - T0)) s"
