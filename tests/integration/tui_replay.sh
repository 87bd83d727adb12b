#!/usr/bin/env bash
# shmwatch replay in tmux, on recordings this test makes in its private
# 64 MiB tmpfs.
#
# First a store written by a real `shmwatch record` while a DataLoader
# scene runs: /dev/shm is filled to its last page, a worker is killed with
# a real SIGBUS, the filler removed. Replayed: [ steps back to the last
# snapshot before the death (the full gauge, the worker alive, no death on
# the events line or the events page, e); } jumps to the death (its exit on
# the status line, the snapshot after it, the death on the events line
# under the budget in the live dashboard's words, with the fill of
# /dev/shm, and first on the events page, in the critical colour); { leaves
# it for the event before it; from the newest snapshot { comes back to it.
#
# Then a store assembled by hand, whose snapshots are real `shmwatch
# --json` runs at three moments of a DataLoader scene (running; /dev/shm
# filled to the last page; after a worker was killed with a real SIGBUS),
# and the exit event of that worker between the last two. The dashboard
# opens at the newest snapshot with REPLAY and its recorded time in
# the title; [ steps back to the full /dev/shm (the gauge shows the
# snapshot's exact fill), then to the first; } jumps to the event (the status
# line names the worker and SIGBUS, the title the snapshot after it); g goes
# to a time typed as HH:MM:SS (one after the recording says so; on a narrow
# screen its prompt's label gives way to what is typed); an action key, and
# the action log (this machine's, not the recording's), are refused in one line; an --all
# recording opens in the node view, each namespace a container row with its
# own details; a record cut short is named. Bad
# recordings and times: one line, status 1 (2 for a time that is none).
#
# Then a store made by hand of the fixture's snapshot twice and, between
# them, one event of each kind (an exit of each cause the words tell apart,
# a mount's coming and going): } steps through them, each told on the status
# line in its exact words and time (a kill in the critical colour, the rest
# in the warning's), with the snapshot after it in the title; { steps back.
# An event of a container names it (its name, else its id), a mount's too.
#
# Last a node-view recording (a real --all snapshot twice) with the mount,
# segments and fill events of a container between them: the status line
# names the container of each, as the live event line does, and none for
# an event of the host's mount.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

