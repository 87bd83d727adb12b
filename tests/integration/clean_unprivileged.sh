#!/usr/bin/env bash
# An unprivileged user (nobody) cannot remove root's orphans nor signal
# root's processes: each refusal says whose they are, exit 3, nothing of
# root's changes. The same user's own orphan is removed, but not one that a
# process of root's, beyond the user's sight, still has open or mapped.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setpriv setsid
# A private pid namespace: reap must see only this test's processes.
test_ns 64m --pid -- "$@"
_lib_tmp
"${NOBODY[@]}" true || _lib_missing "setpriv to nobody"
# nobody runs a copy of the program with a copy of the suite's settings
# (tests/meson.build's XDG_CONFIG_HOME: orphan_min_age 0), both where it can
# read them: a checkout below a directory nobody cannot enter (/root) is out
# of its reach, and without the settings the scene's orphans, seconds old,
# would be in flight.
nobody_dir=$SHMTEST_TMP/nobody
mkdir -p "$nobody_dir/xdg/shmwatch"
cp "$SHMWATCH" "$nobody_dir/shmwatch" && cp "$XDG_CONFIG_HOME/shmwatch/config.yaml" "$nobody_dir/xdg/shmwatch/" ||
    fail "cannot copy the program and the suite's settings to $nobody_dir"
chmod -R a+rX "$nobody_dir"
NOBODY+=(env "XDG_CONFIG_HOME=$nobody_dir/xdg")
SHMWATCH_NOBODY=$nobody_dir/shmwatch

# Root's orphan, and one of nobody's (both creators have exited).
dead=$(dead_pid)
head -c 65536 /dev/zero >"/dev/shm/torch_${dead}_1"
"${NOBODY[@]}" sh -c 'head -c 65536 /dev/zero >/dev/shm/torch_$$_1; echo $$' >"$SHMTEST_TMP/npid"
npid=$(cat "$SHMTEST_TMP/npid")
[ "$(stat -c %U "/dev/shm/torch_${npid}_1")" = nobody ] || fail "nobody's orphan is not nobody's"
# Two more of nobody's files whose creators have exited, each still used by
# a process of root's that nobody cannot search: one holds it open, the
# other only maps it. They look exactly like orphans to nobody.
held=()
for k in 1 2; do
    "${NOBODY[@]}" sh -c 'head -c 65536 /dev/zero >/dev/shm/torch_$$_1; echo $$' >"$SHMTEST_TMP/npid"
    held+=("torch_$(cat "$SHMTEST_TMP/npid")_1")
done
sleep 600 3<"/dev/shm/${held[0]}" &
on_exit "kill $! 2>/dev/null; true"
python3 -c 'import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR); m = mmap.mmap(fd, 4096); os.close(fd)
open(sys.argv[2], "w").close(); time.sleep(600)' "/dev/shm/${held[1]}" "$SHMTEST_TMP/mapped" &
on_exit "kill $! 2>/dev/null; true"
wait_for "[ -e $SHMTEST_TMP/mapped ]" 30 || fail "the mapping holder did not start"

# A job of root's whose stuck worker is orphaned. Its fds are beyond nobody's
# sight, so it is named the way torch >= 2.5 names workers.
SCENE_PREFIX=setsid scene_start --workers 1 --per-worker 1 --modes fd --stuck-orphan \
    --worker-comm pt_data_worker
stuck=$(manifest_pids stuck)
kill -KILL "$SCENE_PID"
wait_reparented "$stuck" "$SCENE_PID" || fail "the stuck worker was not re-parented"

log=$SHMTEST_TMP/nobody.log
rc=0
out=$(cd / && "${NOBODY[@]}" "$SHMWATCH_NOBODY" clean --yes --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 3 "clean as nobody exits 3"
grep -q "^refused  *.*/torch_${dead}_1  owned by uid 0, not by you (uid 65534): only its owner or root may remove it$" <<<"$out" ||
    fail "the refusal of root's orphan is not clear"
[ -f "/dev/shm/torch_${dead}_1" ] || fail "nobody removed root's orphan"
ok "nobody cannot remove root's orphan, and is told why"
grep -q "^removed  *.*/torch_${npid}_1 " <<<"$out" || fail "nobody's own orphan was not removed"
[ ! -e "/dev/shm/torch_${npid}_1" ] || fail "nobody's own orphan is still there"
ok "nobody removes its own orphan"
for name in "${held[@]}"; do
    [ -f "/dev/shm/$name" ] || fail "nobody removed $name, which a process of root's still uses"
    grep -q "^refused  *.*/$name  in use: open in a process the search could not see" <<<"$out" ||
        fail "no in-use refusal for $name"
done
ok "nobody's files that root's processes hold (an fd, a mapping) are refused as in use"

rc=0
out=$(cd / && "${NOBODY[@]}" "$SHMWATCH_NOBODY" reap --yes --timeout 1 --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 3 "reap as nobody exits 3"
grep -q "^refused  *pid $stuck (pt_data_worker)  owned by uid 0, not by you (uid 65534): only its owner or root may signal it$" <<<"$out" ||
    fail "the refusal to signal root's worker is not clear"
! gone "$stuck" || fail "nobody ended root's worker"
ok "nobody cannot signal root's processes, and is told why"
assert_eq "$(grep -c '	refused	owned by uid 0' "$log")" 2 "both refusals are logged"

# Root can.
rc=0
"$SHMWATCH" reap --yes --timeout 1 --log "$SHMTEST_TMP/root.log" >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 0 "root's reap ends the worker"

# Root's processes are beyond nobody's sight, and the snapshot says how to
# see them.
out=$(cd / && "${NOBODY[@]}" "$SHMWATCH_NOBODY" --json) || fail "--json as nobody exited $?"
grep -Eq "(process's|processes') fds or maps could not be read \(permission denied\): run as root to see other users' holders" \
    <<<"$out" || fail "no warning that root's processes were not read: $out"
ok "as nobody, the snapshot warns that root's processes were not read, and says to run as root"
