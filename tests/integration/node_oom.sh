#!/usr/bin/env bash
# OOM kills per container in the node view (--all), for real: two emulated
# containers (ctr_lib.sh), A with a 256 MiB memory cgroup and B with a 64 MiB
# one and a 256 MiB tmpfs at /dev/shm. A writer joins B's cgroup and mount
# namespace (oom_score_adj 1000: the OOM killer's first choice) and writes a
# file on B's /dev/shm past B's limit: the kernel OOM-kills it. A --json
# stream and the dashboard that watch before the kill must say it on B's
# budget alone: B's oom_kills_recent > 0 and its verdict critical, A's and
# the host's not; the dashboard a message naming B, B's budget line and page
# the kill, A's neither. Then C, a container no runtime names: its kill's
# message names it as its row does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need od pgrep nsenter timeout
test_ns 16m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

scene_ctr A $((256 << 20)) 64m --workers 1 --per-worker 1 --size 256K
scene_ctr B $((64 << 20)) 256m --workers 1 --per-worker 1 --size 256K
MEMCG_B=$MEMCG_DIR
# The writer's pages stay charged to B's cgroup: no swap may take them.
memcg_no_swap "$MEMCG_B"
if [ "$MEMCG_VERSION" = 1 ]; then
    oom_file=$MEMCG_B/memory.oom_control
else
    oom_file=$MEMCG_B/memory.events
fi
MANIFEST=$MAN_B
MAIN_B=$(ctr_host_pid "$MAN_B" "$(manifest_pids main)")
[ -n "$MAIN_B" ] || fail "cannot find B's main on the host"
LA="docker ${ID_A:0:12}"
LB="docker ${ID_B:0:12}"
export ID_A ID_B
ok "two containers: $LA (256 MiB) and $LB (64 MiB, its main $MAIN_B)"

# A stream and the dashboard watch before the kill (their first scan is the
# baseline of every count).
stream=$SHMTEST_TMP/stream.ndjson
"$SHMWATCH" --all --json --interval 0.3 --count 400 >"$stream" &
STREAM=$!
on_exit "kill -TERM $STREAM 2>/dev/null; wait $STREAM 2>/dev/null"
# (--all shows every mount namespace of the machine, other tests' too: the
# tree is narrowed to B at once, and B's row says the first scan has read it.)
tui_start 160 50 --all --interval 0.5
tui_wait "node view" 15
tui_keys / "${ID_B:0:16}" Enter
tui_wait "container $LB" 15
wait_for "[ \$(wc -l <'$stream') -ge 2 ]" 15 || fail "the JSON stream did not start"

