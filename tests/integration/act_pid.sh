#!/usr/bin/env bash
# clean and reap with --pid: inside one container's namespaces only. Two
# emulated containers A and B (each a holder process in a mount namespace of
# its own with its own tmpfs at /dev/shm, and a DataLoader-like scene entered
# into it) each leave an orphan segment and a stuck orphaned worker.
# `clean --pid A` removes A's orphan only, each line naming A; `reap --pid A`
# kills A's stuck worker only; the action log names A. A container whose
# holder exits between the plan and the action is refused ("its container
# exited"), for an unlink and for a signal, also when the holder's pid has
# gone to a new process (for the unlink, one in another mount namespace,
# whose /dev/shm holds a file of the same name): the view is pinned by a
# pidfd; exit 3, and nothing of it is touched. A container C
# with its own pid namespace too: its orphan, whose name carries the pid
# inside, is removed by `clean --pid C`, its segment in use kept.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need setsid nsenter
# A private pid namespace: this script is pid 1 (pid_to_newcomer), reap sees
# only this test's processes.
test_ns 64m --pid -- "$@"
_lib_tmp
# The binary that honours the test hooks' pauses (the test build's, where
# there is one; else the program itself).
HOOKED=${SHMWATCH_HOOKED:-$SHMWATCH}

mntns() { readlink "/proc/$1/ns/mnt"; }

ns_holder A
ha=$HOLDER
ns_holder B
hb=$HOLDER
[ "$(mntns "$ha")" != "$(mntns "$hb")" ] && [ "$(mntns "$ha")" != "$(mntns $$)" ] ||
    fail "the containers do not have mount namespaces of their own"

# A scene in each: one worker, one stuck worker that outlives its main, one
# orphan of a dead creator.
SCENE_PREFIX="setsid nsenter -t $ha -m --" scene_start --workers 1 --per-worker 2 --modes named,fd \
    --orphans 1 --stuck-orphan
man_a=$MANIFEST scene_a=$SCENE_PID
SCENE_PREFIX="setsid nsenter -t $hb -m --" scene_start --workers 1 --per-worker 2 --modes named,fd \
    --orphans 1 --stuck-orphan
man_b=$MANIFEST scene_b=$SCENE_PID
[ "$(mntns "$scene_a")" = "$(mntns "$ha")" ] || fail "scene A is not in container A"
orphan_of() { # MANIFEST: the name of its orphan
    MANIFEST=$1 manifest_segments orphan | { read -r _ _ _ _ hex && unhex "$hex"; }
}
orph_a=$(orphan_of "$man_a")
orph_b=$(orphan_of "$man_b")
[ -n "$orph_a" ] && [ -n "$orph_b" ] || fail "the scenes made no orphan"
[ -f "/proc/$ha/root/dev/shm/$orph_a" ] && [ -f "/proc/$hb/root/dev/shm/$orph_b" ] ||
    fail "the orphans are not in the containers' own /dev/shm"
[ ! -e "/dev/shm/$orph_a" ] || fail "A's orphan is in this test's own /dev/shm"
ok "containers A (pid $ha) and B (pid $hb), each with an orphan ($orph_a, $orph_b)"

log=$SHMTEST_TMP/actions.log

# --- clean --pid A ----------------------------------------------------------
"$SHMWATCH" clean --pid "$ha" --dry-run >"$SHMTEST_TMP/plan.a" 2>&1 ||
    fail "clean --pid --dry-run exited $?: $(cat "$SHMTEST_TMP/plan.a")"
grep -q "^  /dev/shm/$orph_a (in pid $ha)  " "$SHMTEST_TMP/plan.a" ||
    fail "the plan does not name A's orphan in A: $(cat "$SHMTEST_TMP/plan.a")"
grep -q "$orph_b" "$SHMTEST_TMP/plan.a" && fail "the plan for A names B's orphan"
ok "clean --pid A plans A's orphan, named in A, and nothing of B"

