#!/usr/bin/env bash
# Events in the node view (--all): an emulated container (a mount namespace
# of its own with a tmpfs at /dev/shm, in a memory cgroup named as Docker
# names a container's) starting is a mount event that names it; a holder
# inside it killed by SIGBUS is an exit event naming the container; the
# container ending is its mount going.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need python3 nsenter od
test_ns 64m -- "$@"

stream=$SHMTEST_TMP/node-events.jsonl
# events EXPR: the event lines of $stream written since the container
# started (line $since on) for which the Python EXPR over e holds. Tests
# beside this one make and end tmpfs mounts and processes all along: a
# device number or a pid of this test's may have been another's before.
since=1
events() { stream_events <(tail -n "+$since" "$stream") "$1"; }
# stuck WHAT: fails with WHAT, the stream's events of this test's container
# and holder, and the stream's errors: what it did tell instead.
stuck() {
    {
        echo "the stream's snapshots since the container started: $(tail -n "+$since" "$stream" | grep -c '"schema":1')"
        events "e.get('mount_id') == '${dev:-}' or e.get('pid') == ${INNER:-0} or e.get('container') == '${CTR_ID:-}'"
        tail -n 5 "$SHMTEST_TMP/node.err"
    } >&2
    fail "$1"
}

"$SHMWATCH" --all --json --interval 0.5 >"$stream" 2>"$SHMTEST_TMP/node.err" &
STREAM=$!
on_exit "kill -TERM $STREAM 2>/dev/null; wait $STREAM 2>/dev/null; true"
wait_for "[ \$(grep -c '\"schema\":1' '$stream') -ge 1 ]" 60 || fail "the node view stream wrote nothing"

ctr_cgroup $((256 << 20))
since=$(($(wc -l <"$stream") + 1))
ns_holder evctr "$MEMCG_DIR"
CTR=$HOLDER
dev=$(stat -c '%Hd:%Ld' "/proc/$CTR/root/dev/shm") || fail "cannot stat the container's /dev/shm"
wait_for "[ -n \"\$(events \"e['event'] == 'mount' and e['mount_id'] == '$dev' and e['change'] == 'appeared'\")\" ]" 30 ||
    stuck "no mount event for the container's /dev/shm ($dev) appearing"
events "e['event'] == 'mount' and e['mount_id'] == '$dev' and e['change'] == 'appeared'" >"$SHMTEST_TMP/appeared.json"
json_check "$SHMTEST_TMP/appeared.json" "j['container'] == '$CTR_ID' and j['mount'] == '/dev/shm'" \
    "the container's /dev/shm appears, naming the container"

# A holder inside it (its mount namespace and its cgroup).
bash -c 'echo $$ >"$1/cgroup.procs" && exec nsenter -m -t "$2" python3 -c "
import os, time
fd = os.open(\"/dev/shm/torch_99_1\", os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 1 << 20)
time.sleep(300)"' _ "$MEMCG_DIR" "$CTR" &
INNER=$!
on_exit "kill -KILL $INNER 2>/dev/null; true"
# As a process (python3, holding the segment), not only as the container's
# member pid, which it is from its first moment in the container's cgroup.
wait_for "grep -qE '\"pid\":$INNER,\"ppid\":[0-9]+,\"state\":\"[A-Z]\",\"comm\":\"python3\"' '$stream'" 30 ||
    stuck "the stream never showed the container's holder"
kill -BUS "$INNER"
wait_for "[ -n \"\$(events \"e['event'] == 'exit' and e['pid'] == $INNER\")\" ]" 15 ||
    stuck "no exit event for the container's holder"
events "e['event'] == 'exit' and e['pid'] == $INNER" >"$SHMTEST_TMP/exit.json"
json_check "$SHMTEST_TMP/exit.json" "j['cause'] == 'sigbus' and j['container'] == '$CTR_ID' and j['role'] == 'holder'" \
    "the holder's SIGBUS inside the container names the container"

kill -KILL "$CTR"
wait_for "[ -n \"\$(events \"e['event'] == 'mount' and e['mount_id'] == '$dev' and e['container'] == '$CTR_ID' and e['change'] == 'gone'\")\" ]" 30 ||
    stuck "no mount event for the container's /dev/shm going"
ok "and goes when the container ends"
