#!/usr/bin/env bash
# A FUSE mount whose daemon does not answer must not stop a scan. In the
# test's private mount namespace: bindfs mounts a tmpfs directory, a process
# holds a file on it (open, mapped, its cwd) and a segment in /dev/shm, and
# the daemon is stopped (SIGSTOP), so that a plain stat of that fd waits
# forever (checked). --json, --once, --prometheus, clean --dry-run and reap
# --dry-run must each finish within seconds and still report the scene's
# segments; the dashboard's scan clock must keep moving with nothing said to
# be stuck. Then the same with the daemon killed (the mount answers ENOTCONN).
# And the watchdog, with the scan made to hang for real on the stopped daemon
# (the test build, SHMWATCH_HOOKED with SHMWATCH_TEST_BLOCKING_STAT, restores
# the waiting stat): a --json stand-in
# that names the process and fd, a --prometheus-file that keeps the last
# complete scan's time and drops the stale figures, shmwatch record that
# records the stall (a "stalled" record at each interval, no stand-in
# snapshot), goes on when it ends and exits 0 on SIGTERM during one, and a
# dashboard that stays responsive, keeps its data marked stale and quits,
# or refuses a terminal it cannot drive and exits without waiting for it.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need bindfs fusermount3 python3 stat promtool
if [ ! -c /dev/fuse ]; then
    modprobe fuse 2>/dev/null || true
    [ -c /dev/fuse ] || _lib_missing "/dev/fuse (the fuse module: modprobe fuse)"
fi
# In a private pid namespace: the test build's waiting stat would wait as well
# on another test's stopped FUSE daemon (this test's in the other build, run
# beside it), were that test's holder among the processes it sees.
test_ns 64m --pid -- "$@"
. "$(dirname "$0")/tui_lib.sh"

SRC=$SHMTEST_TMP/fuse-src
MNT=$SHMTEST_TMP/fuse-mnt
mkdir -p "$SRC" "$MNT"
head -c 65536 /dev/zero >"$SRC/data"
BINDFS=

# fuse_start: bindfs in the foreground (so that its pid is known), bounded in
# time by timeout, which kills it even when stopped.
fuse_start() {
    timeout -s KILL 400 bindfs -f "$SRC" "$MNT" </dev/null >"$SHMTEST_TMP/bindfs.log" 2>&1 &
    local killer=$!
    wait_for "grep -q ' $MNT fuse' /proc/self/mounts" 10 ||
        fail "bindfs did not mount: $(head -c 500 "$SHMTEST_TMP/bindfs.log")"
    BINDFS=$(ps -o pid= --ppid "$killer" | tr -d ' ')
    [ -n "$BINDFS" ] || fail "no bindfs process under timeout $killer"
}

# Nothing stays mounted or stopped, whatever happens: a stopped daemon would
# keep the namespace, and its mount, alive, and a process that closes a file
# on the mount (the holder at its exit) waits for the daemon's answer without
# end. So the daemon is killed first of all (fuse_stop is registered again
# after each process that uses the mount: the last registered runs first).
fuse_stop() {
    [ -z "$BINDFS" ] || kill -KILL "$BINDFS" 2>/dev/null || true
    BINDFS=
    fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
}
on_exit 'fuse_stop'

fuse_start
ok "bindfs mounted $MNT (daemon $BINDFS)"
# The same FUSE mount inside the watched tmpfs: its listing must not enter it.
mkdir /dev/shm/fuse-inside
mount --bind "$MNT" /dev/shm/fuse-inside || fail "cannot bind $MNT into /dev/shm"
on_exit 'umount -l /dev/shm/fuse-inside 2>/dev/null'

scene_start --workers 2 --per-worker 4 --size 64K --orphans 2
nseg=$(manifest_segments | wc -l)

# The holder: a file on the FUSE mount open, mapped and its cwd, and a segment
# of its own in /dev/shm, so that the scan reads its fds, maps and details.
ready=$SHMTEST_TMP/holder.ready
/usr/bin/python3 -c 'import mmap, os, sys, time
f = open(sys.argv[1], "r+b")
m = mmap.mmap(f.fileno(), 0)
os.chdir(os.path.dirname(sys.argv[1]))
seg = os.open("/dev/shm/fuse_holder_seg", os.O_RDWR | os.O_CREAT, 0o600)
os.write(seg, b"x" * 4096)
with open(sys.argv[2] + ".tmp", "w") as r:
    r.write("%d %d\n" % (os.getpid(), f.fileno()))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(400)' "$MNT/data" "$ready" </dev/null >/dev/null 2>&1 &
