#!/usr/bin/env bash
# The real PyTorch DataLoader with the file_descriptor sharing strategy (the
# Linux default), forked, spawned and forkserver workers: while the main process holds
# batches, every segment is unlinked and only /proc knows it. shmwatch must
# find each one, as a hidden torch segment made by a worker, count exactly the
# mount's used bytes, and group the main process with all of its workers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
test_ns 64m -- "$@"

# check_held NAME: the snapshot NAME.json of a job holding batches.
check_held() {
    local f=$SHMTEST_TMP/$1.json
    local T="[s for s in j['segments'] if s['kind'] == 'torch']"
    json_check "$f" "[sorted(g['workers']) for g in j['groups'] if g['main_pid'] == $MAIN] == [sorted($WORKERS)] and all(g['main_pid'] not in $WORKERS for g in j['groups'])" \
        "$1: one group: main $MAIN with its workers $WORKERS" \
        "[(p['role'], p['group']) for p in j['processes'] if p['pid'] == $MAIN] == [('main', $MAIN)] and all([(p['role'], p['group']) for p in j['processes'] if p['pid'] == w] == [('worker', $MAIN)] for w in $WORKERS)" \
        "$1: roles main and worker, all in the group" \
        "all([p['comm'] for p in j['processes'] if p['pid'] == w] == ['$TORCH_WORKER_COMM'] for w in $WORKERS)" \
        "$1: each worker's comm is $TORCH_WORKER_COMM (torch $TORCH_STACK)" \
        "len($T) >= 2 * $HELD and all(s['state'] == 'hidden' and s['name'].startswith('torch_') and s['creator_pid'] in $WORKERS and s['creator_alive'] and s['group'] == $MAIN for s in $T)" \
        "$1: every torch segment is hidden, made by a live worker, in the group" \
        "not [s['name'] for s in j['segments'] if s['name'].startswith('torch_') and s['kind'] != 'torch']" \
        "$1: every torch_* name is of kind torch" \
        "all(len({h['pid'] for h in s['holders']}) == 1 and ((h['pid'] == $MAIN and h['fd'] is not None and h['mapped']) or (h['pid'] == s['creator_pid'] and h['fd'] is not None and not h['mapped'])) for s in $T for h in s['holders'])" \
        "$1: each segment is held by the main (fd and mapping) or, not yet received, by its worker (fd only)" \
        "sum(s['size_bytes'] for s in $T if any(h['pid'] == $MAIN for h in s['holders'])) >= $HELD_BYTES" \
        "$1: the main holds at least the $HELD_BYTES bytes of its $HELD batches" \
        "all(0 <= s['alloc_bytes'] - s['size_bytes'] < page and s['alloc_exact'] for s in $T)" \
        "$1: each segment's allocation is its size rounded up to a page" \
        "abs(j['mounts'][0]['used_bytes'] - sum(s['alloc_bytes'] for s in j['segments'])) <= page * len(j['segments'])" \
        "$1: the segments' bytes are the mount's used bytes, within a page per segment" \
        "j['mounts'][0]['hidden_bytes'] == sum(s['alloc_bytes'] for s in j['segments'] if s['state'] == 'hidden') and j['totals']['hidden'] == sum(s['state'] == 'hidden' for s in j['segments'])" \
        "$1: hidden bytes and count add up" \
        "j['mounts'][0]['unattributed_bytes'] <= 4 * page and j['mounts'][0]['orphan_bytes'] == 0" \
        "$1: nothing unattributed, no orphans"
    grep -q "^  main $MAIN " "$SHMTEST_TMP/$1.txt" || fail "$1: the text report names main $MAIN"
    [ "$(grep -cE "^    worker +[0-9]+ +$TORCH_WORKER_COMM" "$SHMTEST_TMP/$1.txt")" -eq "$(echo "$WORKER_PIDS" | wc -w)" ] ||
        fail "$1: the text report lists every worker"
    ok "$1: the text report shows the group"
}

# finish NAME: release the job; it must finish normally and free the mount.
finish() {
    torch_release
    torch_wait_exit 60
    assert_eq "$TORCH_RC" 0 "$1: the job finishes normally"
    # shellcheck disable=SC2086 # a list of pids
    wait_for "gone $WORKER_PIDS" 15 || fail "$1: workers still running after the job"
    wait_for '[ "$(fs_used_bytes /dev/shm)" -eq 0 ]' 10 ||
        fail "$1: $(fs_used_bytes /dev/shm) bytes still used after the job"
    ok "$1: the mount is empty once the job is gone"
}

