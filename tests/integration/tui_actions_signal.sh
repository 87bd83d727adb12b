#!/usr/bin/env bash
# The dashboard's k (and F9) acting on real processes, driven through tmux in a
# private pid namespace: k opens a signal menu for the selected process; Esc
# and q close it and nothing is signalled; on a screen too small to show
# it, no key but a cancel acts; TERM ends a worker; a digit is the
# number the line prints, not its position (2 INT, 9 KILL; 1 waits for 15 or
# 17, or Enter for HUP; 3 nothing), on a process that traps INT and HUP; F9
# then 9 (KILL) ends another worker; on a worker that is now a zombie, k explains that it is already dead
# and names its parent, offers to nudge that parent with SIGCHLD and, the
# parent being a live main process, not a stuck worker, does not offer to end
# it; a zombie of a torch_shm_manager offers to end the manager only once no
# live client is left, and ends it, though not when a client connects while
# that offer is open (re-checked right before); a process that exits while
# the menu is open is said already gone, not counted as sent; and when the
# selected process dies while the menu is open and its pid
# goes to a new process, the identity re-check refuses: the newcomer lives and
# the refusal is listed, shown as a warning and logged. L's log is a list: a
# digit leaves it open, End reaches its oldest line, Left closes it.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setsid /usr/bin/python3
# Its own pid namespace: small pids, and a pid can be handed to a new process.
test_ns 64m --pid -- "$@"
[ -w /proc/sys/kernel/ns_last_pid ] || _lib_missing "a writable /proc/sys/kernel/ns_last_pid"
. "$(dirname "$0")/tui_lib.sh"

SCENE_PREFIX=setsid scene_start --workers 2 --per-worker 1 --modes named
main=$(manifest_pids main)
w1=$(manifest_pids worker | sed -n 1p)
w2=$(manifest_pids worker | sed -n 2p)

# A process outside the scene holding a segment of its own: a child of this
# script (pid 1 here), so that it is reaped as soon as it dies.
hold_new_file /dev/shm/held_by_python
holder=$HOLDER

# A holder that records the INT and HUP it is sent (one line each) and lives on.
: >"$SHMTEST_TMP/trapped"
/usr/bin/python3 -c 'import os, signal, sys, time
def note(sig, frame):
    with open(sys.argv[2], "a") as f:
        f.write(signal.Signals(sig).name[3:] + "\n")
signal.signal(signal.SIGINT, note)
signal.signal(signal.SIGHUP, note)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.write(fd, b"x" * 4096)
open(sys.argv[3], "w").close()
while True:
    time.sleep(1)' /dev/shm/held_by_trapper "$SHMTEST_TMP/trapped" "$SHMTEST_TMP/trapper.ready" \
    </dev/null >/dev/null 2>&1 &
trapper=$!
on_exit "kill -KILL $trapper 2>/dev/null; wait $trapper 2>/dev/null"
wait_for "[ -e $SHMTEST_TMP/trapper.ready ]" 30 || fail "the trapper did not start"

log=$SHMTEST_TMP/actions.log
proc_row() { echo "^ +$1 +[0-9]+ [A-Z] $2 "; } # PID ROLE: its row in the processes view

tui_start 140 40 --log "$log"
tui_wait "main $main " 10
tui_keys p
tui_wait "$(proc_row "$w1" worker)" 5
tui_wait "$(proc_row "$holder" holder)" 5
tui_wait "$(proc_row "$trapper" holder)" 5

# --- The menu can be closed without a signal ----------------------------------------
tui_select "$(proc_row "$w1" worker)"
tui_keys k
tui_wait "Send a signal to pid $w1 \(shmscene\)" 5
tui_wait "15 TERM  ask it to exit" 5
tui_keys Escape
tui_gone "Send a signal to" 5
tui_keys F9
tui_wait "Send a signal to pid $w1 \(shmscene\)" 5
tui_keys q
tui_gone "Send a signal to" 5
stays_false 'gone "$w1" || [ -s "$log" ]' 0.5 ||
    fail "closing the menu signalled worker $w1 or wrote the action log: $(cat "$log")"
ok "Esc and q close k's and F9's menu; nothing is signalled or logged"

# --- A screen too small for the menu: not drawn, and no key but a cancel acts --------
tui_keys k
tui_wait "Send a signal to pid $w1 \(shmscene\)" 5
tui resize-window -t tui -x 15 -y 4
tui_wait "too small" 5
tui_gone "Send a signal|TERM" 5
tui_keys Enter 9
stays_false 'gone "$w1" || [ -s "$log" ]' 0.5 ||
    fail "a key pressed on a screen too small to show the menu signalled worker $w1: $(cat "$log")"