HOLDER=$!
on_exit "kill -KILL $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null"
on_exit 'fuse_stop'
wait_for "[ -s $ready ]" 30 || fail "the FUSE holder did not start"
read -r hpid hfd <"$ready"
assert_eq "$hpid" "$HOLDER" "the holder holds $MNT/data as fd $hfd"
nseg=$((nseg + 1))

# stat_blocks: a plain stat of the holder's fd does not answer within 3 s.
stat_blocks() {
    ! (timeout -s KILL 3 stat -L "/proc/$HOLDER/fd/$hfd" >/dev/null 2>&1) 2>/dev/null
}

# timed LIMIT_S OUTFILE CMD...: runs CMD with its stdout in OUTFILE, killed
# after 30 s; fails when it took more than LIMIT_S. Sets RC.
timed() {
    local limit=$1 out=$2 t0 t1
    shift 2
    t0=$(date +%s%N)
    RC=0
    timeout -s KILL 30 "$@" >"$out" 2>"$out.err" || RC=$?
    t1=$(date +%s%N)
    ELAPSED=$(((t1 - t0) / 1000000))
    [ "$RC" -ne 137 ] || fail "$* did not finish in 30 s: $(head -c 300 "$out.err")"
    [ "$ELAPSED" -le $((limit * 1000)) ] || fail "$* took $ELAPSED ms (> $limit s)"
}

# timed_bg LIMIT_S OUTFILE CMD...: timed, in the background; sets TIMED_PID.
# timed_wait PID OUTFILE: waits for it (where timed failed, fails) and sets RC
# and ELAPSED.
timed_bg() {
    local out=$2
    (
        timed "$@"
        echo "$RC $ELAPSED" >"$out.rc"
    ) &
    TIMED_PID=$!
}
timed_wait() {
    wait "$1" || fail "the timed command writing $2 failed (above)"
    read -r RC ELAPSED <"$2.rc"
}

# every_mode WHAT: the five commands finish in seconds and see the scene.
every_mode() {
    local what=$1 f=$SHMTEST_TMP/mode
    timed 5 "$f.json" "$SHMWATCH" --json
    assert_eq "$RC" 0 "--json exits 0 ($what, ${ELAPSED} ms)"
    json_check "$f.json" "len(j['segments']) == $nseg and j['scan']['stalled_s'] == 0" \
        "--json lists all $nseg segments of the scene and the holder ($what)" \
        "any(s['name'] == 'fuse_holder_seg' and any(h['pid'] == $HOLDER for h in s['holders']) for s in j['segments'])" \
        "--json still sees the FUSE holder's own segment ($what)" \
        "any('a file system mounted inside it was not listed' in w for w in j['warnings'])" \
        "--json says it did not enter the FUSE mount inside /dev/shm ($what)"

    timed 5 "$f.txt" "$SHMWATCH" --once
    assert_eq "$RC" 0 "--once exits 0 ($what, ${ELAPSED} ms)"
    grep -q fuse_holder_seg "$f.txt" || fail "--once does not show fuse_holder_seg ($what)"
    ok "--once shows the segments ($what)"

    timed 5 "$f.prom" "$SHMWATCH" --prometheus
    assert_eq "$RC" 0 "--prometheus exits 0 ($what, ${ELAPSED} ms)"
    grep -q '^shmwatch_segments{mount="/dev/shm",state="orphan",kind="torch"} 2$' "$f.prom" ||
        fail "--prometheus does not count the 2 orphans ($what)"
    grep -q '^shmwatch_scan_stalled_seconds 0$' "$f.prom" &&
        grep -q '^shmwatch_last_scan_timestamp_seconds [0-9]' "$f.prom" ||
        fail "--prometheus lacks the scan's timestamp or stall gauge ($what)"
    ok "--prometheus counts the orphans, with its scan time ($what)"

    timed 5 "$f.clean" "$SHMWATCH" clean --dry-run
    [ "$RC" -eq 0 ] || [ "$RC" -eq 3 ] || fail "clean --dry-run exited $RC ($what)"
    grep -c '^would remove' "$f.clean" | grep -qx 2 ||
        fail "clean --dry-run does not plan the 2 orphans ($what): $(cat "$f.clean")"
    ok "clean --dry-run finishes (${ELAPSED} ms) and plans the 2 orphans ($what)"
    timed 5 "$f.clean2" "$SHMWATCH" clean --dry-run --all-unheld --min-age 0
    [ "$RC" -eq 0 ] || [ "$RC" -eq 3 ] || fail "clean --dry-run --all-unheld exited $RC ($what)"
    grep -q fuse-inside "$f.clean2" && fail "clean --all-unheld plans the FUSE mount point ($what)"
    ok "clean --dry-run --all-unheld finishes (${ELAPSED} ms), the mount point left alone ($what)"

    # The FUSE mount named with --mount: refused in one line, without waiting
    # on its daemon for the check (its type comes from mountinfo).
    timed 5 "$f.mnt" "$SHMWATCH" --once --mount "$MNT"
    assert_eq "$RC" 2 "--mount of the FUSE mount exits 2 ($what, ${ELAPSED} ms)"
    grep -q "^shmwatch: --mount $MNT: not a tmpfs (it is on fuse" "$f.mnt.err" ||
        fail "--mount of the FUSE mount: no clear refusal ($what): $(head -c 300 "$f.mnt.err")"
    ok "--mount of the FUSE mount is refused at once ($what, ${ELAPSED} ms)"

    timed 5 "$f.reap" "$SHMWATCH" reap --dry-run
    [ "$RC" -eq 0 ] || [ "$RC" -eq 3 ] || fail "reap --dry-run exited $RC ($what)"
    [ -s "$f.reap" ] || fail "reap --dry-run printed nothing ($what)"
    ok "reap --dry-run finishes (${ELAPSED} ms, status $RC): $(tail -n 1 "$f.reap") ($what)"
}

