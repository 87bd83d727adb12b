#!/usr/bin/env bash
# The dashboard's events, for real, in tmux on a private 64 MiB tmpfs at
# /dev/shm: a holder killed by SIGBUS is told at once on the events line
# under the budget, in the critical colour (as the budget's CRITICAL
# verdict), with its one-line diagnosis and the fill of /dev/shm; e lists
# it on the events page. With --record DIR the dashboard writes the store
# `shmwatch record` writes (the header, snapshots with reason "interval",
# the exit event, a snapshot with reason "event" at once after it, start
# and stop), a second dashboard (or recorder) on DIR is refused with the
# store's one line before the terminal is touched, and quitting leaves
# every line of the store whole JSON, which `shmwatch why` reads: the
# holder's SIGBUS. --record keeps within the settings record_max_size and
# record_max_age (a 1 MiB store rotates and drops its oldest file), a bad
# one refused in one line. As nobody, the missing process events are said
# once.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need python3 setpriv
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

dir=$SHMTEST_TMP/store
# records FILTER: the store's records (FILTER a Python expression of r), one per line.
records() { store_records "$dir" "$1"; }

# --- As root, recording: the SIGBUS stands out, the store has it --------------------------
hold_new_file /dev/shm/torch_5151_1 $((1 << 20))
# A long scan interval: the snapshot after the death must come at once.
tui_start 120 40 --interval 30 --record "$dir"
tui_wait "holder +$HOLDER|$HOLDER .*python3" 15
ok "the dashboard shows the holder $HOLDER"
wait_for "[ -n \"\$(records \"r.get('reason') == 'interval' and any(p['pid'] == $HOLDER for p in r['processes'])\")\" ]" 15 ||
    fail "no interval snapshot showing the holder in the store"
ok "--record writes a snapshot with reason interval showing the holder"

# A second dashboard on the same store: refused in one line, before the terminal.
rc=0
script -qec "$(printf '%q ' "$SHMWATCH" --record "$dir")" /dev/null >"$SHMTEST_TMP/second.out" 2>&1 || rc=$?
tr -d '\r' <"$SHMTEST_TMP/second.out" | sed '/^$/d' >"$SHMTEST_TMP/second.txt"
assert_eq "$rc" 1 "a second dashboard recording into the same directory exits 1"
grep -q "being recorded by pid $TUI_PID" "$SHMTEST_TMP/second.txt" ||
    fail "the refusal does not name the first dashboard: $(cat -v "$SHMTEST_TMP/second.txt")"
assert_eq "$(wc -l <"$SHMTEST_TMP/second.txt")" 1 \
    "it says so in one line, the terminal untouched: $(cat -v "$SHMTEST_TMP/second.txt")"
rc=0
"$SHMWATCH" record --dir "$dir" 2>"$SHMTEST_TMP/rec2.err" || rc=$?
assert_eq "$rc:$(grep -c "being recorded by pid $TUI_PID" "$SHMTEST_TMP/rec2.err")" 1:1 \
    "shmwatch record on the dashboard's store is refused too"

kill -BUS "$HOLDER"
wait "$HOLDER" 2>/dev/null
re="^Events [0-9:]{8} holder $HOLDER \(python3\) died of SIGBUS: /dev/shm [0-9.]+ (of|KiB of) [0-9.]+ MiB"
tui_wait "$re" 10
ok "the events line tells the holder's SIGBUS with the fill of /dev/shm"
style=$(tui_style "holder $HOLDER \(python3\) died of SIGBUS")
crit=$(tui_style " CRITICAL | WARN | OK " || true)
budget_style=$(tui_style "^Budget " || true)
[ -n "$style" ] || fail "no style for the event line"
[ "$style" != "$budget_style" ] || { tui_dump; fail "the SIGBUS line is drawn as plain text ($style)"; }
echo "$style" | grep -qE "fg=(31|91|38;5;(1|9|160|196))|bg=(41|101)" ||
    { tui_dump; fail "the SIGBUS line is not in the critical colour: $style (verdict: $crit)"; }
ok "the SIGBUS line stands out in the critical colour ($style)"
tui_sane "the screen fits with the events line"

records "r.get('event') == 'exit' and r['pid'] == $HOLDER" >"$SHMTEST_TMP/exit.json"
json_check "$SHMTEST_TMP/exit.json" "j['cause'] == 'sigbus' and j['signal'] == 'SIGBUS' and j['role'] == 'holder'" \
    "the exit is recorded with its cause as it happens"
wait_for "[ -n \"\$(records \"r.get('reason') == 'event'\")\" ]" 10 ||
    fail "no snapshot taken at once after the death (the interval is 30 s)"
ok "a snapshot with reason event follows the death at once"

tui_keys e
tui_wait "^ ?Events: [0-9]+, newest first" 5
tui_wait "holder $HOLDER \(python3\) died of SIGBUS" 5
ok "e opens the events page with the SIGBUS"
tui_keys q
tui_gone "^ ?Events: [0-9]+, newest first" 5
tui_keys h
tui_wait "^ Help: every key" 5
tui_keys End
tui_wait "^ +e +the events page" 5
ok "the help screen lists e"
tui_keys q
tui_quit

