#!/usr/bin/env bash
# The deployment image (config/deploy/image.sh: the static binary alone,
# imported offline) runs as the DaemonSet and compose examples run it: with
# the host's pid and cgroup namespaces, privileged, it sees another
# container's private /dev/shm with --pid (its segment, its 32 MiB size, its
# cgroup), and as the DaemonSet (the node's /dev/shm shared in, as hostIPC
# does) writes Prometheus metrics that count a workload's segments.
# (--all, the node view of every container at once, comes with its own
# issue; this checks --pid and the shared mount.)
. "$(dirname "$0")/lib.sh"
if [ -z "${SHMWATCH_STATIC:-}" ]; then
    echo "SKIP: deploy_image.sh: no static binary in this build" \
        "(${BUILD_SANITIZE:-?} sanitizers do not link statically); it runs in the plain build" >&2
    exit 77
fi
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need
need busybox
[ -n "${IN_SHM_NS:-}" ] || { in_shm_ns 64m "$0" "$@"; exit $?; }

version=$("$SHMWATCH_STATIC" --version | awk '{ print $2; exit }')
for f in kubernetes-daemonset.yaml kubernetes-sidecar.yaml docker-compose.yaml; do
    grep -q "image: shmwatch:$version " "$SRCDIR/config/deploy/$f" ||
        fail "config/deploy/$f does not use the image shmwatch:$version"
done
ok "the DaemonSet, sidecar and compose examples use shmwatch:$version"

# The recipe's tarball: the binary, /tmp, passwd and group; nothing else.
bash "$SRCDIR/config/deploy/image.sh" --tar "$SHMTEST_TMP/root.tar" "$SHMWATCH_STATIC" >/dev/null ||
    fail "image.sh --tar failed"
assert_eq "$(tar -tf "$SHMTEST_TMP/root.tar" | sed 's|/$||' | sort | tr '\n' ' ')" \
    ". ./etc ./etc/group ./etc/passwd ./tmp ./usr ./usr/bin ./usr/bin/shmwatch " "the image's files"
rc=0
bash "$SRCDIR/config/deploy/image.sh" "$SHMWATCH" >/dev/null 2>"$SHMTEST_TMP/dyn.err" || rc=$?
assert_eq "$rc" 1 "image.sh refuses a dynamic binary ($(cat "$SHMTEST_TMP/dyn.err"))"

# The DaemonSet runs privileged. Where the machine's own capability bounding
# set is short of some (a CI runner that is itself a container lacks
# CAP_SYS_RESOURCE, say), runc cannot give a privileged container all of
# them: then the capabilities shmwatch needs instead.
PRIV=(--privileged)
if [ "$(awk '/^CapBnd/ { print $2 }' /proc/self/status)" != "$(awk '/^CapBnd/ { print $2 }' /proc/1/status)" ] ||
    [ $((0x$(awk '/^CapBnd/ { print $2 }' /proc/self/status) >> 24 & 1)) -eq 0 ]; then
    PRIV=(--cap-add SYS_PTRACE --cap-add SYS_ADMIN --cap-add DAC_READ_SEARCH --cap-add DAC_OVERRIDE)
    echo "# this machine's bounding set lacks capabilities --privileged asks for: ${PRIV[*]} instead" >&2
fi

docker_start
img=shmwatch-test/deploy:$version
DOCKER=$DOCKER_BIN bash "$SRCDIR/config/deploy/image.sh" "$SHMWATCH_STATIC" "$img" >/dev/null ||
    fail "config/deploy/image.sh failed"
# The image this replaced, and busybox's, are left untagged: remove them (the
# data root is cached between runs).
dk image prune -f >/dev/null 2>&1 || true
assert_eq "$(dk run --rm --network none "$img" --version | awk '{ print $1, $2; exit }')" \
    "shmwatch $version" "the image runs shmwatch"

# A workload: busybox alone, a private 32 MiB /dev/shm with one segment.
box=$SHMTEST_TMP/box
mkdir -p "$box"/{bin,tmp,proc,sys,dev}
cp "$(command -v busybox)" "$box/bin/busybox"
for t in sh sleep head; do ln -s busybox "$box/bin/$t"; done
tar -C "$box" -c . | dk import - shmwatch-test/busybox:deploy >/dev/null || fail "docker import of busybox failed"
docker_run job --shm-size 32m shmwatch-test/busybox:deploy sh -c \
    'head -c 2097152 /dev/zero >/dev/shm/torch_1_3 && exec sleep 600'
jobpid=$(docker_pid job)
jobid=$(dk inspect -f '{{.Id}}' job)
wait_for "[ -f /proc/$jobpid/root/dev/shm/torch_1_3 ]" 20 || fail "the workload did not write its segment"

# The image, as the DaemonSet runs it: host pid and cgroup namespaces.
dk run --rm --network none --pid=host --cgroupns=host "${PRIV[@]}" \
    -v /sys/fs/cgroup:/sys/fs/cgroup:ro "$img" --json --pid "$jobpid" \
    >"$SHMTEST_TMP/pid.json" 2>"$SHMTEST_TMP/pid.err" ||
    fail "the image's --json --pid exited $?: $(cat "$SHMTEST_TMP/pid.err")"
json_check "$SHMTEST_TMP/pid.json" \
    "[(m['path'], m['size_bytes']) for m in j['mounts']] == [('/dev/shm', 32 << 20)] and [(s['name'], s['size_bytes']) for s in j['segments']] == [('torch_1_3', 2 << 20)]" \
    "from its own container the image sees the workload's private 32 MiB /dev/shm and its segment"
json_check "$SHMTEST_TMP/pid.json" "j['cgroup'] is not None and '$jobid' in j['cgroup']['path']" \
    "and the workload's memory cgroup (the host's cgroup namespace and hierarchy)" ||
    fail "warnings: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["warnings"])' "$SHMTEST_TMP/pid.json")"

# The DaemonSet's own mode: the node's /dev/shm (here the test's tmpfs, as
# hostIPC shares the node's), metrics into a textfile directory.
docker_run_shared_shm shared shmwatch-test/busybox:deploy sh -c \
    'head -c 1048576 /dev/zero >/dev/shm/torch_1_5 && exec sleep 600'
wait_for "[ -f /dev/shm/torch_1_5 ]" 20 || fail "the shared workload did not write its segment"
mkdir -p "$SHMTEST_TMP/textfile"
docker_run daemonset --pid=host --cgroupns=host "${PRIV[@]}" -v /dev/shm:/dev/shm \
    -v /sys/fs/cgroup:/sys/fs/cgroup:ro \
    -v "$SHMTEST_TMP/textfile:/textfile" "$img" \
    --prometheus-file /textfile/shmwatch.prom --interval 1
prom=$SHMTEST_TMP/textfile/shmwatch.prom
wait_for "grep -q '^shmwatch_segments{.*kind=\"torch\"} 1\$' $prom" 20 || {
    cat "$prom" >&2 2>/dev/null
    dk logs daemonset >&2
    fail "the DaemonSet's metrics never counted the torch segment"
}
grep -q '^shmwatch_mount_size_bytes{mount="/dev/shm"} 67108864$' "$prom" ||
    fail "the metrics do not give the shared mount's 64 MiB"
ok "as the DaemonSet, the image writes metrics of the node's /dev/shm: one torch segment in 64 MiB"