# The title's "scan HH:MM:SS".
scan_clock() {
    tui_cap | sed -n 's/.*scan \([0-9][0-9]:[0-9][0-9]:[0-9][0-9]\).*/\1/p' | head -n 1
}

# dashboard_moves WHAT: the scan clock changes and nothing is said stuck.
dashboard_moves() {
    local what=$1
    tui_start 120 30
    tui_wait "scan [0-9]{2}:[0-9]{2}:[0-9]{2}" 10
    local first
    first=$(scan_clock)
    wait_for '[ "$(scan_clock)" != "$first" ]' 8 || { tui_dump; fail "the scan clock stays at $first ($what)"; }
    ok "the dashboard's scan clock moves: $first -> $(scan_clock) ($what)"
    tui_cap | grep -qiE "stalled|STALE" && { tui_dump; fail "the dashboard says stuck ($what)"; }
    tui_wait "fuse_holder_seg" 5
    ok "the dashboard shows the holder's segment and nothing stuck ($what)"
    tui_quit
}

# --- The daemon stopped -------------------------------------------------------------
kill -STOP "$BINDFS"
# Once FUSE's attribute cache (1 s) runs out a stat asks the daemon, and waits.
wait_for stat_blocks 6 || fail "a plain stat of the held FUSE file answers: the test is not testing"
ok "with the daemon stopped, a plain stat of /proc/$HOLDER/fd/$hfd blocks"
# What the scan does read of such a process answers without the daemon: the
# fd's link, the maps (the file is mapped), the cwd's link.
timeout -s KILL 3 readlink "/proc/$HOLDER/fd/$hfd" | grep -qx "$MNT/data" ||
    fail "readlink of the held FUSE fd does not answer"
timeout -s KILL 3 cat "/proc/$HOLDER/maps" | grep -q " $MNT/data\$" ||
    fail "the holder's maps do not answer or lack the FUSE mapping"
timeout -s KILL 3 readlink "/proc/$HOLDER/cwd" | grep -qx "$MNT" ||
    fail "readlink of the holder's cwd does not answer"
ok "readlink of the fd and cwd, and the maps, answer with the daemon stopped"
every_mode "daemon stopped"
dashboard_moves "daemon stopped"

