#!/usr/bin/env bash
# shmwatch --demo: opens the dashboard on its own scene (a private mount namespace
# with a 64 MiB tmpfs, a training job whose workers fill, leak and crash), which a
# newcomer sees at 80x24: the mount filling, the DataLoader group, the budget verdict,
# orphans after a crash. Quitting leaves nothing behind; without root it says so and
# exits 2.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setpriv
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

# Processes of this test (not of one running beside it) running the shmwatch
# binary, other than the dashboard's own.
scene_procs() {
    local p
    for p in $(pids_with_link exe "$(readlink -f "$SHMWATCH")"); do
        [ "$p" = "${1:-}" ] && continue
        own_process "$p" || continue
        grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && continue
        echo "$p"
    done
}

ls -la --time-style=+ /dev/shm >"$SHMTEST_TMP/shm.before"
echo marker >/dev/shm/not_the_demos
[ -z "$(scene_procs)" ] || fail "shmwatch processes are already running: $(scene_procs)"

tui_start 80 24 --demo
tui_wait "DEMO" 10
tui_wait "main [0-9]+ " 15
tui_wait "worker [0-9]+ pt_data" 10
tui_wait "shm_manager [0-9]+ torch_shm" 10
ok "the demo opens on a DataLoader group with workers and an shm manager"
tui_wait "^/dev/shm .*[0-9]+\.[0-9]%" 5
tui_wait "full in|FULL" 20
ok "the gauge shows the mount rising, with a time-to-full"
tui_wait "^Budget +(OK|WARN|CRITICAL)" 5
ok "the budget verdict is on screen"
tui_sane "the demo's screen fits 80x24"
tui_keys t s s # flat, by state: orphans first
tui_wait "sort state" 5
tui_wait "^torch_[0-9]+_[0-9]+ +orphan " 45
ok "a crashed worker leaves orphans behind"
[ "$(cat /dev/shm/not_the_demos)" = marker ] || fail "the demo touched the real /dev/shm"
[ -n "$(scene_procs "$TUI_PID")" ] || fail "no scene process found while the demo runs"
tui_quit
wait_for '[ -z "$(scene_procs)" ]' 10 || fail "scene processes left behind: $(scene_procs)"
ok "quitting ends every process of the scene"
rm /dev/shm/not_the_demos
ls -la --time-style=+ /dev/shm >"$SHMTEST_TMP/shm.after"
cmp -s "$SHMTEST_TMP/shm.before" "$SHMTEST_TMP/shm.after" ||
    { diff "$SHMTEST_TMP/shm.before" "$SHMTEST_TMP/shm.after" >&2; fail "/dev/shm changed"; }
ok "/dev/shm outside the demo is as it was"
! grep -q shmwatch-demo /proc/self/mountinfo || fail "the demo's tmpfs is visible outside it"
ok "the demo's tmpfs never appeared outside its namespace"

# Without root.
cp "$SHMWATCH" "$SHMTEST_TMP/shmwatch-copy"
chmod 755 "$SHMTEST_TMP/shmwatch-copy"
SHMWATCH=$SHMTEST_TMP/shmwatch-copy TUI_PREFIX="${NOBODY[*]}" \
    tui_start 80 24 --demo
tui_exited
assert_eq "$TUI_EXIT" 2 "--demo without root exits 2"
tui_wait "needs root" 2
ok "and says it needs root"
