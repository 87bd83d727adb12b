#!/usr/bin/env bash
# The deployment image (config/deploy/image.sh: the static binary alone,
# imported offline) runs as the DaemonSet and compose examples run it: with
# the host's pid and cgroup namespaces, privileged, a read-only root, and
# Docker's containers/ directory and the cgroup hierarchy mounted read-only,
# its --all --json sees another container's private /dev/shm by the
# container's name (its segment, its 32 MiB size, its cgroup), and as the
# DaemonSet (--all --prometheus-file, no hostIPC) writes metrics that count
# the segments of that container and of the node's own /dev/shm.
. "$(dirname "$0")/lib.sh"
need_static
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need busybox
test_ns 64m -- "$@"

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

# The DaemonSet runs privileged, or where this machine cannot give that, with
# the capabilities shmwatch needs.
PRIV=(--privileged)
if ! docker_privileged_ok; then
    PRIV=()
    for c in "${DOCKER_NODE_CAPS[@]}"; do PRIV+=(--cap-add "$c"); done
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
docker_busybox_tree "$box"
tar -C "$box" -c . | dk import - shmwatch-test/busybox:deploy >/dev/null || fail "docker import of busybox failed"
docker_run job --shm-size 32m shmwatch-test/busybox:deploy sh -c \
    'head -c 2097152 /dev/zero >/dev/shm/torch_1_3 && exec sleep 600'
jobpid=$(docker_pid job)
jobid=$(dk inspect -f '{{.Id}}' job)
wait_for "[ -f /proc/$jobpid/root/dev/shm/torch_1_3 ]" 20 || fail "the workload did not write its segment"

# The image, as the DaemonSet and compose examples run it: host pid and
# cgroup namespaces, a read-only root, the runtime's state and the cgroup
# hierarchy read-only at their paths on the host (the test's daemon keeps its
# containers/ in its own data root).
RUN_AS_DS=(--network none --pid=host --cgroupns=host "${PRIV[@]}" --read-only
    -v /sys/fs/cgroup:/sys/fs/cgroup:ro -v "$DOCKER_DATA/containers:/var/lib/docker/containers:ro")
dk run --rm "${RUN_AS_DS[@]}" "$img" --all --json \
    >"$SHMTEST_TMP/all.json" 2>"$SHMTEST_TMP/all.err" ||
    fail "the image's --all --json exited $?: $(cat "$SHMTEST_TMP/all.err")"
export JOBID=$jobid
mine="[m for m in j['mounts'] if env['JOBID'] in [c['id'] for c in m['containers']]]"
json_check "$SHMTEST_TMP/all.json" \
    "[(m['path'], m['size_bytes'], [(c['name'], c['runtime']) for c in m['containers']], [(s['name'], s['size_bytes']) for s in j['segments'] if s['mount_id'] == m['id']]) for m in $mine] == [('/dev/shm', 32 << 20, [('job', 'docker')], [('torch_1_3', 2 << 20)])]" \
    "from its own container, --all sees the workload's private 32 MiB /dev/shm by the container's name, and its segment"
json_check "$SHMTEST_TMP/all.json" "[m['cgroup'] is not None and env['JOBID'] in m['cgroup']['path'] for m in $mine] == [True]" \
    "and the workload's memory cgroup (the host's cgroup namespace and hierarchy)" ||
    fail "warnings: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["warnings"])' "$SHMTEST_TMP/all.json")"

# The DaemonSet's own mode: every mount, metrics into a textfile directory.
# The node's own /dev/shm (here the test's tmpfs) is reached through the
# node's processes, without hostIPC.
docker_run_shared_shm shared shmwatch-test/busybox:deploy sh -c \
    'head -c 1048576 /dev/zero >/dev/shm/torch_1_5 && exec sleep 600'
wait_for "[ -f /dev/shm/torch_1_5 ]" 20 || fail "the shared workload did not write its segment"
mkdir -p "$SHMTEST_TMP/textfile"
docker_run daemonset "${RUN_AS_DS[@]:2}" -v "$SHMTEST_TMP/textfile:/textfile" "$img" \
    --all --prometheus-file /textfile/shmwatch.prom --interval 1
prom=$SHMTEST_TMP/textfile/shmwatch.prom
wait_for "grep -qs '^shmwatch_segments{.*container=\"job\".*kind=\"torch\"} 1\$' $prom" 20 || {
    cat "$prom" >&2 2>/dev/null
    dk logs daemonset >&2
    fail "the DaemonSet's metrics never counted the job container's torch segment"
}
grep -q "^shmwatch_mount_size_bytes{.*container=\"job\",container_id=\"$jobid\".*} 33554432\$" "$prom" ||
    fail "the metrics do not give the job container's 32 MiB"
ok "as the DaemonSet, the image writes metrics of the job container's /dev/shm by its name: one torch segment in 32 MiB"
# The mount id of the node's own /dev/shm, as the image's JSON gives it.
dk run --rm "${RUN_AS_DS[@]}" "$img" --all --json >"$SHMTEST_TMP/all2.json" 2>"$SHMTEST_TMP/all.err" ||
    fail "the image's --all --json exited $?: $(cat "$SHMTEST_TMP/all.err")"
dev=$(python3 -c 'import json, sys
print(*[s["mount_id"] for s in json.load(open(sys.argv[1]))["segments"] if s["name"] == "torch_1_5"])' "$SHMTEST_TMP/all2.json")
[ -n "$dev" ] && [ "${dev// /}" = "$dev" ] || fail "--all --json shows torch_1_5 on mounts '$dev'"
grep -q "^shmwatch_segments{.*mount_id=\"$dev\".*kind=\"torch\"} 1\$" "$prom" || {
    grep "mount_id=\"$dev\"" "$prom" | head -n 5 >&2
    fail "the metrics do not count the torch segment of the node's own /dev/shm ($dev)"
}
ok "and of the node's own /dev/shm ($dev), without hostIPC"
