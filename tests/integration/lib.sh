# Shell helpers for shmwatch's integration tests (bash; source it, do not run it).
#
#   . "$(dirname "$0")/lib.sh"
#   need_root; need_unshare
#   test_ns 64m -- "$@"                      # or test_ns 64m --pid -- "$@": see below
#   scene_start --workers 2 --orphans 3      # exports MANIFEST, SCENE_PID
#   "$SHMWATCH" --json >"$SHMTEST_TMP/snap.json"
#   json_check "$SHMTEST_TMP/snap.json" 'len(j["segments"]) == 11' "every segment listed"
#
# Environment from tests/meson.build: SHMWATCH, SHMSCENE, SRCDIR, FIXTURES.
# Exit status follows meson: 0 pass, 1 fail, 77 skip. With CI=true a missing
# requirement fails instead of skipping. Everything here is bounded in time; cleanup
# runs on exit (add your own with on_exit, not with trap ... EXIT).

LIB_SCRIPT=$(basename "$0")
SHMTEST_TMP=${SHMTEST_TMP:-}
# Debian's programs first: the tests drive Debian's python3 (with its torch
# and yaml), not one a user's PATH puts before it (pyenv, conda, a venv).
case $PATH in
/usr/bin:*) ;;
*) export PATH=/usr/bin:$PATH ;;
esac
# The mark of this test's run, set by its outermost shell and inherited by
# every process it starts (its namespaces, tmux panes, setpriv'd children):
# tests run side by side, and what a test ends at its exit is only its own.
if [ -z "${SHMTEST_RUN:-}" ]; then
    SHMTEST_RUN=$LIB_SCRIPT.$$.$(date +%s%N)
    export SHMTEST_RUN
fi
_LIB_SCENES=()
_LIB_ON_EXIT=()
_LIB_NSCENE=0
_LIB_OWN_TMP=

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

ok() {
    echo "ok - $*"
}

_lib_missing() { # WHAT
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $LIB_SCRIPT: needs $1 (CI=true: a missing requirement is a failure)" >&2
        exit 1
    fi
    echo "SKIP: $LIB_SCRIPT: needs $1" >&2
    exit 77
}

# need CMD...: every command must exist (names or paths).
need() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || _lib_missing "$c"
    done
}

need_root() {
    [ "$(id -u)" -eq 0 ] || _lib_missing "root"
}

# The program with its test hooks (tests/helpers/shmwatch_hooked.c: the same
# libraries, pauses and waits chosen by SHMWATCH_TEST_* variables that only it
# reads), for the tests that need it to pause where the shipped one never does.
need_hooked() {
    [ -n "${SHMWATCH_HOOKED:-}" ] && [ -x "$SHMWATCH_HOOKED" ] ||
        _lib_missing "the test build of shmwatch (SHMWATCH_HOOKED, from tests/meson.build)"
}

# The statically linked shmwatch (SHMWATCH_STATIC), which only the plain
# build makes (sanitizers do not link statically, and tests/meson.build then
# registers no test that needs it): a skip, never a failure, without it.
need_static() {
    if [ -z "${SHMWATCH_STATIC:-}" ]; then
        echo "SKIP: $LIB_SCRIPT: no static binary in this build" \
            "(${BUILD_SANITIZE:-?} sanitizers do not link statically); it runs in the plain build" >&2
        exit 77
    fi
}

# A private mount namespace in which tmpfs can be mounted on /dev/shm.
need_unshare() {
    need unshare mount timeout
    unshare -m --propagation private true >/dev/null 2>&1 ||
        _lib_missing "a private mount namespace (unshare -m)"
    unshare -m --propagation private mount -t tmpfs -o size=1m tmpfs /dev/shm >/dev/null 2>&1 ||
        _lib_missing "tmpfs mounts in a private mount namespace"
}