# Forked workers: the default start method on Linux.
torch_start --strategy file_descriptor --start-method fork --workers 3 --hold-batches 3
torch_settle
snap fork
check_held fork
finish fork

# Eight persistent workers (they outlive an epoch): the same picture.
torch_start --strategy file_descriptor --start-method fork --workers 8 --persistent-workers --hold-batches 4
torch_settle
snap persistent
check_held persistent
finish persistent

# A loop that keeps four batches, more than the two a training step holds:
# the main holds 4 (received), the 2 workers 2 each (prefetched), 8 in
# flight. The holders tell one from the other: prefetch factor 2.
torch_start --strategy file_descriptor --start-method fork --workers 2 --persistent-workers --hold-batches 4
torch_settle
snap hold4
check_held hold4
json_check "$SHMTEST_TMP/hold4.json" "(lambda l: (l['main_pid'], l['workers'], l['batches_in_flight'], l['prefetch_factor']))(j['budget']['loader']) == ($MAIN, 2, 8, 2)" \
    "hold4: the loader: 8 batches in flight, 2 workers, prefetch factor 2"
grep -qE "^  loader: main $MAIN, .* 8 batches in flight with 2 workers \(prefetch factor 2\)$" "$SHMTEST_TMP/hold4.txt" ||
    fail "hold4: the text report's loader line says prefetch factor 2: $(grep loader: "$SHMTEST_TMP/hold4.txt")"
ok "hold4: the text report's loader line says prefetch factor 2"
finish hold4

# Spawned workers: another command line, a resource tracker beside them, and
# named semaphores (sem.mp-*) in the mount.
torch_start --strategy file_descriptor --start-method spawn --workers 2 --hold-batches 2
torch_settle
snap spawn
check_held spawn
json_check "$SHMTEST_TMP/spawn.json" "all(s['state'] == 'in_use' and s['group'] == $MAIN for s in j['segments'] if s['kind'] == 'sem')" \
    "spawn: the named semaphores are in use by the group"
finish spawn

# Workers of Python's forkserver (multiprocessing_context='forkserver', the
# default from Python 3.14): the main starts the forkserver, which forks the
# workers. The forkserver is no main: the training process is, with the
# workers, the segments and the budget's loader (two batches held and two
# workers of prefetch factor 2: six in flight).
torch_start --strategy file_descriptor --start-method forkserver --workers 2 --hold-batches 2
torch_settle
snap forkserver
FORKSERVER=$(pgrep -P "$MAIN" -f '^[^ ]+ (-[^ ]+ )*-c from multiprocessing.forkserver import main')
[ "$(echo "$FORKSERVER" | wc -w)" -eq 1 ] || fail "forkserver: one forkserver child of main $MAIN, found: $FORKSERVER"
check_held forkserver
f=$SHMTEST_TMP/forkserver.json
json_check "$f" "all([p['ppid'] for p in j['processes'] if p['pid'] == w] == [$FORKSERVER] for w in $WORKERS)" \
    "forkserver: the workers are the forkserver's children" \
    "[p['role'] for p in j['processes'] if p['pid'] == $FORKSERVER] in ([], ['holder']) and all(p['group'] is None or p['group'] == 0 for p in j['processes'] if p['pid'] == $FORKSERVER) and [g['main_pid'] for g in j['groups']] == [$MAIN]" \
    "forkserver: the forkserver has no DataLoader role; the main's is the only group" \
    "all(s['group'] == $MAIN for s in j['segments'] if s['kind'] in ('torch', 'sem'))" \
    "forkserver: the batches and the named semaphores are the group's" \
    "(lambda l: (l['main_pid'], l['workers'], l['batches_in_flight'], l['prefetch_factor']))(j['budget']['loader']) == ($MAIN, 2, 6, 2)" \
    "forkserver: the loader is the main's: 6 batches in flight, 2 workers, prefetch factor 2"
grep -qE "^  loader: main $MAIN, .* 6 batches in flight with 2 workers \(prefetch factor 2\)$" "$SHMTEST_TMP/forkserver.txt" ||
    fail "forkserver: the text report's loader line names main $MAIN and prefetch factor 2: $(grep loader: "$SHMTEST_TMP/forkserver.txt")"
ok "forkserver: the text report's loader line is the main's"
finish forkserver
