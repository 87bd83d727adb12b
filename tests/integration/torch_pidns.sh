#!/usr/bin/env bash
# Two pid namespaces that share one /dev/shm (docker run --ipc=host, a pod's
# shared shm, -v /dev/shm:/dev/shm): a pid in a segment's name is read in the
# creator's own pid namespace, so from the other one it names nobody, or
# somebody else. shmwatch must never call a live job's segment an orphan, nor
# say its creator is dead, and clean must remove nothing of it:
#  1. the real DataLoader (both sharing strategies) in a second pid namespace,
#     its pids above every live pid outside, watched from outside over
#     several scans while it runs (it iterates until the scans are done, then
#     SIGTERM ends it after its current batch, and it must end well);
#  2. killed, with another pid namespace still sharing the mount: its
#     leftovers are unheld (not orphans), clean leaves them, and clean
#     --all-unheld past its --min-age removes them;
#  3. the other direction: the loader outside, shmwatch inside a second pid
#     namespace: no orphan claimed, nothing removed, even once the loader is
#     killed, until --all-unheld; --trust-pids is the user's word that does
#     prove them;
#  4. a private tmpfs mounted inside a pid namespace (docker run --shm-size):
#     a killed job's leftovers are orphans there and clean removes them.
#  5. in flight: a killed job's leftovers younger than orphan_min_age are
#     not orphans yet, and the plan says why.
# The dashboard says the same (case 2): D offers nothing and says why, and a
# leftover's details give the reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
torch_need
need readlink awk
test_ns 64m -- "$@"
unshare -p -f --mount-proc true 2>/dev/null || _lib_missing "a private pid namespace"

log=$SHMTEST_TMP/actions.log
NS_N=0

# A window of 64 pids that no live process here has, above the highest live
# pid when pid_max leaves room: the loader's pids in its own namespace.
free_pid_window() {
    local max top first p clash
    max=$(cat /proc/sys/kernel/pid_max)
    top=$(ls /proc | grep -E '^[0-9]+$' | sort -n | tail -n 1)
    first=$((top + 1000))
    [ $((first + 200)) -lt "$max" ] || first=300
    while :; do
        clash=
        for ((p = first; p < first + 64; p++)); do
            [ -e "/proc/$p" ] && { clash=$p; break; }
        done
        [ -z "$clash" ] && break
        first=$((clash + 1))
        [ $((first + 64)) -lt "$max" ] || fail "no window of 64 free pids below pid_max $max"
    done
    echo "$first"
}

# inner_start ARGS: the workload with ARGS in a second pid namespace (its own
# /proc, a copy of this mount namespace: the same tmpfs at /dev/shm), its
# pids from a window no live process here has. Sets INNER (unshare's pid),
# INNER_INIT (the namespace's pid 1 as seen here), INNER_NS (its ns/pid),
# INNER_OUT and INNER_IN (the job's stdin FIFO, open here).
inner_start() {
    NS_N=$((NS_N + 1))
    local base=$SHMTEST_TMP/inner.$NS_N first
    first=$(free_pid_window)
    INNER_OUT=$base.out
    mkfifo "$base.in"
    exec {INNER_IN}<>"$base.in"
    unshare -p -f --mount-proc bash -c '
        echo "$1" >/proc/sys/kernel/ns_last_pid
        shift
        "$@" <&0 &
        wait $!' inner "$first" "$PY" "$WORKLOAD" "$@" <"$base.in" >"$INNER_OUT" 2>"$base.err" {INNER_IN}>&- &
    INNER=$!
    on_exit "kill -KILL $INNER 2>/dev/null; wait $INNER 2>/dev/null; true"
    wait_for 'grep -q "^READY " "$INNER_OUT" || ! kill -0 $INNER 2>/dev/null' 90
    grep -q '^READY ' "$INNER_OUT" || fail "the loader in a second pid namespace did not start: $(tail -n 5 "$base.err")"
    INNER_INIT=$(pgrep -P "$INNER" | head -n 1)
    INNER_NS=$(readlink "/proc/$INNER_INIT/ns/pid")
    [ "$INNER_NS" != "$(readlink /proc/self/ns/pid)" ] || fail "the loader is not in a pid namespace of its own"
    INNER_MAIN=$(sed -n 's/^READY //p' "$INNER_OUT" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["main_pid"])')
    [ "$INNER_MAIN" -ge "$first" ] || fail "the loader's pid $INNER_MAIN is not in the window from $first"
    ok "loader in a second pid namespace: main pid $INNER_MAIN there, pid namespace $INNER_NS"
}

