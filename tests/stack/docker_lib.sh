# shellcheck shell=bash
# The Docker harness of the integration tests (bash; source it after
# tests/integration/lib.sh, whose fail, on_exit and _lib_missing it uses).
#
#   . "$SRCDIR/tests/stack/docker_lib.sh"
#   docker_need                       # root and Debian's docker.io, or skip/fail
#   test_ns 64m -- "$@"
#   docker_start                      # a private dockerd; stopped on exit
#   docker_image_torch                # shmwatch-test/torch:2.6 from tests/stack/rootfs.sh
#   docker_run job --shm-size 64m -m 1g "$DOCKER_IMAGE_TORCH" python3 ...
#   pid=$(docker_pid job)             # its init process, as the host sees it
#   dk exec job ...                   # the client, talking to the private daemon
#
# The daemon is the test's own: Debian's dockerd and containerd (never
# /usr/local/bin's or a system daemon's), with private sockets, pid files and
# state under /run/shmwatch-docker.*, no iptables, no bridge; containers run
# with --network none. Started inside the test's private mount namespace
# (in_shm_ns), its mounts and its containers' vanish with the test. On exit
# every container is removed and both daemons are stopped, also when the test
# fails or times out.
#
# Images come from `docker import` of a debootstrapped root, never from a
# registry. The data root (images) is cached between runs at
# $SHMWATCH_DOCKER_CACHE (default /var/cache/shmwatch-tests/docker), locked
# while a daemon uses it: the Docker tests of a run, which run beside the
# others, take it in turn (waiting up to $SHMWATCH_DOCKER_WAIT seconds,
# default 300); one that still finds it taken gets a temporary one (and
# imports again). The storage driver is overlay2, or vfs where overlay2 does
# not work ($SHMWATCH_DOCKER_DRIVER chooses).

DOCKER_BIN=/usr/bin/docker
DOCKERD_BIN=/usr/sbin/dockerd
CONTAINERD_BIN=/usr/bin/containerd
DOCKER_IMAGE_TORCH=shmwatch-test/torch:2.6
DOCKER_STATE=
DOCKER_DATA=
DOCKER_DRIVER=
_DOCKER_TMPDATA=
_DOCKER_LIBDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The device of the /dev/shm outside the test's private mount namespace (the
# host's), noted before in_shm_ns enters it.
[ -n "${IN_SHM_NS:-}" ] || export SHMWATCH_OUTER_SHM_DEV=${SHMWATCH_OUTER_SHM_DEV:-$(stat -c %d /dev/shm 2>/dev/null)}

# dk ARGS...: Debian's docker client, on the private daemon.
dk() {
    "$DOCKER_BIN" "$@"
}

# docker_need [CMD...]: root and Debian's docker.io (dockerd, containerd,
# runc), and the commands the test names.
docker_need() {
    need_root
    need flock tar "$@"
    local b
    for b in "$DOCKER_BIN" "$DOCKERD_BIN" "$CONTAINERD_BIN" /usr/bin/containerd-shim-runc-v2 /usr/sbin/runc; do
        [ -x "$b" ] || _lib_missing "Debian's docker.io ($b is missing; tests/deps.sh installs it)"
    done
}

# The data root: the cache once no other daemon holds it (waited for), else a
# temporary one.
_docker_data_root() {
    local cache=${SHMWATCH_DOCKER_CACHE:-/var/cache/shmwatch-tests/docker} wait=${SHMWATCH_DOCKER_WAIT:-300}
    mkdir -p "$cache" || fail "cannot make $cache"
    exec {_DOCKER_LOCK}>"$cache.lock"
    if flock -n "$_DOCKER_LOCK"; then
        DOCKER_DATA=$cache
        return
    fi
    echo "# $cache is in use by another test: waiting for it (at most $wait s)" >&2
    local t0=$SECONDS
    if flock -w "$wait" "$_DOCKER_LOCK"; then
        DOCKER_DATA=$cache
        echo "# $cache is this test's after $((SECONDS - t0)) s" >&2
    else
        exec {_DOCKER_LOCK}>&-
        DOCKER_DATA=$(mktemp -d /var/tmp/shmwatch-docker-data.XXXXXX) || fail "mktemp failed"
        _DOCKER_TMPDATA=$DOCKER_DATA
        echo "# $cache is still in use after $wait s: images go to $DOCKER_DATA for this test" >&2
    fi
}

