#!/usr/bin/env bash
# Text from outside reaches the terminal and the action log escaped: a mount
# whose path holds an escape sequence, a newline and invalid UTF-8, segments
# named the same way, and a process whose name does. clean (the test build,
# paused between its scan and its unlinks while the mount is replaced, so that
# every refusal quotes the mount's path) and reap (a zombie whose parent has
# such a name, quoted in the reason) print them escaped, one line each, and
# their action log lines keep their seven fields.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need /usr/bin/python3
# A private pid namespace: reap must see only this test's processes.
test_ns 64m --pid -- "$@"
_lib_tmp

ESC=$(printf '\e')
# What esc_term makes of the hostile bytes.
hostile=$(printf 'mnt\e[31mRED\nX\xff')
shown='mnt\e[31mRED\nX\xff'
mnt=$SHMTEST_TMP/$hostile
mkdir "$mnt"
mount -t tmpfs -o size=4m tmpfs "$mnt" || fail "cannot mount a tmpfs on the hostile path"
on_exit "umount -l \"$mnt\" 2>/dev/null; umount -l \"$mnt\" 2>/dev/null"
log=$SHMTEST_TMP/actions.log

no_raw() { # FILE WHAT: no raw escape byte and no line but the expected ones
    if grep -q "$ESC" "$1"; then cat -v "$1" >&2; fail "a raw escape byte reached $2"; fi
    if grep -aq $'\xff' "$1"; then cat -v "$1" >&2; fail "a raw invalid UTF-8 byte reached $2"; fi
}

# --- clean: segments named like the path, the mount replaced before the unlinks ---
# (Names that carry no creator pid: unheld, owner unknown.)
head -c 8192 /dev/zero >"$mnt/seg_1"
head -c 8192 /dev/zero >"$mnt/$(printf 'seg_2\e[32mG\nY\xfe')"
out=$SHMTEST_TMP/clean.out
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=4 "$SHMWATCH_HOOKED" clean --yes \
    --all-unheld --min-age 0 --mount "$mnt" --log "$log" >"$out" 2>&1 &
clean_pid=$!
on_exit "kill -KILL $clean_pid 2>/dev/null"
wait_for "grep -q 'segments to remove' $out" 20 || { cat -v "$out" >&2; fail "clean printed no plan"; }
# Another tmpfs is mounted over the scanned one (which stays mounted below, so
# that its device number is not handed to the newcomer).
mount -t tmpfs -o size=4m tmpfs "$mnt" || fail "cannot mount the second tmpfs"
: >"$GATE"
rc=0
wait "$clean_pid" || rc=$?
cat -v "$out"
assert_eq "$rc" 3 "clean exits 3: both unlinks were refused"
no_raw "$out" "clean's output"
n=$(grep -cF "the mount at $SHMTEST_TMP/$shown is no longer the one scanned" "$out")
assert_eq "$n" 2 "each refusal quotes the mount path escaped, on its own line"
grep -qF "refused      $SHMTEST_TMP/$shown/seg_2\\e[32mG\\nY\\xfe  the mount at" "$out" ||
    fail "the hostile segment's refusal is not one escaped line"
ok "clean prints the refusals' mount path and the segment names escaped"
no_raw "$log" "the action log"
assert_eq "$(awk -F'\t' 'NF != 7' "$log" | wc -l)" 0 "every log line has exactly 7 fields"
assert_eq "$(grep -cF "the mount at $SHMTEST_TMP/$shown is no longer the one scanned" "$log")" 2 \
    "the log's details quote the mount path escaped"
ok "the action log keeps the hostile path escaped, seven fields a line"

# --- reap: a zombie whose parent has a hostile name ---------------------------------
ready=$SHMTEST_TMP/zombie.ready
/usr/bin/python3 -c 'import ctypes, os, sys, time
child = os.fork()
if child == 0:
    os._exit(0)
ctypes.CDLL(None).prctl(15, b"\x1b[31mEV\nIL\xff", 0, 0, 0)  # PR_SET_NAME
while open("/proc/%d/stat" % child).read().rsplit(")", 1)[1].split()[0] != "Z":
    time.sleep(0.01)
open(sys.argv[1], "w").write(str(child))
time.sleep(300)' "$ready" </dev/null >/dev/null 2>&1 &
parent=$!
on_exit "kill -KILL $parent 2>/dev/null; wait $parent 2>/dev/null"
wait_for "[ -s $ready ]" 30 || fail "the parent with a hostile name did not start"
zombie=$(cat "$ready")
pname='\e[31mEV\nIL\xff'

out=$SHMTEST_TMP/reap.dry
"$SHMWATCH" reap --dry-run >"$out" 2>&1 || fail "reap --dry-run failed: $(cat -v "$out")"
cat -v "$out"
no_raw "$out" "reap's plan"
grep -qF "waiting for its parent pid $parent ($pname) to reap it" "$out" ||
    fail "the plan does not name the zombie's parent escaped"
ok "reap's plan names the zombie's hostile parent escaped"

: >"$log"
out=$SHMTEST_TMP/reap.out
rc=0
"$SHMWATCH" reap --yes --log "$log" >"$out" 2>&1 || rc=$?
cat -v "$out"
assert_eq "$rc" 0 "reap exits 0"
no_raw "$out" "reap's output"
grep -qF "pid $parent ($pname)" "$out" || fail "reap's result does not name the parent escaped"
no_raw "$log" "reap's action log"
assert_eq "$(awk -F'\t' 'NF != 7' "$log" | wc -l)" 0 "every reap log line has exactly 7 fields"
grep -qF "pid $parent ($pname)" "$log" || fail "the log does not name the parent escaped"
ok "reap's results and its log lines name the hostile parent escaped"