# in_shm_ns SIZE SCRIPT [ARGS]: runs bash SCRIPT in a private mount namespace with a
# fresh tmpfs of SIZE on /dev/shm and a private tmpfs on /tmp/shmwatch-test (exported
# as SHMTEST_TMP, mode 1777); IN_SHM_NS=1 tells the script where it is. Bounded by
# SHM_NS_TIMEOUT seconds (default 540, under meson's 600; tests/meson.build gives
# the real stacks' tests more). Returns its exit status.
in_shm_ns() {
    local size=$1 rc=0
    shift
    timeout --kill-after=10 "${SHM_NS_TIMEOUT:-540}" \
        unshare -m --propagation private bash -c '
            set -e
            mount -t tmpfs -o "size=$1,mode=1777" tmpfs /dev/shm
            mkdir -p /tmp/shmwatch-test
            mount -t tmpfs -o size=64m,mode=1777 tmpfs /tmp/shmwatch-test
            shift
            export IN_SHM_NS=1 SHMTEST_TMP=/tmp/shmwatch-test
            exec bash "$@"' in_shm_ns "$size" "$@" || rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL: $LIB_SCRIPT: timed out after ${SHM_NS_TIMEOUT:-540} s" >&2
    fi
    return "$rc"
}

# in_pid_ns SCRIPT [ARGS]: re-executes bash SCRIPT as pid 1 of a private pid
# namespace with its own /proc, so that it sees only its own processes; IN_PID_NS=1
# tells the script where it is. Like a container started with docker run
# --shm-size, it gets a fresh tmpfs on /dev/shm (of the size /dev/shm has here),
# mounted by its pid 1 in a mount namespace of its own: private to it, so that
# shmwatch inside can still prove orphans by the pids in their names (on a
# /dev/shm shared with processes outside it cannot). Skips loudly when no such
# namespace can be made. Does not return.
in_pid_ns() {
    unshare -p -f --mount-proc true 2>/dev/null || _lib_missing "a private pid namespace"
    local size
    size=$(stat -f -c '%b %S' /dev/shm | awk '{ printf "%.0f", $1 * $2 }')
    IN_PID_NS=1 exec unshare -p -f --mount-proc unshare -m --propagation private bash -c '
        set -e
        mount -t tmpfs -o "size=$1,mode=1777" tmpfs /dev/shm
        shift
        exec bash "$@"' in_pid_ns "$size" "$@"
}

# test_ns SIZE [--pid] -- ARGS: the preamble of a test that runs in private
# namespaces. Outside them it re-executes the script ($0) with ARGS under
# in_shm_ns SIZE and exits with its status; inside, with --pid, it then
# re-executes it once more as pid 1 of a private pid namespace (in_pid_ns).
# Returns only in the script's final place (IN_SHM_NS, and IN_PID_NS with --pid).
test_ns() {
    local size=$1 pid='' rc=0
    shift
    if [ "${1:-}" = --pid ]; then
        pid=1
        shift
    fi
    [ "${1:-}" = -- ] || fail "test_ns: SIZE [--pid] -- ARGS"
    shift
    if [ -z "${IN_SHM_NS:-}" ]; then
        in_shm_ns "$size" "$0" "$@" || rc=$?
        exit "$rc"
    fi
    [ -z "$pid" ] || [ -n "${IN_PID_NS:-}" ] || in_pid_ns "$0" "$@"
}

# on_tmpfs DIR CMD [ARGS]: runs CMD in a private mount namespace with a fresh
# tmpfs mounted on DIR (made if missing), for a test that watches a mount of
# its own with --mount, which takes only the root of a tmpfs mount. As root,
# or else as root of a user namespace of its own; skips when neither works.
on_tmpfs() {
    local dir=$1 userns=()
    shift
    mkdir -p "$dir" || fail "on_tmpfs: cannot make $dir"
    [ "$(id -u)" -eq 0 ] || userns=(-r)
    unshare "${userns[@]}" -m --propagation private true >/dev/null 2>&1 ||
        _lib_missing "a private mount namespace (unshare ${userns[*]} -m)"
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare "${userns[@]}" -m --propagation private bash -c '
        mount -t tmpfs -o size=16m,mode=1777 tmpfs "$1" || exit 125
        shift
        exec "$@"' on_tmpfs "$dir" "$@"
}

