#!/bin/busybox sh
# /init of the cgroup v2 test guest (tests/integration/cgroup_v2_guest.sh builds
# the initramfs and boots it). It runs as pid 1 under a real kernel with cgroup2
# only, makes memory cgroups, starts processes that hold shared memory in them,
# runs shmwatch from the host's view and from inside a cgroup namespace, makes
# the OOM killer fire, and prints what it saw on the serial console as lines:
#   @@JSON TAG {...}   one shmwatch --json snapshot
#   @@VAL TAG VALUE    a raw kernel figure, for the host to compare with
#   @@RC TAG STATUS    an exit status
#   @@DONE             the end (anything missing before it is a failure)
# The host asserts on these; this script only reports. Whatever happens, the
# guest powers off.
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev
/bin/busybox --install -s
export PATH=/usr/local/bin:/bin:/sbin:/usr/bin:/usr/sbin # shmwatch, util-linux unshare first

finish() {
    echo "@@DONE"
    sync
    poweroff -f
}
trap finish EXIT

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/shm /tmp /sys/fs/cgroup
mount -t tmpfs -o size=256m,mode=1777 tmpfs /dev/shm
mount -t tmpfs -o size=16m tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# The kernel's OOM reports stay off the console: the host reads it line by line.
echo 1 >/proc/sys/kernel/printk

echo # the firmware's last line has no end
echo "@@VAL kernel $(uname -r)"
echo "@@VAL controllers $(cat /sys/fs/cgroup/cgroup.controllers)"

C=/sys/fs/cgroup
MiB=1048576
echo +memory >$C/cgroup.subtree_control
# jobs: 256 MiB; under it train (max: the parent's limit applies), small
# (64 MiB, below the parent's) and big (1 GiB, above it: the parent's counts).
# free: no limit anywhere up the tree. oomy: 32 MiB, where the OOM killer fires.
mkdir $C/jobs $C/free $C/oomy
echo $((256 * MiB)) >$C/jobs/memory.max
echo +memory >$C/jobs/cgroup.subtree_control
mkdir $C/jobs/train $C/jobs/small $C/jobs/big
echo max >$C/jobs/train/memory.max
echo $((64 * MiB)) >$C/jobs/small/memory.max
echo $((1024 * MiB)) >$C/jobs/big/memory.max
echo $((32 * MiB)) >$C/oomy/memory.max
echo 0 >$C/oomy/memory.swap.max 2>/dev/null
echo "@@VAL train.max $(cat $C/jobs/train/memory.max)"

# hold NAME CGROUP MIB: a process in CGROUP writes MIB MiB to /dev/shm/NAME
# (charged to CGROUP: it touched the pages first) and holds it open. Prints
# its pid once the file is written.
hold() {
    sh -c 'echo $$ >"$1/cgroup.procs" &&
        dd if=/dev/zero of="/dev/shm/$2" bs=1048576 count="$3" 2>/dev/null &&
        exec 3<"/dev/shm/$2" && echo written >"/tmp/$2.ok" && exec sleep 1000' \
        hold "$C/$2" "$1" "$3" >/dev/null 2>"/tmp/$1.err" &
    pid=$!
    i=0
    while [ ! -e "/tmp/$1.ok" ] && [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -e "/tmp/$1.ok" ] || sed "s/^/@@ERR hold-$1 /" "/tmp/$1.err" >/dev/console
    echo $pid
}

snap() { # TAG shmwatch-args...: one JSON snapshot on one line
    tag=$1
    shift
    out=$(shmwatch --json "$@" 2>/tmp/err)
    echo "@@RC $tag $?"
    echo "@@JSON $tag $out"
    [ -s /tmp/err ] && sed "s/^/@@ERR $tag /" /tmp/err
}

P_TRAIN=$(hold torch_7_1 jobs/train 40)
P_SMALL=$(hold torch_8_1 jobs/small 20)
P_BIG=$(hold torch_9_1 jobs/big 10)
P_FREE=$(hold psm_0000feed free 8)

# The host's view: every cgroup by its full path.
snap host-train --pid "$P_TRAIN"
snap host-small --pid "$P_SMALL"
snap host-big --pid "$P_BIG"
snap host-free --pid "$P_FREE"
for g in jobs/train jobs/small; do
    echo "@@VAL $g.peak $(cat $C/$g/memory.peak 2>/dev/null || echo none)"
    echo "@@VAL $g.shmem $(awk '$1 == "shmem" { print $2 }' $C/$g/memory.stat)"
