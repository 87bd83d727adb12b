# Emulated containers for the node-view tests (bash; source after lib.sh and
# cgroup.sh): what a runtime makes, without a runtime.
#
#   scene_ctr TAG LIMIT SHM_SIZE SCENE_ARGS...
#       a container of its own pid and mount namespaces, its own tmpfs of
#       SHM_SIZE at /dev/shm and a memory cgroup docker-<id>.scope of LIMIT
#       bytes, running shmscene SCENE_ARGS inside; sets ID_<TAG> (the 64-hex
#       id), OUTER_<TAG> (the waiting outer unshare, a host process that sees
#       the host's /dev/shm as a runtime's shim does) and MAN_<TAG> (the
#       scene's manifest). Every process of its cgroup is killed on exit.
#   ctr_cgroup LIMIT
#       a memory cgroup docker-<id>.scope of LIMIT bytes, named as Docker's
#       systemd driver names a container's; sets CTR_ID (a fresh 64-hex id)
#       and MEMCG_DIR. Every process in it is killed on exit, before the
#       cgroup is removed.
#   ns_holder NAME [CGROUP_DIR]
#       a bare holder process (in CGROUP_DIR's cgroup when given) in a new
#       mount namespace with its own 16 MiB tmpfs at /dev/shm; sets HOLDER.
#   ctr_host_pid MANIFEST INNER_PID
#       the host pid of a scene's process known inside as INNER_PID.

ctr_cgroup() {
    CTR_ID=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
    [ ${#CTR_ID} -eq 64 ] || fail "cannot make a container id"
    mem_cgroup_create "docker-$CTR_ID.scope" "$1"
    # Before the cgroup is removed (on_exit runs the last registered first):
    # every process in it, a namespace's pid 1 included, killed and gone.
    on_exit "memcg_kill_all '$MEMCG_DIR'"
}

scene_ctr() {
    local tag=$1 limit=$2 size=$3 id man outer
    shift 3
    ctr_cgroup "$limit"
    id=$CTR_ID
    man=$SHMTEST_TMP/$tag.manifest
    # Only the inner processes join the cgroup, once their tmpfs is mounted:
    # a process of a container's cgroup in a namespace that still shows the
    # host's /dev/shm would make it the container's in a test running beside.
    unshare -p -f --mount-proc --propagation private \
        unshare -m --propagation private bash -c 'mount -t tmpfs -o "size=$2" tmpfs /dev/shm &&
            echo $$ >"$1/cgroup.procs" && shift 2 && exec "$@"' \
        _ "$MEMCG_DIR" "$size" "$SHMSCENE" --manifest "$man" "$@" </dev/null \
        >"$SHMTEST_TMP/$tag.log" 2>&1 &
    outer=$!
    on_exit "kill -KILL $outer 2>/dev/null; wait $outer 2>/dev/null; true"
    wait_for '[ -f "$man" ] && [ "$(tail -n 1 "$man")" = ready ]' 30 ||
        fail "container $tag did not start: $(head -c 500 "$SHMTEST_TMP/$tag.log")"
    printf -v "ID_$tag" %s "$id"
    printf -v "OUTER_$tag" %s "$outer"
    printf -v "MAN_$tag" %s "$man"
}

ns_holder() {
    local ready=$SHMTEST_TMP/$1.ready
    # (The cgroup joined once the tmpfs is mounted, as in scene_ctr.)
    unshare -m --propagation private bash -c '
        mount -t tmpfs -o size=16m,mode=1777 tmpfs /dev/shm || exit 1
        [ -z "$2" ] || echo $$ >"$2/cgroup.procs" || exit 1
        : >"$1"
        exec sleep 600' container "$ready" "${2:-}" </dev/null >/dev/null 2>&1 &
    HOLDER=$!
    on_exit "kill -KILL $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null"
    wait_for "[ -e $ready ]" 30 || fail "container $1 did not start"
}

# ctr_host_pid MANIFEST PID: the host pid of the scene process whose pid in its
# own namespace is PID. Tests run side by side, each with its own tmpfs at the
# same SHMTEST_TMP path (test_ns): the manifest a process was given must be
# this test's file, seen through that process's root.
ctr_host_pid() {
    local p
    for p in $(pgrep -f -- "--manifest $1"); do
        [ "/proc/$p/root$1" -ef "$1" ] || continue
        [ "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status" 2>/dev/null)" = "$2" ] && echo "$p"
    done
}
