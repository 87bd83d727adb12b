#!/usr/bin/env bash
# Docker's default: a 64 MiB /dev/shm and a DataLoader whose batches need more.
# 2 workers, prefetch factor 2, batches of 22 images of 3x224x224 float32
# (12.6 MiB each). Holding one batch, the job fills the mount to about 99 %
# with the four prefetched ones, and shmwatch must say critical and name the
# 64 MiB default. Released, the job keeps the batch in use while receiving the
# next one, as a training loop does: a worker's next batch does not fit, and
# it dies with PyTorch's own Bus error message. `shmwatch plan` for the same
# batch then gives a --shm-size with which the same job runs to the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
need umount
test_ns 64m -- "$@"

# The main's step (1 s) is what lets a worker build its next batch while the
# main still holds the one before: with 0.1 s, a worker slowed by a loaded
# machine built it only once the main had let one go, it fitted, and the job
# ran to its end.
JOB=(--strategy file_descriptor --workers 2 --prefetch-factor 2 --batch-size 22
    --shape 3x224x224 --hold-batches 1 --iterate-all --step-seconds 1)
# shellcheck disable=SC2054 # 3x224x224,1:int64 is one argument
PLAN=(--batch-size 22 --sample-shape 3x224x224,1:int64 --workers 2 --prefetch-factor 2)

torch_start "${JOB[@]}"
wait_for '[ "$(fs_used_bytes /dev/shm)" -ge $((95 * (64 << 20) / 100)) ]' 20 ||
    fail "the prefetched batches did not fill the mount: $(fs_used_bytes /dev/shm) bytes used"
torch_settle
snap full
f=$SHMTEST_TMP/full.json
json_check "$f" "j['mounts'][0]['size_bytes'] == 64 << 20 and j['mounts'][0]['used_pct'] >= 95" \
    "the 64 MiB mount is over 95 % full" \
    "j['budget']['verdict'] == 'critical' and any('full' in a and 'critical' in a for a in j['budget']['advice'])" \
    "the verdict is critical, and the advice says why" \
    "any('64 MiB' in a and \"Docker's default\" in a for a in j['budget']['advice']) and j['budget']['recommended_shm_size_bytes'] > 64 << 20" \
    "the advice names Docker's 64 MiB default and recommends more" \
    "[sorted(g['workers']) for g in j['groups'] if g['main_pid'] == $MAIN] == [sorted($WORKERS)] and abs(sum(g['shm_bytes'] for g in j['groups'] if g['main_pid'] == $MAIN) - j['mounts'][0]['used_bytes']) <= 32 * page" \
    "the job's group holds what fills the mount"
grep -q 'verdict: critical' "$SHMTEST_TMP/full.txt" || fail "the text report does not say critical"
ok "the text report says critical"

torch_release
torch_wait_exit 60
assert_eq "$TORCH_RC" 1 "the job fails"
# (The worker's message ends in a NUL byte: grep -a.) Under load the main
# process may lose the race to report the dead worker (it meets a reset
# connection first and its own stderr is gone by then): the worker's own
# message from PyTorch's SIGBUS handler says the same.
msg='DataLoader worker \(pid [0-9]+\) is killed by signal: Bus error|No space left on device|Unexpected bus error encountered in worker'
grep -aqE "$msg" "$TORCH_ERR" || fail "no Bus error or ENOSPC message from PyTorch: $(tail -n 3 "$TORCH_ERR")"
ok "PyTorch says: $(grep -a -m1 -oE "$msg" "$TORCH_ERR")"
if grep -aq 'DataLoader worker .* is killed by signal' "$TORCH_ERR" &&
    grep -aq 'bus error encountered in worker' "$TORCH_ERR"; then
    ok "and the worker: $(grep -a -m1 -o 'Unexpected bus error encountered in worker[^.]*' "$TORCH_ERR")"
fi
grep -q '^DONE ' "$TORCH_OUT" && fail "the failed job printed DONE"
torch_cleanup

# The calculator, for the same batch.
"$SHMWATCH" plan "${PLAN[@]}" --shm-size 64m >"$SHMTEST_TMP/plan.txt" || fail "plan exited $?"
grep -q '^Verdict: does not fit' "$SHMTEST_TMP/plan.txt" || fail "plan: $(tail -n 3 "$SHMTEST_TMP/plan.txt")"
ok "plan: 64 MiB does not fit this loader"
"$SHMWATCH" plan "${PLAN[@]}" --json >"$SHMTEST_TMP/plan.json" || fail "plan --json exited $?"
json_check "$SHMTEST_TMP/plan.json" "j['batches_in_shm'] == 6 and j['batch_bytes'] == 22 * (3 * 224 * 224 * 4 + 8) and j['shm_peak_bytes'] > 64 << 20" \
    "plan: 6 batches of 22 samples at the peak, more than 64 MiB"
size=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["recommended_shm_size"])' "$SHMTEST_TMP/plan.json")
ok "plan recommends --shm-size=$size"

# The same job on a tmpfs of that size.
umount /dev/shm || fail "umount /dev/shm failed"
mount -t tmpfs -o "size=$size,mode=1777" tmpfs /dev/shm || fail "mount of $size failed"
torch_bind_shm
assert_eq "$(stat -f -c '%b' /dev/shm)" "$(($("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["recommended_shm_size_bytes"])' "$SHMTEST_TMP/plan.json") / $(stat -f -c '%S' /dev/shm)))" \
    "/dev/shm is now $size"
rc=0
timeout 120 "${TORCH_CMD[@]}" "${JOB[@]}" </dev/null >"$SHMTEST_TMP/ok.out" 2>"$SHMTEST_TMP/ok.err" || rc=$?
[ "$rc" -eq 0 ] || fail "the same job fails with --shm-size=$size (rc $rc): $(tail -n 3 "$SHMTEST_TMP/ok.err")"
ok "the same job succeeds with --shm-size=$size"
grep -q '^DONE {"batches": 7,' "$SHMTEST_TMP/ok.out" || fail "DONE: $(cat "$SHMTEST_TMP/ok.out")"
ok "all 7 batches went through"
