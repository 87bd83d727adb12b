#!/usr/bin/env bash
# A tmpfs mounted with nr_inodes that has run out of inodes (thousands of
# leftover semaphores or tiny segments) refuses every new segment with
# "No space left on device" while its bytes are free. The budget must say
# so, critical, both in the own view and for a container's mount in the
# node view (--all), rather than "ok, 8 MiB still writable".
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 16m --pid -- "$@"
_lib_tmp

# The own view: a fresh tmpfs of 8 MiB and 16 inodes (one is its root).
mount -t tmpfs -o size=8m,nr_inodes=16,mode=1777 tmpfs /dev/shm || fail "cannot mount a tmpfs with nr_inodes"
for i in $(seq 20); do : >"/dev/shm/sem.leak$i"; done 2>/dev/null
[ "$(stat -f -c %d /dev/shm)" -eq 0 ] || fail "the tmpfs still has free inodes: $(stat -f -c %d /dev/shm)"
"$SHMWATCH" --json >"$SHMTEST_TMP/own.json" || fail "--json exited $?"
json_check "$SHMTEST_TMP/own.json" "j['budget']['verdict'] == 'critical' and any('16 of its 16 inodes in use' in a and 'No space left on device' in a for a in j['budget']['advice'])" \
    "own view: out of inodes with 8 MiB free is critical, and the advice says why"
umount /dev/shm

# The node view: a mount namespace whose /dev/shm is out of inodes, and one
# whose is not.
start_ns() { # TAG INODES FILES
    unshare -m --propagation private bash -c '
        mount -t tmpfs -o "size=8m,nr_inodes=$1" tmpfs /dev/shm || exit 1
        for i in $(seq "$2"); do : >"/dev/shm/sem.leak$i"; done 2>/dev/null
        : >"$3"
        exec sleep 300' _ "$2" "$3" "$SHMTEST_TMP/ready.$1" </dev/null >/dev/null 2>&1 &
    printf -v "NS_$1" %s "$!"
    on_exit "kill -KILL $! 2>/dev/null; wait $! 2>/dev/null; true"
    wait_for "[ -e $SHMTEST_TMP/ready.$1 ]" 30 || fail "namespace $1 did not start"
}
start_ns full 32 40
start_ns roomy 1000 10
export NS_full NS_roomy
"$SHMWATCH" --all --json >"$SHMTEST_TMP/all.json" || fail "--all --json exited $?"
json_check "$SHMTEST_TMP/all.json" "[(m['budget']['verdict'], any('32 of its 32 inodes in use' in a for a in m['budget']['advice'])) for m in j['mounts'] if m['size_bytes'] == 8 << 20 and m['segments'] == 31] == [('critical', True)]" \
    "node view: the mount out of inodes is critical" \
    "[m['budget']['verdict'] for m in j['mounts'] if m['size_bytes'] == 8 << 20 and m['segments'] == 10] == ['ok']" \
    "node view: its neighbour with inodes to spare is ok" \
    "sorted((m['segments'], m['inodes'], m['inodes_free']) for m in j['mounts'] if m['size_bytes'] == 8 << 20) == [(10, 1000, 989), (31, 32, 0)]" \
    "node view: each mount's inodes and free inodes in the JSON"
