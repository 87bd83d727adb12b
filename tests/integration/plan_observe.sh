#!/usr/bin/env bash
# plan --observe on the real DataLoader, both sharing strategies: the batch it
# reads from the loader's segments is the batch plan computes from the
# loader's own batch size and shapes (an image 3x64x64 float32 and an int64
# label per sample; with file_system, plus torch's small header in each
# segment), and --workers / --prefetch-factor default to what the
# loader shows. A pid without a DataLoader group is a one-line error, exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

# check STRATEGY BATCH WORKERS HOLD
check() {
    local name=$1 bs=$2 workers=$3 hold=$4 f out want
    torch_start --strategy "$1" --workers "$workers" --batch-size "$bs" --hold-batches "$hold"
    torch_settle
    f=$SHMTEST_TMP/$name.observe.json
    "$SHMWATCH" plan --observe "$MAIN" --json >"$f" || fail "$name: plan --observe failed"
    cat "$f"
    want=$("$SHMWATCH" plan --batch-size "$bs" --sample-shape 3x64x64,1:int64 \
        --workers "$workers" --json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["batch_shm_bytes"])')
    # file_system segments carry torch's reference count before the data: up
    # to a page more per tensor (two tensors) than the data in whole pages.
    local slack=0
    [ "$1" = file_system ] && slack=$((2 * 4096))
    json_check "$f" "$want <= j['batch_shm_bytes'] <= $want + $slack and j['batch_bytes'] == j['batch_shm_bytes']" \
        "$name: the observed batch is the batch of --batch-size $bs ($want bytes, + at most $slack)"
    want=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["batch_shm_bytes"])' "$f")
    json_check "$f" "j['observed']['main_pid'] == $MAIN and j['observed']['workers'] == $workers and j['workers'] == $workers and j['batch_size'] is None and j['tensors'] == []" \
        "$name: the observation names the loader and its $workers workers" \
        "j['observed']['batches_in_flight'] >= $hold and j['shm_peak_bytes'] == j['batches_in_shm'] * $want and j['recommended_shm_size_bytes'] >= 64 << 20" \
        "$name: the peak and the recommendation follow from the observed batch"
    out=$("$SHMWATCH" plan --observe "$MAIN" --workers 8 --prefetch-factor 4 --json) ||
        fail "$name: plan --observe with flags failed"
    echo "$out" >"$f"
    json_check "$f" "j['workers'] == 8 and j['prefetch_factor'] == 4 and j['batches_in_shm'] == 34 and j['shm_peak_bytes'] == 34 * $want" \
        "$name: --workers and --prefetch-factor replace what the loader shows"
    "$SHMWATCH" plan --observe "$MAIN" >"$SHMTEST_TMP/$name.observe.txt" || fail "$name: text"
    grep -q "bytes per batch in /dev/shm" "$SHMTEST_TMP/$name.observe.txt" ||
        fail "$name: the text shows the observed batch"
    "$SHMWATCH" --json >"$SHMTEST_TMP/$name.snap.json" || fail "$name: snapshot"
    json_check "$SHMTEST_TMP/$name.snap.json" "[(g['batch_shm_bytes'], g['peak_shm_bytes'] >= g['shm_bytes'], g['shm_per_worker_bytes']) for g in j['groups'] if g['main_pid'] == $MAIN] == [($want, True, [g['shm_bytes'] // $workers for g in j['groups'] if g['main_pid'] == $MAIN][0])]" \
        "$name: the snapshot's group carries the observed batch, its peak and shm per worker" \
        "(lambda b, l, room: l['main_pid'] == $MAIN and l['batch_shm_bytes'] == $want and l['workers_fit_shm'] == (room // $want - 2) // l['prefetch_factor'])(j['budget'], j['budget']['loader'], j['mounts'][0]['size_bytes'] - (j['mounts'][0]['used_bytes'] - j['groups'][0]['shm_bytes']))" \
        "$name: the budget says how many workers fit in this /dev/shm"
    if [ "$1" = file_descriptor ]; then
        # The budget page: the loader's batch, the workers that fit, the errors ahead.
        tui_start 160 60
        tui_wait "main $MAIN " 20
        tui_keys b
        tui_wait "^The DataLoader of main pid $MAIN, as its segments show it" 10
        tui_wait "workers that fit at that factor: [0-9]+ in this /dev/shm" 5
        tui_wait "^Errors this state leads to" 5
        tui_wait "No space left on device \\(28\\)" 5
        tui_wait "is killed by signal: Bus error" 5
        ok "$name: the budget page shows the loader, the workers that fit and the errors ahead"
        tui_keys Escape
        tui_wait "main $MAIN " 5
        tui_quit
        tui kill-server # it inherited the job's stdin FIFO: the job waits for its EOF
    fi
    torch_release
    torch_wait_exit 60
    assert_eq "$TORCH_RC" 0 "$name: the job finishes normally"
}

check file_descriptor 4 2 2
check file_system 8 3 2

# A sample of many tensors of one size (dicts of 4 items: 26 one-page
# tensors a batch) reads as 26 times more batches of one page: batches x
# batch would be less than the loader holds, and the peak is never that.
torch_start --strategy file_descriptor --workers 2 --batch-size 8 --hold-batches 2 \
    --dataset dicts --dict-items 4
torch_settle
f=$SHMTEST_TMP/dicts.observe.json
"$SHMWATCH" plan --observe "$MAIN" --prefetch-factor 2 --json >"$f" || fail "dicts: plan --observe failed"
json_check "$f" "j['shm_peak_bytes'] == j['observed']['shm_bytes'] > j['batches_in_shm'] * j['batch_shm_bytes']" \
    "dicts: the peak is what the loader's batches hold, above batches x batch"
"$SHMWATCH" plan --observe "$MAIN" --prefetch-factor 2 >"$SHMTEST_TMP/dicts.observe.txt" || fail "dicts: text"
grep -q "is less than the loader holds now" "$SHMTEST_TMP/dicts.observe.txt" ||
    fail "dicts: the text does not say the peak is what the loader holds: $(cat "$SHMTEST_TMP/dicts.observe.txt")"
ok "dicts: plan --observe never plans below what the loader holds, and says why"
torch_release
torch_wait_exit 60
assert_eq "$TORCH_RC" 0 "dicts: the job finishes normally"

# Not a DataLoader: a plain process, and a pid that does not exist.
sleep 300 &
plain=$!
on_exit "kill $plain 2>/dev/null"
rc=0
err=$("$SHMWATCH" plan --observe "$plain" 2>&1 >/dev/null) || rc=$?
assert_eq "$rc" 2 "a pid without a DataLoader group exits 2"
assert_eq "$(printf '%s\n' "$err" | wc -l)" 1 "with one line"
grep -q "^shmwatch plan: pid $plain is not the main process of a DataLoader" <<<"$err" ||
    fail "the error says why: $err"
rc=0
"$SHMWATCH" plan --observe 999999999 >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "a pid that does not exist exits 2"
rc=0
"$SHMWATCH" plan --observe "$plain" --batch-size 4 >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "--observe with --batch-size is a usage error"
