# shellcheck shell=bash
# The podman of the integration tests (bash; source it after lib.sh):
# Debian 12's podman 4.3, rootful, runc, the cgroupfs manager (crun cannot
# run on a hybrid cgroup layout), no network, an image of busybox alone made
# offline (podman import), and storage of the test's own.
#
#   . "$(dirname "$0")/podman_lib.sh"
#   podman_need
#   test_ns 64m -- "$@"
#   podman_start node-podman     # OUT, STORE, RUNROOT; removed on exit
#   podman_image sh sleep dd     # PODMAN_IMAGE: busybox with these applets
#   podman_run NAME ARGS...      # podman run -d --name NAME ARGS; $OUT/NAME.id
#   pid=$(podman_pid NAME)       # its first process, as the host sees it
#
# The storage (graph root in OUT, run root below /run) is named by a
# storage.conf bind-mounted on /etc/containers in the test's private mount
# namespace, which podman and shmwatch both read there; the machine's
# /etc/containers is untouched. On exit every container is removed (its
# processes killed), also when the test fails, and the mounts podman made
# below the test's directories are taken off.

PODMAN_IMAGE=localhost/shmwatch-test/busybox:1

# podman_need: root, a private mount namespace, podman, runc and busybox.
podman_need() {
    need_root
    need_unshare
    need podman runc busybox tar
}

# pm ARGS...: podman as the hybrid cgroup layout needs it (runc, cgroupfs;
# its state below the test's run root).
pm() {
    timeout 60 podman --runtime runc --cgroup-manager=cgroupfs --events-backend none \
        --tmpdir "$RUNROOT/libpod" "$@"
}

# podman_start NAME: the test's storage (OUT: its outputs, on disk, since
# --all shows every container of the machine; STORE, RUNROOT) and its
# /etc/containers, for the rest of the test.
podman_start() {
    [ -n "${IN_SHM_NS:-}" ] || fail "podman_start: run it in the test's private mount namespace (in_shm_ns)"
    OUT=$(mktemp -d "/var/tmp/shmwatch-$1.XXXXXX") || fail "mktemp failed"
    on_exit "rm -rf --one-file-system $OUT"
    STORE=$OUT/storage
    RUNROOT=$(mktemp -d /run/shmwatch-podman.XXXXXX) || fail "mktemp failed"
    on_exit "rm -rf --one-file-system $RUNROOT"
    mkdir -p "$STORE" "$OUT/etc-containers" /etc/containers || fail "cannot make directories"
    cp -a /etc/containers/. "$OUT/etc-containers/" 2>/dev/null || true
    cat >"$OUT/etc-containers/storage.conf" <<CONF
# The test's own storage (tests/integration/podman_lib.sh).
[storage]
driver = "overlay"
graphroot = "$STORE"
runroot = '$RUNROOT'
CONF
    [ -f "$OUT/etc-containers/policy.json" ] ||
        echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$OUT/etc-containers/policy.json"
    mount --bind "$OUT/etc-containers" /etc/containers || fail "cannot bind the test's /etc/containers"
    on_exit 'umount -l /etc/containers 2>/dev/null || true'
    on_exit podman_cleanup
}

# podman_cleanup: every container removed (one another depends on goes in
# a second round); conmon's exit command (podman container cleanup, its
# command line naming the run root) waited for, as it unmounts and mounts in
# the test's storage; then the mounts below the test's directories taken off.
podman_cleanup() {
    pm rm -f -t 0 --all >/dev/null 2>&1 || pm rm -f -t 0 --all >/dev/null 2>&1
    local f m
    for f in "$RUNROOT"/overlay-containers/*/userdata/conmon.pid "$RUNROOT"/overlay-containers/*/userdata/pidfile; do
        [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
    done
    # shellcheck disable=SC2016,SC2046 # expanded by wait_for; a list of pids
    wait_for '! pgrep -f -- "$RUNROOT" >/dev/null' 10 || kill -KILL $(pgrep -f -- "$RUNROOT") 2>/dev/null
    for m in $(awk -v a="$OUT/" -v b="$RUNROOT/" \
        '{ if (index($5, a) == 1 || index($5, b) == 1) print $5 }' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null
    done
    return 0
}

# podman_image APPLET...: PODMAN_IMAGE, busybox with APPLETs and empty /tmp,
# /proc, /sys, /dev and /etc.
podman_image() {
    local root=$OUT/rootfs t
    mkdir -p "$root"/{bin,tmp,proc,sys,dev,etc} || fail "cannot make $root"
    cp "$(command -v busybox)" "$root/bin/busybox" || fail "cannot copy busybox"
    for t; do ln -s busybox "$root/bin/$t"; done
    tar -C "$root" -c . | pm import - "$PODMAN_IMAGE" >/dev/null 2>"$OUT/import.err" ||
        fail "podman import failed: $(tail -n 3 "$OUT/import.err")"
}

# podman_run NAME ARGS...: a detached container; its id in $OUT/NAME.id.
podman_run() {
    local name=$1
    shift
    pm run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
        --name "$name" "$@" >"$OUT/$name.id" 2>"$OUT/$name.err" ||
        fail "podman run $name failed: $(tail -n 3 "$OUT/$name.err")"
}

# podman_pid NAME: the host pid of the container's first process.
podman_pid() {
    local p
    p=$(pm inspect -f '{{.State.Pid}}' "$1") && [ "${p:-0}" -gt 0 ] || fail "container $1 has no process"
    echo "$p"
}
