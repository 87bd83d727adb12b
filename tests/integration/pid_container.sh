#!/usr/bin/env bash
# --pid from the host: a process in its own mount and pid namespaces (an
# emulated container) with its own 64 MiB tmpfs at /dev/shm and a 512 MiB
# memory cgroup. The host-side run must see that tmpfs, not the host's, its
# segments with in-namespace pids mapped to host pids, and the cgroup limit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
need_root
need_unshare
_lib_tmp

mem_cgroup_create "shmwatch-pid-$$" 536870912
MANIFEST=$SHMTEST_TMP/container.manifest
export MANIFEST
# The container: the cgroup is entered by the shell before unshare, so every
# process inside is charged to it. As a container runtime does, the tmpfs is
# mounted in a mount namespace of the container's processes alone: the
# waiting outer unshare (in the host's pid namespace) does not see it, or the
# mount would be reached from two pid namespaces (doc/shmwatch.1, PID NAMESPACES).
bash -c 'echo $$ > "$1/cgroup.procs" && exec unshare -p -f --mount-proc --propagation private \
    unshare -m --propagation private bash -c "mount -t tmpfs -o size=64m tmpfs /dev/shm && exec \"\$0\" --manifest \"\$1\" --workers 2 --per-worker 4 --orphans 2" "$2" "$3"' \
    _ "$MEMCG_DIR" "$SHMSCENE" "$MANIFEST" </dev/null >"$SHMTEST_TMP/container.log" 2>&1 &
outer=$!
on_exit "kill -KILL $outer 2>/dev/null; wait $outer 2>/dev/null; true"
wait_for '[ -f "$MANIFEST" ] && [ "$(tail -n 1 "$MANIFEST")" = ready ]' 30 ||
    fail "the container scene did not start: $(head -c 500 "$SHMTEST_TMP/container.log")"

# The scene's main is pid 1's child inside; on the host it is a child of unshare.
inner_main=$(manifest_pids main)
host_main=
for p in $(pgrep -f -- "--manifest $MANIFEST"); do
    ns=$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status")
    [ "$ns" = "$inner_main" ] && host_main=$p
done
[ -n "$host_main" ] || fail "cannot find the scene's main process on the host"
[ "$host_main" != "$inner_main" ] || fail "the scene is not in its own pid namespace"
# Only while it is still unshare's child: a recorded pid may be reused.
on_exit "[ \"\$(awk '/^PPid:/ { print \$2 }' /proc/$host_main/status 2>/dev/null)\" = $outer ] && kill -KILL $host_main; true"
ok "container main is pid $inner_main inside, $host_main on the host"

snap=$SHMTEST_TMP/pid.json
"$SHMWATCH" --pid "$host_main" --json >"$snap" || fail "shmwatch --pid exited $?"
json_check "$snap" "len(j['mounts']) == 1 and j['mounts'][0]['path'] == '/dev/shm' and j['mounts'][0]['size_bytes'] == 64 << 20" \
    "the container's 64 MiB tmpfs is seen, not the host's /dev/shm" \
    "sorted(s['name'] for s in j['segments'] if s['state'] in ('in_use', 'orphan')) == sorted(m['name'] for m in man['segments'] if m['mode'] in ('named', 'orphan'))" \
    "its named segments are listed" \
    "j['totals']['hidden'] == 6 and j['totals']['orphans'] == 2" \
    "its hidden segments (found through the host's /proc) and orphans are counted"
host_workers=$(for w in $(manifest_pids worker); do
    for p in $(pgrep -f -- "--manifest $MANIFEST"); do
        [ "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status")" = "$w" ] && echo "$p"
    done
done | sort -n | tr '\n' ' ')
export HOST_WORKERS="$host_workers" HOST_MAIN=$host_main
json_check "$snap" "sorted(s['creator_pid'] for s in j['segments'] if s['state'] in ('in_use', 'hidden') and s['creator_alive']) and all(s['creator_pid'] in [int(x) for x in env['HOST_WORKERS'].split()] for s in j['segments'] if s['state'] in ('in_use', 'hidden'))" \
    "creator pids written inside the namespace are mapped to host pids" \
    "[sorted(g['workers']) for g in j['groups'] if g['main_pid'] == int(env['HOST_MAIN'])] == [[int(x) for x in env['HOST_WORKERS'].split()]]" \
    "the DataLoader group is named by host pids" \
    "j['cgroup'] is not None and j['cgroup']['limit_bytes'] == 536870912 and j['budget']['limit_source'] == 'cgroup' and j['budget']['limit_bytes'] == 536870912" \
    "the container's cgroup limit (512 MiB) is the budget's limit" \
    "j['scan']['target_pid'] == int(env['HOST_MAIN'])" "the snapshot names the watched pid"
"$SHMWATCH" --pid "$host_main" --once >"$SHMTEST_TMP/pid.txt" || fail "--once --pid exited $?"
grep -q "watching pid $host_main" "$SHMTEST_TMP/pid.txt" || fail "the text header names the watched process"
ok "text header names the watched container"

# The dashboard watches the same world and names it in its title.
. "$(dirname "$0")/tui_lib.sh"
tui_start 100 30 --pid "$host_main"
tui_wait "pid $host_main \\(" 10
tui_wait '/dev/shm .* [0-9.]+M/64M' 10
tui_wait "main $host_main" 10
tui_quit
ok "the dashboard with --pid shows the container's mount and group, and names it"

"$SHMWATCH" --pid 999999999 --json >/dev/null 2>"$SHMTEST_TMP/err" && fail "--pid of a missing process succeeded"
grep -q "cannot watch pid" "$SHMTEST_TMP/err" || fail "no clear error for a missing pid: $(cat "$SHMTEST_TMP/err")"
ok "--pid of a missing process: one-line error"
