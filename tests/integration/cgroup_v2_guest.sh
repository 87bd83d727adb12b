#!/usr/bin/env bash
# cgroup v2 for real. These machines run cgroup v1 (hybrid), so the test boots
# a throwaway guest: qemu in TCG mode (no KVM needed), no disk, Debian's
# linux-image-cloud-amd64 kernel, and an initramfs holding busybox-static, this
# build's shmwatch with its shared libraries, util-linux's unshare (busybox's
# has no -C) and tests/guest/init.sh as /init. The guest makes memory cgroups,
# holds shared memory in them, runs shmwatch from the host's view and from
# inside a cgroup namespace, makes the OOM killer fire and prints what it saw
# on the serial console; this script asserts on that output.
#
# The kernel package is fetched with apt-get download into a cache outside the
# checkout (GUEST_CACHE, default /var/cache/shmwatch-tests/guest) and fetched
# again when missing; nothing is installed into the host's /boot.
#
# Only the plain build runs it (tests/meson.build): the sanitizer build's binary
# would need libasan and libubsan in the initramfs, and the guest proves the
# kernel's interface, which does not change with the build; the parsers it
# exercises run under the sanitizers in the unit tests on fixture trees.
. "$(dirname "$0")/lib.sh"
need qemu-system-x86_64 cpio gzip dpkg-deb apt-get ldd timeout python3 flock
GUEST_CACHE=${GUEST_CACHE:-/var/cache/shmwatch-tests/guest}
MiB=1048576

# A static busybox (busybox-static's /bin/busybox).
busybox=
for b in /bin/busybox /usr/bin/busybox; do
    if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
        busybox=$b
        break
    fi
done
[ -n "$busybox" ] || _lib_missing "a static busybox (package busybox-static)"
# util-linux's unshare, for -C (a cgroup namespace).
ul_unshare=$(command -v unshare) || _lib_missing "unshare (util-linux)"
"$ul_unshare" --help 2>&1 | grep -q -- '--cgroup' || _lib_missing "an unshare with --cgroup (util-linux)"

