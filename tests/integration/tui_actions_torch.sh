#!/usr/bin/env bash
# The dashboard's K on a real PyTorch leftover, driven through tmux: a
# file_system DataLoader job whose worker 0 is stuck (SIGTERM ignored) loses
# its main process to SIGKILL; the worker lives on as an orphan, and so does
# its torch_shm_manager, which keeps the worker's named segments. K lists both;
# Esc declines; y ends the worker (SIGKILL after the 5 s timeout), after which
# the manager frees the segments and exits. The mount ends empty, the summary
# is neither a warning nor an error, the log has the signal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
# K acts on every orphaned worker it sees: here, only this test's.
test_ns 64m --pid -- "$@"
. "$(dirname "$0")/tui_lib.sh"

torch_start --strategy file_system --start-method fork --workers 2 --hold-batches 2 \
    --stuck-worker --stuck-timeout 120
[ "$STUCK" != None ] || fail "worker 0 did not report being stuck: $(cat "$TORCH_OUT")"
torch_settle 2
manager=$(managers_of "$STUCK")
[ -n "$manager" ] || fail "the stuck worker $STUCK has no torch_shm_manager"
made=$(ls /dev/shm | grep -c "^torch_${STUCK}_")
[ "$made" -ge 2 ] || fail "the stuck worker made $made segments, expected its first batch"
kill -KILL "$MAIN"
torch_wait_exit 10
wait_reparented "$STUCK" "$MAIN" 5 || fail "worker $STUCK not reparented"
ok "main $MAIN killed; worker $STUCK lives on with manager $manager and $made segments"

log=$SHMTEST_TMP/actions.log
tui_start 160 40 --log "$log"
tui_keys p
tui_wait "^ +$STUCK +[0-9]+ [A-Z] orphan_worker " 15
tui_wait "^ +$manager +[0-9]+ [A-Z] shm_manager " 5

tui_keys K
tui_wait "End [0-9]+ process(es)? \(SIGTERM, SIGKILL after 5 s\)" 10
tui_wait "end    pid $STUCK \($TORCH_WORKER_COMM\)  orphaned worker" 5
tui_wait "end    pid $manager \(torch_shm_manag\)  stuck torch_shm_manager: its only clients are orphaned workers \([0-9, ]*$STUCK" 5
ok "K lists the orphaned worker and its stuck manager"
tui_keys Escape
tui_wait "nothing signalled" 5
kill -0 "$STUCK" 2>/dev/null && ! gone "$STUCK" && ! gone "$manager" || fail "Esc ended a process"
[ ! -s "$log" ] || fail "Esc wrote the action log: $(cat "$log")"
ok "Esc ends nothing"

tui_keys K
tui_wait "End [0-9]+ process(es)?" 10
t0=$(date +%s%N)
tui_keys y
tui_wait "^reaped ([0-9]+) of \1; 0 refused or failed" 30
t1=$(date +%s%N)
gone "$STUCK" || fail "worker $STUCK lives"
[ $(((t1 - t0) / 1000000)) -ge 4500 ] || fail "worker $STUCK was ended before SIGTERM's 5 s timeout"
ok "y ends worker $STUCK with SIGKILL after the timeout"
style=$(tui_style '^reaped [0-9]+ of') || { tui_dump; fail "no summary line to check the colour of"; }
case $style in *fg=3[13]\ *) fail "a complete reap is drawn as a warning or an error ($style)" ;; esac
wait_for '! ls /dev/shm | grep -q "^torch_${STUCK}_"' 10 ||
    fail "the stuck worker's segments are still there: $(ls /dev/shm)"
wait_for "gone $manager" 10 || fail "manager $manager did not exit"
wait_for '[ "$(fs_used_bytes /dev/shm)" -eq 0 ]' 15 || fail "$(fs_used_bytes /dev/shm) bytes still used"
ok "its manager freed the $made segments and exited; the mount is empty"
grep -q "	signal TERM,KILL	pid $STUCK ($TORCH_WORKER_COMM)	owner=0	bytes=0	killed	ignored SIGTERM" "$log" ||
    fail "the kill is not in the action log: $(cat "$log")"
ok "the action log has the kill"
tui_quit
