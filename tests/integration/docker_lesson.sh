#!/usr/bin/env bash
# The Docker lesson, end to end in a real container (Debian's docker.io, a
# private daemon, an image imported from the PyTorch 2.6 root): a DataLoader
# whose batches do not fit in Docker's default --shm-size 64m. shmwatch plan
# says so first. The job runs in a long-lived container (docker exec, as in a
# dev container or a notebook's); while it holds its batches the verdict,
# from the host with --pid and from inside the container, is critical where
# it was not before the job; released, a worker dies of the Bus error; the
# view afterwards shows what is left. Then the --shm-size plan gives and the
# -m the advice gives make the same loader run to the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
TORCH_STACK=2.x
torch_need
docker_need
need ldd
test_ns 64m -- "$@"

# The main's step is 1 s, long enough for a worker to build its next batch
# while the main still holds the one before (torch_docker.sh says why).
JOB=(--strategy file_descriptor --workers 2 --prefetch-factor 2 --batch-size 22
    --shape 3x224x224 --step-seconds 1)
# shellcheck disable=SC2054 # 3x224x224,1:int64 is one argument
PLAN=(--batch-size 22 --sample-shape 3x224x224,1:int64 --workers 2 --prefetch-factor 2)
IMG=$DOCKER_IMAGE_TORCH
W=/opt/shmwatch-workload # the workload, inside
B=/opt/shmwatch          # shmwatch with its libraries, inside

# 1. The calculator, before anything runs.
"$SHMWATCH" plan "${PLAN[@]}" --shm-size 64m >"$SHMTEST_TMP/plan64.txt" || fail "plan exited $?"
grep -q '^Verdict: does not fit' "$SHMTEST_TMP/plan64.txt" || fail "plan: $(tail -n 3 "$SHMTEST_TMP/plan64.txt")"
"$SHMWATCH" plan "${PLAN[@]}" --json >"$SHMTEST_TMP/plan.json" || fail "plan --json exited $?"
eval "$("$PY" - "$SHMTEST_TMP/plan.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("PEAK=%d REC_SHM=%s REC_SHM_BYTES=%d" % (j["shm_peak_bytes"], j["recommended_shm_size"],
                                               j["recommended_shm_size_bytes"]))
PY
)"
[ "$PEAK" -gt $((64 << 20)) ] || fail "plan's peak $PEAK fits in 64 MiB"
ok "plan: the peak is $PEAK bytes, 64 MiB does not fit; it recommends --shm-size=$REC_SHM"

t0=$SECONDS
docker_start
ok "a private dockerd ($DOCKER_DRIVER) answers after $((SECONDS - t0)) s"
docker_image_torch
ok "image $IMG ready (import: $DOCKER_IMPORT_S s)"
docker_bundle "$SHMWATCH" "$SHMTEST_TMP/bundle"
mapfile -t INSIDE < <(docker_bundle_cmd "$B" "$(basename "$SHMWATCH")")
on_exit '[ "$rc" -eq 0 ] || docker_dump'

# 2. A long-lived container with Docker's default /dev/shm and 1 GiB.
docker_run lesson --shm-size 64m -m 1g -v "$(dirname "$WORKLOAD"):$W:ro" \
    -v "$SHMTEST_TMP/bundle:$B:ro" "$IMG" sleep 900
CPID=$(docker_pid lesson)
CID=$(dk inspect -f '{{.Id}}' lesson)
"$SHMWATCH" --json --pid "$CPID" >"$SHMTEST_TMP/before.json" || fail "shmwatch --pid exited $?"
json_check "$SHMTEST_TMP/before.json" "j['mounts'][0]['size_bytes'] == 64 << 20 and j['mounts'][0]['used_bytes'] == 0 and j['budget']['verdict'] != 'critical'" \
    "before the job: the container's 64 MiB /dev/shm is empty, the verdict is not critical"
dk exec lesson "${INSIDE[@]}" --json >"$SHMTEST_TMP/before-inside.json" 2>"$SHMTEST_TMP/inside.err" ||
    fail "shmwatch inside the container exited $?: $(head -c 500 "$SHMTEST_TMP/inside.err")"
json_check "$SHMTEST_TMP/before-inside.json" "j['mounts'][0]['size_bytes'] == 64 << 20 and j['mounts'][0]['used_bytes'] == 0 and j['budget']['verdict'] != 'critical'" \
    "before the job, from inside: the same empty 64 MiB /dev/shm, not critical"
