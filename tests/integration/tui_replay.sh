#!/usr/bin/env bash
# shmwatch replay in tmux, on a recording this test makes in its private
# 64 MiB tmpfs: a store (doc/recording.md) whose snapshots are real
# `shmwatch --json` runs at three moments of a DataLoader scene (running;
# /dev/shm filled to the last page; after a worker was killed with a real
# SIGBUS), and the exit event of that worker between the last two. The
# dashboard opens at the newest snapshot with REPLAY and its recorded time in
# the title; [ steps back to the full /dev/shm (the gauge shows the
# snapshot's exact fill), then to the first; } jumps to the event (the status
# line names the worker and SIGBUS, the title the snapshot after it); g goes
# to a time typed as HH:MM:SS; an action key is refused in one line; an --all
# recording opens in the node view; a record cut short is named. Bad
# recordings and times: one line, status 1 (2 for a time that is none).
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

rec=$SHMTEST_TMP/recording
mkdir -p "$rec"
chmod 0700 "$rec"

# The next snapshot's second: each record's time is whole seconds, and the
# records of a recording come in time order.
last_second=
next_second() {
    # shellcheck disable=SC2016 # evaluated by wait_for
    wait_for '[ "$(date -u +%s)" != "$last_second" ]' 3 || fail "the clock does not move"
    # shellcheck disable=SC2034 # read by wait_for's eval
    last_second=$(date -u +%s)
}

# snapshot FILE: a real snapshot into FILE (as the recorder writes it: the
# schema-1 line and its reason).
snapshot() {
    next_second
    "$SHMWATCH" --json "${@:2}" >"$1.json" || fail "shmwatch --json ${*:2} exited $?"
    sed 's/}$/,"reason":"interval"}/' "$1.json" >"$1"
}
field() { # FILE EXPR: a value of the snapshot, by python
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
        "$1.json" "$2"
}
# The recorded time of a snapshot as the title shows it (local time).
shown_time() {
    date -d "$(field "$1" 'd["time"]')" '+%Y-%m-%d %H:%M:%S'
}

scene_start --workers 2 --per-worker 4 --size 1M
main=$(manifest_pids main)
worker=$(manifest_pids worker | head -n 1)
comm=$(cat "/proc/$worker/comm")

snapshot "$SHMTEST_TMP/a"
# /dev/shm filled to its last page, as batches outgrowing it do.
head -c 64M /dev/zero >/dev/shm/filler 2>/dev/null || true
snapshot "$SHMTEST_TMP/b"
full_pct=$(field "$SHMTEST_TMP/b" '"%.1f" % d["mounts"][0]["used_pct"]')
[ "${full_pct%.*}" -ge 99 ] || fail "/dev/shm is not full: ${full_pct}%"
kill -BUS "$worker"
wait_for "gone $worker" 10 || fail "worker $worker did not die of SIGBUS"
next_second
died=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
rm -f /dev/shm/filler
snapshot "$SHMTEST_TMP/c"

first=$(field "$SHMTEST_TMP/a" 'd["time"]')
name=$(date -u -d "$first" +%Y%m%dT%H%M%SZ).jsonl
{
    printf '{"recording":1,"time":"%s","hostname":"%s","interval_s":1,"watch":"host","version":"test"}\n' \
        "$first" "$(hostname)"
    cat "$SHMTEST_TMP/a" "$SHMTEST_TMP/b"
    printf '{"event":"exit","time":"%s","pid":%d,"comm":"%s","role":"worker","group":%d,"container":null,"container_name":null,"exit_code":null,"signal":"SIGBUS","core":false,"cause":"sigbus"}\n' \
        "$died" "$worker" "$comm" "$main"
    cat "$SHMTEST_TMP/c"
} >"$rec/$name"
chmod 0600 "$rec/$name"

pct_re() { # FILE: the gauge's percent of the snapshot, as an ERE
    local p
    p=$(field "$1" '"%.1f" % d["mounts"][0]["used_pct"]')
    echo "${p//./\\.}%"
}

tui_start 120 40 replay --dir "$rec"
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 10
ok "opens at the newest snapshot: REPLAY and its recorded time in the title"
tui_wait "^/dev/shm .* $(pct_re "$SHMTEST_TMP/c")" 5
tui_gone "worker $worker " 5
ok "after the death: the worker is gone, the gauge shows the snapshot's fill"

tui_keys '['
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/b") \(2/3\)" 5
tui_wait "^/dev/shm .* $(pct_re "$SHMTEST_TMP/b")" 5
tui_wait "worker $worker " 5
ok "[: one snapshot back, before the death: /dev/shm full at ${full_pct}%, worker $worker alive"
tui_sane "the full gauge fits"

tui_keys '['
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/a") \(1/3\)" 5
tui_keys '['
tui_wait "the first snapshot of the recording" 5
ok "[ again: the first snapshot, and no step before it"

