#!/usr/bin/env bash
# OOM kills counted, for real: a 64 MiB memory cgroup (v1 on these machines,
# v2 where that is what the host has) holds a small survivor and a writer
# (oom_score_adj 1000: the OOM killer's first choice) that maps a file on a private
# 256 MiB tmpfs at /dev/shm and writes past the limit: the tmpfs has room, the
# cgroup has none, so the kernel OOM-kills the writer. shmwatch watching the
# survivor (--pid) must count the kill (cgroup.oom_kills), turn the verdict
# critical while it is new (a --json stream that began before it), show it on
# the dashboard as it happens, and report it afterwards as a past kill.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
need_root
need_unshare
need python3 timeout promtool
LIMIT=$((64 << 20))
oom_stage "shmwatch-oom-$$" "$LIMIT" 256m
. "$(dirname "$0")/tui_lib.sh"

grep -q ":$MEMCG_PATH\$" "/proc/$SURVIVOR/cgroup" || fail "the survivor is not in $MEMCG_PATH"
ok "a survivor in the ${LIMIT}-byte cgroup v$MEMCG_VERSION $MEMCG_PATH"

# Before any kill: the count is known and 0.
snap=$SHMTEST_TMP/oom-before.json
"$SHMWATCH" --json --pid "$SURVIVOR" >"$snap" || fail "shmwatch --json exited $?"
json_check "$snap" "j['cgroup'] is not None and j['cgroup']['path'] == '$MEMCG_PATH' and j['cgroup']['limit_bytes'] == $LIMIT" \
    "the survivor's cgroup and its limit" \
    "j['cgroup']['oom_kills'] == 0 and j['budget']['oom_kills_recent'] == 0 and j['budget']['verdict'] != 'critical'" \
    "no OOM kill yet: oom_kills 0, the verdict not critical"

# A stream (and the dashboard) that watch before the kill see it happen.
stream=$SHMTEST_TMP/oom-stream.json
"$SHMWATCH" --json --interval 0.3 --count 400 --pid "$SURVIVOR" >"$stream" &
STREAM=$!
on_exit "kill -TERM $STREAM 2>/dev/null; wait $STREAM 2>/dev/null"
tui_start 140 30 --interval 0.5 --pid "$SURVIVOR"
tui_wait 'Budget +(OK|WARN|CRITICAL) ' 15 # a first scan: the baseline of the count
wait_for "[ \$(wc -l <'$stream') -ge 2 ]" 15 || fail "the JSON stream did not start"

# The writer: maps a 192 MiB file on the tmpfs and writes every page at
# once (its go is given before it starts).
: >"$SHMTEST_TMP/go"
oom_writer 0 "$SHMTEST_TMP/go"
rc=0
wait "$WRITER" || rc=$?
assert_eq "$rc" 137 "the writer was killed by SIGKILL (the OOM killer), not let through"
grep -q "wrote it all" "$SHMTEST_TMP/writer.out" && fail "the writer wrote past the limit"
kill -0 "$SURVIVOR" 2>/dev/null || fail "the survivor was killed too"
if [ "$MEMCG_VERSION" = 1 ]; then
    kernel_count=$(awk '$1 == "oom_kill" { print $2 }' "$MEMCG_DIR/memory.oom_control")
else
    kernel_count=$(awk '$1 == "oom_kill" { print $2 }' "$MEMCG_DIR/memory.events")
fi
[ "${kernel_count:-0}" -ge 1 ] || fail "the kernel counted no OOM kill (oom_kill ${kernel_count:-missing})"
ok "the kernel counts $kernel_count OOM kill(s) in the cgroup"

# The stream: a snapshot after the kill counts it, says it is new, and is critical.
wait_for "grep -q '\"oom_kills\":[1-9]' '$stream'" 15 || fail "the stream never counted the kill"
seen=$(wc -l <"$stream")
wait_for "[ \$(wc -l <'$stream') -gt $seen ]" 5 || fail "the stream stopped after the snapshot that saw the kill"
kill -TERM "$STREAM" 2>/dev/null
wait "$STREAM" 2>/dev/null
first=$SHMTEST_TMP/oom-first.json
after=$SHMTEST_TMP/oom-after.json
# A stream carries event lines between its snapshots: those have an "event" key.
grep -m 1 -v '^{"event"' "$stream" >"$first"
grep -m 1 '"oom_kills":[1-9]' "$stream" >"$after"
json_check "$first" "j['cgroup']['oom_kills'] == 0 and j['budget']['verdict'] != 'critical'" \
    "the stream's first snapshot: no kill, not critical"
json_check "$after" "j['cgroup']['oom_kills'] == $kernel_count and j['budget']['oom_kills_recent'] >= 1 and j['budget']['verdict'] == 'critical'" \
    "the snapshot after the kill: oom_kills $kernel_count, new, verdict critical" \
    "'OOM killer has just ended' in j['budget']['advice'][0] and '-m, 64.0 MiB) was hit' in j['budget']['advice'][0]" \
    "the first advice says the OOM killer has just fired and that -m was hit" \
    "j['cgroup']['shmem_bytes'] >= 32 << 20" \
    "the killed writer's pages stay charged to the cgroup (shmem)"

# The dashboard marked it as it happened: the message, the budget line, the page.
tui_wait 'OOM KILL' 15
ok "the dashboard marks the new OOM kill"
tui_keys b
tui_wait "oom kills +$kernel_count +[0-9]+ just now: the OOM killer ended" 10
ok "the budget page says how many and that it was just now"
tui_keys q # closes the page
tui_gone 'just now: the OOM killer ended' 10
tui_quit

# A later single snapshot: the kill is in the past, so information, not critical.
"$SHMWATCH" --json --pid "$SURVIVOR" >"$snap" || fail "shmwatch --json exited $?"
json_check "$snap" "j['cgroup']['oom_kills'] == $kernel_count and j['budget']['oom_kills_recent'] == 0" \
    "a fresh snapshot counts the kill but cannot call it new" \
    "any('has had $kernel_count OOM kill' in a and 'was hit at least once' in a for a in j['budget']['advice'])" \
    "its advice says how many OOM kills the cgroup has had and that -m was hit"
"$SHMWATCH" --once --pid "$SURVIVOR" >"$SHMTEST_TMP/oom.txt" || fail "--once exited $?"
grep -q "^  oom kills $kernel_count (the memory limit was hit before)" "$SHMTEST_TMP/oom.txt" ||
    fail "the text budget lacks the count: $(grep -i oom "$SHMTEST_TMP/oom.txt")"
ok "the text budget line counts the kill"
"$SHMWATCH" --prometheus --pid "$SURVIVOR" >"$SHMTEST_TMP/oom.prom" || fail "--prometheus exited $?"
grep -qx "shmwatch_cgroup_oom_kills_total $kernel_count" "$SHMTEST_TMP/oom.prom" ||
    fail "no counter: $(grep oom "$SHMTEST_TMP/oom.prom")"
grep -qx "# TYPE shmwatch_cgroup_oom_kills_total counter" "$SHMTEST_TMP/oom.prom" ||
    fail "shmwatch_cgroup_oom_kills_total is not typed as a counter"
promtool check metrics <"$SHMTEST_TMP/oom.prom" || fail "promtool rejects the metrics"
ok "Prometheus: shmwatch_cgroup_oom_kills_total $kernel_count"