# --- A store of shmwatch record ------------------------------------------------------
live=$SHMTEST_TMP/recorded
lines() { cat "$live"/*.jsonl 2>/dev/null; }
records() { # FILTER: how many records (Python expression of r; T(r): its time) the store has
    lines | /usr/bin/python3 -c '
import datetime, json, sys
T = lambda r: datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
n = 0
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    n += bool(eval(sys.argv[1]))
print(n)' "$1"
}
has() { [ "$(records "$1")" -gt 0 ]; }

# A scene built with AddressSanitizer (the sanitizer build) would catch the
# SIGBUS itself and exit 1: the kernel's signal is the point here.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_sigbus=0 scene_start --workers 2 --per-worker 4 --size 1M
rmain=$(manifest_pids main)
rworker=$(manifest_pids worker | head -n 1)
rcomm=$(cat "/proc/$rworker/comm")
"$SHMWATCH" record --dir "$live" --interval 1 2>"$SHMTEST_TMP/record.err" &
REC=$!
on_exit "kill -KILL $REC 2>/dev/null; true"
wait_for "has \"r.get('schema') == 1 and any(p['pid'] == $rworker for p in r['processes'])\"" 20 ||
    { cat "$SHMTEST_TMP/record.err" >&2; fail "the recorder wrote no snapshot of the worker"; }
head -c 64M /dev/zero >/dev/shm/filler 2>/dev/null || true
wait_for "has \"r.get('schema') == 1 and r['mounts'][0]['used_pct'] >= 99 and any(p['pid'] == $rworker for p in r['processes'])\"" 20 ||
    fail "no recorded snapshot shows /dev/shm full with the worker alive"
kill -BUS "$rworker"
wait_for "has \"r.get('event') == 'exit' and r['pid'] == $rworker and r['cause'] == 'sigbus'\"" 10 ||
    { cat "$SHMTEST_TMP/record.err" >&2; fail "the worker's SIGBUS was not recorded"; }
died=$(lines | /usr/bin/python3 -c '
import datetime, json, sys
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError: # being written
        continue
    if r.get("event") == "exit" and r["pid"] == int(sys.argv[1]):
        print(datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp())' "$rworker")
[ -n "$died" ] || fail "no exit of the worker in the store"
wait_for "has \"r.get('reason') == 'event' and T(r) >= $died\"" 10 ||
    fail "no snapshot at once after the death (at $died)"
rm -f /dev/shm/filler
wait_for "has \"r.get('schema') == 1 and r['mounts'][0]['used_pct'] < 50\"" 20 ||
    fail "no recorded snapshot after the filler was removed"
kill -TERM "$REC"
rc=0
wait "$REC" || rc=$?
assert_eq "$rc" 0 "shmwatch record recorded the scene and the SIGBUS, and stopped on SIGTERM"

# Where the death lies among the records, in the order replay steps through
# them (time, then file, then place in it): the snapshots' count, the last
# one before the death (its place, time and fill), the one after it, and the
# events from the one before to the death and from the death to the last.
read -r nsnap kbefore tbefore pbefore tafter nfwd nback < <(/usr/bin/python3 - "$live" "$rworker" <<'PY'
import datetime, json, os, sys
d, pid = sys.argv[1], int(sys.argv[2])
recs = []
for fi, name in enumerate(sorted(f for f in os.listdir(d) if f.endswith(".jsonl"))):
    for li, line in enumerate(open(os.path.join(d, name))):
        r = json.loads(line)
        if "recording" in r:
            continue
        t = datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00"))
        recs.append((round(t.timestamp() * 1000), fi, li, r))
recs.sort(key=lambda x: x[:3])
snaps = [i for i, x in enumerate(recs) if "schema" in x[3]]
death = next(i for i, x in enumerate(recs) if x[3].get("event") == "exit" and x[3]["pid"] == pid)
before = max(i for i in snaps if i < death)
after = min(i for i in snaps if i > death)
events = lambda a, b: sum(1 for i in range(a, b) if "event" in recs[i][3])
print(len(snaps), snaps.index(before) + 1, recs[before][3]["time"],
      "%.1f" % recs[before][3]["mounts"][0]["used_pct"], recs[after][3]["time"],
      events(before + 1, death + 1), events(death, snaps[-1]))
PY
)
[ -n "$nback" ] || fail "cannot find the death among the records"
title() { # TIME K: the title's REPLAY part for the snapshot of TIME, K of the recording
    echo "REPLAY $(date -d "$1" '+%Y-%m-%d %H:%M:%S') \($2/$nsnap\)"
}
death_re="worker $rworker of main $rmain died of SIGBUS: /dev/shm [0-9.]+ of 64.0 MiB full"

tui_start 120 40 replay --dir "$live"
tui_wait "REPLAY .* \($nsnap/$nsnap\)" 10
# shellcheck disable=SC2046 # one [ per snapshot back
tui_keys $(printf '[ %.0s' $(seq $((nsnap - kbefore))))
tui_wait "$(title "$tbefore" "$kbefore")" 10
tui_wait "^/dev/shm .* ${pbefore//./\\.}%" 5
tui_wait "worker $rworker $rcomm" 5
tui_cap | grep -q "died of SIGBUS" && { tui_dump; fail "the death is told before it happened"; }
ok "[ x$((nsnap - kbefore)): the last snapshot before the death: /dev/shm full (${pbefore}%), worker $rworker alive, no death on the events line"
tui_keys e
tui_wait "^ ?Events recorded up to $(date -d "$tbefore" +%Y-%m-%d\ %H:%M:%S): [0-9]+, newest first" 5
tui_cap | grep -q "died of SIGBUS" && { tui_dump; fail "the events page lists the death before it happened"; }
ok "e: the events page lists the recording's events up to that moment, without the death"
tui_keys q
tui_gone "^ ?Events recorded up to" 5

# shellcheck disable=SC2046 # one } per event up to the death
tui_keys $(printf '} %.0s' $(seq "$nfwd"))
tui_wait "exit of pid $rworker \($rcomm, worker of $rmain\): SIGBUS at" 10
tui_wait "$(title "$tafter" $((kbefore + 1)))" 5
tui_wait "^Events [0-9:]{8} $death_re" 5
ok "} x$nfwd: the death on the status line, the snapshot after it, and on the events line under the budget in the dashboard's words"
tui_keys e
tui_wait "^ ?Events recorded up to .*: [0-9]+, newest first" 5
if [ "$(tui_row_of "$death_re")" != 1 ]; then
    tui_dump
    fail "the death is not the newest event on the events page"
fi
style=$(tui_style "$death_re")
echo "$style" | grep -qE "fg=(31|91|38;5;(1|9|160|196))|bg=(41|101)" ||
    { tui_dump; fail "the death is not in the critical colour on the events page: $style"; }
ok "e: the events page lists the death first, in the critical colour ($style)"
tui_keys q
tui_gone "^ ?Events recorded up to" 5
tui_keys '{'
tui_gone "SIGBUS at" 5
tui_gone "^Events [0-9:]{8} $death_re" 5
ok "{: the event before the death, which the events line does not yet tell"
tui_sane "the replay of a real recording fits the screen"
tui_quit
tui_start 120 40 replay --dir "$live"
tui_wait "REPLAY .* \($nsnap/$nsnap\)" 10
# shellcheck disable=SC2046 # one { per event back from the newest snapshot
tui_keys $(printf '{ %.0s' $(seq "$nback"))
tui_wait "exit of pid $rworker \($rcomm, worker of $rmain\): SIGBUS at" 10
tui_wait "^Events [0-9:]{8} $death_re" 5
ok "from the newest snapshot, { x$nback comes back to the death"
tui_quit
scene_stop

# --- A store assembled from snapshots -------------------------------------------------
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
tui_gone "worker $worker $comm" 5
ok "after the death: the worker is gone, the gauge shows the snapshot's fill"

tui_keys '['
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/b") \(2/3\)" 5
tui_wait "^/dev/shm .* $(pct_re "$SHMTEST_TMP/b")" 5
tui_wait "worker $worker $comm" 5
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
tui_keys L
tui_wait "replay: the action log is this machine's, not the recording's" 5
ok "action keys, rescan and the action log are refused in one line"

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
# A time long after the recording ended shows its last snapshot, and says so.
tui_keys g
tui_keys -l "2999-01-01T00:00:00Z"
tui_keys Enter
tui_wait "^after the recording: the snapshot of $(shown_time "$SHMTEST_TMP/c")" 5
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 5
ok "g: a time after the recording shows its last snapshot and says it is after it"
# On a narrow screen the label gives way: what is typed and the cursor show.
resize() { # W H
    TUI_W=$1
    TUI_H=$2
    tui resize-window -t tui -x "$1" -y "$2"
    wait_for '[ "$(tui display-message -p -t tui "#{pane_width}x#{pane_height}")" = "${TUI_W}x$TUI_H" ]' 5 ||
        fail "tmux did not resize to ${TUI_W}x$TUI_H"
}
resize 40 40
tui_keys g
tui_keys -l -- "-10m"
tui_wait '^Go to .*-10m_ *$' 5
tui_sane "the go-to prompt fits 40 columns"
tui_keys Escape
resize 120 40
ok "g on a narrow screen: the time typed and the cursor show"

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
# --at -DUR: half a second after the last snapshot, as long ago as that is
# when shmwatch starts (tmux's start alone can take seconds on a loaded
# machine): the wrapper turns AGO:EPOCH into -Ns, N the seconds since EPOCH.
cat >"$SHMTEST_TMP/ago" <<'AGO'
#!/bin/bash
args=()
for a; do
    case $a in AGO:*) a=-$(awk -v t="${a#AGO:}" -v now="$(date +%s.%N)" 'BEGIN { printf "%.3fs", now - t }') ;; esac
    args+=("$a")
done
exec "${args[@]}"
AGO
chmod +x "$SHMTEST_TMP/ago"
then=$(date -d "$(field "$SHMTEST_TMP/c" 'd["time"]')" +%s.%N)
TUI_PREFIX=$SHMTEST_TMP/ago tui_start 100 30 replay --dir "$rec" --at "AGO:$(awk -v t="$then" 'BEGIN { printf "%.3f", t + 0.5 }')"
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 10
ok "--at -DUR (ago): the snapshot of then"
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

# A snapshot damaged in the middle of a recording (half its line), with an
# exit between it and the one before: [ and ] step over it to the snapshot
# beyond, the damage named with its offset; { reaches the event whose
# snapshot it is, and the next { goes on from there rather than read it
# again.
mid=$SHMTEST_TMP/mid
mkdir -p "$mid"
chmod 0700 "$mid"
{
    head -n 1 "$rec/$name"
    cat "$SHMTEST_TMP/a"
    # the worker's exit, told between the two snapshots
    printf '{"event":"exit","time":"%s","pid":%d,"comm":"%s","role":"worker","group":%d,"container":null,"container_name":null,"exit_code":null,"signal":"SIGBUS","core":false,"cause":"sigbus"}\n' \
        "$(/usr/bin/python3 -c 'import datetime as D, sys
t = [D.datetime.fromisoformat(a.replace("Z", "+00:00")) for a in sys.argv[1:]]
print((t[0] + (t[1] - t[0]) / 2).strftime("%Y-%m-%dT%H:%M:%S.%f")[:23] + "Z")' \
            "$(field "$SHMTEST_TMP/a" 'd["time"]')" "$(field "$SHMTEST_TMP/b" 'd["time"]')")" \
        "$worker" "$comm" "$main"
    head -c "$(($(wc -c <"$SHMTEST_TMP/b") / 2))" "$SHMTEST_TMP/b"
    echo
    cat "$SHMTEST_TMP/c"
} >"$mid/$name"
chmod 0600 "$mid/$name"
tui_start 120 40 replay --dir "$mid"
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 10
tui_keys '['
tui_wait "$name: .*offset [0-9]+" 5
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/a") \(1/3\)" 5
ok "[ steps over a damaged snapshot, named with its offset, to the one before it"
tui_keys ']'
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 5
ok "] steps over it to the one after"
tui_keys ']'
tui_wait "the last snapshot of the recording" 5
tui_keys '{'
tui_wait "$name: .*offset [0-9]+" 5
tui_keys '{'
tui_wait "no earlier event in the recording" 5
ok "{ reaches the event of the damaged snapshot, and the next { goes on"
tui_quit

# The recording's file copied beside it under another name: each snapshot
# and event once, as from the one file.
copied=$SHMTEST_TMP/copied
mkdir -p "$copied"
chmod 0700 "$copied"
cp "$rec/$name" "$copied/$name"
cp "$rec/$name" "$copied/${name%.jsonl}-1.jsonl"
tui_start 120 40 replay --dir "$copied"
tui_wait "REPLAY $(shown_time "$SHMTEST_TMP/c") \(3/3\)" 10
tui_keys '{'
tui_wait "exit of pid $worker \($comm, worker of $main\): SIGBUS at" 5
tui_keys '{'
tui_wait "no earlier event in the recording" 5
ok "a file copied under another name: three snapshots and one exit, as from the one file"
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
# The time asked is said with a four-digit year, the year 0 as 0000.
TZ=UTC0 expect_error 1 "^shmwatch replay: .*: no snapshot at 0000-01-01 00:00:00: the recording has " \
    --dir "$rec" --at 0000-01-01T00:00:00Z
# -0s once now is past the recording's end: the last snapshot and twice the
# gap before it (a slow machine makes that gap seconds long).
b_t=$(date -d "$(field "$SHMTEST_TMP/b" 'd["time"]')" +%s)
c_t=$(date -d "$(field "$SHMTEST_TMP/c" 'd["time"]')" +%s)
rec_end=$((c_t + 2 * (c_t - b_t > 1 ? c_t - b_t : 1) + 2))
# shellcheck disable=SC2016 # evaluated by wait_for
wait_for '[ "$(date +%s)" -gt "$rec_end" ]' 120 || fail "the clock did not pass the recording's end"
expect_error 1 "^shmwatch replay: .*: no snapshot at .*: the recording has " --dir "$rec" \
    --at -0s
expect_error 2 "^shmwatch replay: --at: 'soon' is not a time" --dir "$rec" --at soon
expect_error 2 "^shmwatch replay: the dashboard needs a terminal" --dir "$rec"

# The node view: a recording of --all opens in it, each namespace of it a
# container row of its own (a mount namespace with a tmpfs of its own here),
# as live; n switches.
nrec=$SHMTEST_TMP/node
mkdir -p "$nrec"
chmod 0700 "$nrec"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
ns_holder nsr
nsr=$HOLDER
snapshot "$SHMTEST_TMP/n" --all
{
    printf '{"recording":1,"time":"%s","hostname":"x","interval_s":1,"watch":"all","version":"test"}\n' \
        "$(field "$SHMTEST_TMP/n" 'd["time"]')"
    cat "$SHMTEST_TMP/n"
} >"$nrec/$(date -u -d "$(field "$SHMTEST_TMP/n" 'd["time"]')" +%Y%m%dT%H%M%SZ).jsonl"
tui_start 120 40 replay --dir "$nrec"
tui_wait "node view .*REPLAY $(shown_time "$SHMTEST_TMP/n") \(1/1\)" 10
ok "an --all recording replays in the node view"
# --all shows every namespace of the machine (other tests' too): the filter
# narrows the tree to this one.
tui_keys '*' / "(pid $nsr)" Enter # every branch collapsed: one row per container
tui_select "container .*\(pid $nsr\)"
tui_keys Enter
tui_gone "The host: " 5
tui_wait "^ *pid +$nsr " 5
tui_keys q
ok "its namespaces replay as containers, each with its own details, not as the host"
tui_keys n
tui_wait "own view .*REPLAY" 5
ok "n: the own view of it"
tui_quit

# --- A store of each kind of event -------------------------------------------------
# The status line's words for each kind of event as } and { step to it: a
# store made by hand of two snapshots (the fixture's, as the recorder
# writes it) with, between them, one event of each kind, an exit of each
# cause the words tell apart, and a mount's coming and going. The times are
# made up, in order.
kinds=$SHMTEST_TMP/kinds
kfile=$kinds/20261205T235640Z.jsonl
mkdir -p "$kinds"
chmod 0700 "$kinds"
snap_at() { # TIME: the fixture's snapshot, recorded at TIME
    sed -e "s/\"time\":\"[^\"]*\"/\"time\":\"$1\"/" -e 's/}$/,"reason":"interval"}/' \
        "$FIXTURES/replay/scene.json" >>"$kfile"
}
ev_times=()
ev_colour=()
ev_words=()
t0=2026-12-05T23:56:40.000Z
t1=2026-12-05T23:56:50.000Z
printf '{"recording":1,"time":"%s","hostname":"x","interval_s":10,"watch":"host","version":"test"}\n' \
    "$t0" >"$kfile"
chmod 0600 "$kfile"
snap_at "$t0"
# Each event: its time, the colour of its line on the status line (critical
# for a kill, else warning, whatever a name in it says), the status line's
# words for it, and its record (the time a %s).
while IFS='|' read -r t colour words record; do
    ev_times+=("$t")
    ev_colour+=("$colour")
    ev_words+=("$words")
    # shellcheck disable=SC2059 # the record is the format
    printf "$record\n" "$t" >>"$kfile"
done <<'EVENTS'
2026-12-05T23:56:41.250Z|critical|OOM kill in cgroup /sys/fs/cgroup/system.slice/docker-4f2a.scope: 2, pid 4242 (python3) in trainer|{"event":"oom_kill","time":"%s","cgroup":"/sys/fs/cgroup/system.slice/docker-4f2a.scope","container":"4f2a","container_name":"trainer","kills":2,"victim":4242,"victim_comm":"python3"}
2026-12-05T23:56:41.500Z|critical|exit of pid 4245 (pt_data_worker, worker of 4243) in trainer: SIGKILL (OOM kill)|{"event":"exit","time":"%s","pid":4245,"comm":"pt_data_worker","role":"worker","group":4243,"container":"4f2a","container_name":"trainer","exit_code":null,"signal":"SIGKILL","core":false,"cause":"oom_kill"}
2026-12-05T23:56:42.500Z|warning|mount /dev/shm appeared in 4f2a|{"event":"mount","time":"%s","mount_id":"0:77","mount":"/dev/shm","container":"4f2a","change":"appeared"}
2026-12-05T23:56:43.750Z|warning|segments on /dev/shm in 4f2a: 3 created, 1 removed|{"event":"segments","time":"%s","mount_id":"0:77","mount":"/dev/shm","container":"4f2a","created":3,"removed":1,"interval_s":10}
2026-12-05T23:56:44.000Z|warning|/dev/shm in 4f2a at 91.2%: warn|{"event":"fill","time":"%s","mount_id":"0:77","mount":"/dev/shm","container":"4f2a","used_bytes":61203251,"size_bytes":67108864,"used_pct":91.2,"level":"warn"}
2026-12-05T23:56:45.125Z|warning|recorder events_off: no process events: not in the initial network namespace|{"event":"recorder","time":"%s","what":"events_off","detail":"no process events: not in the initial network namespace"}
2026-12-05T23:56:46.375Z|warning|exit of pid 4243 (python3, main) in trainer: exit code 3|{"event":"exit","time":"%s","pid":4243,"comm":"python3","role":"main","group":null,"container":"4f2a","container_name":"trainer","exit_code":3,"signal":null,"core":false,"cause":"exit"}
2026-12-05T23:56:47.500Z|warning|mount /dev/shm gone in 4f2a|{"event":"mount","time":"%s","mount_id":"0:77","mount":"/dev/shm","container":"4f2a","change":"gone"}
2026-12-05T23:56:48.625Z|warning|exit of pid 4244 (sleep): cause unknown|{"event":"exit","time":"%s","pid":4244,"comm":"sleep","role":null,"group":null,"container":null,"container_name":null,"exit_code":null,"signal":null,"core":false,"cause":"unknown"}
2026-12-05T23:56:48.875Z|warning|mount /mnt/x: SIGNS appeared|{"event":"mount","time":"%s","mount_id":"0:78","mount":"/mnt/x: SIGNS","container":null,"change":"appeared"}
EVENTS
snap_at "$t1"

ere() { # TEXT: an ERE that matches TEXT
    # shellcheck disable=SC2001,SC2016 # each character of the class, escaped
    sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$1"
}
critical_re="fg=(31|91|38;5;(1|9|160|196))|bg=(41|101)"
said() { # K: until the status line is event K's words and local time, alone on its line
    tui_wait "^$(ere "${ev_words[$1]} at $(date -d "${ev_times[$1]}" +%H:%M:%S)")\$" 5
}
replay_title() { # TIME K: the title's REPLAY part for the snapshot of TIME, K of 2
    echo "REPLAY $(date -d "$1" '+%Y-%m-%d %H:%M:%S') \($2/2\)"
}

tui_start 120 40 replay --dir "$kinds"
tui_wait "$(replay_title "$t1" 2)" 10
tui_keys '['
tui_wait "$(replay_title "$t0" 1)" 5
for k in "${!ev_words[@]}"; do
    tui_keys '}'
    said "$k"
    style=$(tui_style "^$(ere "${ev_words[$k]}")") # while the message stands (some seconds)
    if [ "${ev_colour[$k]}" = critical ]; then
        grep -qE "$critical_re" <<<"$style" || { tui_dump; fail "not in the critical colour: $style"; }
    elif grep -qE "$critical_re" <<<"$style" || ! grep -qE "fg=(33|93)" <<<"$style"; then
        tui_dump
        fail "not in the warning colour: $style"
    fi
    tui_wait "$(replay_title "$t1" 2)" 5
    ok "}: ${ev_words[$k]} (${ev_colour[$k]}: $style), with the snapshot after it"
done
tui_keys '}'
tui_wait "no later event in the recording" 5
tui_keys '{'
said $((${#ev_words[@]} - 2))
ok "{: back to ${ev_words[-2]}"
tui_sane "the replay of each kind of event fits the screen"
tui_quit

# --- Events of a node-view recording -----------------------------------------------
nev=$SHMTEST_TMP/node-events
mkdir -p "$nev"
chmod 0700 "$nev"
nt=$(date -d "$(field "$SHMTEST_TMP/n" 'd["time"]')" +%s)
after() { # SECONDS: the time that long after the --all snapshot's
    date -u -d "@$((nt + $1))" +%Y-%m-%dT%H:%M:%S.000Z
}
nfile=$nev/$(date -u -d "@$nt" +%Y%m%dT%H%M%SZ).jsonl
{
    printf '{"recording":1,"time":"%s","hostname":"x","interval_s":1,"watch":"all","version":"test"}\n' \
        "$(field "$SHMTEST_TMP/n" 'd["time"]')"
    cat "$SHMTEST_TMP/n"
} >"$nfile"
ev_times=()
ev_words=()
while IFS='|' read -r dt words record; do
    ev_times+=("$(after "$dt")")
    ev_words+=("$words")
    # shellcheck disable=SC2059 # the record is the format
    printf "$record\n" "$(after "$dt")" >>"$nfile"
done <<'EVENTS'
1|mount /dev/shm appeared in trainer-b|{"event":"mount","time":"%s","mount_id":"0:88","mount":"/dev/shm","container":"9c1e","container_name":"trainer-b","change":"appeared"}
2|segments on /dev/shm in trainer-b: 2 created, 0 removed|{"event":"segments","time":"%s","mount_id":"0:88","mount":"/dev/shm","container":"9c1e","container_name":"trainer-b","created":2,"removed":0,"interval_s":1}
3|/dev/shm in trainer-b at 85.0%: warn|{"event":"fill","time":"%s","mount_id":"0:88","mount":"/dev/shm","container":"9c1e","container_name":"trainer-b","used_bytes":57042534,"size_bytes":67108864,"used_pct":85.0,"level":"warn"}
4|segments on /dev/shm: 1 created, 1 removed|{"event":"segments","time":"%s","mount_id":"0:45","mount":"/dev/shm","container":null,"container_name":null,"created":1,"removed":1,"interval_s":1}
5|mount /dev/shm gone in trainer-b|{"event":"mount","time":"%s","mount_id":"0:88","mount":"/dev/shm","container":"9c1e","container_name":"trainer-b","change":"gone"}
EVENTS
sed -e "s/\"time\":\"[^\"]*\"/\"time\":\"$(after 6)\"/" "$SHMTEST_TMP/n" >>"$nfile"
tui_start 120 40 replay --dir "$nev"
tui_wait "node view .*REPLAY $(date -d "$(after 6)" '+%Y-%m-%d %H:%M:%S') \(2/2\)" 10
tui_keys '['
tui_wait "node view .*REPLAY $(shown_time "$SHMTEST_TMP/n") \(1/2\)" 5
for k in "${!ev_words[@]}"; do
    tui_keys '}'
    said "$k"
    ok "} (node view): ${ev_words[$k]}"
done
tui_sane "the replay of a node view's events fits the screen"
tui_quit
