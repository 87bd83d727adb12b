#!/usr/bin/env bash
# The node view's "next member" path, forced (--all, the test build's hook
# SHMWATCH_TEST_KILL_MEMBER): a mount namespace is read through one of its
# processes, and when that one has exited the next one reads it. Emulated
# containers: a mount namespace with its own tmpfs at /dev/shm holding two
# files, its processes in a memory cgroup named as Docker's systemd driver
# names a container's. With two members, the first killed where its
# mountinfo is about to be read, or where its cgroup is about to name the
# container, the mount is still listed by its device, with its container
# (read through the second member) and its files; with the only member
# killed there, no crash, and no file is shown on a mount it is not on.
# A process of a lower pid that enters a container's namespace from outside,
# in a cgroup of no container (as runc exec's process is until runc moves it
# into the container's cgroup, after the pids wrapped), does not make the
# container's namespace one of no container.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need_hooked
need nsenter od stat python3
_lib_tmp

# ns_ctr TAG [two]: the container TAG (ID_<TAG>: its id); FIRST_<TAG> its
# first process (it made the namespace), SECOND_<TAG> a later one entered
# into it (with "two"), DEV_<TAG> its tmpfs's device as MAJ:MIN. The tmpfs
# is 16 MiB, or SHM_SIZE. Every process is this shell's child, so that a
# killed one is reaped at once.
ns_ctr() {
    local tag=$1 id ready=$SHMTEST_TMP/$1.ready first second dev
    ctr_cgroup $((256 << 20))
    id=$CTR_ID
    # (The cgroup joined once the tmpfs is mounted, as ctr_lib.sh does.)
    unshare -m --propagation private bash -c '
        mount -t tmpfs -o size=$4 tmpfs /dev/shm || exit 1
        echo $$ >"$1/cgroup.procs" || exit 1
        head -c 131072 /dev/zero >/dev/shm/torch_1_1
        : >/dev/shm/member-$2
        : >"$3"
        exec sleep 600' _ "$MEMCG_DIR" "$tag" "$ready" "${SHM_SIZE:-16m}" </dev/null >/dev/null 2>&1 &
    first=$!
    wait_for "[ -e $ready ]" 30 || fail "container $tag did not start"
    [ "$(readlink /proc/$first/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] ||
        fail "container $tag has no mount namespace of its own"
    if [ "${2:-}" = two ]; then
        # A second process whose pid wrapped below the first's is killed
        # and started again, up to three times.
        for _ in 1 2 3; do
            nsenter -t "$first" -m bash -c 'echo $$ >"$1/cgroup.procs" && exec sleep 600' \
                _ "$MEMCG_DIR" </dev/null >/dev/null 2>&1 &
            second=$!
            wait_for "[ \"\$(readlink /proc/$second/ns/mnt)\" = \"\$(readlink /proc/$first/ns/mnt)\" ] && grep -q sleep /proc/$second/comm" 10 ||
                fail "container $tag's second process did not enter its namespace"
            [ "$second" -gt "$first" ] && break
            kill -KILL "$second"
            wait "$second" 2>/dev/null
        done
        [ "$second" -gt "$first" ] || fail "the second process's pid stays below the first's (pids wrapped three times)"
        printf -v "SECOND_$tag" %s "$second"
    fi
    dev=$(nsenter -t "$first" -m stat -c '%Hd:%Ld' /dev/shm) || fail "cannot stat container $tag's /dev/shm"
    printf -v "ID_$tag" %s "$id"
    printf -v "FIRST_$tag" %s "$first"
    printf -v "DEV_$tag" %s "$dev"
    export "ID_$tag" "FIRST_$tag" "DEV_$tag" "SECOND_$tag"
}

# run_killing AT PID OUT: one --all --json snapshot of the hooked build that
# kills PID where it reads it AT (mountinfo or container).
run_killing() {
    SHMWATCH_TEST_KILL_MEMBER="$1:$2" timeout 60 "$SHMWATCH_HOOKED" --all --json >"$3" \
        2>"$3.err" || fail "shmwatch --all --json exited $? with $2 killed at $1: $(head -c 500 "$3.err")"
    kill -0 "$2" 2>/dev/null && fail "the hook did not kill $2 at $1"
    true
}

# mount_of TAG: the python expression of container TAG's mount (by its device).
mount_of() { echo "[m for m in j['mounts'] if m['id'] == env['DEV_$1']]"; }

# The outsider first (a lower pid than E's), in a memory cgroup named as no
# runtime names a container's: it waits for a pid, then enters that pid's
# mount namespace (setns) and stays. Sets OUTSIDER.
mem_cgroup_create "shmwatch-outsider-$$" $((64 << 20))
OUTSIDER_CG=$MEMCG_DIR
start_outsider() {
    python3 -c '
import ctypes, os, sys, time
want, entered = sys.argv[1:3]
deadline = time.monotonic() + 60
while not os.path.exists(want) and time.monotonic() < deadline:
    time.sleep(0.02)
fd = os.open("/proc/%s/ns/mnt" % open(want).read().strip(), os.O_RDONLY)
if ctypes.CDLL(None, use_errno=True).setns(fd, 0x00020000) != 0:  # CLONE_NEWNS
    sys.exit("setns: errno %d" % ctypes.get_errno())
open(entered, "w").close()
time.sleep(600)' "$SHMTEST_TMP/outsider.want" "$SHMTEST_TMP/outsider.in" </dev/null &
    OUTSIDER=$!
    on_exit "kill -KILL $OUTSIDER 2>/dev/null; wait $OUTSIDER 2>/dev/null; true"
    echo "$OUTSIDER" >"$OUTSIDER_CG/cgroup.procs" || fail "cannot move the outsider into its cgroup"
}
start_outsider

ns_ctr A two
ns_ctr B two
# C's tmpfs has a size of its own: once C is killed its device may be
# reused by another test's tmpfs, which is no mount of C's.
SHM_SIZE=13m ns_ctr C
ns_ctr D
ns_ctr E
# The pids may wrap (past pid_max) between the outsider's start and E's: then
# both are started again, the outsider first, up to three times.
for _ in 1 2 3; do
    [ "$OUTSIDER" -lt "$FIRST_E" ] && break
    kill -KILL "$OUTSIDER" "$FIRST_E" 2>/dev/null
    wait "$OUTSIDER" "$FIRST_E" 2>/dev/null
    start_outsider
    ns_ctr E
done
[ "$OUTSIDER" -lt "$FIRST_E" ] || fail "the outsider's pid stays above E's first process's (pids wrapped three times)"
# Written whole, then renamed: the outsider reads it as soon as it exists.
echo "$FIRST_E" >"$SHMTEST_TMP/outsider.want.new" && mv "$SHMTEST_TMP/outsider.want.new" "$SHMTEST_TMP/outsider.want"
wait_for "[ -e $SHMTEST_TMP/outsider.in ]" 30 || fail "the outsider did not enter E's namespace"
[ "$(readlink "/proc/$OUTSIDER/ns/mnt")" = "$(readlink "/proc/$FIRST_E/ns/mnt")" ] ||
    fail "the outsider is not in E's mount namespace"
ok "five emulated containers: A and B with two processes each, C, D and E with one, and an outsider of a lower pid in E's namespace"

# Without a kill: every mount is read through its first process.
snap=$SHMTEST_TMP/plain.json
"$SHMWATCH_HOOKED" --all --json >"$snap" || fail "shmwatch --all --json exited $?"
json_check "$snap" "[(len(m['containers']), m['containers'][0]['id'], m['containers'][0]['pid']) for m in $(mount_of A)] == [(1, env['ID_A'], int(env['FIRST_A']))]" \
    "untouched, container A is read through its first process"

json_check "$snap" "[([c['id'] for c in m['containers']], m['containers'][0]['pid'], m['containers'][0]['runtime']) for m in $(mount_of E)] == [([env['ID_E']], int(env['FIRST_E']), 'docker')]" \
    "E is read as its container through its own process, not as no container through the outsider"

# A: the first member killed as its mountinfo is about to be read.
snap=$SHMTEST_TMP/a.json
run_killing mountinfo "$FIRST_A" "$snap"
json_check "$snap" "[(m['path'], [c['id'] for c in m['containers']], m['containers'][0]['pid'], m['size_bytes']) for m in $(mount_of A)] == [('/dev/shm', [env['ID_A']], int(env['SECOND_A']), 16 << 20)]" \
    "A's first process killed before its mountinfo: the mount is listed, its container read through the second process" \
    "sorted(s['name'] for s in j['segments'] if s['mount_id'] == env['DEV_A']) == ['member-A', 'torch_1_1']" \
    "A's files are listed through the second process"
export PLAIN=$SHMTEST_TMP/plain.json
# (Only A's mount: the node view also shows other tests' namespaces, whose
# processes may all exit during the scan.)
json_check "$snap" "not any('(device %s) dropped' % env['DEV_A'] in w for w in j['warnings']) and [w for w in j['warnings'] if w.startswith('the mount namespaces of ')] == [w for w in __import__('json').load(open(env['PLAIN']))['warnings'] if w.startswith('the mount namespaces of ')]" \
    "an exited member is no unreadable namespace and drops no mount"

# B: the first member killed as its cgroup is about to name the container.
snap=$SHMTEST_TMP/b.json
run_killing container "$FIRST_B" "$snap"
json_check "$snap" "[([c['id'] for c in m['containers']], m['containers'][0]['pid'], m['containers'][0]['runtime'], m['cgroup'] is not None and m['cgroup']['limit_bytes']) for m in $(mount_of B)] == [([env['ID_B']], int(env['SECOND_B']), 'docker', 256 << 20)]" \
    "B's first process killed before its cgroup is read: the container, its cgroup and limit from the second process" \
    "sorted(s['name'] for s in j['segments'] if s['mount_id'] == env['DEV_B']) == ['member-B', 'torch_1_1']" \
    "B's files are listed"

# C: the only member killed before its mountinfo: the namespace is gone, so is the mount.
snap=$SHMTEST_TMP/c.json
run_killing mountinfo "$FIRST_C" "$snap"
json_check "$snap" "[m for m in $(mount_of C) if m['size_bytes'] == 13 << 20] == [] and not any(s['name'] == 'member-C' for s in j['segments']) and not any(c['id'] == env['ID_C'] for m in j['mounts'] for c in m['containers'])" \
    "C's only process killed before its mountinfo: its mount is not shown, nor any of its files" \
    "[m['id'] for m in $(mount_of A)] == [env['DEV_A']] and [m['id'] for m in $(mount_of D)] == [env['DEV_D']]" \
    "the other containers' mounts are still there"

# D: the only member killed before its cgroup is read (its files were read
# while it lived): no crash, and its files only ever on its own mount.
snap=$SHMTEST_TMP/d.json
run_killing container "$FIRST_D" "$snap"
json_check "$snap" "all(s['mount_id'] == env['DEV_D'] for s in j['segments'] if s['name'] == 'member-D') and not any(c['id'] == env['ID_D'] for m in j['mounts'] for c in m['containers'])" \
    "D's only process killed before its cgroup is read: no container is named for it, its files stay on its own mount" \
    "any(env['DEV_D'] in w and 'its container is unknown' in w for w in j['warnings'])" \
    "a warning says D's mount lost its container while it was read" \
    "[(m['containers'][0]['id']) for m in $(mount_of A)] == [env['ID_A']]" \
    "its neighbour keeps its container"
