#!/usr/bin/env bash
# A container restarted on a /dev/shm that outlives it, as a pod's emptyDir
# ({medium: Memory}) or Docker's shareable IPC: the tmpfs is mounted on the
# host at a state path (the kubelet's volume directory) and bound at
# /dev/shm of each run's own pid and mount namespaces. The first run leaves
# torch segments named after its pids and dies with its pid namespace; the
# second run, a new pid namespace whose pids are the same small numbers,
# holds one segment and writes another. Its earlier run's leftovers are
# orphans "left by an earlier run" that clean --pid removes, while every
# segment of the running one stays; a second live namespace that has the
# mount at /dev/shm since before the leftovers keeps them unheld (today's
# rule for a shared /dev/shm) until it is gone.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 16m -- "$@"
_lib_tmp

vol=$SHMTEST_TMP/kubelet/pods/0f4e/volumes/kubernetes.io~empty-dir/dshm
mkdir -p "$vol"
mount -t tmpfs -o size=32m tmpfs "$vol" || fail "cannot mount the volume's tmpfs"
on_exit "umount -l '$vol' 2>/dev/null; true"

# run NAME SCRIPT: one run of the container, its own pid and mount
# namespaces with the volume at /dev/shm, running SCRIPT (bash, as pid 1
# there; $1 the test's directory) until it writes NAME.ready. Sets RUN_PID,
# the host pid of that pid 1, and RUN_OUTER, the unshare that waits for it.
run() {
    local name=$1 script=$2
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare -p -f -m --propagation private --mount-proc bash -c '
        mount --bind "$1" /dev/shm || exit 1
        shift
        eval "$2"' _ "$vol" "$SHMTEST_TMP" "$script" </dev/null >"$SHMTEST_TMP/$name.log" 2>&1 &
    RUN_OUTER=$!
    on_exit "kill -KILL $RUN_OUTER 2>/dev/null; true"
    wait_for "[ -e '$SHMTEST_TMP/$name.ready' ]" 20 ||
        fail "the run $name did not start: $(head -c 300 "$SHMTEST_TMP/$name.log")"
    RUN_PID=$(pgrep -P "$RUN_OUTER")
    [ -n "$RUN_PID" ] && [ "$(awk '/^NSpid:/ { print $NF }' "/proc/$RUN_PID/status")" = 1 ] ||
        fail "cannot find the run $name's pid 1 on the host"
    on_exit "kill -KILL $RUN_PID 2>/dev/null; true"
}

# A process that has had the volume at /dev/shm since before the leftovers
# (as a second container of the pod with --ipc=container:, or the host with
# --ipc=host): the kept control.
run sidecar ': >"$1/sidecar.ready"; exec sleep 300'
sidecar=$RUN_PID sidecar_outer=$RUN_OUTER

# The first run: its processes write torch segments under their in-namespace
# pids, and are killed with their pid namespace (nothing unlinks them).
run first 'head -c 1048576 /dev/zero >/dev/shm/torch_1_1 &&
    sh -c "head -c 2097152 /dev/zero >/dev/shm/torch_\$\$_7 && echo \$\$ >$SHMTEST_TMP/first.inner" &&
    : >"$1/first.ready" && exec sleep 300'
inner=$(cat "$SHMTEST_TMP/first.inner")
first=$RUN_PID
kill -KILL "$first"
wait_for "[ ! -d /proc/$first ]" 10 || fail "the first run did not die"
written=$(stat -c %Z "$vol/torch_${inner}_7")
# The restart comes later than the leftovers' last change by more than the
# clock's slack (whole seconds).
wait_for "[ \$(date +%s) -gt $((written + 3)) ]" 10 || fail "the clock did not move"

# The second run: its pids start at 1 again. It holds torch_1_5 open and has
# just written torch_${inner}_9, a batch in flight (no holder yet) under a
# pid number the first run used too.
run second "head -c 1048576 /dev/zero >/dev/shm/torch_1_5 && exec 3</dev/shm/torch_1_5 &&
    head -c 1048576 /dev/zero >/dev/shm/torch_${inner}_9 && : >\"\$1/second.ready\" && exec sleep 300"
second=$RUN_PID
ok "the first run left torch_1_1 and torch_${inner}_7; the second (host pid $second) runs as pid 1"

export INNER=$inner
snap() { "$SHMWATCH" --pid "$second" --json >"$SHMTEST_TMP/$1.json" || fail "--pid --json exited $?"; }
snap shared
json_check "$SHMTEST_TMP/shared.json" \
    "sorted((s['name'], s['state']) for s in j['segments']) == sorted([('torch_1_1', 'unheld'), ('torch_%s_7' % env['INNER'], 'unheld'), ('torch_1_5', 'in_use'), ('torch_%s_9' % env['INNER'], 'unheld')])" \
    "with a namespace that has had it at /dev/shm since before them, the leftovers stay unheld"

kill -KILL "$sidecar" "$sidecar_outer"
wait_for "[ ! -d /proc/$sidecar ]" 10 || fail "the sidecar did not die"
snap restarted
json_check "$SHMTEST_TMP/restarted.json" \
    "sorted((s['name'], s['state']) for s in j['segments']) == sorted([('torch_1_1', 'orphan'), ('torch_%s_7' % env['INNER'], 'orphan'), ('torch_1_5', 'in_use'), ('torch_%s_9' % env['INNER'], 'unheld')])" \
    "the first run's segments are orphans; the second run's held one and its batch in flight are not" \
    \
    "[s['creator_alive'] for s in j['segments'] if s['name'] == 'torch_1_1'] == [False]" \
    "torch_1_1 names pid 1, alive again in the new run, but not its creator" \
    \
    "any('An earlier run of this container left 3.0 MiB of orphans' in a and 'clean them first' in a for a in j['budget']['advice'])" \
    "the budget says how much the leftovers hold and to clean them first"

# The text report says whose pid 1 it is: an earlier run's, not dead as
# though no process had it.
txt=$("$SHMWATCH" --pid "$second" --once 2>&1) || fail "--pid --once exited $?: $txt"
grep -qE "^ +torch_1_1 +orphan .*creator 1 \(of an earlier run: its pid is another's now\)" <<<"$txt" ||
    fail "the report does not say torch_1_1's creator was of an earlier run: $txt"
ok "the report names the creator of the earlier run's orphan as such"

out=$("$SHMWATCH" clean --pid "$second" --yes --orphan-min-age 2 2>&1) || fail "clean --pid exited $?: $out"
grep -q "^  /dev/shm/torch_1_1 (in pid $second) .*orphan: held by nobody, left by an earlier run of its container (restarted at " <<<"$out" &&
    grep -q "^removed  *\(/dev/shm/torch_1_1\|/dev/shm/torch_${inner}_7\) " <<<"$out" ||
    fail "clean does not say the earlier run: $out"
[ ! -e "$vol/torch_1_1" ] && [ ! -e "$vol/torch_${inner}_7" ] || fail "the leftovers are still there: $(ls "$vol")"
[ -e "$vol/torch_1_5" ] && [ -e "$vol/torch_${inner}_9" ] || fail "a segment of the running job is gone: $(ls "$vol")"
ok "clean --pid removes the earlier run's leftovers and keeps every segment of the running one"