json_check "$SHMTEST_TMP/before.json" "j['cgroup']['version'] == 1 and j['cgroup']['limit_bytes'] == 1 << 30 and '$CID' in j['cgroup']['path']" \
    "the container's memory cgroup and its 1 GiB limit, from the host"

# 3. The job, by docker exec, holding one batch while the workers prefetch.
mkfifo "$SHMTEST_TMP/job.in" || fail "mkfifo failed"
exec {JOB_IN}<>"$SHMTEST_TMP/job.in"
dk exec -i lesson python3 "$W/workload.py" "${JOB[@]}" --hold-batches 1 --iterate-all \
    <"$SHMTEST_TMP/job.in" >"$SHMTEST_TMP/job.out" 2>"$SHMTEST_TMP/job.err" {JOB_IN}>&- &
EXEC=$!
on_exit "exec {JOB_IN}>&- 2>/dev/null; wait $EXEC 2>/dev/null"
wait_for 'grep -q "^READY " "$SHMTEST_TMP/job.out" || _lib_zombie $EXEC' 120 &&
    grep -q '^READY ' "$SHMTEST_TMP/job.out" ||
    fail "the job did not hold its batch: $(tail -n 5 "$SHMTEST_TMP/job.err")"
fill() { "$SHMWATCH" --json --pid "$CPID" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["mounts"][0]["used_pct"] >= 95)'; }
wait_for '[ "$(fill)" = True ]' 30 || fail "the prefetched batches did not fill the container's /dev/shm"
"$SHMWATCH" --json --pid "$CPID" >"$SHMTEST_TMP/full.json" || fail "shmwatch --pid exited $?"
"$SHMWATCH" --once --pid "$CPID" >"$SHMTEST_TMP/full.txt" || fail "shmwatch --once --pid exited $?"
f=$SHMTEST_TMP/full.json
json_check "$f" "j['mounts'][0]['size_bytes'] == 64 << 20 and j['mounts'][0]['used_pct'] >= 95" \
    "from the host: the container's 64 MiB /dev/shm is over 95 % full" \
    "j['budget']['verdict'] == 'critical' and any(\"Docker's default\" in a and '64 MiB' in a for a in j['budget']['advice'])" \
    "from the host: critical, and the advice names Docker's 64 MiB default" \
    "len(j['groups']) == 1 and len(j['groups'][0]['workers']) == 2 and all(p['comm'] == 'pt_data_worker' for p in j['processes'] if p['role'] == 'worker')" \
    "from the host: one DataLoader, its two pt_data_worker workers" \
    "j['budget']['limit_bytes'] == 1 << 30 and j['budget']['recommended_shm_size_bytes'] > 64 << 20 and j['budget']['recommended_memory_bytes'] > 0" \
    "from the host: the budget counts against -m 1g and recommends more /dev/shm"
grep -q 'verdict: critical' "$SHMTEST_TMP/full.txt" || fail "the text report does not say critical"
dk exec lesson "${INSIDE[@]}" --json >"$SHMTEST_TMP/inside.json" 2>"$SHMTEST_TMP/inside.err" ||
    fail "shmwatch inside the container exited $?: $(head -c 500 "$SHMTEST_TMP/inside.err")"
dk exec lesson "${INSIDE[@]}" --once >"$SHMTEST_TMP/inside.txt" 2>&1 ||
    fail "shmwatch --once inside the container exited $?: $(head -c 500 "$SHMTEST_TMP/inside.txt")"
grep -q 'verdict: critical' "$SHMTEST_TMP/inside.txt" || fail "inside, the text report does not say critical"
g=$SHMTEST_TMP/inside.json
json_check "$g" "j['mounts'][0]['path'] == '/dev/shm' and j['mounts'][0]['size_bytes'] == 64 << 20 and j['mounts'][0]['used_pct'] >= 95 and j['budget']['verdict'] == 'critical'" \
    "from inside the container: its /dev/shm is over 95 % full, critical" \
    "j['cgroup'] is not None and j['cgroup']['limit_bytes'] == 1 << 30 and j['budget']['limit_bytes'] == 1 << 30" \
    "from inside the container: the 1 GiB limit" \
    "len(j['groups']) == 1 and len(j['groups'][0]['workers']) == 2" \
    "from inside the container: one DataLoader and its two workers"