# inner_pids: the pids (as seen here) of the processes in INNER_NS.
inner_pids() {
    pids_with_link ns/pid "$INNER_NS"
}

# inner_kill: SIGKILL to the whole namespace, as an OOM kill or a container
# stop does (stopped first, so that nobody reacts to the others' deaths).
inner_kill() {
    local pids
    pids=$(inner_pids | tr '\n' ' ')
    # shellcheck disable=SC2086 # a list of pids
    kill -STOP $pids 2>/dev/null
    kill -KILL "$INNER_INIT"
    # The kernel kills the namespace's processes and frees their memory; on
    # a loaded machine that has taken over 15 s. What is left is named.
    wait_for "[ -z \"\$(inner_pids)\" ]" 60 ||
        fail "the loader's namespace did not die: $(inner_pids | xargs -r ps -o pid=,stat=,wchan:20=,comm= -p 2>/dev/null | tr '\n' ';')"
    wait "$INNER" 2>/dev/null
    exec {INNER_IN}>&-
}

torch_files() {
    ls /dev/shm | grep '^torch_' | sort
}

# aged: every torch file here was last written before the current second, so
# it is at least 1 s old to --min-age 1s (ages are whole seconds).
aged() {
    [ -z "$(find /dev/shm -maxdepth 1 -name 'torch_*' -newermt "@$(date +%s)")" ]
}

# No torch segment is an orphan or said to have a dead creator.
check_alive() { # JSON WHAT
    json_check "$1" "j['mounts'][0]['pid_namespaces'] >= 2 and j['mounts'][0]['pid_evidence'] == 'shared'" \
        "$2: the mount is reached from several pid namespaces" \
        "j['totals']['orphans'] == 0 and not [s for s in j['segments'] if s['state'] == 'orphan']" \
        "$2: no orphan" \
        "all(s['creator_alive'] is not False for s in j['segments'] if s['kind'] == 'torch')" \
        "$2: no torch segment is said to have a dead creator" \
        "not [s for s in j['segments'] if s['kind'] == 'torch' and s['holders']] or any(s['creator_alive'] is True for s in j['segments'] if s['kind'] == 'torch')" \
        "$2: creators are found alive through their own pid namespace"
}

# A scene that only shares the mount from a third pid namespace: a neighbour
# container that outlives the killed one.
unshare -p -f --mount-proc sleep 600 </dev/null >/dev/null 2>&1 &
NEIGHBOUR=$!
on_exit "kill -KILL \$(pgrep -P $NEIGHBOUR) $NEIGHBOUR 2>/dev/null; wait $NEIGHBOUR 2>/dev/null; true"

# ---- 1. The loader in a second pid namespace, watched from outside --------
for strategy in file_descriptor file_system; do
    # --length: 20 minutes of steps at most, should the SIGTERM below be lost.
    inner_start --strategy "$strategy" --workers 2 --hold-batches 2 --iterate-all \
        --step-seconds 0.3 --length 16000 --stop-on-sigterm
    exec {INNER_IN}>&- # go on iterating while holding the two batches
    for scan in 1 2 3; do
        f=$SHMTEST_TMP/$strategy.$scan.json
        "$SHMWATCH" --json >"$f" || fail "shmwatch --json exited $?"
        check_alive "$f" "$strategy, scan $scan"
        before=$(torch_files)
        rc=0
        "$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/clean.$strategy.$scan" 2>&1 || rc=$?
        ! grep -q '^removed' "$SHMTEST_TMP/clean.$strategy.$scan" ||
            fail "clean --yes removed a live job's segment: $(grep '^removed' "$SHMTEST_TMP/clean.$strategy.$scan")"
        ok "$strategy, scan $scan: clean --yes removes nothing ($(head -n 1 "$SHMTEST_TMP/clean.$strategy.$scan"))"
        [ -n "$before" ] || [ "$strategy" = file_descriptor ] ||
            fail "no torch file while the file_system loader runs (loader $(kill -0 $INNER 2>/dev/null && echo alive || echo gone); $(tail -n 3 "$INNER_OUT" "${INNER_OUT%.out}.err" | tr '\n' ' '))"
        [ "$scan" = 3 ] || sleep 0.5 # none after the last
    done
    kill -0 "$INNER" 2>/dev/null && ! grep -q '^DONE ' "$INNER_OUT" ||
        fail "the $strategy loader ended before its third scan"
    inner_main=$(pgrep -P "$INNER_INIT")
    [ -n "$inner_main" ] || fail "cannot find the $strategy loader's main process"
    kill -TERM "$inner_main"
    wait_for "! kill -0 $INNER 2>/dev/null" 90 || fail "the $strategy loader did not finish"
    rc=0
    wait "$INNER" || rc=$?
    assert_eq "$rc" 0 "the $strategy loader in its own pid namespace, stopped after the scans, ended well"
    grep -q '^DONE ' "$INNER_OUT" || fail "the $strategy loader did not print DONE"