tui resize-window -t tui -x 140 -y 40
tui_wait "Send a signal to pid $w1 \(shmscene\)" 5
tui_keys Escape
tui_gone "Send a signal to" 5
ok "a screen too small for the menu shows only its notice; Enter and 9 act on nothing unseen"

# --- TERM ends a worker --------------------------------------------------------------
tui_keys k
tui_wait "Send a signal to pid $w1 \(shmscene\)" 5
tui_keys Enter # TERM is selected
tui_wait "SIGTERM sent to 1; 0 refused or failed" 5
wait_for "gone $w1" 5 || fail "worker $w1 lives after SIGTERM"
kill -0 "$main" 2>/dev/null && ! gone "$main" || fail "the main process died too"
style=$(tui_style '^SIGTERM sent to 1') || { tui_dump; fail "no summary line to check the colour of"; }
case $style in *fg=3[13]\ *) fail "a signal delivered is drawn as a warning or an error ($style)" ;; esac
assert_eq "$(logged "	signal TERM	pid $w1 (shmscene)	owner=0	bytes=0	sent	SIGTERM delivered")" 1 \
    "the SIGTERM is in the action log"
ok "k, Enter: worker $w1 ended by SIGTERM, its main $main lives"

# --- Digits are the signal numbers printed, never positions ------------------------------
# The trapper records each INT and HUP it gets, and lives on.
tui_select "$(proc_row "$trapper" holder)"
tui_keys k
tui_wait "Send a signal to pid $trapper \(python3\)" 5
tui_wait " 2 INT   interrupt" 5
nlog=$(wc -l <"$log")
tui_keys 3 # the third line (INT), but no line says 3: nothing
stays_false '[ "$(wc -l <"$log")" != "$nlog" ] || ! tui_cap | grep -q "Send a signal to pid $trapper"' 0.5 ||
    { tui_dump; fail "3, a number no line prints, closed the menu or sent something: $(tail -n 1 "$log")"; }
ok "3, a number no line prints, sends nothing"
tui_keys 2
tui_wait "SIGINT sent to 1; 0 refused or failed" 5
assert_eq "$(logged "	signal INT	pid $trapper (python3)	owner=0	bytes=0	sent	")" 1 \
    "2 sent SIGINT, the line that says 2 (logged)"
wait_for "grep -qx INT $SHMTEST_TMP/trapped" 5 || fail "the trapper got no SIGINT: $(cat "$SHMTEST_TMP/trapped")"
[ "$(logged "signal KILL")" = 0 ] || fail "2 sent SIGKILL"
ok "k, 3 sends nothing; k, 2 sends SIGINT (the line that says 2), not the second line's KILL"
tui_keys k
tui_wait "Send a signal to pid $trapper" 5
tui_keys 1 # 1 HUP, or the start of 15 or 17: waits, on HUP
stays_false '[ "$(logged "pid $trapper ")" != 1 ] || ! tui_cap | grep -q "Send a signal to pid $trapper"' 0.5 ||
    { tui_dump; fail "1, the start of 15 and 17 too, closed the menu or sent something: $(tail -n 1 "$log")"; }
ok "1, the start of 15 and 17 too, sends nothing by itself"
tui_keys Enter
tui_wait "SIGHUP sent to 1; 0 refused or failed" 5
assert_eq "$(logged "	signal HUP	pid $trapper (python3)	owner=0	bytes=0	sent	")" 1 \
    "1 then Enter sent SIGHUP (logged)"
wait_for "grep -qx HUP $SHMTEST_TMP/trapped" 5 || fail "the trapper got no SIGHUP: $(cat "$SHMTEST_TMP/trapped")"
kill -0 "$trapper" 2>/dev/null && ! gone "$trapper" || fail "the trapper died"
ok "k, 1, Enter sends SIGHUP"
tui_keys k
tui_wait "Send a signal to pid $trapper" 5
tui_keys 1 7 # 17 CHLD: picked at the 7
tui_wait "SIGCHLD sent to 1; 0 refused or failed" 5
assert_eq "$(logged "	signal CHLD	pid $trapper (python3)	owner=0	bytes=0	sent	")" 1 \
    "1, 7 sent SIGCHLD (logged)"
[ "$(logged "signal HUP")" = 1 ] || fail "1, 7 sent SIGHUP too"
ok "k, 1, 7 sends SIGCHLD: a two-digit number is typed whole"

