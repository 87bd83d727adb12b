#!/usr/bin/env bash
# The dashboard's U acting on real files, driven through tmux: four unheld
# segments, three of them an hour old and one fresh, beside segments the
# workers of a scene hold. U asks about the three old ones only (min_age),
# and n or Esc leaves everything. Then U and y while the dashboard pauses before
# the unlinks (SHMWATCH_TEST_PAUSE_BEFORE_UNLINK): one target gains a holder and
# another is replaced by a new file of the same name; the re-check refuses
# both (skip all), removes the third, lists and logs the refusals and shows
# the summary as a warning. The young one and those in use are never offered;
# once the holder exits, U removes what it held.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need_hooked
need /usr/bin/python3
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

scene_start --workers 2 --per-worker 1 --modes named --unheld 4
main=$(manifest_pids main)
touch -d '-1 hour' /dev/shm/unheld_0 /dev/shm/unheld_1 /dev/shm/unheld_2
inode() { stat -c %i "/dev/shm/$1"; }
exists() { [ -e "/dev/shm/$1" ]; }
torch_names=$(cd /dev/shm && ls -d torch_*)
[ "$(wc -w <<<"$torch_names")" = 2 ] || fail "the scene made $(wc -w <<<"$torch_names") torch segments, not 2"
log=$SHMTEST_TMP/actions.log

# --- The dialog lists the old unheld ones only, and can be declined ----------------------
tui_start 140 40 --log "$log"
tui_wait "main $main " 10
tui_wait "unheld_3 +unheld " 5
tui_keys U
tui_wait "Unlink 3 unheld segments, 12.0 KiB\?" 5
for n in 0 1 2; do
    tui_wait "/dev/shm/unheld_$n  4.0 KiB  unheld: held by nobody for 1h00m, owner unknown" 5
done
tui_cap | grep -qE "/dev/shm/(unheld_3|torch_)" && { tui_dump; fail "U offers a young or a held segment"; }
tui_wait "\[ Yes \] +\[ No \]" 5
ok "U lists the 3 unheld segments older than min_age (10m), not the young one or those in use"
tui_keys n
tui_wait "nothing unlinked" 5
tui_keys U
tui_wait "Unlink 3 unheld segments" 5
tui_keys Escape
tui_wait "nothing unlinked" 5
tui_keys U
tui_wait "Unlink 3 unheld segments" 5
tui_keys Enter # No is selected
tui_wait "nothing unlinked" 5
for n in 0 1 2 3; do exists "unheld_$n" || fail "declining removed unheld_$n"; done
[ ! -s "$log" ] || fail "declining wrote the action log: $(cat "$log")"
ok "n, Esc and Enter on No remove nothing and log nothing"
tui_quit

# --- Between the question and the unlinks, one gains a holder, one is replaced -------------
pause_gate
SHMWATCH=$SHMWATCH_HOOKED TUI_PREFIX="env SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=3" \
    tui_start 140 40 --log "$log"
tui_wait "unheld_3 +unheld " 10
tui_keys U
tui_wait "Unlink 3 unheld segments" 5
old1=$(inode unheld_1)
tui_keys y
/usr/bin/python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
open(sys.argv[2], "w").close()
time.sleep(300)' /dev/shm/unheld_0 "$SHMTEST_TMP/held" </dev/null >/dev/null 2>&1 &
holder=$!
on_exit "kill -KILL $holder 2>/dev/null"
rm /dev/shm/unheld_1
head -c 4096 /dev/zero >/dev/shm/unheld_1
wait_for "[ -e $SHMTEST_TMP/held ]" 5 || fail "the holder did not start"
new1=$(inode unheld_1)
[ "$new1" != "$old1" ] || fail "the replacement got the same inode $old1"
: >"$GATE"
tui_wait "unheld_[01]: (in use: pid $holder|replaced since the scan)" 10
tui_wait "Skip all \(do not ask again\)" 5
tui_keys 2 # skip all
tui_wait "1 unlinked, 4.0 KiB freed; 2 refused, 0 failed" 10
tui_wait "refused  /dev/shm/unheld_0  in use: pid $holder \(python3, uid 0\) holds it open \(fd [0-9]+\)" 5
tui_wait "refused  /dev/shm/unheld_1  replaced since the scan \(inode $new1, scanned $old1\)" 5
tui_wait "removed  /dev/shm/unheld_2  4.0 KiB freed" 5
ok "the re-check refuses the segment that gained a holder and the one replaced; the third is removed"
tui_keys Enter
tui_wait "^1 unlinked, 4.0 KiB freed; 2 refused, 0 failed" 5
assert_eq "$(tui_style '^1 unlinked, 4.0 KiB freed; 2 refused')" "fg=33 bg=49 bold=0" \
    "the summary of refusals is drawn in the warning colour (yellow)"
exists unheld_0 || fail "the held segment was removed"
assert_eq "$(inode unheld_1)" "$new1" "the replacement is left alone"
! exists unheld_2 || fail "unheld_2 was not removed"
exists unheld_3 || fail "the young segment was removed"
for n in $torch_names; do exists "$n" || fail "$n, in use, was removed"; done
assert_eq "$(logged "	unlink	/dev/shm/unheld_2	owner=0	bytes=4096	removed	")" 1 "the removal is logged"
assert_eq "$(logged "	unlink	/dev/shm/unheld_0	owner=0	bytes=4096	refused	in use: pid $holder ")" 1 \
    "the refusal of the held one is logged"
assert_eq "$(logged "	unlink	/dev/shm/unheld_1	owner=0	bytes=4096	refused	replaced since the scan")" 1 \
    "the refusal of the replaced one is logged"

# --- Nothing left that U may take: the rest is young or held ---------------------------------
tui_keys r
tui_wait "unheld_0 +in_use " 10
tui_keys U
tui_wait "no unheld segments older than 10m00s \(younger ones are kept\)" 5
exists unheld_1 && exists unheld_3 || fail "U removed a segment younger than min_age"
ok "U refuses segments younger than min_age: nothing to unlink"

# --- The holder exits: U takes what it held ----------------------------------------------------
kill -KILL "$holder"
wait "$holder" 2>/dev/null
tui_keys r
tui_wait "unheld_0 +unheld " 10
tui_keys U
tui_wait "Unlink 1 unheld segment, 4.0 KiB\?" 5
tui_wait "/dev/shm/unheld_0  4.0 KiB" 5
tui_keys y
tui_wait "^1 unlinked, 4.0 KiB freed; 0 refused, 0 failed" 10
! exists unheld_0 || fail "unheld_0 was not removed once free"
exists unheld_1 && exists unheld_3 || fail "a young segment was removed"
assert_eq "$(logged "	unlink	/dev/shm/unheld_0	owner=0	bytes=4096	removed	")" 1 "the removal is logged"
ok "once its holder is gone, U removes unheld_0"
tui_quit
