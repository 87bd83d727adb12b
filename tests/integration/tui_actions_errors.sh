#!/usr/bin/env bash
# When an action of the dashboard goes wrong, it says so, in the error colour
# of the theme (bold red by default), where a refusal by a safety check is a
# warning (yellow; see tui_actions_*.sh) and a success neither: an action whose
# log line cannot be written (the log is on a full tmpfs: every write fails
# with ENOSPC) is reported as not logged, like one whose log cannot be opened at
# all; an unlink that fails (the mount was made read-only between the question
# and the unlink) is listed and counted as failed, and logged.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need /usr/bin/python3
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

old_unheld() { # NAME...: files of 4 KiB that nobody holds, an hour old
    local n
    for n; do
        head -c 4096 /dev/zero >"/dev/shm/$n"
        touch -d '-1 hour' "/dev/shm/$n"
    done
}

# --- The log cannot be written ----------------------------------------------------------
full=$SHMTEST_TMP/full/actions.log
full_file "$full"
old_unheld a_0
tui_start 140 30 --log "$full"
tui_wait "a_0 +unheld " 10
tui_keys U
tui_wait "Unlink 1 unheld segment, 4.0 KiB\?" 5
tui_keys y
tui_wait "^1 unlinked, 4.0 KiB freed; 0 refused, 0 failed \(not logged: $full: No space left on device\)" 10
[ ! -e /dev/shm/a_0 ] || fail "a_0 was not removed"
ok "an unlink whose log line cannot be written says it was not logged"
assert_eq "$(tui_style '^1 unlinked, 4.0 KiB freed; 0 refused, 0 failed \(not logged')" "fg=31 bg=49 bold=1" \
    "and it is drawn in the error colour (bold red)"
tui_quit

# The same for a signal: k on a process that holds a segment.
hold_new_file /dev/shm/held
holder=$HOLDER
tui_start 140 30 --log "$full"
tui_keys p
tui_wait "^ +$holder +[0-9]+ [A-Z] holder " 10
tui_select "^ +$holder +[0-9]+ [A-Z] holder "
tui_keys k
tui_wait "Send a signal to pid $holder \(python3\)" 5
tui_keys Enter
tui_wait "^SIGTERM sent to 1; 0 refused or failed \(not logged: $full: No space left on device\)" 10
wait "$holder" 2>/dev/null
assert_eq "$(tui_style '^SIGTERM sent to 1; 0 refused or failed \(not logged')" "fg=31 bg=49 bold=1" \
    "a signal whose log line cannot be written says so in the error colour"
tui_quit

# --- The log cannot be opened ------------------------------------------------------------
old_unheld b_0
tui_start 140 30 --log "$SHMTEST_TMP/no/such/dir/actions.log"
tui_wait "b_0 +unheld " 10
tui_keys U
tui_wait "Unlink 1 unheld segment" 5
tui_keys y
tui_wait "^1 unlinked, 4.0 KiB freed; 0 refused, 0 failed \(not logged: $SHMTEST_TMP/no/such/dir/actions.log: No such file or directory\)" 10
ok "an unlink whose log cannot be opened says it was not logged"
assert_eq "$(tui_style '^1 unlinked, 4.0 KiB freed; 0 refused, 0 failed \(not logged')" "fg=31 bg=49 bold=1" \
    "and it is drawn in the error colour (bold red)"
tui_quit

# --- The unlink fails; a success is neither a warning nor an error ---------------------------
old_unheld c_0 d_0
log=$SHMTEST_TMP/actions.log
pause_gate
SHMWATCH=$SHMWATCH_HOOKED TUI_PREFIX="env SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=3" \
    tui_start 140 30 --log "$log"
tui_wait "c_0 +unheld " 10
tui_wait "d_0 +unheld " 10
tui_keys U
tui_wait "Unlink 2 unheld segments, 8.0 KiB\?" 5
tui_keys y
mount -o remount,ro /dev/shm
on_exit "mount -o remount,rw /dev/shm 2>/dev/null"
: >"$GATE"
tui_wait "Skip all" 10 # the first failure asks whether to go on
tui_keys 2
tui_wait "0 unlinked, .* freed; 0 refused, 2 failed" 10
tui_wait "failed   /dev/shm/c_0  unlink failed: Read-only file system" 5
mount -o remount,rw /dev/shm
[ -e /dev/shm/c_0 ] && [ -e /dev/shm/d_0 ] || fail "a segment was removed from a read-only mount"
assert_eq "$(grep -c "	unlink	/dev/shm/c_0	owner=0	bytes=4096	failed	unlink failed: Read-only file system" "$log")" 1 \
    "the failure is in the action log"
tui_keys Enter
tui_wait "^0 unlinked, .* freed; 0 refused, 2 failed" 5
assert_eq "$(tui_style '^0 unlinked, .* 2 failed')" "fg=31 bg=49 bold=1" \
    "a failed unlink is drawn in the error colour (bold red)"
tui_keys r
tui_wait "c_0 +unheld " 10
tui_keys U
tui_wait "Unlink 2 unheld segments" 5
tui_keys y
tui_wait "^2 unlinked, 8.0 KiB freed; 0 refused, 0 failed" 10
style=$(tui_style '^2 unlinked, 8.0 KiB freed') || { tui_dump; fail "no summary line to check the colour of"; }
case $style in *fg=3[13]\ *) fail "a success is drawn as a warning or an error ($style)" ;; esac
ok "a success is drawn in neither colour ($style)"
tui_quit
