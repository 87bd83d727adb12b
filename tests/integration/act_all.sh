#!/usr/bin/env bash
# clean and reap with --all: every mount of the node view, each acted on
# inside its own container. Two emulated containers (a holder process in a
# mount namespace of its own with its own tmpfs at /dev/shm; A in a memory
# cgroup named as Docker's systemd driver names a container's, so it is
# named by its id; B no runtime's, named by its pid) and this test's own
# /dev/shm (the host's, in the node view) each hold an orphan. `clean --all
# --yes` removes the three, the plan and every line naming where, the log
# too; `reap --all` ends the stuck orphaned worker of each container, each
# line naming its container. A container whose holder exits between the plan
# and the action is refused ("its container exited") while the others'
# orphans are removed; exit 3. Run in a private mount namespace of its own,
# clean names its own mount as the report heads it, not as the host's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need setsid nsenter od
# A private pid namespace: its pid 1 (this script) is the node view's host;
# --all sees only this test's processes and mounts besides the host's own.
test_ns 64m --pid -- "$@"
_lib_tmp
# The binary that honours the test hooks' pauses (the test build's, where
# there is one; else the program itself).
HOOKED=${SHMWATCH_HOOKED:-$SHMWATCH}

ctr_cgroup 268435456
id=$CTR_ID
ns_holder A "$MEMCG_DIR"
ha=$HOLDER
ns_holder B
hb=$HOLDER
name_a=${id:0:12} name_b="pid $hb"

# orphan WHERE: a torch segment of a dead creator in WHERE's /dev/shm (a
# holder pid, or "host"); prints its name.
orphan() {
    local name
    name=torch_$(dead_pid)_0
    if [ "$1" = host ]; then
        head -c 65536 /dev/zero >"/dev/shm/$name"
    else
        nsenter -t "$1" -m -- sh -c 'head -c 65536 /dev/zero >"/dev/shm/$1"' _ "$name"
    fi
    echo "$name"
}
oa=$(orphan "$ha")
ob=$(orphan "$hb")
oh=$(orphan host)
[ -f "/proc/$ha/root/dev/shm/$oa" ] && [ ! -e "/dev/shm/$oa" ] ||
    fail "A's orphan is not in A's own /dev/shm"
ok "containers A ($name_a, pid $ha) and B (pid $hb) and the host, an orphan each"

log=$SHMTEST_TMP/actions.log
"$SHMWATCH" clean --all --dry-run >"$SHMTEST_TMP/plan" 2>&1 ||
    fail "clean --all --dry-run exited $?: $(cat "$SHMTEST_TMP/plan")"
cat "$SHMTEST_TMP/plan"
for x in "$oa:$name_a" "$ob:$name_b" "$oh:host"; do
    grep -q "^  /dev/shm/${x%%:*} (in ${x#*:})  " "$SHMTEST_TMP/plan" ||
        fail "the plan does not name ${x#*:} for ${x%%:*}"
done
ok "the plan names the container of each action"

# A directory named like a dead creator's segment in A's /dev/shm: reported
# (refused, never removed) as A's, not as the host's; exit 3.
da=torch_$(dead_pid)_9
nsenter -t "$ha" -m -- mkdir "/dev/shm/$da"
rc=0
"$SHMWATCH" clean --all --dry-run >"$SHMTEST_TMP/plan.dir" 2>&1 || rc=$?
assert_eq "$rc" 3 "clean --all --dry-run with a directory to refuse exits 3"
grep -q "^refused  */dev/shm/$da (in $name_a)  a directory (never removed)$" "$SHMTEST_TMP/plan.dir" ||
    fail "the plan does not report A's directory $da as A's: $(cat "$SHMTEST_TMP/plan.dir")"
nsenter -t "$ha" -m -- test -d "/dev/shm/$da" || fail "A's directory is gone"
nsenter -t "$ha" -m -- rmdir "/dev/shm/$da"
ok "a directory in A's /dev/shm is reported as A's, never removed"