tui_keys '}'
tui_wait "exit of pid $worker \($comm, worker of $main\): SIGBUS at" 5
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 5
ok "}: the worker's SIGBUS on the status line, the snapshot right after it"
tui_keys '{'
tui_wait "no earlier event in the recording" 5
ok "{: no event before it"

tui_keys d
tui_wait "replay: actions are off" 5
tui_keys K
tui_wait "replay: actions are off" 5
tui_keys r
tui_wait "replay: no rescan" 5
ok "action keys and rescan are refused in one line"

tui_keys g
tui_wait "^Go to " 5
tui_keys -l "$(date -d "$(field "$SHMTEST_TMP/b" 'd["time"]')" +%H:%M:%S)"
tui_keys Enter
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/b") \(2/3\)" 5
ok "g: a time of today typed as HH:MM:SS shows the snapshot of that time"
tui_keys g
tui_keys -l "yesterday"
tui_keys Enter
tui_wait "not a time: yesterday" 5
ok "g: a word that is no time is said"

tui_keys h
tui_wait "Replay \(shmwatch replay\)" 5
tui_keys NPage
tui_wait "^  \{ \} +the previous or next event" 5
tui_wait "^  g +go to a time" 5
tui_keys q
ok "the help page lists the replay's keys"
tui_quit

# --at: the snapshot at or before the time; RFC 3339 and -DUR.
tui_start 100 30 replay --dir "$rec" --at "$(field "$SHMTEST_TMP/b" 'd["time"]')"
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/b") \(2/3\)" 10
ok "--at RFC 3339: that snapshot"
tui_quit
ago=$(($(date +%s) - $(date -d "$(field "$SHMTEST_TMP/c" 'd["time"]')" +%s)))
tui_start 100 30 replay --dir "$rec" --at "-${ago}s"
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 10
ok "--at -${ago}s (ago): the snapshot of then"
tui_quit

# A recording cut in the middle of a record (the recorder died during a
# write): the damage is named with its file and offset, the rest shown.
cut=$SHMTEST_TMP/cut
mkdir -p "$cut"
chmod 0700 "$cut"
cp "$rec/$name" "$cut/$name"
head -c 300 "$SHMTEST_TMP/c" >>"$cut/$name"
tui_start 120 40 replay --dir "$cut"
tui_wait "$name: .*offset [0-9]+" 10
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 5
ok "a record cut short is named with its offset; the whole ones are shown"
tui_quit

# Errors: one line, status 1 (2 for what is no time).
expect_error() { # STATUS ERE ARGS...
    local want=$1 re=$2 out rc=0
    shift 2
    out=$("$SHMWATCH" replay "$@" 2>&1 </dev/null) || rc=$?
    [ "$rc" = "$want" ] || fail "replay $*: status $rc, not $want: $out"
    [ "$(wc -l <<<"$out")" = 1 ] || fail "replay $*: not one line: $out"
    grep -qE -- "$re" <<<"$out" || fail "replay $*: '$out' does not match /$re/"
    ok "replay $*: $out"
}
expect_error 1 "^shmwatch replay: cannot read the recording $SHMTEST_TMP/none: " --dir "$SHMTEST_TMP/none"
mkdir -p "$SHMTEST_TMP/empty"
expect_error 1 "^shmwatch replay: .*nothing recorded" --dir "$SHMTEST_TMP/empty"
expect_error 1 "^shmwatch replay: .*: no snapshot at .*: the recording has " --dir "$rec" \
    --at 2001-01-01T00:00:00Z
expect_error 1 "^shmwatch replay: .*: no snapshot at .*: the recording has " --dir "$rec" \
    --at -0s
expect_error 2 "^shmwatch replay: --at: 'soon' is not a time" --dir "$rec" --at soon
expect_error 2 "^shmwatch replay: the dashboard needs a terminal" --dir "$rec"

# The node view: a recording of --all opens in it, n switches.
nrec=$SHMTEST_TMP/node
mkdir -p "$nrec"
chmod 0700 "$nrec"
snapshot "$SHMTEST_TMP/n" --all
{
    printf '{"recording":1,"time":"%s","hostname":"x","interval_s":1,"watch":"all","version":"test"}\n' \
        "$(field "$SHMTEST_TMP/n" 'd["time"]')"
    cat "$SHMTEST_TMP/n"
} >"$nrec/$(date -u -d "$(field "$SHMTEST_TMP/n" 'd["time"]')" +%Y%m%dT%H%M%SZ).jsonl"
tui_start 120 40 replay --dir "$nrec"
tui_wait "node view .*REPLAY $(shown_time "$SHMTEST_TMP/n") \(1/1\)" 10
ok "an --all recording replays in the node view"
tui_keys n
tui_wait "own view .*REPLAY" 5
ok "n: the own view of it"
tui_quit
