#!/usr/bin/env bash
# The moment of a real Bus error, recorded and explained: a DataLoader whose
# batches outgrow a private 64 MiB /dev/shm inside a memory cgroup (2
# workers, prefetch factor 2, batches of 22 images of 3x224x224 float32,
# 12.6 MiB each: five fill the mount, the sixth does not fit) dies of SIGBUS
# while `shmwatch record` runs. `shmwatch why` must name the worker that got
# it (its pid, its main), the mount full, the group that filled it, and
# advice that `shmwatch plan` agrees with: the recommended --shm-size fits
# the same loader. Then a loader whose first batch outgrows the mount, its
# one worker dead of SIGBUS before a recorder's snapshot saw it: still
# recorded and named as its main's worker; and one a snapshot read in its
# first moments, a mere holder then, named so too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/torch_lib.sh"
. "$(dirname "$0")/why_lib.sh"
torch_need
record_need
LIMIT=$((1 << 30))
if [ -z "${IN_SHM_NS:-}" ]; then
    mem_cgroup_create "shmwatch-whytorch-$$" "$LIMIT"
    in_shm_ns 64m "$0"
    exit $?
fi

# The test's shell joins the cgroup (so that the job it starts is charged
# there) and leaves it for its parent's at the end; all else in it is killed
# before it is removed (cgroup.sh's rmdir).
OUTER_CG=$(dirname "$MEMCG_DIR")
on_exit "echo \$\$ >'$OUTER_CG/cgroup.procs' 2>/dev/null; memcg_kill_all '$MEMCG_DIR'"

# The main's step (1 s) lets a worker build its next batch while the main
# still holds the one before, so the batches outgrow the mount even on a
# loaded machine (torch_docker.sh says why).
JOB=(--strategy file_descriptor --workers 2 --prefetch-factor 2 --batch-size 22
    --shape 3x224x224 --hold-batches 1 --iterate-all --step-seconds 1)
# shellcheck disable=SC2054 # 3x224x224,1:int64 is one argument
PLAN=(--batch-size 22 --sample-shape 3x224x224,1:int64 --workers 2 --prefetch-factor 2)

# The job runs in the memory cgroup: its tmpfs pages are charged there.
echo $$ >"$MEMCG_DIR/cgroup.procs" || fail "cannot join $MEMCG_DIR"
torch_start "${JOB[@]}"
wait_for '[ "$(fs_used_bytes /dev/shm)" -ge $((95 * (64 << 20) / 100)) ]' 20 ||
    fail "the prefetched batches did not fill the mount: $(fs_used_bytes /dev/shm) bytes used"
torch_settle
ok "the job ($MAIN, workers $WORKER_PIDS) holds the mount over 95 % full"

# The recorder (in the same namespaces and cgroup) at a short interval must have
# seen the full mount and the group before the Bus error.
record_start --interval 0.5
record_wait "r.get('schema') == 1 and any(g['main_pid'] == $MAIN for g in r['groups']) and r['mounts'][0]['used_pct'] >= 95" 20 ||
    fail "the recording never showed the job's group on the full mount"
ok "the recording shows the full mount and the group"

torch_release
torch_wait_exit 60
assert_eq "$TORCH_RC" 1 "the job fails"
grep -aqE 'Bus error|bus error' "$TORCH_ERR" || fail "no Bus error from PyTorch: $(tail -n 3 "$TORCH_ERR")"
# The worker's end: SIGBUS from the kernel's process events; where the
# recorder lost some of them (a busy machine overflows the connector's
# queue, and the recorder says so), the scans still see it gone.
record_wait "r.get('event') == 'exit' and r['pid'] in $WORKERS and r['cause'] in ('sigbus', 'unknown')" 30 ||
    fail "the recording has no end of a worker: $(tail -n 3 "$RECORD_ERR")"
record_wait "r.get('schema') == 1 and not any(g['main_pid'] == $MAIN for g in r['groups'])" 30 ||
    fail "no snapshot after the job's end"