# pause_gate: sets GATE, a fresh path for SHMWATCH_TEST_PAUSE_UNTIL. The hooked
# program (tests/helpers/shmwatch_hooked.c) then ends its pause before the
# unlinks or signals as soon as the test, its move made in the window, opens
# the gate (: >"$GATE"); SHMWATCH_TEST_PAUSE_BEFORE_* stays the bound.
pause_gate() {
    _lib_tmp
    GATE=$SHMTEST_TMP/gate.$$.$RANDOM$RANDOM
    rm -f "$GATE"
}

# on_exit CMD: run CMD (eval'd) when the script exits, last registered first.
on_exit() {
    _LIB_ON_EXIT+=("$1")
}

_lib_tmp() {
    if [ -z "$SHMTEST_TMP" ] || [ ! -d "$SHMTEST_TMP" ] || [ ! -w "$SHMTEST_TMP" ]; then
        SHMTEST_TMP=$(mktemp -d /tmp/shmwatch-test.XXXXXX) || fail "mktemp failed"
        chmod 1777 "$SHMTEST_TMP"
        _LIB_OWN_TMP=$SHMTEST_TMP
    fi
    export SHMTEST_TMP
}

assert_eq() { # ACTUAL EXPECTED MSG
    if [ "$1" = "$2" ]; then
        ok "$3"
    else
        fail "$3: got '$1', expected '$2'"
    fi
}

