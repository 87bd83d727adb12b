#!/usr/bin/env bash
# The node view (--all) on a container that containerd runs for ctr (Debian
# 12's containerd 1.6 and runc, driven directly, no CRI): its cgroup is
# /<namespace>/<id> (cgroupfs), which any two-level cgroup could be; shmwatch
# takes it for a container only once containerd's task bundle
# /run/containerd/io.containerd.runtime.v2.task/<namespace>/<id> is there.
# The daemon is the test's own (its root, socket and state under the test's
# directories; /run/containerd is a tmpfs of the test's private mount
# namespace, so neither a system containerd nor the Docker tests' is met),
# the container's root a directory of busybox alone (ctr run --rootfs).
#   1. A container "swctr" in the namespace "swtest" with a 300 MiB limit
#      holding a segment of its /dev/shm: --all --json names it swctr,
#      runtime containerd, containerd_namespace swtest, its budget's limit
#      300 MiB; the text report's heading says swtest/swctr.
#   2. A process in a two-level cgroup of the same shape with no bundle
#      (/swtest/nobundle, its own /dev/shm): a mount namespace with no
#      runtime, as before.
#   3. A container of the same id "swctr" in the namespace "swother" with a
#      64 MiB limit and a segment of its own: containerd's ids are unique
#      only within a namespace, so it is a container of its own, with its
#      own mount, cgroup /swother/swctr and budget, and a heading of its own.
#   4. Whatever names a container names the one of its namespace: each
#      container's holder in --all --json's processes carries container swctr
#      and its containerd_namespace; each container's series of
#      --all --prometheus its containerd_namespace label; and an orphan in
#      each container's /dev/shm is planned by clean --all --dry-run
#      "(in swtest/swctr)" and "(in swother/swctr)", as the text report's
#      headings name them.
#   5. A holder in swother/swctr (a child of its init: a signal from the host
#      reaches a pid namespace's init only when it handles it) killed by
#      SIGBUS, with the dashboard, an exporter and a recorder running: the
#      dashboard's rows and budget line name swtest/swctr and swother/swctr, its
#      event line ends "[swother/swctr]"; the deaths counter's series has
#      containerd_namespace="swother"; why says "container swother/swctr",
#      --container swother/swctr and swctr find the end, --container
#      swtest/swctr does not; replay's status line says "in swother/swctr".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need ctr containerd runc busybox /usr/bin/python3
[ -x /usr/bin/containerd-shim-runc-v2 ] || _lib_missing "containerd-shim-runc-v2 (Debian's containerd)"
test_ns 64m -- "$@"

