#!/usr/bin/env bash
# --pid of a process that exits, or whose pid a new process takes: the
# watched process is an emulated container (its own mount and pid
# namespaces, a 64 MiB tmpfs at /dev/shm holding 1 MiB) and shmwatch is
# pinned to it (pid and start time). Once it is gone a one-shot run exits 1
# with one line, a stream ends with status 1 and one line saying so, and the
# dashboard keeps showing the last scan (not an empty "limit 0B (MemTotal)",
# verdict OK) with "EXITED" in its title and the reason in its status line;
# r then says there is no rescan rather than wait for one.
# A newcomer on the same pid is never watched in its place.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need tmux
# A private pid namespace: pids can be handed to a newcomer (ns_last_pid).
test_ns 64m --pid -- "$@"
. "$(dirname "$0")/tui_lib.sh"

# container: starts one; CONTAINER is its init's pid here (pid 1 inside).
container() {
    unshare -m -p -f --mount-proc --propagation private bash -c '
        mount -t tmpfs -o size=64m tmpfs /dev/shm && head -c 1048576 /dev/urandom >/dev/shm/data &&
        exec sleep 300' </dev/null >/dev/null 2>&1 &
    local outer=$!
    on_exit "kill -KILL $outer 2>/dev/null; wait $outer 2>/dev/null; true"
    wait_for "[ -n \"\$(pgrep -P $outer)\" ] && [ -e /proc/\$(pgrep -P $outer)/root/dev/shm/data ]" 10 ||
        fail "the container did not start"
    CONTAINER=$(pgrep -P "$outer")
    CONTAINER_OUTER=$outer
    [ "$(awk '/^NSpid:/ { print $NF }' "/proc/$CONTAINER/status")" = 1 ] ||
        fail "the container's init is not pid 1 inside"
}
# stop_container: kills it and waits until it is reaped.
stop_container() {
    kill -KILL "$CONTAINER"
    wait "$CONTAINER_OUTER" 2>/dev/null
    wait_for "[ ! -e /proc/$CONTAINER ]" 10 || fail "pid $CONTAINER was not reaped"
}

# --- The dashboard -------------------------------------------------------------------------
container
pid=$CONTAINER
"$SHMWATCH" --pid "$pid" --json >"$SHMTEST_TMP/live.json" || fail "--pid $pid --json exited $?"
json_check "$SHMTEST_TMP/live.json" "[m['size_bytes'] for m in j['mounts']] == [64 << 20]" \
    "while it lives, --pid sees the container's 64 MiB tmpfs"
# Scans every 0.5 s: the wait below for a rescan that must not come is short.
tui_start 120 30 --pid "$pid" --interval 0.5
tui_wait "pid $pid " 10
tui_wait '/dev/shm .* 1M/64M' 10
tui_wait '^Budget .*shm 1M/64M' 10
stop_container
tui_wait "pid $pid (\\(.*\\) )?EXITED" 10
tui_wait "^process $pid exited at [0-9:]{8}: this is its last scan, no longer updated" 10
ok "the dashboard says that process $pid exited, in its title and status line"
tui_cap | grep -qE '/dev/shm .* 1M/64M' || { tui_dump; fail "the last scan's mount is no longer shown"; }
# The budget of the last scan, its shm the container's: the app's share
# (of the whole machine here) may have moved between scans before the exit.
budget=$(tui_cap | grep '^Budget ')
grep -q 'shm 1M/64M' <<<"$budget" || { tui_dump; fail "the budget line is not the last scan's: $budget"; }
grep -q 'limit 0B' <<<"$budget" && { tui_dump; fail "an empty budget is shown"; }
ok "the dashboard keeps the last scan's mount and budget"
# lost: what the screen no longer shows of the last scan, said on stdout (status 0), if anything.
lost() {
    local screen
    screen=$(tui_cap)
    grep -qE '/dev/shm .* 1M/64M' <<<"$screen" || { echo "the mount was replaced after the exit"; return 0; }
    grep -qE "^process $pid exited at" <<<"$screen" || { echo "the status line lost the exit"; return 0; }
    [ "$(grep '^Budget ' <<<"$screen")" = "$budget" ] || { echo "the budget line changed after the exit"; return 0; }
    return 1
}
# Two scan intervals and more: nothing is rescanned.
stays_false 'lost >"$SHMTEST_TMP/lost"' 1.2 || { tui_dump; fail "$(cat "$SHMTEST_TMP/lost")"; }
ok "for two scan intervals and more the dashboard keeps the last scan and the exit"
# r asks for no scan that would never come: it says why, and the exit stays.
tui_keys r
tui_wait "^no rescan: process $pid exited, and its last scan stays shown" 5
tui_wait "^process $pid exited at [0-9:]{8}: this is its last scan, no longer updated" 15
ok "r once the process has exited: no rescan, said; the exit shown again after it"
tui_quit

