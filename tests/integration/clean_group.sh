#!/usr/bin/env bash
# A worker that crashes leaves its named segments behind while its main runs
# on. The dashboard remembers whose worker it was, so its orphans stay in the
# group, and d on the group's row removes exactly them.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

scene_start --workers 2 --per-worker 2 --modes named --size 1048576
main=$(manifest_pids main)
w1=$(manifest_pids worker | head -n 1)
w2=$(manifest_pids worker | tail -n 1)

tui_start 120 40 --log "$SHMTEST_TMP/actions.log"
tui_wait "main $main " 10
tui_wait "worker $w1 " 10
kill -KILL "$w1" # a zombie now: its main does not reap it
wait_for "[ \"\$(awk '{ print \$3 }' /proc/$w1/stat 2>/dev/null)\" = Z ]" 5 ||
    fail "worker $w1 did not die"
tui_keys r
tui_wait "torch_${w1}_0 +orphan" 10
tui_gone "Orphans: held by nobody" 3
ok "the crashed worker's segments are orphans shown in their group"

tui_keys Home d
tui_wait "Unlink 2 orphan segments, 2.0 MiB\\?" 5
tui_keys y
tui_wait "2 unlinked, 2.0 MiB freed; 0 refused, 0 failed" 10
[ ! -e "/dev/shm/torch_${w1}_0" ] && [ ! -e "/dev/shm/torch_${w1}_1" ] ||
    fail "the group's orphans are still there"
[ -e "/dev/shm/torch_${w2}_0" ] && [ -e "/dev/shm/torch_${w2}_1" ] ||
    fail "the live worker's segments were touched"
ok "d on the group's row removes its orphans and nothing else"
tui_quit