# kernel_fetch: GUEST_CACHE/vmlinuz and GUEST_CACHE/config of the current
# linux-image-cloud-amd64, downloaded and unpacked (never installed) when missing.
kernel_fetch() {
    [ -s "$GUEST_CACHE/vmlinuz" ] && [ -s "$GUEST_CACHE/config" ] && return 0
    mkdir -p "$GUEST_CACHE" 2>/dev/null && [ -w "$GUEST_CACHE" ] ||
        _lib_missing "a writable kernel cache at $GUEST_CACHE (set GUEST_CACHE)"
    exec 9>"$GUEST_CACHE/.lock"
    flock -w 300 9 || fail "the kernel cache $GUEST_CACHE stayed locked"
    if [ -s "$GUEST_CACHE/vmlinuz" ] && [ -s "$GUEST_CACHE/config" ]; then
        exec 9>&-
        return 0 # fetched by another run meanwhile
    fi
    local pkg tmp
    kernel_pkg() {
        apt-cache depends linux-image-cloud-amd64 2>/dev/null |
            awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
    }
    pkg=$(kernel_pkg)
    if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
        apt-get update -q >/dev/null 2>&1 || true
        pkg=$(kernel_pkg)
    fi
    [ -n "$pkg" ] || _lib_missing "the package linux-image-cloud-amd64 in apt's lists"
    tmp=$(mktemp -d "$GUEST_CACHE/fetch.XXXXXX")
    chmod 777 "$tmp" # apt-get download drops to _apt, which must be able to write here
    echo "fetching $pkg into $GUEST_CACHE" >&2
    if ! (cd "$tmp" && apt-get download -q "$pkg" >"$tmp/apt.log" 2>&1); then
        cat "$tmp/apt.log" >&2
        rm -rf "$tmp"
        _lib_missing "apt-get download $pkg (the package network)"
    fi
    dpkg-deb -x "$tmp"/*.deb "$tmp/x" || { rm -rf "$tmp"; fail "dpkg-deb -x of $pkg failed"; }
    cp "$tmp"/x/boot/config-* "$GUEST_CACHE/config" &&
        cp "$tmp"/x/boot/vmlinuz-* "$GUEST_CACHE/vmlinuz.new" &&
        echo "$pkg" >"$GUEST_CACHE/package" &&
        mv "$GUEST_CACHE/vmlinuz.new" "$GUEST_CACHE/vmlinuz" ||
        { rm -rf "$tmp"; fail "could not store the kernel in $GUEST_CACHE"; }
    rm -rf "$tmp"
    exec 9>&-
}
kernel_fetch
kernel=$GUEST_CACHE/vmlinuz

# The guest has no modules: what it needs must be built in. (The cloud kernel has
# the 8250 serial console, initramfs, devtmpfs, tmpfs and memory cgroups built in.)
for opt in SERIAL_8250 SERIAL_8250_CONSOLE BLK_DEV_INITRD RD_GZIP DEVTMPFS TMPFS SHMEM \
    CGROUPS MEMCG NAMESPACES; do
    grep -qx "CONFIG_$opt=y" "$GUEST_CACHE/config" ||
        fail "the kernel $(cat "$GUEST_CACHE/package" 2>/dev/null) lacks CONFIG_$opt=y: it would need modules in the initramfs"
done
ok "kernel $(cat "$GUEST_CACHE/package" 2>/dev/null): serial console, initramfs and memory cgroups built in"

# The initramfs: busybox, shmwatch, unshare, their libraries and the dynamic loader.
_lib_tmp
work=$(mktemp -d "$SHMTEST_TMP/guest.XXXXXX")
root=$work/root
mkdir -p "$root/bin" "$root/usr/local/bin"
cp "$busybox" "$root/bin/busybox"
cp "$SHMWATCH" "$root/usr/local/bin/shmwatch"
cp "$ul_unshare" "$root/usr/local/bin/unshare"
for lib in $( (ldd "$SHMWATCH"; ldd "$ul_unshare") | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
cp "$SRCDIR/tests/guest/init.sh" "$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz" ||
    fail "could not pack the initramfs"
ok "initramfs: $(du -k "$work/initrd.gz" | cut -f1) KiB"

# Boot it: TCG on 2 cores, serial console into a file, powered off by /init.
serial=$work/serial.log
start=$(date +%s%N)
rc=0
timeout --kill-after=10 "${GUEST_TIMEOUT:-300}" qemu-system-x86_64 \
    -accel tcg -smp 2 -m 512 -nographic -no-reboot -monitor none -nic none \
    -kernel "$kernel" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 quiet loglevel=1 panic=-1" \
    -serial "file:$serial" </dev/null >"$work/qemu.out" 2>&1 || rc=$?
secs=$((($(date +%s%N) - start) / 1000000))
tr -d '\r' <"$serial" >"$work/console.txt"
if [ "$rc" -ne 0 ] || ! grep -q '^@@DONE' "$work/console.txt"; then
    [ -z "${GUEST_KEEP:-}" ] || cp "$work/console.txt" "$GUEST_KEEP/console.txt"
    echo "--- qemu (status $rc) ---" >&2
    tail -n 20 "$work/qemu.out" >&2
    echo "--- guest console ---" >&2
    tail -n 60 "$work/console.txt" >&2
    fail "the guest did not run to its end (qemu status $rc after ${secs} ms)"
fi
ok "the guest booted, ran and powered off in $((secs / 1000)).$((secs % 1000 / 100)) s (TCG, 2 cores)"
console=$work/console.txt
# GUEST_KEEP=DIR keeps the console for a look afterwards.
[ -z "${GUEST_KEEP:-}" ] || cp "$console" "$GUEST_KEEP/console.txt"

# guest_json TAG: the snapshot the guest printed under TAG, as a file.
guest_json() {
    local f=$work/$1.json
    grep -m 1 "^@@JSON $1 " "$console" | cut -d' ' -f3- >"$f"
    [ -s "$f" ] || fail "the guest printed no snapshot $1"
    echo "$f"
}
# guest_val TAG: the value the guest printed under TAG.
guest_val() {
    grep -m 1 "^@@VAL $1 " "$console" | cut -d' ' -f3-
}
guest_rc() {
    grep -m 1 "^@@RC $1 " "$console" | cut -d' ' -f3
}
grep '^@@ERR' "$console" >&2 || true

echo "guest kernel $(guest_val kernel), controllers: $(guest_val controllers)"
case " $(guest_val controllers) " in
*" memory "*) ok "the guest has cgroup v2 with the memory controller" ;;
*) fail "no memory controller in the guest's cgroup2: $(guest_val controllers)" ;;
esac
for t in host-train host-small host-big host-free ns-self ns-pid oom-before; do
    assert_eq "$(guest_rc $t)" 0 "shmwatch --json ($t) exited 0"
done

# The host's view: limits, max as unlimited, a parent's limit over a child's.
f=$(guest_json host-train)
json_check "$f" "j['cgroup']['version'] == 2 and j['cgroup']['path'] == '/jobs/train'" \
    "host view: cgroup v2 /jobs/train"
assert_eq "$(guest_val train.max)" max "jobs/train's own memory.max is max"
json_check "$f" "j['cgroup']['limit_bytes'] == 256 * $MiB and j['budget']['limit_source'] == 'cgroup' and j['budget']['limit_bytes'] == 256 * $MiB" \
    "a child whose memory.max is max gets its parent's 256 MiB"
peak=$(guest_val jobs/train.peak)
shmem=$(guest_val jobs/train.shmem)
json_check "$f" "j['cgroup']['shmem_bytes'] == $shmem and abs(j['cgroup']['shmem_bytes'] - 40 * $MiB) <= $MiB" \
    "memory.stat shmem: the 40 MiB written to /dev/shm ($shmem)" \
    "j['cgroup']['peak_bytes'] is not None and j['cgroup']['peak_bytes'] >= 40 * $MiB and j['cgroup']['peak_bytes'] <= $peak" \
    "memory.peak read (guest says $peak)" \
    "j['cgroup']['oom_kills'] == 0" "memory.events: no OOM kill in jobs/train" \
    "any(s['name'] == 'torch_7_1' and s['state'] == 'in_use' and s['alloc_bytes'] == 40 * $MiB for s in j['segments'])" \
    "the held segment is listed in use with its 40 MiB"
f=$(guest_json host-small)
json_check "$f" "j['cgroup']['path'] == '/jobs/small' and j['cgroup']['limit_bytes'] == 64 * $MiB" \
    "a child's own 64 MiB, below its parent's, counts"
f=$(guest_json host-big)
json_check "$f" "j['cgroup']['path'] == '/jobs/big' and j['cgroup']['limit_bytes'] == 256 * $MiB" \
    "a child's own 1 GiB, above its parent's 256 MiB: the parent's counts"
f=$(guest_json host-free)
json_check "$f" "j['cgroup']['path'] == '/free' and j['cgroup']['limit_bytes'] is None and j['budget']['limit_source'] == 'memtotal'" \
    "max all the way up: unlimited, the budget falls back to MemTotal"

# Inside a cgroup namespace (cgroup2 mounted afresh, as a container sees it).
assert_eq "$(guest_val ns.cgroup)" "0::/" "inside the cgroup namespace /proc/self/cgroup says 0::/"
f=$(guest_json ns-self)
json_check "$f" "j['cgroup']['version'] == 2 and j['cgroup']['path'] == '/' and j['cgroup']['limit_bytes'] == 64 * $MiB" \
    "inside the namespace: cgroup / with its 64 MiB limit" \
    "abs(j['cgroup']['shmem_bytes'] - 20 * $MiB) <= $MiB and j['cgroup']['oom_kills'] == 0 and j['cgroup']['peak_bytes'] is not None" \
    "inside the namespace: shmem, peak and OOM kills of the container's cgroup"
f=$(guest_json ns-pid)
json_check "$f" "j['cgroup']['path'] == '/' and j['cgroup']['limit_bytes'] == 64 * $MiB" \
    "inside the namespace, --pid of a process in it: the same cgroup"
f=$(guest_json ns-stale)
echo "stale mount as seen in the namespace: $(guest_val ns-stale.mountinfo)"
json_check "$f" "j['cgroup'] is None or (j['cgroup']['path'] == '/' and j['cgroup']['limit_bytes'] == 64 * $MiB)" \
    "a namespace without a fresh cgroup2 mount: the right cgroup or none, never a wrong one" \
    "j['cgroup'] is not None or any('made outside this cgroup namespace' in w for w in j['warnings'])" \
    "and when none, a warning says why"

# OOM kills.
f=$(guest_json oom-before)
json_check "$f" "j['cgroup']['path'] == '/oomy' and j['cgroup']['limit_bytes'] == 32 * $MiB and j['cgroup']['oom_kills'] == 0" \
    "before: /oomy, 32 MiB, no OOM kill" \
    "len(j['mounts']) == 1 and j['mounts'][0]['size_bytes'] == 128 * $MiB and j['mounts'][0]['used_bytes'] == 0" \
    "the container's own empty 128 MiB /dev/shm, seen through --pid"
writer=$(guest_rc oom-writer)
[ "$writer" = 137 ] || fail "the writer past 32 MiB was not SIGKILLed (status $writer)"
ok "the writer past the limit was killed"
kills=$(guest_val oomy.events.oom_kill)
[ "${kills:-0}" -ge 1 ] || fail "memory.events counts no OOM kill (${kills:-missing})"
assert_eq "$(guest_val oom-survivor)" alive "the survivor (oom_score_adj -1000) lives on"
[ "$(guest_val oom-stream-at-go)" -ge 2 ] ||
    fail "the guest's stream wrote $(guest_val oom-stream-at-go) lines in 120 s before the kill"
f=$(guest_json oom-stream-first)
json_check "$f" "j['cgroup']['oom_kills'] == 0 and j['budget']['verdict'] != 'critical'" \
    "the stream before the kill: no OOM kill, not critical"
f=$(guest_json oom-stream-after)
json_check "$f" "j['cgroup']['oom_kills'] == $kills and j['budget']['oom_kills_recent'] >= 1 and j['budget']['verdict'] == 'critical' and 'OOM killer has just ended' in j['budget']['advice'][0]" \
    "after it: oom_kills $kills from memory.events, new, verdict critical" \
    "j['cgroup']['shmem_bytes'] >= 24 * $MiB and any(s['name'] == 'oomfill' for s in j['segments'])" \
    "what the killed writer left on /dev/shm stays charged to the cgroup"
f=$(guest_json oom-event)
json_check "$f" "j['event'] == 'oom_kill' and j['cgroup'] == '/oomy' and j['kills'] >= 1" \
    "the stream's oom_kill event names the cgroup whose memory.events (cgroup v2) counted it"
assert_eq "$(guest_val oom-prometheus)" "shmwatch_cgroup_oom_kills_total $kills" \
    "the Prometheus counter"
