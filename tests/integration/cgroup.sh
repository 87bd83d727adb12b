# Memory cgroups for integration tests (bash; source after lib.sh).
#
#   mem_cgroup_create NAME LIMIT_BYTES   sets MEMCG_DIR and MEMCG_VERSION, or
#                                        skips loudly when no memory cgroup can be made
#   mem_cgroup_enter PID                 moves PID into it
# The cgroup is removed on exit (its processes must be gone by then).

_memcg_own_path() { # VERSION: this process's cgroup path in that hierarchy
    if [ "$1" = 2 ]; then
        awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup
    else
        awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup
    fi
}

mem_cgroup_create() {
    local name=$1 limit=$2 mnt base
    # v1 memory controller (also on hybrid hosts, where v2 has no memory).
    mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
    if [ -n "$mnt" ]; then
        base=$mnt$(_memcg_own_path 1)
        MEMCG_DIR=$base/$name
        MEMCG_VERSION=1
        if mkdir -p "$MEMCG_DIR" 2>/dev/null && echo "$limit" >"$MEMCG_DIR/memory.limit_in_bytes" 2>/dev/null; then
            on_exit "rmdir '$MEMCG_DIR' 2>/dev/null || true"
            export MEMCG_DIR MEMCG_VERSION
            return 0
        fi
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
        MEMCG_DIR=$base/$name
        MEMCG_VERSION=2
        if mkdir -p "$MEMCG_DIR" 2>/dev/null && echo "$limit" >"$MEMCG_DIR/memory.max" 2>/dev/null; then
            on_exit "rmdir '$MEMCG_DIR' 2>/dev/null || true"
            export MEMCG_DIR MEMCG_VERSION
            return 0
        fi
    fi
    _lib_missing "a memory cgroup (v1 or v2) that can be created"
}

mem_cgroup_enter() {
    echo "$1" >"$MEMCG_DIR/cgroup.procs" || fail "cannot move $1 into $MEMCG_DIR"
}
