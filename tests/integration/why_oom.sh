#!/usr/bin/env bash
# A real OOM kill, recorded and explained: a 64 MiB memory cgroup (v1 here,
# v2 where the host has it) holds a survivor and a writer that maps a file
# on a private 256 MiB tmpfs at /dev/shm, writes 24 MiB, waits until the
# recorder has seen it, then writes past the limit: the kernel OOM-kills it.
# `shmwatch why` must say OOM, name the cgroup, and give the app and the shm
# of that moment against the 64 MiB limit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/why_lib.sh"
need_root
need_unshare
need python3 timeout
record_need
LIMIT=$((64 << 20))
if [ -z "${IN_SHM_NS:-}" ]; then
    mem_cgroup_create "shmwatch-whyoom-$$" "$LIMIT"
    if [ "$MEMCG_VERSION" = 1 ]; then
        echo 0 >"$MEMCG_DIR/memory.swappiness" 2>/dev/null || true
    else
        echo 0 >"$MEMCG_DIR/memory.swap.max" 2>/dev/null || true
    fi
    in_shm_ns 256m "$0"
    exit $?
fi

kill_memcg() {
    local p
    for p in $(cat "$MEMCG_DIR/cgroup.procs" 2>/dev/null); do
        kill -KILL "$p" 2>/dev/null || true
    done
    wait_for "[ -z \"\$(cat '$MEMCG_DIR/cgroup.procs' 2>/dev/null)\" ]" 10 || true
}
on_exit kill_memcg

(exec bash -c 'echo $$ >"$MEMCG_DIR/cgroup.procs" && exec sleep 300') &
SURVIVOR=$!
wait_for "grep -q sleep /proc/$SURVIVOR/comm 2>/dev/null" 10 || fail "the survivor did not start"
memcg_path=${MEMCG_DIR#/sys/fs/cgroup}
memcg_path=${memcg_path#/memory}

# The recorder watches the survivor's namespaces and cgroup (--pid), from outside the cgroup.
record_start --interval 0.5 --pid "$SURVIVOR"

go=$SHMTEST_TMP/go
bash -c 'echo $$ >"$MEMCG_DIR/cgroup.procs" && exec "$@"' _ python3 -c '
import mmap, os, sys, time
with open("/proc/self/oom_score_adj", "w") as f:
    f.write("1000")
fd = os.open("/dev/shm/oom-filler", os.O_RDWR | os.O_CREAT, 0o600)
n = 192 << 20
os.ftruncate(fd, n)
m = mmap.mmap(fd, n)
for off in range(0, 24 << 20, 4096):
    m[off] = 1
deadline = time.monotonic() + 60
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.02)
for off in range(0, n, 4096):
    m[off] = 1
print("wrote it all")
' "$go" >"$SHMTEST_TMP/writer.out" 2>&1 &
WRITER=$!
record_wait "r.get('schema') == 1 and any(p['pid'] == $WRITER for p in r['processes']) and r['mounts'][0]['used_bytes'] >= 24 << 20" 20 ||
    fail "the recording never showed the writer with its 24 MiB"
ok "the recording knows the writer ($WRITER) and its 24 MiB on /dev/shm"
: >"$go"
rc=0
wait "$WRITER" || rc=$?
assert_eq "$rc" 137 "the writer was killed by SIGKILL (the OOM killer)"
record_wait "r.get('event') == 'exit' and r['pid'] == $WRITER" 20 || fail "no exit of the writer in the recording"
record_wait "r.get('event') == 'oom_kill'" 20 || fail "no oom_kill in the recording"
record_stop

why_run --json
assert_eq "$WHY_RC" 4 "why exits 4 ($(head -c 300 "$WHY_ERR"))"
j=$SHMTEST_TMP/why.json
cp "$WHY_OUT" "$j"
json_check "$j" "[(d['pid'], d['cause']) for d in j['deaths']] == [($WRITER, 'oom_kill')]" \
    "one end: the writer, killed by the OOM killer (its exit and the cgroup's count told once)"
json_check "$j" "j['deaths'][0]['diagnosis'].startswith('the OOM killer of cgroup $memcg_path fired with app ') and ' of 64.0 MiB' in j['deaths'][0]['diagnosis']" \
    "the diagnosis: the cgroup's OOM killer, with app and shm against the 64 MiB limit"
json_check "$j" "j['deaths'][0]['budget_at']['limit_bytes'] == $LIMIT and j['deaths'][0]['budget_at']['shm_used_bytes'] >= 24 << 20 and j['deaths'][0]['budget_at']['cgroup'] == '$memcg_path'" \
    "the budget then: shm at least the 24 MiB written, the limit, the cgroup"
json_check "$j" "j['deaths'][0]['advice']['recommended_memory_bytes'] > $LIMIT" \
    "the advice: an -m above the limit that was hit"
why_run
grep -q "^holder $WRITER (python3): killed by the OOM killer (SIGKILL) at " "$WHY_OUT" ||
    fail "the text does not say OOM: $(head -n 3 "$WHY_OUT")"
ok "the text: $(grep -m1 '^  why:' "$WHY_OUT" | cut -c1-160)"
