#!/usr/bin/env bash
# The shipped program reads no test's wish from its environment: the names of
# the test hooks' variables are in the test build (tests/helpers/
# shmwatch_hooked.c) and nowhere in src/shmwatch (or its static link). And
# the variables do nothing to it: with a pause asked for, clean does not wait.
. "$(dirname "$0")/lib.sh"
need_hooked
need timeout
names='SHMWATCH_TEST_PAUSE_BEFORE_UNLINK SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL SHMWATCH_TEST_PAUSE_UNTIL
    SHMWATCH_TEST_BLOCKING_STAT SHMWATCH_TEST_STALL_LIMIT SHMWATCH_TEST_KILL_MEMBER'
for n in $names; do
    grep -aq "$n" "$SHMWATCH_HOOKED" || fail "the test build lacks $n (the check would prove nothing)"
    for bin in "$SHMWATCH" ${SHMWATCH_STATIC:+"$SHMWATCH_STATIC"}; do
        if grep -aq "$n" "$bin"; then fail "$bin holds $n"; fi
    done
done
ok "no test hook variable in the shipped program"
_lib_tmp
# A dry clean that has one file to check (named with no creator pid: unheld,
# owner unknown): the test build pauses before it,
# the shipped program does not.
# It runs on a tmpfs of its own (--mount takes only a tmpfs mount).
dir=$SHMTEST_TMP/mnt
dry() { # BINARY: DRY_MS, the milliseconds a dry clean of $dir takes with a 5 s pause asked for
    local t0 out rc=0
    t0=$(date +%s%N)
    # shellcheck disable=SC2016 # expanded by the inner shell
    out=$(SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=5 SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL=5 \
        on_tmpfs "$dir" bash -c 'head -c 4096 /dev/zero >"$1/seg_1" &&
            exec timeout 30 "$2" clean --dry-run --all-unheld --min-age 0 --mount "$1"' \
        dry "$dir" "$1" 2>&1) || rc=$?
    # 3: refused, when a process that can reach /tmp cannot be searched.
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "$1 clean --dry-run exited $rc: $out"
    grep -q "^\(would remove\|refused\) .*seg_1" <<<"$out" ||
        fail "$1 clean --dry-run checked nothing: $out"
    DRY_MS=$((($(date +%s%N) - t0) / 1000000))
}
dry "$SHMWATCH_HOOKED"
ms=$DRY_MS
[ "$ms" -ge 5000 ] || fail "the test build did not pause ($ms ms): the check would prove nothing"
dry "$SHMWATCH"
ms=$DRY_MS
[ "$ms" -lt 5000 ] || fail "the shipped program paused ($ms ms)"
ok "the shipped program ignores the hooks' variables (a dry clean in $ms ms)"