done

# Inside a cgroup namespace, as a container on a cgroup v2 host (util-linux's
# unshare, by path: busybox sh prefers its own applet, which lacks -C): the process
# joins jobs/small, unshares its cgroup (and mount) namespace and mounts
# cgroup2 afresh, as Docker and systemd-nspawn do, so its cgroup is "/".
sh -c 'echo $$ >"$1/cgroup.procs" && exec /usr/local/bin/unshare -C -m sh -c "$2"' ns "$C/jobs/small" '
    echo "@@VAL ns.cgroup $(cat /proc/self/cgroup)"
    umount /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup
    out=$(shmwatch --json 2>/tmp/err.ns)
    echo "@@RC ns-self $?"
    echo "@@JSON ns-self $out"
    out=$(shmwatch --json --pid '"$P_SMALL"' 2>/tmp/err.ns2)
    echo "@@RC ns-pid $?"
    echo "@@JSON ns-pid $out"
'
echo "@@RC ns-shell $?"
# The same without a fresh mount: the old mount's root lies outside the
# namespace. shmwatch must say so, not crash or read the wrong cgroup.
sh -c 'echo $$ >"$1/cgroup.procs" && exec /usr/local/bin/unshare -C sh -c "$2"' ns "$C/jobs/small" '
    echo "@@VAL ns-stale.mountinfo $(grep cgroup2 /proc/self/mountinfo)"
    out=$(shmwatch --json 2>/dev/null)
    echo "@@RC ns-stale $?"
    echo "@@JSON ns-stale $out"
'

# The OOM killer, in a container of its own: the cgroup oomy (32 MiB) and a
# mount namespace with a fresh 128 MiB tmpfs at /dev/shm (the other cgroups'
# segments fill the guest's own). In it a survivor the killer may not pick
# (oom_score_adj -1000) and, once told to go, a writer that fills /dev/shm
# past the limit. A stream of snapshots begins before the kill.
sh -c 'echo $$ >"$1/cgroup.procs" && exec /usr/local/bin/unshare -m sh -c "$2"' oomctr "$C/oomy" '
    mount -t tmpfs -o size=128m,mode=1777 tmpfs /dev/shm
    echo -1000 >/proc/self/oom_score_adj
    sleep 1000 &
    echo $! >/tmp/surv.pid
    while [ ! -e /tmp/go ]; do sleep 0.1; done
    sh -c "echo 1000 >/proc/self/oom_score_adj && exec dd if=/dev/zero of=/dev/shm/oomfill bs=1048576 count=100" 2>/dev/null
    echo $? >/tmp/writer.rc
' >/dev/null 2>&1 &
i=0
while [ ! -s /tmp/surv.pid ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
P_SURV=$(cat /tmp/surv.pid)
snap oom-before --pid "$P_SURV"
shmwatch --json --interval 0.5 --count 600 --pid "$P_SURV" >/tmp/stream 2>/dev/null &
P_STREAM=$!
# Two snapshots before the kill, however slow the emulated guest is (the
# stream's file may not be made yet: a redirection from it would fail, and
# the test with it).
lines() { cat /tmp/stream 2>/dev/null | wc -l; }
i=0
while [ "$(lines)" -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
echo "@@VAL oom-stream-at-go $(lines)"
touch /tmp/go
i=0
while [ ! -s /tmp/writer.rc ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
echo "@@RC oom-writer $(cat /tmp/writer.rc)"
echo "@@VAL oomy.events.oom_kill $(awk '$1 == "oom_kill" { print $2 }' $C/oomy/memory.events)"
i=0
while ! grep -q '"oom_kills":[1-9]' /tmp/stream && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
n=$(lines) # one more snapshot after the first that saw it
i=0
while [ "$(lines)" -le "$n" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill $P_STREAM
wait $P_STREAM
echo "@@JSON oom-stream-first $(head -n 1 /tmp/stream)"
echo "@@JSON oom-stream-after $(grep -m 1 '"oom_kills":[1-9]' /tmp/stream)"
echo "@@JSON oom-event $(grep -m 1 '"event":"oom_kill"' /tmp/stream)"
echo "@@VAL oom-survivor $(kill -0 $P_SURV 2>/dev/null && echo alive || echo dead)"
out=$(shmwatch --prometheus --pid "$P_SURV" 2>/dev/null | grep '^shmwatch_cgroup_oom_kills_total')
echo "@@VAL oom-prometheus $out"