# --- F9, KILL ----------------------------------------------------------------------------
tui_select "$(proc_row "$w2" worker)"
tui_keys F9
tui_wait "Send a signal to pid $w2 \(shmscene\)" 5
tui_keys 9 # the line that says 9: KILL
tui_wait "SIGKILL sent to 1; 0 refused or failed" 5
wait_for "gone $w2" 5 || fail "worker $w2 lives after SIGKILL"
assert_eq "$(logged "	signal KILL	pid $w2 (shmscene)	owner=0	bytes=0	sent	")" 1 \
    "the SIGKILL is in the action log"
ok "F9, 9: worker $w2 ended by SIGKILL"

# --- A zombie: explained, its parent nudged, never offered for ending ---------------------
# shmscene's main reaps nothing once ready: the worker stays a zombie.
tui_keys r
tui_wait "$(proc_row "$w1" zombie)" 10
tui_select "$(proc_row "$w1" zombie)"
tui_keys k
tui_wait "pid $w1 \(shmscene\) is a zombie: already dead" 5
tui_wait "only its parent pid $main \(shmscene\) can reap it" 5
tui_wait "Send SIGCHLD to its parent pid $main so that it reaps it" 5
tui_cap | grep -q "End its parent" && { tui_dump; fail "ending a main process is offered"; }
tui_keys 2 # Cancel
tui_gone "is a zombie" 5
[ "$(logged "signal CHLD	pid $main ")" = 0 ] || fail "Cancel sent SIGCHLD"
ok "k on a zombie names its parent $main and does not offer to end it (not a stuck worker); Cancel does nothing"
tui_keys k
tui_wait "is a zombie: already dead" 5
tui_keys Enter # nudge the parent
tui_wait "parent sent SIGCHLD; 0 refused or failed" 10
assert_eq "$(logged "	signal CHLD	pid $main (shmscene)	owner=0	bytes=0	sent	asked to reap its zombie child")" 1 \
    "the SIGCHLD to the parent is in the action log"
kill -0 "$main" 2>/dev/null && ! gone "$main" || fail "nudging killed the main process"
ok "the zombie's parent is sent SIGCHLD and lives"

# --- A zombie of a torch_shm_manager: ending it is offered only when it is stuck ------------
# A manager stand-in (comm torch_shm_manag, listening on an abstract socket)
# whose child is a zombie it never reaps. While a client is connected it
# serves a live process: only the nudge is offered. Once the client is gone
# it is stuck: ending it is offered, and chosen.
cat >"$SHMTEST_TMP/mgr.py" <<'PY'
import ctypes, os, socket, sys, time
ctypes.CDLL(None).prctl(15, b"torch_shm_manag", 0, 0, 0)  # PR_SET_NAME
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1])
s.listen(8)
child = os.fork()
if child == 0:
    os._exit(0)
while open("/proc/%d/stat" % child).read().rsplit(")", 1)[1].split()[0] != "Z":
    time.sleep(0.01)
open(sys.argv[2], "w").close()
conns = []
while True:
    conns.append(s.accept()[0])
PY
addr=shmwatch-test-$(date +%s%N)-$RANDOM # abstract: unique in the network namespace
/usr/bin/python3 "$SHMTEST_TMP/mgr.py" "$addr" "$SHMTEST_TMP/mgr.ready" </dev/null >/dev/null 2>&1 &
mgr=$!
wait_for "[ -e $SHMTEST_TMP/mgr.ready ]" 30 || fail "the manager stand-in did not start"
mgr_zombie=$(ps -o pid= --ppid "$mgr" | tr -d ' ')
# start_client: a client of the manager, connected; its pid in $client.
start_client() {
    rm -f "$SHMTEST_TMP/client.ready"
    /usr/bin/python3 -c 'import socket, sys, time
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("\0" + sys.argv[1])
open(sys.argv[2], "w").close()
time.sleep(600)' "$addr" "$SHMTEST_TMP/client.ready" </dev/null >/dev/null 2>&1 &
    client=$!
    wait_for "[ -e $SHMTEST_TMP/client.ready ]" 30 || fail "the manager's client did not start"
}
start_client
tui_keys r
tui_wait "$(proc_row "$mgr_zombie" zombie)" 10
tui_select "$(proc_row "$mgr_zombie" zombie)"
tui_keys k
tui_wait "pid $mgr_zombie \(torch_shm_manag\) is a zombie: .* only its parent pid $mgr " 5
tui_cap | grep -q "End its parent" && { tui_dump; fail "ending a manager that serves a live client is offered"; }
tui_keys 2 # Cancel
tui_gone "is a zombie" 5
ok "k on a zombie of a manager serving a live client does not offer to end the manager"
kill -KILL "$client"
wait "$client" 2>/dev/null
tui_keys k
tui_wait "End its parent pid $mgr \(it is a stuck shm manager\): TERM, then KILL" 5
# A client connects while the dialog is open: the manager serves a live
# process again, and ending it is refused by the check right before it.
start_client
tui_keys 2 # End its parent
tui_wait "1 refused or failed" 10
tui_wait "pid $mgr \(torch_shm_manag\)  no longer stuck: it serves a live client again" 5
stays_false "gone $mgr" 0.5 || fail "a manager that serves a live client again was ended"
assert_eq "$(logged "	signal TERM	pid $mgr (torch_shm_manag)	owner=0	bytes=0	refused	no longer stuck")" 1 \
    "the refusal to end the manager is in the action log"