# --- The watchdog: a scan that really hangs (the old waiting stat) ------------------
# The test build of the program (its stat hook set: tests/helpers/shmwatch_hooked.c)
# until the daemon is killed; the shipped one has no such wait.
SHMWATCH_SHIPPED=$SHMWATCH
SHMWATCH=$SHMWATCH_HOOKED
export SHMWATCH_TEST_BLOCKING_STAT=1
# The watchdog's limit, 10 s and more in the program (scanjob.h, its unit
# test test_scanjob), is 4 s here: a hung scan is waited out seven times.
STALL_S=4
export SHMWATCH_TEST_STALL_LIMIT=$STALL_S
# --json, --once and clean each wait for the watchdog's limit on the same
# stopped daemon: side by side, each timed on its own.
before=$(ls -A /dev/shm)
timed_bg 16 "$SHMTEST_TMP/stall.json" "$SHMWATCH" --json
stall_json=$TIMED_PID
timed_bg 16 "$SHMTEST_TMP/stall.txt" "$SHMWATCH" --once
stall_once=$TIMED_PID
timed_bg 16 "$SHMTEST_TMP/stall.clean" "$SHMWATCH" clean --yes
stall_clean=$TIMED_PID
timed_wait "$stall_json" "$SHMTEST_TMP/stall.json"
assert_eq "$RC" 1 "--json whose scan hangs exits 1 after the watchdog's limit (${ELAPSED} ms)"
[ "$ELAPSED" -ge $((STALL_S * 1000 - 500)) ] || fail "--json gave up after $ELAPSED ms, before the $STALL_S s limit"
json_check "$SHMTEST_TMP/stall.json" "j['scan']['stalled_s'] >= $STALL_S and j['scan']['stalled_pid'] == $HOLDER and j['scan']['stalled_fd'] == $hfd and j['segments'] == [] and any('fd $hfd of pid $HOLDER (python3)' in w for w in j['warnings'])" \
    "the --json stand-in names the process and fd the scan waits on, with no stale figures"
timed_wait "$stall_once" "$SHMTEST_TMP/stall.txt"
assert_eq "$RC" 1 "--once whose scan hangs exits 1"
grep -q "fd $hfd of pid $HOLDER" "$SHMTEST_TMP/stall.txt.err" || fail "--once does not say where it waits: $(cat "$SHMTEST_TMP/stall.txt.err")"
ok "--once says on stderr where the scan waits"
timed_wait "$stall_clean" "$SHMTEST_TMP/stall.clean"
assert_eq "$RC" 1 "clean whose scan hangs exits 1"
grep -q "fd $hfd of pid $HOLDER.*nothing was done" "$SHMTEST_TMP/stall.clean.err" ||
    fail "clean does not say where its scan waits: $(cat "$SHMTEST_TMP/stall.clean.err")"
[ "$(ls -A /dev/shm)" = "$before" ] || fail "clean removed something while its scan hung"
ok "clean whose scan hangs says where, removes nothing and exits 1"

# --prometheus-file: fresh while the daemon answers, then stalled: the last
# complete scan's time is kept and no figure is rewritten as if fresh.
prom=$SHMTEST_TMP/metrics.prom
kill -CONT "$BINDFS"
"$SHMWATCH" --prometheus-file "$prom" --interval 1 &
PROMW=$!
on_exit "kill -KILL $PROMW 2>/dev/null"
on_exit 'fuse_stop'
wait_for "grep -q '^shmwatch_segments' $prom 2>/dev/null" 10 || fail "no metrics file while the daemon answers"
t_fresh=$(awk '$1 == "shmwatch_last_scan_timestamp_seconds" { print $2 }' "$prom")
ok "--prometheus-file writes the figures and the scan time $t_fresh"
kill -STOP "$BINDFS"
wait_for "grep -q '^shmwatch_scan_stalled_seconds [1-9]' $prom" 20 || { cat "$prom" >&2; fail "the metrics file never says the scan is stalled"; }
grep -q '^shmwatch_segments\|^shmwatch_mount_' "$prom" && { cat "$prom" >&2; fail "the stalled metrics file still carries figures"; }
# The last complete scan began before the stalled one, which began
# stalled_seconds before the file was written, itself before it was read.
# (A scan begun just after the daemon stopped may still end: FUSE answers
# from its attribute cache for a second.)
cp "$prom" "$SHMTEST_TMP/stalled.prom"
t_read=$(date +%s.%N)
t_kept=$(awk '$1 == "shmwatch_last_scan_timestamp_seconds" { print $2 }' "$SHMTEST_TMP/stalled.prom")
s_stalled=$(awk '$1 == "shmwatch_scan_stalled_seconds" { print $2 }' "$SHMTEST_TMP/stalled.prom")
python3 -c "import sys; sys.exit(0 if 0 < float('$t_kept') <= $t_read - float('$s_stalled') else 1)" ||
    fail "the stalled file's last scan time $t_kept is not from before the stalled scan ($t_read - $s_stalled s)"
