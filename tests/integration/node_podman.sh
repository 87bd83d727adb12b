#!/usr/bin/env bash
# The node view (--all) on real podman containers: Debian 12's podman 4.3,
# rootful, runc, the cgroupfs manager, no network, an image of busybox alone
# made offline (podman import). Its storage is the test's own: graph root and
# run root in temporary directories, named by a storage.conf bind-mounted on
# /etc/containers in the test's private mount namespace, which podman and
# shmwatch both read there (tests/integration/podman_lib.sh).
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
#   4. A container of podman's default /dev/shm (65536k: 65,536,000 bytes,
#      62.5 MiB, below Docker's 64 MiB) holding 1 MiB: its budget keeps that
#      size (peak x 1.5 fits it), with no demand for 64m.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman_lib.sh"
podman_need
need /usr/bin/python3
test_ns 64m -- "$@"
podman_start node-podman

T0=$SECONDS
podman_image sh sleep dd touch
ok "podman image imported in $((SECONDS - T0)) s"

# A child writes a torch segment named after its own pid and exits; the
# container's first process then holds /dev/shm/data (4 MiB) open and sleeps.
JOB='sh -c "echo x >/dev/shm/torch_\$\$_7_1"; dd if=/dev/zero of=/dev/shm/data bs=1M count=4 2>/dev/null; exec 3</dev/shm/data; touch /dev/shm/ready; exec sleep 1000'
podman_run swpod --shm-size 80m -m 300m "$PODMAN_IMAGE" sh -c "$JOB"
podman_run swctl-a --shm-size 16m "$PODMAN_IMAGE" sh -c "$JOB"
podman_run swctl-b --ipc container:swctl-a "$PODMAN_IMAGE" sleep 1000
podman_run swdef -m 300m "$PODMAN_IMAGE" sh -c \
    'dd if=/dev/zero of=/dev/shm/small bs=1M count=1 2>/dev/null; exec 3</dev/shm/small; touch /dev/shm/ready; exec sleep 1000'
declare -A PID ID
for c in swpod swctl-a swctl-b swdef; do
    PID[$c]=$(podman_pid "$c")
    ID[$c]=$(cat "$OUT/$c.id")
done
for c in swpod swctl-a swdef; do
    wait_for "[ -e /proc/${PID[$c]}/root/dev/shm/ready ]" 10 || fail "container $c did not write its segments"
done
ok "four containers running after $((SECONDS - T0)) s"
export SWPOD=${ID[swpod]} SWCTL=${ID[swctl-a]} SWCTL_B=${ID[swctl-b]} SWDEF=${ID[swdef]}

# The precondition of 2: podman's own mount of the tmpfs, here.
grep -q " $STORE/overlay-containers/$SWPOD/userdata/shm " /proc/self/mountinfo ||
    fail "podman's userdata/shm of swpod is not mounted in the namespace podman runs in"

"$SHMWATCH" --all --json --orphan-min-age 0 >"$OUT/all.json" || fail "--all --json exited $?"
# The mount whose containers include the container of id I.
MOUNT='(lambda i: [m for m in j["mounts"] if any(c["id"] == i for c in m["containers"])])'
json_check "$OUT/all.json" "len($MOUNT(env['SWPOD'])) == 1 and [c for c in $MOUNT(env['SWPOD'])[0]['containers']] and all(c['name'] == 'swpod' and c['runtime'] == 'podman' and c['containerd_namespace'] is None for c in $MOUNT(env['SWPOD'])[0]['containers'])" \
    "swpod: one mount, the container named swpod, runtime podman" \
    "$MOUNT(env['SWPOD'])[0]['size_bytes'] == 80 * 1024 * 1024 and $MOUNT(env['SWPOD'])[0]['budget']['limit_bytes'] == 300 * 1024 * 1024 and $MOUNT(env['SWPOD'])[0]['cgroup']['limit_bytes'] == 300 * 1024 * 1024" \
    "swpod: its 80 MiB /dev/shm against its own 300 MiB limit" \
    "$MOUNT(env['SWPOD'])[0]['pid_namespaces'] == 1 and $MOUNT(env['SWPOD'])[0]['pid_evidence'] == 'sound'" \
    "swpod: podman's mount at userdata/shm does not make it shared"
SEGS="(lambda i: [s for s in j['segments'] if s['mount_id'] == $MOUNT(i)[0]['id']])"
json_check "$OUT/all.json" "sorted((s['kind'], s['state']) for s in $SEGS(env['SWPOD']) if s['name'] != 'ready') == [('other', 'in_use'), ('torch', 'orphan')] and all(s['creator_alive'] is False for s in $SEGS(env['SWPOD']) if s['kind'] == 'torch')" \
    "swpod: the held segment in use, the exited job's torch segment an orphan" \
    "len($MOUNT(env['SWCTL'])) == 1 and sorted(c['name'] for c in $MOUNT(env['SWCTL'])[0]['containers']) == ['swctl-a', 'swctl-b'] and $MOUNT(env['SWCTL'])[0]['pid_evidence'] == 'shared' and $MOUNT(env['SWCTL'])[0]['pid_namespaces'] == 2" \
    "control: a tmpfs at /dev/shm in two containers is shared" \
    "[s['state'] for s in $SEGS(env['SWCTL']) if s['kind'] == 'torch'] == ['unheld'] and [s['note'] for s in $SEGS(env['SWCTL']) if s['kind'] == 'torch'][0]" \
    "control: the dead creator's segment there is unheld, with its reason" \
    "$MOUNT(env['SWDEF'])[0]['size_bytes'] == 65536000 and $MOUNT(env['SWDEF'])[0]['budget']['recommended_shm_size_bytes'] == 65536000" \
    "swdef: podman's default 62.5 MiB /dev/shm, recommended as it is" \
    "[a for a in $MOUNT(env['SWDEF'])[0]['budget']['advice'] if a.startswith('Recommended: ')] and all(a.startswith('Recommended: --shm-size as it is (peak shm 1.0 MiB x 1.5 = 1.5 MiB, rounded up to a whole MiB; the current 62.5 MiB fits: keep it, ') and '64m' not in a and 'too small' not in a for a in $MOUNT(env['SWDEF'])[0]['budget']['advice'] if a.startswith('Recommended: '))" \
    "swdef: the advice keeps the 62.5 MiB it has, no 64m"

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
