#!/usr/bin/env bash
# The dashboard's details and budget pages (src/ui/info.c) on real processes:
# a segment larger than what is written says how much is not written yet; a
# zombie, an orphaned worker and a torch_shm_manager each get their role's
# story; a DataLoader group lists the shm manager its main started; and the
# budget page of a process in a memory cgroup whose limit is set on its
# parent says so. In a private pid namespace: the killed main's stuck worker
# is re-parented to this script, and only this test's processes are seen.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setsid /usr/bin/python3
test_ns 64m --pid -- "$@"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/cgroup.sh"

# One worker whose segment is 1 MiB long with 4 KiB written, a child of the
# main that exits and is never reaped, and a stuck worker that outlives main.
SCENE_PREFIX=setsid scene_start --workers 1 --per-worker 1 --modes named --size 1M --touch 4K \
    --zombies 1 --stuck-orphan
main=$(manifest_pids main)
w1=$(manifest_pids worker)
zombie=$(manifest_pids zombie)
stuck=$(manifest_pids stuck)

# A DataLoader group of python3: a main whose forked worker holds a torch
# segment and whose other child names itself torch_shm_manag, as a
# torch_shm_manager started by the main is.
cat >"$SHMTEST_TMP/group.py" <<'PY'
import ctypes, mmap, os, sys, time
out = sys.argv[1]
worker = os.fork()
if worker == 0:
    fd = os.open("/dev/shm/torch_%d_0" % os.getpid(), os.O_RDWR | os.O_CREAT, 0o600)
    os.write(fd, b"x" * 65536)
    m = mmap.mmap(fd, 65536)
    open(out + ".worker", "w").close()
    time.sleep(600)
    os._exit(0)
manager = os.fork()
if manager == 0:
    ctypes.CDLL(None).prctl(15, b"torch_shm_manag", 0, 0, 0)  # PR_SET_NAME
    open(out + ".manager", "w").close()
    time.sleep(600)
    os._exit(0)
while not (os.path.exists(out + ".worker") and os.path.exists(out + ".manager")):
    time.sleep(0.01)
with open(out + ".tmp", "w") as f:
    f.write("%d %d\n" % (worker, manager))
os.rename(out + ".tmp", out)
time.sleep(600)
PY
setsid /usr/bin/python3 "$SHMTEST_TMP/group.py" "$SHMTEST_TMP/group.pids" </dev/null >/dev/null 2>&1 &
gmain=$!
wait_for "[ -s $SHMTEST_TMP/group.pids ]" 30 || fail "the python3 group did not start"
read -r gworker gmgr <"$SHMTEST_TMP/group.pids"
on_exit "kill -KILL $gmain $gworker $gmgr 2>/dev/null; wait $gmain 2>/dev/null"

proc_row() { echo "^ +$1 +[0-9]+ [A-Z] $2 "; } # PID ROLE: its row in the processes view
# details PID ROLE: Enter on the process's row in the processes view.
details() {
    tui_wait "$(proc_row "$1" "$2")" 10
    tui_select "$(proc_row "$1" "$2")"
    tui_keys Enter
    tui_wait "Details of process $1" 5
}

tui_start 140 40
tui_wait "main $main " 10

# --- A segment not fully written -------------------------------------------------------
tui_keys t / "torch_${w1}_0" Enter Home Enter
tui_wait "^Segment torch_${w1}_0$" 5
tui_wait "^  size       1\.0 MiB apparent, 4\.0 KiB allocated$" 5
tui_wait "^             1020 KiB not written yet: writing it needs that much room in the mount$" 5
ok "a segment of 1 MiB with 4 KiB written says 1020 KiB is not written yet"
tui_sane "the segment's details page fits"
tui_keys Escape Escape t
tui_wait "main $main " 5

# --- Roles: a zombie, a torch_shm_manager and its group ----------------------------------
tui_keys p
details "$zombie" zombie
tui_wait "^  role       zombie: a zombie: already dead, waiting for its parent to reap it$" 5
ok "a zombie's details page says it waits for its parent to reap it"
tui_keys Escape
details "$gmgr" shm_manager
tui_wait "^  role       shm_manager: a torch_shm_manager: unlinks its clients' named segments once they are gone$" 5
tui_wait "^  group      DataLoader of main pid $gmain$" 5
ok "a torch_shm_manager's details page tells what it does and names its group's main"
tui_keys Escape
details "$gmain" main
tui_wait "^DataLoader group: 1 workers, 1 shm managers, 1 segments, 64\.0 KiB$" 5
tui_wait "^  shm manager $gmgr$" 5
ok "the group of main $gmain lists its shm manager $gmgr"
tui_keys Escape

# --- An orphaned worker ---------------------------------------------------------------------
kill -KILL "$main"
wait "$main" 2>/dev/null
wait_reparented "$stuck" "$main" 10 || fail "the stuck worker $stuck was not re-parented"
tui_keys r
details "$stuck" orphan_worker
tui_wait "^  role       orphan_worker: a worker whose main process is gone: stuck, it holds its memory until ended$" 5
ok "an orphaned worker's details page says it holds its memory until ended"
tui_keys Escape
tui_quit

# --- The budget page: a limit set on a parent cgroup ------------------------------------------
# The dashboard's own cgroup (it budgets its own world) is a child, without
# a limit, of one limited to 512 MiB.
# Its name is unique: $$ is 1 in every pid namespace.
mem_cgroup_create "shmwatch-info-$RANDOM$RANDOM" 536870912
child=$MEMCG_DIR/child
mkdir "$child" || fail "cannot make the child cgroup $child"
on_exit "memcg_kill_all '$child'; rmdir '$child' 2>/dev/null || true"
cat >"$SHMTEST_TMP/in-child" <<EOF
#!/bin/sh
echo \$\$ >"$child/cgroup.procs" && exec "\$@"
EOF
chmod +x "$SHMTEST_TMP/in-child"
TUI_PREFIX=$SHMTEST_TMP/in-child tui_start 220 40 # the cgroup path on one line
tui_wait "main $gmain " 10
tui_keys b
tui_wait "^ Budget: how much shared memory fits" 5
tui_wait "^  limit          512 MiB   memory cgroup v$MEMCG_VERSION /.*/${MEMCG_DIR##*/}/child \(memory\.(max|limit_in_bytes)\)$" 5
tui_wait "^ {27}the limit is set on a parent cgroup$" 5
ok "the budget page of a cgroup limited by its parent says the limit is set on a parent cgroup"
tui_keys b
tui_quit
