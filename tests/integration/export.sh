#!/usr/bin/env bash
# Streams and exports: NDJSON that ends cleanly when its reader goes or on
# SIGTERM, Prometheus text that promtool accepts, and a --prometheus-file that
# a reader never sees half-written.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need promtool timeout
test_ns 64m -- "$@"

scene_start --workers 2 --per-worker 4 --orphans 2 --evil

# NDJSON: the reader leaves after one line; shmwatch must end by itself, status 0.
timeout 10 bash -c '"$1" --json --interval 0.1 --count 0 | head -n 1 >"$2"; exit "${PIPESTATUS[0]}"' \
    _ "$SHMWATCH" "$SHMTEST_TMP/one.json"
rc=$?
[ "$rc" -ne 124 ] || fail "shmwatch kept running after its reader closed the pipe"
assert_eq "$rc" 0 "a closed pipe ends the stream with status 0"
json_check "$SHMTEST_TMP/one.json" "j['schema'] == 1 and j['mounts'][0]['size_known'] is True and j['mounts'][0]['listed'] is True" \
    "the line read is a whole JSON object; the mount's size is known and it was listed"

# SIGTERM ends a stream cleanly, after whole lines only.
"$SHMWATCH" --json --interval 0.2 >"$SHMTEST_TMP/stream.ndjson" &
pid=$!
wait_for '[ "$(wc -l <"$SHMTEST_TMP/stream.ndjson")" -ge 2 ]' 10 || fail "the stream wrote nothing"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq "$rc" 0 "SIGTERM ends the stream with status 0"
/usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$SHMTEST_TMP/stream.ndjson" ||
    fail "a line of the stream is not JSON"
ok "every streamed line is a JSON object"

# Prometheus: promtool's linter accepts the exposition; the figures are right.
"$SHMWATCH" --prometheus >"$SHMTEST_TMP/metrics.prom" || fail "--prometheus exited $?"
promtool check metrics <"$SHMTEST_TMP/metrics.prom" || fail "promtool rejects the metrics"
ok "promtool check metrics accepts the output"
grep -q '^shmwatch_mount_size_bytes{mount="/dev/shm"} 67108864$' "$SHMTEST_TMP/metrics.prom" ||
    fail "mount size metric missing"
grep -q '^shmwatch_segments{mount="/dev/shm",state="orphan",kind="torch"} 2$' "$SHMTEST_TMP/metrics.prom" ||
    fail "orphan segment count missing"
grep -q '^shmwatch_segments{mount="/dev/shm",state="hidden",kind="torch"} 6$' "$SHMTEST_TMP/metrics.prom" ||
    fail "hidden segment count missing"
grep -q "^shmwatch_group_workers{main_pid=\"$(manifest_pids main)\"} 2$" "$SHMTEST_TMP/metrics.prom" ||
    fail "group workers metric missing"
ok "metrics carry the scene's figures"

# --prometheus-file: written atomically; a reader looping meanwhile only ever
# sees complete files (the last line is always the last metric).
out=$SHMTEST_TMP/textfile/shmwatch.prom
mkdir -p "$(dirname "$out")"
"$SHMWATCH" --prometheus-file "$out" --interval 0.05 --count 60 &
writer=$!
reads=0
torn=0
while kill -0 "$writer" 2>/dev/null; do
    if [ -f "$out" ]; then
        last=$(tail -n 1 "$out")
        reads=$((reads + 1))
        case "$last" in shmwatch_scan_denied_processes\ *) ;; *) torn=$((torn + 1)) ;; esac
    fi
done
wait "$writer" || fail "--prometheus-file exited $?"
[ "$reads" -gt 10 ] || fail "the reader only managed $reads reads"
assert_eq "$torn" 0 "a reader looping over $reads reads never saw a half-written file"
promtool check metrics <"$out" || fail "promtool rejects the file"
ok "the textfile passes promtool"
[ -z "$(ls "$(dirname "$out")" | grep -v '^shmwatch.prom$')" ] || fail "temporary files were left behind"
ok "no temporary file left behind"

