#!/usr/bin/env bash
# A real OOM kill as events: a 64 MiB memory cgroup (v1 here, v2 where the
# host has it) holds a survivor and a writer that maps a file on a private
# 256 MiB tmpfs at /dev/shm. The writer first writes 8 MiB and waits, so that
# a --json --interval stream watching the survivor's namespaces (--pid) knows
# it as a holder; then it writes past the limit and the kernel OOM-kills it.
# The stream must tell an exit of the writer with signal SIGKILL and cause
# oom_kill, and an oom_kill event of the cgroup naming it as the victim,
# counted once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
need_root
need_unshare
need python3 timeout
LIMIT=$((64 << 20))
oom_stage "shmwatch-evoom-$$" "$LIMIT" 256m

stream=$SHMTEST_TMP/oom-events.jsonl
err=$SHMTEST_TMP/oom-events.err
"$SHMWATCH" --json --interval 0.3 --pid "$SURVIVOR" >"$stream" 2>"$err" &
STREAM=$!
on_exit "kill -TERM $STREAM 2>/dev/null; wait $STREAM 2>/dev/null; true"
# events EXPR: the event lines of $stream for which the Python EXPR over e holds.
events() { stream_events "$stream" "$1"; }

go=$SHMTEST_TMP/go
oom_writer 8 "$go"
wait_for "grep -q '\"pid\":$WRITER,' '$stream'" 20 ||
    { cat "$err" >&2; fail "the stream never showed the writer as a process"; }
ok "the stream knows the writer (pid $WRITER) as a holder"
: >"$go"
rc=0
wait "$WRITER" || rc=$?
assert_eq "$rc" 137 "the writer was killed by SIGKILL (the OOM killer)"
grep -q "wrote it all" "$SHMTEST_TMP/writer.out" && fail "the writer wrote past the limit"

wait_for "[ -n \"\$(events \"e['event'] == 'exit' and e['pid'] == $WRITER\")\" ]" 10 ||
    { cat "$err" >&2; fail "no exit event for the writer"; }
events "e['event'] == 'exit' and e['pid'] == $WRITER" >"$SHMTEST_TMP/exit.json"
json_check "$SHMTEST_TMP/exit.json" \
    "j['signal'] == 'SIGKILL' and j['cause'] == 'oom_kill' and j['role'] == 'holder'" \
    "the writer's exit: SIGKILL, cause oom_kill"
wait_for "[ -n \"\$(events \"e['event'] == 'oom_kill'\")\" ]" 10 || fail "no oom_kill event"
events "e['event'] == 'oom_kill'" >"$SHMTEST_TMP/oom.json"
[ "$(wc -l <"$SHMTEST_TMP/oom.json")" = 1 ] || fail "the OOM kill was told $(wc -l <"$SHMTEST_TMP/oom.json") times"
json_check "$SHMTEST_TMP/oom.json" \
    "j['victim'] == $WRITER and j['victim_comm'] == 'python3' and j['kills'] >= 1 and j['cgroup'] == '$MEMCG_PATH'" \
    "an oom_kill event of the cgroup $MEMCG_PATH, the writer its victim, told once"
