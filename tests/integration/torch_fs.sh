#!/usr/bin/env bash
# The real PyTorch DataLoader with the file_system sharing strategy: segments
# keep their names in /dev/shm, the main process maps the batches it received
# (no fd), and every worker starts its own torch_shm_manager in a session of
# its own. shmwatch must show the named segments in use, the prefetched ones
# as unheld (their creator lives: not orphans, and never removed by clean
# --all-unheld), and each manager in the job's group.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
test_ns 64m -- "$@"

torch_fs_job 3
# shellcheck disable=SC2086 # a list of pids
MANAGERS=$(pylist $MANAGER_PIDS)
snap fs
f=$SHMTEST_TMP/fs.json
T="[s for s in j['segments'] if s['kind'] == 'torch']"
H="[s for s in $T if any(h['pid'] == $MAIN for h in s['holders'])]"

json_check "$f" "len($MANAGERS) == 3 and all(p['ppid'] in $WORKERS and p['pgid'] == p['pid'] for p in j['processes'] if p['pid'] in $MANAGERS)" \
    "one torch_shm_manager per worker, each leading its own session" \
    "[sorted(g['workers']) for g in j['groups'] if g['main_pid'] == $MAIN] == [sorted($WORKERS)] and [sorted(g['shm_managers']) for g in j['groups'] if g['main_pid'] == $MAIN] == [$MANAGERS]" \
    "the group: main $MAIN, workers $WORKERS, shm managers $MANAGERS" \
    "all([(p['role'], p['group'], p['comm']) for p in j['processes'] if p['pid'] == m] == [('shm_manager', $MAIN, 'torch_shm_manag')] for m in $MANAGERS)" \
    "each manager: role shm_manager, in the main's group" \
    "[(p['role'], p['group']) for p in j['processes'] if p['pid'] == $MAIN] == [('main', $MAIN)] and all([(p['role'], p['group']) for p in j['processes'] if p['pid'] == w] == [('worker', $MAIN)] for w in $WORKERS)" \
    "roles main and worker" \
    "len($H) >= 2 * $HELD and all(s['state'] == 'in_use' and [(h['pid'], h['fd'], h['mapped']) for h in s['holders']] == [($MAIN, None, True)] for s in $H)" \
    "the received batches: named, in use, mapped by the main without an fd" \
    "sum(s['size_bytes'] for s in $H) >= $HELD_BYTES" \
    "the main maps at least the $HELD_BYTES bytes of its $HELD batches" \
    "all(s['creator_pid'] in $WORKERS and s['creator_alive'] and s['group'] == $MAIN for s in $T)" \
    "every torch segment names its live worker and belongs to the group" \
    "all(s['state'] == 'unheld' for s in $T if not s['holders']) and j['totals']['orphans'] == 0" \
    "prefetched batches nobody maps yet are unheld, never orphans: their creator lives" \
    "sorted(s['name'] for s in $T) == sorted(n for n in __import__('os').listdir('/dev/shm') if n.startswith('torch_'))" \
    "every torch file in /dev/shm is listed" \
    "abs(j['mounts'][0]['used_bytes'] - sum(s['alloc_bytes'] for s in j['segments'])) <= page * len(j['segments']) and j['mounts'][0]['unattributed_bytes'] <= 4 * page" \
    "the segments' bytes are the mount's used bytes, within a page per segment" \
    "j['mounts'][0]['named_bytes'] == sum(s['alloc_bytes'] for s in j['segments'] if s['state'] in ('in_use', 'unheld', 'orphan'))" \
    "named bytes add up"
grep -qE "^    shm_manager +[0-9]+ +torch_shm_manag" "$SHMTEST_TMP/fs.txt" ||
    fail "the text report lists the shm managers in the group"
grep -q "3 workers, 3 shm managers" "$SHMTEST_TMP/fs.txt" || fail "text: $(grep workers, "$SHMTEST_TMP/fs.txt")"
ok "the text report shows the managers in the group"

# clean --all-unheld at any age leaves the prefetched batches alone: their
# creators live, so they are the job's batches in flight, not leftovers.
torch_files() { find /dev/shm -maxdepth 1 -name 'torch_*' | sort; }
before=$(torch_files)
rc=0
out=$("$SHMWATCH" clean --all-unheld --min-age 0 --yes --log "$SHMTEST_TMP/actions.log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 0 "clean --all-unheld --min-age 0 exits 0"
assert_eq "$(torch_files)" "$before" "every torch file of the live job is still there"
grep -qE "^Kept: [1-9][0-9]* unheld segments? of a live creator: a live job's" <<<"$out" ||
    fail "the live job's unheld batches are not said kept: $out"
if grep -q "torch_" <<<"$out"; then fail "a live job's batch was planned: $out"; fi
ok "clean --all-unheld keeps a live job's unheld batches, and says so"

# A normal end: the managers unlink what is left and exit by themselves.
torch_release
torch_wait_exit 60
assert_eq "$TORCH_RC" 0 "the job finishes normally"
wait_for '! ls /dev/shm | grep -q "^torch_"' 15 || fail "torch files left 15 s after a normal exit: $(ls /dev/shm)"
ok "the managers remove every torch file after a normal exit"
