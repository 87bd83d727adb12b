# Helpers for the tests that run the real PyTorch DataLoader through
# tests/torch/workload.py. Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/torch_lib.sh"
#   torch_need
#   test_ns 64m -- "$@"
#   torch_start --strategy file_system --workers 3 --hold-batches 2
#   torch_settle
#   snap fs                  # $SHMTEST_TMP/fs.json and fs.txt
#   json_check "$SHMTEST_TMP/fs.json" "j['groups'][0]['main_pid'] == $MAIN" "..."
#
# Two stacks, chosen by TORCH_STACK (tests/meson.build runs each torch test in
# both, the second as NAME-2.x):
#   host  /usr/bin/python3 with Debian 12's python3-torch 1.13 (the default);
#   2.x   Debian 13's python3-torch 2.6 in the root tests/stack/rootfs.sh
#         builds and caches, run by chroot. In the test's private mount
#         namespace the root is bound read-only onto itself, with the test's
#         tmpfs bound at its /dev/shm, a /proc, the host's /sys (torch reads
#         the CPUs there) and a tmpfs /tmp holding the workload.
# TORCH_CMD is the command that runs the workload (add its arguments);
# TORCH_WORKER_COMM is what a DataLoader worker's comm is on the stack
# (torch >= 2.5 names its workers pt_data_worker; 1.13 leaves python3).
# The test's own helpers (JSON checks) always use the host's python, PY.
#
# The job is started the way an interactive shell starts it: in its own
# process group, whose leader is the main process. Its stdin is a FIFO this
# script holds open: torch_release closes it, and the workload goes on
# (--iterate-all) or exits. Every process of the job is killed when the test
# exits, including torch_shm_managers reparented away from their workers
# (found by their mount namespace, which is the test's private one).

PY=/usr/bin/python3
_TORCH_SRC=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
WORKLOAD=$_TORCH_SRC/tests/torch/workload.py
TORCH_STACK=${TORCH_STACK:-host}
TORCH_ROOT=
TORCH_CMD=("$PY" "$WORKLOAD")
TORCH_WORKER_COMM=python3
_TORCH_N=0

# torch_need: root, a private mount namespace, python3 with torch, setsid,
# pgrep; for the 2.x stack its root (built now if it is not yet) and chroot.
torch_need() {
    need_root
    need_unshare
    need "$PY" setsid pgrep stat
    [ -f "$WORKLOAD" ] || fail "no workload at $WORKLOAD"
    case $TORCH_STACK in
    host)
        # Found, not imported: an import takes seconds, and this runs twice
        # (before and after the test enters its namespaces); the workload
        # imports it, and a torch that is there but broken fails the test.
        "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' \
            >/dev/null 2>&1 || _lib_missing "python3-torch (no torch module for $PY)"
        ;;
    2.x)
        need chroot flock
        bash "$_TORCH_SRC/tests/stack/rootfs.sh" --check || need debootstrap
        local log
        log=$(mktemp /tmp/shmwatch-rootfs.XXXXXX)
        TORCH_ROOT=$(bash "$_TORCH_SRC/tests/stack/rootfs.sh" 2>"$log") ||
            _lib_missing "the PyTorch 2.x root (tests/stack/rootfs.sh: $(tail -n 3 "$log" | tr '\n' ' '))"
        rm -f "$log"
        export TORCH_ROOT
        ;;
    *) fail "TORCH_STACK=$TORCH_STACK: expected host or 2.x" ;;
    esac
    _torch_stack_cmd
}

# The workload's command for the stack.
_torch_stack_cmd() {
    if [ "$TORCH_STACK" = 2.x ]; then
        TORCH_CMD=(chroot "$TORCH_ROOT" /usr/bin/python3 /tmp/shmwatch-workload.py)
        TORCH_WORKER_COMM=pt_data_worker
    fi
}

# torch_stack_setup: the 2.x root's mounts in the test's private mount
# namespace (once; torch_start calls it). Nothing to do for the host stack.
torch_stack_setup() {
    [ "$TORCH_STACK" = 2.x ] && [ -z "${_TORCH_SETUP:-}" ] || return 0
    [ -n "${IN_SHM_NS:-}" ] || fail "torch_stack_setup: not in the test's private mount namespace"
    _torch_stack_cmd
    local r=$TORCH_ROOT
    mount --bind "$r" "$r" && mount -o remount,bind,ro "$r" ||
        fail "cannot bind $r read-only"
    mount -t proc proc "$r/proc" || fail "cannot mount /proc in $r"
    mount --bind /sys "$r/sys" || fail "cannot bind /sys in $r"
    mount -t tmpfs -o size=16m,mode=1777 tmpfs "$r/tmp" || fail "cannot mount /tmp in $r"
    cp "$WORKLOAD" "$r/tmp/shmwatch-workload.py" || fail "cannot copy the workload into $r"
    torch_bind_shm
    _TORCH_SETUP=1
}