# The dashboard refuses a pid that is already gone before it takes the terminal.
rc=0
timeout 10 script -qec "$SHMWATCH --pid $pid" /dev/null >"$SHMTEST_TMP/out" 2>&1 </dev/null || rc=$?
grep -q "^shmwatch: cannot watch pid $pid: No such process" "$SHMTEST_TMP/out" ||
    fail "the dashboard on a missing pid: $(cat "$SHMTEST_TMP/out")"
ok "the dashboard on a pid that is gone: one line"

# --- One-shot and streams ------------------------------------------------------------------
for mode in --json --once --prometheus; do
    rc=0
    "$SHMWATCH" --pid "$pid" $mode >"$SHMTEST_TMP/out" 2>"$SHMTEST_TMP/err" || rc=$?
    assert_eq "$rc:$(cat "$SHMTEST_TMP/err")" "1:shmwatch: cannot watch pid $pid: No such process" \
        "$mode --pid of a process that has gone: status 1, one line"
    [ ! -s "$SHMTEST_TMP/out" ] || fail "$mode printed a snapshot of nothing: $(head -c 200 "$SHMTEST_TMP/out")"
done

# stream_start ARGS: shmwatch ARGS >stream 2>err in the background, STREAM its
# pid. Both files are emptied here, before the fork: a redirection empties
# them only in the child, and until then a wait on the stream would read an
# earlier run's lines as this one's and kill the container before this
# shmwatch has pinned it (it would then pin the pid's newcomer).
stream_start() {
    : >"$SHMTEST_TMP/stream"
    : >"$SHMTEST_TMP/err"
    "$SHMWATCH" "$@" >"$SHMTEST_TMP/stream" 2>"$SHMTEST_TMP/err" &
    STREAM=$!
}

# A stream ends when the process exits: what it printed stays, one line says why.
container
pid=$CONTAINER
stream_start --pid "$pid" --json --interval 0.2 --count 0
stream=$STREAM
wait_for "[ \$(wc -l <\"$SHMTEST_TMP/stream\") -ge 2 ]" 10 || fail "the stream printed nothing"
stop_container
rc=0
timeout 10 tail --pid="$stream" -f /dev/null || fail "the stream goes on after process $pid exited"
wait "$stream" || rc=$?
assert_eq "$rc:$(cat "$SHMTEST_TMP/err")" "1:shmwatch: cannot watch pid $pid: the process has exited" \
    "a --json stream ends with status 1 and one line when the process exits"
head -n 1 "$SHMTEST_TMP/stream" >"$SHMTEST_TMP/first.json"
json_check "$SHMTEST_TMP/first.json" "[m['size_bytes'] for m in j['mounts']] == [64 << 20]" \
    "the lines before are the container's"

# --- A newcomer on the same pid ------------------------------------------------------------
container
pid=$CONTAINER
stream_start --pid "$pid" --json --interval 3 --count 0
stream=$STREAM
# A first whole line: shmwatch has pinned the pid (its scans come after) and,
# as the check below shows, pinned it on the container, not yet killed.
wait_for "[ \$(wc -l <\"$SHMTEST_TMP/stream\") -ge 1 ]" 10 || fail "the stream printed nothing"
head -n 1 "$SHMTEST_TMP/stream" >"$SHMTEST_TMP/first.json"
json_check "$SHMTEST_TMP/first.json" "[m['used_bytes'] for m in j['mounts']] == [1 << 20]" \
    "the stream's first snapshot is the container's (its 1 MiB in /dev/shm)"
stop_container
pid_to_newcomer "$pid"
rc=0
timeout 10 tail --pid="$stream" -f /dev/null || fail "the stream goes on watching the newcomer on pid $pid"
wait "$stream" || rc=$?
assert_eq "$rc:$(cat "$SHMTEST_TMP/err")" \
    "1:shmwatch: cannot watch pid $pid: the process has exited (its pid now belongs to another process)" \
    "a stream pinned to pid $pid never watches the newcomer: status 1, one line"
assert_eq "$(wc -l <"$SHMTEST_TMP/stream")" 1 "only the container's snapshot was printed"
kill -KILL "$NEWCOMER"
wait "$NEWCOMER" 2>/dev/null

# The dashboard the same (scans every 5 s, so the newcomer comes first).
container
pid=$CONTAINER
mkdir -p "$SHMTEST_TMP/cfg"
printf 'gauge_interval: 5s\nscan_interval: 5s\n' >"$SHMTEST_TMP/cfg/slow.yaml"
tui_start 120 30 --pid "$pid" --config "$SHMTEST_TMP/cfg/slow.yaml"
tui_wait '/dev/shm .* 1M/64M' 10
stop_container
pid_to_newcomer "$pid"
tui_wait "^process $pid exited \(its pid is now another process's\) at [0-9:]{8}: this is its last scan" 15
tui_cap | grep -qE '/dev/shm .* 1M/64M' || { tui_dump; fail "the last scan's mount is no longer shown"; }
ok "the dashboard pinned to pid $pid says it is now another process's, and keeps the last scan"
tui_quit
