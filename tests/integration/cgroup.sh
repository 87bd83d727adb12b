# Memory cgroups for integration tests (bash; source after lib.sh).
#
#   mem_cgroup_create NAME LIMIT_BYTES   sets MEMCG_DIR and MEMCG_VERSION, or
#                                        skips loudly when no memory cgroup can be made
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
