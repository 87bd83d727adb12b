# shellcheck shell=bash
# Helpers for the tests of shmwatch why on real recordings: a recorder
# (`shmwatch record`) started beside the scene and stopped cleanly, and
# waits on what its store holds. Source it after lib.sh:
#
#   record_start --interval 0.5          # RECORD_DIR, RECORD_PID, RECORD_ERR
#   record_wait "r.get('event') == 'exit' and r['pid'] == $P" 20 || fail ...
#   why_run --json                       # $WHY_OUT, $WHY_ERR, WHY_RC
#
# A shmwatch without `record` (an older build) skips the test loudly.

# record_need: the binary has the recorder.
record_need() {
    "$SHMWATCH" record --help >/dev/null 2>&1 || _lib_missing "shmwatch record (this build has no recorder)"
}

# record_start ARGS...: starts `shmwatch record --dir $RECORD_DIR ARGS` in
# the background and waits (at most 20 s) for its first snapshot.
record_start() {
    _lib_tmp
    RECORD_DIR=$SHMTEST_TMP/record
    RECORD_ERR=$SHMTEST_TMP/record.err
    # Not holding a torch job's stdin (torch_lib.sh's FIFO): its release is
    # that FIFO's last writer closing it.
    (
        [ -z "${TORCH_IN:-}" ] || exec {TORCH_IN}>&-
        exec "$SHMWATCH" record --dir "$RECORD_DIR" "$@" 2>"$RECORD_ERR"
    ) &
    RECORD_PID=$!
    on_exit "kill -TERM $RECORD_PID 2>/dev/null; wait $RECORD_PID 2>/dev/null; true"
    record_wait "r.get('schema') == 1" 20 || fail "the recorder wrote no snapshot: $(tail -n 3 "$RECORD_ERR")"
}

# record_has PYEXPR: some record r of the store makes PYEXPR true.
record_has() {
    [ -n "$(store_records "$RECORD_DIR" "$1")" ]
}

# record_last: the last snapshot of the store in one line: its mounts (path,
# containers) and segments (name, bytes, mount), for a failure's message.
record_last() {
    cat "$RECORD_DIR"/*.jsonl 2>/dev/null | /usr/bin/python3 -c '
import json, sys
last = None
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("schema") == 1:
        last = r
if last is None:
    print("no snapshot")
else:
    print("mounts:", [(m.get("path"), m.get("id"), [c.get("name") for c in m.get("containers") or []]) for m in last["mounts"]],
          "segments:", [(s.get("name"), s.get("alloc_bytes"), s.get("mount_id")) for s in last["segments"]][:20],
          "warnings:", last.get("warnings", [])[:5])'
}

# record_wait PYEXPR TIMEOUT: waits until record_has PYEXPR. The store is
# read again only when it has grown since the last read (_record_grew):
# its Python costs more than the rest of a poll, and a test waits on the
# recorder's intervals.
record_wait() {
    _RECORD_SIZES=
    wait_for "_record_grew && record_has \"$1\"" "${2:-20}"
}
_record_grew() {
    local sizes
    sizes=$(stat -c '%n %s' "$RECORD_DIR"/*.jsonl 2>/dev/null)
    [ "$sizes" != "$_RECORD_SIZES" ] || return 1
    _RECORD_SIZES=$sizes
}

# record_stop: SIGTERM, and the recorder's status must be 0.
record_stop() {
    kill -TERM "$RECORD_PID" 2>/dev/null
    local rc=0
    wait "$RECORD_PID" || rc=$?
    [ "$rc" = 0 ] || fail "the recorder exited $rc: $(tail -n 3 "$RECORD_ERR")"
}

# why_run ARGS...: shmwatch why on the test's store; WHY_OUT, WHY_ERR, WHY_RC.
why_run() {
    WHY_OUT=$SHMTEST_TMP/why.out
    WHY_ERR=$SHMTEST_TMP/why.err
    WHY_RC=0
    "$SHMWATCH" why --dir "$RECORD_DIR" "$@" >"$WHY_OUT" 2>"$WHY_ERR" || WHY_RC=$?
}
