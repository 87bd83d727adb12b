#!/usr/bin/env bash
# When an action of the dashboard goes wrong, it says so: an action whose log
# line cannot be written (the log is /dev/full: every write fails with ENOSPC)
# is reported as not logged, like one whose log cannot be opened at all.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
[ -n "${IN_SHM_NS:-}" ] || { in_shm_ns 64m "$0" "$@"; exit $?; }
. "$(dirname "$0")/tui_lib.sh"

old_unheld() { # NAME...: files of 4 KiB that nobody holds, an hour old
    local n
    for n; do
        head -c 4096 /dev/zero >"/dev/shm/$n"
        touch -d '-1 hour' "/dev/shm/$n"
    done
}

# --- The log cannot be written ----------------------------------------------------------
old_unheld a_0
tui_start 140 30 --log /dev/full
tui_wait "a_0 +unheld " 10
tui_keys U
tui_wait "Unlink 1 unheld segment, 4.0 KiB\?" 5
tui_keys y
tui_wait "^1 unlinked, 4.0 KiB freed; 0 refused, 0 failed \(not logged: /dev/full: No space left on device\)" 10
[ ! -e /dev/shm/a_0 ] || fail "a_0 was not removed"
ok "an unlink whose log line cannot be written says it was not logged"
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
tui_quit