torch_cleanup
record_stop
if record_has "r.get('event') == 'exit' and r['pid'] in $WORKERS and r['cause'] == 'sigbus'"; then
    CAUSE=sigbus
    ok "the recorder saw a worker's SIGBUS"
else
    grep -q 'events were lost' "$RECORD_ERR" ||
        fail "a worker's end without its cause, and the recorder did not say it lost events: $(cat "$RECORD_ERR")"
    CAUSE=unknown
    ok "NOTE: the recorder lost the kernel's process events ($(head -n 1 "$RECORD_ERR")): the worker's end has cause unknown"
fi

why_run --json
assert_eq "$WHY_RC" 4 "why exits 4: something died ($(head -c 300 "$WHY_ERR"))"
j=$SHMTEST_TMP/why.json
cp "$WHY_OUT" "$j"
json_check "$j" "[d for d in j['deaths'] if d['cause'] == '$CAUSE'] and all(d['pid'] in $WORKERS and d['group'] == $MAIN and d['role'] == 'worker' and d['signal'] == ('SIGBUS' if '$CAUSE' == 'sigbus' else None) for d in j['deaths'] if d['cause'] == '$CAUSE')" \
    "why names the worker that got SIGBUS ($CAUSE), and its main $MAIN" \
    "(lambda d: d['mount']['path'] == '/dev/shm' and d['mount']['size_bytes'] == 64 << 20 and d['mount']['full'] and d['mount']['used_bytes_peak'] >= 95 * (64 << 20) // 100)([d for d in j['deaths'] if d['cause'] == '$CAUSE'][0])" \
    "the /dev/shm full at the Bus error (64 MiB, over 95 % seen, less free than a batch)" \
    "(lambda d: 'was full' in d['diagnosis'] and ('a worker writing a batch touched a page the tmpfs could not give, which is the Bus error' in d['diagnosis'] or '$CAUSE' == 'unknown' and 'the likely cause is the Bus error of a worker writing a batch' in d['diagnosis']))([d for d in j['deaths'] if d['cause'] == '$CAUSE'][0])" \
    "the diagnosis in the guide's words" \
    "(lambda d: d['groups'] and d['groups'][0]['main_pid'] == $MAIN and d['groups'][0]['workers'] == 2)([d for d in j['deaths'] if d['cause'] == '$CAUSE'][0])" \
    "the group that filled it: main $MAIN with its 2 workers" \
    "(lambda d: d['budget_at'] is not None and d['budget_at']['limit_bytes'] == $LIMIT and d['budget_at']['limit_source'] == 'cgroup')([d for d in j['deaths'] if d['cause'] == '$CAUSE'][0])" \
    "the budget then: the memory cgroup's limit"

# plan agrees: the --shm-size why recommends fits the same loader.
rec=$(/usr/bin/python3 -c 'import json, sys; print([d for d in json.load(open(sys.argv[1]))["deaths"] if d["pid"] in json.loads(sys.argv[2])][0]["advice"]["recommended_shm_size_bytes"])' "$j" "$WORKERS")
[ "$rec" -gt $((64 << 20)) ] || fail "why recommends $rec bytes, no more than the 64 MiB that failed"
"$SHMWATCH" plan "${PLAN[@]}" --shm-size "$rec" --json >"$SHMTEST_TMP/plan.json" || fail "plan exited $?"
json_check "$SHMTEST_TMP/plan.json" "j['shm_fits'] is True and j['recommended_shm_size_bytes'] <= $rec" \
    "plan agrees: --shm-size $rec fits this loader (plan's own recommendation is no more)"

why_run
grep -qE "^worker ($(echo "$WORKER_PIDS" | tr ' ' '|')) \(.*\) of DataLoader main $MAIN: (killed by SIGBUS \(Bus error\)|gone, cause unknown) at " "$WHY_OUT" ||
    fail "the text does not name the worker: $(head -n 5 "$WHY_OUT")"
