#!/usr/bin/env bash
# reap's rule for torch_shm_managers, with stand-ins that never exit by
# themselves (a real manager exits 2 s after its last client leaves; a stuck
# one does not): a manager whose only client is an orphaned worker is ended
# after the worker (and after a grace period); one with no client left is
# ended; one serving a live client is left alone, also when that client is
# in a pid namespace reap cannot see, or the manager and its client are in a
# container with a network namespace of its own (reap --pid); a stopped one
# that handles SIGTERM is continued after it (SIGCONT) and ends by it. Runs
# in a private pid namespace so that reap sees only these processes.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
test_ns 64m --pid -- "$@"
_lib_tmp

cat >"$SHMTEST_TMP/mgr.py" <<'PY'
# manager NAME READY: a torch_shm_manager stand-in on the abstract socket NAME.
# client NAME COMM [orphan] READY: connects and sleeps; with orphan, it is a
# worker (comm COMM) whose process group leader has exited.
import ctypes, os, socket, sys, time
libc = ctypes.CDLL(None)
def name(comm):
    libc.prctl(15, ctypes.c_char_p(comm.encode()), 0, 0, 0)  # PR_SET_NAME
def ready(path):
    open(path, "w").close()
mode, addr = sys.argv[1], "\0shmwatch-test-" + os.environ["TAG"] + "-" + sys.argv[2]
if mode == "manager":
    name("torch_shm_manag")
    os.setsid()
    if os.environ.get("TERM_HANDLER"):  # as a real manager, it handles SIGTERM
        import signal
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr)
    s.listen(8)
    ready(sys.argv[3])
    conns = []
    while True:
        conns.append(s.accept()[0])
else:
    comm, path = sys.argv[3], sys.argv[-1]
    if "orphan" in sys.argv[4:-1]:
        os.setpgid(0, 0)
        leader = os.getpid()
        if os.fork() > 0:
            os._exit(0)  # the group's leader goes: ready once it is reaped (10 s at most)
        until = time.monotonic() + 10
        while os.path.exists("/proc/%d" % leader) and time.monotonic() < until:
            time.sleep(0.01)
    name(comm)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(addr)
    ready(path)
    time.sleep(600)
PY
# Abstract socket names are shared by the whole network namespace: unique ones.
export TAG=$(date +%s%N)-$RANDOM
n=0
spawn() { # ARGS...: runs mgr.py ARGS READYFILE in the background, waits for it
    n=$((n + 1))
    local r=$SHMTEST_TMP/ready.$n
    /usr/bin/python3 "$SHMTEST_TMP/mgr.py" "$@" "$r" </dev/null >/dev/null 2>&1 &
    wait_for "[ -e $r ]" 30 || fail "mgr.py $* did not start"
}
pid_of() { # COMM ADDR: the pid of the stand-in with that comm connected to ADDR
    pgrep -f "mgr.py (manager|client) $2( |\$)" | while read -r p; do
        [ "$(cat /proc/"$p"/comm)" = "$1" ] && echo "$p"
    done
}
on_exit 'pkill -KILL -f mgr.py'
# reaps MESSAGE ARGS...: reap ARGS, its output (shown) in out; it must exit 0.
reaps() {
    local msg=$1 rc=0
    shift
    out=$("$SHMWATCH" reap "$@" 2>&1) || rc=$?
    echo "$out"
    assert_eq "$rc" 0 "$msg"
}

spawn manager a
spawn client a pt_data_worker orphan
spawn manager b
spawn client b python3
spawn manager c
ma=$(pid_of torch_shm_manag a) mb=$(pid_of torch_shm_manag b) mc=$(pid_of torch_shm_manag c)
wa=$(pid_of pt_data_worker a)
[ -n "$ma" ] && [ -n "$mb" ] && [ -n "$mc" ] && [ -n "$wa" ] || fail "stand-ins missing"

reaps "reap --dry-run exits 0" --dry-run
grep -q "^  pid $wa (pt_data_worker) .*orphaned worker" <<<"$out" || fail "the orphaned worker is not planned"
grep -q "^  pid $ma (torch_shm_manag) .*its only clients are orphaned workers ($wa)" <<<"$out" ||
    fail "manager a is not planned after its orphaned client"
grep -q "^  pid $mc (torch_shm_manag) .*stuck torch_shm_manager: no client left" <<<"$out" ||
    fail "manager c is not planned as clientless"
grep -q "^  pid $mb (torch_shm_manag) .*serving live clients" <<<"$out" ||
    fail "manager b is not left alone"
sed -n '/^Left alone/,$p' <<<"$out" | grep -q "pid $mb " || fail "manager b is not under Left alone"