done

# ---- 2. Killed: the leftovers on a mount still shared are unheld ----------
inner_start --strategy file_system --workers 3 --hold-batches 2
wait_for '[ "$(torch_files | wc -l)" -ge 4 ]' 30 || fail "the loader made too few torch files: $(torch_files)"
inner_kill
left=$(torch_files)
[ "$(echo "$left" | wc -l)" -ge 4 ] || fail "too few leftovers: $left"
ok "the killed loader left $(echo "$left" | wc -l) torch files"
f=$SHMTEST_TMP/killed.json
"$SHMWATCH" --json >"$f" || fail "shmwatch --json exited $?"
json_check "$f" "j['mounts'][0]['pid_evidence'] == 'shared' and j['totals']['orphans'] == 0" \
    "the neighbour still shares the mount: no orphan" \
    "all(s['state'] == 'unheld' and s['creator_alive'] is None and 'pid namespaces' in s['note'] for s in j['segments'] if s['kind'] == 'torch')" \
    "each leftover is unheld, its creator unknown, with the reason"
"$SHMWATCH" --once >"$SHMTEST_TMP/killed.txt" || fail "shmwatch --once exited $?"
grep -q "not an orphan: pid [0-9]* is alive in none of the [0-9]* pid namespaces" "$SHMTEST_TMP/killed.txt" ||
    fail "the text report does not say why: $(grep -A1 torch_ "$SHMTEST_TMP/killed.txt" | head -4)"
"$SHMWATCH" --prometheus >"$SHMTEST_TMP/killed.prom" || fail "shmwatch --prometheus exited $?"
grep -qE '^shmwatch_mount_pid_namespaces\{mount="/dev/shm"\} [2-9]' "$SHMTEST_TMP/killed.prom" &&
    grep -q '^shmwatch_mount_pids_trusted{mount="/dev/shm"} 0' "$SHMTEST_TMP/killed.prom" ||
    fail "Prometheus: $(grep pid "$SHMTEST_TMP/killed.prom")"
ok "text and Prometheus say the same"
# The dashboard: D has no orphan to offer and says why; a leftover's details
# give the reason, and its pid column marks the creator as unknown (?pid).
. "$(dirname "$0")/tui_lib.sh"
first=$(echo "$left" | head -n 1)
tui_start 160 45 --log "$log"
tui_wait "${first} +unheld " 15
tui_keys D
tui_wait "no orphan segments: [0-9]+ unheld ones carry a creator pid that proves nothing here \\(shared\\)" 5
tui_select "${first} +unheld "
tui_keys Enter
tui_wait "no orphan +pid [0-9]+ is alive in none of the [0-9]+ pid namespaces" 5
tui_wait "creator +pid [0-9]+ \\(from the name\\), not alive here, but that proves nothing" 5
tui_keys Escape # close the details
tui_wait "${first} +unheld " 5
tui_quit
assert_eq "$(torch_files)" "$left" "the dashboard removed nothing"
rc=0
"$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/clean.killed" 2>&1 || rc=$?
assert_eq "$(torch_files)" "$left" "clean --yes keeps the leftovers of a shared mount"
grep -q "^Kept: [0-9]* unheld segments whose creator pid proves nothing" "$SHMTEST_TMP/clean.killed" ||
    fail "the plan does not say why they are kept: $(cat "$SHMTEST_TMP/clean.killed")"
