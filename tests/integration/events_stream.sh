#!/usr/bin/env bash
# Events in a --json --interval stream, for real, on a private 64 MiB tmpfs
# at /dev/shm: a holder killed by SIGBUS is an exit event with its signal,
# cause sigbus and role holder (the kernel's process connector, as root);
# the same seen without privilege (as nobody) is an exit of cause unknown,
# with the reason said in an events_off line just before it; names created
# and removed are counted per interval; a tmpfs mounted at /run/shm and
# unmounted again appears and goes; the fill crossing warn (80 %) and
# critical (95 %) and back is told each time. Snapshot lines stay schema 1.
# A --prometheus-file exporter counts the deaths by signal and role.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need python3 setpriv
test_ns 64m -- "$@"

stream=$SHMTEST_TMP/stream.jsonl
err=$SHMTEST_TMP/stream.err
# events FILTER: the event lines of the stream that FILTER (a Python
# expression of e) keeps, one per line.
# events EXPR: the event lines of $stream for which the Python EXPR over e holds.
events() { stream_events "$stream" "$1"; }
snapshots() { grep -c '"schema":1' "$stream" 2>/dev/null || echo 0; }


# --- As root: the kernel's exit ---------------------------------------------------------
hold_new_file /dev/shm/torch_4242_1 $((1 << 20))
"$SHMWATCH" --json --interval 0.3 >"$stream" 2>"$err" &
STREAM=$!
on_exit "kill -TERM $STREAM 2>/dev/null; wait $STREAM 2>/dev/null; true"
wait_for "grep -q '\"pid\":$HOLDER,' '$stream'" 20 || fail "the stream never showed the holder"
kill -BUS "$HOLDER"
wait "$HOLDER" 2>/dev/null
wait_for "[ -n \"\$(events \"e['event'] == 'exit' and e['pid'] == $HOLDER\")\" ]" 10 ||
    { cat "$err" >&2; fail "no exit event for the holder killed by SIGBUS"; }
line=$(events "e['event'] == 'exit' and e['pid'] == $HOLDER")
echo "$line" >"$SHMTEST_TMP/exit.json"
json_check "$SHMTEST_TMP/exit.json" \
    "j['signal'] == 'SIGBUS' and j['cause'] == 'sigbus' and j['role'] == 'holder' and j['comm'] == 'python3' and j['exit_code'] is None and j['group'] is None and j['container'] is None" \
    "the holder's SIGBUS: an exit event, signal SIGBUS, cause sigbus, role holder" \
    "list(j)[:2] == ['event', 'time'] and j['time'].endswith('Z')" \
    "its kind and time come first, the time in UTC"
[ "$(events "e['event'] == 'exit' and e['pid'] == $HOLDER" | wc -l)" = 1 ] ||
    fail "the exit was told twice (by the kernel and again as gone)"
ok "the exit is told once"
grep -q 'process events are not seen' "$err" && fail "process events said missing as root: $(cat "$err")"

# --- Churn: names created and removed, counted per interval ------------------------------
for i in 1 2 3 4 5; do : >"/dev/shm/churn-$i"; done
rm -f /dev/shm/churn-1 /dev/shm/churn-2
count_churn() {
    events "e['event'] == 'segments' and e['mount'] == '/dev/shm'" | /usr/bin/python3 -c '
import json, sys
c = r = 0
for l in sys.stdin:
    e = json.loads(l); c += e["created"]; r += e["removed"]
print(c, r)'
}
wait_for "[ \"\$(count_churn)\" = '5 2' ]" 10 || fail "churn counted as '$(count_churn)', expected '5 2'"
ok "5 names created and 2 removed on /dev/shm are counted in segments events"
events "e['event'] == 'segments'" | head -n 1 >"$SHMTEST_TMP/seg.json"
json_check "$SHMTEST_TMP/seg.json" "j['interval_s'] > 0 and j['mount_id'] and j['container'] is None" \
    "a segments line names its mount and interval"
rm -f /dev/shm/churn-*

# --- A mount appearing and going -----------------------------------------------------------
# /run is this namespace's own tmpfs (the host's is hidden, not touched): /run/shm
# is made on it, then a tmpfs mounted there, then unmounted.
mount -t tmpfs -o size=1m tmpfs /run
mkdir /run/shm
mount -t tmpfs -o size=8m tmpfs /run/shm
wait_for "[ -n \"\$(events \"e['event'] == 'mount' and e['mount'] == '/run/shm' and e['change'] == 'appeared'\")\" ]" 10 ||
    fail "no mount event for /run/shm appearing"
ok "a tmpfs mounted at /run/shm appears"
umount /run/shm
wait_for "[ -n \"\$(events \"e['event'] == 'mount' and e['mount'] == '/run/shm' and e['change'] == 'gone'\")\" ]" 10 ||
    fail "no mount event for /run/shm going"
ok "and goes when unmounted"