grep -qE '^  why: (/dev/shm was full, |it was gone .*/dev/shm was full just before)' "$WHY_OUT" || fail "the text has no diagnosis: $(cat "$WHY_OUT")"
grep -q '^  advice: --shm-size at least ' "$WHY_OUT" || fail "the text has no advice"
ok "the text answer: $(grep -m1 '^  why:' "$WHY_OUT" | cut -c1-150)"

# A loader whose first batch outgrows the mount (one worker, batches of 22
# images of 3x512x512, 66 MiB), started while a recorder waits out a 30 s
# interval: its worker dies of SIGBUS before any snapshot saw it, and its
# main, erring out, reaps it at once, and outlives it by 3 s (a notebook's
# kernel outlives its loader; a main that exits within the moment is read
# by no scan, and nothing knows it for the worker's). The recorder still tells the SIGBUS
# as that main's worker's, and why names it. Twice: the worker forked by
# the main, then by Python's forkserver (the default from Python 3.14),
# which forks it for the main.
store2=$SHMTEST_TMP/record-unseen
"$SHMWATCH" record --dir "$store2" --interval 30 2>"$SHMTEST_TMP/record-unseen.err" &
REC2=$!
on_exit "kill -TERM $REC2 2>/dev/null; wait $REC2 2>/dev/null; true"
wait_for "store_records '$store2' \"r.get('schema') == 1\" | grep -q ." 20 ||
    fail "the second recorder wrote no snapshot: $(tail -n 3 "$SHMTEST_TMP/record-unseen.err")"
# unseen_loader METHOD: that loader, its worker started by METHOD.
unseen_loader() {
    local m=$1 job rc=0
    "${TORCH_CMD[@]}" --strategy file_descriptor --start-method "$m" --workers 1 --batch-size 22 \
        --shape 3x512x512 --iterate-all --linger-on-error 3 </dev/null >"$SHMTEST_TMP/unseen-$m.out" 2>"$SHMTEST_TMP/unseen-$m.err" &
    job=$!
    wait_for "_lib_zombie $job" 120 || fail "$m: the loader whose batch outgrows the mount did not end"
    wait "$job" || rc=$?
    [ "$rc" -ne 0 ] || fail "$m: the loader whose batch outgrows the mount exited 0"
    grep -aqE 'Bus error|bus error|exited unexpectedly' "$SHMTEST_TMP/unseen-$m.err" ||
        fail "$m: the loader did not fail with its worker's end: $(tail -n 3 "$SHMTEST_TMP/unseen-$m.err")"
    wait_for "store_records '$store2' \"r.get('event') == 'exit' and r['role'] == 'worker' and r['group'] == $job and r['cause'] == 'sigbus'\" | grep -q ." 20 ||
        fail "$m: no SIGBUS of main $job's worker in the store: $(store_records "$store2" "r.get('event') == 'exit'" | cut -c1-300)"
    ok "$m: the SIGBUS of a worker no snapshot saw is recorded as main $job's worker's"
    "$SHMWATCH" why --dir "$store2" >"$SHMTEST_TMP/why-unseen.out" 2>&1 || true
    grep -qE "^worker [0-9]+ \(.*\) of DataLoader main $job: killed by SIGBUS \(Bus error\) at " "$SHMTEST_TMP/why-unseen.out" ||
        fail "$m: why does not name the worker's SIGBUS: $(head -n 5 "$SHMTEST_TMP/why-unseen.out")"
    ok "$m: why names it: $(grep -m1 "^worker .* main $job:" "$SHMTEST_TMP/why-unseen.out" | cut -c1-120)"
}
unseen_loader fork
unseen_loader forkserver
kill -TERM "$REC2"