reaps "reap exits 0" --yes --timeout 1 --log "$SHMTEST_TMP/actions.log"
grep -q "^ended  *pid $wa (pt_data_worker)  ended by SIGTERM" <<<"$out" || fail "worker not ended"
grep -q "^ended  *pid $ma (torch_shm_manag)  ended by SIGTERM" <<<"$out" || fail "manager a not ended"
grep -q "^ended  *pid $mc (torch_shm_manag)  ended by SIGTERM" <<<"$out" || fail "manager c not ended"
for p in $wa $ma $mc; do
    wait_for "gone $p" 5 || fail "pid $p is still alive"
done
ok "the orphaned worker, the manager it kept waiting and the clientless manager are ended"
! gone "$mb" || fail "manager b was ended"
ok "the manager serving a live client is left alone"

# A stuck manager that handles SIGTERM and is stopped (SIGSTOP, a job
# control stop): the SIGTERM waits until it runs again, so reap follows it
# with SIGCONT, as systemd does, and the manager ends by its own handler.
TERM_HANDLER=1 spawn manager f
mf=$(pid_of torch_shm_manag f)
[ -n "$mf" ] || fail "manager f is missing"
kill -STOP "$mf"
wait_for "[ \"\$(awk '{ print \$3 }' /proc/$mf/stat)\" = T ]" 5 || fail "manager f did not stop"
reaps "reap of the stopped manager exits 0" --yes --timeout 5 --log "$SHMTEST_TMP/actions.log"
grep -q "^ended  *pid $mf (torch_shm_manag)  ended by SIGTERM" <<<"$out" ||
    fail "the stopped manager was not ended by its SIGTERM"
wait_for "gone $mf" 5 || fail "manager f is still alive"
ok "a stopped manager that handles SIGTERM is continued after it, and ends by it"

# A live client beyond reap's sight: manager d and reap in a pid namespace of
# their own, its client out here (one network namespace: the abstract socket
# reaches across). Its connection leads to a socket that is still open, in a
# process reap cannot see: the manager is left alone, never "no client left".
d=$SHMTEST_TMP/d
unshare -p -f --mount-proc bash -c '
    /usr/bin/python3 "$1/mgr.py" manager d "$2.manager" </dev/null >/dev/null 2>&1 &
    m=$!
    timeout 30 bash -c "until [ -e \"\$0\" ]; do sleep 0.05; done" "$2.client" &&
        "$3" reap --yes --timeout 1 >"$2.out" 2>&1
    echo "rc=$? $(kill -0 "$m" 2>/dev/null && echo alive || echo ended)" >"$2.tmp"
    kill -KILL "$m"
    mv "$2.tmp" "$2.status"' nested "$SHMTEST_TMP" "$d" "$SHMWATCH" &
wait_for "[ -e $d.manager ]" 30 || fail "manager d did not start"
/usr/bin/python3 "$SHMTEST_TMP/mgr.py" client d python3 "$d.client" </dev/null >/dev/null 2>&1 &
wait_for "[ -e $d.status ]" 60 || fail "reap in the nested pid namespace did not finish"
cat "$d.out"
assert_eq "$(cat "$d.status")" "rc=0 alive" "reap exits 0 and manager d lives"
grep -q "^  pid 2 (torch_shm_manag) .*whose clients cannot all be seen (a connection to it leads to a socket that a process this search cannot see holds open)" "$d.out" ||
    fail "manager d is not left alone for its unseen client"
ok "a manager whose live client is beyond reap's sight is left alone"

# A manager in a container with a network namespace of its own (as Docker
# gives one), serving a live client there: its connections are listed in
# that namespace's socket table, which reap --pid reads, so the manager is
# left alone as serving that client, never "no client left".
e=$SHMTEST_TMP/e
unshare -n -p -f --mount-proc -m bash -c '
    mount -t tmpfs tmpfs /dev/shm
    /usr/bin/python3 "$1/mgr.py" manager e "$2.manager" </dev/null >/dev/null 2>&1 &
    timeout 30 bash -c "until [ -e \"\$0\" ]; do sleep 0.05; done" "$2.manager" || exit 1
    /usr/bin/python3 "$1/mgr.py" client e python3 "$2.client" </dev/null >/dev/null 2>&1 &
    exec sleep 600' container "$SHMTEST_TMP" "$e" &
holder=$!
wait_for "[ -e $e.client ]" 30 || fail "the container's manager and client did not start"
me=$(pid_of torch_shm_manag e) ce=$(pid_of python3 e)
[ -n "$me" ] && [ -n "$ce" ] || fail "the container's stand-ins are missing"
reaps "reap --pid exits 0" --yes --timeout 1 --pid "$holder"
grep -q "^  pid $me (torch_shm_manag) (in pid $holder) uid 0  torch_shm_manager serving live clients (pids $ce)$" <<<"$out" ||
    fail "the container's manager is not left alone as serving its client"
! gone "$me" || fail "the container's manager was ended"
ok "a manager in a network namespace of its own, serving a live client there, is left alone"
