#!/usr/bin/env bash
# shmwatch record, for real, on a private 64 MiB tmpfs at /dev/shm: it
# writes a store (a header, snapshots with reason "interval", a start
# event), tells a holder's SIGBUS as an exit event at once followed by a
# snapshot with reason "event" (also after a death while a scan reads), and
# so a worker's born after the last snapshot, as its main's worker's,
# refuses a second recorder on the same
# directory naming the first one's pid, and on SIGTERM finishes its record,
# says "stop" and exits 0, every line of the store whole JSON; so does
# SIGHUP. With --pid it
# ends (status 1, a stop record saying why) when that process exits. The
# store's limits come from the configuration (record_max_size, with which it
# rotates and drops its oldest files as with --max-size; --max-size over
# it; record_max_age, with which it drops a file older than the age, and
# --max-age over it), and a bad one is refused in one line. Bad command
# lines are refused with one line.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need python3
test_ns 64m -- "$@"

dir=$SHMTEST_TMP/store
err=$SHMTEST_TMP/record.err
lines() { cat "$dir"/*.jsonl 2>/dev/null; }
# records FILTER: the store's records (FILTER a Python expression of r), one per line.
records() { store_records "$dir" "$1"; }

python3 -c '
import os, time
fd = os.open("/dev/shm/torch_777_1", os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 1 << 20)
time.sleep(300)' &
HOLDER=$!
on_exit "kill -KILL $HOLDER 2>/dev/null; true"
wait_for "[ -e /dev/shm/torch_777_1 ]" 15 || fail "the holder did not start"

# A long interval: the snapshot after the death must come at once, not at the next one.
"$SHMWATCH" record --dir "$dir" --interval 30 2>"$err" &
REC=$!
on_exit "kill -KILL $REC 2>/dev/null; true"
wait_for "[ -n \"\$(records \"r.get('reason') == 'interval' and any(p['pid'] == $HOLDER for p in r['processes'])\")\" ]" 20 ||
    { cat "$err" >&2; fail "no interval snapshot showing the holder"; }
ok "an interval snapshot in the store shows the holder"
[ "$(stat -c %a "$dir")" = 700 ] || fail "the store's directory is $(stat -c %a "$dir"), not 700"
for f in "$dir"/*.jsonl; do
    [ "$(stat -c %a "$f")" = 600 ] || fail "$f is $(stat -c %a "$f"), not 600"
done
ok "the store is its owner's only (0700, files 0600)"
lines | head -n 1 >"$SHMTEST_TMP/header.json"
json_check "$SHMTEST_TMP/header.json" \
    "list(j)[:2] == ['recording', 'time'] and j['recording'] == 1 and j['interval_s'] == 30 and j['watch'] == 'host' and j['version']" \
    "the first line is the header"
records "r.get('event') == 'recorder' and r['what'] == 'start'" | grep -q . || fail "no start event"
ok "the recorder said it started"

rc=0
"$SHMWATCH" record --dir "$dir" 2>"$SHMTEST_TMP/second.err" || rc=$?
assert_eq "$rc" 1 "a second recorder on the same directory exits 1"
grep -q "being recorded by pid $REC" "$SHMTEST_TMP/second.err" ||
    fail "the refusal does not name the first recorder: $(cat "$SHMTEST_TMP/second.err")"
assert_eq "$(wc -l <"$SHMTEST_TMP/second.err")" 1 "it says so in one line: $(cat "$SHMTEST_TMP/second.err")"

kill -BUS "$HOLDER"
wait_for "[ -n \"\$(records \"r.get('event') == 'exit' and r['pid'] == $HOLDER\")\" ]" 10 ||
    { cat "$err" >&2; fail "no exit event in the store"; }
records "r.get('event') == 'exit' and r['pid'] == $HOLDER" >"$SHMTEST_TMP/exit.json"
json_check "$SHMTEST_TMP/exit.json" "j['cause'] == 'sigbus' and j['signal'] == 'SIGBUS' and j['role'] == 'holder'" \
    "the holder's SIGBUS is recorded as it happens"
wait_for "[ -n \"\$(records \"r.get('reason') == 'event'\")\" ]" 10 ||
    fail "no snapshot taken at once after the death (the interval is 30 s)"
ok "a snapshot with reason event follows the death at once"

# A worker born and ended between two snapshots (a DataLoader whose first
# batches fill /dev/shm dies so, seconds after its start): no snapshot knew
# it when the kernel told its exit. Its SIGBUS takes a snapshot at once,
# which shows it a zombie its main forked, and its exit is told as that
# main's worker's; why names it.
scene_start --workers 2 --per-worker 2 --size 4096 --modes named,fd --zombies 1 --zombie-signal 7
main=$(awk '$1 == "main" { print $2 }' "$MANIFEST")
zombie=$(awk '$1 == "zombie" { print $2 }' "$MANIFEST")
[ -n "$zombie" ] && grep -q '^State:.Z' "/proc/$zombie/status" ||
    fail "the scene's worker did not end: $(cat "$MANIFEST")"
wait_for "[ -n \"\$(records \"r.get('event') == 'exit' and r['pid'] == $zombie\")\" ]" 10 ||
    { cat "$err" >&2; fail "no exit event in the store for the worker no snapshot knew"; }
records "r.get('event') == 'exit' and r['pid'] == $zombie" >"$SHMTEST_TMP/exit-late.json"
json_check "$SHMTEST_TMP/exit-late.json" \
    "j['cause'] == 'sigbus' and j['signal'] == 'SIGBUS' and j['role'] == 'worker' and j['group'] == $main" \
    "the SIGBUS of a worker born after the last snapshot is told as main $main's worker's"
wait_for "[ -n \"\$(records \"r.get('reason') == 'event' and any(p['pid'] == $zombie and p['role'] == 'zombie' for p in r['processes'])\")\" ]" 10 ||
    fail "no snapshot taken at once after that SIGBUS (the interval is 30 s)"
ok "a snapshot taken at once shows it a zombie of main $main"
"$SHMWATCH" why --dir "$dir" --json >"$SHMTEST_TMP/why-late.json" 2>"$SHMTEST_TMP/why-late.err" || true
json_check "$SHMTEST_TMP/why-late.json" \
    "[d['role'] for d in j['deaths'] if d['pid'] == $zombie and d['signal'] == 'SIGBUS'] == ['worker']" \
    "why names the worker's SIGBUS"

kill -TERM "$REC"
rc=0
wait "$REC" || rc=$?
assert_eq "$rc" 0 "SIGTERM ends the recorder with status 0"
lines | tail -n 1 >"$SHMTEST_TMP/last.json"
json_check "$SHMTEST_TMP/last.json" "j['event'] == 'recorder' and j['what'] == 'stop'" \
    "its last record says it stopped"
lines | /usr/bin/python3 -c '
import json, sys
for n, line in enumerate(sys.stdin, 1):
    json.loads(line)
print(n)' >"$SHMTEST_TMP/n" || fail "a line of the store is not whole JSON"
ok "every one of the $(cat "$SHMTEST_TMP/n") lines of the store is whole JSON"
[ -s "$err" ] && grep -v 'process events' "$err" | grep -q . && fail "the recorder said: $(cat "$err")"

# SIGHUP (the session or terminal it ran in closed) ends it as SIGTERM does:
# a stop record last, status 0.
dirh=$SHMTEST_TMP/store-hup
"$SHMWATCH" record --dir "$dirh" --interval 0.2 2>"$SHMTEST_TMP/hup.err" &
REC=$!
on_exit "kill -KILL $REC 2>/dev/null; true"
wait_for "store_records '$dirh' \"r.get('schema') == 1\" | grep -q ." 15 ||
    { cat "$SHMTEST_TMP/hup.err" >&2; fail "the recorder for SIGHUP wrote no snapshot"; }
kill -HUP "$REC"
rc=0
wait "$REC" || rc=$?
assert_eq "$rc" 0 "SIGHUP ends the recorder with status 0"
tail -q -n 1 "$(ls "$dirh"/*.jsonl | tail -n 1)" >"$SHMTEST_TMP/hup-last.json"
json_check "$SHMTEST_TMP/hup-last.json" "j['event'] == 'recorder' and j['what'] == 'stop'" \
    "after SIGHUP its last record says it stopped"

# --pid: when the watched process exits there is nothing of its namespaces
# left to record: a stop record saying so, status 1, one line.
unshare -m -p -f --mount-proc --propagation private bash -c '
    mount -t tmpfs -o size=16m tmpfs /dev/shm && : >/dev/shm/data && exec sleep 300' \
    </dev/null >/dev/null 2>&1 &
OUTER=$!
on_exit "kill -KILL $OUTER 2>/dev/null; true"
wait_for "[ -n \"\$(pgrep -P $OUTER)\" ] && [ -e /proc/\$(pgrep -P $OUTER)/root/dev/shm/data ]" 10 ||
    fail "the container did not start"
CTR=$(pgrep -P "$OUTER")
dir2=$SHMTEST_TMP/store-pid
"$SHMWATCH" record --dir "$dir2" --pid "$CTR" --interval 0.3 2>"$SHMTEST_TMP/pid.err" &
REC=$!
on_exit "kill -KILL $REC 2>/dev/null; true"
wait_for "[ \"\$(cat '$dir2'/*.jsonl 2>/dev/null | grep -c '\"schema\":1')\" -ge 1 ]" 15 ||
    fail "the --pid recorder wrote no snapshot"
kill -KILL "$CTR"
rc=0
timeout 15 tail --pid="$REC" -f /dev/null || fail "the --pid recorder goes on after its process exited"
wait "$REC" || rc=$?
assert_eq "$rc:$(cat "$SHMTEST_TMP/pid.err")" "1:shmwatch record: cannot watch pid $CTR: the process has exited" \
    "record --pid ends with status 1 and one line when its process exits"
tail -n 1 "$dir2"/*.jsonl >"$SHMTEST_TMP/pid-last.json"
json_check "$SHMTEST_TMP/pid-last.json" \
    "j['event'] == 'recorder' and j['what'] == 'stop' and j['detail'] == 'cannot watch pid $CTR: the process has exited'" \
    "its last record says why it stopped"
head -n 1 "$dir2"/*.jsonl >"$SHMTEST_TMP/pid-header.json"
json_check "$SHMTEST_TMP/pid-header.json" "j['watch'] == 'pid $CTR'" "its header names the watched pid"

# A death while a scan reads: that scan's snapshot began before it, so
# another is due at once. The hooked build SIGKILLs the holder of a mount
# namespace's segment as the second scan's node view reaches it.
# death_in_scan DIR: that scene, recorded into DIR. Returns 0 when a
# snapshot with reason event follows the death at once; 2 when the second
# scan was itself a death's own snapshot, which by design no other follows
# (at most one per interval: a holder of another test died first, as the
# node view sees every namespace of the machine); fails otherwise.
death_in_scan() {
    local dir=$1 victim rec died in_scan
    unshare -m --propagation private sh -c 'mount -t tmpfs -o size=4m tmpfs /dev/shm && exec python3 -c "
import os, time
fd = os.open(\"/dev/shm/victim_seg\", os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 1 << 16)
time.sleep(300)"' </dev/null >/dev/null 2>&1 &
    victim=$!
    on_exit "kill -KILL $victim 2>/dev/null; true"
    wait_for "[ \"\$(cat /proc/$victim/comm 2>/dev/null)\" = python3 ] && [ -e /proc/$victim/root/dev/shm/victim_seg ]" 15 ||
        fail "the namespace's holder did not start"
    SHMWATCH_TEST_KILL_MEMBER=mountinfo:$victim:2 "$SHMWATCH_HOOKED" record --all --dir "$dir" --interval 2 \
        2>"$SHMTEST_TMP/scan.err" &
    rec=$!
    on_exit "kill -KILL $rec 2>/dev/null; true"
    died=
    wait_for "died=\$(store_records '$dir' \"r.get('event') == 'exit' and r['pid'] == $victim\" | cut -c1-400) && [ -n \"\$died\" ]" 30 ||
        { cat "$SHMTEST_TMP/scan.err" >&2; fail "the death during the scan was not recorded"; }
    died=$(/usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[1])["time"])' "$died")
    store_records "$dir" "r.get('schema') == 1 and r['time'] < '$died' and any(p['pid'] == $victim for p in r['processes'])" | grep -q . ||
        fail "no snapshot before the death showed the holder"
    # The snapshot whose scan the death came in: the last one begun before it.
    in_scan=$(store_records "$dir" "r.get('schema') == 1 and r['time'] < '$died'" | tail -n 1 |
        /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["reason"])')
    local rc=0
    wait_for "store_records '$dir' \"r.get('reason') == 'event' and r['time'] >= '$died' and not any(p['pid'] == $victim for p in r['processes'])\" | grep -q ." 10 ||
        rc=1
    kill -TERM "$rec"
    wait "$rec" || true
    [ "$rc" = 0 ] && return 0
    [ "$in_scan" = event ] && return 2
    fail "no snapshot at once after a death during a scan (at $died): $(store_records "$dir" "r.get('schema') == 1" | cut -c1-120)"
}
for try in 1 2 3; do
    rc=0
    death_in_scan "$SHMTEST_TMP/store-scan-$try" || rc=$?
    [ "$rc" = 2 ] || break
done
[ "$rc" = 0 ] || fail "three tries, and each death came in a death's own snapshot"
ok "a death while a scan reads is followed at once by a snapshot with reason event"

# The store's limits from the configuration, record_max_size and
# record_max_age, which --max-size and --max-age override. 64 segments make
# a snapshot of some 25 KB: at 20 snapshots a second a 1 MiB store rotates
# (a file's share of a limit below 2 MiB is half of it) and drops its
# oldest file within seconds.
scene_start --workers 2 --per-worker 32 --size 4K
cfg=$SHMTEST_TMP/limits.yaml
printf 'record_max_size: 1m\nrecord_max_age: 1h\n' >"$cfg"
sizes() { stat -c %s "$1"/*.jsonl 2>/dev/null; }
# limited DIR ARGS...: records into DIR with ARGS until its first file has
# been dropped (the store rotated and went over its size), then stops it.
limited() {
    local d=$1 first
    shift
    "$SHMWATCH" record --dir "$d" --interval 0.05 "$@" 2>"$SHMTEST_TMP/limited.err" &
    REC=$!
    on_exit "kill -KILL $REC 2>/dev/null; true"
    wait_for "[ -n \"\$(sizes '$d')\" ]" 15 || fail "record $* wrote no file"
    local files=("$d"/*.jsonl)
    first=${files[0]}
    wait_for "[ ! -e '$first' ]" 60 ||
        { cat "$SHMTEST_TMP/limited.err" >&2; fail "record $* never dropped its first file: $(sizes "$d" | tr '\n' ' ')"; }
    kill -TERM "$REC"
    local rc=0
    wait "$REC" || rc=$?
    assert_eq "$rc" 0 "record $*: rotated, dropped its oldest file, stopped"
}
limited "$SHMTEST_TMP/by-config" --config "$cfg"
total=$(sizes "$SHMTEST_TMP/by-config" | awk '{ t += $1 } END { print t }')
[ "$total" -le $((1 << 20)) ] || fail "the store is $total bytes, over record_max_size 1m"
sizes "$SHMTEST_TMP/by-config" | awk '$1 > 512 * 1024 { exit 1 }' ||
    fail "a file passed its share (512 KiB) of record_max_size 1m: $(sizes "$SHMTEST_TMP/by-config" | tr '\n' ' ')"
ok "record_max_size 1m from the configuration: the store keeps $total bytes in files of at most 512 KiB"
limited "$SHMTEST_TMP/by-flag" --max-size 1m
total=$(sizes "$SHMTEST_TMP/by-flag" | awk '{ t += $1 } END { print t }')
[ "$total" -le $((1 << 20)) ] || fail "the store is $total bytes, over --max-size 1m"
ok "--max-size 1m does the same: $total bytes"
# The flag over the file: 2m, whose files take 1 MiB each.
limited "$SHMTEST_TMP/flag-over" --config "$cfg" --max-size 2m
sizes "$SHMTEST_TMP/flag-over" | awk '$1 > 600 * 1024 { big = 1 } END { exit !big }' ||
    fail "--max-size 2m did not override record_max_size 1m: $(sizes "$SHMTEST_TMP/flag-over" | tr '\n' ' ')"
ok "--max-size 2m overrides the file's record_max_size 1m (files of up to 1 MiB)"
scene_stop

# record_max_age from the configuration, and --max-age over it. A store whose
# two oldest files (named, as the store names them, for the time of their
# first record) began 3 and 2 hours ago, copies of a real one's file. Past an
# age of an hour the oldest is dropped at the first write; the next one stays,
# its later records may lie within the hour. With --max-age 5h over the
# file's 1h both stay.
old3=$(date -u -d '-3 hours' +%Y%m%dT%H%M%SZ).jsonl
old2=$(date -u -d '-2 hours' +%Y%m%dT%H%M%SZ).jsonl
template=$(ls "$SHMTEST_TMP"/by-config/*.jsonl | head -n 1)
aged_store() { # DIR: a store of the two old files
    mkdir -m 700 "$1"
    cp -p "$template" "$1/$old3"
    cp -p "$template" "$1/$old2"
}
# own_snapshot DIR: a file of DIR but the old two holds a snapshot.
own_snapshot() {
    local f
    for f in "$1"/*.jsonl; do
        case ${f##*/} in "$old3" | "$old2") continue ;; esac
        grep -qs '"schema":1' "$f" && return 0
    done
    return 1
}
# recorded DIR ARGS...: records into DIR with ARGS until its own file holds a
# snapshot, then stops it.
recorded() {
    local d=$1
    shift
    "$SHMWATCH" record --dir "$d" --interval 0.2 "$@" 2>"$SHMTEST_TMP/aged.err" &
    REC=$!
    on_exit "kill -KILL $REC 2>/dev/null; true"
    wait_for "own_snapshot '$d'" 15 ||
        fail "record $* wrote no snapshot: $(cat "$SHMTEST_TMP/aged.err")"
    kill -TERM "$REC"
    local rc=0
    wait "$REC" || rc=$?
    [ "$rc" -eq 0 ] || fail "record $* did not stop well (status $rc): $(tail -n 3 "$SHMTEST_TMP/aged.err")"
}
printf 'record_max_age: 1h\n' >"$SHMTEST_TMP/age.yaml"
aged_store "$SHMTEST_TMP/aged"
recorded "$SHMTEST_TMP/aged" --config "$SHMTEST_TMP/age.yaml"
[ -e "$SHMTEST_TMP/aged/$old3" ] &&
    fail "record_max_age 1h kept the file begun 3 hours ago: $(ls "$SHMTEST_TMP/aged")"
