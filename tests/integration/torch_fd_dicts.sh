#!/usr/bin/env bash
# Scale check of hidden segment counting: the file_descriptor strategy with a
# Dataset of dicts of many small Python objects (the anti-pattern), where
# default_collate turns every field into a tensor of its own: 166 segments of
# one page per batch, about a thousand hidden segments in all, each one an fd
# in some process. shmwatch's count, bytes and holders must match an
# independent count made here from /proc.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
test_ns 64m -- "$@"

# Each held batch is an fd per tensor in the main process, and every batch a
# worker has sent but the main has not taken is one in the worker.
ulimit -n 8192 || fail "cannot raise the open files limit"
torch_start --strategy file_descriptor --start-method fork --workers 2 --hold-batches 2 \
    --dataset dicts
torch_settle
NT=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["batch_tensors"][0])' "$READY_JSON")
[ "$NT" -ge 100 ] || fail "a dicts batch has only $NT tensors"
ok "a batch is $NT tensors"

# The count from /proc: every fd and mapping of /dev/shm/torch_* in this mount
# namespace, by (device, inode), with the pids that hold it.
"$PY" - "$SHMTEST_TMP/proc.json" <<'PY' || fail "counting from /proc failed"
import json, os, sys
me = os.readlink("/proc/self/ns/mnt")
dev = os.stat("/dev/shm").st_dev
seen = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if os.readlink(f"/proc/{pid}/ns/mnt") != me:
            continue
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        # (A chrooted process's paths carry its root: match the tail.)
        if "/dev/shm/torch_" in target and st.st_dev == dev:
            seen.setdefault(st.st_ino, {"name": target.rsplit("/", 1)[1].split(" ")[0], "pids": set(),
                                        "blocks": st.st_blocks * 512})["pids"].add(int(pid))
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
    except OSError:
        continue
    for line in maps:
        f = line.split(None, 5)
        if len(f) == 6 and "/dev/shm/torch_" in f[5]:
            seen.setdefault(int(f[4]), {"name": f[5].rsplit("/", 1)[1].split(" ")[0], "pids": set(),
                                        "blocks": None})["pids"].add(int(pid))
out = {str(k): {"name": v["name"], "pids": sorted(v["pids"]), "blocks": v["blocks"]}
       for k, v in seen.items()}
json.dump(out, open(sys.argv[1], "w"))
PY
snap dicts
f=$SHMTEST_TMP/dicts.json
n=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$SHMTEST_TMP/proc.json")
ok "/proc shows $n torch segments"
export PROC_JSON=$SHMTEST_TMP/proc.json
P="__import__('json').load(open(env['PROC_JSON']))"
T="[s for s in j['segments'] if s['kind'] == 'torch']"
json_check "$f" "len($T) == len($P) and len($T) >= 2 * $HELD * $NT" \
    "shmwatch counts every hidden torch segment /proc shows (at least $HELD x $NT)" \
    "sorted(str(s['inode']) for s in $T) == sorted($P)" \
    "the same inodes" \
    "all(sorted({h['pid'] for h in s['holders']}) == ${P}[str(s['inode'])]['pids'] for s in $T)" \
    "the same holders for each segment" \
    "all(s['state'] == 'hidden' and s['creator_pid'] in $WORKERS and s['group'] == $MAIN and s['alloc_bytes'] == page for s in $T)" \
    "each is hidden, one page, made by a worker, in the group" \
    "len([s for s in $T if any(h['pid'] == $MAIN for h in s['holders'])]) >= $HELD * $NT" \
    "the main holds the $HELD x $NT tensors of its batches" \
    "j['totals']['hidden'] == sum(s['state'] == 'hidden' for s in j['segments']) and j['mounts'][0]['hidden_bytes'] == sum(s['alloc_bytes'] for s in j['segments'] if s['state'] == 'hidden')" \
    "totals count them all" \
    "abs(j['mounts'][0]['used_bytes'] - sum(s['alloc_bytes'] for s in j['segments'])) <= page * len(j['segments']) and j['mounts'][0]['unattributed_bytes'] <= 4 * page" \
    "their bytes are the mount's used bytes" \
    "[g['segments'] for g in j['groups'] if g['main_pid'] == $MAIN] == [sum(s['group'] == $MAIN for s in j['segments'])]" \
    "the group counts each segment once" \
    "[p['segments'] for p in j['processes'] if p['pid'] == $MAIN] == [sum(any(h['pid'] == $MAIN for h in s['holders']) for s in j['segments'])]" \
    "the main's count is of segments, not of fds and mappings"

torch_release
torch_wait_exit 60
assert_eq "$TORCH_RC" 0 "the job finishes normally"