grep -q "^# shmwatch: .*fd $hfd of pid $HOLDER" "$prom" || { cat "$prom" >&2; fail "the stalled file does not say where the scan waits"; }
promtool check metrics <"$prom" || fail "promtool rejects the stalled metrics file"
ok "stalled: the file keeps the last scan time ($t_kept), no figures, and says where it waits"
kill -CONT "$BINDFS"
wait_for "grep -q '^shmwatch_scan_stalled_seconds 0$' $prom && grep -q '^shmwatch_segments' $prom" 10 ||
    fail "the metrics file did not come back once the daemon answered"
ok "once the daemon answers the file has figures again"
kill -TERM "$PROMW"
wait "$PROMW" 2>/dev/null || true

# shmwatch record: a stalled scan is recorded as a stream says it, not as a
# snapshot (no stand-in whose empty lists would read as everything gone): a
# recorder "stalled" record at each interval naming the process and fd, the
# warning once on stderr; snapshots go on when the scan ends; SIGTERM in the
# middle of a stall finishes the store and exits 0.
store=$SHMTEST_TMP/store
# store_count FILTER: how many records of the store match FILTER, a Python
# expression of r (T(r): its time, Unix seconds); a line being written is
# skipped. store_last FILTER: the time of the last one (0 for none).
store_count() {
    _store_py "$1" 'print(sum(1 for r in recs if eval(sys.argv[1])))'
}
store_last() {
    _store_py "$1" 'print(max([T(r) for r in recs if eval(sys.argv[1])] or [0]))'
}
_store_py() {
    cat "$store"/*.jsonl 2>/dev/null | /usr/bin/python3 -c '
import datetime, json, sys
T = lambda r: datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
recs = []
for line in sys.stdin:
    try:
        recs.append(json.loads(line))
    except ValueError:
        pass
'"$2" "$1"
}
"$SHMWATCH" record --dir "$store" --interval 1 2>"$SHMTEST_TMP/record.err" &
RECW=$!
on_exit "kill -KILL $RECW 2>/dev/null"
on_exit 'fuse_stop'
wait_for "[ \"\$(store_count \"r.get('schema') == 1 and any(s['name'] == 'fuse_holder_seg' for s in r['segments'])\")\" -gt 0 ]" 15 ||
    { cat "$SHMTEST_TMP/record.err" >&2; fail "the recorder wrote no snapshot while the daemon answers"; }
ok "record: a snapshot of the scene while the daemon answers"
kill -STOP "$BINDFS"
stalled="r.get('event') == 'recorder' and r['what'] == 'stalled'"
wait_for "[ \"\$(store_count \"$stalled and r['stalled_pid'] == $HOLDER and r['stalled_fd'] == $hfd and r['stalled_s'] >= $STALL_S\")\" -gt 0 ]" 25 ||
    { cat "$SHMTEST_TMP/record.err" >&2; fail "the recorder never recorded the stalled scan"; }
ok "record: the stalled scan recorded, naming fd $hfd of pid $HOLDER"
wait_for "[ \"\$(store_count \"$stalled\")\" -ge 3 ]" 10 || fail "the recorder stopped writing during the stall"
assert_eq "$(store_count "r.get('schema') == 1 and r['scan']['stalled_s'] > 0")" 0 \
    "record: a stalled record at each interval, and no stand-in snapshot in the store"
assert_eq "$(grep -c "^shmwatch record: the scan has not finished after [0-9]* s, reading fd $hfd of pid $HOLDER (python3)" "$SHMTEST_TMP/record.err")" 1 \
    "record: the stall said once on stderr"
kill -CONT "$BINDFS"
since=$(store_last "$stalled")
wait_for "[ \"\$(store_count \"r.get('schema') == 1 and T(r) > $since and any(s['name'] == 'fuse_holder_seg' for s in r['segments'])\")\" -gt 0 ]" 15 ||
    fail "no snapshot once the daemon answered again"
grep -q "^shmwatch record: the stalled scan has finished after [0-9]* s: snapshots go on$" "$SHMTEST_TMP/record.err" ||
    fail "the recorder does not say the stall ended: $(cat "$SHMTEST_TMP/record.err")"
ok "record: snapshots go on once the daemon answers, and the recorder says so"
kill -STOP "$BINDFS"
since=$(store_last "r.get('schema') == 1")
wait_for "[ \"\$(store_count \"$stalled and T(r) > $since\")\" -gt 0 ]" 25 || fail "the second stall was not recorded"
kill -TERM "$RECW"
timeout 10 tail --pid="$RECW" -f /dev/null || fail "record does not end on SIGTERM during a stall"
rc=0
wait "$RECW" || rc=$?
assert_eq "$rc" 0 "record: SIGTERM during a stall exits 0"
tail -n 1 "$store"/*.jsonl >"$SHMTEST_TMP/last.json"
json_check "$SHMTEST_TMP/last.json" "j['event'] == 'recorder' and j['what'] == 'stop'" \
    "record: its last record says it stopped"
cat "$store"/*.jsonl | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    json.loads(line)' || fail "a line of the store is not whole JSON"
ok "record: every line of the store is whole"
kill -CONT "$BINDFS"

# The dashboard: responsive, the last data kept and marked stale, quits.
# With --record it records the stall as the recorder does, and goes on
# recording when the scan ends: a second holder killed during the stall is
# recorded as gone (told from the scans: the kernel's process events are
# not had in a pid namespace of its own).
store=$SHMTEST_TMP/dashboard-store
/usr/bin/python3 -c 'import os, time
seg = os.open("/dev/shm/fuse_other_seg", os.O_RDWR | os.O_CREAT, 0o600)
os.write(seg, b"x" * 4096)
time.sleep(400)' </dev/null >/dev/null 2>&1 &
OTHER=$!
on_exit "kill -KILL $OTHER 2>/dev/null; wait $OTHER 2>/dev/null"
on_exit 'fuse_stop'
tui_start 120 30 --record "$store"
tui_wait "fuse_holder_seg" 10
tui_wait "fuse_other_seg" 10
kill -STOP "$BINDFS"
tui_keys r
tui_wait "STALE" 20
tui_wait "scan stalled .*fd $hfd of pid $HOLDER" 5
tui_cap | grep -q fuse_holder_seg || { tui_dump; fail "the stale dashboard dropped its data"; }
ok "the dashboard says the scan is stalled on fd $hfd of pid $HOLDER and keeps its data"
stall_from=$(store_last "r.get('schema') == 1")
kill -KILL "$OTHER"
wait_for "[ \"\$(store_count \"$stalled and r['stalled_pid'] == $HOLDER and r['stalled_fd'] == $hfd and r['stalled_s'] >= $STALL_S\")\" -ge 2 ]" 15 ||
    fail "the dashboard's --record did not record the stall at each interval"
assert_eq "$(store_count "r.get('schema') == 1 and T(r) > $stall_from")" 0 \
    "the dashboard's --record: the stall recorded at each interval, and no snapshot"
tui_keys p
tui_wait "processes view" 5
ok "the stalled dashboard still answers keys"
kill -CONT "$BINDFS"
tui_gone "STALE" 15
ok "the stale mark goes once the scan ends"
wait_for "[ \"\$(store_count \"r.get('event') == 'exit' and r['pid'] == $OTHER\")\" -gt 0 ]" 10 ||
    fail "the dashboard's --record did not record the holder killed during the stall"
ok "the dashboard's --record: the holder killed during the stall recorded as gone"
rm /dev/shm/fuse_other_seg
kill -STOP "$BINDFS"
tui_keys r
tui_wait "STALE" 20
tui_quit
ok "q quits while a scan hangs"
# Without --record, nothing is said of a hung scan between the poller's looks
# at the scan and at the events, 0.2 s apart: the poller thread waits in
# poll(2) on its three event sources with a timeout of about 200 ms, each
# time it waits, however often an event wakes it. A wait given a deadline in
# the past polls with a timeout of 1 ms, over and over. The poller's thread
# (its comm, shmwatch-poll) is sampled in /proc/PID/task/TID/syscall: the
# timeout of the poll it waits in is read there, where a count of its
# wakeups would also count every process event of the machine.
tui_start 120 30
tui_wait "scan stalled .*fd $hfd of pid $HOLDER" 30
# task_named NAME: the tid of the dashboard's thread whose comm is NAME.
task_named() {
    local t
    for t in /proc/"$TUI_PID"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = "$1" ] && { echo "${t##*/}"; return 0; }
    done
    return 1
}
poll_tid=$(task_named shmwatch-poll) || fail "the dashboard (pid $TUI_PID) has no thread shmwatch-poll"
scan_tid=$(task_named shmwatch-scan) || fail "the dashboard (pid $TUI_PID) has no thread shmwatch-scan"
if [ "$(uname -m)" != x86_64 ]; then
    echo "skip - the poller's poll timeout: read as x86-64's poll(2) (number 7), not on $(uname -m)"
