#!/usr/bin/env bash
# A mount namespace whose mountinfo is tens of KiB, its /dev/shm the last
# line (as a container's of many image layers, volumes and secrets): the
# kernel hands mountinfo out a page at a time, and the node view must read it
# to its end to find that /dev/shm and the segment held in it. The file
# itself is checked to be long, so the test cannot pass on a short one.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 16m --pid -- "$@"
_lib_tmp

# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m --propagation private bash -c '
    # 40 bind mounts of paths over 600 bytes long: some 50 KiB of mountinfo.
    long=$(printf "%0200d" 0)
    for i in $(seq 1 40); do
        d="$1/binds/$long/$long/$long/$i"
        mkdir -p "$d" && mount --bind "$d" "$d" || exit 1
    done
    mount -t tmpfs -o size=24m tmpfs /dev/shm || exit 1
    head -c 4194304 /dev/zero >/dev/shm/long-ns-segment || exit 1
    : >"$1/ready"
    exec sleep 300' _ "$SHMTEST_TMP" </dev/null >/dev/null 2>&1 &
CTR=$!
on_exit "kill -KILL $CTR 2>/dev/null; wait $CTR 2>/dev/null; true"
wait_for "[ -e $SHMTEST_TMP/ready ]" 30 || fail "the namespace did not start"

size=$(wc -c <"/proc/$CTR/mountinfo")
[ "$size" -gt 32768 ] || fail "the namespace's mountinfo is only $size bytes"
last=$(tail -n 1 "/proc/$CTR/mountinfo" | awk '{ print $5 }')
assert_eq "$last" /dev/shm "the namespace's mountinfo ($size bytes) ends with its /dev/shm"
export DEV
DEV=$(tail -n 1 "/proc/$CTR/mountinfo" | awk '{ print $3 }')

"$SHMWATCH" --all --json >"$SHMTEST_TMP/all.json" || fail "--all --json exited $?"
json_check "$SHMTEST_TMP/all.json" \
    "[(m['path'], m['size_bytes'], [(s['name'], s['size_bytes']) for s in j['segments'] if s['mount_id'] == m['id']]) for m in j['mounts'] if m['id'] == env['DEV']] == [('/dev/shm', 24 << 20, [('long-ns-segment', 4 << 20)])]" \
    "the node view finds the /dev/shm past the first page of mountinfo, with its segment" \
    "not [w for w in j['warnings'] if 'mountinfo' in w]" \
    "no warning of a mountinfo cut short"