ok "the plan says why they are kept"
rc=0
"$SHMWATCH" clean --yes --all-unheld --log "$log" >"$SHMTEST_TMP/clean.young" 2>&1 || rc=$?
assert_eq "$(torch_files)" "$left" "clean --all-unheld keeps them while younger than min_age (10m)"
wait_for aged 5 || fail "a leftover is still written to: $(ls -l --time-style=+%s.%N /dev/shm)"
rc=0
"$SHMWATCH" clean --yes --all-unheld --min-age 1s --log "$log" >"$SHMTEST_TMP/clean.all" 2>&1 || rc=$?
assert_eq "$rc" 0 "clean --all-unheld --min-age 1s exits 0 ($(tail -n 1 "$SHMTEST_TMP/clean.all"))"
assert_eq "$(torch_files)" "" "clean --all-unheld --min-age 1s removes every leftover"
kill -KILL $(pgrep -P $NEIGHBOUR) 2>/dev/null
wait $NEIGHBOUR 2>/dev/null

# ---- 3. The other direction: shmwatch inside a second pid namespace -------
torch_fs_job 2
INSIDE=(unshare -p -f --mount-proc)
f=$SHMTEST_TMP/inside.json
"${INSIDE[@]}" "$SHMWATCH" --json >"$f" || fail "shmwatch --json inside exited $?"
json_check "$f" "j['scan']['initial_pid_namespace'] is False and j['mounts'][0]['pid_evidence'] == 'unproven'" \
    "inside: not the first pid namespace, and the mount is not shown private" \
    "j['totals']['orphans'] == 0 and all(s['creator_alive'] is not False for s in j['segments'] if s['kind'] == 'torch')" \
    "inside: the loader outside has no orphan and no dead creator"
live=$(torch_files)
"${INSIDE[@]}" "$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/inside.clean" 2>&1
assert_eq "$(torch_files)" "$live" "inside: clean --yes removes nothing of the live loader"
torch_kill_job
left=$(torch_files)
[ -n "$left" ] || fail "the killed loader left nothing"
f=$SHMTEST_TMP/inside-killed.json
"${INSIDE[@]}" "$SHMWATCH" --json >"$f" || fail "shmwatch --json inside exited $?"
json_check "$f" "j['totals']['orphans'] == 0 and all(s['state'] == 'unheld' and s['creator_alive'] is None and '--trust-pids' in s['note'] for s in j['segments'] if s['kind'] == 'torch')" \
    "inside: the killed loader's leftovers are unheld, with the reason"
"${INSIDE[@]}" "$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/inside.clean2" 2>&1
assert_eq "$(torch_files)" "$left" "inside: clean --yes keeps them"
# One sentence on why: what the mount is, not a second sentence spliced in.
grep -qE "^Kept: [0-9]+ unheld segments? whose creator pid proves nothing; the mount is not shown private to this pid namespace \(shmwatch runs in one of its own\): creator pids prove nothing \(--trust-pids if it is\)\.$" \
    "$SHMTEST_TMP/inside.clean2" || fail "inside: clean does not say why it keeps them: $(cat "$SHMTEST_TMP/inside.clean2")"
ok "inside: clean says why it keeps them: $(grep '^Kept:' "$SHMTEST_TMP/inside.clean2")"
f=$SHMTEST_TMP/inside-trusted.json
"${INSIDE[@]}" "$SHMWATCH" --json --trust-pids >"$f" || fail "shmwatch --json --trust-pids exited $?"
json_check "$f" "j['mounts'][0]['pid_evidence'] == 'trusted' and sorted(s['name'] for s in j['segments'] if s['state'] == 'orphan') == sorted(n for n in '''$left'''.split())" \
    "inside with --trust-pids (the user's word): they are orphans"
wait_for aged 5 || fail "a leftover is still written to: $(ls -l --time-style=+%s.%N /dev/shm)"
"${INSIDE[@]}" "$SHMWATCH" clean --yes --all-unheld --min-age 1s --log "$log" >"$SHMTEST_TMP/inside.clean3" 2>&1 ||
    fail "inside: clean --all-unheld exited $?: $(tail -n 3 "$SHMTEST_TMP/inside.clean3")"
assert_eq "$(torch_files)" "" "inside: clean --all-unheld --min-age 1s removes them"