tui_keys Escape
kill -KILL "$client"
wait "$client" 2>/dev/null
ok "a client that connects while the dialog is open makes ending the manager a refusal"
tui_keys k
tui_wait "End its parent pid $mgr \(it is a stuck shm manager\): TERM, then KILL" 5
tui_keys 2 # End its parent
wait_for "gone $mgr" 10 || { tui_dump; fail "the stuck manager $mgr lives"; }
wait "$mgr" 2>/dev/null
# The action is logged once its wait for the end is over, after the end.
ended="	signal TERM	pid $mgr (torch_shm_manag)	owner=0	bytes=0	ended	"
wait_for '[ "$(logged "$ended")" -gt 0 ]' 10 || true
assert_eq "$(logged "$ended")" 1 "the SIGTERM to the stuck manager is in the action log"
ok "with its client gone, k on its zombie offers to end the stuck manager, and ends it"

# --- The process exits while the menu is open: already gone, not sent ---------------------
hold_new_file /dev/shm/held_then_gone
gone=$HOLDER
tui_wait "$(proc_row "$gone" holder)" 10
tui_select "$(proc_row "$gone" holder)"
tui_keys k
tui_wait "Send a signal to pid $gone \(python3\)" 5
kill -KILL "$gone"
wait "$gone" 2>/dev/null
tui_keys Enter # TERM
tui_wait "^SIGTERM sent to 0, 1 already gone; 0 refused or failed" 5
assert_eq "$(logged "	signal TERM	pid $gone (python3)	owner=0	bytes=0	gone	already exited")" 1 \
    "the signal not sent is in the action log as gone"
ok "a process that exits while the menu is open is said already gone, not sent to"

# --- The pid changes hands while the menu is open: refused ---------------------------------
tui_select "$(proc_row "$holder" holder)"
tui_keys k
tui_wait "Send a signal to pid $holder \(python3\)" 5
# The holder dies and is reaped (we are pid 1 here); its pid goes to a newcomer.
kill -KILL "$holder"
wait "$holder" 2>/dev/null
pid_to_newcomer "$holder"
newcomer=$NEWCOMER
tui_keys Enter # TERM
tui_wait "SIGTERM sent to 0; 1 refused or failed" 5
tui_wait "pid $holder \(python3\)  pid $holder is now a different process \(sleep, started after the scan\): not signalled" 5
stays_false '! kill -0 "$newcomer" 2>/dev/null || [ "$(cat "/proc/$newcomer/comm" 2>/dev/null)" != sleep ]' 0.5 ||
    fail "the newcomer was signalled"
assert_eq "$(logged "	signal TERM	pid $holder (python3)	owner=0	bytes=0	refused	pid $holder is now a different process")" 1 \
    "the refusal is in the action log"
ok "a pid taken by a new process while the menu is open is not signalled"
tui_keys Enter # closes the list; the status line keeps the summary
tui_wait "^SIGTERM sent to 0; 1 refused or failed" 5
assert_eq "$(tui_style '^SIGTERM sent to 0; 1 refused')" "fg=33 bg=49 bold=0" \
    "a refusal is drawn in the warning colour (yellow)"

# --- The log page ---------------------------------------------------------------------------
tui_keys L
tui_wait "Action log $log" 5
tui_wait "signal TERM  pid $holder \(python3\)  owner=0  bytes=0  refused" 5
ok "L lists the signals, the refusal first"
# A list, not a menu: a digit picks nothing and leaves it open; End goes to
# its last line, the oldest action; Left closes it, as it closes a page.
tui_keys 1
stays_false '! tui_cap | grep -q "Action log $log"' 0.5 || { tui_dump; fail "a digit closed the log"; }
tui_keys End
wait_for '[[ "$(tui_style "signal TERM  pid $w1 \(shmscene\)")" == *bg=46* ]]' 5 ||
    { tui_dump; fail "End did not go to the oldest action"; }
tui_keys Left
tui_gone "Action log $log" 5
ok "the log is a list: a digit leaves it open, End reaches the oldest line, Left closes it"
tui_quit