# The store after quitting: the header first, every line whole, start and stop.
cat "$dir"/*.jsonl | head -n 1 >"$SHMTEST_TMP/header.json"
json_check "$SHMTEST_TMP/header.json" \
    "list(j)[:2] == ['recording', 'time'] and j['recording'] == 1 and j['interval_s'] == 30 and j['watch'] == 'host' and j['version']" \
    "the store's first line is the header"
cat "$dir"/*.jsonl | /usr/bin/python3 -c '
import json, sys
for n, line in enumerate(sys.stdin, 1):
    json.loads(line)
print(n)' >"$SHMTEST_TMP/n" || fail "a line of the store is not whole JSON"
ok "every one of the $(cat "$SHMTEST_TMP/n") lines of the store is whole JSON after quitting"
[ -n "$(records "r.get('event') == 'recorder' and r['what'] == 'start'")" ] || fail "no start record"
cat "$dir"/*.jsonl | tail -n 1 >"$SHMTEST_TMP/last.json"
json_check "$SHMTEST_TMP/last.json" "j['event'] == 'recorder' and j['what'] == 'stop'" \
    "the recording's last record says it stopped"
rc=0
"$SHMWATCH" why --dir "$dir" --since 1h >"$SHMTEST_TMP/why.out" 2>&1 || rc=$?
if ! grep -q "$HOLDER" "$SHMTEST_TMP/why.out" || ! grep -qi "SIGBUS\|Bus error" "$SHMTEST_TMP/why.out"; then
    fail "why on the dashboard's store does not tell the SIGBUS of $HOLDER: $(cat "$SHMTEST_TMP/why.out")"
fi
assert_eq "$rc" 4 "shmwatch why reads the dashboard's store: the SIGBUS of $HOLDER (status 4: something died)"
# Another dashboard may record there now.
tui_start 100 30 --record "$dir"
tui_wait "^Budget " 15
tui_quit
ok "the store is free again once the dashboard has quit"

# --record within the settings record_max_size and record_max_age: a 1 MiB
# store of 25 KB snapshots (64 segments) ten times a second rotates and
# drops its oldest file within seconds, and never holds more than 1 MiB;
# a bad limit is refused in one line before the terminal is touched.
scene_start --workers 2 --per-worker 32 --size 4K
cfg=$SHMTEST_TMP/limits.yaml
printf 'scan_interval: 100ms\nrecord_max_size: 1m\nrecord_max_age: 1h\n' >"$cfg"
small=$SHMTEST_TMP/small
tui_start 120 40 --config "$cfg" --record "$small"
tui_wait "^Budget " 15
wait_for "[ -n \"\$(ls '$small' 2>/dev/null | grep jsonl)\" ]" 15 || fail "--record wrote no file"
files=("$small"/*.jsonl)
wait_for "[ ! -e '${files[0]}' ]" 60 ||
    { tui_dump; fail "--record never dropped its first file: $(stat -c '%n %s' "$small"/*.jsonl)"; }
tui_quit
total=$(cat "$small"/*.jsonl | wc -c)
[ "$total" -le $((1 << 20)) ] || fail "the dashboard's store is $total bytes, over record_max_size 1m"
ok "--record with record_max_size 1m: rotated, dropped its oldest file, $total bytes kept"
scene_stop
printf 'record_max_size: 100k\n' >"$cfg"
rc=0
"$SHMWATCH" --config "$cfg" --record "$SHMTEST_TMP/never" </dev/null >"$SHMTEST_TMP/bad.out" 2>&1 || rc=$?
assert_eq "$rc:$(cat "$SHMTEST_TMP/bad.out")" "2:shmwatch: $cfg:1:18: record_max_size: 100k is out of range (at least 1m)" \
    "--record with a bad record_max_size: one line, status 2"
[ ! -e "$SHMTEST_TMP/never" ] || fail "a store was made with a bad record_max_size"

# --- Without --record, as nobody: the events still show, and why exits lack a cause ----
nobody_holder psm_0000cafe
HOLDER=$NOBODY_HOLDER
# shellcheck disable=SC2034 # tui_start (tui_lib.sh) reads it
TUI_PREFIX="setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all"
tui_start 120 40 --interval 0.5
tui_wait "^Events [0-9:]{8} process events are not seen" 10
ok "without the privilege, the missing process events are said"
n=$(tui_cap | grep -cE "process events are not seen" || true)
[ "$n" -le 2 ] || { tui_dump; fail "the missing privilege is said $n times"; }
tui_wait "$HOLDER" 10
kill -BUS "$HOLDER"
# On the events page: unprivileged, the dashboard cannot tell which of the
# machine's processes are another test's, whose exits in the same scan can
# fill the two rows of the events line.
tui_keys e
tui_wait "^ ?Events: [0-9]+, newest first" 5
tui_wait "holder $HOLDER \(python3\) exited, cause unknown" 10
ok "unprivileged, the holder's end is an event of cause unknown"
tui_keys q
tui_quit