# oom_write CGROUP PID MIB OUT: a writer in CGROUP's memory cgroup and PID's
# mount namespace (oom_score_adj 1000: the OOM killer's first choice) fills a
# file of MIB MiB on that /dev/shm, and says "wrote it all" in OUT if it could.
oom_write() {
    bash -c 'echo $$ >"$1/cgroup.procs" && echo 1000 >/proc/self/oom_score_adj &&
        exec nsenter -t "$2" -m timeout 60 python3 -c "
import mmap, os
fd = os.open(\"/dev/shm/oom-filler\", os.O_RDWR | os.O_CREAT, 0o600)
n = $3 << 20
os.ftruncate(fd, n)
m = mmap.mmap(fd, n)
for off in range(0, n, 4096):
    m[off] = 1
print(\"wrote it all\")
"' _ "$1" "$2" "$3" >"$4" 2>&1
}

rc=0
# (oom_score_adj set before it enters B's namespace: B's /proc is its pid
# namespace's, where the writer has no /proc/self.)
oom_write "$MEMCG_B" "$MAIN_B" 192 "$SHMTEST_TMP/writer.out" || rc=$?
assert_eq "$rc" 137 "the writer in B was killed by SIGKILL (the OOM killer)"
grep -q "wrote it all" "$SHMTEST_TMP/writer.out" && fail "the writer wrote past B's limit"
kernel_count=$(awk '$1 == "oom_kill" { print $2 }' "$oom_file")
[ "${kernel_count:-0}" -ge 1 ] || fail "the kernel counted no OOM kill in B (oom_kill ${kernel_count:-missing})"
kill -0 "$MAIN_B" 2>/dev/null || fail "B's main was killed too: the test needs it alive"
ok "the kernel counts $kernel_count OOM kill(s) in B's cgroup"

# The dashboard's message stays a few seconds: looked for first, before the
# checks of the stream (whose snapshots keep in its file), which take seconds
# of their own on a loaded machine.
# Another test's death on the node (the node view tells every one) may take
# the message line within those seconds: the events page keeps the kill,
# below the screens of whatever other tests' namespaces did since.
if wait_for 'tui_cap | grep -qE -- "OOM KILL: [0-9]+ new in container $LB "' 15; then
    ok "the dashboard says the kill at once, naming container B"
else
    tui_keys e
    tui_wait "^ Events: " 5
    tui_page_find "OOM kill in cgroup [^ ]*docker-$ID_B\\.scope: "
    tui_keys q
    ok "the dashboard told the kill in B's cgroup (its message line since taken by another event)"
fi

# The stream: the first snapshot that counts the kill on B's mount.
wait_for "grep -q '\"oom_kills\":[1-9]' '$stream'" 15 || fail "the stream never counted the kill"
kill -TERM "$STREAM" 2>/dev/null
wait "$STREAM" 2>/dev/null
after=$SHMTEST_TMP/after.json
first=$SHMTEST_TMP/first.json
# A stream carries event lines between its snapshots: those have an "event" key.
grep -m 1 -v '^{"event"' "$stream" >"$first"
/usr/bin/python3 - "$stream" "$after" <<'PY' || fail "no snapshot of the stream shows B's kill"
import json, os, sys
for line in open(sys.argv[1]):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if "event" in j:
        continue
    if any(c["id"] == os.environ["ID_B"] and (m["cgroup"] or {}).get("oom_kills")
           for m in j["mounts"] for c in m["containers"]):
        open(sys.argv[2], "w").write(line)
        sys.exit(0)
sys.exit(1)
PY
json_check "$first" "all(m['budget']['oom_kills_recent'] == 0 for m in j['mounts']) and j['budget']['oom_kills_recent'] == 0" \
    "the stream's first snapshot: no kill anywhere"
mb="[m for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_B']]]"
ma="[m for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_A']]]"
json_check "$after" "[(m['cgroup']['oom_kills'], m['budget']['oom_kills_recent'] >= 1, m['budget']['verdict']) for m in $mb] == [($kernel_count, True, 'critical')]" \
    "the snapshot after the kill: B's budget counts it as new and is critical" \
    "'OOM killer has just ended' in [m for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_B']]][0]['budget']['advice'][0]" \
    "B's first advice says the OOM killer has just fired" \
    "[(m['cgroup']['oom_kills'], m['budget']['oom_kills_recent'], m['budget']['verdict'] != 'critical') for m in $ma] == [(0, 0, True)]" \
    "A's budget: no kill, not critical" \
    "j['budget']['oom_kills_recent'] == 0 and all(m['budget']['oom_kills_recent'] == 0 for m in j['mounts'] if m['containers'] == [])" \
    "the host's budgets: no kill"

# The dashboard: B's budget line and page say the kill; A's neither.
tui_keys Home # the filter leaves B's subtree: its first row is B's
tui_wait "^Budget $LB +CRITICAL +OOM KILL \+[0-9]" 15
tui_keys b
tui_wait "the budget of $LB" 15
tui_wait "oom kills +$kernel_count +[0-9]+ just now: the OOM killer ended" 15
ok "B's budget line and page say the kill is new"
tui_keys q
tui_keys Escape / "${ID_A:0:16}" Enter
tui_wait "container $LA" 15
tui_keys Home
tui_wait "^Budget $LA " 15
tui_cap | grep -E "^Budget $LA " | grep -q "OOM" && { tui_dump; fail "A's budget line shows an OOM kill"; }
tui_keys b
tui_wait "the budget of $LA" 15
tui_wait "oom kills +0 +none since the cgroup was made" 15
ok "A's budget line and page: no kill"
tui_keys q

# C: a container no runtime names (a mount namespace with a tmpfs of its own
# in a memory cgroup of no runtime's naming): no name, runtime, id or hostname
# of its own. Its row names it by its mount namespace and a pid in it, and so
# must its kill's message. The node view shows every namespace of the
# machine, other tests' nameless ones too: C's row is found by C's own mount
# namespace (its inode), never as the first container row of a filter.
mem_cgroup_create "shmtest-nameless-$$" $((12 << 20))
MEMCG_C=$MEMCG_DIR
memcg_no_swap "$MEMCG_C"
on_exit "memcg_kill_all '$MEMCG_C'"
ns_holder C "$MEMCG_C"
HOLDER_C=$HOLDER
MNT_C=$(stat -L -c %i "/proc/$HOLDER_C/ns/mnt") || fail "cannot read C's mount namespace"
nsenter -t "$HOLDER_C" -m sh -c 'head -c 4096 /dev/zero >/dev/shm/nameless_seg'
# (The filter's text ends with " (": no namespace whose inode only starts
# with C's digits matches it.)
tui_keys Escape / "mntns $MNT_C (" Enter
row_re="container mntns $MNT_C \\(pid [0-9]+\\)"
tui_wait "^▾ $row_re" 15
LC=$(tui_cap | grep -oE -- "^▾ $row_re" | head -n 1)
LC=${LC#▾ container }
ok "C's row, found by its mount namespace $MNT_C: container $LC"
# The message is cut at the screen's width: 320 columns keep the whole of
# it, C's cgroup and label with it, on a machine whose cgroup paths are long.
tui resize-window -t tui -x 320 -y "$TUI_H"
TUI_W=320
# The kill is looked for by C's cgroup, whatever the message calls C; then
# its label is checked. (Another test's event may take the message line
# within its seconds: the kill is made again, up to three times, until the
# message is seen.)
kill_re="OOM KILL: [0-9]+ new in container .* \\(cgroup [^ ]*/shmtest-nameless-$$, "
said=
for _ in 1 2 3; do
    rc=0
    oom_write "$MEMCG_C" "$HOLDER_C" 15 /dev/null || rc=$?
    assert_eq "$rc" 137 "the writer in C was killed by SIGKILL (the OOM killer)"
    nsenter -t "$HOLDER_C" -m rm -f /dev/shm/oom-filler
    if wait_for 'said=$(tui_cap | grep -E -- "$kill_re")' 10; then
        break
    fi
done
[ -n "$said" ] || { tui_dump; fail "no OOM KILL message told the kill in C's cgroup"; }
# The row's rule names C by its mount namespace and the first member whose
# files were read: a snapshot that reads the holder's in vain (at the kill,
# on a loaded machine) names another member, the writer. The namespace is
# C's identity; the pid may be any member's.
case $said in
*"container ?"* | *"container container"*)
    tui_dump
    fail "the OOM KILL message names C by no label of its own: $said"
    ;;
esac
echo "$said" | grep -qE -- "new in $row_re \(cgroup " || {
    tui_dump
    fail "the OOM KILL message does not name C as its row does (container $LC): $said"
}
ok "the kill in a container no runtime names: the message names it as its row does ($LC)"
tui_quit
