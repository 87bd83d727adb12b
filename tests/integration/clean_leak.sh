#!/usr/bin/env bash
# The real leak: a process group whose workers create named torch segments is
# SIGKILLed with all its helpers, leaving orphans. Without a terminal and
# without --yes, clean only shows the plan; `clean --yes` removes every orphan
# and the mount's used bytes fall by exactly their allocation; a second clean
# finds nothing; the action log has one line per removal. On a terminal it
# asks "Remove it?" of one segment, and a no removes nothing.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setsid
need script
test_ns 64m -- "$@"

SCENE_PREFIX=setsid scene_start --workers 3 --per-worker 4 --modes named --size 1048576 \
    --touch 1048576
[ "$(ps -o pgid= -p "$SCENE_PID" | tr -d ' ')" = "$SCENE_PID" ] ||
    fail "the scene does not lead its own process group"
kill -KILL -- "-$SCENE_PID"
wait_for "! pgrep -g $SCENE_PID >/dev/null || [ -z \"\$(ps -o stat= -g $SCENE_PID | grep -v Z)\" ]" 10 ||
    fail "the killed group did not die"

mapfile -t names < <(manifest_segments named | awk '{ print $5 }')
assert_eq "${#names[@]}" 12 "12 named segments were created"
alloc=0
for h in "${names[@]}"; do
    f=/dev/shm/$(unhex "$h")
    [ -f "$f" ] || fail "segment $f vanished with its creator"
    alloc=$((alloc + $(stat -c '%b * %B' "$f")))
done
used0=$(fs_used_bytes /dev/shm)
log=$SHMTEST_TMP/actions.log

# No terminal, no --yes: the plan and a dry run, nothing removed.
out=$("$SHMWATCH" clean --log "$log" </dev/null) || fail "plain clean exited $?"
grep -q '^12 segments to remove, 12.0 MiB allocated' <<<"$out" || fail "plan header: $out"
grep -q 'Not a terminal' <<<"$out" || fail "no notice that nothing changes: $out"
assert_eq "$(grep -c '^would remove' <<<"$out")" 12 "the dry run would remove all 12"
assert_eq "$(ls /dev/shm | grep -c '^torch_')" 12 "without --yes nothing is removed"
[ ! -e "$log" ] || fail "a dry run wrote the action log"

# --yes: every orphan removed, the mount falls by their allocation.
rc=0
out=$("$SHMWATCH" clean --yes --log "$log") || rc=$?
assert_eq "$rc" 0 "clean --yes exits 0"
assert_eq "$(grep -c '^removed ' <<<"$out")" 12 "12 removals printed"
grep -q '^Total: 12 removed, 12.0 MiB freed; 0 refused, 0 failed' <<<"$out" || fail "total: $out"
assert_eq "$(ls /dev/shm | grep -c '^torch_' || true)" 0 "no torch segment is left"
used1=$(fs_used_bytes /dev/shm)
assert_eq "$((used0 - used1))" "$alloc" "used bytes fell by the orphans' allocation ($alloc)"

# The action log: one line per removal, with owner, bytes and result.
assert_eq "$(grep -c "	unlink	/dev/shm/torch_.*	owner=0	bytes=1048576	removed	" "$log")" 12 \
    "the log has 12 removals with owner and bytes"

# Again: nothing to do.
out=$("$SHMWATCH" clean --yes --log "$log") || fail "second clean exited $?"
grep -q '^Nothing to clean' <<<"$out" || fail "second clean: $out"
# The last line is the total, also of nothing.
assert_eq "$(tail -n 1 <<<"$out")" "Total: 0 removed, 0 B freed; 0 refused, 0 failed, 0 already gone." \
    "the second clean ends with its total"
assert_eq "$(wc -l <"$log")" 12 "nothing more logged"

# On a terminal clean asks, in the number of what it would remove; "n" removes
# nothing, and the last line is still the total.
one=/dev/shm/torch_$(dead_pid)_1
head -c 8192 /dev/zero >"$one"
touch -d '2 hours ago' "$one"
out=$(echo n | timeout 30 script -qec "$SHMWATCH clean --log $log" /dev/null | tr -d '\r') ||
    fail "clean on a terminal: $out"
grep -q "^Remove it? \[y/N\] Nothing done\.$" <<<"$out" || fail "the question for one segment: $out"
assert_eq "$(tail -n 1 <<<"$out")" "Total: 0 removed, 0 B freed; 0 refused, 0 failed, 0 already gone." \
    "a clean answered no ends with its total"
[ -f "$one" ] || fail "the answer no removed the segment"
ok "on a terminal: 'Remove it?' for one segment; no removes nothing, and the total ends it"