# _lib_us: sets _lib_now to the time in microseconds, from bash's own clock
# (EPOCHREALTIME: seconds, the locale's decimal point, six digits after it):
# a poll starts no process to read the time.
# _lib_deadline SECONDS: sets _lib_end to now plus SECONDS (may be
# fractional). The callers make both variables local.
_lib_us() {
    _lib_now=$((10#${EPOCHREALTIME//[!0-9]/}))
}
_lib_deadline() {
    local whole=${1%%.*} frac
    frac=${1#"$whole"}
    frac=${frac#.}000000
    _lib_us
    _lib_end=$((_lib_now + 10#${whole:-0} * 1000000 + 10#${frac:0:6}))
}

# _lib_pause SECONDS: the pause between two polls, without starting a process
# where it can: a read with a time limit on a FIFO that nobody writes to
# (SHMTEST_TMP/.pause, made at the first pause); sleep where no FIFO can be
# made (once refused, not tried again for that directory).
_lib_pause() {
    local fifo=${SHMTEST_TMP:-}/.pause
    if [ -n "${SHMTEST_TMP:-}" ] && [ "${_LIB_NO_FIFO:-}" != "$SHMTEST_TMP" ] &&
        { [ -p "$fifo" ] || mkfifo "$fifo" 2>/dev/null || { _LIB_NO_FIFO=$SHMTEST_TMP && false; }; }; then
        read -r -t "$1" <>"$fifo" || true
    else
        sleep "$1"
    fi
}

# wait_for CMD TIMEOUT_S: polls CMD (eval'd); returns 0 as soon as it succeeds,
# 1 when TIMEOUT_S (may be fractional, default 10) passes first. The polls
# come 20 ms apart for the first half second, 50 ms apart up to two seconds,
# 100 ms apart up to five, then 250 ms apart: what comes soon is seen at once,
# and a long wait leaves the CPU to what it waits for (the tests run side by
# side on few cores, and a poll starts processes: a tmux capture, a python3
# that reads a store).
wait_for() {
    local _lib_cmd=$1 _lib_now _lib_end _lib_start
    _lib_deadline "${2:-10}"
    _lib_start=$_lib_now
    while :; do
        eval "$_lib_cmd" && return 0
        _lib_us
        [ "$_lib_now" -lt "$_lib_end" ] || return 1
        if [ $((_lib_now - _lib_start)) -lt 500000 ]; then
            _lib_pause 0.02
        elif [ $((_lib_now - _lib_start)) -lt 2000000 ]; then
            _lib_pause 0.05
        elif [ $((_lib_now - _lib_start)) -lt 5000000 ]; then
            _lib_pause 0.1
        else
            _lib_pause 0.25
        fi
    done
}

# stays_false CMD SECONDS: the check that something does NOT happen. Polls CMD
# (eval'd) every 20 ms for SECONDS (may be fractional); returns 1 as soon as it
# succeeds, 0 once SECONDS have passed with CMD false at every poll, the last
# poll at or after the deadline.
stays_false() {
    local _lib_cmd=$1 _lib_now _lib_end
    _lib_deadline "$2"
    while :; do
        _lib_us
        eval "$_lib_cmd" && return 1
        [ "$_lib_now" -lt "$_lib_end" ] || return 0
        _lib_pause 0.02
    done
}

# json_check JSONFILE PYEXPR MSG [PYEXPR MSG]...: evaluates each PYEXPR in turn with
# /usr/bin/python3, where j is the parsed JSON, man the parsed $MANIFEST (or None), env
# os.environ and page the page size. Prints "ok - MSG" for each, or fails at the first
# false one with its MSG and the values that made it false: the operands of a failed
# comparison, the failed clause of an `and`, the first elements that break an
# all(... for ...). Several checks of one file in one call read it once, in one
# Python (whose start costs more than most checks).
json_check() {
    [ $# -ge 3 ] && [ $(($# % 2)) -eq 1 ] || fail "json_check needs JSONFILE PYEXPR MSG [PYEXPR MSG]..."
    /usr/bin/python3 - "$@" <<'PY' || exit 1
import ast, json, os, sys

path = sys.argv[1]
checks = list(zip(sys.argv[2::2], sys.argv[3::2]))
expr, msg = checks[0]


def short(v):
    r = repr(v)
    return r if len(r) <= 400 else r[:400] + "..."


def load_manifest(p):
    if not p or not os.path.exists(p):
        return None
    m = {"main": None, "workers": [], "stuck": [], "orphan_creator": [], "churn": [],
         "zombies": [], "segments": []}
    keys = {"worker": "workers", "stuck": "stuck", "orphan_creator": "orphan_creator",
            "churn": "churn", "zombie": "zombies"}
    with open(p) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "main":
                m["main"] = int(w[1])
            elif w[0] in keys:
                m[keys[w[0]]].append(int(w[1]))
            elif w[0] == "segment":
                raw = bytes.fromhex(w[5])
                m["segments"].append({"mode": w[1], "creator": int(w[2]), "size": int(w[3]),
                                      "touched": int(w[4]), "raw": raw,
                                      "name": raw.decode("utf-8", "replace")})
    return m


def fail(lines):
    print("FAIL: " + msg, file=sys.stderr)
    for l in lines:
        print("  " + l, file=sys.stderr)
    sys.exit(1)


try:
    with open(path, "rb") as f:
        data = f.read()
except OSError as e:
    fail([f"cannot read {path}: {e.strerror}"])
try:
    j = json.loads(data)
except ValueError as e:
    fail([f"{path} is not valid JSON: {e}"])

ns = {"j": j, "man": load_manifest(os.environ.get("MANIFEST")), "env": os.environ,
      "page": os.sysconf("SC_PAGE_SIZE")}


def src(node):
    return ast.get_source_segment(expr, node) or ast.dump(node)


def ev(node, env):
    return eval(compile(ast.Expression(node), "<check>", "eval"), env)


def explain(node, env, depth=0):
    if depth > 6:
        return [f"{src(node)} = {short(ev(node, env))}"]
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for v in node.values:
            if not ev(v, env):
                return explain(v, env, depth + 1)
    if isinstance(node, ast.Compare):
        return [f"{src(n)} = {short(ev(n, env))}" for n in [node.left] + node.comparators
                if not isinstance(n, ast.Constant)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [f"{src(node.operand)} = {short(ev(node.operand, env))}"]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "all" and len(node.args) == 1
            and isinstance(node.args[0], ast.GeneratorExp)):
        g = node.args[0]
        names = sorted({n.id for c in g.generators for n in ast.walk(c.target)
                        if isinstance(n, ast.Name)})
        gens = [ast.comprehension(c.target, c.iter, list(c.ifs), c.is_async)
                for c in g.generators]
        gens[-1].ifs.append(ast.UnaryOp(ast.Not(), g.elt))
        probe = ast.ListComp(ast.Dict([ast.Constant(n) for n in names],
                                      [ast.Name(n, ast.Load()) for n in names]), gens)
        bad = ev(ast.fix_missing_locations(probe), env)
        out = [f"{len(bad)} element(s) fail {src(g.elt)}"]
        for b in bad[:3]:
            out.append("where " + ", ".join(f"{k} = {short(v)}" for k, v in b.items()))
            out += ["  " + l for l in explain(g.elt, {**env, **b}, depth + 1)]
        return out
    return [f"{src(node)} = {short(ev(node, env))}"]


for expr, msg in checks:
    tree = ast.parse(expr, mode="eval")
    try:
        result = ev(tree.body, ns)
    except Exception as e:
        fail([f"{expr}: {type(e).__name__}: {e}"])
    if result:
        print("ok - " + msg, flush=True)
        continue
    try:
        fail(explain(tree.body, ns))
    except SystemExit:
        raise
    except Exception as e:
        fail([f"{expr} is false ({type(e).__name__} while explaining: {e})"])
PY
}

# manifest_pids KEY: the pids of the manifest lines "KEY PID" (main, worker, stuck,
# orphan_creator, churn, zombie).
manifest_pids() {
    awk -v k="$1" '$1 == k { print $2 }' "${MANIFEST:?no scene started}"
}

# manifest_segments [MODE]: "mode creator size touched hexname" lines, all or of MODE.
manifest_segments() {
    awk -v m="${1:-}" '$1 == "segment" && (m == "" || $2 == m) { print $2, $3, $4, $5, $6 }' \
        "${MANIFEST:?no scene started}"
}

# unhex HEX: writes the bytes HEX encodes (no newline added).
unhex() {
    local hex=$1 out="" i
    for ((i = 0; i < ${#hex}; i += 2)); do
        out+="\\x${hex:i:2}"
    done
    printf '%b' "$out"
}

# gone PID...: true when every PID has exited (gone or a zombie).
gone() {
    local p
    for p; do _lib_zombie "$p" || return 1; done
}

# wait_reparented PID PARENT [TIMEOUT_S]: waits (default 10 s) until PARENT is no
# longer PID's parent (PARENT died and PID was re-parented, or PID is gone).
wait_reparented() {
    wait_for "[ \"\$(ps -o ppid= -p $1 | tr -d ' ')\" != $2 ]" "${3:-10}"
}

# zombie_parent COUNT_FILE: starts a process that keeps a zombie child (never
# reaped) and writes to COUNT_FILE how many SIGCHLD it has received since the
# child died. Sets ZOMBIE_PARENT and ZOMBIE (the child's pid).
zombie_parent() {
    local count=$1
    /usr/bin/python3 -c 'import os, signal, sys, time
path, n = sys.argv[1], 0
child = os.fork()
if child == 0:
    os._exit(0)
# Its exit is not counted: the handler goes in once it is a zombie.
while open("/proc/%d/stat" % child).read().rsplit(")", 1)[1].split()[0] != "Z":
    time.sleep(0.01)
def count(sig, frame):
    global n
    n += 1
    with open(path + ".tmp", "w") as f:
        f.write(str(n))
    os.rename(path + ".tmp", path)
signal.signal(signal.SIGCHLD, count)
with open(path + ".tmp", "w") as f:
    f.write("0")
os.rename(path + ".tmp", path)
time.sleep(300)' "$count" </dev/null >/dev/null 2>&1 &
    ZOMBIE_PARENT=$!
    on_exit "kill -KILL $ZOMBIE_PARENT 2>/dev/null; wait $ZOMBIE_PARENT 2>/dev/null"
    wait_for "[ -s $count ]" 30 || fail "the counting parent did not start"
    ZOMBIE=$(ps -o pid= --ppid "$ZOMBIE_PARENT" | tr -d ' ')
    [ "$(ps -o stat= -p "$ZOMBIE" | cut -c1)" = Z ] || fail "no zombie child of $ZOMBIE_PARENT"
}

# hold_new_file PATH [SIZE]: a child of this script (python3) creates PATH
# (4 KiB written; SIZE bytes long when given, the rest a hole) and holds it
# open until killed. Sets HOLDER once it holds it.
hold_new_file() {
    local ready=$SHMTEST_TMP/holder.$RANDOM$RANDOM
    /usr/bin/python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
if sys.argv[3]:
    os.ftruncate(fd, int(sys.argv[3]))
os.write(fd, b"x" * 4096)
open(sys.argv[2], "w").close()
time.sleep(300)' "$1" "$ready" "${2:-}" </dev/null >/dev/null 2>&1 &
    HOLDER=$!
    on_exit "kill -KILL $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null"
    wait_for "[ -e $ready ]" 30 || fail "the holder of $1 did not start"
}

# pid_to_newcomer PID: once PID has died and been reaped, hands PID to a new
# process (a sleep) through ns_last_pid; needs a private pid namespace
# (in_pid_ns) where this script is pid 1. Sets NEWCOMER.
pid_to_newcomer() {
    wait_for "[ ! -e /proc/$1 ]" 10 || fail "pid $1 was not reaped"
    echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid
    sleep 300 &
    NEWCOMER=$!
    on_exit "kill -KILL $NEWCOMER 2>/dev/null; wait $NEWCOMER 2>/dev/null"
    assert_eq "$NEWCOMER" "$1" "a new process took pid $1"
    # Forked, it is this shell until it has exec'd: a sleep from here on.
    wait_for "[ \"\$(cat /proc/$1/comm 2>/dev/null)\" = sleep ]" 10 ||
        fail "the newcomer on pid $1 is not running sleep: $(cat "/proc/$1/comm" 2>/dev/null)"
}

# full_file PATH: an empty regular file PATH on a tmpfs of its own (mounted on
# PATH's directory) that is full, so that it opens but every write to it fails
# with ENOSPC, as on a full disk. Only in a private mount namespace (in_shm_ns).
full_file() {
    local dir
    dir=$(dirname "$1")
    [ -n "${IN_SHM_NS:-}" ] || fail "full_file needs a private mount namespace"
    mkdir -p "$dir"
    mount -t tmpfs -o size=16k,mode=0755 tmpfs "$dir" || fail "cannot mount a tmpfs on $dir"
    : >"$1"
    head -c 1M /dev/zero >"$dir/.fill" 2>/dev/null
    printf x >>"$1" 2>/dev/null && fail "$1 still takes writes"
    : >"$1"
}

# dead_pid: prints the pid of a process that has exited and been reaped (the
# creator of an orphan to be).
# start_in_root ROOT: a process whose root is ROOT (chroot), standing for a
# container's, in the background for 120 s; sets CTR_PID. Needs python3.
start_in_root() {
    local root=$1
    /usr/bin/python3 -c '
import os, sys, time
os.chroot(sys.argv[1])
os.chdir("/")
time.sleep(120)' "$root" </dev/null >/dev/null 2>&1 &
    CTR_PID=$!
    on_exit "kill -KILL $CTR_PID 2>/dev/null; wait $CTR_PID 2>/dev/null; true"
    wait_for '[ "$(readlink /proc/$CTR_PID/root)" = "$root" ]' 30 ||
        fail "the chrooted process did not start"
}

dead_pid() {
    sh -c 'exit 0' &
    wait "$!"
    echo "$!"
}

# The command prefix that runs a command as nobody.
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# clean_earlier_run PID LABEL DIR OLD... -- KEPT...: shmwatch clean --pid PID
# --yes --orphan-min-age 2 in a restarted container (tests pid_restart_*.sh),
# its output in $SHMTEST_TMP/clean.txt. Each of OLD, names in DIR (the
# container's /dev/shm as the test sees it), must be listed as in LABEL and
# left by an earlier run, and be gone; nothing else is removed, and every one
# of KEPT is still there.
clean_earlier_run() {
    local pid=$1 label=$2 dir=$3 out=$SHMTEST_TMP/clean.txt s n=0
    shift 3
    "$SHMWATCH" clean --pid "$pid" --yes --orphan-min-age 2 >"$out" 2>&1 ||
        fail "clean --pid exited $?: $(cat "$out")"
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        grep -F "  /dev/shm/$1 (in $label) " "$out" |
            grep -q 'orphan: held by nobody, left by an earlier run of its container (restarted at ' ||
            fail "clean --pid does not give $1 as left by an earlier run: $(cat "$out")"
        [ ! -e "$dir/$1" ] || fail "$1 is still there: $(cat "$out")"
        n=$((n + 1))
        shift
    done
    [ "$(grep -c '^removed ' "$out")" -eq "$n" ] || fail "clean removed other than the $n leftovers: $(cat "$out")"
    [ $# -eq 0 ] || shift
    for s; do
        [ -e "$dir/$s" ] || fail "$s of the running container is gone: $(cat "$out")"
    done
}

# fs_used_bytes PATH: used bytes of the file system at PATH, as statvfs (df) sees it.
fs_used_bytes() {
    stat -f -c '%b %f %S' "$1" | awk '{ printf "%.0f\n", ($1 - $2) * $3 }'
}

# scene_start ARGS...: starts $SHMSCENE ARGS with --manifest in the background, waits
# (at most 30 s) for "ready", exports MANIFEST, SCENE_PID and SCENE_LOG. SCENE_PREFIX
# (e.g. "setpriv --reuid=nobody --regid=nogroup --clear-groups") runs it as someone else.
scene_start() {
    [ -n "${SHMSCENE:-}" ] || fail "SHMSCENE is not set (run the test through meson test)"
    _lib_tmp
    _LIB_NSCENE=$((_LIB_NSCENE + 1))
    MANIFEST=$SHMTEST_TMP/scene.$$.$_LIB_NSCENE.manifest
    SCENE_LOG=$SHMTEST_TMP/scene.$$.$_LIB_NSCENE.log
    rm -f "$MANIFEST"
    # shellcheck disable=SC2086 # SCENE_PREFIX is a command line
    ${SCENE_PREFIX:-} "$SHMSCENE" --manifest "$MANIFEST" "$@" </dev/null >"$SCENE_LOG" 2>&1 &
    SCENE_PID=$!
    _LIB_SCENES+=("$SCENE_PID:$MANIFEST")
    export MANIFEST SCENE_PID SCENE_LOG
    if ! wait_for '[ -f "$MANIFEST" ] && [ "$(tail -n 1 "$MANIFEST")" = ready ] ||
            ! kill -0 "$SCENE_PID" 2>/dev/null || _lib_zombie "$SCENE_PID"' 30 ||
        [ ! -f "$MANIFEST" ]; then
        local log
        log=$(head -c 2000 "$SCENE_LOG")
        scene_stop "$SCENE_PID"
        fail "shmscene $* did not become ready within 30 s: ${log:-no output}"
    fi
}

# _lib_zombie PID: true when PID has exited (state Z) or is gone. A process's
# main thread turns Z while its other threads may still be exiting and
# holding its files and mappings (a torch process has dozens): it counts as
# exited only once it is the last thread of its group, so that what it held
# is released by then.
_lib_zombie() {
    local stat tasks
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat=${stat##*) }
    [ "${stat%% *}" = Z ] || return 1
    tasks=(/proc/"$1"/task/*)
    [ ! -e "${tasks[0]}" ] || [ "${#tasks[@]}" -le 1 ]
}

_lib_is_scene_proc() { # PID: a live process running the shmscene binary
    local exe
    exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
    [ "$exe" = "$(readlink -f "$SHMSCENE")" ] && ! _lib_zombie "$1"
}

# scene_stop [PID]: SIGTERM to the scene's main (all started scenes by default), SIGKILL
# after 10 s, reaped; then any worker or stuck worker of it still alive (main was killed
# by the test) is SIGKILLed. Sets SCENE_RC to main's exit status.
scene_stop() {
    local entry pid manifest p i keep=()
    for entry in "${_LIB_SCENES[@]}"; do
        pid=${entry%%:*}
        manifest=${entry#*:}
        if [ -n "${1:-}" ] && [ "$1" != "$pid" ]; then
            keep+=("$entry")
            continue
        fi
        kill -TERM "$pid" 2>/dev/null
        wait_for "_lib_zombie $pid" 10 || kill -KILL "$pid" 2>/dev/null
        SCENE_RC=0
        wait "$pid" 2>/dev/null || SCENE_RC=$?
        [ -f "$manifest" ] || continue
        for p in $(awk '$1 == "worker" || $1 == "stuck" || $1 == "churn" { print $2 }' "$manifest"); do
            _lib_is_scene_proc "$p" && kill -KILL "$p" 2>/dev/null
        done
        for p in $(awk '$1 == "worker" || $1 == "stuck" || $1 == "churn" { print $2 }' "$manifest"); do
            for ((i = 0; i < 250; i++)); do
                _lib_is_scene_proc "$p" || break
                sleep 0.02
            done
        done
    done
    _LIB_SCENES=("${keep[@]}")
}

# own_process PID: true when PID carries this test's run mark (SHMTEST_RUN)
# in its environment: it was started by this test, not by one running beside it.
# pids_with_link LINK TARGET: the pids whose /proc/PID/LINK (ns/pid, exe...)
# reads TARGET, by one find: a readlink per process of a busy machine costs
# seconds of CPU in each poll. TARGET's glob characters are escaped.
pids_with_link() {
    find /proc -mindepth 2 -maxdepth $((2 + $(tr -cd / <<<"$1" | wc -c))) -path "/proc/[0-9]*/$1" \
        -lname "$(printf '%s' "$2" | sed 's/[][*?\\]/\\&/g')" 2>/dev/null | cut -d/ -f3
}

own_process() {
    tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | grep -qxF "SHMTEST_RUN=$SHMTEST_RUN"
}

# _lib_kill_own BINARY: SIGKILL to every process of this test running BINARY.
_lib_kill_own() {
    local p
    for p in $(pgrep -f "^$1( |\$)" 2>/dev/null); do
        own_process "$p" && kill -KILL "$p" 2>/dev/null
    done
    return 0
}

_lib_exit() {
    local rc=$? i
    for ((i = ${#_LIB_ON_EXIT[@]} - 1; i >= 0; i--)); do
        eval "${_LIB_ON_EXIT[i]}" || true
    done
    [ ${#_LIB_SCENES[@]} -eq 0 ] || scene_stop
    # No shmwatch this test started outlives it: a dashboard ended by SIGHUP
    # under LeakSanitizer has been seen to spin in the sanitizer's exit
    # forever, eating the CPU other tests need. Only this test's (its run's
    # mark): the other tests running beside it keep theirs.
    [ -z "${SHMWATCH:-}" ] || _lib_kill_own "$SHMWATCH"
    [ -z "${SHMWATCH_HOOKED:-}" ] || _lib_kill_own "$SHMWATCH_HOOKED"
    [ -z "$_LIB_OWN_TMP" ] || rm -rf "$_LIB_OWN_TMP"
    exit "$rc"
}

trap _lib_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# stream_events FILE EXPR: the event lines of the stream or store FILE (those
# with an "event" key; a line still being written is skipped) for which the
# Python expression EXPR over e holds, one JSON object per line.
stream_events() {
    /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if "event" in e and eval(sys.argv[2]):
        print(json.dumps(e))
PY
}

# store_records DIR EXPR: the records of the recorder's store DIR (its
# *.jsonl; a line still being written is skipped) for which the Python
# expression EXPR over r holds, one JSON object per line; a record that
# lacks what EXPR reads (an event's fields on a snapshot) does not.
store_records() {
    cat "$1"/*.jsonl 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    try:
        if eval(sys.argv[1]):
            print(json.dumps(r))
    except (KeyError, TypeError, IndexError):
        pass' "$2"
}

# nobody_holder NAME: a process of user nobody holding /dev/shm/NAME (1 MiB,
# created by it) open until it is killed; its pid in NOBODY_HOLDER, killed
# at the test's end.
nobody_holder() {
    _lib_tmp
    rm -f "$SHMTEST_TMP/nobody.pid"
    # shellcheck disable=SC2016 # $! and $1 are the inner shell's
    setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all bash -c '
        python3 -c "
import os, sys, time
fd = os.open(\"/dev/shm/\" + sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 1 << 20)
time.sleep(300)" "$2" &
        echo $! >"$1/nobody.pid"
        wait' _ "$SHMTEST_TMP" "$1" &
    wait_for "[ -s '$SHMTEST_TMP/nobody.pid' ] && [ -e '/dev/shm/$1' ]" 15 ||
        fail "the unprivileged holder of $1 did not start"
    NOBODY_HOLDER=$(cat "$SHMTEST_TMP/nobody.pid")
    on_exit "kill -KILL $NOBODY_HOLDER 2>/dev/null; true"
}