# torch_bind_shm: (again) the test's /dev/shm at the 2.x root's /dev/shm,
# after the test mounted another tmpfs there.
torch_bind_shm() {
    [ "$TORCH_STACK" = 2.x ] || return 0
    umount "$TORCH_ROOT/dev/shm" 2>/dev/null
    mount --bind /dev/shm "$TORCH_ROOT/dev/shm" || fail "cannot bind /dev/shm in $TORCH_ROOT"
    [ "$(stat -c %d /dev/shm)" = "$(stat -c %d "$TORCH_ROOT/dev/shm")" ] ||
        fail "$TORCH_ROOT/dev/shm is not the test's tmpfs"
}

# torch_start ARGS...: starts the workload with ARGS, waits (at most 180 s: with
# the spawn method every worker imports torch, long on a loaded machine) for
# its READY line and sets MAIN (its pid), WORKERS (python list), WORKER_PIDS
# (space separated), STUCK (the stuck worker's pid or None), HELD and
# HELD_BYTES (batches the main holds, their tensor bytes), READY_JSON (a file)
# and TORCH_OUT, TORCH_ERR (its stdout and stderr files).
torch_start() {
    _lib_tmp
    _TORCH_N=$((_TORCH_N + 1))
    local base=$SHMTEST_TMP/torch.$_TORCH_N
    TORCH_OUT=$base.out
    TORCH_ERR=$base.err
    READY_JSON=$base.ready.json
    rm -f "$base.in"
    mkfifo "$base.in" || fail "mkfifo failed"
    exec {TORCH_IN}<>"$base.in"
    [ "$_TORCH_N" -gt 1 ] || on_exit 'torch_cleanup; [ "$rc" -eq 0 ] || torch_dump'
    torch_stack_setup
    setsid "${TORCH_CMD[@]}" "$@" <"$base.in" >"$TORCH_OUT" 2>"$TORCH_ERR" {TORCH_IN}>&- &
    TORCH_PID=$!
    if ! wait_for 'grep -q "^READY " "$TORCH_OUT" || _lib_zombie "$TORCH_PID"' 180 ||
        ! grep -q '^READY ' "$TORCH_OUT"; then
        local rc=running
        if _lib_zombie "$TORCH_PID"; then
            rc=0
            wait "$TORCH_PID" 2>/dev/null || rc=$?
        fi
        fail "workload $* did not print READY (exit status $rc): $(tail -n 5 "$TORCH_ERR")"
    fi
    sed -n 's/^READY //p' "$TORCH_OUT" >"$READY_JSON"
    eval "$("$PY" - "$READY_JSON" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("MAIN=%d" % r["main_pid"])
print("WORKERS='%s'" % json.dumps(r["worker_pids"]))
print("WORKER_PIDS='%s'" % " ".join(map(str, r["worker_pids"])))
print("STUCK=%s" % (r["stuck_worker_pid"] or "None"))
print("HELD=%d" % r["batches_held"])
print("HELD_BYTES=%d" % r["total_bytes"])
PY
)"
    [ "$MAIN" = "$TORCH_PID" ] || fail "the main process $MAIN is not the started one ($TORCH_PID)"
    [ "$(ps -o pgid= -p "$MAIN" | tr -d ' ')" = "$MAIN" ] ||
        fail "the main process $MAIN does not lead its process group"
}

# torch_release: closes the job's stdin (it goes on after READY).
torch_release() {
    exec {TORCH_IN}>&-
}

# torch_wait_exit [TIMEOUT]: waits for the main process to exit; sets TORCH_RC.
torch_wait_exit() {
    wait_for "_lib_zombie $TORCH_PID" "${1:-60}" || fail "the job did not exit within ${1:-60} s"
    TORCH_RC=0
    wait "$TORCH_PID" 2>/dev/null || TORCH_RC=$?
}

# managers_of PID...: the torch_shm_managers whose parent is one of PIDs.
managers_of() {
    local p
    for p; do pgrep -x -P "$p" torch_shm_manag; done | sort -n
}