eval "$("$PY" - "$f" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["budget"]
print("ADV_MEM_BYTES=%d" % b["recommended_memory_bytes"])
print("ADV_SHM_BYTES=%d" % b["recommended_shm_size_bytes"])
PY
)"
ok "the advice: --shm-size $ADV_SHM_BYTES bytes, -m $ADV_MEM_BYTES bytes"
# The container's loader observed from the host: its batch is plan's.
LOADER=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["groups"][0]["main_pid"])' "$f")
"$SHMWATCH" plan --observe "$LOADER" --workers 2 --prefetch-factor 2 --json >"$SHMTEST_TMP/observe.json" ||
    fail "plan --observe $LOADER (the container's loader, from the host) exited $?"
PLAN_BATCH=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["batch_shm_bytes"])' "$SHMTEST_TMP/plan.json")
json_check "$SHMTEST_TMP/observe.json" "j['batch_shm_bytes'] == $PLAN_BATCH and j['observed']['workers'] == 2 and j['recommended_shm_size_bytes'] == $REC_SHM_BYTES" \
    "plan --observe from the host: the container's loader's batch is plan's, and so is the recommendation"

# 4. Released, the job goes on and a worker's next batch does not fit.
exec {JOB_IN}>&-
wait_for "_lib_zombie $EXEC" 120 || fail "the job did not end"
rc=0
wait "$EXEC" || rc=$?
assert_eq "$rc" 1 "the job fails"
msg='DataLoader worker \(pid [0-9]+\) is killed by signal: Bus error'
grep -aqE "$msg" "$SHMTEST_TMP/job.err" || fail "no Bus error from PyTorch: $(tail -n 3 "$SHMTEST_TMP/job.err")"
ok "PyTorch says: $(grep -a -m1 -oE "$msg" "$SHMTEST_TMP/job.err")"
grep -aq 'bus error encountered in worker' "$SHMTEST_TMP/job.err" && ok "and the worker: $(grep -a -m1 -o 'Unexpected bus error encountered in worker[^.]*' "$SHMTEST_TMP/job.err")"
wait_for "[ \"\$(\"$SHMWATCH\" --json --pid $CPID | $PY -c 'import json, sys; print(len(json.load(sys.stdin)[\"groups\"]))')\" = 0 ]" 20 ||
    fail "the dead job's processes are still there"
"$SHMWATCH" --json --pid "$CPID" >"$SHMTEST_TMP/after.json" || fail "shmwatch --pid exited $?"
"$SHMWATCH" --once --pid "$CPID" >"$SHMTEST_TMP/after.txt" || fail "shmwatch --once --pid exited $?"
h=$SHMTEST_TMP/after.json
json_check "$h" "j['groups'] == [] and not [p for p in j['processes'] if p['role'] in ('main', 'worker', 'orphan_worker')]" \
    "after the crash: no DataLoader and no worker is left in the container" \
    "j['totals']['orphans'] == 0 and j['mounts'][0]['used_bytes'] == sum(s['alloc_bytes'] for s in j['segments']) and j['budget']['verdict'] != 'critical'" \
    "after the crash: every byte left is listed, nothing is an orphan (file_descriptor segments die with their holders), the verdict is no longer critical"
ok "after the crash: $(grep -m1 -E '^/dev/shm|used' "$SHMTEST_TMP/after.txt")"

# 5. The fix: plan's --shm-size, and the -m the advice gave. The same job
# (its stdin is empty: it lets go of its batch at once).
"$SHMWATCH" plan "${PLAN[@]}" --shm-size "$REC_SHM" --memory "$ADV_MEM_BYTES" --json >"$SHMTEST_TMP/plan-fix.json" ||
    fail "plan exited $?"
json_check "$SHMTEST_TMP/plan-fix.json" "j['shm_fits'] is True and j['memory_fits'] is True" \
    "plan: --shm-size=$REC_SHM and -m $ADV_MEM_BYTES fit"
docker_run fixed --shm-size "$REC_SHM_BYTES" -m "$ADV_MEM_BYTES" -v "$(dirname "$WORKLOAD"):$W:ro" \
    "$IMG" python3 "$W/workload.py" "${JOB[@]}" --hold-batches 1 --iterate-all
code=$(timeout 180 "$DOCKER_BIN" wait fixed) || fail "the fixed job did not end within 180 s"
dk logs fixed >"$SHMTEST_TMP/fixed.out" 2>"$SHMTEST_TMP/fixed.err"
assert_eq "$code" 0 "the same loader runs to the end with --shm-size $REC_SHM_BYTES -m $ADV_MEM_BYTES ($(tail -n 2 "$SHMTEST_TMP/fixed.err" | tr '\n' ' '))"
grep -q '^DONE {"batches": 7,' "$SHMTEST_TMP/fixed.out" || fail "DONE: $(cat "$SHMTEST_TMP/fixed.out")"
ok "all 7 batches went through"