[ -e "$SHMTEST_TMP/aged/$old2" ] ||
    fail "record_max_age 1h dropped the file begun 2 hours ago: $(ls "$SHMTEST_TMP/aged")"
ok "record_max_age 1h from the configuration: the file begun 3 hours ago dropped, the next one kept"
aged_store "$SHMTEST_TMP/aged-flag"
recorded "$SHMTEST_TMP/aged-flag" --config "$SHMTEST_TMP/age.yaml" --max-age 5h
assert_eq "$(ls "$SHMTEST_TMP/aged-flag/$old3" "$SHMTEST_TMP/aged-flag/$old2" 2>/dev/null | wc -l)" 2 \
    "--max-age 5h overrides the file's record_max_age 1h: both old files kept"

# A bad limit in the configuration: one line naming the file, status 2,
# nothing recorded.
bad_limit() { # YAML-LINE EXPECTED-MESSAGE
    printf '%s\n' "$1" >"$SHMTEST_TMP/bad.yaml"
    local rc=0 key=${1%%:*}
    "$SHMWATCH" record --dir "$SHMTEST_TMP/never" --config "$SHMTEST_TMP/bad.yaml" \
        2>"$SHMTEST_TMP/bad.err" || rc=$?
    assert_eq "$rc:$(cat "$SHMTEST_TMP/bad.err")" "2:shmwatch record: $SHMTEST_TMP/bad.yaml:1:$((${#key} + 3)): $2" \
        "record with '$1' in its configuration exits 2 with one line"
    [ ! -e "$SHMTEST_TMP/never" ] || fail "a store was made with '$1'"
}
bad_limit "record_max_size: 1k" "record_max_size: 1k is out of range (at least 1m)"
bad_limit "record_max_size: lots" "record_max_size: expected a size such as 256m or 2g, got 'lots'"
bad_limit "record_max_age: 30s" "record_max_age: 30s is out of range (1m to 3650d)"

# Bad command lines: one line, status 2.
bad() { # EXPECTED-TEXT ARGS...
    local want=$1 rc=0
    shift
    "$SHMWATCH" record "$@" >"$SHMTEST_TMP/bad.out" 2>"$SHMTEST_TMP/bad.err" || rc=$?
    assert_eq "$rc" 2 "record $* exits 2"
    [ "$(wc -l <"$SHMTEST_TMP/bad.err")" = 1 ] && grep -q -- "$want" "$SHMTEST_TMP/bad.err" ||
        fail "record $*: $(cat "$SHMTEST_TMP/bad.err")"
}
bad "--all and --pid exclude each other" --all --pid 1 --dir "$dir"
bad "--interval: 'x' is not a duration" --interval x
bad "--max-size: 1k is out of range (at least 1m)" --max-size 1k
bad "--max-age: 10 is out of range (1m to 3650d)" --max-age 10
bad "--max-size: expected a size such as 256m or 2g, got 'lots'" --max-size lots
bad "unexpected argument 'extra'" extra
bad "unknown option '--json'" --json
