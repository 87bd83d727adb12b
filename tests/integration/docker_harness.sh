#!/usr/bin/env bash
# The Docker harness itself (tests/stack/docker_lib.sh), which other tests
# build on: a private dockerd starts, a test that fails with containers
# running still removes them and stops its daemons, a container sharing the
# test's tmpfs as its /dev/shm (what --ipc=host does with the host's) writes
# where the test and shmwatch see it and never into the host's /dev/shm, and
# a private one gets its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need
test_ns 64m -- "$@"
IMG=$DOCKER_IMAGE_TORCH

# 1. A test that fails with a container running, its dockerd killed, cleans
# up all the same; the next daemon on the cached data root removes the
# container record left behind.
cat >"$SHMTEST_TMP/failing.sh" <<FAILING
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_start
docker_image_torch
docker_run doomed "$IMG" sleep 600
echo "\$_DOCKER_DOCKERD \$_DOCKER_CONTAINERD \$(docker_pid doomed) \$DOCKER_STATE" >"$SHMTEST_TMP/failing.pids"
# The worst case: dockerd itself dies first, and cannot remove the container.
kill -KILL \$_DOCKER_DOCKERD
fail "failing on purpose with a container running and dockerd killed"
FAILING
rc=0
bash "$SHMTEST_TMP/failing.sh" >"$SHMTEST_TMP/failing.log" 2>&1 || rc=$?
assert_eq "$rc" 1 "the failing test fails ($(tail -n 1 "$SHMTEST_TMP/failing.log"))"
read -r dockerd containerd sleeper state <"$SHMTEST_TMP/failing.pids" || fail "no pids from the failing test"
gone "$dockerd" "$containerd" "$sleeper" || fail "left running: $(ps -o pid=,args= -p "$dockerd,$containerd,$sleeper")"
ok "its container's process $sleeper, dockerd $dockerd and containerd $containerd are gone"
[ ! -e "$state" ] || fail "its state directory $state is still there"
! grep -qF "$state" /proc/self/mountinfo || fail "mounts under $state are left"
! grep -sqF "$state" /proc/[0-9]*/cmdline || fail "a process of $state is left"
ok "its state directory, mounts and shims are gone"

# 2. The harness as tests use it.
docker_start
assert_eq "$(dk ps -aq | wc -l)" 0 "no container is left from the failed test"
docker_image_torch
ok "dockerd ($DOCKER_DRIVER) and $IMG are ready (import: $DOCKER_IMPORT_S s)"
probe=shmwatch-harness-probe.$$
docker_run_shared_shm shared "$IMG" sh -c "head -c 1048576 /dev/zero >/dev/shm/$probe && exec sleep 600"
wait_for "[ -f /dev/shm/$probe ]" 20 || fail "the container's write did not reach the test's /dev/shm"
ok "a container sharing the test's tmpfs writes into it"
"$SHMWATCH" --json >"$SHMTEST_TMP/shared.json" || fail "shmwatch --json exited $?"
json_check "$SHMTEST_TMP/shared.json" "[s['size_bytes'] for s in j['segments'] if s['name'] == '$probe'] == [1 << 20]" \
    "shmwatch sees the container's file in the test's mount"
spid=$(docker_pid shared)
assert_eq "$(stat -L -c %d "/proc/$spid/root/dev/shm")" "$(stat -c %d /dev/shm)" \
    "the container's /dev/shm is the test's tmpfs"
[ "$(stat -L -c %d "/proc/$spid/root/dev/shm")" != "$SHMWATCH_OUTER_SHM_DEV" ] ||
    fail "the container's /dev/shm is the host's"
ok "and not the host's /dev/shm"
docker_run private --shm-size 8m "$IMG" sleep 600
ppid_=$(docker_pid private)
[ "$(stat -L -c %d "/proc/$ppid_/root/dev/shm")" != "$(stat -c %d /dev/shm)" ] ||
    fail "a private container shares the test's tmpfs"
"$SHMWATCH" --json --pid "$ppid_" >"$SHMTEST_TMP/private.json" || fail "shmwatch --pid exited $?"
json_check "$SHMTEST_TMP/private.json" "j['mounts'][0]['size_bytes'] == 8 << 20 and j['segments'] == []" \
    "a private container has its own 8 MiB /dev/shm, empty"
assert_eq "$(dk inspect -f '{{.HostConfig.NetworkMode}}' private)" none "containers run with --network none"
