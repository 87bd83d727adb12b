#!/usr/bin/env bash
# Nothing in use is ever removed. Named torch segments of a dead creator that
# are held by an fd, only by a mapping, or by a process of another user are
# kept by clean; and the same three opened between clean's scan and its
# unlink (the window held open by SHMWATCH_TEST_PAUSE_BEFORE_UNLINK) are
# refused by the check right before the unlink, each refusal reported with
# its holder, exit 3, while a free orphan beside them is removed. An orphan
# and an old unheld file written to (and closed) in that window are refused
# too: nobody holds them, but something is using them.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need setpriv /usr/bin/python3
test_ns 64m -- "$@"
_lib_tmp

# hold MODE PATH [PREFIX...]: a process that holds PATH by an fd (MODE fd) or
# only by a mapping (MODE map, fd closed); prints its pid once it holds it.
cat >"$SHMTEST_TMP/hold.py" <<'PY'
import ctypes, mmap, os, sys, time
mode, path, ready = sys.argv[1:4]
fd = os.open(path, os.O_RDONLY)
if mode == "map":
    # libc's mmap, not Python's (which keeps a dup of the fd): a mapping only.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    addr = libc.mmap(None, os.fstat(fd).st_size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        sys.exit("mmap failed")
    os.close(fd)
open(ready, "w").close()
time.sleep(600)
PY
chmod 644 "$SHMTEST_TMP/hold.py"
HOLDERS=()
on_exit 'for p in "${HOLDERS[@]}"; do kill -KILL "$p" 2>/dev/null; done'
hold() {
    local mode=$1 path=$2 ready
    shift 2
    ready=$SHMTEST_TMP/ready.$RANDOM$RANDOM
    "$@" /usr/bin/python3 "$SHMTEST_TMP/hold.py" "$mode" "$path" "$ready" </dev/null \
        >/dev/null 2>&1 &
    HOLDERS+=($!)
    wait_for "[ -e $ready ]" 30 || fail "holder of $path ($mode) did not start"
    HELD_BY=$!
}

# A creator that has exited: its segments are garbage unless someone holds them.
dead=$(dead_pid)
mkseg() { # N: /dev/shm/torch_<dead>_N, 64 KiB written, readable by others
    head -c 65536 /dev/zero >"/dev/shm/torch_${dead}_$1"
    chmod 644 "/dev/shm/torch_${dead}_$1"
}
for i in 0 1 2 3; do mkseg $i; done
log=$SHMTEST_TMP/actions.log

# 1. Held at scan time: never even planned.
hold fd "/dev/shm/torch_${dead}_1"
hold map "/dev/shm/torch_${dead}_2"
hold fd "/dev/shm/torch_${dead}_3" "${NOBODY[@]}"
[ "$(stat -c %U "/proc/$HELD_BY")" = nobody ] || fail "the third holder does not run as nobody"
rc=0
out=$("$SHMWATCH" clean --yes --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 0 "clean exits 0: it was asked only for the free orphans"
grep -q 'Kept: 3 segments of a dead creator that a live process still holds' <<<"$out" ||
    fail "the kept segments are not reported"
for i in 1 2 3; do
    [ -f "/dev/shm/torch_${dead}_$i" ] || fail "held segment torch_${dead}_$i was removed"
done
ok "segments held by fd, by a mapping only and by another user's process survive"
[ ! -e "/dev/shm/torch_${dead}_0" ] || fail "the free orphan was not removed"
for p in "${HOLDERS[@]}"; do kill -KILL "$p"; done
HOLDERS=()
wait 2>/dev/null

# 2. Opened between the scan and the unlink (1-3 are free now, their holders gone).
for i in 0 4 5 6 7; do mkseg $i; done
out_file=$SHMTEST_TMP/race.out
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=4 "$SHMWATCH_HOOKED" clean --yes \
    --log "$log" >"$out_file" 2>&1 &
clean_pid=$!
wait_for "grep -q 'segments to remove' $out_file" 20 || fail "clean printed no plan: $(cat "$out_file")"
grep -q '^8 segments to remove' "$out_file" || fail "the plan should list all 8: $(cat "$out_file")"
hold fd "/dev/shm/torch_${dead}_4"
fd_holder=$HELD_BY
hold map "/dev/shm/torch_${dead}_5"
map_holder=$HELD_BY
hold fd "/dev/shm/torch_${dead}_6" "${NOBODY[@]}"
other_holder=$HELD_BY
: >"$GATE"
rc=0
wait "$clean_pid" || rc=$?
out=$(cat "$out_file")
echo "$out"
assert_eq "$rc" 3 "clean exits 3 when something was refused"
grep -q "^refused .*torch_${dead}_4  in use: pid $fd_holder (python3, uid 0) holds it open (fd [0-9]*)$" <<<"$out" ||
    fail "fd holder not reported"
grep -q "^refused .*torch_${dead}_5  in use: pid $map_holder (python3, uid 0) maps it$" <<<"$out" ||
    fail "mapping holder not reported"
grep -q "^refused .*torch_${dead}_6  in use: pid $other_holder (python3, uid 65534) holds it open" <<<"$out" ||
    fail "other user's holder not reported"
ok "each refusal names the process that holds the segment"
for i in 4 5 6; do
    [ -f "/dev/shm/torch_${dead}_$i" ] || fail "torch_${dead}_$i was removed while held"
done
ok "segments opened between scan and unlink survive"
for i in 0 1 2 3 7; do
    [ ! -e "/dev/shm/torch_${dead}_$i" ] || fail "free orphan torch_${dead}_$i was not removed"
done
grep -q '^Total: 5 removed, 320 KiB freed; 3 refused, 0 failed' <<<"$out" || fail "total line"
ok "the free orphans beside them are removed"
assert_eq "$(grep -c "	refused	in use: pid" "$log")" 3 "the refusals are in the action log"

# 3. Written to and closed between the scan and the unlink: nobody holds them,
# yet something is using them.
mkseg 8
head -c 4096 /dev/zero >/dev/shm/persist
touch -d '-1 hour' /dev/shm/persist "/dev/shm/torch_${dead}_8"
out_file=$SHMTEST_TMP/written.out
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=3 "$SHMWATCH_HOOKED" clean --yes \
    --all-unheld --log "$log" >"$out_file" 2>&1 &
clean_pid=$!
wait_for "grep -q 'segments to remove' $out_file" 20 || fail "clean printed no plan: $(cat "$out_file")"
grep -q '^2 segments to remove' "$out_file" || fail "the plan should list both: $(cat "$out_file")"
echo more >>/dev/shm/persist
echo more >>"/dev/shm/torch_${dead}_8"
: >"$GATE"
rc=0
wait "$clean_pid" || rc=$?
out=$(cat "$out_file")
echo "$out"
assert_eq "$rc" 3 "clean exits 3 when something was refused"
for name in persist "torch_${dead}_8"; do
    grep -q "^refused .*$name  written to since the scan" <<<"$out" ||
        fail "$name: the write is not the reason given"
    [ -f "/dev/shm/$name" ] || fail "$name was removed after being written to"
done
ok "an orphan and an old unheld file written to between scan and unlink survive"
