# shellcheck shell=bash
# Memory cgroups for integration tests (bash; source after lib.sh).
#
#   mem_cgroup_create NAME LIMIT_BYTES   sets MEMCG_DIR and MEMCG_VERSION, or
#                                        skips loudly when no memory cgroup can be made
#   memcg_no_swap DIR                    no swap may take the cgroup's pages
#   memcg_kill_all DIR                   kills every process of the cgroup and waits
#                                        (10 s at most) until none is left
#   oom_stage NAME LIMIT SHM_SIZE        the OOM tests' cgroup, namespaces and survivor
#   oom_writer MIB GO                    the OOM tests' writer, killed past the limit
# The cgroup is removed on exit (its processes must be gone by then).

_memcg_own_path() { # VERSION: this process's cgroup path in that hierarchy
    if [ "$1" = 2 ]; then
        awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup
    else
        awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup
    fi
}

# _memcg_make DIR VERSION LIMIT_FILE LIMIT: makes the cgroup DIR with LIMIT written
# to LIMIT_FILE; on success exports MEMCG_DIR and MEMCG_VERSION and removes DIR on exit.
_memcg_make() {
    mkdir -p "$1" 2>/dev/null && echo "$4" >"$1/$3" 2>/dev/null || return 1
    MEMCG_DIR=$1
    MEMCG_VERSION=$2
    on_exit "rmdir '$MEMCG_DIR' 2>/dev/null || true"
    export MEMCG_DIR MEMCG_VERSION
}

mem_cgroup_create() {
    local name=$1 limit=$2 mnt base
    # v1 memory controller (also on hybrid hosts, where v2 has no memory).
    mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
    if [ -n "$mnt" ]; then
        base=$mnt$(_memcg_own_path 1)
        _memcg_make "$base/$name" 1 memory.limit_in_bytes "$limit" && return 0
    fi
    mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
    if [ -n "$mnt" ] && grep -qw memory "$mnt/cgroup.controllers" 2>/dev/null; then
        base=$mnt$(_memcg_own_path 2)
        # A v2 cgroup with processes cannot enable controllers for its children:
        # use a sibling of ours under the parent when ours is not a leaf we can use.
        grep -qw memory "$base/cgroup.subtree_control" 2>/dev/null ||
            echo +memory >"$base/cgroup.subtree_control" 2>/dev/null || base=$mnt
        grep -qw memory "$base/cgroup.subtree_control" 2>/dev/null ||
            echo +memory >"$base/cgroup.subtree_control" 2>/dev/null
        _memcg_make "$base/$name" 2 memory.max "$limit" && return 0
    fi
    _lib_missing "a memory cgroup (v1 or v2) that can be created"
}

memcg_no_swap() {
    if [ "$MEMCG_VERSION" = 1 ]; then
        echo 0 >"$1/memory.swappiness" 2>/dev/null || true
    else
        echo 0 >"$1/memory.swap.max" 2>/dev/null || true
    fi
}

memcg_kill_all() {
    local p
    for p in $(cat "$1/cgroup.procs" 2>/dev/null); do
        kill -KILL "$p" 2>/dev/null || true
    done
    wait_for "[ -z \"\$(cat '$1/cgroup.procs' 2>/dev/null)\" ]" 10 || true
}

# oom_stage NAME LIMIT SHM_SIZE: outside the test's namespaces, makes the
# memory cgroup NAME of LIMIT bytes, without swap (the pages of a file on
# /dev/shm stay charged to it as long as the file lives), and re-executes
# the script ($0) under in_shm_ns SHM_SIZE, exiting with its status: the
# test itself stays outside the cgroup, only what it puts there is charged.
# Inside, every process of the cgroup is killed at exit; SURVIVOR is a
# process of the cgroup that writes nothing (for --pid to watch its
# namespaces and cgroup), MEMCG_PATH the cgroup as /proc/PID/cgroup names it.
oom_stage() {
    if [ -z "${IN_SHM_NS:-}" ]; then
        mem_cgroup_create "$1" "$2"
        memcg_no_swap "$MEMCG_DIR"
        in_shm_ns "$3" "$0"
        exit $?
    fi
    on_exit "memcg_kill_all '$MEMCG_DIR'"
    (exec bash -c 'echo $$ >"$MEMCG_DIR/cgroup.procs" && exec sleep 300') &
    SURVIVOR=$!
    wait_for "grep -q sleep /proc/$SURVIVOR/comm 2>/dev/null" 30 || fail "the survivor did not start"
    MEMCG_PATH=${MEMCG_DIR#/sys/fs/cgroup}
    MEMCG_PATH=${MEMCG_PATH#/memory}
}

# oom_writer MIB GO: starts, in the cgroup, a writer (python3 with
# oom_score_adj 1000: the OOM killer's first choice) that maps a 192 MiB
# file on /dev/shm, writes its first MIB MiB, waits (60 s at most) until the
# file GO exists, then writes every page: past the cgroup's limit, where the
# kernel OOM-kills it (SIGALRM ends it after 120 s). WRITER is its pid
# (python's own, the holder the stream and the recorder see); it prints
# "wrote it all" to $SHMTEST_TMP/writer.out if the limit let it through.
oom_writer() {
    bash -c 'echo $$ >"$MEMCG_DIR/cgroup.procs" && exec "$@"' _ python3 -c '
import mmap, os, signal, sys, time
signal.alarm(120)
with open("/proc/self/oom_score_adj", "w") as f:
    f.write("1000")
fd = os.open("/dev/shm/oom-filler", os.O_RDWR | os.O_CREAT, 0o600)
n = 192 << 20
os.ftruncate(fd, n)
m = mmap.mmap(fd, n)
for off in range(0, int(sys.argv[1]) << 20, 4096):
    m[off] = 1
deadline = time.monotonic() + 60
while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.02)
for off in range(0, n, 4096):
    m[off] = 1
print("wrote it all")
' "$1" "$2" >"$SHMTEST_TMP/writer.out" 2>&1 &
    # shellcheck disable=SC2034 # the caller's
    WRITER=$!
}