# _docker_daemons DRIVER: starts containerd and dockerd; 0 once dockerd answers.
_docker_daemons() {
    local driver=$1 s=$DOCKER_STATE
    cat >"$s/containerd.toml" <<TOML
version = 2
root = "$DOCKER_DATA/containerd"
state = "$s/containerd"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$s/containerd.sock"
[ttrpc]
  address = "$s/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
TOML
    "$CONTAINERD_BIN" --config "$s/containerd.toml" </dev/null >>"$s/containerd.log" 2>&1 \
        {_DOCKER_LOCK}>&- &
    _DOCKER_CONTAINERD=$!
    wait_for "[ -S $s/containerd.sock ]" 30 || return 1
    echo '{}' >"$s/daemon.json"
    "$DOCKERD_BIN" --config-file "$s/daemon.json" \
        --containerd "$s/containerd.sock" \
        --data-root "$DOCKER_DATA" --exec-root "$s/exec" \
        --pidfile "$s/dockerd.pid" --host "unix://$s/docker.sock" \
        --iptables=false --ip-masq=false --ip-forward=false --bridge=none \
        --userland-proxy=false --storage-driver "$driver" \
        --log-level warn </dev/null >>"$s/dockerd.log" 2>&1 {_DOCKER_LOCK}>&- &
    _DOCKER_DOCKERD=$!
    export DOCKER_HOST=unix://$s/docker.sock
    wait_for "dk version >/dev/null 2>&1 || _lib_zombie $_DOCKER_DOCKERD" 60 &&
        dk version >/dev/null 2>&1
}

_docker_kill() { # PID: SIGTERM, SIGKILL after 15 s, reaped
    [ -n "$1" ] || return 0
    kill -TERM "$1" 2>/dev/null || return 0
    wait_for "_lib_zombie $1" 15 || kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null || true
}