# --- Fill levels -------------------------------------------------------------------------------
fill_events() { events "e['event'] == 'fill' and e['mount'] == '/dev/shm'" | /usr/bin/python3 -c '
import json, sys
print(" ".join(json.loads(l)["level"] for l in sys.stdin))'; }
head -c $((54 << 20)) /dev/zero >/dev/shm/fill-a # 55 of 64 MiB with the holder's: 86 %
wait_for "[ \"\$(fill_events)\" = warn ]" 10 || fail "fill levels '$(fill_events)', expected 'warn'"
head -c $((8 << 20)) /dev/zero >/dev/shm/fill-b # 63 MiB: 98 %
wait_for "[ \"\$(fill_events)\" = 'warn critical' ]" 10 ||
    fail "fill levels '$(fill_events)', expected 'warn critical'"
rm -f /dev/shm/fill-a /dev/shm/fill-b
wait_for "[ \"\$(fill_events)\" = 'warn critical ok' ]" 10 ||
    fail "fill levels '$(fill_events)', expected 'warn critical ok'"
events "e['event'] == 'fill' and e['level'] == 'critical'" >"$SHMTEST_TMP/fill.json"
json_check "$SHMTEST_TMP/fill.json" "j['used_pct'] >= 95 and j['size_bytes'] == 64 << 20 and j['used_bytes'] > 60 << 20" \
    "the critical crossing carries the fill"
ok "the fill crossing warn, critical and back to ok is told each time"

kill -TERM "$STREAM"
wait "$STREAM"
assert_eq "$?" 0 "the stream ends with status 0 on SIGTERM"
/usr/bin/python3 - "$stream" <<'PY' || fail "a line of the stream is not a snapshot or an event"
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    assert ("schema" in j) != ("event" in j), line[:200]
    if "schema" in j:
        assert j["schema"] == 1 and "reason" not in j, line[:200]
PY
ok "every line is a schema-1 snapshot (as before) or an event"

# --- The exporter counts deaths ---------------------------------------------------------------
hold_new_file /dev/shm/torch_4343_1 $((1 << 20))
prom=$SHMTEST_TMP/textfile/shmwatch.prom
mkdir -p "$(dirname "$prom")"
"$SHMWATCH" --prometheus-file "$prom" --interval 0.3 &
EXPORTER=$!
on_exit "kill -TERM $EXPORTER 2>/dev/null; wait $EXPORTER 2>/dev/null; true"
# Two files written: the second after a scan that knows the holder.
wait_for "[ -f '$prom' ]" 15 || fail "the exporter wrote nothing"
first=$(stat -c %i "$prom")
wait_for "[ \"\$(stat -c %i '$prom')\" != $first ]" 15 || fail "the exporter wrote only once"
kill -BUS "$HOLDER"
want='shmwatch_process_deaths_total{signal="SIGBUS",role="holder",container=""} 1'
wait_for "grep -qxF '$want' '$prom'" 10 || fail "the exporter does not count the death: $(grep deaths "$prom")"
ok "the exporter counts the holder's death: $want"
if command -v promtool >/dev/null; then
    promtool check metrics <"$prom" || fail "promtool rejects the file"
    ok "the file with the counter passes promtool"
fi
kill -TERM "$EXPORTER"
wait "$EXPORTER" || fail "the exporter ended with status $?"

# --- Without privilege: cause unknown, and why --------------------------------------------
: >"$stream"
chmod 0666 "$stream"
nobody_holder psm_0000beef
NOBODY=$NOBODY_HOLDER
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
    "$SHMWATCH" --json --interval 0.3 >"$stream" 2>"$err" &
STREAM=$!
on_exit "kill -TERM $STREAM 2>/dev/null; wait $STREAM 2>/dev/null; true"
wait_for "grep -q '\"pid\":$NOBODY,' '$stream'" 20 || { cat "$err" >&2; fail "the unprivileged stream never showed its holder"; }
kill -BUS "$NOBODY"
wait_for "[ -n \"\$(events \"e['event'] == 'exit' and e['pid'] == $NOBODY\")\" ]" 10 ||
    fail "no exit event for the unprivileged holder"
events "e['event'] == 'exit' and e['pid'] == $NOBODY" >"$SHMTEST_TMP/exit2.json"
json_check "$SHMTEST_TMP/exit2.json" \
    "j['cause'] == 'unknown' and j['signal'] is None and j['exit_code'] is None and j['role'] == 'holder'" \
    "without privilege the exit is told from the scans: cause unknown, no signal"
events "e['event'] == 'recorder' and e['what'] == 'events_off'" >"$SHMTEST_TMP/off.json"
json_check "$SHMTEST_TMP/off.json" \
    "'process events are not seen' in j['detail'] and 'CAP_NET_ADMIN' in j['detail'] and j['detail'].endswith('exits are told from the scans, cause unknown')" \
    "the reason is said in an events_off line of the stream"
# Exits of other processes this user cannot place (other tests' beside
# this one) may come between: every exit is after the line.
/usr/bin/python3 - "$stream" "$NOBODY" <<'PY' || fail "the events_off line does not come before the exits it explains"
import json, sys
kinds = [(j.get("event"), j.get("pid")) for j in map(json.loads, open(sys.argv[1])) if "event" in j]
off = kinds.index(("recorder", None))
exits = [i for i, k in enumerate(kinds) if k[0] == "exit"]
assert ("exit", int(sys.argv[2])) in kinds and exits and off < exits[0], kinds
PY
ok "before the exits it leaves without a cause"
assert_eq "$(cat "$err")" "" "the stream's stderr stays quiet"