# A worker a scan read in its first moments bears no mark of one yet: it
# holds only what its main held (a multiprocessing lock's semaphore), as
# its main does, and catches no signal: both are holders. Its Bus error
# soon after is still told as its main's worker's (the workload's
# --fork-then-fill holds that moment until the recorder has read it).
store3=$SHMTEST_TMP/record-unmarked
"$SHMWATCH" record --dir "$store3" --interval 0.5 2>"$SHMTEST_TMP/record-unmarked.err" &
REC3=$!
on_exit "kill -TERM $REC3 2>/dev/null; wait $REC3 2>/dev/null; true"
out=$SHMTEST_TMP/unmarked.out
"${TORCH_CMD[@]}" --fork-then-fill --linger-on-error 3 </dev/null >"$out" 2>"$SHMTEST_TMP/unmarked.err" &
job=$!
wait_for "grep -q '^FORKED ' '$out'" 60 || fail "the forking job did not fork: $(tail -n 3 "$SHMTEST_TMP/unmarked.err")"
read -r main child < <(sed -n 's/^FORKED //p' "$out" | $PY -c 'import json, sys; j = json.load(sys.stdin); print(j["main_pid"], j["child_pid"])')
wait_for "store_records '$store3' \"r.get('schema') == 1 and {p['pid']: p['role'] for p in r['processes']}.get($child) == 'holder' and {p['pid']: p['role'] for p in r['processes']}.get($main) == 'holder'\" | grep -q ." 20 ||
    fail "the recorder never read the child $child and its main $main as holders: $(tail -n 3 "$SHMTEST_TMP/record-unmarked.err")"
kill -USR1 "$child"
rc=0
wait "$job" || rc=$?
assert_eq "$rc" 1 "the forking job exits 1 after its child's end"
grep -q "^the child was killed by signal $(kill -l BUS)\$" "$SHMTEST_TMP/unmarked.err" ||
    fail "the child did not die of SIGBUS: $(tail -n 3 "$SHMTEST_TMP/unmarked.err")"
wait_for "store_records '$store3' \"r.get('event') == 'exit' and r['pid'] == $child\" | grep -q ." 20 ||
    fail "no exit of the child $child in the store"
store_records "$store3" "r.get('event') == 'exit' and r['pid'] == $child" >"$SHMTEST_TMP/unmarked-exit.json"
json_check "$SHMTEST_TMP/unmarked-exit.json" \
    "j['role'] == 'worker' and j['group'] == $main and j['cause'] == 'sigbus'" \
    "the SIGBUS of a worker the recorder read as a holder is main $main's worker's"
# Its main, which every scan read as a holder, is a main once that worker's
# exit named it: its own exit is recorded as a main's.
wait_for "store_records '$store3' \"r.get('event') == 'exit' and r['pid'] == $main\" | grep -q ." 20 ||
    fail "no exit of the main $main in the store"
store_records "$store3" "r.get('event') == 'exit' and r['pid'] == $main" >"$SHMTEST_TMP/unmarked-main.json"
json_check "$SHMTEST_TMP/unmarked-main.json" \
    "j['role'] == 'main' and j['group'] == $main and j['exit_code'] == 1" \
    "the exit of main $main, read as a holder by every scan, is recorded as a main's"
"$SHMWATCH" why --dir "$store3" >"$SHMTEST_TMP/why-unmarked.out" 2>&1 || true
grep -qE "^worker $child \(.*\) of DataLoader main $main: killed by SIGBUS \(Bus error\) at " "$SHMTEST_TMP/why-unmarked.out" ||
    fail "why does not name the worker's SIGBUS: $(head -n 5 "$SHMTEST_TMP/why-unmarked.out")"
ok "why names it: $(grep -m1 "^worker $child " "$SHMTEST_TMP/why-unmarked.out" | cut -c1-120)"
grep -qE "^main $main \(.*\): exited with status 1 at " "$SHMTEST_TMP/why-unmarked.out" ||
    fail "why does not tell the main's exit as a main's: $(cat "$SHMTEST_TMP/why-unmarked.out")"
grep -q "followed the end of $child (SIGBUS)" "$SHMTEST_TMP/why-unmarked.out" ||
    fail "why does not tell the main's exit as following its worker's: $(cat "$SHMTEST_TMP/why-unmarked.out")"
ok "why tells the main's exit as a main's, following its worker's SIGBUS"
kill -TERM "$REC3"