_docker_stop_daemons() {
    _docker_kill "${_DOCKER_DOCKERD:-}"
    _DOCKER_DOCKERD=
    # A container dockerd could not remove (it had died): SIGKILL to its
    # first process ends its pid namespace.
    local p f
    for f in "$DOCKER_STATE"/containerd/io.containerd.runtime.v2.task/*/*/init.pid; do
        [ -f "$f" ] && p=$(cat "$f" 2>/dev/null) && [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
    done
    _docker_kill "${_DOCKER_CONTAINERD:-}"
    _DOCKER_CONTAINERD=
    # Shims of this containerd (their command line names its socket), if a
    # container outlived the daemons.
    pkill -KILL -f -- "$(printf '%s' "$DOCKER_STATE/containerd.sock" | sed 's/[].[^$*\\]/\\&/g')" 2>/dev/null
    return 0
}

# docker_start: the private daemon, for the rest of the test.
docker_start() {
    [ -z "$DOCKER_STATE" ] || fail "docker_start: already started"
    [ -n "${IN_SHM_NS:-}" ] || fail "docker_start: run it in the test's private mount namespace (in_shm_ns)"
    DOCKER_STATE=$(mktemp -d /run/shmwatch-docker.XXXXXX) || fail "mktemp failed"
    on_exit docker_stop
    _docker_data_root
    local driver=${SHMWATCH_DOCKER_DRIVER:-}
    if [ -z "$driver" ]; then
        driver=overlay2
        [ -f "$DOCKER_DATA/shmwatch-driver" ] && driver=$(cat "$DOCKER_DATA/shmwatch-driver")
    fi
    if ! _docker_daemons "$driver"; then
        if [ -z "${SHMWATCH_DOCKER_DRIVER:-}" ] && [ "$driver" = overlay2 ]; then
            echo "# dockerd did not start with overlay2: $(tail -n 2 "$DOCKER_STATE/dockerd.log"); trying vfs" >&2
            _docker_stop_daemons
            driver=vfs
            _docker_daemons vfs || fail "dockerd did not start: $(tail -n 5 "$DOCKER_STATE/dockerd.log")"
        else
            fail "dockerd did not start: $(tail -n 5 "$DOCKER_STATE/dockerd.log")"
        fi
    fi
    DOCKER_DRIVER=$driver
    echo "$driver" >"$DOCKER_DATA/shmwatch-driver"
    # Containers a killed run left in the cached data root.
    local left
    left=$(dk ps -aq)
    # shellcheck disable=SC2086 # a list of ids
    [ -z "$left" ] || dk rm -f $left >/dev/null 2>&1 || true
}

# docker_stop: removes every container of the private daemon and stops it
# (on_exit runs it; safe to call twice).
docker_stop() {
    [ -n "$DOCKER_STATE" ] || return 0
    if [ -n "${_DOCKER_DOCKERD:-}" ] && ! _lib_zombie "$_DOCKER_DOCKERD"; then
        local ids
        ids=$(timeout 20 "$DOCKER_BIN" ps -aq 2>/dev/null)
        # shellcheck disable=SC2086 # a list of ids
        [ -z "$ids" ] || timeout 60 "$DOCKER_BIN" rm -f $ids >/dev/null 2>&1 || true
    fi
    _docker_stop_daemons
    local m
    for m in $(awk -v a="$DOCKER_STATE/" -v b="$DOCKER_DATA/" \
        '{ if (index($5, a) == 1 || (b != "/" && index($5, b) == 1)) print $5 }' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
    rm -rf --one-file-system "$DOCKER_STATE"
    [ -z "$_DOCKER_TMPDATA" ] || rm -rf --one-file-system "$_DOCKER_TMPDATA"
    [ -z "${_DOCKER_LOCK:-}" ] || exec {_DOCKER_LOCK}>&-
    DOCKER_STATE=
    unset DOCKER_HOST
}

# docker_image_torch: DOCKER_IMAGE_TORCH, imported from the PyTorch 2.x root
# (tests/stack/rootfs.sh) unless the daemon has it from that very root.
# Sets DOCKER_IMPORT_S to the seconds the import took (0: cached).
docker_image_torch() {
    local root stamp have
    root=$(bash "$_DOCKER_LIBDIR/rootfs.sh") || fail "the PyTorch 2.x root could not be built"
    stamp=$(head -n 2 "$root/.shmwatch-root" | md5sum | cut -c1-16)
    have=$(dk image inspect -f '{{index .Config.Labels "shmwatch.root"}}' "$DOCKER_IMAGE_TORCH" 2>/dev/null || true)
    DOCKER_IMPORT_S=0
    [ "$have" != "$stamp" ] || return 0
    local t0=$SECONDS
    tar -C "$root" --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -c . |
        dk import --change "LABEL shmwatch.root=$stamp" - "$DOCKER_IMAGE_TORCH" >/dev/null ||
        fail "docker import of $root failed"
    DOCKER_IMPORT_S=$((SECONDS - t0))
    echo "# imported $root as $DOCKER_IMAGE_TORCH in $DOCKER_IMPORT_S s ($DOCKER_DRIVER)" >&2
}

# docker_run NAME ARGS...: docker run -d --network none --name NAME ARGS.
docker_run() {
    local name=$1
    shift
    dk run -d --network none --name "$name" "$@" >/dev/null ||
        fail "docker run $name failed"
}

# docker_run_shared_shm NAME ARGS...: as docker_run, with the test's private
# tmpfs (its /dev/shm, never the host's) as the container's /dev/shm, as
# --ipc=host or -v /dev/shm:/dev/shm would share the host's.
docker_run_shared_shm() {
    local name=$1
    shift
    [ -n "${IN_SHM_NS:-}" ] && [ -n "${SHMWATCH_OUTER_SHM_DEV:-}" ] &&
        [ "$(stat -c %d /dev/shm)" != "$SHMWATCH_OUTER_SHM_DEV" ] ||
        fail "docker_run_shared_shm: /dev/shm here may be the host's; run in in_shm_ns"
    docker_run "$name" -v /dev/shm:/dev/shm "$@"
}

# docker_privileged_ok: 0 when a privileged container gets every capability.
# Where the machine's own capability bounding set is short of some (a CI
# runner that is itself a container lacks CAP_SYS_RESOURCE, say), runc cannot
# give a privileged container all of them: then 1, and the test asks for the
# capabilities shmwatch needs instead (DOCKER_NODE_CAPS).
DOCKER_NODE_CAPS=(SYS_PTRACE SYS_ADMIN DAC_READ_SEARCH DAC_OVERRIDE)
docker_privileged_ok() {
    local mine
    mine=$(awk '/^CapBnd/ { print $2 }' /proc/self/status)
    if [ "$mine" != "$(awk '/^CapBnd/ { print $2 }' /proc/1/status)" ] || [ $((0x$mine >> 24 & 1)) -eq 0 ]; then
        echo "# this machine's bounding set lacks capabilities privileged asks for: ${DOCKER_NODE_CAPS[*]} instead" >&2
        return 1
    fi
}

# docker_busybox_tree DIR: the root of an image of busybox alone (sh, sleep
# and head, empty /tmp, /proc, /sys and /dev), for the test to add to and
# import (tar -C DIR -c . | dk import - IMAGE).
docker_busybox_tree() {
    local t
    mkdir -p "$1"/{bin,tmp,proc,sys,dev}
    cp "$(command -v busybox)" "$1/bin/busybox" || fail "cannot copy busybox"
    for t in sh sleep head; do ln -s busybox "$1/bin/$t"; done
}

# docker_pid NAME: the host pid of the container's first process.
docker_pid() {
    local pid
    pid=$(dk inspect -f '{{.State.Pid}}' "$1") && [ "${pid:-0}" -gt 0 ] ||
        fail "container $1 has no process"
    echo "$pid"
}

# docker_dump: the daemons' last log lines (for a failed test).
docker_dump() {
    [ -n "$DOCKER_STATE" ] || return 0
    echo "--- dockerd (last lines) ---" >&2
    tail -n 10 "$DOCKER_STATE/dockerd.log" >&2
}

# docker_bundle BINARY DIR: BINARY with every shared library it loads (ldd)
# and the host's dynamic loader, in DIR, to bind-mount into a container whose
# image lacks them (Debian 13 has no libproc2.so.0 by default; its glibc may
# be older or newer). Run it there as
#   DIR/ld.so --library-path DIR DIR/NAME ARGS...
# (docker_bundle_cmd prints that command for a mount point.)
docker_bundle() {
    local bin=$1 dir=$2 lib loader
    mkdir -p "$dir" || fail "cannot make $dir"
    cp "$bin" "$dir/" || fail "cannot copy $bin"
    for lib in $(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
        cp -L "$lib" "$dir/" || fail "cannot copy $lib"
    done
    loader=$(ldd "$bin" | awk '$1 ~ /^\/.*ld-linux/ { print $1 }')
    [ -n "$loader" ] || fail "no dynamic loader for $bin"
    cp -L "$loader" "$dir/ld.so" || fail "cannot copy $loader"
}

# docker_bundle_cmd MOUNTPOINT NAME: the command that runs bundle NAME
# mounted at MOUNTPOINT in a container (a word a line, for mapfile).
docker_bundle_cmd() {
    printf '%s\n' "$1/ld.so" --library-path "$1" "$1/$2"
}

# docker_names_visible: makes the private daemon's state findable where
# shmwatch looks for Docker's names on a node (/etc/docker/daemon.json's
# "data-root", then <data-root>/containers/<id>/config.v2.json), as on a host
# whose daemon keeps its data outside /var/lib/docker: a copy of /etc/docker
# with a daemon.json naming $DOCKER_DATA is bind-mounted on /etc/docker in the
# test's private mount namespace only (the host's /etc/docker is untouched).
docker_names_visible() {
    [ -n "$DOCKER_STATE" ] || fail "docker_names_visible: docker_start first"
    [ -n "${IN_SHM_NS:-}" ] || fail "docker_names_visible: only in the test's private mount namespace"
    local d=$DOCKER_STATE/etc-docker
    mkdir -p "$d" /etc/docker || fail "cannot make $d"
    cp -a /etc/docker/. "$d/" 2>/dev/null || true
    printf '{ "data-root": "%s" }\n' "$DOCKER_DATA" >"$d/daemon.json"
    mount --bind "$d" /etc/docker || fail "cannot bind $d on /etc/docker"
    on_exit 'umount -l /etc/docker 2>/dev/null || true'
}

# docker_ns_pids NAME: the host pids of every process of container NAME (those
# in its pid namespace), one a line.
docker_ns_pids() {
    local init ns
    init=$(docker_pid "$1")
    ns=$(readlink "/proc/$init/ns/pid") || fail "container $1: no pid namespace"
    pids_with_link ns/pid "$ns"
    return 0
}
