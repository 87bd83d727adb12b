#!/usr/bin/env bash
# The dashboard's K acting on real processes, driven through tmux in a private
# pid namespace: two jobs were SIGKILLed and each left a stuck worker that
# ignores SIGTERM (orphaned workers); a third job runs; a process keeps a zombie
# child and counts the SIGCHLD it receives. K lists the two orphaned workers and
# the zombie, not the live job; n leaves everything. K and y while the
# dashboard pauses before signalling (SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL): one
# orphaned worker dies and its pid goes to a new process, which the identity
# re-check refuses to signal; the other ignores SIGTERM and is SIGKILLed after
# the 5 s timeout; the zombie's parent gets SIGCHLD and lives. The results are
# listed, the summary is a warning, the action log has every signal.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need setsid /usr/bin/python3
# K acts on every orphaned worker it sees: here, only this test's.
test_ns 64m --pid -- "$@"
[ -w /proc/sys/kernel/ns_last_pid ] || _lib_missing "a writable /proc/sys/kernel/ns_last_pid"
. "$(dirname "$0")/tui_lib.sh"

killed_job() { # sets STUCK: the stuck worker a SIGKILLed job leaves behind
    SCENE_PREFIX=setsid scene_start --workers 1 --per-worker 1 --modes named --stuck-orphan
    STUCK=$(manifest_pids stuck)
    kill -KILL "$SCENE_PID"
    wait "$SCENE_PID" 2>/dev/null
    wait_reparented "$STUCK" "$SCENE_PID" || fail "stuck worker $STUCK was not re-parented"
}
killed_job
s1=$STUCK
killed_job
s2=$STUCK
SCENE_PREFIX=setsid scene_start --workers 1 --per-worker 1 --modes named
live_main=$(manifest_pids main)
live_worker=$(manifest_pids worker)

# A parent that never reaps its child and counts the SIGCHLD it gets after.
count=$SHMTEST_TMP/sigchld.count
zombie_parent "$count"
parent=$ZOMBIE_PARENT
zombie=$ZOMBIE

log=$SHMTEST_TMP/actions.log
alive() { kill -0 "$1" 2>/dev/null && ! gone "$1"; }

pause_gate
SHMWATCH=$SHMWATCH_HOOKED TUI_PREFIX="env SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL=3" \
    tui_start 140 40 --log "$log"
tui_wait "main $live_main " 10
tui_keys p
tui_wait "^ +$s2 +1 [A-Z] orphan_worker " 10
# Every command this script runs (tmux's clients too) is a zombie for the
# moment between its exit and its reaping, and K offers to help every zombie
# of the scan: the dashboard is paused on a scan whose only zombie is the
# python one (r steps one scan while paused).
tui_keys Z
tui_wait "PAUSED" 5
zombies() { tui_cap | grep -cE '^ +[0-9]+ +[0-9]+ Z zombie ' || true; }
for _ in $(seq 20); do
    tui_keys r
    sleep 0.5
    [ "$(zombies)" = 1 ] && tui_cap | grep -qE "^ +$zombie +$parent Z zombie " && break
done
[ "$(zombies)" = 1 ] || { tui_dump; fail "no scan without a passing zombie in 20 tries"; }
tui_wait "^ +$s1 +1 [A-Z] orphan_worker " 5

# --- The plan, and declining it -------------------------------------------------------------
before=$(cat "$count")
tui_keys K
tui_wait "End 2 processes \(SIGTERM, SIGKILL after 5 s\) and help 1 zombie be reaped\?" 5
for s in "$s1" "$s2"; do
    tui_wait "end    pid $s \(shmscene\)  orphaned worker: a DataLoader worker by its caught signals and libtorch whose parent, pid [0-9]+ \(" 5
done
tui_wait "zombie pid $zombie \(python3\)  zombie: already dead, waiting for its parent pid $parent \(python3\)" 5
tui_cap | grep -qE "(end|zombie) +pid ($live_main|$live_worker|$parent) \(" && { tui_dump; fail "K offers to end a live job's process"; }
ok "K lists the 2 orphaned workers and the zombie, not the live job"
tui_keys n
tui_wait "nothing signalled" 5
stays_false '! alive "$s1" || ! alive "$s2" || [ "$(cat "$count")" != "$before" ] || [ -s "$log" ]' 0.5 ||
    fail "declining ended an orphaned worker ($(alive "$s1" && alive "$s2" && echo no)), sent the zombie's parent SIGCHLD ($(cat "$count") after $before) or wrote the action log: $(cat "$log" 2>/dev/null)"
ok "n ends nothing and logs nothing"

# --- y; during the pause s1's pid changes hands ------------------------------------------------
tui_keys K
tui_wait "End 2 processes" 5
tui_keys y
# s1 dies and is reaped (we are pid 1 here); its pid goes to a newcomer.
kill -KILL "$s1"
pid_to_newcomer "$s1"
newcomer=$NEWCOMER
: >"$GATE"
t0=$(date +%s%N)
tui_wait "reaped 2 of 3; 1 refused or failed" 20
t1=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -ge 4000 ] || fail "SIGKILL came before the 5 s timeout"
tui_wait "refused  pid $s1 \(shmscene\)  pid $s1 is now a different process \(sleep, started after the scan\): not signalled" 5
tui_wait "killed   pid $s2 \(shmscene\)  ignored SIGTERM for 5.0 s; ended by SIGKILL after 5\.[0-9] s" 5
tui_wait "zombie   pid $zombie \(python3\)  already dead \(a zombie\).*parent pid $parent \(python3\) was sent SIG" 5
wait_for "gone $s2" 5 || fail "worker $s2 lives"
stays_false '! alive "$newcomer" || [ "$(cat "/proc/$newcomer/comm" 2>/dev/null)" != sleep ]' 0.5 ||
    fail "the newcomer was signalled"
ok "the re-check refuses the pid taken by a new process; the other worker is SIGKILLed after SIGTERM's timeout"
wait_for "[ \"\$(cat $count)\" -gt $before ]" 5 || fail "the zombie's parent got no SIGCHLD"
alive "$parent" || fail "the zombie's parent (not an orphaned worker) was ended"
alive "$live_main" && alive "$live_worker" || fail "the live job was signalled"
ok "the zombie's parent got SIGCHLD and lives, and so does the live job"
tui_keys Enter
tui_wait "^reaped 2 of 3; 1 refused or failed" 5
assert_eq "$(tui_style '^reaped 2 of 3; 1 refused')" "fg=33 bg=49 bold=0" \
    "the summary of a refusal is drawn in the warning colour (yellow)"

assert_eq "$(logged "	signal TERM	pid $s1 (shmscene)	owner=0	bytes=0	refused	pid $s1 is now a different process")" 1 \
    "the refusal is in the action log"
assert_eq "$(logged "	signal TERM,KILL	pid $s2 (shmscene)	owner=0	bytes=0	killed	ignored SIGTERM")" 1 \
    "the SIGKILL is in the action log"
assert_eq "$(logged "	signal CHLD	pid $parent (python3)	owner=0	bytes=0	sent	")" 1 \
    "the SIGCHLD is in the action log"

# --- Nothing left to reap but the zombie (its parent does not reap it) ------------------------------
tui_keys r
tui_gone "orphan_worker" 10
tui_quit