# ---- 4. A private tmpfs inside a pid namespace (docker run --shm-size) -----
# The job and shmwatch in the same pid namespace, its /dev/shm a tmpfs that
# its pid 1 mounted (after the namespace's init started, not propagated).
cat >"$SHMTEST_TMP/private.sh" <<'EOF'
set -e
mount -t tmpfs -o size=64m,mode=1777 tmpfs /dev/shm
"$PY" "$WORKLOAD" --strategy file_system --workers 2 --hold-batches 2 < <(sleep 600) >"$T/private.out" 2>"$T/private.err" &
for i in $(seq 600); do grep -q '^READY ' "$T/private.out" && break; sleep 0.1; done
grep -q '^READY ' "$T/private.out"
# The prefetched batches land: the mount's use the same at three polls running.
last= same=0
for i in $(seq 150); do
    now=$(stat -f -c '%b %f' /dev/shm)
    if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
    last=$now
    [ "$same" -lt 3 ] || break
    sleep 0.1
done
loader() { ps -e -o pid=,comm= | awk '$2 == "python3" || $2 == "torch_shm_manag" { print $1 }'; }
pids=$(loader)
kill -STOP $pids; kill -KILL $pids
for i in $(seq 150); do [ -z "$(loader)" ] && break; sleep 0.1; done
[ -z "$(loader)" ]
ls /dev/shm | grep '^torch_' | sort >"$T/private.left"
"$SHMWATCH" --json >"$T/private.json"
"$SHMWATCH" clean --yes --log "$T/actions.log" >"$T/private.clean" 2>&1 || echo "clean exited $?" >>"$T/private.clean"
ls /dev/shm | grep '^torch_' | sort >"$T/private.after" || true
EOF
T=$SHMTEST_TMP PY=$PY WORKLOAD=$WORKLOAD SHMWATCH=$SHMWATCH unshare -p -f --mount-proc \
    unshare -m --propagation private bash "$SHMTEST_TMP/private.sh" ||
    fail "the private-mount scene failed: $(tail -n 3 "$SHMTEST_TMP/private.err" 2>/dev/null)"
[ -s "$SHMTEST_TMP/private.left" ] || fail "the killed job left nothing in its private mount"
f=$SHMTEST_TMP/private.json
json_check "$f" "j['scan']['initial_pid_namespace'] is False and j['mounts'][0]['pid_evidence'] == 'private' and j['mounts'][0]['pid_namespaces'] == 1" \
    "in a pid namespace with its own tmpfs: the mount is shown private" \
    "sorted(s['name'] for s in j['segments'] if s['state'] == 'orphan') == open(env['SHMTEST_TMP'] + '/private.left').read().split()" \
    "there the killed job's leftovers are orphans"
assert_eq "$(cat "$SHMTEST_TMP/private.after")" "" "and clean --yes removes them ($(tail -n 1 "$SHMTEST_TMP/private.clean"))"

# ---- 5. In flight: younger than orphan_min_age, not an orphan yet ----------
torch_fs_job 2
torch_kill_job
left=$(torch_files)
f=$SHMTEST_TMP/young.json
"$SHMWATCH" --json --orphan-min-age 1h >"$f" || fail "shmwatch --json --orphan-min-age 1h exited $?"
json_check "$f" "j['totals']['orphans'] == 0 and all(s['state'] == 'unheld' and s['creator_alive'] is False and 'orphan_min_age' in s['note'] for s in j['segments'] if s['kind'] == 'torch') and j['scan']['orphan_min_age_s'] == 3600" \
    "younger than orphan_min_age: unheld, its dead creator named, with the reason"
"$SHMWATCH" clean --dry-run --orphan-min-age 1h >"$SHMTEST_TMP/young.plan" 2>&1
grep -q "^Kept: [0-9]* segments of a dead creator younger than orphan_min_age 1h" "$SHMTEST_TMP/young.plan" ||
    fail "the plan does not say they are in flight: $(cat "$SHMTEST_TMP/young.plan")"
ok "the plan says they may be in flight"
"$SHMWATCH" clean --yes --orphan-min-age 1h --log "$log" >/dev/null 2>&1
assert_eq "$(torch_files)" "$left" "clean keeps segments younger than orphan_min_age"
"$SHMWATCH" clean --yes --log "$log" >"$SHMTEST_TMP/young.clean" 2>&1 ||
    fail "clean --yes exited $?: $(tail -n 3 "$SHMTEST_TMP/young.clean")"
assert_eq "$(torch_files)" "" "with the tests' orphan_min_age 0 they are orphans, and removed"
