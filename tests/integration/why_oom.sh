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
oom_stage "shmwatch-whyoom-$$" "$LIMIT" 256m

# The recorder watches the survivor's namespaces and cgroup (--pid), from outside the cgroup.
record_start --interval 0.5 --pid "$SURVIVOR"

go=$SHMTEST_TMP/go
oom_writer 24 "$go"
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
    "one end: the writer, killed by the OOM killer (its exit and the cgroup's count told once)" \
    "j['deaths'][0]['diagnosis'].startswith('the OOM killer of cgroup $MEMCG_PATH fired with app ') and ' of 64.0 MiB' in j['deaths'][0]['diagnosis']" \
    "the diagnosis: the cgroup's OOM killer, with app and shm against the 64 MiB limit" \
    "j['deaths'][0]['budget_at']['limit_bytes'] == $LIMIT and j['deaths'][0]['budget_at']['shm_used_bytes'] >= 24 << 20 and j['deaths'][0]['budget_at']['cgroup'] == '$MEMCG_PATH'" \
    "the budget then: shm at least the 24 MiB written, the limit, the cgroup" \
    "j['deaths'][0]['advice']['recommended_memory_bytes'] > $LIMIT" \
    "the advice: an -m above the limit that was hit"
why_run
grep -q "^holder $WRITER (python3): killed by the OOM killer (SIGKILL) at " "$WHY_OUT" ||
    fail "the text does not say OOM: $(head -n 3 "$WHY_OUT")"
ok "the text: $(grep -m1 '^  why:' "$WHY_OUT" | cut -c1-160)"
