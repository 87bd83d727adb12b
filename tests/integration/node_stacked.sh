#!/usr/bin/env bash
# A tmpfs stacked under another at the same path in one mount namespace
# (mount a tmpfs on /dev/shm, then another on top of it), as findmnt shows
# them both: the node view lists the top one with its file, never the file
# below (its path leads to the top one), and says once, by device, that the
# one below is hidden, with a process to ask findmnt -N about; two
# namespaces sharing that stack still make one warning.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 16m --pid -- "$@"
_lib_tmp

unshare -m --propagation private bash -c '
    mount -t tmpfs -o size=3m tmpfs /dev/shm || exit 1
    : >/dev/shm/below
    mount -t tmpfs -o size=5m tmpfs /dev/shm || exit 1
    : >/dev/shm/above
    unshare -m --propagation private sleep 300 </dev/null >/dev/null 2>&1 &
    echo $! >"$1/inner"
    : >"$1/ready"
    exec sleep 300' _ "$SHMTEST_TMP" </dev/null >/dev/null 2>&1 &
CTR=$!
on_exit "kill -KILL $CTR 2>/dev/null; wait $CTR 2>/dev/null; true"
wait_for "[ -e $SHMTEST_TMP/ready ]" 30 || fail "the namespace did not start"
INNER=$(cat "$SHMTEST_TMP/inner")
on_exit "kill -KILL $INNER 2>/dev/null; true"
[ "$(readlink "/proc/$INNER/ns/mnt")" != "$(readlink "/proc/$CTR/ns/mnt")" ] ||
    fail "the second namespace is not one of its own"
# The two /dev/shm mounts the namespace's mountinfo ends with: below, then above.
read -r below above < <(awk '$5 == "/dev/shm" { d[n++] = $3 } END { print d[n-2], d[n-1] }' \
    "/proc/$CTR/mountinfo")
[ -n "$below" ] && [ -n "$above" ] && [ "$below" != "$above" ] ||
    fail "no stacked /dev/shm in the namespace's mountinfo: '$below' '$above'"
export BELOW=$below ABOVE=$above CTR

"$SHMWATCH" --all --json >"$SHMTEST_TMP/all.json" || fail "--all --json exited $?"
json_check "$SHMTEST_TMP/all.json" \
    "[(m['size_bytes'], [s['name'] for s in j['segments'] if s['mount_id'] == m['id']]) for m in j['mounts'] if m['id'] == env['ABOVE']] == [(5 << 20, ['above'])]" \
    "the top tmpfs is listed with its size and its file" \
    \
    "not [m for m in j['mounts'] if m['id'] == env['BELOW']] and not [s for s in j['segments'] if s['name'] == 'below']" \
    "the hidden one and its file are not listed" \
    \
    "[w for w in j['warnings'] if '(device %s)' % env['BELOW'] in w] == ['/dev/shm (device %s) is not shown: another mount on the same path hides it (findmnt -N %s lists both)' % (env['BELOW'], env['CTR'])]" \
    "one warning names the hidden tmpfs by its device, and a process to ask findmnt -N" \
    "not [w for w in j['warnings'] if 'exited' in w or '(device %s)' % env['ABOVE'] in w]" \
    "no warning about the top one, and none says a live namespace exited"
