#!/usr/bin/env bash
# --pid with --mount: the path is the watched process's, resolved inside its
# root. A container controls its own files: a symbolic link to an absolute
# path there must lead into the container, never to the host's file of that
# path. Here a chrooted process stands for the container: its /tmp/esc links
# to a host directory holding a look-alike orphan (the host's, never to be
# listed or removed through the container), and its /run/shm links to its
# own /shm, a tmpfs holding its segment.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
test_ns 64m -- "$@"
_lib_tmp

dead=$(dead_pid)
decoy=$SHMTEST_TMP/hostdecoy
mkdir -p "$decoy"
head -c 4096 /dev/zero >"$decoy/torch_${dead}_0"
touch -d '2 hours ago' "$decoy/torch_${dead}_0"
root=$SHMTEST_TMP/ctr-root
mkdir -p "$root/tmp" "$root/run" "$root/shm"
mount -t tmpfs -o size=8m,mode=1777 tmpfs "$root/shm"
head -c 4096 /dev/zero >"$root/shm/inner_segment"
ln -s "$decoy" "$root/tmp/esc"
ln -s /shm "$root/run/shm"

start_in_root "$root"
export CTR_PID

# The link to a host path: followed from the host's root it lists the decoy.
[ -f "/proc/$CTR_PID/root/tmp/esc/torch_${dead}_0" ] || fail "the link does not lead to the decoy from the host"
out=$("$SHMWATCH" --pid "$CTR_PID" --mount /tmp/esc --json 2>&1) || true
if grep -q "torch_${dead}_0" <<<"$out"; then fail "the host's file was listed through the container's link: $out"; fi
out=$("$SHMWATCH" clean --pid "$CTR_PID" --mount /tmp/esc --all-unheld --min-age 0 --orphan-min-age 0 --yes 2>&1) || true
[ -f "$decoy/torch_${dead}_0" ] || fail "clean --pid removed the host's file through the container's link: $out"
ok "a container's link to an absolute host path neither lists nor removes the host's file"

# The link inside the container: its /run/shm is its own /shm.
"$SHMWATCH" --pid "$CTR_PID" --mount /run/shm --json >"$SHMTEST_TMP/inner.json" ||
    fail "--pid --mount /run/shm exited $?"
json_check "$SHMTEST_TMP/inner.json" "[s['name'] for s in j['segments']] == ['inner_segment']" \
    "the container's /run/shm -> /shm is resolved inside its root"