else
    # The sampling window, 2 s: the syscall file's fields are the number,
    # then the arguments (for poll: fds, nfds, timeout in ms, in hex).
    polls=0 short=0 samples=0
    t_end=$((${EPOCHREALTIME/./} + 2000000))
    while [ "${EPOCHREALTIME/./}" -lt "$t_end" ]; do
        read -r nr _ nfds timeout _ <"/proc/$TUI_PID/task/$poll_tid/syscall" ||
            fail "the poller's thread $poll_tid is gone"
        samples=$((samples + 1))
        if [ "$nr" = 7 ] && [ "$nfds" = 0x3 ]; then
            polls=$((polls + 1))
            [ $((timeout)) -ge 100 ] || short=$((short + 1))
        fi
        sleep 0.02
    done
    # The window counts only if the scan hung all along: the same scan
    # thread still runs (a scan that ended would have ended its thread, and
    # the next one runs in a new thread) and the screen still says so.
    [ "$(cat "/proc/$TUI_PID/task/$scan_tid/comm" 2>/dev/null)" = shmwatch-scan ] ||
        fail "the hung scan (thread $scan_tid) ended within the sampling window"
    tui_wait "scan stalled .*fd $hfd of pid $HOLDER" 1
    [ "$polls" -ge 5 ] ||
        fail "the poller was seen waiting on its events in $polls of $samples samples: no poll to judge"
    [ "$short" = 0 ] ||
        fail "the poller waited with a timeout under 100 ms in $short of its $polls waits seen, while a scan hung without --record"
    ok "a hung scan without --record: the poller waits about 200 ms at a time ($polls of $samples samples in its poll, none shorter than 100 ms)"