OUT=$(mktemp -d /var/tmp/shmwatch-node-containerd.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $OUT"
if [ ! -d /run/containerd ]; then
    mkdir /run/containerd || fail "cannot make /run/containerd"
    on_exit 'rmdir /run/containerd 2>/dev/null || true'
fi
mount -t tmpfs -o size=16m,mode=0711 tmpfs /run/containerd || fail "cannot mount a tmpfs on /run/containerd"
on_exit 'umount -l /run/containerd 2>/dev/null || true'
SOCK=$OUT/containerd.sock
cat >"$OUT/containerd.toml" <<TOML
version = 2
root = "$OUT/root"
state = "/run/containerd"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
TOML
# The memory hierarchy's root: v1's memory controller (hybrid hosts), else v2.
CGMEM=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
[ -n "$CGMEM" ] || CGMEM=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CGMEM" ] || _lib_missing "a memory cgroup hierarchy"
T0=$SECONDS
containerd --config "$OUT/containerd.toml" </dev/null >"$OUT/containerd.log" 2>&1 &
CTRD=$!
cn() { # NAMESPACE CTR_ARGS...
    local ns=$1
    shift
    timeout 30 ctr --address "$SOCK" --namespace "$ns" "$@"
}
c() {
    cn swtest "$@"
}
# On exit, also when the test fails: the task killed and removed, the
# container removed, the daemon stopped, then any shim of this daemon (its
# command line names the socket) and the container's processes.
ctrd_cleanup() {
    local ns
    for ns in swtest swother; do
        cn $ns task kill -s KILL swctr >/dev/null 2>&1
        wait_for "cn $ns task ls 2>/dev/null | grep -q '^swctr .*STOPPED' || ! cn $ns task ls 2>/dev/null | grep -q '^swctr '" 10
        cn $ns task rm -f swctr >/dev/null 2>&1
        cn $ns container rm swctr >/dev/null 2>&1
    done
    kill -TERM "$CTRD" 2>/dev/null
    wait_for "! kill -0 $CTRD 2>/dev/null" 10 || kill -KILL "$CTRD" 2>/dev/null
    wait "$CTRD" 2>/dev/null
    local p
    for p in $(pgrep -f -- "$SOCK"); do kill -KILL "$p" 2>/dev/null; done
    for ns in swtest swother; do
        for p in $(cat "$CGMEM/$ns/swctr/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        wait_for "[ -z \"\$(cat '$CGMEM/$ns/swctr/cgroup.procs' 2>/dev/null)\" ]" 10
        rmdir "$CGMEM/$ns/swctr" "$CGMEM/$ns" 2>/dev/null
    done
    return 0
}
on_exit ctrd_cleanup
wait_for "[ -S $SOCK ] && c version >/dev/null 2>&1" 30 ||
    fail "containerd did not start: $(tail -n 5 "$OUT/containerd.log")"

ROOTFS=$OUT/rootfs
mkdir -p "$ROOTFS"/{bin,tmp,proc,sys,dev,etc}
cp "$(command -v busybox)" "$ROOTFS/bin/busybox" || fail "cannot copy busybox"
for t in sh sleep dd touch; do ln -s busybox "$ROOTFS/bin/$t"; done
c run -d --rootfs --memory-limit $((300 * 1024 * 1024)) "$ROOTFS" swctr /bin/sh -c \
    'dd if=/dev/zero of=/dev/shm/data bs=1M count=4 2>/dev/null; exec 3</dev/shm/data; touch /dev/shm/ready; exec sleep 1000' \
    >"$OUT/run.log" 2>&1 || fail "ctr run failed: $(tail -n 3 "$OUT/run.log")"
PID=$(c task ls | awk '$1 == "swctr" { print $2 }')
[ "${PID:-0}" -gt 0 ] || fail "swctr has no process: $(c task ls)"
wait_for "[ -e /proc/$PID/root/dev/shm/ready ]" 10 || fail "swctr did not write its segment"
grep -q ':/swtest/swctr$' "/proc/$PID/cgroup" || fail "swctr's cgroup is not /swtest/swctr: $(cat "/proc/$PID/cgroup")"
[ -d /run/containerd/io.containerd.runtime.v2.task/swtest/swctr ] || fail "no task bundle for swctr"
ok "containerd and swctr running after $((SECONDS - T0)) s (cgroup /swtest/swctr)"

# The same id in another namespace, with its own limit and segment.
cn swother run -d --rootfs --memory-limit $((64 * 1024 * 1024)) "$ROOTFS" swctr /bin/sh -c \
    'dd if=/dev/zero of=/dev/shm/other bs=1M count=8 2>/dev/null; exec 3</dev/shm/other; sleep 1000 & touch /dev/shm/ready; exec sleep 1000' \
    >"$OUT/run-other.log" 2>&1 || fail "ctr run in swother failed: $(tail -n 3 "$OUT/run-other.log")"
OTHER_PID=$(cn swother task ls | awk '$1 == "swctr" { print $2 }')
[ "${OTHER_PID:-0}" -gt 0 ] || fail "swother/swctr has no process: $(cn swother task ls)"
wait_for "[ -e /proc/$OTHER_PID/root/dev/shm/ready ]" 10 || fail "swother/swctr did not write its segment"
grep -q ':/swother/swctr$' "/proc/$OTHER_PID/cgroup" ||
    fail "swother/swctr's cgroup is not /swother/swctr: $(cat "/proc/$OTHER_PID/cgroup")"
ok "swother/swctr running (cgroup /swother/swctr)"

# The same shape without a bundle: a process in the memory cgroup
# /swtest/nobundle with a tmpfs of its own at /dev/shm.
NOBUNDLE_CG=$CGMEM/swtest/nobundle
mkdir -p "$NOBUNDLE_CG" || fail "cannot make $NOBUNDLE_CG"
on_exit "rmdir '$NOBUNDLE_CG' 2>/dev/null; true"
ns_holder nobundle "$NOBUNDLE_CG"
export CTR_PID=$PID NOBUNDLE_PID=$HOLDER OTHER_PID

"$SHMWATCH" --all --json >"$OUT/all.json" || fail "--all --json exited $?"
# The mounts of a container: by its pid, else by its id and namespace.
MOUNT='(lambda p, ns="swtest": [m for m in j["mounts"] if any(c["pid"] == p or (c["id"], c["containerd_namespace"]) == ("swctr", ns) for c in m["containers"])])'
json_check "$OUT/all.json" "len($MOUNT(int(env['CTR_PID']))) == 1 and [(c['id'], c['name'], c['runtime'], c['containerd_namespace']) for c in $MOUNT(int(env['CTR_PID']))[0]['containers']] == [('swctr', 'swctr', 'containerd', 'swtest')]" \
    "swctr: named, runtime containerd, namespace swtest" \
    "$MOUNT(int(env['CTR_PID']))[0]['budget']['limit_bytes'] == 300 * 1024 * 1024 and $MOUNT(int(env['CTR_PID']))[0]['cgroup']['path'] == '/swtest/swctr'" \
    "swctr: its own 300 MiB limit" \
    "[s['state'] for s in j['segments'] if s['mount_id'] == $MOUNT(int(env['CTR_PID']))[0]['id'] and s['name'] == 'data'] == ['in_use']" \
    "swctr: its held segment in use" \
    "[(c['runtime'], c['id'], c['containerd_namespace']) for m in j['mounts'] for c in m['containers'] if c['pid'] == int(env['NOBUNDLE_PID'])] == [(None, None, None)]" \
    "/swtest/nobundle, without a bundle: a mount namespace with no runtime" \
    "sorted((c['containerd_namespace'], m['id']) for m in j['mounts'] for c in m['containers'] if c['id'] == 'swctr') == sorted([('swtest', $MOUNT(int(env['CTR_PID']))[0]['id']), ('swother', $MOUNT(int(env['OTHER_PID']), 'swother')[0]['id'])]) and len({m['id'] for m in j['mounts'] if any(c['id'] == 'swctr' for c in m['containers'])}) == 2" \
    "swtest/swctr and swother/swctr: two containers, each with a mount of its own" \
    "len($MOUNT(int(env['OTHER_PID']), 'swother')) == 1 and [(c['id'], c['runtime'], c['containerd_namespace']) for c in $MOUNT(int(env['OTHER_PID']), 'swother')[0]['containers']] == [('swctr', 'containerd', 'swother')]" \
    "swother/swctr: named, runtime containerd, namespace swother" \
    "$MOUNT(int(env['OTHER_PID']), 'swother')[0]['budget']['limit_bytes'] == 64 * 1024 * 1024 and $MOUNT(int(env['OTHER_PID']), 'swother')[0]['cgroup']['path'] == '/swother/swctr'" \
    "swother/swctr: its own 64 MiB limit" \
    "[s['name'] for s in j['segments'] if s['mount_id'] == $MOUNT(int(env['OTHER_PID']), 'swother')[0]['id'] and s['state'] == 'in_use'] == ['other']" \
    "swother/swctr: its own segment, and not swtest/swctr's"
"$SHMWATCH" --all --once >"$OUT/all.txt" || fail "--all --once exited $?"
grep -q "^== CONTAINER swctr (containerd swtest/swctr, " "$OUT/all.txt" ||
    fail "the text report does not name swctr: $(grep '^==' "$OUT/all.txt" | head -n 5)"
ok "the text report names swtest/swctr"
[ "$(grep -c "^== CONTAINER swctr (containerd swother/swctr, " "$OUT/all.txt")" = 1 ] &&
    [ "$(grep -c "^== CONTAINER swctr (containerd swtest/swctr, " "$OUT/all.txt")" = 1 ] ||
    fail "the text report does not give swother/swctr a heading of its own: $(grep '^==' "$OUT/all.txt" | head -n 5)"
ok "the text report names swother/swctr apart"

# 4. The processes, the metrics and the plan name each container's namespace.
json_check "$OUT/all.json" "{p['pid']: (p['container'], p['containerd_namespace']) for p in j['processes'] if p['pid'] in (int(env['CTR_PID']), int(env['OTHER_PID']))} == {int(env['CTR_PID']): ('swctr', 'swtest'), int(env['OTHER_PID']): ('swctr', 'swother')}" \
    "each holder's container: swctr, of its own containerd namespace"
"$SHMWATCH" --all --prometheus >"$OUT/all.prom" || fail "--all --prometheus exited $?"
for ns in swtest swother; do
    [ "$(grep -c "^shmwatch_mount_used_bytes{.*,container_id=\"swctr\",pod=\"\",namespace=\"\",containerd_namespace=\"$ns\"} " "$OUT/all.prom")" = 1 ] ||
        fail "no series of $ns/swctr's mount with its containerd_namespace: $(grep '^shmwatch_mount_used_bytes{' "$OUT/all.prom")"
done
ok "the metrics of each swctr's mount carry its containerd_namespace"
# An orphan in each: a torch segment of a creator pid no process of the
# container has (ctr run gives each container a pid namespace of its own).
for x in "$CTR_PID:torch_4242_0" "$OTHER_PID:torch_4343_0"; do
    head -c 65536 /dev/zero >"/proc/${x%%:*}/root/dev/shm/${x#*:}" || fail "cannot write ${x#*:}"
done
"$SHMWATCH" clean --all --dry-run >"$OUT/plan" 2>&1 || fail "clean --all --dry-run exited $?: $(cat "$OUT/plan")"
grep -q "^  /dev/shm/torch_4242_0 (in swtest/swctr)  " "$OUT/plan" &&
    grep -q "^  /dev/shm/torch_4343_0 (in swother/swctr)  " "$OUT/plan" ||
    fail "the plan does not name each swctr by its namespace: $(cat "$OUT/plan")"
ok "clean --all --dry-run names swtest/swctr and swother/swctr"

# 5. A death in swother/swctr, told by the dashboard, the exporter, why and
# replay, each naming the container with its namespace.
BUS_PID=$(pgrep -P "$OTHER_PID" -x sleep)
[ "${BUS_PID:-0}" -gt 0 ] || fail "swother/swctr has no holder beside its init: $(ps -o pid,ppid,comm --ppid "$OTHER_PID")"
. "$(dirname "$0")/why_lib.sh"
. "$(dirname "$0")/tui_lib.sh"
record_need
record_start --all --interval 0.5
record_wait "r.get('schema') == 1 and any(p['pid'] == $BUS_PID for p in r['processes'])" 20 ||
    fail "the recording never showed swother/swctr's holder $BUS_PID: $(record_last)"
PROM=$OUT/deaths.prom
"$SHMWATCH" --all --prometheus-file "$PROM" --interval 0.3 &
EXPORTER=$!
on_exit "kill -TERM $EXPORTER 2>/dev/null; wait $EXPORTER 2>/dev/null; true"
# Two files written: the second after a scan that knows the holder.
wait_for "[ -f '$PROM' ]" 15 || fail "the exporter wrote nothing"
first=$(stat -c %i "$PROM")
wait_for "[ \"\$(stat -c %i '$PROM')\" != $first ]" 15 || fail "the exporter wrote only once"
tui_start 200 50 --all
tui_wait "node view" 30
# Other tests' containers may fill the screen (the gauges, fullest first,
# are not filtered): the filter keeps these two rows, and the budget line
# names the selected one's container as the gauges do (ui_ctr_label).
tui_keys '*' / swctr Enter
tui_wait "container swtest/swctr " 15
tui_wait "container swother/swctr " 5
tui_wait "^Budget (swtest|swother)/swctr " 5
ok "the dashboard's rows and budget line name swtest/swctr and swother/swctr"
kill -BUS "$BUS_PID" || fail "cannot send SIGBUS to $BUS_PID"
tui_wait "holder $BUS_PID \(sleep\) died of SIGBUS: .* \[swother/swctr\]" 15
ok "the dashboard's event line names swother/swctr"
tui_quit
want="shmwatch_process_deaths_total{signal=\"SIGBUS\",role=\"holder\",container=\"swctr\",containerd_namespace=\"swother\"} 1"
wait_for "grep -qxF '$want' '$PROM'" 10 || fail "the exporter does not count the death in swother: $(grep deaths "$PROM")"
ok "the exporter counts the death: $want"
kill -TERM "$EXPORTER"
wait "$EXPORTER" || fail "the exporter ended with status $?"
record_wait "r.get('event') == 'exit' and r['pid'] == $BUS_PID and r['containerd_namespace'] == 'swother'" 20 ||
    fail "no exit of $BUS_PID in swother in the recording"
# (It stays a zombie: the container's init does not reap it.)
record_wait "r.get('schema') == 1 and not any(h['pid'] == $BUS_PID for s in r['segments'] for h in s['holders'])" 20 ||
    fail "no snapshot after the death: $(record_last)"
record_stop
why_run
assert_eq "$WHY_RC" 4 "why exits 4 ($(head -c 300 "$WHY_ERR"))"
grep -q "^holder $BUS_PID (sleep), container swother/swctr: killed by SIGBUS (Bus error) at " "$WHY_OUT" ||
    fail "why does not name swother/swctr: $(head -n 3 "$WHY_OUT")"
ok "why names the container swother/swctr"
for x in swother/swctr:4 swctr:4 swtest/swctr:0; do
    why_run --container "${x%:*}"
    assert_eq "$WHY_RC" "${x##*:}" "why --container ${x%:*} exits ${x##*:}"
done
tui_start 200 50 replay --dir "$RECORD_DIR"
tui_wait "REPLAY " 10
# Back an event at a time from the newest snapshot to the death.
for _ in $(seq 30); do
    tui_keys '{'
    # shellcheck disable=SC2016 # wait_for evaluates it
    wait_for 'tui_cap | grep -qE "exit of pid $BUS_PID \(sleep, holder\) in swother/swctr: SIGBUS at "' 1 && break
done
tui_wait "exit of pid $BUS_PID \(sleep, holder\) in swother/swctr: SIGBUS at " 1
ok "replay's status line names swother/swctr"
tui_quit
ok "done in $((SECONDS - T0)) s"