# torch_fs_job WORKERS: a file_system job (fork, WORKERS workers, two
# batches held by the main) started and settled, each worker with its
# torch_shm_manager; MANAGER_PIDS lists those (space separated).
torch_fs_job() {
    torch_start --strategy file_system --start-method fork --workers "$1" --hold-batches 2
    torch_settle "$1"
    # shellcheck disable=SC2086 # a list of pids
    MANAGER_PIDS=$(managers_of $WORKER_PIDS | tr '\n' ' ')
    [ "$(echo "$MANAGER_PIDS" | wc -w)" -eq "$1" ] ||
        fail "expected $1 torch_shm_managers, found: $MANAGER_PIDS"
}

# torch_kill_job: SIGKILL to the job's main, workers and torch_shm_managers
# (MANAGER_PIDS: each in a session of its own, so a kill of the job's
# process group misses them), as an OOM kill or a container stop does; all
# are stopped first, so that none reacts to the others' deaths. Returns
# once they are gone and the main is reaped.
torch_kill_job() {
    local all="$MAIN $WORKER_PIDS $MANAGER_PIDS"
    # shellcheck disable=SC2086 # a list of pids
    kill -STOP $all || fail "kill -STOP failed"
    # shellcheck disable=SC2086
    kill -KILL $all || fail "kill -KILL failed"
    wait_for "gone $all" 10 || fail "the job's processes did not die"
    torch_wait_exit 5
}

# pylist WORD...: the words as a Python list of ints.
pylist() {
    local IFS=,
    echo "[$*]"
}

# torch_settle [WORKERS_WITH_MANAGERS]: waits (at most 15 s) until the job is
# quiet: the mount's used bytes unchanged for 0.3 s and, with an argument, that
# many torch_shm_managers started by the workers.
torch_settle() {
    local want=${1:-0} last=-1 now same=0 i
    for ((i = 0; i < 150; i++)); do
        now=$(fs_used_bytes /dev/shm)
        if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
        last=$now
        # shellcheck disable=SC2086 # a list of pids
        if [ "$same" -ge 3 ] && [ "$(managers_of $WORKER_PIDS | wc -l)" -ge "$want" ]; then
            # shellcheck disable=SC2086
            gone $MAIN $WORKER_PIDS && fail "the job died while it held its batches ($(_torch_exit_status))"
            return 0
        fi
        sleep 0.1
    done
    fail "the job did not settle within 15 s"
}

# snap NAME [ARGS]: shmwatch --json ARGS into $SHMTEST_TMP/NAME.json, and the
# text report into NAME.txt.
snap() {
    local name=$1
    shift
    "$SHMWATCH" --json "$@" >"$SHMTEST_TMP/$name.json" || fail "shmwatch --json exited $?"
    "$SHMWATCH" --once "$@" >"$SHMTEST_TMP/$name.txt" || fail "shmwatch --once exited $?"
}

# Processes of this test: in its private mount namespace (python3, workers
# named pt_* by torch 2.x, the torch_shm_managers).
_torch_ours() {
    local p comm
    for p in $(pids_with_link ns/mnt "$(readlink /proc/self/ns/mnt)"); do
        [ "$p" != $$ ] && [ "$p" != "$BASHPID" ] || continue
        read -r comm 2>/dev/null <"/proc/$p/comm" || continue
        case $comm in python3 | pt_* | torch_shm_manag) echo "$p" ;; esac
    done
}

torch_cleanup() {
    local pids p
    pids=$(_torch_ours)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086 # lists of pids
    kill -KILL $pids 2>/dev/null
    for p in $pids; do
        wait_for "_lib_zombie $p" 5 || true
    done
    [ -z "${TORCH_PID:-}" ] || wait "$TORCH_PID" 2>/dev/null
}

# How the main process ended, if it did.
_torch_exit_status() {
    local p alive=
    for p in $MAIN $WORKER_PIDS; do _lib_zombie "$p" || alive+=" $p"; done
    echo "still alive:${alive:- none}; main: $(cat "/proc/$MAIN/stat" 2>/dev/null | awk '{ print "state", $3 }')"
}

torch_dump() {
    [ -n "${TORCH_ERR:-}" ] && [ -s "$TORCH_ERR" ] || return 0
    echo "--- workload stderr (last lines) ---" >&2
    tail -n 15 "$TORCH_ERR" >&2
}