fi
tui_quit
# A terminal it cannot drive while the first scan hangs: the refusal's one
# line and status 1 once the scan is given up, no wait at the exit (with
# the leak checker of the sanitizer build, whose exit handler would wait
# for the stuck thread).
rc=0
timeout 60 script -qec "env TERM=no-such-terminal $(printf '%q' "$SHMWATCH")" /dev/null \
    >"$SHMTEST_TMP/noterm.out" 2>&1 </dev/null || rc=$?
assert_eq "$rc" 1 "an unknown TERM while a scan hangs exits 1 (124: it hung)"
grep -q "^shmwatch: cannot drive the terminal (TERM=no-such-terminal)" "$SHMTEST_TMP/noterm.out" ||
    fail "the refusal is not said: $(cat "$SHMTEST_TMP/noterm.out")"
ok "an unknown TERM while a scan hangs: one line, exit 1, no wait for the stuck scan"
kill -CONT "$BINDFS"
unset SHMWATCH_TEST_BLOCKING_STAT SHMWATCH_TEST_STALL_LIMIT
SHMWATCH=$SHMWATCH_SHIPPED

# --- The daemon killed: the mount answers ENOTCONN ----------------------------------
kill -KILL "$BINDFS"
wait_for "stat -L /proc/$HOLDER/fd/$hfd 2>&1 | grep -q 'not connected'" 5 ||
    fail "the dead mount does not answer ENOTCONN: $(stat -L "/proc/$HOLDER/fd/$hfd" 2>&1)"
ok "with the daemon killed, the held file answers ENOTCONN"
every_mode "daemon killed"
dashboard_moves "daemon killed"
fuse_stop
grep -q " $MNT fuse" /proc/self/mounts && fail "$MNT is still mounted"
ok "nothing of the test is left mounted"
scene_stop