rc=0
out=$("$SHMWATCH" clean --pid "$ha" --yes --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 0 "clean --pid A --yes exits 0"
grep -q "^removed  *\/dev\/shm\/$orph_a (in pid $ha)  .* freed" <<<"$out" ||
    fail "no 'removed' line naming A for A's orphan"
[ "$(tail -n 1 <<<"$out" | cut -c1-6)" = Total: ] || fail "Total: is not the last line"
tail -n 2 <<<"$out" | head -n 1 | grep -q "^/dev/shm (in pid $ha) used: " ||
    fail "the mount's use line, naming A, is not right before the total"
[ ! -e "/proc/$ha/root/dev/shm/$orph_a" ] || fail "A's orphan is still there"
[ -f "/proc/$hb/root/dev/shm/$orph_b" ] || fail "B's orphan was removed by clean --pid A"
grep -q "	unlink	/dev/shm/$orph_a	.*	removed	.*	container=pid $ha\$" "$log" ||
    fail "the action log does not name A: $(cat "$log")"
ok "clean --pid A removed A's orphan only, said and logged in A; B's is untouched"

# --- reap --pid A -----------------------------------------------------------
stuck_a=$(MANIFEST=$man_a manifest_pids stuck)
stuck_b=$(MANIFEST=$man_b manifest_pids stuck)
[ -n "$stuck_a" ] && [ -n "$stuck_b" ] || fail "the scenes have no stuck worker"
kill -KILL "$scene_a" "$scene_b"
wait_reparented "$stuck_a" "$scene_a" && wait_reparented "$stuck_b" "$scene_b" ||
    fail "the stuck workers were not re-parented"
"$SHMWATCH" reap --pid "$ha" --dry-run >"$SHMTEST_TMP/reap.plan" 2>&1 ||
    fail "reap --pid --dry-run exited $?"
grep -q "pid $stuck_a (shmscene) (in pid $ha)" "$SHMTEST_TMP/reap.plan" ||
    fail "the reap plan does not name A's stuck worker in A: $(cat "$SHMTEST_TMP/reap.plan")"
grep -q "pid $stuck_b " "$SHMTEST_TMP/reap.plan" && fail "the reap plan for A names B's worker"
rc=0
out=$("$SHMWATCH" reap --pid "$ha" --yes --timeout 1 --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 0 "reap --pid A --yes exits 0"
grep -q "^killed  *pid $stuck_a (shmscene) (in pid $ha)  ignored SIGTERM" <<<"$out" ||
    fail "A's stuck worker's end is not reported in A"
grep -q "pid $stuck_b " <<<"$out" && fail "reap --pid A acted on B's worker"
[ "$(tail -n 1 <<<"$out" | cut -c1-6)" = Total: ] || fail "Total: is not the last line"
wait_for "gone $stuck_a" 5 || fail "A's stuck worker is still alive"
gone "$stuck_b" && fail "B's stuck worker was ended"
grep -q "	signal TERM,KILL	pid $stuck_a (shmscene)	.*	killed	.*	container=pid $ha\$" "$log" ||
    fail "the action log does not name A for the kill"
ok "reap --pid A killed A's stuck worker only, said and logged in A"

# --- a container that exits between the plan and the action ----------------
# A second holder of B's namespace, for the second race.
nsenter -t "$hb" -m -- sleep 600 </dev/null >/dev/null 2>&1 &
hb2=$!
on_exit "kill -KILL $hb2 2>/dev/null; wait $hb2 2>/dev/null"
wait_for "[ \"\$(mntns $hb2)\" = \"$(mntns "$hb")\" ]" 5 || fail "no second holder in B"

# A file of the same name in this test's own /dev/shm: where a path through
# the reused pid would lead.
head -c 4096 /dev/zero >"/dev/shm/$orph_b"
rc=0
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=3 "$HOOKED" clean --pid "$hb" \
    --yes --log "$log" >"$SHMTEST_TMP/race.out" 2>&1 &
cl=$!
wait_for "grep -q 'to remove' $SHMTEST_TMP/race.out" 10 || fail "clean --pid B planned nothing"
kill -KILL "$hb"
wait "$hb" 2>/dev/null
pid_to_newcomer "$hb"
: >"$GATE"
wait "$cl" || rc=$?
out=$(cat "$SHMTEST_TMP/race.out")
echo "$out"
assert_eq "$rc" 3 "clean exits 3 when its container exited before the unlink"
grep -q "^refused  *\/dev\/shm\/$orph_b (in pid $hb)  its container exited" <<<"$out" ||
    fail "the unlink is not refused as 'container exited'"
[ -f "/proc/$hb2/root/dev/shm/$orph_b" ] || fail "B's orphan was removed after B's holder exited"
[ -f "/dev/shm/$orph_b" ] || fail "the file of the same name where the reused pid leads was removed"
grep -q "^/dev/shm (in pid $hb) used: .* -> unknown\$" <<<"$out" ||
    fail "the mount's use after is not unknown: it was read where the reused pid leads"
ok "a holder that exits (its pid reused elsewhere) before the unlink: refused, nothing removed"

pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL=3 "$HOOKED" reap --pid "$hb2" \
    --yes --timeout 1 --log "$log" >"$SHMTEST_TMP/race2.out" 2>&1 &
rp=$!
wait_for "grep -q 'Orphaned workers' $SHMTEST_TMP/race2.out" 10 ||
    fail "reap --pid B planned nothing: $(cat "$SHMTEST_TMP/race2.out")"
kill -KILL "$hb2"
wait "$hb2" 2>/dev/null
pid_to_newcomer "$hb2"
: >"$GATE"
rc=0
wait "$rp" || rc=$?
out=$(cat "$SHMTEST_TMP/race2.out")
echo "$out"
assert_eq "$rc" 3 "reap exits 3 when its container exited before the signal"
grep -q "^refused  *pid $stuck_b (shmscene) (in pid $hb2)  its container exited" <<<"$out" ||
    fail "the signal is not refused as 'container exited'"
gone "$stuck_b" && fail "B's stuck worker was signalled after B's holder exited"
grep -q "	signal TERM	pid $stuck_b (shmscene)	.*	refused	.*container exited.*	container=pid $hb2\$" "$log" ||
    fail "the refusal is not logged in B"
kill -KILL "$stuck_b" 2>/dev/null
ok "a holder that exits (its pid reused elsewhere) before the signal: refused, the worker left alone"

# --- a container with its own pid namespace too (as Docker's) ---------------
# Its orphan's name carries the creator's pid inside; --pid proves it dead
# there (through NSpid) and removes it inside that container only.
man_c=$SHMTEST_TMP/c.manifest
unshare -p -f --mount-proc --propagation private unshare -m --propagation private \
    bash -c 'mount -t tmpfs -o size=16m tmpfs /dev/shm &&
        exec "$0" --manifest "$1" --workers 1 --per-worker 2 --modes named,fd --orphans 1' \
    "$SHMSCENE" "$man_c" </dev/null >"$SHMTEST_TMP/c.log" 2>&1 &
outer=$!
on_exit "kill -KILL $outer 2>/dev/null; wait $outer 2>/dev/null; true"
wait_for '[ -f "$man_c" ] && [ "$(tail -n 1 "$man_c")" = ready ]' 30 ||
    fail "container C did not start: $(head -c 500 "$SHMTEST_TMP/c.log")"
inner_main=$(MANIFEST=$man_c manifest_pids main)
hc=
for p in $(pgrep -f -- "--manifest $man_c"); do
    [ "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status")" = "$inner_main" ] && hc=$p
done
[ -n "$hc" ] && [ "$hc" != "$inner_main" ] || fail "cannot find C's main on the host"
on_exit "[ \"\$(awk '/^PPid:/ { print \$2 }' /proc/$hc/status 2>/dev/null)\" = $outer ] && kill -KILL $hc; true"
orph_c=$(orphan_of "$man_c")
named_c=$(MANIFEST=$man_c manifest_segments named | { read -r _ _ _ _ hex && unhex "$hex"; })
rc=0
out=$("$SHMWATCH" clean --pid "$hc" --yes --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 0 "clean --pid C (own pid namespace) exits 0"
grep -q "^removed  *\/dev\/shm\/$orph_c (in pid $hc)  " <<<"$out" || fail "C's orphan was not removed in C"
[ ! -e "/proc/$hc/root/dev/shm/$orph_c" ] || fail "C's orphan is still there"
[ -f "/proc/$hc/root/dev/shm/$named_c" ] || fail "C's segment in use was removed"
ok "a container with its own pid namespace: its orphan (pid inside in the name) removed, its live segment kept"

"$SHMWATCH" clean --pid 999999999 >/dev/null 2>"$SHMTEST_TMP/err" && fail "clean --pid of a missing process succeeded"
grep -q "^shmwatch clean: cannot act in pid 999999999: " "$SHMTEST_TMP/err" ||
    fail "no one-line error for a missing pid: $(cat "$SHMTEST_TMP/err")"
rc=0
"$SHMWATCH" reap --pid x >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "reap --pid x is a usage error"
