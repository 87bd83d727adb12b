#!/usr/bin/env bash
# The budget in an emulated container, without Docker: a 512 MiB memory
# cgroup (v1 or v2, whichever this machine can make), a private mount
# namespace with Docker's default 64 MiB tmpfs at /dev/shm, and DataLoader
# workers inside both that fill it. shmwatch run inside must see the limit,
# the shm size, what was written, the cgroup's shmem charge and the advice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
need_root
need_unshare
if [ -z "${IN_SHM_NS:-}" ]; then
    mem_cgroup_create "shmwatch-budget-$$" 536870912
    # Join the cgroup before anything is written to the tmpfs: a page is
    # charged to the cgroup of the process that first touches it.
    bash -c 'echo $$ >"$MEMCG_DIR/cgroup.procs" && exec "$@"' _ \
        bash -c '. "$1"; in_shm_ns 64m "$2"' _ "$(dirname "$0")/lib.sh" "$0"
    exit $?
fi

# 2 workers named as torch >= 2.5 names them, 5 segments each of 4 MiB,
# fully written: 40 MiB of the 64 MiB mount.
scene_start --workers 2 --per-worker 5 --size 4194304 --worker-comm pt_data_worker
snap=$SHMTEST_TMP/budget.json
"$SHMWATCH" --json >"$snap" || fail "shmwatch --json exited $?"
json_check "$snap" "j['cgroup'] is not None and j['cgroup']['version'] == int(env['MEMCG_VERSION']) and j['cgroup']['limit_bytes'] == 536870912" \
    "the cgroup (v$MEMCG_VERSION) and its 512 MiB limit" \
    "j['budget']['limit_bytes'] == 536870912 and j['budget']['limit_source'] == 'cgroup'" \
    "the budget's limit comes from the cgroup" \
    "j['budget']['shm_size_bytes'] == 67108864 and j['mounts'][0]['size_bytes'] == 67108864" \
    "shm size 64 MiB" \
    "abs(j['mounts'][0]['used_bytes'] - 10 * 4194304) <= 10 * page and all(abs(s['alloc_bytes'] - 4194304) <= page for s in j['segments'])" \
    "used bytes: what was written, within a page per segment" \
    "abs(j['cgroup']['shmem_bytes'] - 10 * 4194304) <= 10 * page + (1 << 20)" \
    "the cgroup's shmem charge is what was written to /dev/shm" \
    "j['budget']['shm_used_bytes'] == j['mounts'][0]['used_bytes'] and j['budget']['shm_effective_bytes'] <= j['mounts'][0]['avail_bytes']" \
    "shm still writable is bounded by the mount's free space" \
    "any('64 MiB' in a and 'default' in a for a in j['budget']['advice']) and j['budget']['verdict'] in ('warn', 'critical')" \
    "the 64 MiB Docker default is called out while workers exist" \
    "j['budget']['recommended_shm_size_bytes'] >= 60 << 20 and j['budget']['recommended_memory_bytes'] > j['budget']['recommended_shm_size_bytes']" \
    "a recommended --shm-size and -m are given"
"$SHMWATCH" --once >"$SHMTEST_TMP/budget.txt" || fail "--once exited $?"
grep -q 'limit 512 MiB (cgroup)' "$SHMTEST_TMP/budget.txt" || fail "text budget line: $(grep limit "$SHMTEST_TMP/budget.txt")"
grep -q '64 MiB' "$SHMTEST_TMP/budget.txt" || fail "text advice lacks the 64 MiB default"
ok "the text report shows the same budget and advice"

# Fill to over 95 %: critical.
scene_start --workers 1 --per-worker 5 --size 4718592 --modes named
"$SHMWATCH" --json >"$snap" || fail "shmwatch --json exited $?"
json_check "$snap" "j['mounts'][0]['used_pct'] > 95 and j['budget']['verdict'] == 'critical'" \
    "a mount over 95 % full is critical"
scene_stop
