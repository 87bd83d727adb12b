#!/usr/bin/env bash
# The static binary (meson -Dstatic=true; here the same program linked
# statically beside the normal build) in a container whose image holds
# nothing but busybox-static's binary and shmwatch: no shared library, no
# terminfo database, no NSS. --once and --json see the container's /dev/shm;
# the dashboard runs in tmux for every terminal the binary carries an entry
# for, names a segment's owner from the container's /etc/passwd, and quits
# leaving the terminal as it was; an unknown TERM is a one-line error.
. "$(dirname "$0")/lib.sh"
need_static
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need busybox file
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

file -L "$SHMWATCH_STATIC" | grep -q "statically linked" || fail "$SHMWATCH_STATIC is not static"
bb=$(command -v busybox)
file -L "$bb" | grep -q "statically linked" || _lib_missing "busybox-static (a static $bb)"

# The root: busybox, its shell and the tools the test uses, shmwatch, /tmp,
# and a passwd naming uid 1000.
root=$SHMTEST_TMP/root
mkdir -p "$root"/{bin,usr/bin,etc,tmp,proc,sys,dev}
chmod 1777 "$root/tmp"
cp "$bb" "$root/bin/busybox"
for t in sh sleep head chown ls cat; do ln -s busybox "$root/bin/$t"; done
cp "$SHMWATCH_STATIC" "$root/usr/bin/shmwatch"
printf 'root:x:0:0:root:/:/bin/sh\ntrainer:x:1000:1000::/:/bin/sh\n' >"$root/etc/passwd"
[ "$(find "$root" -type f | wc -l)" -eq 3 ] || fail "the root holds more than busybox, shmwatch and passwd"
[ ! -e "$root/usr/share/terminfo" ] && [ ! -e "$root/lib" ] || fail "the root has libraries or terminfo"

docker_start
stamp=$(cat "$root/bin/busybox" "$root/usr/bin/shmwatch" "$root/etc/passwd" | md5sum | cut -c1-12)
img=shmwatch-test/static:$stamp
# Earlier runs' images of other binaries go (the data root is cached).
dk images --format '{{.Repository}}:{{.Tag}}' shmwatch-test/static | grep -vxF "$img" |
    xargs -r "$DOCKER_BIN" rmi >/dev/null 2>&1 || true
tar -C "$root" --numeric-owner --owner=0 --group=0 -c . |
    dk import --change 'ENV PATH=/usr/bin:/bin' - "$img" >/dev/null || fail "docker import failed"
ok "imported $img: busybox and the static shmwatch, nothing else"

seg=torch_1_7
docker_run box --shm-size 16m "$img" sh -c \
    "head -c 1048576 /dev/zero >/dev/shm/$seg && chown 1000 /dev/shm/$seg && exec sleep 600"
wait_for "dk exec box ls /dev/shm/$seg >/dev/null 2>&1" 20 || fail "the container did not write its segment"
! dk exec box ls /usr/share/terminfo /lib/terminfo /etc/terminfo >/dev/null 2>&1 ||
    fail "the container has a terminfo database"

# --- --once and --json -----------------------------------------------------------
dk exec box shmwatch --once >"$SHMTEST_TMP/once.txt" 2>"$SHMTEST_TMP/once.err" ||
    fail "shmwatch --once in the container exited $?: $(cat "$SHMTEST_TMP/once.err")"
grep -q "$seg" "$SHMTEST_TMP/once.txt" || { cat "$SHMTEST_TMP/once.txt" >&2; fail "--once does not list $seg"; }
grep -q "/dev/shm" "$SHMTEST_TMP/once.txt" || fail "--once shows no /dev/shm"
ok "--once in the busybox container lists its segment"
dk exec box shmwatch --json >"$SHMTEST_TMP/snap.json" || fail "shmwatch --json in the container exited $?"
json_check "$SHMTEST_TMP/snap.json" \
    "[(s['size_bytes'], s['uid']) for s in j['segments'] if s['name'] == '$seg'] == [(1 << 20, 1000)] and j['mounts'][0]['size_bytes'] == 16 << 20" \
    "--json sees the container's 16 MiB /dev/shm and its 1 MiB segment of uid 1000"

# --- The dashboard, on every carried terminal -------------------------------------------------
SHMWATCH=/usr/bin/shmwatch
for term in xterm xterm-256color screen screen-256color tmux tmux-256color linux vt100; do
    TUI_PREFIX="$DOCKER_BIN exec -it -e TERM=$term -e LANG=C.UTF-8 box"
    tui_start 120 30
    tui_wait "$seg" 20
    tui_wait "/dev/shm" 5
    tui_quit
    ok "TERM=$term: the dashboard draws in the container and quits cleanly"
done

# The owner's name, from the container's /etc/passwd (no NSS in a static binary).
TUI_PREFIX="$DOCKER_BIN exec -it -e TERM=tmux-256color box"
tui_start 120 30
tui_wait "$seg" 20
tui_keys / t o r c h _ 1 _ 7 Enter
tui_wait "filter \"$seg\"" 5
tui_select "$seg +unheld"
tui_keys Enter
tui_wait "owner +uid 1000 \(trainer\)" 10
ok "the details name uid 1000 'trainer' from the container's /etc/passwd"
tui_keys Escape
tui_quit

# A terminal neither the system nor the binary knows: refused in one line.
rc=0
out=$(dk exec -t -e TERM=no-such-terminal box shmwatch 2>&1 </dev/null) || rc=$?
[ "$rc" -ne 0 ] || fail "an unknown TERM was accepted"
echo "$out" | grep -q "cannot drive the terminal (TERM=no-such-terminal)" ||
    fail "an unknown TERM: '$out'"
ok "an unknown TERM is refused in one line (exit $rc)"