# A rewrite keeps the file's mode and group (chmod 600, chgrp: a textfile
# kept from other users stays so); a new file is made 0644 (umask 022).
chmod 600 "$out"
chgrp 12345 "$out"
(umask 022 && "$SHMWATCH" --prometheus-file "$out" --count 1) || fail "--prometheus-file --count 1 exited $?"
assert_eq "$(stat -c '%a %u %g' "$out")" "600 0 12345" "a rewritten --prometheus-file keeps its mode and group"
rm -f "$out"
(umask 022 && "$SHMWATCH" --prometheus-file "$out" --count 1) || fail "--prometheus-file --count 1 exited $?"
assert_eq "$(stat -c '%a' "$out")" 644 "a new --prometheus-file is made 0644"

# --count without --interval: the documented default of one write every 15 s
# (--help, the man page), not a refusal. Each write is a new file (a new
# inode) renamed into place: none within 2 s, and SIGTERM ends the wait.
rm -f "$out"
"$SHMWATCH" --prometheus-file "$out" --count 2 2>"$SHMTEST_TMP/err" &
writer=$!
wait_for '[ -s "$out" ]' 10 || fail "--prometheus-file --count 2 wrote nothing: $(cat "$SHMTEST_TMP/err")"
ino=$(stat -c %i "$out")
if ! stays_false 'gone "$writer" || [ "$(stat -c %i "$out")" != "$ino" ]' 2; then
    gone "$writer" && { wait "$writer"; fail "--prometheus-file --count 2 ended early with status $?: $(cat "$SHMTEST_TMP/err")"; }
    fail "--prometheus-file --count 2 without --interval wrote again within 2 s"
fi
ok "--prometheus-file --count 2 without --interval waits longer than 2 s"
kill -TERM "$writer"
rc=0
wait "$writer" || rc=$?
assert_eq "$rc" 0 "and SIGTERM ends it with status 0"

# A mount whose size cannot be read nor its directory listed (--pid of a
# root process, watched as nobody: its root is out of reach): JSON keeps its
# integers at 0 and says size_known and listed false; Prometheus has no size,
# used, avail, unattributed, named or orphan sample for it rather than a
# false 0, and promtool still accepts it.
sleep 60 &
rootproc=$!
on_exit "kill $rootproc 2>/dev/null"
"${NOBODY[@]}" "$SHMWATCH" --json --pid "$rootproc" >"$SHMTEST_TMP/unknown.json" ||
    fail "--json of an unreadable mount exited $?"
json_check "$SHMTEST_TMP/unknown.json" "[(m['path'], m['size_known'], m['listed'], m['size_bytes'], m['used_bytes'], m['avail_bytes'], m['unattributed_bytes'], m['named_bytes']) for m in j['mounts']] == [('/dev/shm', False, False, 0, 0, 0, 0, 0)] and type(j['mounts'][0]['size_bytes']) is int and any(w.startswith('cannot read the size of /dev/shm: ') for w in j['warnings'])" \
    "JSON: an unreadable mount has size_known and listed false and integer zeros"
"${NOBODY[@]}" "$SHMWATCH" --prometheus --pid "$rootproc" >"$SHMTEST_TMP/unknown.prom" ||
    fail "--prometheus of an unreadable mount exited $?"
promtool check metrics <"$SHMTEST_TMP/unknown.prom" || fail "promtool rejects the metrics of an unreadable mount"
for metric in size used avail unattributed named orphan; do
    if grep "^shmwatch_mount_${metric}_bytes{" "$SHMTEST_TMP/unknown.prom"; then
        fail "Prometheus has a $metric sample for a mount whose size or listing is unknown"
    fi
done
grep -q '^shmwatch_mount_hidden_bytes{mount="/dev/shm"} 0$' "$SHMTEST_TMP/unknown.prom" ||
    fail "the scan's own figures of the unreadable mount are missing"
ok "Prometheus: no size, used, avail, unattributed, named or orphan sample for an unreadable mount"
kill "$rootproc"

# The alert rules shipped for the guide load in Prometheus.
promtool check rules "$SRCDIR/config/deploy/prometheus-alerts.yaml" >/dev/null ||
    fail "promtool rejects config/deploy/prometheus-alerts.yaml"
ok "the example alert rules pass promtool check rules"
scene_stop
