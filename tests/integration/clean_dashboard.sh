#!/usr/bin/env bash
# The dashboard's cleanup, driven through tmux on the leak scene (a killed
# job's 12 orphans, 12 MiB): with --read-only, D is refused; D shows a
# dialog with the count and the bytes, and Enter (No is selected) or n
# leaves everything; D then y, with a process opening the first target while
# the dashboard pauses before the unlinks (SHMWATCH_TEST_PAUSE_BEFORE_UNLINK),
# asks about that refusal (skip), removes the 11 others and lists the
# refusal; after the holder exits, D and y remove the last one, the gauge
# falls to zero and the action log has every removal.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need setsid /usr/bin/python3
test_ns 64m -- "$@"
_lib_tmp

SCENE_PREFIX=setsid scene_start --workers 3 --per-worker 4 --modes named --size 1048576
kill -KILL -- "-$SCENE_PID"
wait_for "[ \"\$(ps -o stat= -p $SCENE_PID | cut -c1)\" = Z ] || ! kill -0 $SCENE_PID 2>/dev/null" 10 ||
    fail "the job did not die"
norphans() { ls /dev/shm | grep -c '^torch_' || true; }
assert_eq "$(norphans)" 12 "the killed job left 12 orphans"

. "$(dirname "$0")/tui_lib.sh"
log=$SHMTEST_TMP/actions.log
TUI_STDERR=$SHMTEST_TMP/dashboard.stderr
shows() { tui_cap | grep -qF -- "$1"; }
start() { # ARGS...: the dashboard in a fresh 140x45 session, the previous one ended
    SHMWATCH=$SHMWATCH_HOOKED TUI_PREFIX="env SHMWATCH_TEST_PAUSE_UNTIL=${GATE:-} SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=${PAUSE:-0}" tui_start 140 45 --log "$log" "$@"
    wait_for 'shows "Orphans: held by nobody" && shows "12 segs"' 20 ||
        fail "the dashboard does not show the 12 orphans: $(tui_cap) $(tail -c 3000 "$TUI_STDERR")"
}

# --read-only: D is refused and says so.
start --read-only
tui_keys D
wait_for 'shows "read-only"' 5 || fail "D was not refused under --read-only: $(tui_cap)"
assert_eq "$(norphans)" 12 "read-only: nothing removed"

start
wait_for 'shows "12M/64M"' 10 || fail "the gauge does not show 12M used: $(tui_cap)"
tui_keys D
wait_for 'shows "Unlink 12 orphan segments, 12.0 MiB?"' 5 || fail "no dialog after D: $(tui_cap)"
shows "[ Yes ]" && shows "[ No ]" || fail "the dialog has no Yes/No"
[ "$(tui_cap | grep -c '/dev/shm/torch_.*  1.0 MiB  orphan: held by nobody')" -ge 10 ] ||
    fail "the dialog does not list the targets and bytes: $(tui_cap)"
ok "D shows a dialog with the count and the bytes"
tui_keys Enter
wait_for 'shows "nothing unlinked"' 5 || fail "Enter did not answer No: $(tui_cap)"
assert_eq "$(norphans)" 12 "Enter (No is selected) leaves everything"
tui_keys D
wait_for 'shows "Unlink 12 orphan segments"' 5 || fail "no dialog after D again"
tui_keys n
wait_for 'shows "nothing unlinked"' 5 || fail "n did not answer No: $(tui_cap)"
assert_eq "$(norphans)" 12 "n leaves everything"
[ ! -s "$log" ] || fail "declining wrote the action log"

# y, and a process opens the first target during the pause before the unlinks.
pause_gate
PAUSE=3 start
first=$(ls /dev/shm | LC_ALL=C sort | head -n 1)
tui_keys D
wait_for 'shows "Unlink 12 orphan segments"' 5 || fail "no dialog after D a third time"
tui_keys y
/usr/bin/python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
open(sys.argv[2], "w").close()
time.sleep(120)' "/dev/shm/$first" "$SHMTEST_TMP/held" </dev/null >/dev/null 2>&1 &
holder=$!
on_exit "kill -KILL $holder 2>/dev/null"
wait_for "[ -e $SHMTEST_TMP/held ]" 5 || fail "the holder did not start"
: >"$GATE"
wait_for 'shows "in use: pid $holder"' 10 || fail "no question about the refusal: $(tui_cap)"
shows "Skip this one" && shows "Skip all" && shows "Abort" || fail "skip / skip all / abort not offered"
ok "a refusal during the run asks: skip, skip all or abort"
tui_keys Enter
wait_for 'shows "11 unlinked, 11.0 MiB freed; 1 refused, 0 failed"' 10 ||
    fail "no result list after skipping: $(tui_cap)"
shows "refused  /dev/shm/$first  in use: pid $holder" || fail "the result list lacks the refusal"
tui_keys Enter
assert_eq "$(norphans)" 1 "the 11 free orphans are removed, the held one is kept"
[ -e "/dev/shm/$first" ] || fail "the held segment was removed"
wait_for 'shows " 1M/64M"' 10 || fail "the gauge did not fall to 1M: $(tui_cap)"

# The holder exits: D, y removes the last one.
kill -KILL "$holder"
wait "$holder" 2>/dev/null
tui_keys r
wait_for 'tui_cap | grep -q "$first  *orphan "' 10 || fail "the last orphan is not shown: $(tui_cap)"
tui_keys D
wait_for 'shows "Unlink 1 orphan segment, 1.0 MiB?"' 5 || fail "no dialog for the last one: $(tui_cap)"
tui_keys y
wait_for 'shows "1 unlinked, 1.0 MiB freed; 0 refused, 0 failed"' 10 ||
    fail "no result after y: $(tui_cap)"
assert_eq "$(norphans)" 0 "y removes every orphan"
wait_for 'shows " 0B/64M"' 10 || fail "the gauge did not fall: $(tui_cap)"
ok "the gauge falls to 0B/64M"
assert_eq "$(grep -c '	unlink	/dev/shm/torch_.*	removed	' "$log")" 12 "the log has the 12 removals"
assert_eq "$(grep -c '	unlink	/dev/shm/torch_.*	refused	in use' "$log")" 1 "and the refusal"

# L shows the action log in the dashboard, newest first.
tui_keys L
wait_for 'shows "Action log"' 5 || fail "L does not open the action log: $(tui_cap)"
shows "removed" || fail "the log page lacks the removals: $(tui_cap)"
ok "L shows the action log"
tui_keys q # closes the log
tui_quit