rc=0
out=$("$SHMWATCH" clean --all --yes --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 0 "clean --all --yes exits 0"
for x in "$oa:$name_a" "$ob:$name_b" "$oh:host"; do
    grep -q "^removed  *\/dev\/shm\/${x%%:*} (in ${x#*:})  .* freed" <<<"$out" ||
        fail "no 'removed' line naming ${x#*:} for ${x%%:*}"
    grep -q "^/dev/shm (in ${x#*:}) used: " <<<"$out" || fail "no use line for ${x#*:}'s mount"
    grep -q "	unlink	/dev/shm/${x%%:*}	.*	removed	.*	container=${x#*:}\$" "$log" ||
        fail "the action log does not name ${x#*:}: $(cat "$log")"
done
grep -q "^Total: 3 removed" <<<"$out" || fail "the total is not 3 removed"
[ ! -e "/proc/$ha/root/dev/shm/$oa" ] && [ ! -e "/proc/$hb/root/dev/shm/$ob" ] &&
    [ ! -e "/dev/shm/$oh" ] || fail "an orphan is still there"
ok "clean --all --yes removed each container's orphan and the host's, each line and log entry naming where"

# --- reap --all: a stuck orphaned worker in each container -------------------
SCENE_PREFIX="setsid nsenter -t $ha -m --" scene_start --workers 1 --per-worker 1 --modes fd \
    --stuck-orphan
sa=$(manifest_pids stuck) ma=$SCENE_PID
SCENE_PREFIX="setsid nsenter -t $hb -m --" scene_start --workers 1 --per-worker 1 --modes fd \
    --stuck-orphan
sb=$(manifest_pids stuck) mb=$SCENE_PID
kill -KILL "$ma" "$mb"
wait_reparented "$sa" "$ma" && wait_reparented "$sb" "$mb" ||
    fail "the stuck workers were not re-parented"
rc=0
out=$("$SHMWATCH" reap --all --yes --timeout 1 --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 0 "reap --all --yes exits 0"
grep -q "^  pid $sa (shmscene) (in $name_a) " <<<"$out" || fail "the plan does not name A for its worker"
grep -q "^killed  *pid $sa (shmscene) (in $name_a)  " <<<"$out" || fail "A's worker's end does not name A"
grep -q "^killed  *pid $sb (shmscene) (in $name_b)  " <<<"$out" || fail "B's worker's end does not name B"
[ "$(tail -n 1 <<<"$out" | cut -c1-6)" = Total: ] || fail "Total: is not the last line"
wait_for "gone $sa $sb" 5 || fail "a stuck worker is still alive"
grep -q "	signal TERM,KILL	pid $sb (shmscene)	.*	killed	.*	container=$name_b\$" "$log" ||
    fail "the action log does not name B for its kill"
ok "reap --all ended each container's stuck worker, each line naming its container"

# --- a container that exits between the plan and the action -----------------
oa=$(orphan "$ha")
ob=$(orphan "$hb")
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=3 "$HOOKED" clean --all --yes \
    --log "$log" >"$SHMTEST_TMP/race.out" 2>&1 &
cl=$!
wait_for "grep -q 'to remove' $SHMTEST_TMP/race.out" 10 || fail "clean --all planned nothing"
kill -KILL "$ha"
wait "$ha" 2>/dev/null
: >"$GATE"
rc=0
wait "$cl" || rc=$?
out=$(cat "$SHMTEST_TMP/race.out")
echo "$out"
assert_eq "$rc" 3 "clean --all exits 3 when a container exited before its unlink"
grep -q "^refused  *\/dev\/shm\/$oa (in $name_a)  its container exited" <<<"$out" ||
    fail "A's orphan is not refused as 'container exited'"
grep -q "^removed  *\/dev\/shm\/$ob (in $name_b)  " <<<"$out" || fail "B's orphan was not removed"
grep -q "^/dev/shm (in $name_a) used: .* -> unknown\$" <<<"$out" ||
    fail "A's mount's use after is not unknown"
ok "a container that exits before its unlink is refused; its neighbour's orphan is still removed"

rc=0
"$SHMWATCH" clean --all --pid 1 >/dev/null 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 2 "clean --all --pid is a usage error"
grep -q "^shmwatch clean: --all and --pid exclude each other" "$SHMTEST_TMP/err" ||
    fail "no clear error for --all with --pid: $(cat "$SHMTEST_TMP/err")"

# shmwatch in a private mount namespace of its own (as a DaemonSet's pod
# may be): its own /dev/shm is a namespace of the node view, and clean names
# it as the report heads it, not as the host's.
out=$(unshare -m --propagation private bash -c 'mount -t tmpfs -o size=4m tmpfs /dev/shm &&
    head -c 4096 /dev/zero >/dev/shm/own_unheld && "$1" --all --once && echo ==== &&
    "$1" clean --all --all-unheld --min-age 0 --dry-run --log "$2"' _ "$SHMWATCH" "$SHMTEST_TMP/own.log" 2>&1) ||
    fail "shmwatch in a private mount namespace failed: $out"
heading=$(awk '/^== /{ h = $0 } /^  own_unheld /{ print h; exit }' <<<"$out")
[[ "$heading" =~ ^==\ MOUNT\ NAMESPACE\ of\ pid\ ([0-9]+)$ ]] ||
    fail "the report does not head its own mount as a mount namespace: '$heading'"
grep -q "^would remove /dev/shm/own_unheld (in pid ${BASH_REMATCH[1]})  " <<<"$out" ||
    fail "clean does not name its own mount as the report does: $out"
ok "in a private mount namespace, clean names its own mount as the report does (pid ${BASH_REMATCH[1]})"
